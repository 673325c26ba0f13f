#!/bin/sh
# Each case study (docs/workloads.md) shows its effect in the counters when
# run with `dynpmu stat -- PROGRAM` on the simulated cluster (default
# profile), read from the kernel's DPMU_REGION unless said otherwise:
#   matmul      blocked cuts L1D_CACHE_REFILL (seed 003 6.1)
#   branches    branchless removes the mispredictions (seed 003 6.2)
#   traversal   the sparse rewrite raises the L3 hit rate (seed 001 5.2)
#   false_sharing  shared refills about once per increment, padding
#               removes the refills and snoops (seed 001 4.2)
#   stream      triad refills every line of its three arrays each pass
# The thresholds are wide (factors, not exact values) so they hold while
# the engine's timing and replacement details change, yet each fails if
# the case study's effect is gone. SKIP (exit 77) without the workloads,
# qemu-aarch64 or a `dynpmu stat -- PROGRAM`.
. "$DPMU_SOURCE_DIR/tests/integration/lib/check.sh"

wl="$(dirname "$DYNPMU")/workloads"
if ! command -v qemu-aarch64 >/dev/null || [ ! -x "$wl/matmul" ]; then
	echo "SKIP: need qemu-aarch64 and the workloads in $wl"
	exit 77
fi
"$DYNPMU" stat --help 2>&1 | grep -q -- '-- PROGRAM' || {
	echo "SKIP: this dynpmu has no 'stat -- PROGRAM'"
	exit 77
}

# measure TAG EVENTS PROG VARIANT [ARGS...]: run under dynpmu stat, CSV
# report kept in $tmp/TAG.csv.
measure() {
	tag=$1; events=$2; prog=$3; shift 3
	run 0 "$DYNPMU" stat -x, -e "$events" -- "$wl/$prog" "$@"
	grep -q "^$prog $1 size=" "$tmp/out" || fail "$prog $1: no checksum line: $(cat "$tmp/out")"
	cp "$tmp/err" "$tmp/$tag.csv"
}

# region TAG REGION EVENT: the region's count (CSV: region,NAME,,VALUE,EVENT)
region() {
	v=$(awk -F, -v r="$2" -v e="$3" '$1 == "region" && $2 == r && $5 == e { print $4 }' \
		"$tmp/$1.csv")
	[ -n "$v" ] || { fail "$1: no $3 for region $2"; v=0; }
	echo "$v"
}

# whole TAG EVENT: the whole run's count (CSV: VALUE,UNIT,EVENT,NS,PCT)
whole() {
	v=$(awk -F, -v e="$2" '$1 != "region" && $3 == e { print $1 }' "$tmp/$1.csv" | head -1)
	case "$v" in
	'' | *[!0-9]*) fail "$1: no count for $2 ('$v')"; v=0 ;;
	esac
	echo "$v"
}

# --- matmul (seed 003 6.1): tiles that fit L1D cut its refills.
measure mn L1D_CACHE,L1D_CACHE_REFILL matmul naive
measure mb L1D_CACHE,L1D_CACHE_REFILL matmul blocked
rn=$(region mn matmul_naive L1D_CACHE_REFILL)
rb=$(region mb matmul_blocked L1D_CACHE_REFILL)
# naive misses on about every load of B's column (128^3 / 4 is a floor).
[ "$rn" -gt 524288 ] || fail "matmul naive: L1D_CACHE_REFILL $rn, want the column walk to thrash"
[ $((rb * 10)) -lt "$rn" ] || fail "matmul: blocked refills $rb not a tenth of naive's $rn"

