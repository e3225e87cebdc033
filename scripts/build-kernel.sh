#!/bin/bash
# build-kernel.sh SRC OUT FRAGMENT
#
# Out-of-tree build (make -C SRC O=OUT) of the devmemsim guest kernel:
#   make tinyconfig; scripts/kconfig/merge_config.sh -m FRAGMENT; make olddefconfig
# then checks that every value FRAGMENT sets (CONFIG_X=y/m/value and
# "# CONFIG_X is not set") survived olddefconfig, failing with the list of
# those that did not, and builds bzImage, modules and modules_prepare, so that
# out-of-tree modules build with `make -C OUT M=DIR [MO=OBJDIR] modules`.
#
# Prints the bzImage path on stdout; progress goes to stderr and the full make
# output to OUT/devmemsim-build.log. Whether a build is needed is the caller's
# decision (tools/devmemsim/build.py keys OUT by the source, the fragments and
# this script); a run always configures and builds. Set DEVMEMSIM_VERBOSE=1 to
# see make's output on stderr as it runs. Two runs on one OUT are serialised
# by a lock.
set -euo pipefail

die() {
	echo "build-kernel: $*" >&2
	exit 1
}
log() { echo "build-kernel: $*" >&2; }

[ $# -eq 3 ] || die "usage: build-kernel.sh SRC OUT FRAGMENT"
if ! [ -f "$1/Makefile" ] || ! [ -f "$1/Kconfig" ]; then
	die "$1 is not a kernel source tree"
fi
[ -f "$3" ] || die "config fragment $3 not found"
src=$(cd "$1" && pwd -P)
mkdir -p "$2" || die "cannot create $2"
out=$(cd "$2" && pwd -P)
frag=$(readlink -f "$3")
[ "$out" != "$src" ] || die "OUT must not be the source tree"

bzimage="$out/arch/x86/boot/bzImage"
buildlog="$out/devmemsim-build.log"

exec 9>"$out/.devmemsim-build.lock"
flock 9 || die "cannot lock $out"

missing=()
for tool in make gcc ld flex bison bc perl awk sha256sum flock; do
	command -v "$tool" >/dev/null || missing+=("$tool")
done
[ -f /usr/include/gelf.h ] || missing+=("libelf-dev (gelf.h, for objtool)")
[ -f /usr/include/openssl/ssl.h ] || missing+=("libssl-dev")
[ ${#missing[@]} -eq 0 ] || die "missing: ${missing[*]} (run scripts/bootstrap.sh)"
if [ -f "$src/.config" ] || [ -d "$src/include/config" ]; then
	die "$src has been configured in place; O= builds need a clean tree" \
		"(run 'make -C $src mrproper')"
fi

: >"$buildlog"
jobs=$(nproc)
kmake() {
	if [ "${DEVMEMSIM_VERBOSE:-0}" = 1 ]; then
		make -C "$src" O="$out" "$@" 2>&1 | tee -a "$buildlog" >&2
	else
		make -C "$src" O="$out" "$@" >>"$buildlog" 2>&1
	fi || {
		tail -n 40 "$buildlog" >&2
		die "'make $*' failed; full log in $buildlog"
	}
}

# --- configure ----------------------------------------------------------
log "configuring $out: tinyconfig + $(basename "$frag") + olddefconfig"
kmake tinyconfig
(cd "$out" && "$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$frag") \
	>>"$buildlog" 2>&1 || {
	tail -n 20 "$buildlog" >&2
	die "merge_config.sh failed; full log in $buildlog"
}
kmake olddefconfig

# Every value the fragment asks for must be in the final .config (the last
# setting of a symbol in the fragment wins, as in merge_config.sh).
dropped=$(awk -v cfg="$out/.config" '
	/^CONFIG_[A-Za-z0-9_]+=/ { i = index($0, "="); want[substr($0, 1, i - 1)] = substr($0, i + 1); next }
	/^# CONFIG_[A-Za-z0-9_]+ is not set$/ { want[$2] = "n" }
	END {
		while ((getline l < cfg) > 0) {
			if (l ~ /^CONFIG_/) { i = index(l, "="); have[substr(l, 1, i - 1)] = substr(l, i + 1) }
		}
		for (k in want) {
			h = (k in have) ? have[k] : "n"
			if (h != want[k])
				printf "  %s: fragment says %s, .config has %s\n", k, want[k], (k in have) ? h : "not set"
		}
	}' "$frag" | sort)
if [ -n "$dropped" ]; then
	echo "build-kernel: these options of $frag did not survive olddefconfig" \
		"(missing dependency, renamed or removed symbol?):" >&2
	echo "$dropped" >&2
	exit 1
fi
# Everything the guest needs is built in; the only loadable modules are the
# project's out-of-tree ones. An in-tree =m would be built but never reach
# the guest image.
inmods=$(grep -E '^CONFIG_[A-Za-z0-9_]+=m$' "$out/.config" | sed 's/^/  /' || true)
if [ -n "$inmods" ]; then
	echo "build-kernel: olddefconfig made these in-tree options modules; set them" \
		"=y or \"# CONFIG_... is not set\" in $frag:" >&2
	echo "$inmods" >&2
	exit 1
fi
log "configuration OK: $(grep -c '=y$' "$out/.config") options =y, no in-tree modules"

# --- build --------------------------------------------------------------
log "building bzImage, modules, modules_prepare with -j$jobs (log: $buildlog)"
start=$(date +%s)
kmake -j"$jobs" bzImage modules
kmake modules_prepare
[ -f "$bzimage" ] || die "make succeeded but $bzimage is missing"
if grep -q '^CONFIG_MODULES=y' "$out/.config"; then
	[ -f "$out/Module.symvers" ] ||
		die "$out/Module.symvers missing: out-of-tree modules could not link"
fi
release=$(cat "$out/include/config/kernel.release")
log "built Linux $release in $(($(date +%s) - start)) s"

echo "$bzimage"
