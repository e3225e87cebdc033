#!/bin/bash
# build-kernel-tree.sh [--configure] SRC OUT [--best-effort FRAG]... [--strict FRAG]...
#
# Out-of-tree build (make -C SRC O=OUT) of a kernel developer's own tree for
# `devmemsim kselftest --kernel-tree SRC`. OUT is kept between runs: make
# rebuilds only what changed.
#
# With --configure (the caller, tools/devmemsim/build.py, passes it when the
# configuration inputs changed or OUT has no .config):
#   make tinyconfig; merge_config.sh -m the fragments in order; olddefconfig
# where
#   --best-effort FRAG  the selftests' own config fragments: every "=m" is
#                       read as "=y" (the guest has no in-tree module
#                       directory); what does not survive olddefconfig is
#                       listed in OUT/devmemsim-config-missing.txt, one
#                       "CONFIG_X: fragment F asks y, .config has n" line each
#   --strict FRAG       devmemsim's own fragment and the user's: every value
#                       must survive (the last setting of a symbol wins), or
#                       the run fails with the list
# Symbols olddefconfig still makes modules are turned into =y (and those
# that stay =m are listed as missing). Without --configure, OUT/.config is
# used as it is.
#
# Then builds bzImage, modules and modules_prepare (so that out-of-tree
# modules build with `make -C OUT M=DIR modules`). Prints the bzImage path on
# stdout; progress goes to stderr, make's output to OUT/devmemsim-build.log.
# Exit status 1 with the log's tail on stderr on any failure. Two runs on one
# OUT are serialised by a lock.
set -euo pipefail

die() {
	echo "build-kernel-tree: $*" >&2
	exit 1
}
log() { echo "build-kernel-tree: $*" >&2; }

configure=0
if [ "${1:-}" = --configure ]; then
	configure=1
	shift
fi
[ $# -ge 2 ] || die "usage: build-kernel-tree.sh [--configure] SRC OUT [--best-effort FRAG]... [--strict FRAG]..."
if ! [ -f "$1/Makefile" ] || ! [ -f "$1/Kconfig" ]; then
	die "$1 is not a kernel source tree"
fi
src=$(cd "$1" && pwd -P)
mkdir -p "$2" || die "cannot create $2"
out=$(cd "$2" && pwd -P)
shift 2
best=()
strict=()
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || die "$1 needs a fragment"
	[ -f "$2" ] || die "config fragment $2 not found"
	case $1 in
	--best-effort) best+=("$(readlink -f "$2")") ;;
	--strict) strict+=("$(readlink -f "$2")") ;;
	*) die "unknown option $1" ;;
	esac
	shift 2
done
[ "$out" != "$src" ] || die "OUT must not be the source tree"
if [ -f "$src/.config" ] || [ -d "$src/include/config" ]; then
	die "$src has been configured in place; O= builds need a clean tree" \
		"(run 'make -C $src mrproper')"
fi

bzimage="$out/arch/x86/boot/bzImage"
buildlog="$out/devmemsim-build.log"
missingf="$out/devmemsim-config-missing.txt"

exec 9>"$out/.devmemsim-build.lock"
flock 9 || die "cannot lock $out"

missing=()
for tool in make gcc ld flex bison bc perl awk flock; do
	command -v "$tool" >/dev/null || missing+=("$tool")
