#!/bin/sh
# dynpmu stat -- PROGRAM end to end (docs/frontend.md): exact INST_RETIRED
# against an independent count, determinism, a dynamic program with its
# sysroot, each bad input's message, a crashing guest, stdin/stdout/exit
# status pass-through, --by-symbol, regions, a multi-threaded guest, a
# thread blocked in a futex wait, exact INST_RETIRED with threads.
# Run by tests/integration/CMakeLists.txt with DYNPMU and DPMU_SOURCE_DIR set;
# the plugin sits next to dynpmu; guests come from the build
# (tests/integration/qemu_guests) or are cross-compiled here.
set -u
: "${DYNPMU:?DYNPMU: the dynpmu binary}"
SRC=${DPMU_SOURCE_DIR:-$(dirname "$0")/../..}
PLUGIN=${DPMU_PLUGIN:-$(dirname "$DYNPMU")/libdpmu_qemu.so}
G=$(dirname "$DYNPMU")/tests/integration/qemu_guests
SYSROOT=/usr/aarch64-linux-gnu
export DPMU_PLUGIN="$PLUGIN"
T=$(mktemp -d)
spin1= spin2=
# two spinning loops keep the host busy, as a loaded CI machine is; the
# exit takes them down whatever stops the script
load_host() {
	sh -c 'while :; do :; done' & spin1=$!
	sh -c 'while :; do :; done' & spin2=$!
}
unload_host() {
	[ -n "$spin1" ] && kill $spin1 $spin2 2>/dev/null && wait $spin1 $spin2 2>/dev/null
	spin1= spin2=
}
trap 'unload_host; rm -rf "$T"' EXIT
if ! command -v qemu-aarch64 >/dev/null || ! command -v aarch64-linux-gnu-gcc >/dev/null; then
	echo "skipped: needs qemu-user and gcc-aarch64-linux-gnu (scripts/deps.sh test)"
	exit 0
fi
if [ ! -x "$G/guest" ]; then
	G=$T
	Q=$SRC/tests/integration/qemu_guests
	aarch64-linux-gnu-gcc -O1 -static -pthread -I"$SRC/include" "$Q/guest.c" -o "$G/guest" &&
	aarch64-linux-gnu-gcc -O1 -pthread -I"$SRC/include" "$Q/guest.c" -o "$G/guest-dyn" &&
	aarch64-linux-gnu-gcc -nostdlib -static "$Q/count.S" -o "$G/count" || exit 1
fi
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }
# the value of one event from a -x, report
csv() { awk -F, -v e="$2" '$3 == e { print $1; exit }' "$1"; }
# The independent count: the plugin's count mode, a call per executed
# instruction adding to its thread's count (another mechanism than the block
# stream dynpmu decodes), in the same run, because a libc program's count depends on its
# initial stack (argv, environment, auxv alignment) and so on how it is launched.
indep() { cat "$T/indep"; }

# 1. INST_RETIRED of a program whose count is known by construction
"$DYNPMU" stat -x, -e INST_RETIRED,BR_RETIRED,EXC_TAKEN -o "$T/c.csv" -- "$G/count"
n=$(csv "$T/c.csv" INST_RETIRED); b=$(csv "$T/c.csv" BR_RETIRED); x=$(csv "$T/c.csv" EXC_TAKEN)
[ "$n" = 2004 ] && [ "$b" = 1000 ] && [ "$x" = 1 ] && pass "INST_RETIRED_equals_instructions_by_construction (2004, 1000 branches, 1 SVC)" ||
	fail "INST_RETIRED_equals_instructions_by_construction: got $n insns, $b branches, $x exceptions"

# 2. ... and of a libc program, against the independent count
DPMU_PLUGIN_ARGS=count=$T/indep "$DYNPMU" stat -x, -e INST_RETIRED -o "$T/w.csv" -- "$G/guest" work 20000 >/dev/null
n=$(csv "$T/w.csv" INST_RETIRED); ind=$(indep)
[ -n "$n" ] && [ "$n" = "$ind" ] && pass "INST_RETIRED_equals_independent_count ($n)" ||
	fail "INST_RETIRED_equals_independent_count: dynpmu $n, count mode $ind"

# 3. determinism: the same program and input, identical counts
"$DYNPMU" stat -x, -o "$T/d1.csv" -- "$G/guest" work 20000 >/dev/null
"$DYNPMU" stat -x, -o "$T/d2.csv" -- "$G/guest" work 20000 >/dev/null
cmp -s "$T/d1.csv" "$T/d2.csv" && [ -s "$T/d1.csv" ] && pass "single_thread_counts_are_deterministic" ||
	fail "single_thread_counts_are_deterministic: $(diff "$T/d1.csv" "$T/d2.csv" | head -3)"
# ... also with turns longer than a block and intervals: where a turn ends
# (and the monitor's checks between turns) does not depend on how the
# plugin's words arrived (a compressor long enough for the queue to run dry)
aarch64-linux-gnu-gcc -O2 -static "$SRC/bench/frontend_compress.c" -o "$T/lz" || exit 1
awk 'BEGIN { for (i = 0; i < 12000; i++) printf "line %d: %d %x\n", i, (i * 2654435761) % 1000003, i * i }' |
	head -c 200000 >"$T/lz.in"
for r in 1 2 3; do
	DPMU_QEMU_QUANTUM=16 "$DYNPMU" stat -x, -I 0.05 -e INST_RETIRED,L1D_CACHE_REFILL \
		-o "$T/lz$r.csv" -- "$T/lz" <"$T/lz.in" >/dev/null
done
cmp -s "$T/lz1.csv" "$T/lz2.csv" && cmp -s "$T/lz1.csv" "$T/lz3.csv" && [ -s "$T/lz1.csv" ] &&
	pass "single_thread_intervals_are_deterministic_with_a_quantum ($(wc -l <"$T/lz1.csv") rows)" ||
	fail "single_thread_intervals_are_deterministic_with_a_quantum: $(diff "$T/lz1.csv" "$T/lz2.csv" | head -3)"

