#!/bin/sh
# dynpmu trace record / show end to end (docs/trace-unit.md):
#  1. a PMU-triggered window: OpenCSD decodes exactly the instructions the
#     front end gave the trace unit while ViewInst let them through
#     (--executed), the window opened where the counter reached zero, and
#     the readings in it passed the trigger's count;
#  2. a whole program, syscalls (SVC exceptions) and all: every instruction
#     stat counts decodes; threads that share the traced core decode too,
#     each under its context ID;
#  3. a sink that wrapped says so, and decodes to the exact tail;
#  4. --range on a function: every decoded instruction is in it;
#  5. show prints symbols, source lines, the trigger and the readings;
#  6. bad input: each with a message and exit status 2.
set -u
: "${DYNPMU:?DYNPMU: the dynpmu binary}"
W=$(dirname "$DYNPMU")/workloads
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for tool in qemu-aarch64 aarch64-linux-gnu-gcc; do
	if ! command -v $tool >/dev/null; then
		echo "skipped: needs $tool (scripts/deps.sh test)"
		exit 0
	fi
done
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }
# meta FIELD DIR: a number from meta.json's "instructions" or "sink"
meta() { sed -n "s/^ *\"$1\": \\([0-9a-z]*\\),\\{0,1\\}\$/\\1/p" "$2/meta.json" | head -1; }
# decoded DIR == the traced lines of EXECUTED (optionally only the last N)
same_as_executed() {
	"$DYNPMU" trace show --addresses "$1" >"$T/dec" || return 1
	awk '$3 == "traced" { print $2 }' "$2" >"$T/exp"
	if [ "${3:-}" = tail ]; then
		tail -n "$(wc -l <"$T/dec")" "$T/exp" >"$T/exp.tail"
		mv "$T/exp.tail" "$T/exp"
	fi
	[ -s "$T/dec" ] && cmp -s "$T/dec" "$T/exp"
}

# 1. trigger and window
if "$DYNPMU" trace record -q --trigger 'L1D_CACHE_REFILL>1000' --window 5000 \
	--executed "$T/ex1" -o "$T/d1" -- "$W/matmul" naive 64 >/dev/null; then
	traced=$(meta traced "$T/d1") first=$(meta first "$T/d1") at=$(meta event_at "$T/d1")
	if same_as_executed "$T/d1" "$T/ex1"; then pass "window: decode = executed ($traced)"
	else fail "window: the decode differs from the executed instructions"; fi
	# at least the window, at most one block more
	if [ "$traced" -ge 5000 ] && [ "$traced" -lt 5200 ]; then pass "window: $traced instructions"
	else fail "window: $traced instructions traced for --window 5000"; fi
	if [ "$first" = "$at" ] && [ "$first" -gt 0 ]; then pass "window: opens at the trigger ($first)"
	else fail "window: first traced $first, trigger at $at"; fi
	refills=$(awk '/"snapshots"/ { s = 1 } s && /"L1D_CACHE_REFILL":/ { gsub(/[^0-9]/, ""); print; exit }' "$T/d1/meta.json")
	if [ -n "$refills" ] && [ "$refills" -gt 1000 ]; then pass "window: readings after the trigger ($refills refills)"
	else fail "window: the first reading has '${refills:-none}' refills"; fi
else
	fail "window: trace record failed"
fi

# 1b. the same with cycle counts (TRCCONFIGR.CCI)
if "$DYNPMU" trace record -q --cycles --trigger 'L1D_CACHE_REFILL>1000' --window 3000 \
	--executed "$T/ex1c" -o "$T/d1c" -- "$W/matmul" naive 64 >/dev/null; then
	cyc=$("$DYNPMU" trace show "$T/d1c" | sed -n 's/.* \([0-9,]*\) cycles counted$/\1/p' | tr -d ,)
	if same_as_executed "$T/d1c" "$T/ex1c" && [ "${cyc:-0}" -gt 0 ]; then pass "cycles: decode = executed, $cyc cycles counted"
	else fail "cycles: the decode differs or no cycles (${cyc:-none})"; fi
else
	fail "cycles: trace record failed"
fi

# 2. the whole program, with its syscalls
if "$DYNPMU" trace record -q --executed "$T/ex2" -o "$T/d2" --buffer 8000000 -- "$W/matmul" naive 16 >/dev/null &&
	"$DYNPMU" stat -x, -o "$T/stat.csv" -e instructions -- "$W/matmul" naive 16 >/dev/null; then
	n=$(awk -F, '$3 == "INST_RETIRED" { print $1 }' "$T/stat.csv")
	d=$("$DYNPMU" trace show --addresses "$T/d2" | wc -l)
	if same_as_executed "$T/d2" "$T/ex2"; then pass "whole run: decode = executed"
	else fail "whole run: the decode differs from the executed instructions"; fi
	# the environment differs between the two runs by nothing: the counts agree
	if [ "$d" = "$n" ]; then pass "whole run: $d instructions decoded = stat's INST_RETIRED"
	else fail "whole run: $d decoded, stat counts $n"; fi
	if "$DYNPMU" trace show "$T/d2" | grep -q "svc #0"; then pass "whole run: the SVCs decode"
	else fail "whole run: no SVC in the decode"; fi
else
	fail "whole run: trace record or stat failed"
fi

