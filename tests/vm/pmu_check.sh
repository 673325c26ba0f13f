#!/bin/sh
# ctest vm/pmu_check: boot the real arm64 kernel (tests/vm/run.sh) and run
# guest/pmu_check in it, the facts dynpmu's perf backend builds on, checked
# with perf_event_open itself (docs/hardware.md, "Testing against a real
# kernel"). PMU_CHECK is the cross-built static pmu_check.
set -u
: "${PMU_CHECK:?PMU_CHECK must name the static aarch64 pmu_check}"
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -x "$PMU_CHECK" ] || { echo "FAIL: $PMU_CHECK is not an executable (build the vm_guest target)" >&2; exit 1; }

rc=0
sh "$here/run.sh" -a 2 -t "${DPMU_VM_TIMEOUT:-120}" -o "$tmp/out" "$here/guest/pmu_check.sh" "$PMU_CHECK" || rc=$?
cat "$tmp/out"
[ "$rc" -eq 3 ] && { echo "FAIL: the VM did not run (run.sh's message above)" >&2; exit 1; }
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
[ "$rc" -eq 0 ] || fail "pmu_check exited $rc in the guest"
grep -q '^not ok' "$tmp/out" && fail "checks failed in the guest: $(grep '^not ok' "$tmp/out" | cut -c1-200)"
# A pmu_check that stopped early must not pass: every check ran, none failed.
grep -qx 'summary 21 checks, 0 failed' "$tmp/out" || fail "pmu_check did not report all 21 checks passing"
[ "$(grep -c '^ok ' "$tmp/out")" -eq 21 ] || fail "$(grep -c '^ok ' "$tmp/out") ok lines, want 21"
# The constant is the same for the generic and the raw event (checked in
# the guest); here only that it was measured.
grep -q '^figure constant_raw [0-9][0-9]*$' "$tmp/out" || fail "no measured constant"
[ "$failures" -eq 0 ] && echo PASS
exit "$failures"