# 4. a dynamic program with its sysroot
if [ -d "$SYSROOT" ]; then
	out=$(DPMU_PLUGIN_ARGS=count=$T/indep "$DYNPMU" stat -x, -e INST_RETIRED -o "$T/dyn.csv" --sysroot "$SYSROOT" -- "$G/guest-dyn" work 1000)
	n=$(csv "$T/dyn.csv" INST_RETIRED); ind=$(indep)
	[ -n "$out" ] && [ "$n" = "$ind" ] && pass "dynamic_program_runs_with_sysroot ($n)" ||
		fail "dynamic_program_runs_with_sysroot: out '$out', $n vs $ind"
fi

# 5. bad inputs: each with its message, none a crash or a hang
expect_err() { # name, grep pattern, command...
	name=$1; pat=$2; shift 2
	"$@" >"$T/o" 2>"$T/e"; rc=$?
	if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -q -- "$pat" "$T/e"; then pass "$name"
	else fail "$name: rc $rc, stderr: $(cat "$T/e")"; fi
}
printf 'hello\n' >"$T/text"
expect_err "not_an_ELF_file_is_refused" "is not an ELF file" "$DYNPMU" stat -- "$T/text"
expect_err "x86_64_program_is_refused_naming_the_cross_compiler" \
	"x86-64 program; the simulated cluster runs aarch64 programs: build it with aarch64-linux-gnu-gcc" \
	"$DYNPMU" stat -- /bin/true
expect_err "dynamic_program_without_sysroot_names_loader_and_library" "libc.so.6" \
	"$DYNPMU" stat -- "$G/guest-dyn"
mkdir -p "$T/emptyroot"
expect_err "dynamic_program_with_wrong_sysroot_names_the_loader" "ld-linux-aarch64.so.1" \
	"$DYNPMU" stat --sysroot "$T/emptyroot" -- "$G/guest-dyn"
# a truncated program is named as damaged, not run into a crash of qemu's
# loader that would read as the program's own signal
head -c 100 "$G/count" >"$T/trunc-headers"
head -c 3000 "$G/guest" >"$T/trunc-segment"
expect_err "program_truncated_in_its_headers_is_named_damaged" \
	"trunc-headers: a damaged ELF file: its program headers end at byte" \
	"$DYNPMU" stat -- "$T/trunc-headers"
expect_err "program_truncated_in_a_segment_is_named_damaged" \
	"past the end of its 3000 bytes (truncated?)" "$DYNPMU" stat -- "$T/trunc-segment"
expect_err "missing_qemu_names_the_package" "qemu-user" env PATH=/nonexistent "$DYNPMU" stat -- "$G/count"
expect_err "missing_program_is_named" "no-such-program" "$DYNPMU" stat -- "$T/no-such-program"
# a program named without a slash is found in PATH as execvp finds it: the
# first executable of that name (a non-executable one earlier is passed over)
mkdir -p "$T/p1" "$T/p2"
cp "$G/count" "$T/p2/count-prog"
printf 'not a program\n' >"$T/p1/count-prog"
PATH="$T/p1:$T/p2:$PATH" "$DYNPMU" stat -x, -e INST_RETIRED -o "$T/path.csv" -- count-prog; rc=$?
n=$(csv "$T/path.csv" INST_RETIRED)
[ $rc -eq 0 ] && [ "$n" = 2004 ] && pass "program_found_in_PATH_as_execvp_finds_it (2004)" ||
	fail "program_found_in_PATH_as_execvp_finds_it: rc $rc, $n"
expect_err "program_not_in_PATH_is_named" "count-prog: no such executable in PATH" \
	env PATH="$T/p1:$PATH" "$DYNPMU" stat -- count-prog
# a bad DPMU_QEMU_QUANTUM is refused with its value, not run as the default
for qv in abc 16x 0 -5 " 7" 65537 99999999999999999999999; do
	expect_err "bad_DPMU_QEMU_QUANTUM_'$qv'_is_refused_naming_it" "DPMU_QEMU_QUANTUM='$qv'" \
		env DPMU_QEMU_QUANTUM="$qv" "$DYNPMU" stat -e INST_RETIRED -- "$G/count"
done
DPMU_QEMU_QUANTUM=16 "$DYNPMU" stat -x, -e INST_RETIRED -o "$T/q.csv" -- "$G/count"; rc=$?
n=$(csv "$T/q.csv" INST_RETIRED)
[ $rc -eq 0 ] && [ "$n" = 2004 ] && pass "valid_DPMU_QEMU_QUANTUM_runs (2004)" ||
	fail "valid_DPMU_QEMU_QUANTUM_runs: rc $rc, $n"
# DPMU_QEMU_DRAIN measures the front end without the model: a bad value is
# refused naming it; read and discard run the program (its output, its exit
# status, a threaded one to its end), say the counts are not the program's,
# and count nothing
for dv in modelled READ " read" discardx; do
	expect_err "bad_DPMU_QEMU_DRAIN_'$dv'_is_refused_naming_it" "DPMU_QEMU_DRAIN='$dv'" \
		env DPMU_QEMU_DRAIN="$dv" "$DYNPMU" stat -e INST_RETIRED -- "$G/count"
