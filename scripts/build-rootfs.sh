#!/usr/bin/env bash
# build-rootfs.sh OUT_DIR: build the devmemsim guest root file system image
# OUT_DIR/rootfs.img (ext4, label dmsroot).
#
# debootstrap --variant=minbase trixie plus guest/rootfs/packages.txt (a
# package listed with a newer suite is then replaced by that suite's version,
# downloaded through a private apt state: /etc/apt is never touched), with
# /sbin/devmemsim-init (guest/rootfs/devmemsim-init) as init and the guest agent
# /usr/local/sbin/dms-agent (guest/tools/dms-agent), fresh ssh host keys, a
# locked root password, and docs/man pages/locales/apt caches removed.
#
# Always builds: the caller (tools/devmemsim/build.py) decides when, by its
# cache key, and names OUT_DIR after it. Built in a temporary directory next
# to OUT_DIR, moved into place atomically.
# Needs root (debootstrap, chroot) and network access to the Debian archive
# this machine's apt configuration uses.  Logs go to stderr; the image path is
# printed on stdout.
set -euo pipefail

usage() {
	echo "usage: $0 OUT_DIR" >&2
	exit 2
}
[ $# -eq 1 ] || usage

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=scripts/lib/aptsrc.sh
. "$here/lib/aptsrc.sh"

SUITE=trixie
PACKAGES="$repo/guest/rootfs/packages.txt"
INIT="$repo/guest/rootfs/devmemsim-init"
AGENT="$repo/guest/tools/dms-agent"

log() { echo "build-rootfs: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}

for f in "$PACKAGES" "$INIT" "$AGENT"; do
	[ -f "$f" ] || die "missing $f"
done
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot)"
for tool in debootstrap mkfs.ext4 chroot; do
	command -v "$tool" >/dev/null || die "$tool not found"
done
[ -f "$DEBIAN_KEYRING" ] || die "$DEBIAN_KEYRING not found (debian-archive-keyring)"

mkdir -p "$1"
out=$(cd "$1" && pwd)
img="$out/rootfs.img"

# Package list: first word of each line, '#' comments and blank lines dropped.
include=$(sed -e 's/#.*//' "$PACKAGES" | awk 'NF { print $1 }' | paste -sd, -)
[ -n "$include" ] || die "no packages in $PACKAGES"
mirror=$(debian_mirror) || die "no Debian mirror in the apt configuration"

tmp=$(mktemp -d "$(dirname "$out")/.$(basename "$out").rootfs.XXXXXX")
root="$tmp/root"

cleanup() {
	local rc=$? m
	# never recurse into something debootstrap left mounted (proc, sys, ...)
	if [ -r /proc/mounts ]; then
		awk -v p="$tmp/" 'index($2, p) == 1 { print $2 }' /proc/mounts |
			sort -r | while read -r m; do umount -l "$m" || true; done
	fi
	rm -rf --one-file-system "$tmp"
	[ $rc -eq 0 ] || log "failed (status $rc)"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

t0=$(date +%s)
log "debootstrap $SUITE (minbase) from $mirror"
log "packages: $include"
if ! debootstrap --variant=minbase --keyring="$DEBIAN_KEYRING" \
	--include="$include" "$SUITE" "$root" "$mirror" >"$tmp/debootstrap.log" 2>&1; then
	tail -n 30 "$tmp/debootstrap.log" >&2
	[ -f "$root/debootstrap/debootstrap.log" ] &&
		tail -n 30 "$root/debootstrap/debootstrap.log" >&2
	die "debootstrap failed"
fi
t1=$(date +%s)
log "debootstrap done in $((t1 - t0)) s"

# --- packages from newer suites --------------------------------------------
# "PACKAGE SUITE" lines: debootstrap installed trixie's PACKAGE (and its
# dependencies); dpkg replaces it with SUITE's, refusing it if trixie's
# libraries do not satisfy its dependencies.
newer=$(sed -e 's/#.*//' "$PACKAGES" | awk 'NF >= 2 { print $1 "=" $2 }')
if [ -n "$newer" ]; then
	suites=$(printf '%s\n' "$newer" | cut -d= -f2 | sort -u)
	lines=()
	for suite in $suites; do
		lines+=("deb [signed-by=$DEBIAN_KEYRING arch=amd64] $mirror $suite main")
	done
	private_apt "$tmp/apt" "${lines[@]}" >&2 || die "apt-get update of $suites failed"
	mkdir -p "$root/tmp/newer"
	names=()
	for entry in $newer; do
		names+=("${entry%=*}")
		(cd "$root/tmp/newer" && "${PAPT[@]}" download "${entry%=*}/${entry#*=}" >&2) ||
			die "cannot download ${entry%=*} from ${entry#*=}"
	done
	chroot "$root" sh -c 'dpkg -i /tmp/newer/*.deb' >&2 ||
		die "the newer packages (${names[*]}) do not install on $SUITE"
	rm -rf "$root/tmp/newer"
	log "from newer suites: $(chroot "$root" dpkg-query -W "${names[@]}" | paste -sd' ')"
fi

# --- our files -----------------------------------------------------------
install -m 0755 "$INIT" "$root/sbin/devmemsim-init"
install -m 0755 "$AGENT" "$root/usr/local/sbin/dms-agent"
install -d -m 0755 "$root/opt/devmemsim"
install -d -m 0700 "$root/root/.ssh"

# --- configuration ---------------------------------------------------------
echo node0 >"$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tnode0\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
	>"$root/etc/hosts"
# No DNS in the guest (slirp with restrict=on); an empty resolv.conf avoids
# lookup timeouts.
rm -f "$root/etc/resolv.conf"
: >"$root/etc/resolv.conf"
cat >"$root/etc/fstab" <<'EOF'
# Unused: /sbin/devmemsim-init mounts everything itself.
EOF
# Root may log in with a key only (authorized_keys comes from the payload).
chroot "$root" passwd -l root >/dev/null
cat >"$root/etc/ssh/sshd_config.d/devmemsim.conf" <<'EOF'
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UseDNS no
PrintMotd no
EOF
# Fresh host keys for this image (the package's postinst may have made some).
rm -f "$root"/etc/ssh/ssh_host_*
chroot "$root" ssh-keygen -A >&2
# Keep later apt installs in the guest small too.
cat >"$root/etc/dpkg/dpkg.cfg.d/01-devmemsim-nodoc" <<'EOF'
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-include=/usr/share/locale/locale.alias
path-exclude=/usr/share/lintian/*
EOF

# --- trim -----------------------------------------------------------------
find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/lintian/* \
	"$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* "$root"/var/cache/debconf/*-old \
	"$root"/var/log/* "$root/debootstrap"
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias \
	-exec rm -rf {} + 2>/dev/null || true
mkdir -p "$root/var/lib/apt/lists/partial" "$root/var/cache/apt/archives/partial" "$root/var/log"

# --- image ----------------------------------------------------------------
used_kb=$(du -skx "$root" | cut -f1)
inodes=$(find "$root" -xdev | wc -l)
# used + 30 % headroom, + ~3 % for inode tables (-i 8192) and 32 MiB for the
# journal and other metadata, rounded up to 16 MiB
size_mb=$(((used_kb * 13 * 103 / 1000 / 1024 + 32 + 15) / 16 * 16))
log "tree: $((used_kb / 1024)) MiB, $inodes files -> image ${size_mb} MiB"
# -b/-i: mke2fs.conf would pick 1 KiB blocks ("small") below 512 MiB
mkfs.ext4 -q -F -L dmsroot -b 4096 -i 8192 -d "$root" "$tmp/rootfs.img" "${size_mb}M" >&2
mv -f "$tmp/rootfs.img" "$img"
t2=$(date +%s)
log "built $img (${size_mb} MiB) in $((t2 - t0)) s"
echo "$img"
