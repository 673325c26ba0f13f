#!/bin/sh
# dynpmu list --json: one JSON array; every object has exactly the keys
# name, code, pmu, description, implemented, modelled; every Cortex-A75
# catalog event (data/events/cortex-a75.json) is listed for the A75 core PMU
# with its code; PMCEID answers match the profile for the architected range.
set -eu
: "${DYNPMU:?DYNPMU must name the dynpmu binary}"
: "${DPMU_SOURCE_DIR:?DPMU_SOURCE_DIR must name the source tree}"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v jq >/dev/null 2>&1 || { echo "skip: jq not installed"; exit 0; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$DYNPMU" list --json >"$out" || fail "dynpmu list --json exited $?"
jq -e 'type == "array" and length > 0' "$out" >/dev/null || fail "not a non-empty array"
bad=$(jq -r '.[] | select((keys | sort) != ["code","description","implemented","modelled","name","pmu"]) | .name' "$out")
[ -z "$bad" ] || fail "objects with other keys: $bad"
bad=$(jq -r '.[] | select((.implemented | type) != "boolean" or (.modelled | type) != "boolean"
	or (.code | test("^0x[0-9A-F]+$") | not)) | .name' "$out")
[ -z "$bad" ] || fail "bad field types: $bad"

# every A75 catalog event, with the catalog's code
want=$(jq -r '.events[] | "\(.name) \(.code | ascii_upcase | sub("^0X"; "0x"))"' \
	"$DPMU_SOURCE_DIR/data/events/cortex-a75.json" | sort)
got=$(jq -r '.[] | select(.pmu == "core:Cortex-A75") | "\(.name) \(.code)"' "$out" | sort)
[ "$want" = "$got" ] || fail "A75 events differ: want $(echo "$want" | wc -l), got $(echo "$got" | wc -l)"
[ "$(echo "$want" | wc -l)" -ge 100 ] || fail "the A75 catalog looks short"

# PMCEID-described events agree with the profile (CPU_CYCLES, INST_RETIRED),
# the cluster PMU lists the DSU's L3 events, the AMU its constant clock.
jq -e '.[] | select(.pmu == "core:Cortex-A75" and .name == "CPU_CYCLES") | .implemented and .modelled' "$out" >/dev/null ||
	fail "CPU_CYCLES implemented and modelled"
jq -e '.[] | select(.pmu == "cluster:cluster0" and .name == "L3D_CACHE") | .code == "0x2B" and .implemented' "$out" >/dev/null ||
	fail "cluster0 L3D_CACHE"
jq -e '.[] | select(.pmu == "amu:Cortex-A75" and .name == "CNT_CYCLES") | .code == "0x4004" and .implemented' "$out" >/dev/null ||
	fail "AMU CNT_CYCLES"
# an event the simulator does not produce says so
jq -e '.[] | select(.pmu == "core:Cortex-A75" and .name == "MEMORY_ERROR") | .modelled == false' "$out" >/dev/null ||
	fail "MEMORY_ERROR not modelled"

# "modelled" agrees with docs/events.md's "produced" column (exact,
# approximate or model) for every core-PMU event of both core types
ev="$DPMU_SOURCE_DIR/docs/events.md"
if [ -f "$ev" ]; then
	doc=$(awk -F'|' '/^## DSU/ { stop = 1 } !stop && /^\| 0x/ {
		gsub(/ /, "", $3); gsub(/ /, "", $5); if ($5 != "never") print $3 }' "$ev" | sort -u)
	got=$(jq -r '.[] | select((.pmu | startswith("core:")) and .modelled) | .name' "$out" | sort -u)
	[ "$doc" = "$got" ] || fail "modelled core events differ from docs/events.md: $(printf '%s\n' "$doc" >"$out.d"; printf '%s\n' "$got" | diff "$out.d" - | tr '\n' ' ')"
	rm -f "$out.d"
fi

# the DSU-120 profile lists its own numbering
"$DYNPMU" list --json --profile a75x4-a55x4-dsu120 >"$out"
jq -e '.[] | select(.pmu == "cluster:cluster0" and .name == "L3_ACCESS") | .code == "0x4000" and .implemented and .modelled' "$out" >/dev/null ||
	fail "DSU-120 L3_ACCESS"

# bad input: a clear message and exit 2
if "$DYNPMU" list --profile no-such-profile >/dev/null 2>"$out"; then fail "unknown profile accepted"; fi
grep -q "no built-in profile 'no-such-profile'" "$out" || fail "unknown profile message: $(cat "$out")"
if "$DYNPMU" list --bogus >/dev/null 2>"$out"; then fail "unknown option accepted"; fi
grep -q "unknown option '--bogus'" "$out" || fail "unknown option message"
echo "ok"