done
for dv in read discard; do
	out=$(printf 'abc xyz\n' | DPMU_QEMU_DRAIN=$dv "$DYNPMU" stat -x, -e INST_RETIRED \
		-o "$T/d.csv" -- "$G/guest" upper 2>"$T/e"); rc=$?
	n=$(csv "$T/d.csv" INST_RETIRED)
	DPMU_QEMU_DRAIN=$dv "$DYNPMU" stat -x, -e INST_RETIRED -o /dev/null -- "$G/guest" threads \
		>/dev/null 2>/dev/null; rct=$?
	[ "$out" = "ABC XYZ" ] && [ $rc -eq 3 ] && [ $rct -eq 0 ] && [ "$n" = 0 ] &&
		grep -q "DPMU_QEMU_DRAIN=$dv: .*not the program's" "$T/e" &&
		pass "DPMU_QEMU_DRAIN=${dv}_runs_the_program_and_models_nothing" ||
		fail "DPMU_QEMU_DRAIN=${dv}_runs_the_program_and_models_nothing: out '$out' rc $rc/$rct n $n $(cat "$T/e")"
done

# 6. a crashing guest: its signal, and the counts up to that point
"$DYNPMU" stat -x, -e INST_RETIRED -o "$T/crash.csv" -- "$G/guest" crash 2>"$T/e" >/dev/null; rc=$?
n=$(csv "$T/crash.csv" INST_RETIRED)
[ $rc -eq 139 ] && grep -q "signal 11 (SIGSEGV" "$T/crash.csv" && [ "${n:-0}" -gt 3000 ] &&
	pass "crashing_guest_reports_its_signal_and_counts ($n, exit $rc)" ||
	fail "crashing_guest_reports_its_signal_and_counts: rc $rc, $n, $(cat "$T/crash.csv" "$T/e")"

