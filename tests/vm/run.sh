#!/bin/sh
# Boot the real arm64 Linux kernel (tests/vm/fetch.sh) under
# qemu-system-aarch64 with a busybox initramfs, run one shell script in it
# next to the given static aarch64 programs, and hand back what it printed.
#
# Usage: tests/vm/run.sh [-k VMLINUZ] [-b BUSYBOX] [-o OUT] [-t SECONDS]
#                        [-a ATTEMPTS] SCRIPT [FILE...] [-- ARG...]
#   SCRIPT   run in the guest as `sh ./script.sh ARG...` in /test, as root,
#            after /init has mounted proc, sysfs and devtmpfs, set
#            perf_event_paranoid to -1, turned address-space randomisation
#            off and kernel messages off the console
#   FILE     copied into the guest's /test under its own name (mode kept)
#   -k       the kernel image (default: CACHE/vmlinuz)
#   -b       the static aarch64 busybox (default: CACHE/busybox)
#   -o OUT   the script's standard output goes to OUT (default: this
#            script's standard output); the whole serial console to OUT.console
#   -t       seconds before the VM is stopped (default 120)
#   -a       boot up to ATTEMPTS times while the VM fails (exit 3), saying
#            so each time (default 1): for a guest script whose own runs
#            have timeouts, so that exit 3 means qemu stalled, as it was
#            once seen to under load on a 2-core machine
#   CACHE is fetch.sh's: $DPMU_VM_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/dynpmu-vm.
# The guest script's standard error is shown on this script's standard error.
# Exit status: the guest script's; 2 on bad usage; 3 when the VM failed (no
# qemu-system-aarch64, the kernel never reached /init, the time ran out, the
# script's output was not all seen).
# The machine: -M virt -cpu max -smp 2 -m 1G -icount shift=0, so the PMU's
# INST_RETIRED counts exactly (docs/hardware.md).
set -eu

usage() { echo "run.sh: $*" >&2; echo "usage: run.sh [-k VMLINUZ] [-b BUSYBOX] [-o OUT] [-t SECONDS] [-a ATTEMPTS] SCRIPT [FILE...] [-- ARG...]" >&2; exit 2; }
vmfail() { echo "run.sh: $*" >&2; exit 3; }

cache="${DPMU_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dynpmu-vm}"
kernel="" busybox="" out="" secs=120 attempts=1
while getopts k:b:o:t:a:h opt; do
  case "$opt" in
    k) kernel=$OPTARG ;;
    b) busybox=$OPTARG ;;
    o) out=$OPTARG ;;
    t) secs=$OPTARG ;;
    a) attempts=$OPTARG ;;
    h) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) usage "unknown option" ;;
  esac
done
shift $((OPTIND - 1))
[ -n "$kernel" ] || kernel="$cache/vmlinuz"
[ -n "$busybox" ] || busybox="$cache/busybox"
case "$secs" in ''|*[!0-9]*) usage "-t wants a whole number of seconds, not '$secs'" ;; esac
[ "$secs" -gt 0 ] || usage "-t wants at least 1 second"
case "$attempts" in ''|*[!0-9]*|0) usage "-a wants a whole number of attempts, at least 1, not '$attempts'" ;; esac
if [ "$attempts" -gt 1 ]; then
  # Each attempt is this script with -a 1 and the same operands.
  n=1
  while :; do
    rc=0
    sh "$0" ${kernel:+-k "$kernel"} ${busybox:+-b "$busybox"} ${out:+-o "$out"} -t "$secs" "$@" || rc=$?
    [ "$rc" -eq 3 ] && [ "$n" -lt "$attempts" ] || exit "$rc"
    n=$((n + 1))
    echo "run.sh: the VM failed (above); booting it again, attempt $n of $attempts" >&2
  done
