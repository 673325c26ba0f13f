#!/bin/sh
# Every benchmark refuses a size that is not a positive count (not a
# number, trailing text, zero, out of range) with a message naming it and
# exit status 2, before it measures anything (bench/bench_util.h).
# Run by tests/integration/CMakeLists.txt with DYNPMU set; the benchmarks
# sit in bench/ next to dynpmu.
set -u
: "${DYNPMU:?DYNPMU: the dynpmu binary}"
B=$(dirname "$DYNPMU")/bench
fails=0 n=0
for b in "$B"/bench_*; do
	[ -x "$b" ] || continue
	name=$(basename "$b")
	for arg in --help abc 0 12x -5 99999999999999999999999; do
		n=$((n + 1))
		out=$("$b" "$arg" 2>&1 >/dev/null); rc=$?
		if [ $rc -eq 2 ] && printf '%s' "$out" | grep -qF "$name: '$arg' is not a positive count"; then
			echo "ok   ${name}_refuses_'$arg'"
		else
			echo "FAIL ${name}_refuses_'$arg': rc $rc, '$out'"
			fails=$((fails + 1))
		fi
	done
done
[ $n -gt 0 ] || { echo "FAIL no benchmarks in $B"; exit 1; }
[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
