# Helpers for the integration sh tests (sourced; not a test itself).
# $DYNPMU is the binary, $DPMU_SOURCE_DIR the source tree.
set -u
: "${DYNPMU:?DYNPMU must name the dynpmu binary}"
: "${DPMU_SOURCE_DIR:?DPMU_SOURCE_DIR must name the source tree}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# run WANT_RC CMD...: run, keep stdout/stderr in $tmp/out, $tmp/err
run() {
	want=$1; shift
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq "$want" ] || fail "'$*' exited $rc, want $want; stderr: $(cat "$tmp/err")"
}

# has FILE TEXT: FILE (out or err) contains the fixed string TEXT
has() { grep -qF -- "$2" "$tmp/$1" || fail "$1 of the last command lacks '$2'"; }

finish() { [ "$failures" -eq 0 ] && echo PASS; exit "$failures"; }
