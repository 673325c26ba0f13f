#!/bin/sh
# dynpmu stat -- PROGRAM has the monitor and reports of --trace (docs/stat.md):
# -I snapshots in simulated time whose rows add up to the whole run's
# counts, rotation with perf's running percentages and estimates, --long,
# -M metrics and the advice they trigger, --json, --svg, --per-type, -o
# with the program's own stdout and exit status passing through, and the
# false-sharing advice naming the hottest function from --by-symbol.
# The guest is a case-study workload (deterministic single-threaded runs on
# cpu0). SKIP (exit 77) without qemu-aarch64 or the workloads.
. "$DPMU_SOURCE_DIR/tests/integration/lib/check.sh"

wl="$(dirname "$DYNPMU")/workloads"
if ! command -v qemu-aarch64 >/dev/null || [ ! -x "$wl/branches" ]; then
	echo "SKIP: need qemu-aarch64 and the workloads in $wl"
	exit 77
fi
B="$wl/branches"
# The guest's stdout goes to $tmp/out in every run, so its libc takes the
# same path each time and the counts compare exactly.

# stat_csv FILE ARGS...: dynpmu stat -x, -o FILE ARGS (exit 0 wanted)
stat_csv() {
	f=$1; shift
	run 0 "$DYNPMU" stat -x, -o "$f" --cpus 0 "$@"
}

# --- exact whole run
stat_csv "$tmp/whole.csv" -e INST_RETIRED,BR_MIS_PRED_RETIRED -- "$B" branchy 50000 1
grep -q '^branches branchy size=50000' "$tmp/out" || fail "program stdout did not pass through: $(cat "$tmp/out")"
total=$(awk -F, '$3 == "INST_RETIRED" { print $1 }' "$tmp/whole.csv")
mis=$(awk -F, '$3 == "BR_MIS_PRED_RETIRED" { print $1 }' "$tmp/whole.csv")
[ "${total:-0}" -gt 500000 ] || fail "INST_RETIRED ${total:-none}"
# CSV columns 4/5: running ns and percentage; column 4 of the run is its length
ns=$(awk -F, '$3 == "INST_RETIRED" { print $4 }' "$tmp/whole.csv")

# --- -I: rows per simulated interval, their sum is the run's count
stat_csv "$tmp/iv.csv" -e INST_RETIRED,BR_MIS_PRED_RETIRED -I 0.01 -- "$B" branchy 50000 1
rows=$(awk -F, '$4 == "INST_RETIRED"' "$tmp/iv.csv" | wc -l)
expect=$((ns / 10000))
[ "$rows" -ge "$expect" ] && [ "$rows" -le $((expect + 2)) ] ||
	fail "-I 0.01 over ${ns} ns: $rows rows, want about $expect (intervals in simulated time)"
isum=$(awk -F, '$4 == "INST_RETIRED" { s += $2 } END { print s }' "$tmp/iv.csv")
[ "$isum" = "$total" ] || fail "-I rows sum to $isum INST_RETIRED, the run counts $total"
msum=$(awk -F, '$4 == "BR_MIS_PRED_RETIRED" { s += $2 } END { print s }' "$tmp/iv.csv")
[ "$msum" = "$mis" ] || fail "-I rows sum to $msum BR_MIS_PRED_RETIRED, the run counts $mis"
awk -F, '$4 == "INST_RETIRED" { if ($1 <= last) bad = 1; last = $1 } END { exit bad }' \
	"$tmp/iv.csv" || fail "-I row times do not increase"
# the region table still follows
grep -q '^region,branches_branchy,' "$tmp/iv.csv" || fail "-I lost the region rows"

# --- rotation: ten events on six counters take turns; the estimate is near
stat_csv "$tmp/mux.csv" -e INST_RETIRED,CPU_CYCLES,BR_RETIRED,BR_MIS_PRED_RETIRED,L1D_CACHE,L1D_CACHE_REFILL,L2D_CACHE,L2D_CACHE_REFILL,STALL_BACKEND,STALL_FRONTEND -- "$B" branchy 50000 1
awk -F, '$3 != "CPU_CYCLES" && $1 !~ /^region/ && ($5 >= 100 || $5 < 30) { print; bad = 1 }
	END { exit bad }' "$tmp/mux.csv" || fail "rotation percentages: $(cat "$tmp/mux.csv")"
est=$(awk -F, '$3 == "INST_RETIRED" { print $1 }' "$tmp/mux.csv")
[ $((est * 10)) -gt $((total * 9)) ] && [ $((est * 10)) -lt $((total * 11)) ] ||
	fail "multiplexed INST_RETIRED estimate $est not within 10% of $total"

