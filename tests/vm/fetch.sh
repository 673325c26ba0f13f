#!/bin/sh
# Fetch the real arm64 Linux kernel and the busybox the VM tests boot
# (docs/hardware.md, "Testing against a real kernel"): Debian's arm64 kernel
# package, the one linux-image-arm64:arm64 depends on, and busybox-static:arm64,
# both unpacked with dpkg -x into a cache directory so that later runs reuse
# them and need no network.
#
# Usage: tests/vm/fetch.sh [CACHE_DIR]
#   CACHE_DIR defaults to $DPMU_VM_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/dynpmu-vm.
# On success CACHE_DIR/vmlinuz and CACHE_DIR/busybox are the kernel image and
# the static busybox, and CACHE_DIR/VERSION names the two packages.
# As scripts/deps.sh does: as root it changes the system (adds the arm64
# architecture, apt-get update); otherwise it prints the command to run and
# fails. Exit 0 on success, 1 when something is missing, 2 on bad usage.
set -eu

case "${1:-}" in
  -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  -*) echo "fetch.sh: unknown option '$1' (usage: fetch.sh [CACHE_DIR])" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "fetch.sh: too many arguments (usage: fetch.sh [CACHE_DIR])" >&2; exit 2; }
cache="${1:-${DPMU_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dynpmu-vm}}"

say() { echo "fetch.sh: $*" >&2; }
die() { say "$*"; exit 1; }

# A complete cache is used as it is: no apt, no network.
if [ -f "$cache/vmlinuz" ] && [ -x "$cache/busybox" ] && [ -f "$cache/VERSION" ]; then
  exit 0
fi

root=0
[ "$(id -u)" -eq 0 ] && root=1
for tool in dpkg apt-get apt-cache; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found: the VM tests need a Debian system (apt and dpkg)"
done

# apt sees arm64 packages only once the architecture is added.
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  if [ "$root" -eq 1 ]; then
    say "adding the arm64 architecture to dpkg (for the guest kernel and busybox)"
    dpkg --add-architecture arm64
    need_update=1
  else
    say "dpkg lacks the arm64 architecture, which the guest kernel and busybox come from"
    say "run: sudo dpkg --add-architecture arm64 && sudo apt-get update"
    exit 1
  fi
fi

# The kernel package's name carries its ABI (linux-image-6.1.0-N-arm64);
# the metapackage says which one is current.
kernel_pkg() {
  apt-cache depends linux-image-arm64:arm64 2>/dev/null |
    sed -n 's/^ *Depends: \(linux-image-[0-9][^:]*\)\(:arm64\)\{0,1\}$/\1/p' | head -n 1
}
has_candidate() {
  apt-cache policy "$1" 2>/dev/null | grep -q 'Candidate: [^(]'
}
kpkg=$(kernel_pkg)
if [ "${need_update:-0}" -eq 1 ] || [ -z "$kpkg" ] || ! has_candidate busybox-static:arm64; then
  if [ "$root" -eq 1 ]; then
    say "apt-get update (the arm64 package lists)"
    apt-get update -qq >&2 || die "apt-get update failed (no network, or no Debian mirror reachable?)"
    kpkg=$(kernel_pkg)
  else
    say "apt knows no arm64 kernel or busybox-static:arm64 (package lists not updated?)"
    say "run: sudo apt-get update"
    exit 1
  fi
fi
[ -n "$kpkg" ] || die "apt-cache depends linux-image-arm64:arm64 names no kernel package (is a Debian 12 arm64 source in the apt sources?)"
has_candidate "$kpkg:arm64" || die "no candidate for $kpkg:arm64 (apt-cache policy $kpkg:arm64)"
has_candidate busybox-static:arm64 || die "no candidate for busybox-static:arm64 (apt-cache policy busybox-static:arm64)"

# Download and unpack into a fresh temporary directory, then move the
# pieces in: a run that fails half-way leaves no half-filled cache.
mkdir -p "$cache" || die "cannot create the cache directory $cache"
work=$(mktemp -d) || die "cannot create a temporary directory"
trap 'rm -rf "$work"' EXIT
# apt-get download run as root writes as its sandbox user, _apt.
[ "$root" -eq 0 ] || chown _apt "$work" 2>/dev/null || true
for pkg in "$kpkg:arm64" busybox-static:arm64; do
  say "apt-get download $pkg"
  (cd "$work" && apt-get download -qq "$pkg" >&2) ||
    die "apt-get download $pkg failed (no network, or the package is gone from the mirror: try apt-get update)"
done
for deb in "$work"/*.deb; do
  dpkg -x "$deb" "$work/root" || die "dpkg -x $(basename "$deb") failed"
done

# The kernel image: the package holds exactly one /boot/vmlinuz-*.
kimg=$(ls "$work"/root/boot/vmlinuz-* 2>/dev/null | head -n 1)
[ -n "$kimg" ] || die "$kpkg holds no /boot/vmlinuz-* (package layout changed?)"
bb="$work/root/bin/busybox"
[ -f "$bb" ] || die "busybox-static:arm64 holds no /bin/busybox (package layout changed?)"
# Both must really be arm64; the first bytes say so without running them.
# ELF: e_machine (offset 18) is 183 (EM_AARCH64, 0xb7).
[ "$(od -An -tu1 -j18 -N1 "$bb" | tr -d ' ')" = 183 ] || die "$bb is not an aarch64 ELF file"

cp "$kimg" "$cache/vmlinuz.new" && mv "$cache/vmlinuz.new" "$cache/vmlinuz"
cp "$bb" "$cache/busybox.new" && chmod 755 "$cache/busybox.new" && mv "$cache/busybox.new" "$cache/busybox"
bbver=$(dpkg-deb -f "$work"/busybox-static_*.deb Version)
kver=$(dpkg-deb -f "$work"/"$kpkg"_*.deb Version)
printf '%s %s\nbusybox-static %s\n' "$kpkg" "$kver" "$bbver" >"$cache/VERSION"
say "cached in $cache: $(basename "$kimg") ($kpkg $kver), busybox-static $bbver"