# 2b. threads taking turns on the traced core: each switch is an IRQ
# exception and a new context ID, and every thread's part decodes
if "$DYNPMU" trace record -q --executed "$T/ex2t" -o "$T/d2t" --buffer 16000000 -- \
	"$W/false_sharing" shared 4 2000 >/dev/null; then
	threads=$("$DYNPMU" trace show "$T/d2t" | grep -e '^-- thread [0-9]' | sort -u | wc -l)
	if same_as_executed "$T/d2t" "$T/ex2t" && [ "$threads" -ge 5 ]; then pass "threads: decode = executed, $threads threads"
	else fail "threads: the decode differs, or $threads threads seen"; fi
else
	fail "threads: trace record failed"
fi

# 3. a sink that wraps
if "$DYNPMU" trace record --executed "$T/ex3" -o "$T/d3" --buffer 4096 -- "$W/matmul" naive 16 \
	>/dev/null 2>"$T/err3"; then
	if grep -q '"wrapped": true' "$T/d3/meta.json" && grep -q "sink wrapped" "$T/err3"; then
		pass "wrap: meta and message say so"
	else fail "wrap: not reported"; fi
	if same_as_executed "$T/d3" "$T/ex3" tail; then pass "wrap: decode = the executed tail"
	else fail "wrap: the decode is not the tail of the executed instructions"; fi
else
	fail "wrap: trace record failed"
fi

# 4. --range on a function
if "$DYNPMU" trace record -q --range __vfprintf_internal --executed "$T/ex4" -o "$T/d4" -- \
	"$W/matmul" naive 16 >/dev/null; then
	# the range object: "end", "name", "start" (sorted keys)
	lo=$(awk '/"range": \{/ { r = 1 } r && /"start":/ { gsub(/[^0-9]/, ""); print; exit }' "$T/d4/meta.json")
	hi=$(awk '/"range": \{/ { r = 1 } r && /"end":/ { gsub(/[^0-9]/, ""); print; exit }' "$T/d4/meta.json")
	out=$("$DYNPMU" trace show --addresses "$T/d4" | awk -v lo="$lo" -v hi="$hi" '
		function hex(s,   i, v) { v = 0; s = tolower(substr(s, 3))
			for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v }
		{ a = hex($1); if (a < lo + 0 || a >= hi + 0) n++ } END { print n + 0 }')
	if same_as_executed "$T/d4" "$T/ex4" && [ "$out" = 0 ]; then pass "range: decode = executed, all in the function"
	else fail "range: $out decoded outside [$lo, $hi), or the decode differs"; fi
else
	fail "range: trace record failed"
fi

# 5. what show prints
if "$DYNPMU" trace show "$T/d1" >"$T/show1"; then
	for want in "trigger: L1D_CACHE_REFILL passed 1,000" "-- PMU at " "main+0x" "matmul.c:"; do
		if grep -q -- "$want" "$T/show1"; then pass "show: '$want'"
		else fail "show: no '$want'"; fi
	done
else
	fail "show failed"
fi

# 6. bad input
bad() { # NAME WANT-IN-MESSAGE COMMAND...
	name=$1 want=$2
	shift 2
	"$@" >/dev/null 2>"$T/err"
	rc=$?
	if [ $rc = 2 ] && grep -q -- "$want" "$T/err"; then pass "bad input: $name"
	else fail "bad input: $name (exit $rc: $(cat "$T/err"))"; fi
}
bad "trigger syntax" "give EVENT>N" "$DYNPMU" trace record --trigger 'L1D_CACHE_REFILL' -- "$W/matmul" naive 8
bad "trigger count" "16 bits" "$DYNPMU" trace record --trigger 'L1D_CACHE_REFILL>70000' -- "$W/matmul" naive 8
bad "trigger event" "NO_SUCH_EVENT" "$DYNPMU" trace record --trigger 'NO_SUCH_EVENT>5' -- "$W/matmul" naive 8
bad "range symbol" "no function 'no_such_fn'" "$DYNPMU" trace record --range no_such_fn -- "$W/matmul" naive 8
bad "range addresses" "START-END" "$DYNPMU" trace record --range 400100-400000 -- "$W/matmul" naive 8
bad "window" "--window" "$DYNPMU" trace record --window 0 -- "$W/matmul" naive 8
bad "not a trace directory" "meta.json: cannot open" "$DYNPMU" trace show "$T/none"
mkdir -p "$T/trunc" && cp "$T/d1/trace.bin" "$T/trunc/" && head -c 200 "$T/d1/meta.json" >"$T/trunc/meta.json"
bad "truncated meta.json" "trunc/meta.json: line" "$DYNPMU" trace show "$T/trunc"
mkdir -p "$T/short" && cp "$T/d1/meta.json" "$T/short/" && head -c 100 "$T/d1/trace.bin" >"$T/short/trace.bin"
bad "short trace.bin" "sink.bytes" "$DYNPMU" trace show "$T/short"
mkdir -p "$T/corrupt" && cp "$T/d1/meta.json" "$T/corrupt/"
# twenty reserved headers (0x70) after the first sync and trace info
{ head -c 30 "$T/d1/trace.bin"; printf 'pppppppppppppppppppp'; tail -c +51 "$T/d1/trace.bin"; } >"$T/corrupt/trace.bin"
bad "corrupt trace" "trace.bin: byte [0-9]*: .*packet" "$DYNPMU" trace show "$T/corrupt"

[ $fails = 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
