#!/bin/sh
# What sampling costs: dynpmu record at the default frequency (and with
# -g), sampling instructions (-e instructions, the block path too) and
# with --skid 1 (one instruction at a time), against dynpmu stat on the
# same program, wall time, best of RUNS runs each, taken in turn so all
# see the same machine. Prints one JSON object per program; never fails
# on a time.
# The programs: bench/frontend_compress.c (LZ77 on 1 MiB of C text) and
# the case studies' slow variants (workloads/, as dynpmu demo runs them).
# Usage: bench/record_cost.sh BUILD_DIR [RUNS]
set -eu
B=${1:?usage: record_cost.sh BUILD_DIR [RUNS]}
RUNS=${2:-3}
SRC=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
aarch64-linux-gnu-gcc -O2 -static "$SRC/frontend_compress.c" -o "$T/lz"
find "$SRC/../src" -name '*.c' | sort | xargs cat | head -c 1048576 >"$T/input"
W=$B/workloads
. "$SRC/lib.sh"
for p in "$T/lz" "$W/matmul naive 128" "$W/branches branchy 200000 4" "$W/traversal aos 32768 4"; do
	set -- $p
	s=$(best "$B/dynpmu" stat -o /dev/null -- "$@")
	r=$(best "$B/dynpmu" record -q -o "$T/p.data" -- "$@")
	g=$(best "$B/dynpmu" record -q -g -o "$T/p.data" -- "$@")
	n=$("$B/dynpmu" report -i "$T/p.data" | awk '/^# Samples:/ { print $3; exit }')
	e=$(best "$B/dynpmu" record -q -e instructions -o "$T/e.data" -- "$@")
	k=$(best "$B/dynpmu" record -q --skid 1 -o "$T/k.data" -- "$@")
	printf '{"bench":"record_cost","program":"%s","stat_s":%.3f,"record_s":%.3f,"record_g_s":%.3f,"record_over_stat":%.2f,"samples":%s,"record_insns_s":%.3f,"record_skid_s":%.3f,"insns_over_stat":%.2f,"skid_over_stat":%.2f}\n' \
		"$(basename "$1") ${2:-}" "$s" "$r" "$g" "$(echo "$r / $s" | bc -l)" "${n:-0}" \
		"$e" "$k" "$(echo "$e / $s" | bc -l)" "$(echo "$k / $s" | bc -l)"
done
