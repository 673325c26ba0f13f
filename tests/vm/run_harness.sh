#!/bin/sh
# ctest vm/run_harness: tests/vm/run.sh itself: bad usage is refused with
# exit 2, a kernel that never comes up is exit 3 with its message (booted
# again under -a), and a guest script's standard output, standard error,
# arguments and exit status come back as they were.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# want RC TEXT CMD...: exit status RC and TEXT in the standard error
want() {
  w=$1 text=$2; shift 2
  "$@" >"$tmp/o" 2>"$tmp/e"
  r=$?
  [ "$r" -eq "$w" ] || fail "'$*' exited $r, want $w; stderr: $(tail -n 3 "$tmp/e")"
  grep -qF -- "$text" "$tmp/e" || fail "'$*': stderr lacks '$text': $(tail -n 3 "$tmp/e")"
}

printf 'echo "out: $1|$2"\necho "err: here" >&2\nexit 7\n' >"$tmp/g.sh"
echo data >"$tmp/file.txt"
want 2 "no guest script given" sh "$here/run.sh"
want 2 "guest script '$tmp/none.sh' not found" sh "$here/run.sh" "$tmp/none.sh"
want 2 "-t wants a whole number" sh "$here/run.sh" -t 1x "$tmp/g.sh"
want 2 "-a wants a whole number of attempts" sh "$here/run.sh" -a 0 "$tmp/g.sh"
want 2 "file '$tmp/none' not found" sh "$here/run.sh" "$tmp/g.sh" "$tmp/none"
want 2 "kernel image '$tmp/none' not found" sh "$here/run.sh" -k "$tmp/none" "$tmp/g.sh"
want 2 "two files named 'file.txt'" sh "$here/run.sh" "$tmp/g.sh" "$tmp/file.txt" "$tmp/file.txt"
# Not a kernel: nothing ever reaches /init.
head -c 65536 /dev/zero >"$tmp/junk"
want 3 "the kernel did not reach /init" sh "$here/run.sh" -k "$tmp/junk" -t 5 "$tmp/g.sh"
# -a: a VM that fails (exit 3) is booted again, up to the attempts given.
want 3 "booting it again, attempt 2 of 2" sh "$here/run.sh" -a 2 -k "$tmp/junk" -t 3 "$tmp/g.sh"
[ "$(grep -c 'the kernel did not reach /init' "$tmp/e")" -eq 2 ] ||
  fail "-a 2: $(grep -c 'the kernel did not reach /init' "$tmp/e") failed boots reported, want 2"

# A real boot: arguments with a space and a quote, a file, the exit status.
# The last line lacks its newline: the end marker must still be found.
# With -a 2, through run.sh's second call: the operands as they were, and
# the script's own failure (7) not booted again.
printf 'echo "out: $1|$2"\necho "err: here" >&2\ncat file.txt\nprintf tail\nexit 7\n' >"$tmp/g.sh"
want 7 "err: here" sh "$here/run.sh" -a 2 -t "${DPMU_VM_TIMEOUT:-240}" -o "$tmp/out" "$tmp/g.sh" "$tmp/file.txt" -- "a b" "it's"
printf 'out: a b|it'"'"'s\ndata\ntail\n' >"$tmp/want"
cmp -s "$tmp/out" "$tmp/want" || fail "the guest's output came back as '$(cat "$tmp/out")'"
[ -s "$tmp/out.console" ] || fail "no console log in OUT.console"
grep -q "booting it again" "$tmp/e" && fail "-a 2: a guest script's own exit (7) was booted again"
[ "$failures" -eq 0 ] && echo PASS
exit "$failures"
