#!/bin/sh
# dynpmu demo (docs/demo.md): the four case studies through stat's path and
# seed 001 section 4.1's snapshot loop over a real workload. It must exit 0;
# each case study shows its effect, its advice fires on the slow variant
# only or, where the fix leaves a smaller problem, at half the figure at
# most (traversal: docs/demo.md says why; matmul: none is expected), and
# the fix takes fewer CPU_CYCLES (issue: time shows too); it writes a
# well-formed SVG with a panel group per case study and a line per variant;
# the snapshot loop prints a row per cpu and for cluster0 per snapshot, with
# PMSSRR's counters as per-interval deltas and PMCCNTR cumulative; the
# single-threaded case studies count the same in two runs.
# SKIP (exit 77) without qemu-aarch64 or the workloads.
. "$DPMU_SOURCE_DIR/tests/integration/lib/check.sh"

wl="$(dirname "$DYNPMU")/workloads"
if ! command -v qemu-aarch64 >/dev/null || [ ! -x "$wl/false_sharing" ]; then
	echo "SKIP: need qemu-aarch64 and the workloads in $wl"
	exit 77
fi

run 0 "$DYNPMU" demo --svg "$tmp/demo.svg"
cp "$tmp/out" "$tmp/demo.out"
for c in "matmul: naive vs blocked" "branches: branchy vs branchless" \
	"traversal: aos vs sparse" "false_sharing: shared vs padded"; do
	has out "$c"
done
# Every effect seen, every advice as expected.
[ "$(grep -c ': SEEN$' "$tmp/out")" -eq 4 ] || fail "want 4 effects SEEN: $(grep '=> effect' "$tmp/out")"
has out "summary: 4 of 4 case-study effects seen, advice as expected in 4 of 4, the fix faster in 4 of 4"
[ "$(grep -c '=> time: CPU_CYCLES .* is faster$' "$tmp/out")" -eq 4 ] ||
	fail "want the fix faster in every case: $(grep '=> time' "$tmp/out")"
has out "advice branch_layout: fires for branchy, silent for branchless (as expected)"
grep -q "advice data_locality: fires for aos, \(silent for sparse\|weaker for sparse (.*)\) (as expected)" "$tmp/out" ||
	fail "data_locality: $(grep 'advice data_locality' "$tmp/out")"
has out "advice false_sharing: fires for shared, silent for padded (as expected)"
# The false-sharing advice names the worker function (from --by-symbol).
grep -q "advice for shared: \[false_sharing\].*hottest symbols: fs_worker" "$tmp/out" ||
	fail "false-sharing advice does not name fs_worker"
grep -q "advice for padded: none fires" "$tmp/out" || fail "padded should fire no advice"
# Both variants of each program print the same checksum.
for p in matmul branches traversal false_sharing; do
	n=$(grep "^  ran $p " "$tmp/out" | sed 's/.*checksum=//' | sort -u | wc -l)
	[ "$n" -eq 1 ] || fail "$p: the two variants' checksums differ"
done
# False sharing at the strength of real cores: about one L1D refill per
# increment (4 x 250000) for shared, a few hundred for padded.
fr=$(awk '/^=== 4\/4/ { f = 1 } f && $1 == "L1D_CACHE_REFILL" { gsub(",", "", $2); print $2; exit }' "$tmp/out")
[ "${fr:-0}" -gt 500000 ] || fail "false_sharing shared: L1D_CACHE_REFILL ${fr:-none}, want ~1 per increment"

# The SVG: well-formed XML, one group per case study, each with both variants.
has out "chart: $tmp/demo.svg"
[ -s "$tmp/demo.svg" ] || fail "no SVG written"
if command -v xmllint >/dev/null; then
	xmllint --noout "$tmp/demo.svg" 2>"$tmp/xml" || fail "SVG not well-formed: $(cat "$tmp/xml")"
else
	python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$tmp/demo.svg" ||
		fail "SVG not well-formed"
fi
[ "$(grep -c 'dynpmu metrics over time:' "$tmp/demo.svg")" -eq 4 ] || fail "want 4 case charts"
for v in naive blocked branchy branchless aos sparse shared padded; do
	grep -q "data-unit=\"$v\"" "$tmp/demo.svg" || fail "SVG has no line for $v"
done

# The snapshot loop: every snapshot has a row per cpu and one for cluster0.
n=$(grep -c '^snapshot [0-9]*:' "$tmp/out")
[ "$n" -ge 3 ] || fail "want at least 3 snapshots, got $n"
[ "$(grep -c '^cpu0 ' "$tmp/out")" -eq "$n" ] || fail "want one cpu0 row per snapshot"
[ "$(grep -c '^cpu7 ' "$tmp/out")" -eq "$n" ] || fail "want one cpu7 row per snapshot"
[ "$(grep -c '^cluster0 ' "$tmp/out")" -eq "$n" ] || fail "want one cluster0 row per snapshot"
has out "PMSSRR = 0x7"
# PMCCNTR (column 8) is cumulative and never falls; +CPU_CYCLES (column 3)
# is a delta, so over the snapshots its sum equals the last PMCCNTR.
awk '$1 == "cpu1" && $2 ~ /^[0-9]+$/ { if ($8 < last) bad = 1; last = $8; sum += $3 }
     END { exit !(bad == 0 && sum == last && last > 0) }' "$tmp/out" ||
	fail "cpu1: PMCCNTR not cumulative or the +CPU_CYCLES deltas do not add up to it"

# Deterministic: a single-threaded case study counts the same twice.
run 0 "$DYNPMU" demo --case branches --svg "$tmp/b1.svg"
grep -v '^chart:' "$tmp/out" >"$tmp/b1"
run 0 "$DYNPMU" demo --case branches --svg "$tmp/b2.svg"
grep -v '^chart:' "$tmp/out" >"$tmp/b2"
cmp -s "$tmp/b1" "$tmp/b2" || fail "two runs of the branches case study differ"
cmp -s "$tmp/b1.svg" "$tmp/b2.svg" || fail "two charts of the branches case study differ"

# The snapshot loop alone, on the DSU-120 numbering, at most 2 snapshots.
run 0 "$DYNPMU" demo --snapshots --intervals 2 --profile a75x4-a55x4-dsu120
has out "L3_ACCESS"
[ "$(grep -c '^snapshot [0-9]*:' "$tmp/out")" -eq 2 ] || fail "--intervals 2: want 2 snapshots"
grep -q "=== 1/4" "$tmp/out" && fail "--snapshots ran the case studies"

# Bad input: a clear message and exit 2.
run 2 "$DYNPMU" demo --case nosuch
has err "--case 'nosuch'"
run 2 "$DYNPMU" demo --interval-us 0
has err "--interval-us needs a number"
finish
