#!/bin/sh
# dynpmu stat --listen and dynpmu monitor --listen (docs/openmetrics.md)
# watched by a real Prometheus: a program runs with -I intervals and
# --linger; promtool accepts the scraped exposition; Prometheus, started
# with a scrape config pointing at both, holds the same per-cpu counts as
# stat's own CSV of the same run (the intervals summed) and the same IPC as
# its latest interval, and the same AMU counts, CPI, baseline and anomaly
# count as the monitor's own JSON log. Then the bad inputs: a malformed
# address, an unknown host, a port in use, --linger without --listen.
# Run by tests/integration/CMakeLists.txt with DYNPMU and DPMU_SOURCE_DIR set.
set -u
: "${DYNPMU:?DYNPMU must name the dynpmu binary}"
: "${DPMU_SOURCE_DIR:?DPMU_SOURCE_DIR must name the source tree}"
wl="$(dirname "$DYNPMU")/workloads"
TR="$DPMU_SOURCE_DIR/tests/integration/traces/two_cores.trace"
for tool in prometheus promtool curl jq qemu-aarch64; do
	command -v $tool >/dev/null || { echo "FAIL: $tool missing (scripts/deps.sh test)" >&2; exit 1; }
done
for w in matmul phases; do
	[ -x "$wl/$w" ] || { echo "FAIL: no $wl/$w (build the workloads)" >&2; exit 1; }
done
T=$(mktemp -d)
stat_pid= mon_pid= prom_pid= hold_pid= load_pids=
cleanup() {
	for p in $stat_pid $mon_pid $prom_pid $hold_pid $load_pids; do
		kill "$p" 2>/dev/null
	done
	for p in $stat_pid $mon_pid $prom_pid $hold_pid $load_pids; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
die() { echo "FAIL: $*" >&2; exit 1; }

# wait_for SECONDS CMD...: retry CMD every 0.2 s until it succeeds
wait_for() {
	n=$(($1 * 5)); shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.2
		n=$((n - 1))
	done
	return 1
}

# the port a `dynpmu stat|monitor --listen ...:0` announced on stderr file $1
port_of() { sed -n 's/^dynpmu [a-z]*: serving \/metrics on port \([0-9]*\)$/\1/p' "$1"; }
announced() { [ -n "$(port_of "$1")" ]; }

# ---- the run, served -------------------------------------------------------------
"$DYNPMU" stat -I 0.05 -A -x, -o "$T/stat.csv" -M ipc -e instructions,cycles,l1d_cache_refill,l3d_cache \
	--listen 127.0.0.1:0 --linger 120 -- "$wl/matmul" naive 128 >"$T/prog.out" 2>"$T/stat.err" &
stat_pid=$!
wait_for 30 announced "$T/stat.err" || die "no port announced: $(cat "$T/stat.err")"
port=$(port_of "$T/stat.err")
url="http://127.0.0.1:$port/metrics"
# the monitor on the phase workload, served too (its anomalies are known:
# tests/integration/monitor_phases.sh)
"$DYNPMU" monitor --json -I 50 --cpus 0 -o "$T/mon.json" --listen 127.0.0.1:0 --linger 120 -- \
	"$wl/phases" phased 2 >/dev/null 2>"$T/mon.err" &
mon_pid=$!
wait_for 30 announced "$T/mon.err" || die "monitor: no port announced: $(cat "$T/mon.err")"
mport=$(port_of "$T/mon.err")
murl="http://127.0.0.1:$mport/metrics"
# While the programs run: two clients scraping each back to back, and one
# that reads slowly and gives up mid-reply. The counts compared below are
# the same deterministic counts, so a scrape that disturbed a run would show.
for u in "$url" "$murl"; do
	for k in 1 2; do
		sh -c "while :; do curl -s -o /dev/null '$u'; done" & load_pids="$load_pids $!"
	done
	sh -c "while :; do curl -s -o /dev/null --limit-rate 1k --max-time 0.3 '$u'; done" &
	load_pids="$load_pids $!"
done
finished() { curl -sf "$1" | grep -qx 'dynpmu_run_finished 1'; }
wait_for 120 finished "$url" || die "the run never finished: $(cat "$T/stat.err")"
wait_for 120 finished "$murl" || die "the monitor's run never finished: $(cat "$T/mon.err")"
kill $load_pids 2>/dev/null
wait $load_pids 2>/dev/null
load_pids=
# the report is written before the linger: the CSV is complete now
grep -q ',cpu0,.*,INST_RETIRED,' "$T/stat.csv" || die "no CSV counts: $(cat "$T/stat.csv")"

curl -sf -D "$T/headers" -o "$T/scrape" "$url" || die "scrape of $url failed"
grep -qi '^content-type: text/plain; version=0.0.4; charset=utf-8' "$T/headers" ||
	fail "content type: $(cat "$T/headers")"
promtool check metrics <"$T/scrape" >"$T/promtool" 2>&1 ||
	fail "promtool check metrics: $(cat "$T/promtool")"
for fam in dynpmu_events_total dynpmu_cluster_events_total dynpmu_event_running_ratio \
	dynpmu_ipc dynpmu_simulated_seconds dynpmu_intervals_total dynpmu_run_finished; do
	[ "$(grep -c "^# TYPE $fam " "$T/scrape")" = 1 ] || fail "one TYPE line for $fam"
done
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/")" = 404 ] || fail "/ is not 404"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url")" = 405 ] || fail "POST is not 405"
# the monitor's exposition: the log is complete before the linger
grep -q '"event":"summary"' "$T/mon.json" || die "no monitor summary: $(cat "$T/mon.err")"
curl -sf -D "$T/mheaders" -o "$T/mscrape" "$murl" || die "scrape of $murl failed"
grep -qi '^content-type: text/plain; version=0.0.4; charset=utf-8' "$T/mheaders" ||
	fail "monitor content type: $(cat "$T/mheaders")"
