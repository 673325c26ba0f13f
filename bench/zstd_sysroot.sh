#!/bin/sh
# A sysroot holding Debian's arm64 zstd and the libraries it loads, for the
# front end's second benchmark workload (bench/frontend_mips.sh): the C
# library from the cross toolchain (libc6-dev-arm64-cross, as the tests use),
# the rest from Debian's arm64 packages, unpacked, not installed.
# Usage: bench/zstd_sysroot.sh DIR
set -eu
D=${1:?usage: zstd_sysroot.sh DIR}
PKGS="zstd:arm64 libzstd1:arm64 liblzma5:arm64 liblz4-1:arm64 zlib1g:arm64"
[ -d /usr/aarch64-linux-gnu/lib ] || {
	echo "zstd_sysroot: /usr/aarch64-linux-gnu/lib is missing: apt-get install libc6-dev-arm64-cross" >&2
	exit 1
}
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	if [ "$(id -u)" != 0 ]; then
		echo "zstd_sysroot: Debian's arm64 packages are not enabled; as root:" >&2
		echo "  dpkg --add-architecture arm64 && apt-get update" >&2
		exit 1
	fi
	dpkg --add-architecture arm64
	apt-get update -q >/dev/null
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# apt-get download writes into the current directory as the _apt user
chmod 777 "$T"
(cd "$T" && apt-get download -q $PKGS >/dev/null) || {
	echo "zstd_sysroot: could not download $PKGS (run apt-get update?)" >&2
	exit 1
}
mkdir -p "$D/lib"
for p in "$T"/*.deb; do
	dpkg-deb -x "$p" "$D"
done
cp -a /usr/aarch64-linux-gnu/lib/. "$D/lib/"
[ -x "$D/usr/bin/zstd" ] || { echo "zstd_sysroot: $D/usr/bin/zstd is missing after unpacking" >&2; exit 1; }
echo "$D"