# --- branches (seed 003 6.2): 50000 random bytes, 2 passes = 100000 data branches.
ev=BR_RETIRED,BR_MIS_PRED_RETIRED,CPU_CYCLES
measure by $ev branches branchy 50000 2
measure bl $ev branches branchless 50000 2
my=$(region by branches_branchy BR_MIS_PRED_RETIRED)
ml=$(region bl branches_branchless BR_MIS_PRED_RETIRED)
[ "$my" -gt 25000 ] || fail "branchy: $my mispredictions, want about half of 100000"
[ "$my" -lt 75000 ] || fail "branchy: $my mispredictions for 100000 coin tosses"
[ $((ml * 100)) -lt "$my" ] || fail "branchless: $ml mispredictions vs branchy's $my"
by=$(region by branches_branchy BR_RETIRED)
bl=$(region bl branches_branchless BR_RETIRED)
[ $((bl * 10)) -lt $((by * 6)) ] || fail "branchless retires $bl branches, branchy $by: want about half"
cy=$(region by branches_branchy CPU_CYCLES)
cl=$(region bl branches_branchless CPU_CYCLES)
[ "$cl" -lt "$cy" ] || fail "branchless takes $cl cycles, branchy $cy"

# --- traversal (seed 001 5.2): read hit rate of the L3, (RD - REFILL_RD) / RD.
ev=CPU_CYCLES,core/L3D_CACHE_RD,core/L3D_CACHE_REFILL_RD
measure ta $ev traversal aos
measure ts $ev traversal sparse
aa=$(region ta traversal_aos L3D_CACHE_RD)
am=$(region ta traversal_aos L3D_CACHE_REFILL_RD)
sa=$(region ts traversal_sparse L3D_CACHE_RD)
sm=$(region ts traversal_sparse L3D_CACHE_REFILL_RD)
[ "$aa" -gt 0 ] && [ "$sa" -gt 0 ] || fail "traversal: no L3 reads (aos $aa, sparse $sa)"
# aos: 4 MiB of hot lines in a cyclic walk through a 2 MiB L3, under 20% hits.
[ $(((aa - am) * 5)) -lt "$aa" ] || fail "traversal aos: L3 hits $((aa - am)) of $aa, want a thrash"
# sparse: 512 KiB of hot records, at least half the L3 reads hit.
[ $(((sa - sm) * 2)) -ge "$sa" ] || fail "traversal sparse: L3 hits $((sa - sm)) of $sa"
[ $(((sa - sm) * aa)) -gt $(((aa - am) * sa)) ] || fail "traversal: sparse does not raise the L3 hit rate"
[ "$(region ts traversal_sparse CPU_CYCLES)" -lt "$(region ta traversal_aos CPU_CYCLES)" ] ||
	fail "traversal: sparse is not faster than aos"

# --- false_sharing (seed 001 4.2): the whole run, summed over the cores; the
# snoops are cluster events, which the region table does not split.
ev=L1D_CACHE_REFILL,cluster/SCU_SNP_ACCESS
measure fs $ev false_sharing shared
measure fp $ev false_sharing padded
fr=$(whole fs L1D_CACHE_REFILL)
pr=$(whole fp L1D_CACHE_REFILL)
fsn=$(whole fs SCU_SNP_ACCESS)
psn=$(whole fp SCU_SNP_ACCESS)
# The backend interleaves the threads a block at a time in simulated time
# (docs/frontend.md), so the line changes hands about once per increment,
# as on real cores: 4 x 250000 increments, at least half of them refilling;
# padded refills and snoops stay in the hundreds.
[ "$fr" -gt 500000 ] || fail "false_sharing: shared refills $fr, want about one per increment (1000000)"
[ "$fr" -gt $((pr * 100)) ] || fail "false_sharing: shared refills $fr vs padded $pr"
[ "$fsn" -gt $((psn * 100)) ] || fail "false_sharing: shared snoops $fsn vs padded $psn"

# --- stream (the bandwidth baseline): triad refills all three arrays each
# pass, 3 * N / 8 lines per pass.
measure st L1D_CACHE_REFILL,L2D_CACHE_REFILL stream triad 65536 2
want=$((3 * 65536 / 8 * 2))
for e in L1D_CACHE_REFILL L2D_CACHE_REFILL; do
	got=$(region st stream_triad $e)
	[ $((got * 10)) -ge $((want * 9)) ] || fail "stream triad: $e $got, want about $want"
	[ $((got * 10)) -le $((want * 11)) ] || fail "stream triad: $e $got, want about $want"
done
finish
