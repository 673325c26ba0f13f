#!/bin/sh
# dynpmu profiles lists every built-in profile with its clusters and cores,
# the default marked.
. "$DPMU_SOURCE_DIR/tests/integration/lib/check.sh"
run 0 "$DYNPMU" profiles
has out "a75x4-a55x4 (default)"
has out "a75x4-a55x4-dsu120"
has out "cluster0: 8 cores"
has out "cpu0  Cortex-A75"
has out "cpu7  Cortex-A55"
has out "GHz"
[ "$(grep -c '(default)' "$tmp/out")" -eq 1 ] || fail "exactly one profile must be marked default"
finish
