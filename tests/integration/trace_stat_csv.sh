#!/bin/sh
# dynpmu stat -x and -A: perf's CSV fields (value, unit, event, running
# time, percentage), per-core rows cpuN for each core the trace uses and
# cluster0 for the cluster PMU, parsed back.
set -eu
: "${DYNPMU:?DYNPMU must name the dynpmu binary}"
: "${DPMU_SOURCE_DIR:?DPMU_SOURCE_DIR must name the source tree}"
T="$DPMU_SOURCE_DIR/tests/integration/traces"
fail() { echo "FAIL: $*" >&2; exit 1; }

# Default events, aggregated: 5 fields each, numbers where numbers belong.
out=$("$DYNPMU" stat --trace "$T/two_cores.trace" -x,)
echo "$out" | awk -F, '
	$2 != "" { next }  # a metric row (docs/output.md): plain stat adds the default metrics
	NF != 5 { print "line " NR ": " NF " fields"; bad = 1 }
	$1 !~ /^[0-9]+$/ || $4 !~ /^[0-9]+$/ || $5 != "100.00" { print "line " NR ": " $0; bad = 1 }
	END { exit bad }' || fail "CSV fields: $out"
events=$(echo "$out" | awk -F, '$2 == "" { printf "%s ", $3 }')
[ "$events" = "CPU_CYCLES INST_RETIRED BR_RETIRED BR_MIS_PRED_RETIRED L1D_CACHE L1D_CACHE_REFILL L3D_CACHE L3D_CACHE_REFILL " ] ||
	fail "default events: $events"

# -A: core first; rows for cpu0 and cpu5 only, cluster0 for cluster events.
out=$("$DYNPMU" stat --trace "$T/two_cores.trace" -A -x, -e inst_retired,br_retired,l1d_cache,l3d_cache)
echo "$out" | awk -F, 'NF != 6 { exit 1 }' || fail "-A CSV has 6 fields: $out"
[ "$(echo "$out" | awk -F, '$4 == "INST_RETIRED" { printf "%s=%s ", $1, $2 }')" = "cpu0=4 cpu5=5 " ] ||
	fail "INST_RETIRED per core: $out"
[ "$(echo "$out" | awk -F, '$4 == "BR_RETIRED" { printf "%s=%s ", $1, $2 }')" = "cpu0=1 cpu5=3 " ] ||
	fail "BR_RETIRED per core: $out"
[ "$(echo "$out" | awk -F, '$4 == "L1D_CACHE" { printf "%s=%s ", $1, $2 }')" = "cpu0=1 cpu5=1 " ] ||
	fail "L1D_CACHE per core: $out"
[ "$(echo "$out" | awk -F, '$4 == "L3D_CACHE" { print $1 }')" = cluster0 ] ||
	fail "L3D_CACHE on cluster0: $out"
# Per-core rows add up to the aggregated count.
agg=$("$DYNPMU" stat --trace "$T/two_cores.trace" -x, -e inst_retired | cut -d, -f1)
[ "$agg" = 9 ] || fail "aggregated INST_RETIRED: $agg"

# Another separator.
out=$("$DYNPMU" stat --trace "$T/two_cores.trace" -x ';' -e inst_retired)
[ "$out" = "$(echo "$out" | awk -F';' 'NF == 5 && $1 == 9 && $3 == "INST_RETIRED"')" ] ||
	fail "-x ';': $out"

# The table with -A names each core and the cluster.
tab=$("$DYNPMU" stat --trace "$T/two_cores.trace" -A -e inst_retired,l3d_cache)
echo "$tab" | grep -Eq '^cpu5 +5      INST_RETIRED$' || fail "-A table cpu5: $tab"
echo "$tab" | grep -Eq '^cluster0 +[0-9,]+      L3D_CACHE$' || fail "-A table cluster0: $tab"

# The DSU-120 profile's default L3 events are its own (seed 001 section 4.2).
out=$("$DYNPMU" stat --trace "$T/two_cores.trace" --profile a75x4-a55x4-dsu120 -x, -A)
echo "$out" | grep -q '^cluster0,[0-9]*,,L3_ACCESS,' || fail "DSU-120 L3_ACCESS: $out"
echo "$out" | grep -q '^cluster0,[0-9]*,,L3_MISS,' || fail "DSU-120 L3_MISS: $out"
echo "ok"