# --- amu/: the Activity Monitors count the program too (the backend's EL3
# firmware step enables them): AMU core cycles and instructions equal the
# core PMU's, and the AMU-based effective frequency is the A75's 2.8 GHz.
stat_csv "$tmp/amu.csv" -e amu/cpu_cycles/,amu/cnt_cycles/,amu/inst_retired/,CPU_CYCLES,INST_RETIRED -M effective_frequency -- "$B" branchy 50000 1
acyc=$(awk -F, '$3 == "amu:CPU_CYCLES" { print $1 }' "$tmp/amu.csv")
pcyc=$(awk -F, '$3 == "CPU_CYCLES" { print $1 }' "$tmp/amu.csv")
ains=$(awk -F, '$3 == "amu:INST_RETIRED" { print $1 }' "$tmp/amu.csv")
[ -n "$acyc" ] && [ "$acyc" = "$pcyc" ] || fail "amu CPU_CYCLES ${acyc:-none} != PMU ${pcyc:-none}: $(cat "$tmp/amu.csv")"
[ "$ains" = "$total" ] || fail "amu INST_RETIRED ${ains:-none} != $total"
grep -q 'effective_frequency' "$tmp/amu.csv" || fail "no effective_frequency row: $(cat "$tmp/amu.csv")"
awk -F, '/effective_frequency/ { f = $1 + 0; if (f < 2.7e9 || f > 2.9e9) exit 1 }' "$tmp/amu.csv" ||
	fail "AMU effective frequency off 2.8 GHz: $(grep effective_frequency "$tmp/amu.csv")"

# --- --long: CHAIN pairs count the same
stat_csv "$tmp/long.csv" -e INST_RETIRED --long -- "$B" branchy 50000 1
[ "$(awk -F, '$3 == "INST_RETIRED" { print $1 }' "$tmp/long.csv")" = "$total" ] ||
	fail "--long counts differently: $(cat "$tmp/long.csv")"

# --- -M and advice: branchy mispredicts, branchless does not
run 0 "$DYNPMU" stat -o "$tmp/m1.txt" --cpus 0 -M branch_misprediction_ratio -- "$B" branchy 50000 1
grep -q 'branch_misprediction_ratio' "$tmp/m1.txt" || fail "-M metric missing: $(cat "$tmp/m1.txt")"
grep -q 'advice \[branch_layout\]' "$tmp/m1.txt" || fail "branchy: no branch_layout advice"
run 0 "$DYNPMU" stat -o "$tmp/m2.txt" --cpus 0 -M branch_misprediction_ratio -- "$B" branchless 50000 1
grep -q 'branch_misprediction_ratio' "$tmp/m2.txt" || fail "branchless: -M metric missing"
grep -q 'advice \[branch_layout\]' "$tmp/m2.txt" && fail "branchless: branch_layout advice fires"

# --- --json: every line is a JSON object; counts and metrics are there
run 0 "$DYNPMU" stat --json -o "$tmp/j.json" --cpus 0 -M ipc -I 0.05 -- "$B" branchy 50000 1
python3 - "$tmp/j.json" <<'EOF' || fail "--json output: $(head -5 "$tmp/j.json")"
import json, sys
kinds = set()
inst = 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    kinds.add(o["type"])
    if o["type"] == "count" and o["event"] == "INST_RETIRED":
        inst += o["value"]
assert {"run", "count", "metric"} <= kinds, kinds
assert inst > 500000, inst
EOF

# --- --svg of the interval metrics
run 0 "$DYNPMU" stat -o "$tmp/s.txt" --cpus 0 -M ipc,branch_mpki -I 0.02 --svg "$tmp/p.svg" -- "$B" branchy 50000 1
python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$tmp/p.svg" ||
	fail "--svg not well-formed"
grep -q 'data-metric="branch_mpki"' "$tmp/p.svg" || fail "--svg lacks the branch_mpki panel"

# --- --per-type: one row set per core type
run 0 "$DYNPMU" stat -x, -o "$tmp/t.csv" --per-type -e INST_RETIRED -- "$B" branchy 20000 1
grep -q '^Cortex-A75,' "$tmp/t.csv" || fail "--per-type: no Cortex-A75 row: $(cat "$tmp/t.csv")"

# --- the program's exit status is dynpmu's (bad arguments: the workload exits 2)
"$DYNPMU" stat -o "$tmp/x.txt" -- "$B" nosuchvariant >/dev/null 2>&1
[ $? -eq 2 ] || fail "the program's exit status 2 did not pass through"

# --- false sharing: the advice names the function the threads spend their time in
run 0 "$DYNPMU" stat -o "$tmp/fs.txt" --by-symbol --profile a75x4-a55x4-dsu120 \
	-M coherency_ratio,coherency_bandwidth -- "$wl/false_sharing" shared 2 20000
grep -q 'advice \[false_sharing\].*hottest symbols: fs_worker' "$tmp/fs.txt" ||
	fail "false-sharing advice does not name fs_worker: $(grep advice "$tmp/fs.txt")"
finish
