#!/bin/sh
# dynpmu stat --backend perf on this machine through the real
# perf_event_open (issue 27 point 3, second level; docs/hardware.md): the
# development VM has no hardware counters, so Linux's software events go
# down the same path as the PMUs' (discovery, the counting session, the
# reports). Checked: page-faults of a deterministic program against Linux
# perf stat; a program's exit status and stdout passing through; -I rows
# adding up; --json and CSV; -a per cpu with -A; -p PID of a running
# process; and the messages: an unknown event, a PMU this machine lacks
# (<not supported> with the reason), -p of no process, options only the
# simulation has, a program that does not exist, and (as nobody, with
# perf_event_paranoid at 2) the paranoid sysctl. SKIP (exit 77) where
# perf_event_open is not allowed at all.
. "$DPMU_SOURCE_DIR/tests/integration/lib/check.sh"

if ! "$DYNPMU" stat --backend perf -x, -e task-clock -- true >/dev/null 2>"$tmp/probe"; then
	echo "SKIP: perf_event_open refused here: $(cat "$tmp/probe")"
	exit 77
fi

# field N EVENT FILE: column N of EVENT's CSV row
field() { awk -F, -v e="$2" -v n="$1" '$3 == e { print $n; exit }' "$3"; }

# --- page-faults of dd's 4 MiB buffer, as perf stat counts them
run 0 "$DYNPMU" stat --backend perf -x, -o "$tmp/pf.csv" -e page-faults \
	-- dd if=/dev/zero of=/dev/null bs=4M count=1
ours=$(field 1 page-faults "$tmp/pf.csv")
[ "${ours:-0}" -gt 1024 ] || fail "page-faults of dd bs=4M: ${ours:-none}, want > 1024"
if command -v perf >/dev/null && perf stat -x, -e page-faults -o "$tmp/perf.csv" \
	-- dd if=/dev/zero of=/dev/null bs=4M count=1 2>/dev/null; then
	theirs=$(awk -F, '$3 == "page-faults" { print $1 }' "$tmp/perf.csv")
	d=$((ours - theirs))
	[ "$d" -lt 0 ] && d=$((-d))
	# the same faults but for a few of the loader's, which vary by a page or two
	[ "$d" -le $((theirs / 50 + 4)) ] ||
		fail "page-faults: dynpmu $ours, perf stat $theirs"
fi

# --- a program's stdout and exit status are its own; the report goes to stderr
"$DYNPMU" stat --backend perf -e task-clock -- sh -c 'echo hello; exit 3' >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 3 ] || fail "exit status $rc, want the program's 3"
grep -qx hello "$tmp/out" || fail "the program's stdout: $(cat "$tmp/out")"
grep -q "task-clock" "$tmp/err" || fail "no report on stderr: $(cat "$tmp/err")"

# --- task-clock of a sleeping program is small, its elapsed time is not
run 0 "$DYNPMU" stat --backend perf -x, -o "$tmp/sl.csv" -e task-clock,context-switches -- sleep 0.3
tc=$(field 1 task-clock "$tmp/sl.csv")
[ "${tc:-0}" -gt 0 ] && [ "$tc" -lt 200000000 ] || fail "task-clock of sleep 0.3: ${tc:-none} ns"
cs=$(field 1 context-switches "$tmp/sl.csv")
[ "${cs:-0}" -ge 1 ] || fail "context-switches of sleep: ${cs:-none}"

# --- -I: rows every 100 ms whose page-faults add up to the whole run's
run 0 "$DYNPMU" stat --backend perf -x, -o "$tmp/iv.csv" -I 100 -e page-faults,task-clock \
	-- sh -c 'sleep 0.25; dd if=/dev/zero of=/dev/null bs=4M count=1 2>/dev/null; sleep 0.2'
rows=$(awk -F, '$4 == "page-faults"' "$tmp/iv.csv" | wc -l)
[ "$rows" -ge 4 ] && [ "$rows" -le 7 ] || fail "-I 100 over ~0.5 s: $rows rows: $(cat "$tmp/iv.csv")"
sum=$(awk -F, '$4 == "page-faults" { s += $2 } END { print s + 0 }' "$tmp/iv.csv")
[ "$sum" -gt 1024 ] || fail "-I page-faults add up to $sum"
awk -F, '$4 == "page-faults" { if ($1 + 0 < last) bad = 1; last = $1 + 0 } END { exit bad }' \
	"$tmp/iv.csv" || fail "-I times do not increase: $(cat "$tmp/iv.csv")"