promtool check metrics <"$T/mscrape" >"$T/mpromtool" 2>&1 ||
	fail "promtool check metrics (monitor): $(cat "$T/mpromtool")"
for fam in dynpmu_events_total dynpmu_monitor_cpi dynpmu_monitor_memory_stall_ratio \
	dynpmu_monitor_baseline_cpi dynpmu_monitor_band_cpi dynpmu_monitor_anomaly \
	dynpmu_monitor_anomalies_total dynpmu_intervals_total dynpmu_run_finished; do
	[ "$(grep -c "^# TYPE $fam " "$T/mscrape")" = 1 ] || fail "monitor: one TYPE line for $fam"
done

# ---- Prometheus scrapes it ---------------------------------------------------------
cat >"$T/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: dynpmu
    static_configs:
      - targets: ['127.0.0.1:$port']
  - job_name: monitor
    static_configs:
      - targets: ['127.0.0.1:$mport']
EOF
promtool check config "$T/prometheus.yml" >/dev/null 2>&1 || die "config: $(promtool check config "$T/prometheus.yml" 2>&1)"
# A free port for Prometheus's own API: a few tries at random ports, as a
# port another process holds makes it exit at once.
api=
for try in 1 2 3 4 5; do
	pport=$((20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 40000))
	rm -rf "$T/data"
	prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/data" \
		--web.listen-address="127.0.0.1:$pport" --log.level=warn >"$T/prom.log" 2>&1 &
	prom_pid=$!
	if wait_for 30 curl -sf "http://127.0.0.1:$pport/-/ready" -o /dev/null; then
		api="http://127.0.0.1:$pport/api/v1/query"
		break
	fi
	kill "$prom_pid" 2>/dev/null; wait "$prom_pid" 2>/dev/null; prom_pid=
done
[ -n "$api" ] || die "prometheus did not start: $(cat "$T/prom.log")"

# query EXPR: the instant vector as "labels value" lines, labels sorted
query() {
	curl -sf --data-urlencode "query=$1" "$api" |
		jq -r '.data.result[] | "\(.metric.cpu // "-") \(.metric.event // "-") \(.value[1])"' |
		sort
}
scraped() { [ "$(query "dynpmu_run_finished{job=\"$1\"}" | awk '{print $3}')" = 1 ]; }
wait_for 30 scraped dynpmu || die "Prometheus never scraped the final values: $(cat "$T/prom.log")"
wait_for 30 scraped monitor || die "Prometheus never scraped the monitor's final values"
[ "$(query 'up{job="dynpmu"}' | awk '{print $3}')" = 1 ] || fail "up{job=dynpmu} is not 1"

# Counts: Prometheus's per-cpu totals are the CSV's intervals summed.
query 'dynpmu_events_total{job="dynpmu"}' >"$T/prom_counts"
awk -F, '$4 == "" && $2 ~ /^cpu/ { s[substr($2, 4) " " $5] += $3 }
	END { for (k in s) printf "%s %d\n", k, s[k] }' "$T/stat.csv" | sort >"$T/csv_counts"
[ "$(wc -l <"$T/prom_counts")" -eq 24 ] || fail "24 series (8 cpus x 3 events): $(cat "$T/prom_counts")"
cmp -s "$T/prom_counts" "$T/csv_counts" ||
	fail "Prometheus's counts differ from stat's CSV: $(diff "$T/csv_counts" "$T/prom_counts")"
# the cluster PMU's counts likewise
curl -sf --data-urlencode 'query=dynpmu_cluster_events_total' "$api" |
	jq -r '.data.result[] | "\(.metric.cluster) \(.metric.event) \(.value[1])"' | sort >"$T/prom_cl"
awk -F, '$4 == "" && $2 ~ /^cluster/ { s[substr($2, 8) " " $5] += $3 }
	END { for (k in s) printf "%s %d\n", k, s[k] }' "$T/stat.csv" | sort >"$T/csv_cl"
[ -s "$T/prom_cl" ] && cmp -s "$T/prom_cl" "$T/csv_cl" ||
	fail "cluster counts: CSV $(cat "$T/csv_cl"), Prometheus $(cat "$T/prom_cl")"
# the run did count something on the core it ran on
awk '$1 == 0 && $2 == "INST_RETIRED" && $3 > 1000000 { ok = 1 } END { exit !ok }' \
	"$T/prom_counts" || fail "cpu0 INST_RETIRED: $(cat "$T/prom_counts")"

# IPC: the gauge is the latest interval's (one with time in it); the CSV
# prints six significant digits.
csv_ipc=$(awk -F, '$2 == "cpu0" && $5 == "ipc" && $3 ~ /^[0-9.]+$/ { v = $3 } END { print v }' "$T/stat.csv")
prom_ipc=$(query 'dynpmu_ipc{cpu="0"}' | awk '{print $3}')
[ -n "$csv_ipc" ] && [ -n "$prom_ipc" ] || fail "ipc: csv '$csv_ipc', prometheus '$prom_ipc'"
awk -v a="$csv_ipc" -v b="$prom_ipc" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 5e-6 * a) }' ||
	fail "ipc: csv $csv_ipc, prometheus $prom_ipc"
# The intervals: as many as the CSV's distinct interval times.
csv_int=$(awk -F, '$2 == "cpu0" && $5 == "INST_RETIRED"' "$T/stat.csv" | wc -l)
[ "$(query 'dynpmu_intervals_total{job="dynpmu"}' | awk '{print $3}')" = "$csv_int" ] ||
	fail "dynpmu_intervals_total: $(query 'dynpmu_intervals_total{job="dynpmu"}'), CSV has $csv_int"

# The monitor: Prometheus holds the AMU counts of its summary (of cpu0, the
# one core --cpus gave the program: the only one watched), the last interval's
# CPI and stall share, the baseline's CPI, and the anomalies its log has.
jq -r 'select(.event == "summary") | .cpu as $c | .amu | to_entries[] |
	"\($c) amu:\(.key) \(.value)"' "$T/mon.json" | sort >"$T/mon_counts"
query 'dynpmu_events_total{job="monitor",cpu="0"}' >"$T/prom_mon_counts"
[ "$(wc -l <"$T/mon_counts")" -eq 4 ] && cmp -s "$T/mon_counts" "$T/prom_mon_counts" ||
	fail "monitor AMU counts: log $(cat "$T/mon_counts"), Prometheus $(cat "$T/prom_mon_counts")"
awk '$1 == 0 && $2 == "amu:INST_RETIRED" && $3 > 1000000 { ok = 1 } END { exit !ok }' \
	"$T/prom_mon_counts" || fail "monitor cpu0 amu:INST_RETIRED: $(cat "$T/prom_mon_counts")"
# the program's one thread ran all of cpu0's counts: its series (in their
# own family, with a thread label) are the core's
query 'dynpmu_thread_events_total{job="monitor",thread="0"}' >"$T/prom_thr_counts"
cmp -s "$T/prom_thr_counts" "$T/mon_counts" ||
	fail "thread 0's counts: Prometheus $(cat "$T/prom_thr_counts"), the core's $(cat "$T/mon_counts")"
[ -z "$(query 'dynpmu_events_total{job="monitor",cpu!="0"}')" ] ||
	fail "monitor: series of cores --cpus did not give: $(query 'dynpmu_events_total{job="monitor"}')"
# same (jq's and Prometheus's shortest decimals of one double may differ in
# the last digit): equal to 1e-12 of the value
same() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a
	exit !(a != "" && b != "" && d <= 1e-12 * m + 1e-15) }'; }
