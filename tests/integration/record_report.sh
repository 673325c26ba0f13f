#!/bin/sh
# dynpmu record / dynpmu report end to end (docs/record.md):
#  1. Linux perf reads the file without a warning, perf report and perf
#     script, static and dynamic programs, and its per-symbol overhead is
#     dynpmu report's within 1 point;
#  2. the sample shares of the case studies are stat --by-symbol's exact
#     per-function cycles within 2 points at the default frequency;
#  3. the call stacks are exact: recursion, longjmp, a signal handler, a
#     tail call, threads;
#  4. report's views: -g, --annotate, --folded, --flame (valid SVG, and a
#     browser draws it when one is installed);
#  5. bad input: what cannot be sampled, bad options, truncated, corrupt and
#     foreign files, each with a message and exit status 2.
set -u
: "${DYNPMU:?DYNPMU: the dynpmu binary}"
SRC=${DPMU_SOURCE_DIR:-$(dirname "$0")/../..}
W=$(dirname "$DYNPMU")/workloads
G=$(dirname "$DYNPMU")/tests/integration/qemu_guests
SYSROOT=/usr/aarch64-linux-gnu
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for tool in qemu-aarch64 aarch64-linux-gnu-gcc perf xmllint; do
	if ! command -v $tool >/dev/null; then
		echo "skipped: needs $tool (scripts/deps.sh test)"
		exit 0
	fi
done
if [ ! -x "$G/stacks" ]; then
	G=$T
	aarch64-linux-gnu-gcc -O2 -g -static -pthread "$SRC/tests/integration/qemu_guests/stacks.c" \
		-o "$G/stacks" || exit 1
fi
aarch64-linux-gnu-gcc -O1 -g "$SRC/tests/integration/qemu_guests/stacks.c" -pthread -o "$T/stacks-dyn" || exit 1
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }

# sym PCT pairs of dynpmu report --sort sym: "name pct"
dyn_shares() { "$DYNPMU" report -i "$1" --sort sym | awk '$1 ~ /%$/ { sub(/%/, "", $1); print $3, $1 }'; }
# ... of perf report
perf_shares() {
	perf report -i "$1" --stdio --no-children --sort sym -g none $2 2>"$T/perf.err" |
		awk '$1 ~ /%$/ && $2 == "[.]" { sub(/%/, "", $1); print $3, $1 }'
}
# the largest difference between two "name pct" lists over names at 1 % or more in either
max_diff() {
	awk 'NR == FNR { a[$1] = $2; next } { b[$1] = $2 }
	     END { m = 0; for (k in a) if (a[k] >= 1 || b[k] >= 1) { d = a[k] - b[k]; if (d < 0) d = -d; if (d > m) { m = d; w = k } }
		   for (k in b) if (!(k in a) && b[k] >= 1) { if (b[k] > m) { m = b[k]; w = k } }
		   printf "%.2f %s\n", m, w }' "$1" "$2"
}

# 1. perf reads it
"$DYNPMU" record -q -g -o "$T/m.data" -- "$W/matmul" naive >/dev/null 2>"$T/rec.err" ||
	fail "record_matmul: $(cat "$T/rec.err")"
perf_shares "$T/m.data" "" >"$T/perf.txt"
if [ -s "$T/perf.err" ] || [ ! -s "$T/perf.txt" ]; then
	fail "perf_report_reads_without_warning: $(cat "$T/perf.err")"
else
	pass "perf_report_reads_without_warning"
fi
perf script -i "$T/m.data" >"$T/script.txt" 2>"$T/script.err"
if [ -s "$T/script.err" ] || ! grep -q "cycles:" "$T/script.txt" || ! grep -q " main+0x" "$T/script.txt"; then
	fail "perf_script_reads_without_warning: $(head -3 "$T/script.err")"
else
	pass "perf_script_reads_without_warning"
fi
perf report -i "$T/m.data" --stdio --no-children -G 2>/dev/null | grep -A4 -- "---_start" | grep -q "__libc_start_call_main" &&
	pass "perf_report_g_shows_the_call_graph" || fail "perf_report_g_shows_the_call_graph"
dyn_shares "$T/m.data" >"$T/dyn.txt"
d=$(max_diff "$T/dyn.txt" "$T/perf.txt")
awk -v d="${d% *}" 'BEGIN { exit !(d <= 1) }' && pass "perf_and_dynpmu_report_agree_within_1_point ($d)" ||
	fail "perf_and_dynpmu_report_agree_within_1_point: off by $d"
# a dynamic program: its libraries through MMAP2
"$DYNPMU" record -q --sysroot "$SYSROOT" -o "$T/d.data" -- "$T/stacks-dyn" threads >/dev/null 2>"$T/rec.err" ||
	fail "record_dynamic: $(cat "$T/rec.err")"
perf_shares "$T/d.data" "" >"$T/perf.txt"
if [ -s "$T/perf.err" ] || ! grep -q "^spin " "$T/perf.txt"; then
	fail "perf_reads_a_dynamic_program: $(cat "$T/perf.err")"
