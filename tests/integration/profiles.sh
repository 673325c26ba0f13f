#!/bin/sh
# dynpmu profiles lists every built-in profile with its clusters and cores,
# the default marked; a profile file deriving from a built-in runs.
. "$DPMU_SOURCE_DIR/tests/integration/lib/check.sh"
run 0 "$DYNPMU" profiles
has out "a75x4-a55x4 (default)"
has out "a75x4-a55x4-dsu120"
has out "cluster0: 8 cores"
has out "cpu0  Cortex-A75"
has out "cpu7  Cortex-A55"
has out "GHz"
[ "$(grep -c '(default)' "$tmp/out")" -eq 1 ] || fail "exactly one profile must be marked default"

# Derived from the DSU-120 built-in with a 1 GHz DSU: its catalog's events
# count, and the DSU's CYCLES over the 308 ns run are 308 (1.5 GHz: 463).
printf '{"base": "a75x4-a55x4-dsu120", "clusters": [{"freq": "1GHz"}]}\n' >"$tmp/slow.json"
run 0 "$DYNPMU" stat --trace "$DPMU_SOURCE_DIR/tests/integration/traces/two_cores.trace" \
	--profile "$tmp/slow.json" -x, -A -e cluster/cycles/,l3_access
has out "cluster0,308,,CYCLES,308,"
has out "cluster0,8,,L3_ACCESS,"
finish
