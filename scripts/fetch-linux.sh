#!/bin/bash
# fetch-linux.sh CACHE [VERSION]
#
# Fetch Debian's linux-source-7.3 binary package (arch all; trixie-backports)
# through a private apt state (lib/aptsrc.sh; /etc/apt is never touched),
# unpack it and extract the kernel tree it carries, flattened, into
#
#     CACHE/src/linux-<debian version without epoch>/     (Makefile at top)
#
# e.g. CACHE/src/linux-7.3.4-1~bpo13+1/. Prints that directory on stdout;
# everything else goes to stderr. The .deb and intermediate files are deleted
# once the tree is in place; a stamp (.devmemsim-unpacked) written last marks
# a complete tree.
#
# Without VERSION, a 7.3 tree already fetched into CACHE is reused with no
# network access (the newest one if there are several); only if there is none
# is the archive asked for its newest linux-source-7.3. With VERSION (e.g.
# 7.3.4-1~bpo13+1), exactly that package version is used.
set -euo pipefail

PKG=linux-source-7.3
SERIES=7.3

die() {
	echo "fetch-linux: $*" >&2
	exit 1
}

if [ $# -lt 1 ] || [ $# -gt 2 ] || [ -z "$1" ]; then
	die "usage: fetch-linux.sh CACHE [VERSION]"
fi
cache=$(mkdir -p "$1" && cd "$1" && pwd -P) || die "cannot create cache dir $1"
want=${2:-}
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=scripts/lib/aptsrc.sh
. "$here/lib/aptsrc.sh"

stamp_name=.devmemsim-unpacked

# newest: the highest Debian version among stdin's lines (dpkg's ordering).
newest() {
	local best="" v
	while read -r v; do
		[ -n "$v" ] || continue
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then
			best=$v
		fi
	done
	echo "$best"
}

# Reuse what is already there.
if [ -n "$want" ]; then
	dest="$cache/src/linux-${want#*:}"
	if [ -f "$dest/$stamp_name" ]; then
		echo "fetch-linux: $dest already unpacked" >&2
		echo "$dest"
		exit 0
	fi
else
	have=$(find "$cache/src" -mindepth 2 -maxdepth 2 -name "$stamp_name" \
		-path "$cache/src/linux-$SERIES.*/$stamp_name" 2>/dev/null |
		sed "s|^$cache/src/linux-||; s|/$stamp_name\$||" | newest || true)
	if [ -n "$have" ]; then
		echo "fetch-linux: $cache/src/linux-$have already unpacked" >&2
		echo "$cache/src/linux-$have"
		exit 0
	fi
fi

for tool in apt-get dpkg-deb tar xz; do
	command -v "$tool" >/dev/null || die "$tool not found (run scripts/bootstrap.sh)"
done
[ -r "$DEBIAN_KEYRING" ] || die "$DEBIAN_KEYRING missing (apt-get install debian-archive-keyring)"

# A private apt state of our own (not shared with fetch-qemu's, which may run
# at the same time and rewrites its sources list).
mirror=$(debian_mirror)
state="$cache/apt-linux"
work="$cache/src/.linux-dl"
tmp=""
# The private apt state, the download dir and a half-extracted tree never
# outlive the run.
trap 'rm -rf "$state" "$work" ${tmp:+"$tmp"}' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
echo "fetch-linux: reading trixie and trixie-backports from $mirror" >&2
private_apt "$state" \
	"deb [signed-by=$DEBIAN_KEYRING] $mirror trixie-backports main" \
	"deb [signed-by=$DEBIAN_KEYRING] $mirror trixie main" >&2 ||
	die "apt-get update of the private apt state in $state failed"

# Does the archive carry the package at all (and which version)?
apt_cache=(apt-cache "${PAPT[@]:1}")
avail=$("${apt_cache[@]}" madison "$PKG" 2>/dev/null | awk -F'|' '{gsub(/ /,"",$2); print $2}' || true)
if [ -z "$avail" ]; then
	die "Debian's archive at $mirror carries no $PKG (looked in trixie and" \
		"trixie-backports, main); the project needs a Linux $SERIES source package"
fi
echo "fetch-linux: $PKG versions in the archive: $(echo "$avail" | tr '\n' ' ')" >&2
if [ -n "$want" ]; then
	echo "$avail" | grep -qxF "$want" ||
		die "$PKG version $want is not in the archive (it has: $(echo "$avail" | tr '\n' ' '))"
	spec="$PKG=$want"
else
	spec="$PKG=$(echo "$avail" | newest)"
fi

rm -rf "$work"
mkdir -p "$work"
echo "fetch-linux: apt-get download $spec" >&2
(cd "$work" && "${PAPT[@]}" download "$spec" >&2) || die "apt-get download $spec failed"
debs=("$work"/"${PKG}"_*_all.deb)
deb=${debs[0]}
[ -f "$deb" ] || die "apt-get download left no ${PKG}_*_all.deb in $work"
version=$(dpkg-deb -f "$deb" Version)
dest="$cache/src/linux-${version#*:}"

echo "fetch-linux: unpacking $(basename "$deb")" >&2
dpkg-deb -x "$deb" "$work/pkg"
rm -f "$deb"
tarball="$work/pkg/usr/src/$PKG.tar.xz"
[ -f "$tarball" ] || die "$(basename "$deb") has no usr/src/$PKG.tar.xz"

# Extract next to the destination and rename, so an interrupted run never
# leaves a half tree under the final name.
tmp="$dest.partial"
rm -rf "$tmp" "$dest"
mkdir -p "$tmp"
echo "fetch-linux: extracting $PKG.tar.xz into $dest" >&2
# The tarball's single top directory (linux-source-7.3/) is stripped.
xz -T0 -dc "$tarball" | tar -x -C "$tmp" --strip-components=1 --no-same-owner
if ! [ -f "$tmp/Makefile" ] || ! [ -f "$tmp/Kconfig" ]; then
	die "$PKG.tar.xz did not contain a kernel tree"
fi
mv "$tmp" "$dest"
tmp=""
rm -rf "$work" "$state"
kver=$(awk -F' *= *' '$1=="VERSION"{v=$2} $1=="PATCHLEVEL"{p=$2}
	$1=="SUBLEVEL"{s=$2} END{print v "." p "." s}' "$dest/Makefile")
printf 'package=%s\nversion=%s\nkernelversion=%s\n' "$PKG" "$version" "$kver" \
	>"$dest/$stamp_name"
echo "fetch-linux: Linux $kver ($PKG $version) in $dest" >&2
echo "$dest"
