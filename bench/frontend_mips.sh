#!/bin/sh
# Guest MIPS of the full model (dynpmu stat -- PROGRAM: plugin, rings,
# engine, model, driver, monitor) on a compression workload, against bare
# qemu-aarch64 and against cachegrind (cache + branch simulation) on the
# native build doing the same work, in one run. Prints one JSON object per
# measurement; never fails on a time.
# Usage: bench/frontend_mips.sh BUILD_DIR [MBYTES]
set -eu
B=${1:?usage: frontend_mips.sh BUILD_DIR [MBYTES]}
MB=${2:-8}
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
now() { date +%s.%N; }
el() { echo "$2 - $1" | bc -l; }
# guest instructions: the plugin's independent count
qemu-aarch64 -plugin "$B/libdpmu_qemu.so,count=$T/n" "$T/lz-a64" <"$T/input" >/dev/null
N=$(cat "$T/n")
t0=$(now); qemu-aarch64 "$T/lz-a64" <"$T/input" >/dev/null; t1=$(now)
q=$(el "$t0" "$t1")
t0=$(now); DPMU_PLUGIN=$B/libdpmu_qemu.so "$B/dynpmu" stat -x, -o "$T/stat.csv" -- "$T/lz-a64" <"$T/input" >/dev/null; t1=$(now)
d=$(el "$t0" "$t1")
DI=$(awk -F, '$3 == "INST_RETIRED" { print $1 }' "$T/stat.csv")
t0=$(now); valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes --cachegrind-out-file="$T/cg.out" "$T/lz-x86" <"$T/input" >/dev/null 2>"$T/cg.err"; t1=$(now)
c=$(el "$t0" "$t1")
CI=$(awk '/I *refs:/ { gsub(",", "", $4); print $4; exit }' "$T/cg.err")
mips() { echo "$1 / $2 / 1000000" | bc -l | xargs printf '%.1f'; }
printf '{"bench":"frontend_mips","runner":"qemu-aarch64 (bare)","input_mb":%s,"insns":%s,"seconds":%.3f,"mips":%s}\n' "$MB" "$N" "$q" "$(mips "$N" "$q")"
printf '{"bench":"frontend_mips","runner":"dynpmu stat -- (full model)","input_mb":%s,"insns":%s,"seconds":%.3f,"mips":%s}\n' "$MB" "$DI" "$d" "$(mips "$DI" "$d")"
printf '{"bench":"frontend_mips","runner":"cachegrind cache+branch sim (native x86-64)","input_mb":%s,"insns":%s,"seconds":%.3f,"mips":%s}\n' "$MB" "$CI" "$c" "$(mips "$CI" "$c")"
