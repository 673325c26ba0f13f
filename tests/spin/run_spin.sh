#!/bin/sh
# Check one Promela model with spin: generate the verifier, compile it, run it.
# Usage: run_spin.sh SPIN CC MODEL ok|violation [-DNAME ...]
#   ok         the verifier must report 0 errors
#   violation  it must report an assertion violation (or acceptance cycle)
set -eu
spin=$1; cc=$2; model=$3; expect=$4; shift 4
dir=$(mktemp -d "${TMPDIR:-/tmp}/dpmu-spin.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cp "$model" "$dir/model.pml"
cd "$dir"
"$spin" "$@" -a model.pml >spin.out 2>&1 || { cat spin.out; echo "spin -a failed"; exit 1; }
"$cc" -O2 -w -DSAFETY -o pan pan.c >cc.out 2>&1 || { cat cc.out; echo "pan did not compile"; exit 1; }
./pan -m100000 >pan.out 2>&1 || true
cat pan.out
errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.out | head -n 1)
[ -n "$errors" ] || { echo "no verdict from pan"; exit 1; }
case "$expect" in
  ok)
    [ "$errors" -eq 0 ] || { echo "FAIL: $model $*: expected to verify, pan found $errors error(s)"; exit 1; }
    grep -q "State-vector" pan.out || { echo "FAIL: no search was run"; exit 1; }
    # pan reports 0 errors for a search cut off at -m: that is no proof.
    ! grep -q "max search depth too small" pan.out ||
      { echo "FAIL: $model $*: search truncated at depth 100000"; exit 1; }
    echo "OK: $model $* verifies" ;;
  violation)
    [ "$errors" -ge 1 ] && grep -Eq "assertion violated|acceptance cycle" pan.out ||
      { echo "FAIL: $model $*: a broken variant was not rejected"; exit 1; }
    echo "OK: $model $* rejected as it must be" ;;
  *) echo "run_spin.sh: expect ok or violation"; exit 2 ;;
esac
