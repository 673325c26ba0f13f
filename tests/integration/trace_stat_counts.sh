#!/bin/sh
# dynpmu stat --trace: exact counts for simple traces, in the table and
# CSV forms, from text and binary traces (docs/trace-format.md).
set -eu
: "${DYNPMU:?DYNPMU must name the dynpmu binary}"
: "${DPMU_SOURCE_DIR:?DPMU_SOURCE_DIR must name the source tree}"
T="$DPMU_SOURCE_DIR/tests/integration/traces"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1000 `i` lines retire 1000 instructions (Arm ARM: INST_RETIRED counts
# every architecturally executed instruction).
awk 'BEGIN { for (i = 0; i < 1000; i++) printf "i %x\n", 4194304 + 4 * i }' > "$W/i1000.trace"
out=$("$DYNPMU" stat --trace "$W/i1000.trace" -x, -e inst_retired,cpu_cycles)
v=$(echo "$out" | awk -F, '$3 == "INST_RETIRED" { print $1 }')
[ "$v" = 1000 ] || fail "INST_RETIRED of 1000 i lines: got '$v' in: $out"
c=$(echo "$out" | awk -F, '$3 == "CPU_CYCLES" { print $1 }')
[ "$c" -gt 0 ] || fail "CPU_CYCLES should be positive: $out"

# The table: perf's header, separators, IPC comment and elapsed time.
tab=$("$DYNPMU" stat --trace "$W/i1000.trace" -e inst_retired,cpu_cycles -M ipc)
echo "$tab" | grep -q "^ Performance counter stats for '$W/i1000.trace':\$" || fail "header: $tab"
echo "$tab" | grep -Eq '^ +1,000      INST_RETIRED$' || fail "INST_RETIRED row: $tab"
echo "$tab" | grep -Eq '^ +[0-9]+\.[0-9]{2} insn/cycle      ipc$' || fail "ipc row: $tab"
echo "$tab" | grep -Eq '^ +[0-9]+\.[0-9]{9} seconds time elapsed$' ||
	fail "elapsed time: $tab"

# A cold sequential sweep of 64 KiB with 8-byte loads touches 1024 64-byte
# lines: 8192 L1D accesses, 1024 refills, on LRU caches with no prefetcher.
awk 'BEGIN { for (i = 0; i < 8192; i++) printf "l %x %x 8\n", 4194304 + 4 * i, 1048576 + 8 * i }' \
	> "$W/sweep.trace"
out=$("$DYNPMU" stat --trace "$W/sweep.trace" --profile "$T/lru-noprefetch.json" -x, \
	-e L1D_CACHE,L1D_CACHE_REFILL,INST_RETIRED)
[ "$(echo "$out" | awk -F, '$3 == "L1D_CACHE_REFILL" { print $1 }')" = 1024 ] ||
	fail "L1D_CACHE_REFILL of a 64 KiB cold sweep: $out"
[ "$(echo "$out" | awk -F, '$3 == "L1D_CACHE" { print $1 }')" = 8192 ] ||
	fail "L1D_CACHE of a 64 KiB cold sweep: $out"

# The same trace in binary form counts the same.
"$DYNPMU" trace convert "$W/sweep.trace" "$W/sweep.bin" || fail "trace convert"
head -c 8 "$W/sweep.bin" | grep -q DPMUTRC1 || fail "binary trace header"
bout=$("$DYNPMU" stat --trace "$W/sweep.bin" --profile "$T/lru-noprefetch.json" -x, \
	-e L1D_CACHE,L1D_CACHE_REFILL,INST_RETIRED)
[ "$bout" = "$out" ] || fail "binary trace differs: $bout vs $out"
"$DYNPMU" trace convert "$W/sweep.bin" "$W/back.trace" || fail "trace convert back"
[ "$(grep -c '^l ' "$W/back.trace")" = 8192 ] || fail "binary -> text lost records"

# Branches: BR_RETIRED counts every retired branch, taken or not.
out=$("$DYNPMU" stat --trace "$T/two_cores.trace" -x, -e br_retired,inst_retired)
[ "$(echo "$out" | awk -F, '$3 == "BR_RETIRED" { print $1 }')" = 4 ] || fail "BR_RETIRED: $out"
[ "$(echo "$out" | awk -F, '$3 == "INST_RETIRED" { print $1 }')" = 9 ] || fail "INST_RETIRED: $out"

# Raw codes count like their names: r8 and 0x08 are INST_RETIRED.
out=$("$DYNPMU" stat --trace "$W/i1000.trace" -x, -e r8,0x08,inst_retired)
[ "$(echo "$out" | awk -F, '$3 == "r8" || $3 == "INST_RETIRED" { n++; s += $1 } END { print n, s }')" = "2 2000" ] ||
	fail "raw codes: $out"
echo "ok"
