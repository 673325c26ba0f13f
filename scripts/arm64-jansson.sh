#!/bin/sh
# The target's static jansson for the perf-only aarch64 dynpmu (make
# perf-aarch64, docs/hardware.md): Debian's libjansson-dev:arm64, fetched
# with apt-get download and unpacked with dpkg -x into DIR, not installed.
# Installing an :arm64 package would bring libc6:arm64 into
# /lib/aarch64-linux-gnu, where qemu-aarch64 -L /usr/aarch64-linux-gnu then
# finds it before the cross sysroot's libc, and dynamic aarch64 programs
# (the simulation's workloads) mix two glibcs and hang.
# Usage: scripts/arm64-jansson.sh DIR; afterwards DIR/usr/lib/aarch64-linux-gnu/libjansson.a.
set -eu
dir="${1:?usage: scripts/arm64-jansson.sh DIR}"
lib="$dir/usr/lib/aarch64-linux-gnu/libjansson.a"
[ -f "$lib" ] && exit 0
mkdir -p "$dir"
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  if [ "$(id -u)" -eq 0 ]; then
    dpkg --add-architecture arm64
    apt-get update -qq >&2
  else
    echo "dynpmu: Debian's arm64 architecture is needed to fetch libjansson-dev:arm64" >&2
    echo "run: sudo dpkg --add-architecture arm64 && sudo apt-get update" >&2
    exit 1
  fi
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download -qq libjansson-dev:arm64 >&2) || {
  echo "dynpmu: apt-get download libjansson-dev:arm64 failed (run apt-get update?)" >&2
  exit 1
}
dpkg -x "$tmp"/libjansson-dev_*_arm64.deb "$dir"
[ -f "$lib" ] || { echo "dynpmu: $lib not in libjansson-dev:arm64" >&2; exit 1; }
