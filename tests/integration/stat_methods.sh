#!/bin/sh
# dynpmu stat's monitoring methods end to end (docs/stat.md): rotation with
# perf's running percentage, --long, -I interval rows that add up to the
# totals, aggregation, CSV and JSON that parse back, and bad input (exit 2).
. "$DPMU_SOURCE_DIR/tests/integration/lib/check.sh"
W=$tmp
awk 'BEGIN { for (i = 0; i < 100000; i++) {
	printf "i %x\n", 4194304 + 4 * (i % 512)
	if (i % 4 == 0) printf "l %x %x 8\n", 4196352, 1048576 + 64 * (i % 4096) } }' > "$W/w.trace"
awk 'BEGIN { print "cpu 0"; for (i = 0; i < 20000; i++) printf "i %x\n", 4194304 + 4 * (i % 256)
	print "cpu 4"; for (i = 0; i < 30000; i++) printf "i %x\n", 4194304 + 4 * (i % 256) }' > "$W/two.trace"
many=inst_retired,br_retired,l1d_cache,l1d_cache_refill,l2d_cache,l2d_cache_refill,mem_access,l1i_cache,inst_spec

# Rotation: every event runs part of the time and says so; INST_RETIRED's
# estimate is near the exact count (125,000 instructions).
run 0 "$DYNPMU" stat --trace "$W/w.trace" -x, -e "$many" --mux-interval 0.001
awk -F, '$2 == "" && ($5 >= 100 || $5 < 30) { print; bad = 1 } END { exit bad }' "$tmp/out" ||
	fail "running percentages: $(cat "$tmp/out")"
est=$(awk -F, '$3 == "INST_RETIRED" { print $1 }' "$tmp/out")
[ "$est" -gt 110000 ] && [ "$est" -lt 140000 ] || fail "scaled INST_RETIRED $est not near 125000"
run 0 "$DYNPMU" stat --trace "$W/w.trace" -e "$many" --mux-interval 0.001
grep -Eq 'INST_RETIRED +\([0-9]+\.[0-9]{2}%\)$' "$tmp/out" || fail "table lacks (xx.xx%): $(cat "$tmp/out")"

# --long: exact, same as without rotation.
run 0 "$DYNPMU" stat --trace "$W/w.trace" -x, -e inst_retired,l1d_cache --long
has out "125000,,INST_RETIRED"
has out "25000,,L1D_CACHE"

# -I: rows per interval, time first, that add up to the totals.
run 0 "$DYNPMU" stat --trace "$W/w.trace" -x, -e inst_retired,cycles,l3d_cache -I 0.01
rows=$(awk -F, '$4 == "INST_RETIRED"' "$tmp/out" | wc -l)
[ "$rows" -ge 2 ] || fail "-I 0.01 gave $rows intervals"
grep -Evq '^[0-9]+\.[0-9]{9},' "$tmp/out" && fail "time column: $(cat "$tmp/out")"
isum=$(awk -F, '$4 == "INST_RETIRED" { s += $2 } END { print s }' "$tmp/out")
[ "$isum" = 125000 ] || fail "interval INST_RETIRED sum $isum, want 125000"
csum=$(awk -F, '$4 == "CPU_CYCLES" { s += $2 } END { print s }' "$tmp/out")
run 0 "$DYNPMU" stat --trace "$W/w.trace" -x, -e inst_retired,cycles,l3d_cache
total=$(awk -F, '$3 == "CPU_CYCLES" { print $1 }' "$tmp/out")
[ "$csum" = "$total" ] || fail "interval CPU_CYCLES sum $csum, total $total"

# -I with -A when a core lags the others in simulated time: its last batch
# arrives at the stop, after the last interval ended at the same time, and
# still lands in an interval (the two-core trace in tests: cpu0 retires 4,
# cpu5 retires 5).
run 0 "$DYNPMU" stat --trace "$DPMU_SOURCE_DIR/tests/integration/traces/two_cores.trace" -x, \
	-e inst_retired -A -I 0.0001
