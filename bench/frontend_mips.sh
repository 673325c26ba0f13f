#!/bin/sh
# Guest MIPS of the full model (dynpmu stat -- PROGRAM: plugin, rings,
# engine, model, driver, monitor) on a compression workload, against bare
# qemu-aarch64 and against cachegrind (cache + branch simulation) on the
# native build doing the same work, in one run; and, to show where dynpmu's
# time goes, the same run with the records not modelled (DPMU_QEMU_DRAIN,
# docs/frontend.md). Prints one JSON object per
# measurement; never fails on a time.
#
# The workloads: bench/frontend_compress.c (a small LZ77 compressor, static),
# and, given a SYSROOT made by bench/zstd_sysroot.sh, Debian's zstd
# (`zstd -3 --single-thread`; arm64 build under qemu with the sysroot, the
# host's x86-64 build under cachegrind), both on the same input.
# Usage: bench/frontend_mips.sh BUILD_DIR [MBYTES [SYSROOT]]
set -eu
B=${1:?usage: frontend_mips.sh BUILD_DIR [MBYTES [SYSROOT]]}
MB=${2:-8}
ROOT=${3:-}
if [ -n "$ROOT" ]; then
	[ -x "$ROOT/usr/bin/zstd" ] || { echo "frontend_mips: $ROOT/usr/bin/zstd is missing (make it with bench/zstd_sysroot.sh)" >&2; exit 1; }
	command -v zstd >/dev/null || { echo "frontend_mips: the host's zstd is missing: apt-get install zstd" >&2; exit 1; }
fi
SRC=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
aarch64-linux-gnu-gcc -O2 -static "$SRC/frontend_compress.c" -o "$T/lz-a64"
gcc -O2 "$SRC/frontend_compress.c" -o "$T/lz-x86"
# deterministic, moderately compressible input: the source tree's C text
# repeated with a varying line counter
find "$SRC/../src" -name '*.c' | sort | xargs cat >"$T/seed"
i=0
: >"$T/in"
while [ "$(stat -c %s "$T/in")" -lt $((MB * 1048576)) ]; do
	sed "s/^/$i /" "$T/seed" >>"$T/in"
	i=$((i + 1))
done
head -c $((MB * 1048576)) "$T/in" >"$T/input"
. "$SRC/lib.sh"
el() { echo "$2 - $1" | bc -l; }
mips() { echo "$1 / $2 / 1000000" | bc -l | xargs printf '%.1f'; }
row() { # workload runner insns seconds
	printf '{"bench":"frontend_mips","workload":"%s","runner":"%s","input_mb":%s,"insns":%s,"seconds":%.3f,"mips":%s}\n' \
		"$1" "$2" "$MB" "$3" "$4" "$(mips "$3" "$4")"
}
# unmodelled DRAIN STAT_ARGS GUEST: seconds of dynpmu stat with DPMU_QEMU_DRAIN
# (its warning that the counts are not the program's kept out of the way,
# its messages shown if it fails)
unmodelled() {
	t0=$(now)
	DPMU_QEMU_DRAIN=$1 DPMU_PLUGIN=$B/libdpmu_qemu.so "$B/dynpmu" stat -x, -o /dev/null $2 -- $3 \
		<"$T/input" >/dev/null 2>"$T/drain.err" || { cat "$T/drain.err" >&2; exit 1; }
	t1=$(now)
	el "$t0" "$t1"
}
# measure NAME QEMU_ARGS STAT_ARGS GUEST NATIVE: the three runners on one workload
measure() {
	name=$1 qargs=$2 sargs=$3 guest=$4 native=$5
	# guest instructions: the plugin's independent count
	qemu-aarch64 $qargs -plugin "$B/libdpmu_qemu.so,count=$T/n" $guest <"$T/input" >/dev/null
	N=$(cat "$T/n")
	t0=$(now); qemu-aarch64 $qargs $guest <"$T/input" >/dev/null; t1=$(now)
	q=$(el "$t0" "$t1")
	t0=$(now); DPMU_PLUGIN=$B/libdpmu_qemu.so "$B/dynpmu" stat -x, -o "$T/stat.csv" $sargs -- $guest <"$T/input" >/dev/null; t1=$(now)
	d=$(el "$t0" "$t1")
	DI=$(awk -F, '$3 == "INST_RETIRED" { print $1 }' "$T/stat.csv")
	# where the time goes: the same run with the records read and dropped
	# (plugin, rings, the transfer between cores), and dropped unread
	# (plugin and ring stores only: the slots stay in qemu's cache)
	dr=$(unmodelled read "$sargs" "$guest")
	dd=$(unmodelled discard "$sargs" "$guest")
	t0=$(now); valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes --cachegrind-out-file="$T/cg.out" $native <"$T/input" >/dev/null 2>"$T/cg.err"; t1=$(now)
	c=$(el "$t0" "$t1")
	CI=$(awk '/I *refs:/ { gsub(",", "", $4); print $4; exit }' "$T/cg.err")
	row "$name" "qemu-aarch64 (bare)" "$N" "$q"
	row "$name" "dynpmu stat -- (full model)" "$DI" "$d"
	row "$name" "dynpmu stat -- (records read, not modelled)" "$N" "$dr"
	row "$name" "dynpmu stat -- (records dropped unread)" "$N" "$dd"
	row "$name" "cachegrind cache+branch sim (native x86-64)" "$CI" "$c"
}
measure lz77 "" "" "$T/lz-a64" "$T/lz-x86"
if [ -n "$ROOT" ]; then
	measure "zstd -3" "-L $ROOT" "--sysroot $ROOT" "$ROOT/usr/bin/zstd -c -3 --single-thread" \
		"zstd -c -3 --single-thread"
fi
