#!/bin/bash
# Install what devmemsim needs from Debian's archive. Idempotent: installs only
# what is missing and says what it installs. Never touches /etc/apt: newer suites
# are only read through the private apt state in lib/aptsrc.sh.
set -euo pipefail

# Packages from bookworm itself.
PKGS=(
	build-essential g++ pkg-config ninja-build git python3 python3-yaml python3-jsonschema
	libsystemc-dev verilator googletest libgtest-dev libgmock-dev
	clang libclang-rt-14-dev
	libglib2.0-dev libpixman-1-dev libfdt-dev libslirp-dev libvdeplug-dev
	zlib1g-dev flex bison bc libelf-dev libssl-dev dwarves cpio rsync kmod
	seabios qemu-system-data ipxe-qemu debootstrap e2fsprogs dpkg-dev vde2
	xz-utils debian-archive-keyring clang-format libtomlplusplus-dev
	# ssh-keygen: the payload's ssh key pair (the guest selftests' ssh remote);
	# ssh starts and reaches nodes on other hosts; sshd: the cross-host test
	# runs a private one (Debian's package also enables its ssh service on a
	# systemd host; the test does not use it)
	openssh-client openssh-server
	# the lint suite (clang-format is above; checkpatch comes with the kernel)
	shellcheck python3-pyflakes
	# sweep plots; Slurm for sweeps as job arrays (the sweep-slurm test starts
	# a one-node cluster of its own: nothing is configured system-wide)
	python3-matplotlib slurm-wlm munge
	# the CLI's bash completion and man page, both from its parser
	python3-argcomplete python3-argparse-manpage
)
# Packages from bookworm-backports (QEMU 10 needs meson >= 1.5).
BPO_PKGS=(meson)
MESON_MIN=1.5

missing=()
declare -A installed=()
while read -r name status; do
	[ "$status" = installed ] && installed[$name]=1
done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${PKGS[@]}" 2>/dev/null || true)
for p in "${PKGS[@]}"; do
	[ -n "${installed[$p]:-}" ] || missing+=("$p")
done
meson_ok() {
	local v
	v=$(dpkg-query -W -f='${Version}' meson 2>/dev/null) || return 1
	dpkg --compare-versions "$v" ge "$MESON_MIN"
}

if [ ${#missing[@]} -eq 0 ] && meson_ok; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "bootstrap: missing packages: ${missing[*]} meson>=$MESON_MIN;" \
		"run as root or install them with apt-get" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
echo "bootstrap: apt-get update"
apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
	echo "bootstrap: installing ${missing[*]}"
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if ! meson_ok; then
	# bookworm-backports is on the same archive as bookworm; it is read
	# through a private apt state, never added to /etc/apt.
	here=$(dirname "$(readlink -f "$0")")
	# shellcheck source=scripts/lib/aptsrc.sh
	. "$here/lib/aptsrc.sh"
	state=$(mktemp -d)
	private_apt "$state" \
		"deb [signed-by=$DEBIAN_KEYRING] $(debian_mirror) bookworm-backports main"
	echo "bootstrap: installing ${BPO_PKGS[*]} from bookworm-backports"
	"${PAPT[@]}" install -y -qq --no-install-recommends \
		-t bookworm-backports "${BPO_PKGS[@]}" >/dev/null
	rm -rf "$state"
fi
echo "bootstrap: done"