else
	pass "perf_reads_a_dynamic_program"
fi
perf script -i "$T/d.data" --show-mmap-events 2>/dev/null | grep -q "MMAP2.*libc.so.6" &&
	pass "mmap2_names_the_shared_objects" || fail "mmap2_names_the_shared_objects"

# 2. samples against the exact per-function counts
for c in "matmul naive 128" "matmul blocked 128" "branches branchy 200000 4" \
	"branches branchless 200000 4" "traversal aos 32768 4" "traversal sparse 32768 4" \
	"false_sharing shared 4 250000" "false_sharing padded 4 250000"; do
	set -- $c
	prog=$1; shift
	"$DYNPMU" stat --by-symbol -x, -o "$T/s.csv" -- "$W/$prog" "$@" >/dev/null 2>&1
	awk -F, '$1 == "symbol" { c[$2] += $3; t += $3 } END { for (k in c) printf "%s %.4f\n", k, 100 * c[k] / t }' \
		"$T/s.csv" >"$T/exact.txt"
	"$DYNPMU" record -q -o "$T/c.data" -- "$W/$prog" "$@" >/dev/null 2>&1
	dyn_shares "$T/c.data" >"$T/dyn.txt"
	d=$(max_diff "$T/dyn.txt" "$T/exact.txt")
	awk -v d="${d% *}" 'BEGIN { exit !(d <= 2) }' &&
		pass "sample_shares_match_by_symbol_within_2_points: $prog $1 ($d)" ||
		fail "sample_shares_match_by_symbol_within_2_points: $prog $1 off by $d"
done

# ... instructions (the block path finds the overflowing one from the counts) against the
# exact per-function instructions, and the clock with skid (one instruction at a time)
"$DYNPMU" stat --by-symbol -x, -o "$T/s.csv" -- "$W/branches" branchy 200000 4 >/dev/null 2>&1
awk -F, '$1 == "symbol" { c[$2] += $4; t += $4 } END { for (k in c) printf "%s %.4f\n", k, 100 * c[k] / t }' \
	"$T/s.csv" >"$T/exact.txt"
"$DYNPMU" record -q -e instructions -o "$T/i.data" -- "$W/branches" branchy 200000 4 >/dev/null 2>&1
dyn_shares "$T/i.data" >"$T/dyn.txt"
d=$(max_diff "$T/dyn.txt" "$T/exact.txt")
"$DYNPMU" report -i "$T/i.data" | grep -q "of event 'instructions'" &&
	awk -v d="${d% *}" 'BEGIN { exit !(d <= 2) }' &&
	pass "instructions_samples_match_by_symbol_within_2_points ($d)" ||
	fail "instructions_samples_match_by_symbol_within_2_points: off by $d"
"$DYNPMU" record -q --skid 20 -o "$T/k.data" -- "$W/matmul" naive >/dev/null 2>&1
perf report -i "$T/k.data" --header-only 2>/dev/null | grep -q "precise_ip" &&
	fail "skid_is_not_precise: the file says precise_ip" || {
	dyn_shares "$T/k.data" >"$T/dyn.txt"
	"$DYNPMU" stat --by-symbol -x, -o "$T/s.csv" -- "$W/matmul" naive >/dev/null 2>&1
	awk -F, '$1 == "symbol" { c[$2] += $3; t += $3 } END { for (k in c) printf "%s %.4f\n", k, 100 * c[k] / t }' \
		"$T/s.csv" >"$T/exact.txt"
	d=$(max_diff "$T/dyn.txt" "$T/exact.txt")
	awk -v d="${d% *}" 'BEGIN { exit !(d <= 2) }' && pass "skid_samples_are_not_precise_but_near ($d)" ||
		fail "skid_samples_are_not_precise_but_near: off by $d"
}

# 3. exact call stacks
stacks() { "$DYNPMU" record -q -g -o "$T/k.data" -- "$G/stacks" "$1" >/dev/null 2>&1 &&
	"$DYNPMU" report -i "$T/k.data" --folded >"$T/folded.txt"; }
# the share of the events whose stack holds the string
share() { awk -v s="$1" '{ n = $NF; t += n; if (index($0, s)) h += n } END { printf "%.0f\n", t ? 100 * h / t : 0 }' "$T/folded.txt"; }
stacks recurse
d40=";main"; i=0; while [ $i -lt 41 ]; do d40="$d40;descend"; i=$((i + 1)); done
[ "$(share "$d40;leaf_recurse;spin ")" -ge 90 ] && ! grep -q "$d40;descend" "$T/folded.txt" &&
	pass "call_stack_of_recursion_has_every_frame" || fail "call_stack_of_recursion_has_every_frame"
stacks longjmp
[ "$(share ";main;jumper;after_jump;spin ")" -ge 80 ] && ! grep "after_jump" "$T/folded.txt" | grep -q "deep" &&
	pass "call_stack_after_longjmp_drops_the_frames" || fail "call_stack_after_longjmp_drops_the_frames"