# 6b. SIGINT or SIGTERM sent to dynpmu while the program runs ends the
# program, not dynpmu: its counts up to then and the signal are reported,
# and the exit status is the program's (128 + N), as perf stat does
for sn in INT:2 TERM:15; do
	sig=${sn%:*} num=${sn#*:}
	"$DYNPMU" stat -x, -e INST_RETIRED -o "$T/sig.csv" -- "$G/guest" sleeps 5000 2000 \
		>/dev/null 2>"$T/e" &
	dp=$!
	# the signal once qemu-aarch64 (dynpmu's child) runs the program
	k=0
	while [ $k -lt 200 ] && ! pgrep -P $dp >/dev/null; do
		sleep 0.05
		k=$((k + 1))
	done
	sleep 0.3
	kill -$sig $dp
	wait $dp; rc=$?
	n=$(csv "$T/sig.csv" INST_RETIRED)
	[ $rc -eq $((128 + num)) ] && grep -q "killed by signal $num (SIG$sig" "$T/sig.csv" &&
		[ "${n:-0}" -gt 0 ] && ! pgrep -P $dp >/dev/null &&
		pass "SIG${sig}_ends_the_program_and_reports_its_counts ($n, exit $rc)" ||
		fail "SIG${sig}_ends_the_program_and_reports_its_counts: rc $rc, $n, $(cat "$T/sig.csv" "$T/e")"
done

# 7. stdin, stdout and exit status pass through; the report is on stderr
out=$(printf 'abc xyz\n' | "$DYNPMU" stat -e INST_RETIRED -- "$G/guest" upper 2>"$T/e"); rc=$?
[ "$out" = "ABC XYZ" ] && [ $rc -eq 3 ] && grep -q INST_RETIRED "$T/e" &&
	pass "stdin_stdout_exit_status_pass_through" ||
	fail "stdin_stdout_exit_status_pass_through: out '$out' rc $rc"

# a run with no timer delivers every 4096 instructions, one with a timer
# (-I) every 256: the counts must not depend on it (docs/events.md, "Delivery
# and skid"); -I 10 outlasts the run, so its one interval is the whole run
EV6=INST_RETIRED,CPU_CYCLES,L1D_CACHE_REFILL,BR_MIS_PRED,L2D_CACHE,STALL_BACKEND
"$DYNPMU" stat -x, -e $EV6 -o "$T/untimed.csv" -- "$G/guest" work 300000 >/dev/null; rc1=$?
"$DYNPMU" stat -x, -I 10 -e $EV6 -o "$T/timed.csv" -- "$G/guest" work 300000 >/dev/null; rc2=$?
cut -d, -f1,3 "$T/untimed.csv" >"$T/u.cut"
cut -d, -f2,4 "$T/timed.csv" >"$T/t.cut"
[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ "$(wc -l <"$T/u.cut")" -eq 6 ] && cmp -s "$T/u.cut" "$T/t.cut" &&
	pass "counts_do_not_depend_on_the_delivery_batch ($(head -1 "$T/u.cut"))" ||
	fail "counts_do_not_depend_on_the_delivery_batch: rc $rc1/$rc2, $(cat "$T/u.cut" "$T/t.cut")"

# 8. --by-symbol: work() has most of the instructions
"$DYNPMU" stat --by-symbol -- "$G/guest" work 50000 2>"$T/e" >/dev/null
top=$(awk '/Per function/ { f = 1; getline; getline; next } f && NF >= 7 { print $7; exit }' "$T/e")
[ "$top" = work ] && pass "by_symbol_puts_the_hot_function_first" ||
	fail "by_symbol_puts_the_hot_function_first: first is '$top'"

# 9. regions: two entries each, inner nested in outer
"$DYNPMU" stat -e INST_RETIRED -- "$G/guest" regions 2>"$T/e" >/dev/null
oe=$(awk '$1 == "outer" { print $2 }' "$T/e"); oi=$(awk '$1 == "outer" { print $3 }' "$T/e")
ie=$(awk '$1 == "inner" { print $2 }' "$T/e"); ii=$(awk '$1 == "inner" { print $3 }' "$T/e")
ic=$(awk '$1 == "inner" { print $4 }' "$T/e")
[ "$oe" = 2 ] && [ "$ie" = 2 ] && [ "${ii:-0}" -gt 2000 ] && [ "$oi" -gt "$ii" ] && [ "$ii" = "$ic" ] &&
	pass "regions_count_entries_and_nest (outer $oi, inner $ii)" ||
	fail "regions_count_entries_and_nest: $(cat "$T/e")"

# 9b. a region counts its own thread's events when threads share a core:
# the other thread's run there (in no region) stays out of its columns
for cpus in 0 0,1; do
	"$DYNPMU" stat --cpus $cpus -e INST_RETIRED -- "$G/guest" regthreads 2>"$T/e" >/dev/null
	mi=$(awk '$1 == "mine" { print $3 }' "$T/e"); mc=$(awk '$1 == "mine" { print $4 }' "$T/e")
	[ -n "$mi" ] && [ "$mi" = "$mc" ] && pass "region_counts_its_own_thread (--cpus $cpus: $mi)" ||
		fail "region_counts_its_own_thread (--cpus $cpus): instructions $mi, INST_RETIRED $mc"
done

# 9c. threads that share a core take turns on it in simulated time: with
# three workers on two cores (--cpus 0,1 spreads main, w1, w2, w3 over
# cpu0, cpu1, cpu0, cpu1; main only waits), cpu0's lone worker keeps its
# core busy in every interval while cpu1's pair shares theirs, so both
# cores count about the same cycles per interval (before, each thread of
# the pair ran as if alone, and cpu0 counted half)
"$DYNPMU" stat --cpus 0,1 -A -I 0.05 -x, -e CPU_CYCLES -o "$T/ts.csv" -- "$G/guest" workers 3 400000 >/dev/null
# (the workers start together at a barrier; the lone one ends first, so
# the last intervals are cpu1's alone: at least two intervals with both
# cores equally busy, where before none came near)
ratios=$(awk -F, '$5 == "CPU_CYCLES" && $2 == "cpu0" { c0[$1] = $3 } $5 == "CPU_CYCLES" && $2 == "cpu1" { c1[$1] = $3; t[n++] = $1 }
	END { for (i = 0; i < n; i++) printf "%.2f ", c1[t[i]] ? c0[t[i]] / c1[t[i]] : 0 }' "$T/ts.csv")
even=$(echo "$ratios" | awk '{ for (i = 1; i <= NF; i++) if ($i >= 0.85 && $i <= 1.15) e++; print e + 0 }')
# and no core counts more cycles in an interval than the interval holds
# (cpu0 and cpu1 are Cortex-A75 at 2.8 GHz in the default profile): a core
# whose thread started late is idle until then, and the time runs on
# through it (before, the late core's clock lagged, and the interval where
# it took the lead held up to 1.7 intervals of its cycles; 10 % is left
# for an interval's edges, read between two turns)
over=$(awk -F, '$5 == "CPU_CYCLES" && ($2 == "cpu0" || $2 == "cpu1") && $3 > $6 * 2.8 * 1.1 { n++ } END { print n + 0 }' "$T/ts.csv")
[ "$even" -ge 2 ] && [ "$over" = 0 ] && pass "threads_sharing_a_core_take_turns_in_time (cpu0/cpu1 cycles: $ratios)" ||
	fail "threads_sharing_a_core_take_turns_in_time: cpu0/cpu1 cycles per interval $ratios, $over intervals over full"

# 9d. markers that do not pair up are counted as the docs say, and said:
# nested entries of one region count its events once (three entries of
# "rec" inside "once": the same instructions but the few of the markers,
# not three times as many); a region a thread leaves open closes when it
# ends, and the later thread given its index (30000 iterations of work()
# against 3000) is not in it; an end with no entry; an entry still open at
# the exit; 22 markers of 11 names beyond the 64 regions (five named ones,
# and 59 of the 70 loop names, fit)
"$DYNPMU" stat -x, -e INST_RETIRED -o "$T/up.csv" -- "$G/guest" unpaired 2>"$T/e" >/dev/null
row() { awk -F, -v k="$1" -v n="$2" -v e="$3" '$1 == k && $2 == n && $5 == e { print $4 }' "$T/up.csv"; }
once=$(row region once instructions); rec=$(row region rec instructions)
recc=$(row region rec INST_RETIRED); left=$(row region left instructions)
v1=$(row thread vcpu1 instructions)
[ -n "$rec" ] && [ "$rec" = "$recc" ] && [ "$rec" -le "$once" ] && [ $((once - rec)) -lt 50 ] &&
	[ "$(row region left left_open)" = 1 ] &&
	[ $((left * 4)) -lt "${v1:-0}" ] &&
	[ "$(row region stray stray_ends)" = 1 ] && [ "$(row region open open_at_exit)" = 1 ] &&
	[ "$(row regions "" markers_not_counted)" = 22 ] &&
	pass "unpaired_markers_are_counted_as_documented_and_said (once $once, rec $rec, left $left)" ||
	fail "unpaired_markers_are_counted_as_documented_and_said: $(grep -v name "$T/up.csv")"
# a marker whose two instructions lie on two pages (so in two of qemu's
# blocks) still counts: `pagemarker` enters "split" with one such marker
# around 1000 iterations of work() (about 5000 instructions), and leaves
# it. Before, the entry was not seen and the end was a stray.
"$DYNPMU" stat -x, -e INST_RETIRED -o "$T/pm.csv" -- "$G/guest" pagemarker
sp=$(awk -F, '$1 == "region" && $2 == "split" && $5 == "instructions" { print $4 }' "$T/pm.csv")
[ -n "$sp" ] && [ "$sp" -ge 5000 ] && [ "$sp" -lt 5100 ] && ! grep -Eq 'split,,[0-9]+,(stray_ends|open_at_exit|left_open)$' "$T/pm.csv" &&
	pass "marker_split_across_pages_counts ($sp)" ||
	fail "marker_split_across_pages_counts: $(tr '\n' ' ' <"$T/pm.csv")"
"$DYNPMU" stat -e INST_RETIRED -- "$G/guest" unpaired 2>"$T/e" >/dev/null
grep -q "region left: 1 entry left open by a thread that ended" "$T/e" &&
	grep -q "region stray: 1 end with no entry open" "$T/e" &&
	grep -q "region open: 1 entry still open at the program's exit" "$T/e" &&
	grep -q "22 region markers of names beyond the first 64 not counted" "$T/e" &&
	pass "unpaired_markers_are_said_in_the_text_report" ||
	fail "unpaired_markers_are_said_in_the_text_report: $(grep -v name "$T/e")"

# 10. threads on separate cores, coherence between them
"$DYNPMU" stat -A -x, -e INST_RETIRED -o "$T/t.csv" -- "$G/guest" threads >"$T/o"; rc=$?
busy=$(awk -F, '$4 == "INST_RETIRED" && $2 > 0' "$T/t.csv" | wc -l)
[ $rc -eq 0 ] && [ "$(cat "$T/o")" = 40000 ] && [ "$busy" -ge 2 ] &&
	pass "threads_run_on_their_own_cores ($busy cores busy)" ||
	fail "threads_run_on_their_own_cores: rc $rc, $(cat "$T/t.csv")"
# the threads table: one row per vCPU that ran, each on its own core,
# adding up to INST_RETIRED (2 or 3 rows: on a loaded host the first worker
# may end before the second starts, which then takes its vCPU index)
"$DYNPMU" stat -x, -e INST_RETIRED -o "$T/th.csv" -- "$G/guest" threads >/dev/null
rows=$(awk -F, '$1 == "thread"' "$T/th.csv" | wc -l)
cores=$(awk -F, '$1 == "thread" { print $3 }' "$T/th.csv" | sort -u | wc -l)
sum=$(awk -F, '$1 == "thread" { s += $4 } END { print s + 0 }' "$T/th.csv")
total=$(csv "$T/th.csv" INST_RETIRED)
[ "$rows" -ge 2 ] && [ "$cores" = "$rows" ] && [ "$sum" = "$total" ] &&
	pass "threads_table_gives_each_vcpu_its_core_and_instructions ($rows rows, $sum)" ||
	fail "threads_table_gives_each_vcpu_its_core_and_instructions: $(cat "$T/th.csv")"
"$DYNPMU" stat -x, -e INST_RETIRED -o "$T/th1.csv" -- "$G/guest" work 100 >/dev/null
! grep -q '^thread,' "$T/th1.csv" && pass "threads_table_absent_for_one_thread" ||
	fail "threads_table_absent_for_one_thread: $(cat "$T/th1.csv")"

# 10b. --per-thread: each thread's events, its own even on a core threads
# share (the core delivers at each hand-over): each vCPU's INST_RETIRED is
# its instructions, and each event's rows add up to the total
for cpus in 0 0-7; do
	"$DYNPMU" stat --per-thread --cpus $cpus -x, -e INST_RETIRED,L1D_CACHE -o "$T/pt.csv" -- "$G/guest" threads >/dev/null
	own=$(awk -F, '$1 == "thread" && $5 == "instructions" { i[$2] = $4 } $1 == "thread" && $5 == "INST_RETIRED" { r[$2] = $4 }
		END { for (v in i) { n++; if (i[v] == r[v]) ok++ } print (n >= 2 && ok == n) ? "yes" : "no" }' "$T/pt.csv")
	l1=$(awk -F, '$1 == "thread" && $5 == "L1D_CACHE" { s += $4 } END { print s + 0 }' "$T/pt.csv")
	[ "$own" = yes ] && [ "$l1" = "$(csv "$T/pt.csv" L1D_CACHE)" ] &&
		pass "per_thread_events_are_each_threads_own (--cpus $cpus)" ||
		fail "per_thread_events_are_each_threads_own (--cpus $cpus): $(grep '^thread' "$T/pt.csv" | tr '\n' ' ')"
done

# 11. a thread blocked in a futex wait is set aside at once: the plugin
# publishes its words and marks the wait at the system call, so the
# scheduler never takes it for a preempted thread (the 50 ms wait). Each of
# pingpong's 12 hand-offs leaves one thread in pthread_cond_wait while the
# other runs long enough for its ring to fill.
"$DYNPMU" stat -v -x, -e INST_RETIRED -o "$T/pp.csv" -- "$G/guest" pingpong 6 >"$T/o" 2>"$T/pp.err"; rc=$?
sched=$(grep '^dynpmu stat: scheduler:' "$T/pp.err")
waiting=$(echo "$sched" | sed -n 's/.*words: \([0-9]*\) waiting.*/\1/p')
outside=$(echo "$sched" | sed -n 's/.*asleep), \([0-9]*\) outside one.*/\1/p')
# a preempted host thread on a loaded machine may still show as "outside"
[ $rc -eq 0 ] && [ "$(cat "$T/o")" = 6 ] && [ "${waiting:-0}" -ge 6 ] && [ "${outside:-99}" -le 2 ] &&
	pass "blocked_thread_is_set_aside_at_once ($sched)" ||
	fail "blocked_thread_is_set_aside_at_once: rc $rc, out $(cat "$T/o"), $(cat "$T/pp.err")"
# -v adds its line on stderr and leaves the report as it was
"$DYNPMU" stat -v -x, -e INST_RETIRED -o "$T/pv.csv" -- "$G/guest" work 1000 >/dev/null 2>"$T/pv.err"
"$DYNPMU" stat -x, -e INST_RETIRED -o "$T/pn.csv" -- "$G/guest" work 1000 >/dev/null 2>/dev/null
[ "$(grep -c scheduler: "$T/pv.err")" = 1 ] && cmp -s "$T/pv.csv" "$T/pn.csv" &&
	pass "verbose_adds_one_line_on_stderr" ||
	fail "verbose_adds_one_line_on_stderr: $(cat "$T/pv.err")"

# 11b. a thread blocked in a read of an empty pipe (a call the plugin's
# table does not know) is found asleep in the host and set aside then,
# not after 50 ms. The writer sleeps 1 ms before each write, so the reader
# blocks in the host while dynpmu has caught up with it (without the
# sleeps qemu runs so far ahead that the read has returned by then).
"$DYNPMU" stat -v -x, -e INST_RETIRED -o "$T/pipe.csv" -- "$G/guest" pipe 20 1000 >"$T/o" 2>"$T/pipe.err"; rc=$?
sched=$(grep '^dynpmu stat: scheduler:' "$T/pipe.err")
asleep=$(echo "$sched" | sed -n 's/.*(\([0-9]*\) found asleep).*/\1/p')
[ $rc -eq 0 ] && [ "$(cat "$T/o")" = 20 ] && [ "${asleep:-0}" -ge 1 ] &&
	pass "thread_asleep_in_a_read_is_set_aside ($sched)" ||
	fail "thread_asleep_in_a_read_is_set_aside: rc $rc, out $(cat "$T/o"), $(cat "$T/pipe.err")"

# 11c. a forked child process stays out of the counts (its words would
# share the parent's rings), and the report says so: the count is the
# parent's, whatever the child runs, and equals the independent count
forkn() {
	DPMU_PLUGIN_ARGS=count=$T/indep "$DYNPMU" stat -x, -e INST_RETIRED -o "$T/fk$1.csv" -- "$G/guest" fork "$1" >"$T/fo$1"
}
forkn 1000; forkn 9000
a=$(csv "$T/fk1000.csv" INST_RETIRED); b=$(csv "$T/fk9000.csv" INST_RETIRED); ind=$(indep)
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$b" = "$ind" ] && [ "$(cat "$T/fo9000")" = 3 ] &&
	grep -q 'the program forked 1 process' "$T/fk9000.csv" &&
	pass "forked_child_is_left_out_and_said ($a)" ||
	fail "forked_child_is_left_out_and_said: $a, $b, count mode $ind, child $(cat "$T/fo9000"); $(cat "$T/fk9000.csv")"

# 11d. a thread a futex wake brings back goes on no earlier in simulated
# time than its waker's wake, however the host runs the two: in `handoff`,
# a thread (cpu4, a Cortex-A55 at 1.8 GHz) waits at a barrier until main
# (cpu0, a Cortex-A75 at 2.8 GHz) has run 2,000,000 iterations, then runs
# 200,000, so the run's simulated time holds both cores' cycles one after
# the other (1 % left for the thread's start before its wait). Run three
# times on a host kept busy by two spinning loops: before, the woken
# thread resumed where the engine had got to when qemu ran it, up to 23 %
# of the run too early. Each core's instructions and cycles, and the
# run's simulated time, are the same in every run: the thread starts at
# main's clone, each wait's system-call block retires before the wait,
# and a thread only waited for (not set aside) keeps its own time. Before
# (docs/frontend.md "Determinism"), the woken thread's cycles moved
# (806,998 against 807,005) and the time by up to 250 ns.
load_host
bad=""
for k in 1 2 3; do
	# main's join waits for the thread (two woken waits with the
	# barrier's) unless a loaded host held main back until the thread had
	# ended: the guest's own path, with fewer instructions; run again
	for try in 1 2 3; do
		"$DYNPMU" stat -v -A -x, -e CPU_CYCLES,INST_RETIRED -o "$T/ho$k.csv" -- "$G/guest" \
			handoff 2000000 200000 >/dev/null 2>"$T/hov"
		w=$(sed -n "s/.*woken: \([0-9]*\) after their waker's wake, \([0-9]*\) waited.*/\1 \2/p" "$T/hov")
		w=${w:-0 0}
		[ "$(( ${w% *} + ${w#* } ))" = 2 ] && break
	done
	r=$(awk -F, '$4 == "CPU_CYCLES" && $1 == "cpu0" { c0 = $2; t = $5 } $4 == "CPU_CYCLES" && $1 == "cpu4" { c4 = $2 }
		END { need = c0 / 2.8 + c4 / 1.8; printf "%s %d %d", (c4 > 0 && t >= 0.99 * need) ? "ok" : "early", t, need }' "$T/ho$k.csv")
	case $r in ok*) ;; *) bad="$bad run $k: $r (ns elapsed, ns needed);" ;; esac
	awk -F, '$4 == "INST_RETIRED" || $4 == "CPU_CYCLES" { print $1, $2, $4, $5 }' "$T/ho$k.csv" >"$T/hoc$k"
done
unload_host
[ -z "$bad" ] && cmp -s "$T/hoc1" "$T/hoc2" && cmp -s "$T/hoc1" "$T/hoc3" &&
	pass "woken_thread_goes_on_after_its_wakers_wake ($r)" ||
	fail "woken_thread_goes_on_after_its_wakers_wake:$bad $(diff "$T/hoc1" "$T/hoc2"; diff "$T/hoc1" "$T/hoc3")"

# 11e. a new thread starts where its parent's clone returned in simulated
# time, and the others wait for its first words as for any laggard's: in
# `startrace` the thread and main store into one line from the thread's
# start on, so the line's ping-pong (each core's refills) follows from
# where the start falls. Three runs on a host kept busy by two spinning
# loops give main the same counts and the run the same time (the thread's
# own count ends with a race the guest has: how far it gets after its
# wake before main's exit stops it). Before, the
# thread started where the others had got when its first words arrived:
# cpu0's refills ran from 302 to 6,342 over five quiet runs. A run in
# which a thread's host thread went unscheduled past the 50 ms wait (stat
# -v: set aside "outside" a system call) is outside that rule
# (docs/frontend.md "Determinism") and is run again, up to three times.
load_host
for k in 1 2 3; do
	for try in 1 2 3; do
		"$DYNPMU" stat -v -A -x, -e CPU_CYCLES,INST_RETIRED,L1D_CACHE_REFILL -o "$T/sr$k.csv" -- \
			"$G/guest" startrace 20000 >/dev/null 2>"$T/srv"
		grep -q ' 0 outside one' "$T/srv" && break
	done
	awk -F, '$1 == "cpu0" && $3 == "" { print $1, $2, $4, $5 }' "$T/sr$k.csv" >"$T/src$k"
done
unload_host
r=$(awk '$1 == "cpu0" && $3 == "L1D_CACHE_REFILL" { print $2 }' "$T/src1")
[ -n "$r" ] && [ "$r" -gt 0 ] && cmp -s "$T/src1" "$T/src2" && cmp -s "$T/src1" "$T/src3" &&
	pass "new_thread_starts_at_its_parents_clone (cpu0 refills $r)" ||
	fail "new_thread_starts_at_its_parents_clone: $(diff "$T/src1" "$T/src2"; diff "$T/src1" "$T/src3")"

# 11f. a futex wait whose wake came first in simulated time is not set
# aside while its woken return is on the way: in `false_sharing shared 2
# 20000` (two workers released by a barrier, profile a75x4-a55x4-dsu120)
# the A75 worker often reaches the barrier first in simulated time and
# last in the host. Before, when the A55 worker was set aside in its wait,
# the other ran on alone until its words came: the coherency ratio was 84 %
# in most loaded runs, 68 to 81 % in about one in five, and in one of 28
# runs 4 % (no overlap at all); such a build fails this test about two
# times in three. Eight loaded runs must agree within 2 points.
load_host
: >"$T/cr"
for k in 1 2 3 4 5 6 7 8; do
	"$DYNPMU" stat --profile a75x4-a55x4-dsu120 -M coherency_ratio -x, -o "$T/cr$k.csv" -- \
		"$(dirname "$DYNPMU")/workloads/false_sharing" shared 2 20000 >/dev/null
	csv "$T/cr$k.csv" coherency_ratio >>"$T/cr"
done
unload_host
r=$(sort -n "$T/cr" | awk 'NR == 1 { lo = $1 } { hi = $1; n++ } END { printf "%s %.2f-%.2f", (n == 8 && lo > 50 && hi - lo < 2) ? "ok" : "spread", lo, hi }')
case $r in ok*) pass "wake_before_wait_keeps_the_threads_together ($r %)" ;;
	*) fail "wake_before_wait_keeps_the_threads_together: coherency ratios $(tr '\n' ' ' <"$T/cr")" ;; esac