# --- --json: a run object, then the counts with perf's times
run 0 "$DYNPMU" stat --backend perf --json -o "$tmp/j.json" -e page-faults,task-clock -- true
if command -v jq >/dev/null; then
	jq -e -s '.[0].type == "run" and ([.[] | select(.type == "count" and .event == "page-faults"
		and .status == "counted" and .value > 10 and .running_pct == 100)] | length == 1)' \
		"$tmp/j.json" >/dev/null || fail "--json: $(cat "$tmp/j.json")"
fi

# --- -a -A: per cpu, every task; each cpu's task-clock about the elapsed time
ncpu=$(getconf _NPROCESSORS_ONLN)
run 0 "$DYNPMU" stat --backend perf -a -A -x, -o "$tmp/a.csv" -e task-clock -- sleep 0.2
# -A's CSV rows: unit,value,unit of measure,event,...
n=$(awk -F, '$4 == "task-clock" && $1 ~ /^cpu[0-9]+$/' "$tmp/a.csv" | wc -l)
[ "$n" -eq "$ncpu" ] || fail "-a -A: $n cpu rows, want $ncpu: $(cat "$tmp/a.csv")"
awk -F, '$4 == "task-clock" && ($2 < 150000000 || $2 > 5000000000) { bad = 1 } END { exit bad }' \
	"$tmp/a.csv" || fail "-a task-clock per cpu not about 0.2 s: $(cat "$tmp/a.csv")"

# --- -p PID: a running process, until it ends
sleep 0.4 &
pid=$!
run 0 "$DYNPMU" stat --backend perf -p "$pid" -x, -o "$tmp/p.csv" -e context-switches,task-clock
wait "$pid" 2>/dev/null
grep -q ',context-switches,' "$tmp/p.csv" || fail "-p: $(cat "$tmp/p.csv")"
kill -0 "$pid" 2>/dev/null && fail "-p returned before process $pid ended"

# --- messages, non-zero exits
run 2 "$DYNPMU" stat --backend perf -p 0x10 -e task-clock
has err "give a process id"
run 1 "$DYNPMU" stat --backend perf -p 4194303 -e task-clock
has err "no such process"
run 2 "$DYNPMU" stat --backend perf -e task-clok -- true
has err "unknown event 'task-clok' (did you mean task-clock?)"
run 2 "$DYNPMU" stat --backend perf --trace x.trace
has err "--trace: replays a trace on the simulation"
run 2 "$DYNPMU" stat --backend perf -A -e task-clock -- true
has err "add -a for per-cpu counts"
run 2 "$DYNPMU" stat -a -e task-clock -- true
has err "give --backend perf"
run 1 "$DYNPMU" stat --backend perf -e task-clock -- /nonexistent/program
has err "cannot run /nonexistent/program"
run 2 "$DYNPMU" stat --backend nope -- true
has err "use sim or perf"
run 2 "$DYNPMU" stat -e task-clock --trace "$DPMU_SOURCE_DIR/tests/integration/traces/two_cores.trace"
has err "task-clock is a Linux software event"
# a PMU this machine lacks: counted as perf does, <not supported>, and why
if ! ls /sys/bus/event_source/devices | grep -q '^armv[89]_'; then
	run 0 "$DYNPMU" stat --backend perf -e page-faults,instructions -- true
	has err "<not supported>"
	has err "no Arm core PMU for cpu0"
	run 0 "$DYNPMU" list --backend perf
	has out "only software events can be counted"
fi
# list --backend perf of the fake big.LITTLE tree
DPMU_SYSFS_ROOT="$DPMU_SOURCE_DIR/tests/sysfs/biglittle" run 0 "$DYNPMU" list --backend perf --json
if command -v jq >/dev/null; then
	jq -e '[.[] | select(.pmu == "armv8_cortex_a75" and .name == "STALL_BACKEND")][0].advertised
		and ([.[] | select(.pmu == "arm_dsu_0" and .name == "L3D_CACHE")][0].advertised)' \
		"$tmp/out" >/dev/null || fail "list --backend perf --json of the fake tree"
fi
# perf_event_paranoid: as nobody, kernel counting of a task is refused at 2
par=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 0)
if [ "$(id -u)" -eq 0 ] && [ "$par" -ge 2 ] && command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$DYNPMU" stat --backend perf -e task-clock:k -- true >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -ne 0 ] || fail "task-clock:k as nobody with paranoid $par: exit 0"
	has err "kernel.perf_event_paranoid is $par"
	has err "sysctl -w kernel.perf_event_paranoid=1"
	# without modifiers perf's fallback: user space only, and a note
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$DYNPMU" stat --backend perf -e task-clock -- true >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 0 ] || fail "task-clock as nobody with paranoid $par: exit $rc: $(cat "$tmp/err")"
	has err "task-clock counts user space only: kernel.perf_event_paranoid is $par"
fi
finish
