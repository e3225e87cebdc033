#!/bin/bash
# fetch-liburing.sh CACHE VERSION: build liburing VERSION (Debian's source
# package, from forky or sid through a private apt state: bookworm's and
# trixie's liburing predate io_uring zero-copy receive) as a static library,
# installed under CACHE/liburing-VERSION/{include,lib}. Prints that directory.
#
# The kernel's iou-zcrx selftest helper links it statically, so that the
# guest (Debian trixie, liburing 2.9) runs it without a newer liburing.
set -euo pipefail
cache=$1
version=$2
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=scripts/lib/aptsrc.sh
. "$here/lib/aptsrc.sh"

die() {
	echo "fetch-liburing: $*" >&2
	exit 1
}
dest="$cache/liburing-$version"
if [ -f "$dest/.devmemsim-built" ]; then
	echo "$dest"
	exit 0
fi
for tool in make gcc dpkg-source; do
	command -v "$tool" >/dev/null || die "missing: $tool (run scripts/bootstrap.sh)"
done
mirror=$(debian_mirror)
state="$cache/apt-src-liburing"
private_apt "$state" \
	"deb-src [signed-by=$DEBIAN_KEYRING] $mirror forky main" \
	"deb-src [signed-by=$DEBIAN_KEYRING] $mirror sid main" >&2
work="$cache/src/liburing-dl"
rm -rf "$work" "$dest"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
(cd "$work" && "${PAPT[@]}" --download-only source "liburing=$version" >&2) ||
	die "Debian's archive no longer carries liburing $version (forky, sid at $mirror); update LIBURING_VERSION in tools/devmemsim/build.py"
dpkg-source --no-check -x "$work"/liburing_*.dsc "$work/src" >&2
(cd "$work/src" && ./configure --prefix="$dest" >&2 && make -C src -j"$(nproc)" >&2 &&
	make -C src install >&2) || die "building liburing $version failed"
# Static linking only: no shared library next to liburing.a for -luring to find.
rm -f "$dest"/lib/liburing*.so*
[ -f "$dest/lib/liburing.a" ] || die "liburing.a was not installed"
touch "$dest/.devmemsim-built"
echo "$dest"