# 11g. a sleep of a length the call gives (usleep: clock_nanosleep) takes
# that long in simulated time, its core idle meanwhile: `sleeps 20 200`
# (a thread's 20 rounds of work and a 200 us sleep) runs 4 ms of sleep
# and about 0.13 ms of work, the same on every run. Before, a sleep took
# no simulated time at all (0.10 to 0.13 ms in all). With -I, an interval row
# falls every period through a sleep, as perf's do (zero counts).
for k in 1 2; do
	"$DYNPMU" stat -A -x, -e CPU_CYCLES,INST_RETIRED -o "$T/sl$k.csv" -- "$G/guest" sleeps 20 200 >/dev/null
	awk -F, '$2 != "" && $3 == "" { print $1, $2, $4, $5 }' "$T/sl$k.csv" >"$T/slc$k"
done
t=$(awk 'NR == 1 { print $4 }' "$T/slc1")
"$DYNPMU" stat -I 1 -x, -e INST_RETIRED -o "$T/si.csv" -- "$G/guest" sleeps 3 2000 >/dev/null
rows=$(awk -F, '$4 == "INST_RETIRED" { n++; if ($2 == 0) z++ } END { printf "%d %d", n, z }' "$T/si.csv")
[ -n "$t" ] && [ "$t" -ge 4000000 ] && [ "$t" -lt 5000000 ] && cmp -s "$T/slc1" "$T/slc2" &&
	[ "${rows%% *}" -ge 7 ] && [ "${rows##* }" -ge 2 ] &&
	pass "sleep_takes_its_length_in_simulated_time ($t ns; -I 1: rows, zero rows $rows)" ||
	fail "sleep_takes_its_length_in_simulated_time: $t ns (4-5 ms expected), -I rows/zero rows $rows; $(diff "$T/slc1" "$T/slc2")"