for c in cpu0:4 cpu5:5; do
	got=$(awk -F, -v u="${c%%:*}" '$2 == u && $5 == "INST_RETIRED" { s += $3 } END { print s + 0 }' "$tmp/out")
	[ "$got" = "${c#*:}" ] || fail "${c%%:*}: intervals sum to $got INST_RETIRED, the run has ${c#*:}: $(cat "$tmp/out")"
done

# Aggregation: per core, per core type, per cluster, system.
run 0 "$DYNPMU" stat --trace "$W/two.trace" -x, -e inst_retired -A
has out "cpu0,20000,,INST_RETIRED"
has out "cpu4,30000,,INST_RETIRED"
run 0 "$DYNPMU" stat --trace "$W/two.trace" -x, -e inst_retired --per-type
has out "Cortex-A75,20000,,INST_RETIRED"
has out "Cortex-A55,30000,,INST_RETIRED"
run 0 "$DYNPMU" stat --trace "$W/two.trace" -x, -e inst_retired --per-cluster
has out "cluster0,50000,,INST_RETIRED"
run 0 "$DYNPMU" stat --trace "$W/two.trace" -x, -e inst_retired
has out "50000,,INST_RETIRED"

# Metrics and JSON lines that parse back (jq), AMU through EL3 set-up.
run 0 "$DYNPMU" stat --trace "$W/w.trace" --json -e cycles,instructions,amu/cpu_cycles/ -M ipc
if command -v jq >/dev/null 2>&1; then
	jq -e . "$tmp/out" >/dev/null || fail "JSON lines do not parse"
fi
has out '"INST_RETIRED"'
has out '"amu:CPU_CYCLES"'
has out '"ipc"'
run 0 "$DYNPMU" stat --trace "$W/w.trace" -e cycles,amu/cpu_cycles/ -x,
a=$(awk -F, '$3 == "CPU_CYCLES" { print $1 }' "$tmp/out")
b=$(awk -F, '$3 == "amu:CPU_CYCLES" { print $1 }' "$tmp/out")
[ -n "$a" ] && [ "$a" = "$b" ] || fail "AMU CPU_CYCLES $b vs PMU $a"

# SVG of the interval metrics.
run 0 "$DYNPMU" stat --trace "$W/w.trace" -I 0.01 -M ipc --svg "$W/c.svg" -A
grep -q "<svg" "$W/c.svg" || fail "no SVG written"

# :u counts the workload (EL0), :k the kernel (nothing here).
run 0 "$DYNPMU" stat --trace "$W/w.trace" -x, -e inst_retired:u,inst_retired:k
has out "125000,,INST_RETIRED:u"
has out "0,,INST_RETIRED:k"

# Bad input: exit 2 and a message naming it.
run 2 "$DYNPMU" stat --trace "$W/w.trace" -e '{inst_retired,cycles'
has err "unbalanced '{'"
run 2 "$DYNPMU" stat --trace "$W/w.trace" -e 'inst_retired}'
has err "unbalanced '}'"
run 2 "$DYNPMU" stat --trace "$W/w.trace" -e 'cycles:q'
has err "unknown modifier 'q'"
run 2 "$DYNPMU" stat --trace "$W/w.trace" -e 'l1d_cahce'
has err "unknown event 'l1d_cahce' (did you mean l1d_cache?)"
run 2 "$DYNPMU" stat --trace "$W/w.trace" -e "{$many}"
has err "needs 9 event counters at once, but the Cortex-A75 PMU of cpu0 has 6"
run 2 "$DYNPMU" stat --trace "$W/w.trace" -e '{inst_retired,l1d_cache,br_retired,l2d_cache}' --long
has err "needs 8 event counters at once"
run 2 "$DYNPMU" stat --trace "$W/w.trace" -I 0
has err "-I '0': give a positive time"
run 2 "$DYNPMU" stat --trace "$W/w.trace" -I ten
has err "-I 'ten'"
run 2 "$DYNPMU" stat --trace "$W/w.trace" --purpose speed
has err "unknown purpose 'speed' (use power, tuning or locks)"
run 2 "$DYNPMU" stat --trace "$W/w.trace" -M ipcc
has err "unknown metric 'ipcc'"
finish
