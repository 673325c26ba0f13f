#!/bin/sh
# dynpmu list (table): a section per core type's PMU and AMU and per
# cluster, and the note that events PMCEID cannot describe come from the
# profile's list.
set -eu
: "${DYNPMU:?DYNPMU must name the dynpmu binary}"
fail() { echo "FAIL: $*" >&2; exit 1; }
out=$("$DYNPMU" list)
for h in "Cortex-A75 core PMU" "Cortex-A75 AMU" "Cortex-A55 core PMU" "Cortex-A55 AMU" "cluster0 DSU cluster PMU"; do
	echo "$out" | grep -q "^$h (" || fail "no section '$h'"
done
echo "$out" | grep -Eq '^  INST_RETIRED +0x08 +yes +yes ' || fail "INST_RETIRED row"
# 0x40 is above what PMCEID0/1 describe: marked and explained
echo "$out" | grep -Eq '^  L1D_CACHE_RD +0x40 +yes\* ' || fail "L1D_CACHE_RD marked from the profile"
echo "$out" | grep -q "PMCEID describes events 0x00-0x3F and 0x4000-0x403F only" || fail "footnote"
"$DYNPMU" list --help | grep -q "usage: dynpmu list" || fail "--help"
echo "ok"
