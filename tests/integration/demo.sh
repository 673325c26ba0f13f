#!/bin/sh
# dynpmu demo runs seed 001 section 4.1 on the model: exit 0, five intervals,
# one row per cpu and one for cluster0, the synthetic source labelled, and
# deterministic output.
. "$DPMU_SOURCE_DIR/tests/integration/lib/check.sh"
run 0 "$DYNPMU" demo
has out "SYNTHETIC"
has out "PMSSRR = 0x7"
for k in 1 2 3 4 5; do has out "interval $k of 5"; done
[ "$(grep -c '^cpu0 ' "$tmp/out")" -eq 5 ] || fail "want one cpu0 row per interval"
[ "$(grep -c '^cpu7 ' "$tmp/out")" -eq 5 ] || fail "want one cpu7 row per interval"
[ "$(grep -c '^cluster0 ' "$tmp/out")" -eq 5 ] || fail "want one cluster0 row per interval"
# Counters 0-2 are deltas: the cycle count (CPU_CYCLES, column 3) of cpu0 in
# the last interval is one interval's worth, not five.
last=$(grep '^cpu0 ' "$tmp/out" | tail -1 | awk '{print $3}')
first=$(grep '^cpu0 ' "$tmp/out" | head -1 | awk '{print $3}')
[ "$last" -lt $((first * 2)) ] || fail "CPU_CYCLES should be a per-interval delta ($first, $last)"
# PMCCNTR (column 8) is cumulative: it grows.
c1=$(grep '^cpu0 ' "$tmp/out" | head -1 | awk '{print $8}')
c5=$(grep '^cpu0 ' "$tmp/out" | tail -1 | awk '{print $8}')
[ "$c5" -gt $((c1 * 4)) ] || fail "PMCCNTR should be cumulative ($c1, $c5)"
cp "$tmp/out" "$tmp/first"
run 0 "$DYNPMU" demo
cmp -s "$tmp/out" "$tmp/first" || fail "two demo runs differ"
# The DSU-120 numbering profile runs too, with its own cluster events.
run 0 "$DYNPMU" demo --profile a75x4-a55x4-dsu120 --intervals 2
has out "L3_ACCESS"
has out "interval 2 of 2"
finish
