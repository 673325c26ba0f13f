#!/bin/sh
# What the trace unit costs (docs/trace-unit.md): guest MIPS of dynpmu stat
# (the trace unit off), of dynpmu trace record with the trigger armed but
# never reached (every PMU delivery checked, nothing traced), and with the
# window open for the whole run (every instruction encoded into a 1 MiB
# sink that wraps), on the same programs, best of RUNS runs each, taken in
# turn. Prints one JSON object per program and runner; never fails on a time.
# The programs: bench/frontend_compress.c (LZ77 on MBYTES of C text) and the
# naive matmul case study.
# Usage: bench/trace_cost.sh BUILD_DIR [RUNS [MBYTES]]
set -eu
B=${1:?usage: trace_cost.sh BUILD_DIR [RUNS [MBYTES]]}
RUNS=${2:-3}
MB=${3:-4}
SRC=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
aarch64-linux-gnu-gcc -O2 -static "$SRC/frontend_compress.c" -o "$T/lz"
i=0
: >"$T/input"
while [ "$(stat -c %s "$T/input")" -lt $((MB * 1048576)) ]; do
	find "$SRC/../src" -name '*.c' | sort | xargs cat | sed "s/^/$i /" >>"$T/input"
	i=$((i + 1))
done
. "$SRC/lib.sh"
row() { # program runner insns seconds traced
	printf '{"bench":"trace_cost","program":"%s","runner":"%s","insns":%s,"seconds":%.3f,"mips":%.1f,"traced":%s}\n' \
		"$1" "$2" "$3" "$4" "$(echo "$3 / $4 / 1000000" | bc -l)" "$5"
}
for p in "$T/lz" "$B/workloads/matmul naive 128"; do
	set -- $p
	name="$(basename "$1") ${2:-}"
	"$B/dynpmu" stat -x, -o "$T/s.csv" -e instructions -- "$@" <"$T/input" >/dev/null
	n=$(awk -F, '$3 == "INST_RETIRED" { print $1 }' "$T/s.csv")
	s=$(best "$B/dynpmu" stat -o /dev/null -- "$@")
	a=$(best "$B/dynpmu" trace record -q --trigger 'EXC_TAKEN>65534' -o "$T/a" -- "$@")
	w=$(best "$B/dynpmu" trace record -q -o "$T/w" -- "$@")
	ta=$(awk '/"traced":/ { gsub(/[^0-9]/, ""); print }' "$T/a/meta.json")
	tw=$(awk '/"traced":/ { gsub(/[^0-9]/, ""); print }' "$T/w/meta.json")
	row "$name" "dynpmu stat (trace unit off)" "$n" "$s" 0
	row "$name" "trace record, trigger armed, not reached" "$n" "$a" "$ta"
	row "$name" "trace record, window open all run" "$n" "$w" "$tw"
done