stacks signal
[ "$(share ";main;after_signal;spin ")" -ge 50 ] && [ "$(share ";main;raise;handler;in_handler;spin ")" -ge 20 ] &&
	! grep "after_signal" "$T/folded.txt" | grep -q "handler" &&
	pass "call_stack_in_and_after_a_signal_handler" || fail "call_stack_in_and_after_a_signal_handler"
stacks tail
[ "$(share ";main;tail_callee;spin ")" -ge 90 ] && ! grep -q "tail_caller;" "$T/folded.txt" &&
	pass "call_stack_after_a_tail_call" || fail "call_stack_after_a_tail_call"
stacks threads
tids=$(perf report -i "$T/k.data" --stdio --no-children --sort pid,sym -g none 2>/dev/null |
	awk '$1 ~ /%$/ && $NF == "spin" { print $2 }' | sort -u | wc -l)
[ "$(share "thread_fn;thread_work;spin ")" -ge 90 ] && [ "$tids" -eq 2 ] &&
	pass "call_stacks_per_thread (2 threads)" || fail "call_stacks_per_thread: $tids threads"

# 4. the views
"$DYNPMU" report -i "$T/m.data" -g --sort sym >"$T/g.txt" &&
	grep -A3 " main$" "$T/g.txt" | grep -q "called by.*__libc_start_call_main" &&
	pass "report_g_shows_callers" || fail "report_g_shows_callers"
"$DYNPMU" report -i "$T/m.data" --annotate main >"$T/a.txt" &&
	awk '$1 ~ /^[0-9.]+$/ && $2 == ":" { s += $1 } END { exit !(s > 99.5 && s < 100.5) }' "$T/a.txt" &&
	grep -q "ldr" "$T/a.txt" && grep -q "matmul.c:" "$T/a.txt" &&
	pass "annotate_shares_add_up_with_source_lines" || fail "annotate_shares_add_up_with_source_lines"
"$DYNPMU" report -i "$T/m.data" --sort srcline | grep -q "matmul.c:" &&
	pass "sort_by_srcline" || fail "sort_by_srcline"
"$DYNPMU" report -i "$T/m.data" --flame "$T/f.svg" && xmllint --noout "$T/f.svg" &&
	grep -q "<title>main " "$T/f.svg" && pass "flame_graph_is_valid_svg" || fail "flame_graph_is_valid_svg"
browser=$(command -v chromium-headless-shell || command -v chromium || true)
if [ -n "$browser" ]; then
	"$browser" --headless --no-sandbox --disable-gpu --screenshot="$T/f.png" --window-size=1200,400 \
		"file://$T/f.svg" >/dev/null 2>&1
	[ -s "$T/f.png" ] && pass "a_browser_draws_the_flame_graph" || fail "a_browser_draws_the_flame_graph"
fi

# 5. bad input
bad() { # NAME WANT_RC TEXT CMD...
	name=$1 want=$2 text=$3; shift 3
	"$@" >"$T/out" 2>"$T/err"; rc=$?
	[ $rc -eq "$want" ] && grep -qF -- "$text" "$T/err" && pass "$name" ||
		fail "$name: exit $rc, stderr: $(cat "$T/err")"
}
bad refuses_a_cluster_event 2 "cannot be sampled" "$DYNPMU" record -q -e L3D_CACHE -o "$T/x.data" -- "$W/matmul" naive
bad refuses_an_amu_event 2 "cannot be sampled" "$DYNPMU" record -q -e amu/CPU_CYCLES/ -o "$T/x.data" -- "$W/matmul" naive
bad refuses_an_unknown_event 2 "unknown event" "$DYNPMU" record -q -e cycels -o "$T/x.data" -- "$W/matmul" naive
bad refuses_period_and_freq 2 "not both" "$DYNPMU" record -c 100 -F 1000 -- "$W/matmul" naive
bad refuses_a_zero_period 2 "-c '0'" "$DYNPMU" record -c 0 -- "$W/matmul" naive
head -c 300 "$T/m.data" >"$T/cut.data"
bad report_names_a_truncated_file 2 "$T/cut.data: offset" "$DYNPMU" report -i "$T/cut.data"
bad report_names_a_foreign_file 2 "not a perf.data file" "$DYNPMU" report -i "$SRC/README.md"
# a record whose size runs past the data: the first record's size field
cp "$T/m.data" "$T/bad.data"
off=$(od -An -t u8 -j 40 -N 8 "$T/bad.data" | tr -d ' ')
printf '\377\177' | dd of="$T/bad.data" bs=1 seek=$((off + 6)) conv=notrunc 2>/dev/null
bad report_names_a_corrupt_record 2 "offset $off:" "$DYNPMU" report -i "$T/bad.data"
bad report_names_a_missing_file 2 "$T/none.data" "$DYNPMU" report -i "$T/none.data"
bad report_refuses_a_bad_sort_key 2 "unknown key 'symbol'" "$DYNPMU" report -i "$T/m.data" --sort symbol
bad annotate_names_an_unknown_function 2 "no sample in a function 'nosuch'" "$DYNPMU" report -i "$T/m.data" --annotate nosuch

[ $fails -eq 0 ] && echo PASS
exit $fails