mlog() { jq -rs "$1" "$T/mon.json"; }
for x in "dynpmu_monitor_cpi:[.[] | select(.event == \"summary\")][0].cpi" \
	"dynpmu_monitor_memory_stall_ratio:[.[] | select(.event == \"summary\")][0].stall" \
	"dynpmu_monitor_anomalies_total:[.[] | select(.event == \"anomaly\")] | length"; do
	name=${x%%:*} expr=${x#*:}
	want=$(mlog "$expr") got=$(query "$name{job=\"monitor\",cpu=\"0\",thread=\"\"}" | awk '{print $3}')
	same "$want" "$got" || fail "monitor $name: log $want, Prometheus $got"
done
[ "$(mlog '[.[] | select(.event == "anomaly")] | length')" = 2 ] ||
	fail "monitor under scrapes: not the two anomalies of the phases: $(cat "$T/mon.json")"
# the baseline's CPI: the log prints four decimals
want=$(mlog '[.[] | select(.event == "baseline")][0].cpi')
got=$(query 'dynpmu_monitor_baseline_cpi{job="monitor",cpu="0",thread=""}' | awk '{print $3}')
awk -v a="$want" -v b="$got" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && d <= 5e-5) }' ||
	fail "monitor baseline CPI: log $want, Prometheus $got"