# 11g'. an absolute sleep (clock_nanosleep with TIMER_ABSTIME) takes what
# is left of it on the host clock, the clock the guest read its time from:
# `abssleeps 3 20000` (rounds of work, each ending 20 ms after the last on
# CLOCK_MONOTONIC) runs 60 ms less the host's time for the work, which a
# loaded host stretches (8.3 to 9.3 ms of 10 for `abssleeps 5 2000` quiet,
# 3.9 ms under ctest -j2), so the bound is loose. Before, such a sleep took
# no simulated time (0.065 ms in all).
"$DYNPMU" stat -A -x, -e CPU_CYCLES -o "$T/as.csv" -- "$G/guest" abssleeps 3 20000 >/dev/null
t=$(awk -F, '$1 == "cpu0" && $4 == "CPU_CYCLES" { print $5 }' "$T/as.csv")
[ -n "$t" ] && [ "$t" -ge 30000000 ] && [ "$t" -le 60200000 ] &&
	pass "absolute_sleep_takes_what_is_left_of_it ($t ns)" ||
	fail "absolute_sleep_takes_what_is_left_of_it: $t ns (30-60.2 ms expected)"
# one whose time has passed (`abssleeps 5 1`: 1 us rounds, each over before
# its work is) returns at once: no sleep, and the run takes its work's time
# (0.065 ms); a length taken with the wrong sign would be hours
"$DYNPMU" stat -v -A -x, -e CPU_CYCLES -o "$T/ap.csv" -- "$G/guest" abssleeps 5 1 >/dev/null 2>"$T/ap"
t=$(awk -F, '$1 == "cpu0" && $4 == "CPU_CYCLES" { print $5 }' "$T/ap.csv")
[ -n "$t" ] && [ "$t" -lt 1000000 ] && grep -q ' 0 sleeps ' "$T/ap" &&
	pass "absolute_sleep_past_its_time_returns_at_once ($t ns)" ||
	fail "absolute_sleep_past_its_time_returns_at_once: $t ns, $(grep -o '[0-9]* sleeps[^;]*' "$T/ap")"