fi
[ $# -ge 1 ] || usage "no guest script given"
script=$1; shift
[ -f "$script" ] || usage "guest script '$script' not found"
[ -f "$kernel" ] || usage "kernel image '$kernel' not found (tests/vm/fetch.sh fetches it)"
[ -f "$busybox" ] || usage "busybox '$busybox' not found (tests/vm/fetch.sh fetches it)"
command -v qemu-system-aarch64 >/dev/null 2>&1 ||
  vmfail "qemu-system-aarch64 not found (Debian package qemu-system-arm; scripts/deps.sh test installs it)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root="$tmp/root"
mkdir -p "$root/bin" "$root/test"
cp "$busybox" "$root/bin/busybox"
chmod 755 "$root/bin/busybox"
cp "$script" "$root/test/script.sh"
files=0
while [ $# -gt 0 ]; do
  [ "$1" = "--" ] && { shift; break; }
  [ -f "$1" ] || usage "file '$1' not found"
  name=$(basename "$1")
  [ ! -e "$root/test/$name" ] || usage "two files named '$name' (or one named script.sh)"
  cp -p "$1" "$root/test/$name"
  files=$((files + 1))
  shift
done

# The guest script's arguments, each in single quotes for the guest's shell.
args=""
for a in "$@"; do
  args="$args '$(printf '%s' "$a" | sed "s/'/'\\\\''/g")'"
done

# Markers on lines of their own; the guest's output between them is the
# script's standard output, cat'ed whole after the script ended, so nothing
# the script writes to standard error can fall between its lines.
cat >"$root/init" <<EOF
#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /tmp
/bin/busybox --install -s /bin
mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
# Kernel messages off the console: they must not land inside the output.
echo 1 >/proc/sys/kernel/printk
# The same addresses every run, so that whole programs count exactly the
# same (string functions' paths depend on alignment).
echo 0 >/proc/sys/kernel/randomize_va_space
# Unprivileged-style limits off: the test measures the kernel's PMU, not its policy.
echo -1 >/proc/sys/kernel/perf_event_paranoid
echo "@@dynpmu-vm: init \$(cut -d' ' -f1 /proc/uptime)@@"
cd /test
sh ./script.sh$args >/tmp/out
rc=\$?
echo "@@dynpmu-vm: begin@@"
cat /tmp/out
# The end marker on a line of its own, after output without a last newline too.
[ -z "\$(tail -c 1 /tmp/out)" ] || echo
echo "@@dynpmu-vm: end \$rc@@"
poweroff -f
EOF
chmod 755 "$root/init"

# The initramfs: a cpio "newc" archive (the kernel's initramfs format, see
# Documentation/driver-api/early-userspace/buffer-format.rst), written here
# rather than with cpio(1) so that /dev/console can be a device node without
# root. Each entry: "070701", 13 fields of 8 hex digits (ino, mode, uid, gid,
# nlink, mtime, filesize, devmajor, devminor, rdevmajor, rdevminor, namesize
# with its NUL, check), the name, NUL padding to 4 bytes, the data, padding.
ino=0
pad4() { n=$(( (4 - $1 % 4) % 4 )); [ "$n" -eq 0 ] || head -c "$n" /dev/zero; }
newc() { # NAME MODE SIZE RDEVMAJOR RDEVMINOR [FILE]
  ino=$((ino + 1))
  namesize=$(( ${#1} + 1 ))
  printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X' \
    "$ino" "$2" 0 0 1 0 "$3" 0 0 "$4" "$5" "$namesize" 0
  printf '%s\0' "$1"
  pad4 $((110 + namesize))
  if [ -n "${6:-}" ]; then cat "$6"; pad4 "$3"; fi
}
{
  newc dev $((0040755)) 0 0 0
  newc dev/console $((0020600)) 0 5 1
  newc proc $((0040755)) 0 0 0
  newc sys $((0040755)) 0 0 0
  newc tmp $((0041777)) 0 0 0
  (cd "$root" && find . -mindepth 1 | sed 's|^\./||' | sort) | while read -r p; do
    if [ -d "$root/$p" ]; then
      newc "$p" $((0040755)) 0 0 0
    else
      size=$(wc -c <"$root/$p")
      mode=$((0100644)); [ -x "$root/$p" ] && mode=$((0100755))
      newc "$p" "$mode" "$size" 0 0 "$root/$p"
    fi
  done
  newc 'TRAILER!!!' 0 0 0 0
} | gzip -1 >"$tmp/initrd.gz"

console="$tmp/console"
t0=$(date +%s.%N)
rc=0
timeout -k 5 "$secs" qemu-system-aarch64 -M virt -cpu max -smp 2 -m 1G -nographic -nic none \
  -no-reboot -icount shift=0 -kernel "$kernel" -initrd "$tmp/initrd.gz" \
  -append "console=ttyAMA0 panic=-1 quiet" </dev/null >"$console.raw" 2>&1 || rc=$?
t1=$(date +%s.%N)
tr -d '\r' <"$console.raw" >"$console"
[ -z "$out" ] || cp "$console" "$out.console"

show_console() { echo "run.sh: the serial console said:" >&2; tail -n 40 "$console" | sed 's/^/  | /' >&2; }
if ! grep -q '^@@dynpmu-vm: init ' "$console"; then
  show_console
  [ "$rc" -eq 124 ] && vmfail "the kernel did not reach /init within $secs s"
  vmfail "the kernel did not reach /init (qemu-system-aarch64 exited $rc)"
fi
up=$(sed -n 's/^@@dynpmu-vm: init \([0-9.]*\)@@$/\1/p' "$console")
# What the guest script wrote to standard error (and anything else on the
# console between /init and the output).
sed -n '/^@@dynpmu-vm: init /,/^@@dynpmu-vm: begin@@$/{/^@@dynpmu-vm: /d;p}' "$console" >&2
endline=$(grep '^@@dynpmu-vm: end [0-9]*@@$' "$console" | tail -n 1 || true)
if ! grep -q '^@@dynpmu-vm: begin@@$' "$console" || [ -z "$endline" ]; then
  show_console
  [ "$rc" -eq 124 ] && vmfail "the guest script did not finish within $secs s"
  vmfail "the guest stopped before the script's output was all out (qemu-system-aarch64 exited $rc)"
fi
grc=$(echo "$endline" | sed 's/^@@dynpmu-vm: end \([0-9]*\)@@$/\1/')
if [ -n "$out" ]; then
  sed -n '/^@@dynpmu-vm: begin@@$/,/^@@dynpmu-vm: end [0-9]*@@$/{/^@@dynpmu-vm: /d;p}' "$console" >"$out"
else
  sed -n '/^@@dynpmu-vm: begin@@$/,/^@@dynpmu-vm: end [0-9]*@@$/{/^@@dynpmu-vm: /d;p}' "$console"
fi
echo "run.sh: kernel up in ${up} s (guest clock), VM ran $(echo "$t0 $t1" | awk '{printf "%.1f", $2 - $1}') s, guest script exited $grc" >&2
exit "$grc"