[ "$(query 'dynpmu_monitor_anomaly{job="monitor",cpu="0",thread=""}' | awk '{print $3}')" = 0 ] ||
	fail "monitor: an anomaly still open at the end"
kill -TERM "$mon_pid"
wait "$mon_pid"
rc=$?
mon_pid=
[ "$rc" -eq 0 ] || fail "monitor after SIGTERM in --linger exited $rc"

# SIGTERM ends the linger, and dynpmu exits with the program's status.
kill -TERM "$stat_pid"
wait "$stat_pid"
rc=$?
stat_pid=
[ "$rc" -eq 0 ] || fail "stat after SIGTERM in --linger exited $rc"

# ---- bad input ---------------------------------------------------------------------
# a malformed address or unknown host: exit 2, naming it, before any run
for bad in 127.0.0.1 127.0.0.1:99999 host:port no.such.host.invalid:9464; do
	"$DYNPMU" stat --trace "$TR" --listen "$bad" >/dev/null 2>"$T/err"
	rc=$?
	[ "$rc" -eq 2 ] || fail "--listen $bad exited $rc, want 2"
	grep -qF -- "'$bad'" "$T/err" || fail "--listen $bad: message lacks the input: $(cat "$T/err")"
	"$DYNPMU" monitor --trace "$TR" --listen "$bad" >/dev/null 2>"$T/err"
	rc=$?
	[ "$rc" -eq 2 ] || fail "monitor --listen $bad exited $rc, want 2"
	grep -qF -- "'$bad'" "$T/err" || fail "monitor --listen $bad: message lacks the input: $(cat "$T/err")"
done
"$DYNPMU" monitor --trace "$TR" --linger 5 >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q -- '--listen' "$T/err" || fail "monitor --linger without --listen: $(cat "$T/err")"
"$DYNPMU" monitor --trace "$TR" --listen 127.0.0.1:0 --linger x >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q -- "'x'" "$T/err" || fail "monitor --linger x: $(cat "$T/err")"
"$DYNPMU" stat --trace "$TR" --linger 5 >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q -- '--listen' "$T/err" || fail "--linger without --listen: $(cat "$T/err")"
"$DYNPMU" stat --trace "$TR" --listen 127.0.0.1:0 --linger -1 >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q -- "'-1'" "$T/err" || fail "--linger -1: $(cat "$T/err")"
# a port in use: exit 1 with the system's reason
"$DYNPMU" stat --trace "$TR" --listen 127.0.0.1:0 --linger 60 >/dev/null 2>"$T/hold.err" &
hold_pid=$!
wait_for 30 announced "$T/hold.err" || die "no port announced: $(cat "$T/hold.err")"
held=$(port_of "$T/hold.err")
"$DYNPMU" stat --trace "$TR" --listen "127.0.0.1:$held" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" -eq 1 ] || fail "--listen on a port in use exited $rc, want 1"
grep -q "127.0.0.1:$held: Address already in use" "$T/err" || fail "port in use: $(cat "$T/err")"
"$DYNPMU" monitor --trace "$TR" --listen "127.0.0.1:$held" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "Address already in use" "$T/err" ||
	fail "monitor --listen on a port in use: exit $rc, $(cat "$T/err")"

[ "$failures" -eq 0 ] && echo PASS
exit "$failures"
