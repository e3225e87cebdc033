#!/bin/bash
# fetch-qemu.sh CACHE VERSION: fetch Debian's qemu source package VERSION with
# 'apt-get source' through a private apt state (deb-src for the suites that
# carry it) and unpack it, Debian's patch series applied, into
# CACHE/src/qemu-VERSION. Prints that directory.
set -euo pipefail
cache=$1
version=$2
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=scripts/lib/aptsrc.sh
. "$here/lib/aptsrc.sh"

dest="$cache/src/qemu-${version#*:}"
if [ -f "$dest/.devmemsim-unpacked" ]; then
	echo "$dest"
	exit 0
fi
mirror=$(debian_mirror)
state="$cache/apt-src"
private_apt "$state" \
	"deb-src [signed-by=$DEBIAN_KEYRING] $mirror trixie main" \
	"deb-src [signed-by=$DEBIAN_KEYRING] $mirror trixie-updates main" >&2
work="$cache/src/qemu-dl"
rm -rf "$work" "$dest"
mkdir -p "$work"
echo "fetch-qemu: apt-get source qemu=$version" >&2
if ! (cd "$work" && "${PAPT[@]}" --download-only source "qemu=$version" >&2); then
	echo "fetch-qemu: Debian's archive no longer carries qemu $version" \
		"(looked in trixie and trixie-updates at $mirror); update QEMU_VERSION" >&2
	exit 1
fi
dsc=$(ls "$work"/qemu_*.dsc)
dpkg-source --no-check -x "$dsc" "$dest" >&2
touch "$dest/.devmemsim-unpacked"
rm -rf "$work"
echo "$dest"
