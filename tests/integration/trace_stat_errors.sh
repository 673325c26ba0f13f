#!/bin/sh
# dynpmu stat on bad input: a clear message naming the input, a non-zero
# exit status (2 for a bad command line or event list), never a crash.
set -u
: "${DYNPMU:?DYNPMU must name the dynpmu binary}"
: "${DPMU_SOURCE_DIR:?DPMU_SOURCE_DIR must name the source tree}"
T="$DPMU_SOURCE_DIR/tests/integration/traces"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect STATUS MESSAGE-SUBSTRING -- command...
expect() {
	want=$1 msg=$2
	shift 3
	"$@" > "$W/out" 2> "$W/err"
	got=$?
	[ "$got" -eq "$want" ] || fail "exit $got, want $want: $* ($(cat "$W/err"))"
	grep -qF -- "$msg" "$W/err" || fail "message '$msg' missing for $*: $(cat "$W/err")"
	[ -s "$W/out" ] && fail "nothing on stdout when failing: $*"
	return 0
}

expect 2 "unknown event 'l1d_cahce' (did you mean l1d_cache?)" -- \
	"$DYNPMU" stat --trace "$T/two_cores.trace" -e inst_retired,l1d_cahce
# More events than counters take turns; a group that cannot fit is refused.
expect 2 "needs 7 event counters at once, but the Cortex-A75 PMU of cpu0 has 6" -- \
	"$DYNPMU" stat --trace "$T/two_cores.trace" \
	-e '{inst_retired,br_retired,l1d_cache,l1d_cache_refill,l2d_cache,l2d_cache_refill,mem_access}'
expect 1 "$W/missing.trace: cannot open: No such file or directory" -- \
	"$DYNPMU" stat --trace "$W/missing.trace"
expect 1 "$T/malformed.trace:4: branch kind 'jump' must be cond, uncond, call, ret or ind" -- \
	"$DYNPMU" stat --trace "$T/malformed.trace"
expect 1 "$W: read error" -- "$DYNPMU" stat --trace "$W"
expect 2 "no trace given (--trace FILE)" -- "$DYNPMU" stat
expect 2 "no program after --" -- "$DYNPMU" stat -e inst_retired --
expect 2 "--per-thread: a trace has cores, not threads" -- "$DYNPMU" stat --trace "$T/two_cores.trace" --per-thread
expect 2 "--by-symbol: is for a program (-- PROGRAM), not a trace" -- "$DYNPMU" stat --trace "$T/two_cores.trace" --by-symbol
expect 2 "--cpus: is for a program (-- PROGRAM): a trace names its cores" -- "$DYNPMU" stat --trace "$T/two_cores.trace" --cpus 0
expect 2 "-e '': no event given" -- "$DYNPMU" stat --trace "$T/two_cores.trace" -e ''
expect 2 "raw event 'r1ffff': event numbers are 16 bits" -- "$DYNPMU" stat --trace "$T/two_cores.trace" -e r1ffff
expect 2 "-x '': give a separator" -- "$DYNPMU" stat --trace "$T/two_cores.trace" -x ''
# An output that cannot be written is told before the run, and nothing is
# measured or written
expect 2 "--svg $W/no/dir/x.svg: No such file or directory" -- \
	"$DYNPMU" stat --trace "$T/two_cores.trace" -I 1 -o "$W/svg-report" --svg "$W/no/dir/x.svg"
[ -s "$W/svg-report" ] && fail "--svg unwritable: a report was written"
expect 2 "unknown option" -- "$DYNPMU" stat --trace "$T/two_cores.trace" --bogus
expect 1 "no built-in profile 'nosuch'" -- "$DYNPMU" stat --trace "$T/two_cores.trace" --profile nosuch
# A derived profile whose base is missing, or leads back to it, names both.
printf '{"base": "a75x4"}\n' > "$W/derived.json"
expect 1 "$W/derived.json: base: no built-in profile 'a75x4'" -- \
	"$DYNPMU" stat --trace "$T/two_cores.trace" --profile "$W/derived.json"
printf '{"base": "loop2.json"}\n' > "$W/loop1.json"
printf '{"base": "loop1.json"}\n' > "$W/loop2.json"
expect 1 "$W/loop2.json: base: 'loop1.json' is already in the base chain ($W/loop1.json -> $W/loop2.json -> $W/loop1.json)" -- \
	"$DYNPMU" stat --trace "$T/two_cores.trace" --profile "$W/loop1.json"

# A core the profile does not have, named with its line.
printf 'i 1000\ncpu 8\ni 2000\n' > "$W/cpu8.trace"
expect 1 "$W/cpu8.trace:2: cpu 8 out of range: there are 8 cores (0-7)" -- \
	"$DYNPMU" stat --trace "$W/cpu8.trace"

# A truncated binary trace names the byte.
printf 'DPMUTRC1\101\002' > "$W/trunc.bin"
expect 1 "$W/trunc.bin: byte 8: truncated record" -- "$DYNPMU" stat --trace "$W/trunc.bin"

# An unreadable file (only meaningful when not running as root).
printf 'i 1000\n' > "$W/noread.trace"
chmod 000 "$W/noread.trace"
if ! cat "$W/noread.trace" > /dev/null 2>&1; then
	expect 1 "$W/noread.trace: cannot open: Permission denied" -- \
		"$DYNPMU" stat --trace "$W/noread.trace"
fi

# Garbage bytes: an error message, not a crash.
head -c 4096 /dev/urandom > "$W/random.trace" 2>/dev/null || true
"$DYNPMU" stat --trace "$W/random.trace" > /dev/null 2> "$W/err"
rc=$?
[ "$rc" -eq 1 ] || fail "random bytes: exit $rc ($(cat "$W/err"))"
grep -q "^dynpmu stat: $W/random.trace" "$W/err" || fail "random bytes message: $(cat "$W/err")"

# An empty trace is a valid trace with nothing in it.
: > "$W/empty.trace"
out=$("$DYNPMU" stat --trace "$W/empty.trace" -x, -e inst_retired) || fail "empty trace"
[ "$out" = "0,,INST_RETIRED,0,100.00" ] || fail "empty trace counts: $out"
echo "ok"