done
[ -f /usr/include/gelf.h ] || missing+=("libelf-dev (gelf.h, for objtool)")
[ -f /usr/include/openssl/ssl.h ] || missing+=("libssl-dev")
[ ${#missing[@]} -eq 0 ] || die "missing: ${missing[*]} (run scripts/bootstrap.sh)"

: >"$buildlog"
kmake() {
	if [ "${DEVMEMSIM_VERBOSE:-0}" = 1 ]; then
		make -C "$src" O="$out" "$@" 2>&1 | tee -a "$buildlog" >&2
	else
		make -C "$src" O="$out" "$@" >>"$buildlog" 2>&1
	fi || {
		tail -n 20 "$buildlog" >&2
		die "'make $*' failed; full log in $buildlog"
	}
}

# wanted FRAG...: "SYMBOL VALUE" for every setting of the fragments, the last
# one of a symbol winning ("n" for "# CONFIG_X is not set").
wanted() {
	awk '
	/^CONFIG_[A-Za-z0-9_]+=/ { i = index($0, "="); k = substr($0, 1, i - 1); v = substr($0, i + 1) }
	/^# CONFIG_[A-Za-z0-9_]+ is not set$/ { k = $2; v = "n" }
	k != "" { if (!(k in want)) order[n++] = k; want[k] = v; k = "" }
	END { for (i = 0; i < n; i++) print order[i], want[order[i]] }' "$@"
}

# have SYMBOL: its value in OUT/.config ("n" when unset).
declare -A have=()
read_config() {
	have=()
	local k v
	while IFS='=' read -r k v; do
		have[$k]=$v
	done < <(grep -E '^CONFIG_[A-Za-z0-9_]+=' "$out/.config")
}

configure_tree() {
	local merged="$out/devmemsim-fragments.config" f k v h round
	: >"$merged"
	for f in "${best[@]}"; do
		sed -E 's/^(CONFIG_[A-Za-z0-9_]+)=m$/\1=y/' "$f" >>"$merged"
	done
	[ ${#strict[@]} -eq 0 ] || cat "${strict[@]}" >>"$merged"
	log "configuring $out: tinyconfig + ${#best[@]} best-effort + ${#strict[@]} strict fragments"
	kmake tinyconfig
	(cd "$out" && "$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$merged") \
		>>"$buildlog" 2>&1 || {
		tail -n 20 "$buildlog" >&2
		die "merge_config.sh failed; full log in $buildlog"
	}
	kmake olddefconfig
	# Options that default to m (tristates under MODULES=y) become built in.
	for round in 1 2 3; do
		grep -qE '^CONFIG_[A-Za-z0-9_]+=m$' "$out/.config" || break
		sed -i -E 's/^(CONFIG_[A-Za-z0-9_]+)=m$/\1=y/' "$out/.config"
		kmake olddefconfig
		log "in-tree modules made built-in (round $round)"
	done
	read_config
	local dropped=()
	if [ ${#strict[@]} -gt 0 ]; then
		while read -r k v; do
			h=${have[$k]:-n}
			[ "$h" = "$v" ] || dropped+=("  $k: fragment says $v, .config has $h")
		done < <(wanted "${strict[@]}")
	fi
	if [ ${#dropped[@]} -gt 0 ]; then
		echo "build-kernel-tree: these options of the strict fragments" \
			"(${strict[*]}) did not survive olddefconfig:" >&2
		printf '%s\n' "${dropped[@]}" >&2
		die "configuration failed"
	fi
	: >"$missingf.tmp"
	for f in "${best[@]}"; do
		while read -r k v; do
			[ "$v" != m ] || v=y
			h=${have[$k]:-n}
			[ "$h" = "$v" ] || echo "$k: fragment $f asks $v, .config has $h" >>"$missingf.tmp"
		done < <(wanted "$f")
	done
	grep -E '^CONFIG_[A-Za-z0-9_]+=m$' "$out/.config" |
		sed -E 's/^(CONFIG_[A-Za-z0-9_]+)=m$/\1: stays a module, which the guest cannot load/' \
			>>"$missingf.tmp" || true
	mv "$missingf.tmp" "$missingf"
	log "configuration done: $(grep -c '=y$' "$out/.config") options =y," \
		"$(wc -l <"$missingf") wanted by the selftests missing (see $missingf)"
}

if [ "$configure" = 1 ] || ! [ -f "$out/.config" ]; then
	configure_tree
fi

log "building bzImage, modules, modules_prepare with -j$(nproc) (log: $buildlog)"
start=$(date +%s)
kmake -j"$(nproc)" bzImage modules
kmake modules_prepare
[ -f "$bzimage" ] || die "make succeeded but $bzimage is missing"
if grep -q '^CONFIG_MODULES=y' "$out/.config"; then
	[ -f "$out/Module.symvers" ] ||
		die "$out/Module.symvers missing: out-of-tree modules could not link"
fi
log "built Linux $(cat "$out/include/config/kernel.release") in $(($(date +%s) - start)) s"
echo "$bzimage"