# a sleep on a clock the kernel does not sleep on returns at once, whatever
# its length: CLOCK_MONOTONIC_RAW (4) has no sleep (EOPNOTSUPP, 95), so
# `clocksleeps 3 20000 4` takes its work's time and no sleep. The alarm
# clock CLOCK_BOOTTIME_ALARM (9) sleeps only with an RTC and CAP_WAKE_ALARM:
# its 60 ms are counted when the guest's calls succeeded, and none when they
# failed. Before, both counted 60 ms of sleep that did not happen.
"$DYNPMU" stat -v -A -x, -e CPU_CYCLES -o "$T/cr.csv" -- "$G/guest" clocksleeps 3 20000 4 \
	>"$T/cro" 2>"$T/cr"
t=$(awk -F, '$1 == "cpu0" && $4 == "CPU_CYCLES" { print $5 }' "$T/cr.csv")
grep -qx 'clock_nanosleep: 95' "$T/cro" && [ -n "$t" ] && [ "$t" -lt 1000000 ] &&
	grep -q ' 0 sleeps ' "$T/cr" &&
	pass "sleep_on_a_clock_without_sleep_returns_at_once ($t ns)" ||
	fail "sleep_on_a_clock_without_sleep_returns_at_once: $(cat "$T/cro"), $t ns, $(grep -o '[0-9]* sleeps[^;]*' "$T/cr")"
