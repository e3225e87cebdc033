#!/bin/bash
# build-ncdevmem.sh SRC KOUT OUTDIR
#
# Build the kernel's own devmem TCP selftest tool, ncdevmem
# (tools/testing/selftests/drivers/net/hw/ncdevmem.c), from kernel tree SRC
# against the uAPI headers of the kernel built in KOUT (scripts/build-kernel.sh
# SRC KOUT ...), and copy it to OUTDIR/ncdevmem. Prints that path.
#
# ncdevmem links libynl, whose netdev/ethtool netlink code is generated from
# Documentation/netlink/specs by Python: Debian's python3 with python3-yaml and
# python3-jsonschema (7.3's ynl validates every spec and fails without it).
# Only the ncdevmem target is built: the rest of that selftest directory needs
# clang and libbpf.
#
# The selftest and ynl makefiles write their objects and generated code into
# the tree they run in (tools/net/ynl/{lib,generated}), so the build runs in a
# scratch copy of the parts it reads (tools/, Documentation/netlink/,
# include/uapi/, and MAINTAINERS, which ynl_gen_c.py looks for to find the
# tree's root and loops forever without) under OUTDIR, deleted afterwards: SRC stays clean. The uAPI
# headers come from 'make O=KOUT headers' (KOUT/usr/include).
#
# Always builds: the caller (tools/devmemsim/build.py) decides when, by its
# cache key, and names OUTDIR after it.
set -euo pipefail

die() {
	echo "build-ncdevmem: $*" >&2
	exit 1
}
log() { echo "build-ncdevmem: $*" >&2; }

[ $# -eq 3 ] || die "usage: build-ncdevmem.sh SRC KOUT OUTDIR"
if ! [ -f "$1/Makefile" ] || ! [ -f "$1/Kconfig" ]; then
	die "$1 is not a kernel source tree"
fi
src=$(cd "$1" && pwd -P)
[ -f "$2/.config" ] || die "$2 is not a configured kernel build dir (run scripts/build-kernel.sh first)"
kout=$(cd "$2" && pwd -P)
mkdir -p "$3" || die "cannot create $3"
outdir=$(cd "$3" && pwd -P)
hwdir=tools/testing/selftests/drivers/net/hw
[ -f "$src/$hwdir/ncdevmem.c" ] || die "$src has no $hwdir/ncdevmem.c"

bin="$outdir/ncdevmem"

# Debian's python3 (the one scripts/bootstrap.sh equips with python3-yaml and
# python3-jsonschema), whatever python3 comes first in PATH (e.g. pyenv's).
PY=/usr/bin/python3
missing=()
for tool in make gcc ar rsync flock; do
	command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ! -x "$PY" ]; then
	missing+=("python3")
else
	"$PY" -c 'import yaml' 2>/dev/null || missing+=("python3-yaml")
	"$PY" -c 'import jsonschema' 2>/dev/null || missing+=("python3-jsonschema")
fi
[ ${#missing[@]} -eq 0 ] || die "missing: ${missing[*]} (run scripts/bootstrap.sh)"

work="$outdir/.ncdevmem-build"
buildlog="$outdir/ncdevmem-build.log"
rm -rf "$work"
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$work/tree" "$work/out" "$work/bin"
# ynl's generators are run as executables (#!/usr/bin/env python3).
ln -s "$PY" "$work/bin/python3"
: >"$buildlog"

# uAPI headers of this kernel, in KOUT/usr/include. Serialised with
# build-kernel.sh, which takes the same lock on KOUT.
log "make O=$kout headers"
(
	flock 9
	make -C "$src" O="$kout" headers >>"$buildlog" 2>&1
) 9>"$kout/.devmemsim-build.lock" || {
	tail -n 20 "$buildlog" >&2
	die "'make headers' failed; full log in $buildlog"
}

log "copying the parts of $src it needs to a scratch tree"
(cd "$src" && rsync -aR MAINTAINERS tools Documentation/netlink include/uapi "$work/tree/")

log "building ncdevmem (log: $buildlog)"
if ! PATH="$work/bin:$PATH" make -C "$work/tree/$hwdir" \
	OUTPUT="$work/out" \
	KHDR_INCLUDES="-isystem $kout/usr/include" \
	"$work/out/ncdevmem" >>"$buildlog" 2>&1; then
	tail -n 30 "$buildlog" >&2
	die "building ncdevmem failed; full log in $buildlog"
fi
[ -x "$work/out/ncdevmem" ] || die "make succeeded but left no ncdevmem"
install -m 0755 "$work/out/ncdevmem" "$bin"
log "built $bin"
echo "$bin"
