#!/bin/sh
# The case-study workloads (docs/workloads.md) run under plain qemu-aarch64:
# every variant exits 0 with its one checksum line; the variants of a pair
# that compute the same result print the same checksum (naive and blocked
# matmul, branchy and branchless sums, aos and sparse traversal, shared and
# padded counters); the kernels keep the shapes their case study needs in the
# disassembly; bad arguments are refused with a message and exit 2.
# Without the cross-built programs or qemu-aarch64 the test reports SKIP and
# exits 77 (scripts/deps.sh test installs both).
. "$DPMU_SOURCE_DIR/tests/integration/lib/check.sh"

wl="$(dirname "$DYNPMU")/workloads"
qemu=$(command -v qemu-aarch64 || true)
if [ -z "$qemu" ] || [ ! -x "$wl/matmul" ]; then
	echo "SKIP: need qemu-aarch64 and the workloads in $wl (aarch64-linux-gnu-gcc)"
	exit 77
fi

# checksum PROG VARIANT [ARGS...]: run it, check the report line, print the checksum.
checksum() {
	prog=$1; variant=$2
	run 0 "$qemu" "$wl/$@"
	line=$(cat "$tmp/out")
	case "$line" in
	"$prog $variant size="*" checksum=0x"*) ;;
	*) fail "$prog $variant: unexpected output '$line'" ;;
	esac
	echo "${line##*checksum=}"
}

# same PROG A B [ARGS...]: variants A and B print the same checksum.
same() {
	prog=$1; a=$2; b=$3; shift 3
	ca=$(checksum "$prog" "$a" "$@")
	cb=$(checksum "$prog" "$b" "$@")
	[ -n "$ca" ] && [ "$ca" = "$cb" ] || fail "$prog: $a ($ca) and $b ($cb) differ"
}

same matmul naive blocked
same matmul naive blocked 40          # N not a multiple of the 32-element tile
same matmul naive blocked 42          # nor the tail of a tile a multiple of the 4 columns
same branches branchy branchless
same branches branchy branchless 1000 3
same traversal aos sparse
same traversal aos sparse 1000 2
same false_sharing shared padded
same false_sharing shared padded 2 1000
same false_sharing shared padded 8 1000

# The stream kernels compute different things; each is deterministic.
for v in triad copy scale add; do
	c1=$(checksum stream $v 4096 2)
	c2=$(checksum stream $v 4096 2)
	[ "$c1" = "$c2" ] || fail "stream $v: two runs differ ($c1, $c2)"
done
[ "$(checksum stream triad 4096 1)" != "$(checksum stream copy 4096 1)" ] ||
	fail "stream triad and copy should not agree"

# phases: both runs report; the phased run's checksum differs from the
# steady one's (its phases did other work).
[ "$(checksum phases phased 1)" != "$(checksum phases steady 1)" ] ||
	fail "phases phased and steady should not agree"

# The result depends on the size (the work is really done).
[ "$(checksum matmul naive 64)" != "$(checksum matmul naive 65)" ] ||
	fail "matmul: N=64 and N=65 give the same checksum"

# Seed 003 section 6.2 needs the shapes, not just the sums: branchy keeps a
# conditional branch on the data (two conditional branches in the loop),
# branchless has only the loop's back edge and a conditional select.
objdump=$(command -v aarch64-linux-gnu-objdump || true)
if [ -n "$objdump" ]; then
	"$objdump" -d --no-show-raw-insn "$wl/branches" >"$tmp/dis" || fail "objdump failed"
	fn() { awk "/<$1>:/{p=1;next} p&&/^$/{exit} p" "$tmp/dis"; }
	condbr='[[:space:]](b\.[a-z]+|cbn?z|tbn?z)[[:space:]]'
	ny=$(fn dpmu_branches_branchy | grep -cE "$condbr")
	nl=$(fn dpmu_branches_branchless | grep -cE "$condbr")
	# Both start with a `cbz` for n == 0; branchy adds the data branch.
	[ "$ny" -ge 3 ] || fail "branchy has $ny conditional branches, want the data branch too"
	[ "$nl" -le 2 ] || fail "branchless has $nl conditional branches, want only the loop's"
	fn dpmu_branches_branchless | grep -qE '[[:space:]](csel|csetm|cset|csinv|csneg)[[:space:]]' ||
		fail "branchless uses no conditional select"
fi

# Bad input: a message naming the argument, exit 2, never a crash.
run 2 "$qemu" "$wl/matmul"
has err "missing VARIANT"
run 2 "$qemu" "$wl/matmul" tiled
has err "unknown variant 'tiled'"
has err "blocked"
run 2 "$qemu" "$wl/matmul" naive 0
has err "N '0' is not a number from 1 to 1024"
run 2 "$qemu" "$wl/branches" branchy 12x
has err "N '12x'"
run 2 "$qemu" "$wl/traversal" aos 100 -1
has err "PASSES '-1'"
run 2 "$qemu" "$wl/false_sharing" shared 9
has err "THREADS '9' is not a number from 2 to 8"
run 2 "$qemu" "$wl/stream" triad 10 1 extra
has err "unexpected argument 'extra'"
run 2 "$qemu" "$wl/phases" phased 0
has err "INSNS_M '0' is not a number from 1 to 1000"
finish
