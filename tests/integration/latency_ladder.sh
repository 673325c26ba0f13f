#!/bin/sh
# The latency ladder (docs/events.md "Timing"): workloads/latency on both
# core types of the default profile.
#   chase   dependent loads: cycles per load within 15 % of the profile's
#           load-to-use latency of the level the footprint fits in (L1D,
#           L2, L3; DRAM: L3 + bus + dram_latency_ns at the core clock),
#           plus the translation cost the run counted (L1D_TLB_REFILL x
#           the L2 TLB latency + DTLB_WALK x the walk latency, per load)
#   gather  independent loads of the same 64 MiB: on the out-of-order
#           Cortex-A75 at most a third of the chase's cycles per load; on
#           the in-order Cortex-A55 the overlap is smaller than the A75's
# Cycles per load is the difference of two runs (LOADS and 2 x LOADS)
# divided by LOADS, which takes out the set-up. The stall counts add up:
# STALL_FRONTEND + STALL_BACKEND <= CPU_CYCLES in every run.
# SKIP (exit 77) without qemu-aarch64, the workloads or jq.
. "$DPMU_SOURCE_DIR/tests/integration/lib/check.sh"

wl="$(dirname "$DYNPMU")/workloads"
if ! command -v qemu-aarch64 >/dev/null || ! command -v jq >/dev/null || [ ! -x "$wl/latency" ]; then
	echo "SKIP: need qemu-aarch64, jq and the workloads in $wl"
	exit 77
fi
prof="$DPMU_SOURCE_DIR/data/profiles/a75x4-a55x4.json"
EVENTS=CPU_CYCLES,STALL_FRONTEND,STALL_BACKEND,L1D_TLB_REFILL,DTLB_WALK

# count CPU VARIANT KIB LOADS: $tmp/c.csv holds the run's counts
count() {
	run 0 "$DYNPMU" stat -x, -e "$EVENTS" --cpus "$1" -- "$wl/latency" "$2" "$3" "$4"
	grep -q "^latency $2 size=$3 " "$tmp/out" || fail "latency $2 $3: no checksum line: $(cat "$tmp/out")"
	cp "$tmp/err" "$tmp/c.csv"
}
ev() { awk -F, -v e="$1" '$3 == e { print $1; exit }' "$tmp/c.csv"; }

# per_load CPU VARIANT KIB LOADS: sets cyc (cycles per load) and tlb
# (translation cycles per load, from the counts and the profile)
per_load() {
	count "$1" "$2" "$3" "$4"
	c1=$(ev CPU_CYCLES) r1=$(ev L1D_TLB_REFILL) w1=$(ev DTLB_WALK)
	count "$1" "$2" "$3" $(($4 * 2))
	c2=$(ev CPU_CYCLES) r2=$(ev L1D_TLB_REFILL) w2=$(ev DTLB_WALK)
	fe=$(ev STALL_FRONTEND) be=$(ev STALL_BACKEND)
	[ $((fe + be)) -le "$c2" ] || fail "cpu$1 $2 $3 KiB: STALL_FRONTEND $fe + STALL_BACKEND $be > CPU_CYCLES $c2"
	cyc=$(echo "($c2 - $c1) / $4" | bc -l)
	tlb=$(echo "(($r2 - $r1) * $l2tlb + ($w2 - $w1) * $walk) / $4" | bc -l)
}

# within GOT WANT: |GOT - WANT| <= 15 % of WANT
within() { [ "$(echo "$1 >= $2 * 0.85 && $1 <= $2 * 1.15" | bc -l)" = 1 ]; }

ratio_a75=""
for spec in "0 Cortex-A75" "4 Cortex-A55"; do
	cpu=${spec%% *} type=${spec#* }
	t=".core_types[] | select(.name == \"$type\")"
	l1=$(jq "$t | .l1d.latency" "$prof") l2=$(jq "$t | .l2.latency" "$prof")
	l3=$(jq '.clusters[0].l3.latency' "$prof")
	l2tlb=$(jq "$t | .tlb.l2.latency // 0" "$prof") walk=$(jq "$t | .tlb.walk_latency" "$prof")
	ghz=$(jq -r "$t | .freq" "$prof" | sed 's/GHz$//')
	kib1=$(($(jq -r "$t | .l1d.size" "$prof" | sed 's/KiB$//') / 4))
	kib2=$(($(jq -r "$t | .l2.size" "$prof" | sed 's/KiB$//') * 3 / 4))
	dram=$(echo "$l3 + $(jq '.memory.bus_latency' "$prof") + $(jq '.memory.dram_latency_ns' "$prof") * $ghz" | bc -l)
	for lv in "L1D $kib1 $l1 80000" "L2 $kib2 $l2 80000" "L3 1024 $l3 40000" "DRAM 65536 $dram 20000"; do
		set -- $lv
		per_load "$cpu" chase "$2" "$4"
		want=$(echo "$3 + $tlb" | bc -l)
		printf '%s cpu%s chase %6s KiB (%s): %7.2f cycles/load, want %7.2f (%.2f of it translation)\n' \
			"$type" "$cpu" "$2" "$1" "$cyc" "$want" "$tlb"
		within "$cyc" "$want" || fail "$type chase in the $1 ($2 KiB): $cyc cycles/load, want $want +- 15 %"
	done
	dep=$cyc
	per_load "$cpu" gather 65536 20000
	r=$(echo "$cyc / $dep" | bc -l)
	printf '%s cpu%s gather 65536 KiB: %7.2f cycles/load, %.3f of the chase\n' "$type" "$cpu" "$cyc" "$r"
	if [ -z "$ratio_a75" ]; then
		ratio_a75=$r
		[ "$(echo "$r <= 1 / 3" | bc -l)" = 1 ] || fail "$type: independent loads cost $r of dependent ones, want <= 1/3"
	else
		[ "$(echo "$r > $ratio_a75 * 1.5" | bc -l)" = 1 ] ||
			fail "$type: independent/dependent $r, want visibly more than the A75's $ratio_a75"
	fi
done
finish
