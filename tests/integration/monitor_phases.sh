#!/bin/sh
# dynpmu monitor end to end (docs/monitor.md, issue acceptance):
#  1. workloads/phases phased (cache-friendly, L2 thrash, branchy,
#     cache-friendly): one anomaly per changed phase, each within three
#     intervals of the change (the change found independently from stat's
#     interval CPIs), the first diagnosed as the memory hierarchy, the second
#     as the front end, and the last ending when the program is back;
#  2. phases steady: a baseline and no anomaly;
#  3. the same on a Cortex-A55;
#  4. --json lines parse, --save-baseline / --baseline round-trip, the
#     trace unit's capture names the phase's function and decodes,
#     --compare judges a run against a saved baseline, --trace replays;
#  5. threads: phases threads on one core, each thread its own baseline,
#     the second thread's two phase changes its anomalies and none the
#     first's, the threads' AMU counts adding up to the core's; thread
#     baselines saved and read back;
#  6. bad input: a message and exit status 2.
set -u
: "${DYNPMU:?DYNPMU: the dynpmu binary}"
W=$(dirname "$DYNPMU")/workloads
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for tool in qemu-aarch64 jq; do
	if ! command -v $tool >/dev/null; then
		echo "skipped: needs $tool (scripts/deps.sh test)"
		exit 0
	fi
done
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }
I_US=50

# change_times CPU: the interval ends (ns) at which stat's CPI leaves its
# level by more than 30 %: the level is the median of intervals 3-8 (after
# the program's start), then, after each change, the CPI two intervals on
# (the new phase's own). Three changes: the thrash, branchy, back.
change_times() {
	"$DYNPMU" stat -x, -I 0.05 --cpus "$1" -e cycles,instructions -o "$T/i.csv" -- \
		"$W/phases" phased 2 >/dev/null
	awk -F, '$4 == "CPU_CYCLES" { c = $2 } $4 == "INST_RETIRED" && $2 > 0 {
		n++; cpi[n] = c / $2; t[n] = int($1 * 1e9 + 0.5) }
	END {
		for (i = 3; i <= 8; i++) s[i - 2] = cpi[i]
		for (i = 1; i <= 6; i++) for (j = i + 1; j <= 6; j++) if (s[j] < s[i]) { x = s[i]; s[i] = s[j]; s[j] = x }
		level = (s[3] + s[4]) / 2
		for (i = 9; i <= n && found < 3; i++) {
			r = cpi[i] / level
			if (r > 1.3 || r < 0.77) { print t[i]; found++; level = cpi[i + 2]; i += 2 }
		}
	}' "$T/i.csv"
}

