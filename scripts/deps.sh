#!/bin/sh
# Install the Debian packages dynpmu needs, or say how to.
# Usage: scripts/deps.sh build|test|demo
set -eu
want="$1"
pkgs="cmake make gcc pkg-config libjansson-dev libcapstone-dev libdw-dev libopencsd-dev libmicrohttpd-dev"
case "$want" in
  test) pkgs="$pkgs clang libclang-rt-14-dev libcmocka-dev spin qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross libxml2-utils jq procps linux-perf prometheus curl qemu-system-arm" ;;
  # the static perf-only dynpmu for arm64 (make perf-aarch64); the target's
  # libjansson.a comes from scripts/arm64-jansson.sh, not from installing
  # an :arm64 package (that would bring libc6:arm64 into /lib/aarch64-linux-gnu,
  # where qemu-aarch64 -L then finds it for the cross sysroot's programs)
  perf-aarch64) pkgs="cmake make pkg-config gcc-aarch64-linux-gnu libc6-dev-arm64-cross libjansson-dev" ;;
  demo) pkgs="$pkgs qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross" ;;
  build) ;;
  *) echo "deps.sh: unknown target '$want' (build, test, demo or perf-aarch64)" >&2; exit 2 ;;
esac
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "dynpmu: installing$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends $missing >&2
  else
    echo "dynpmu: missing Debian packages:$missing" >&2
    echo "run: sudo apt-get install -y$missing" >&2
    exit 1
  fi
fi
# The VM tests' arm64 kernel and busybox (Debian arm64 packages, unpacked
# into a cache, not installed): tests/vm/fetch.sh, which does nothing when
# they are cached and, like this script, says what to run when not root.
if [ "$want" = test ]; then
  "$(dirname "$0")/../tests/vm/fetch.sh"
fi
