#!/bin/sh
# Counts of every simulated core-PMU and cluster-PMU event on fixed
# single-threaded programs, for checking that a change to the engine, the
# model or the qemu front end leaves every count as it was:
#
#   scripts/compare_counts.sh BUILD_A OUT_A
#   scripts/compare_counts.sh BUILD_B OUT_B
#   diff -r OUT_A OUT_B          # nothing: the same counts
#
# BUILD is a build tree (dynpmu, libdpmu_qemu.so, workloads/). The events
# come from `dynpmu list` (SIM yes), in groups of six, with -A: Cortex-A75
# events on --place big, Cortex-A55 on --place little, DSU events as
# cluster/NAME. The programs: the benchmark compressor on 200 KB of
# generated text, matmul naive, branches branchy, traversal aos,
# stream triad; with DPMU_COMPARE_SYSROOT (a sysroot made by
# bench/zstd_sysroot.sh) also Debian's dynamic zstd -3 on the same input,
# in one thread (--single-thread --no-asyncio), for the unaligned and
# page-crossing accesses the others hardly make. A libc program's start-up
# depends on its environment and its path, so both runs use copies of the
# binaries at one fixed path and an
# empty environment. DPMU_COMPARE_DIR names that path (default
# /tmp/dynpmu-compare-counts), so comparisons can run side by side; compare
# only outputs made at the same path.
set -eu
B=${1:?usage: compare_counts.sh BUILD_DIR OUT_DIR}
O=${2:?usage: compare_counts.sh BUILD_DIR OUT_DIR}
SRC=$(cd "$(dirname "$0")/.." && pwd)
for f in dynpmu libdpmu_qemu.so workloads/matmul workloads/branches workloads/traversal \
	workloads/stream; do
	[ -x "$B/$f" ] || [ -f "$B/$f" ] || { echo "compare_counts: $B/$f is missing (build first)" >&2; exit 1; }
done
W=${DPMU_COMPARE_DIR:-/tmp/dynpmu-compare-counts}
rm -rf "$W"
mkdir -p "$W" "$O"
rm -f "$O"/*.csv "$O"/*.err
cp "$B/dynpmu" "$B/libdpmu_qemu.so" "$B/workloads/matmul" "$B/workloads/branches" \
	"$B/workloads/traversal" "$B/workloads/stream" "$W/"
aarch64-linux-gnu-gcc -O2 -static "$SRC/bench/frontend_compress.c" -o "$W/lz"
# an input that does not change with the tree being compared
awk 'BEGIN { for (i = 0; i < 12000; i++)
	printf "line %d of the input: %d %x %s\n", i, (i * 2654435761) % 1000003, i * i,
		(i % 7 ? "same words again" : "other words") }' | head -c 200000 >"$W/input"
PROGS="lz:./lz mn:./matmul,naive br:./branches,branchy,20000,1 ta:./traversal,aos st:./stream,triad,16384,1"
if [ -n "${DPMU_COMPARE_SYSROOT:-}" ]; then
	[ -x "$DPMU_COMPARE_SYSROOT/usr/bin/zstd" ] || { echo "compare_counts: $DPMU_COMPARE_SYSROOT/usr/bin/zstd is missing (make the sysroot with bench/zstd_sysroot.sh)" >&2; exit 1; }
	ln -s "$(cd "$DPMU_COMPARE_SYSROOT" && pwd)" "$W/root"
	PROGS="$PROGS zs:./root/usr/bin/zstd,-3,--single-thread,--no-asyncio,-c"
fi
cd "$W"
e() { env -i PATH=/usr/bin:/bin HOME=/ DPMU_PLUGIN="$W/libdpmu_qemu.so" "$@"; }
e ./dynpmu list | awk '/core PMU/ { s = /Cortex-A75/ ? "a75" : "a55" }
	/cluster PMU/ { s = "dsu" } /AMU/ { s = "" }
	s != "" && $4 == "yes" && $1 ~ /^[A-Z]/ { print s, $1 }' >"$O/events.lst"
run() {
	rt=$1
	shift
	rc=0
	e ./dynpmu stat -x, -A $sysroot "$@" <input >/dev/null 2>"$O/$rt.err" || rc=$?
	echo "rc=$rc" >>"$O/$rt.err"
}
for p in $PROGS; do
	tag=${p%%:*}
	sysroot=
	[ "$tag" != zs ] || sysroot="--sysroot root"

	cmd=$(echo "${p#*:}" | tr , ' ')
	run "$tag-default" -o "$O/$tag-default.csv" -- $cmd
	for s in a75 a55 dsu; do
		i=0
		while :; do
			grp=$(awk -v s=$s '$1 == s { print $2 }' "$O/events.lst" |
				sed -n "$((i * 6 + 1)),$((i * 6 + 6))p" | paste -sd,)
			[ -n "$grp" ] || break
			case $s in
			a75) set -- --place big -e "$grp" ;;
			a55) set -- --place little -e "$grp" ;;
			dsu) set -- -e "$(echo "$grp" | sed 's/\([^,]*\)/cluster\/\1/g')" ;;
			esac
			run "$tag-$s-$i" "$@" -o "$O/$tag-$s-$i.csv" -- $cmd
			i=$((i + 1))
		done
	done
done
echo "compare_counts: $(ls "$O"/*.csv | wc -l) runs in $O"