# check CPU NAME: the phased run's log against the changes
check_phased() {
	cpu=$1 name=$2
	rm -rf "$T/cap"
	"$DYNPMU" monitor --json --cpus "$cpu" -I $I_US -o "$T/m.json" --capture "$T/cap" -- \
		"$W/phases" phased 2 >/dev/null || { fail "$name: monitor failed"; return; }
	set -- $(change_times "$cpu")
	t2=${1:-0} t3=${2:-0} t4=${3:-0}
	n=$(jq -s '[.[] | select(.event == "anomaly")] | length' "$T/m.json")
	if [ "$n" = 2 ]; then pass "$name: two anomalies"; else fail "$name: $n anomalies (want 2)"; fi
	a1=$(jq -s '[.[] | select(.event == "anomaly")][0].time_ns // 0' "$T/m.json")
	a2=$(jq -s '[.[] | select(.event == "anomaly")][1].time_ns // 0' "$T/m.json")
	e2=$(jq -s '[.[] | select(.event == "anomaly_end")][-1].time_ns // 0' "$T/m.json")
	lim=$((3 * I_US * 1000 + 1000))
	for x in "thrash:$a1:$t2" "branchy:$a2:$t3" "back:$e2:$t4"; do
		what=${x%%:*} rest=${x#*:} got=${rest%%:*} want=${rest#*:}
		if [ "$want" -gt 0 ] && [ "$got" -ge "$want" ] && [ $((got - want)) -le $lim ]; then
			pass "$name: $what found $(((got - want) / 1000)) us after the change"
		else
			fail "$name: $what at $got ns, the change at $want ns (at most $lim ns later)"
		fi
	done
	c1=$(jq -rs '[.[] | select(.event == "diagnosis")][0].cause // "none"' "$T/m.json")
	c2=$(jq -rs '[.[] | select(.event == "diagnosis")][1].cause // "none"' "$T/m.json")
	if [ "$c1" = "memory hierarchy" ] && [ "$c2" = "front end" ]; then pass "$name: causes $c1, $c2"
	else fail "$name: causes '$c1', '$c2' (want memory hierarchy, front end)"; fi
	# the trace unit's capture names the phase's function, and decodes
	h1=$(jq -rs '[.[] | select(.event == "hot")][0].functions[0].name // "none"' "$T/m.json")
	h2=$(jq -rs '[.[] | select(.event == "hot")][1].functions[0].name // "none"' "$T/m.json")
	if [ "$h1" = dpmu_phase_thrash ] && [ "$h2" = dpmu_phase_branchy ]; then pass "$name: hot $h1, $h2"
	else fail "$name: hot '$h1', '$h2' (want dpmu_phase_thrash, dpmu_phase_branchy)"; fi
	n=$("$DYNPMU" trace show --addresses "$T/cap/anomaly-1" | wc -l)
	if [ "$n" -ge 4000 ]; then pass "$name: the capture decodes ($n instructions)"
	else fail "$name: the capture decodes to $n instructions"; fi
}

check_phased 0 "Cortex-A75"
check_phased 4 "Cortex-A55"

# the timeline: valid SVG, one panel, both anomalies labelled; a browser
# draws it when one is installed
if "$DYNPMU" monitor -I $I_US --svg "$T/t.svg" -o /dev/null -- "$W/phases" phased 2 >/dev/null &&
	{ ! command -v xmllint >/dev/null || xmllint --noout "$T/t.svg"; } &&
	grep -q ">1: memory hierarchy<" "$T/t.svg" && grep -q ">2: front end<" "$T/t.svg"; then
	pass "timeline: SVG with both anomalies"
else
	fail "timeline: no valid SVG with both anomalies"
fi
browser=$(command -v chromium-headless-shell || command -v chromium || true)
if [ -n "$browser" ]; then
	"$browser" --headless --no-sandbox --disable-gpu --screenshot="$T/t.png" --window-size=900,320 \
		"file://$T/t.svg" >/dev/null 2>&1
	[ -s "$T/t.png" ] && pass "timeline: a browser draws it" || fail "timeline: a browser draws it"
fi

# 2. steady: no anomaly
if "$DYNPMU" monitor --json -I $I_US -o "$T/s.json" --save-baseline "$T/base.json" -- \
	"$W/phases" steady 2 >/dev/null; then
	n=$(jq -s '[.[] | select(.event == "anomaly")] | length' "$T/s.json")
	b=$(jq -s '[.[] | select(.event == "baseline")] | length' "$T/s.json")
	if [ "$n" = 0 ] && [ "$b" = 1 ]; then pass "steady: a baseline, no anomaly"
	else fail "steady: $b baselines, $n anomalies"; fi
else
	fail "steady: monitor failed"
fi

# 4. a saved baseline: no learning, the thrash is an anomaly at once. The
# phased run's set-up (its first 250 us on cpu0) writes the chase's 1 MiB,
# which steady's does not: against steady's baseline it may be one more.
if jq -e '.cores[0].cpi > 0' "$T/base.json" >/dev/null &&
	"$DYNPMU" monitor --json -I $I_US --baseline "$T/base.json" -o "$T/b.json" -- \
		"$W/phases" phased 2 >/dev/null; then
	b=$(jq -s '[.[] | select(.event == "baseline")] | length' "$T/b.json")
	n=$(jq -s '[.[] | select(.event == "anomaly" and .time_ns > 250000)] | length' "$T/b.json")
	e=$(jq -s '[.[] | select(.event == "anomaly" and .time_ns <= 250000)] | length' "$T/b.json")
	if [ "$b" = 0 ] && [ "$n" = 2 ] && [ "$e" -le 1 ]; then
		pass "baseline file: used, two anomalies after the set-up"
	else fail "baseline file: $b learned, $n anomalies after the set-up, $e in it"; fi
else
	fail "baseline file: not saved or not read"
fi

# --compare: a run judged against a saved baseline (seed 003 section 7.2,
# step 4): the dependent chase's baseline (128 KiB, in the L2), the
# independent gather over the same lines is better; steady against its own
# baseline the same
if "$DYNPMU" monitor -I 20 --save-baseline "$T/chase.json" -o /dev/null -- "$W/latency" chase 128 400000 >/dev/null &&
	"$DYNPMU" monitor --json -I 20 --compare "$T/chase.json" -o "$T/c1.json" -- "$W/latency" gather 128 400000 >/dev/null &&
	"$DYNPMU" monitor --json -I 20 --compare "$T/base.json" -o "$T/c2.json" -- "$W/phases" steady 2 >/dev/null; then
	v1=$(jq -rs '[.[] | select(.event == "compare")][0].verdict // "none"' "$T/c1.json")
	v2=$(jq -rs '[.[] | select(.event == "compare")][0].verdict // "none"' "$T/c2.json")
	if [ "$v1" = better ] && [ "$v2" = same ]; then pass "compare: gather better, steady the same"
	else fail "compare: '$v1', '$v2' (want better, same)"; fi
else
	fail "compare: a run failed"
fi

# a new anomaly while a diagnosis runs (phases shorter than a diagnosis):
# the running one ends with what it counted, and each anomaly has its own
# cause (the thrash's, memory hierarchy, though cut short)
if "$DYNPMU" monitor --json --cpus 0 -I 250 --consecutive 1 --learn 3 --window 0 -o "$T/o.json" -- \
	"$W/phases" phased 1 >/dev/null; then
	an=$(jq -rs '[.[] | select(.event == "anomaly") | .anomaly] | join(",")' "$T/o.json")
	dn=$(jq -rs '[.[] | select(.event == "diagnosis") | .anomaly] | sort | join(",")' "$T/o.json")
	c1=$(jq -rs '[.[] | select(.event == "diagnosis" and .anomaly == 1)][0] | "\(.cause):\(.partial)"' "$T/o.json")
	if [ -n "$an" ] && [ "$an" = "$dn" ] && [ "$c1" = "memory hierarchy:true" ]; then
		pass "overlapping anomalies: each diagnosed ($dn), the first partial, memory hierarchy"
	else
		fail "overlapping anomalies: anomalies $an, diagnoses $dn, the first's '$c1'"
	fi
else
	fail "overlapping anomalies: monitor failed"
fi

# two cores of one cluster diagnosing at once: one counts on the cluster's
# PMU, the other skips its coherence group and says whose it is
if "$DYNPMU" monitor --json --cpus 0,1 -I $I_US --window 0 -o "$T/tw.json" -- \
	"$W/phases" twins 2 >/dev/null; then
	# (which core took the cluster first is the timing's: either way round)
	sk=$(jq -rs '[.[] | select(.event == "group_skipped")] |
		if length > 0 and all(.group == "coherence" and .owner != .cpu and .owner <= 1 and .cpu <= 1)
		then "ok" else tostring end' "$T/tw.json")
	an=$(jq -rs '[.[] | select(.event == "anomaly") | .anomaly] | join(",")' "$T/tw.json")
	dn=$(jq -rs '[.[] | select(.event == "diagnosis") | .anomaly] | sort | join(",")' "$T/tw.json")
	cs=$(jq -rs '[.[] | select(.event == "diagnosis") | "\(.cpu):\(.cause)"] | sort | unique | join(",")' "$T/tw.json")
	if [ "$sk" = ok ] && [ "$an" = "$dn" ] &&
		[ "$cs" = "0:front end,0:memory hierarchy,1:front end,1:memory hierarchy" ]; then
		pass "one cluster PMU: a core skipped the coherence group while the other's counted; causes $cs"
	else
		fail "one cluster PMU: skipped '$sk' (want coherence, owned by the other core), anomalies $an, diagnoses $dn, causes $cs"
	fi
else
	fail "one cluster PMU: monitor failed"
fi

# a program found in PATH: the captures name it by the path qemu ran (the
# trace directory's "program", not the bare name), and decode from anywhere
mkdir -p "$T/elsewhere"
if (cd "$T/elsewhere" && PATH="$W:$PATH" "$DYNPMU" monitor --json --cpus 0 -I $I_US -o p.json \
	--capture capP -- phases phased 2 >/dev/null) &&
	n=$(cd / && "$DYNPMU" trace show --addresses "$T/elsewhere/capP/anomaly-1" | wc -l) &&
	[ "$n" -ge 4000 ] &&
	[ "$(jq -r .program "$T/elsewhere/capP/anomaly-1/meta.json")" -ef "$W/phases" ]; then
	pass "PATH program: its capture names $W/phases and decodes ($n instructions)"
else
	fail "PATH program: the capture names '$(jq -r .program "$T/elsewhere/capP/anomaly-1/meta.json")' (want $W/phases) and decodes ${n:-no} instructions"
fi

# a capture that cannot be kept is logged, and the monitor goes on
mkdir -p "$T/capF"
: >"$T/capF/anomaly-1" # a file where the capture's directory would go
if "$DYNPMU" monitor --json --cpus 0 -I $I_US -o "$T/f.json" --capture "$T/capF" -- \
	"$W/phases" phased 2 >/dev/null; then
	e=$(jq -rs '[.[] | select(.event == "capture_error")] | map("\(.anomaly):\(.stage)") | join(",")' "$T/f.json")
	d=$(jq -s '[.[] | select(.event == "diagnosis")] | length' "$T/f.json")
	if [ "$e" = "1:write" ] && [ "$d" = 2 ] && [ -d "$T/capF/anomaly-2" ]; then
		pass "capture failure: logged, both diagnoses, the next capture kept"
	else
		fail "capture failure: errors '$e', $d diagnoses"
	fi
else
	fail "capture failure: the monitor stopped ($(cat "$T/f.json" | tail -2))"
fi

# --trace: a replayed instruction trace is watched too
if "$DYNPMU" monitor -I 1 --trace "$DPMU_SOURCE_DIR/tests/integration/traces/two_cores.trace" \
	-o "$T/t.log" >/dev/null; then pass "--trace: a replay runs"
else fail "--trace: the replay failed"; fi

# 5. threads sharing cpu0: per-thread counts from the switches
if "$DYNPMU" monitor --json --cpus 0 -I $I_US -o "$T/th.json" --save-baseline "$T/thbase.json" -- \
	"$W/phases" threads 2 >/dev/null; then
	# (thread 0's baseline was learned while it was the only thread: its
	# lines are the core's until then; its summary says it has one)
	tb=$(jq -s '[.[] | select(.event == "thread_summary" and .baseline)] | map(.thread) | sort | join(",")' "$T/th.json")
	a0=$(jq -s '[.[] | select(.event == "thread_anomaly" and .thread == 0)] | length' "$T/th.json")
	a1=$(jq -s '[.[] | select(.event == "thread_anomaly" and .thread == 1)] | length' "$T/th.json")
	if [ "$tb" = '"0,1"' ] && [ "$a0" = 0 ] && [ "$a1" = 2 ]; then
		pass "threads: own baselines, thread 1's two anomalies, none for thread 0"
	else
		fail "threads: baselines of threads $tb, anomalies: thread 0 $a0, thread 1 $a1 (want 0,1 / 0 / 2)"
	fi
	# every instruction and cycle of the core is some thread's
	for ev in INST_RETIRED CPU_CYCLES STALL_BACKEND_MEM; do
		core=$(jq -s "[.[] | select(.event == \"summary\")][0].amu.$ev" "$T/th.json")
		thr=$(jq -s "[.[] | select(.event == \"thread_summary\") | .amu.$ev] | add" "$T/th.json")
		if [ "$core" = "$thr" ] && [ "$core" -gt 0 ]; then pass "threads: $ev adds up ($core)"
		else fail "threads: $ev: core $core, threads $thr"; fi
	done
	# the threads' baselines are saved and read back (no learning then)
	n=$(jq '.threads | length' "$T/thbase.json")
	if [ "$n" = 2 ] && "$DYNPMU" monitor --json --cpus 0 -I $I_US --baseline "$T/thbase.json" \
		-o "$T/th2.json" -- "$W/phases" threads 2 >/dev/null; then
		l=$(jq -s '[.[] | select(.event == "thread_baseline")] | length' "$T/th2.json")
		a1=$(jq -s '[.[] | select(.event == "thread_anomaly" and .thread == 1)] | length' "$T/th2.json")
		if [ "$l" = 0 ] && [ "$a1" = 2 ]; then pass "threads: saved baselines used"
		else fail "threads: with saved baselines $l learned, thread 1 $a1 anomalies"; fi
	else
		fail "threads: $n thread baselines saved, or the run with them failed"
	fi
else
	fail "threads: monitor failed"
fi

# 6. bad input
bad() { # NAME WANT COMMAND...
	name=$1 want=$2
	shift 2
	"$@" >/dev/null 2>"$T/err"
	rc=$?
	if [ $rc = 2 ] && grep -q -- "$want" "$T/err"; then pass "bad input: $name"
	else fail "bad input: $name (exit $rc: $(cat "$T/err"))"; fi
}
bad "interval" "--interval" "$DYNPMU" monitor -I 0 -- "$W/phases" steady 1
bad "learn" "--learn" "$DYNPMU" monitor --learn 2 -- "$W/phases" steady 1
bad "min-insns" "--min-insns" "$DYNPMU" monitor --min-insns 0 -- "$W/phases" steady 1
bad "no program" "no program" "$DYNPMU" monitor
bad "program and trace" "not both" "$DYNPMU" monitor --trace x.trace -- "$W/phases" steady 1
bad "window" "--window" "$DYNPMU" monitor --window 70000 -- "$W/phases" steady 1
printf '{"format":"something else"}' >"$T/other.json"
bad "compare file" "compare .*not a baseline" "$DYNPMU" monitor --compare "$T/other.json" -- "$W/phases" steady 1
bad "baseline file" "not a baseline" "$DYNPMU" monitor --baseline "$T/other.json" -- "$W/phases" steady 1
printf '{"format":' >"$T/trunc.json"
bad "truncated baseline" "trunc.json: line" "$DYNPMU" monitor --baseline "$T/trunc.json" -- "$W/phases" steady 1

[ $fails = 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