"$DYNPMU" stat -v -A -x, -e CPU_CYCLES -o "$T/ca.csv" -- "$G/guest" clocksleeps 3 20000 9 \
	>"$T/cao" 2>"$T/ca"
t=$(awk -F, '$1 == "cpu0" && $4 == "CPU_CYCLES" { print $5 }' "$T/ca.csv")
if grep -qx 'clock_nanosleep: 0' "$T/cao"; then
	[ -n "$t" ] && [ "$t" -ge 60000000 ] && grep -q ' 3 sleeps ' "$T/ca"
else
	grep -q '^clock_nanosleep: [1-9]' "$T/cao" && [ -n "$t" ] && [ "$t" -lt 1000000 ] &&
		grep -q ' 0 sleeps ' "$T/ca"
fi &&
	pass "alarm_clock_sleep_counts_as_the_call_went ($(cat "$T/cao"), $t ns)" ||
	fail "alarm_clock_sleep_counts_as_the_call_went: $(cat "$T/cao"), $t ns, $(grep -o '[0-9]* sleeps[^;]*' "$T/ca")"

# 11h. a read of a pipe goes on no earlier than the write of the last byte
# it read, in simulated time: `pipesync 20` (main writes a byte after each
# stretch of work, a thread reads each) gives main the same counts and the
# run the same time in three runs under two spinning loops (the reader's
# count ends with startrace's race), and -v counts
# 20 reads after their write. Before, a reader woken by the write went on
# where the others had got when its words arrived.
load_host
for k in 1 2 3; do
	"$DYNPMU" stat -v -A -x, -e CPU_CYCLES,INST_RETIRED -o "$T/ps$k.csv" -- "$G/guest" pipesync 20 \
		>/dev/null 2>"$T/psv$k"
	awk -F, '$1 == "cpu0" && $3 == "" { print $1, $2, $4, $5 }' "$T/ps$k.csv" >"$T/psc$k"
done
unload_host
grep -q ' 20 pipe reads after their write' "$T/psv1" && cmp -s "$T/psc1" "$T/psc2" &&
	cmp -s "$T/psc1" "$T/psc3" &&
	pass "pipe_read_goes_on_after_its_write" ||
	fail "pipe_read_goes_on_after_its_write: $(grep -o '[0-9]* pipe reads[^;]*' "$T/psv1"); $(diff "$T/psc1" "$T/psc2"; diff "$T/psc1" "$T/psc3")"
# the same through readv and writev: writev's bytes are its vector's lengths
"$DYNPMU" stat -v -x, -e INST_RETIRED -o /dev/null -- "$G/guest" pipesync 20 v >/dev/null 2>"$T/psvv"
grep -q ' 20 pipe reads after their write' "$T/psvv" &&
	pass "vectored_pipe_read_goes_on_after_its_write" ||
	fail "vectored_pipe_read_goes_on_after_its_write: $(grep -o '[0-9]* pipe reads[^;]*' "$T/psvv")"

# 12. INST_RETIRED of multi-threaded programs against the independent
# count: threads contending for one line with atomics, threads that block in
# futex waits and hand off, and a program that exits while a thread still
# runs (three times: where the running thread is then varies)
for mode in threads "pingpong 6" "pipe 50" "exitrun 20000" "exitrun 30000" "exitrun 40000"; do
	DPMU_PLUGIN_ARGS=count=$T/indep "$DYNPMU" stat -x, -e INST_RETIRED -o "$T/mt.csv" -- "$G/guest" $mode >/dev/null
	n=$(csv "$T/mt.csv" INST_RETIRED); ind=$(indep)
	[ -n "$n" ] && [ "$n" = "$ind" ] && pass "threads_INST_RETIRED_equals_independent_count ($mode: $n)" ||
		fail "threads_INST_RETIRED_equals_independent_count ($mode): dynpmu $n, count mode $ind"
done

[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
