#!/bin/bash
# build-selftests.sh [--fixes DIR] SRC KOUT OUTDIR [LIBURING]
#
# Build and install the netdev driver selftests of kernel tree SRC, C helpers
# included, against the uAPI headers of the kernel built in KOUT, with the
# kselftest way of installing:
#   make -C tools/testing/selftests TARGETS="drivers/net drivers/net/hw net/lib" install
# into OUTDIR/kselftest (run_kselftest.sh, kselftest-list.txt, the tests and
# their libraries, ynl and the netlink specs under net/lib, and the helpers
# next to the tests that run them: ncdevmem, toeplitz, iou-zcrx, csum, gro,
# xdp_helper, napi_id_helper, so_txtime, psp_responder, the *.bpf.o).
#
# A helper that does not build does not stop the others (make -k, then an
# install that ignores the failed ones): each is listed in
# OUTDIR/helpers-missing.txt as "NAME: first error line". ncdevmem is the
# exception: without it the run fails. LIBURING is a prefix with
# include/liburing.h and lib/liburing.a (scripts/fetch-liburing.sh), linked
# statically into iou-zcrx; without it iou-zcrx is listed as missing.
#
# ynl's C library is generated from Documentation/netlink/specs by Python:
# Debian's python3 with python3-yaml and python3-jsonschema. The *.bpf.o are
# compiled with clang against the tree's own libbpf (tools/lib/bpf).
#
# The selftest, ynl and libbpf makefiles write into the tree they run in, so
# the build runs in a scratch copy of the parts it reads (tools/, scripts/,
# Documentation/netlink/, include/uapi/, and MAINTAINERS, which ynl_gen_c.py
# looks for to find the tree's root) under OUTDIR, deleted afterwards: SRC
# stays clean. The uAPI headers come from 'make O=KOUT headers'.
#
# --fixes DIR: fixes to the tests themselves (DIR/*.patch, git format, paths
# from the tree's top, in name order), applied to the scratch tree before the
# build, each strictly (no fuzz) or the build fails; OUTDIR/fixes-applied.txt
# lists the applied patches' file names.
#
# Always builds: the caller (tools/devmemsim/build.py) decides when, by its
# cache key. Prints OUTDIR/kselftest.
set -euo pipefail

die() {
	echo "build-selftests: $*" >&2
	exit 1
}
log() { echo "build-selftests: $*" >&2; }

fixes=""
if [ "${1:-}" = --fixes ]; then
	[ -d "${2:-}" ] || die "--fixes ${2:-}: no such directory"
	fixes=$(cd "$2" && pwd -P)
	shift 2
fi
[ $# -eq 3 ] || [ $# -eq 4 ] || die "usage: build-selftests.sh [--fixes DIR] SRC KOUT OUTDIR [LIBURING]"
if ! [ -f "$1/Makefile" ] || ! [ -f "$1/Kconfig" ]; then
	die "$1 is not a kernel source tree"
fi
src=$(cd "$1" && pwd -P)
[ -f "$2/.config" ] || die "$2 is not a configured kernel build dir"
kout=$(cd "$2" && pwd -P)
mkdir -p "$3" || die "cannot create $3"
outdir=$(cd "$3" && pwd -P)
liburing=${4:-}
targets="drivers/net drivers/net/hw net/lib"
ksft=tools/testing/selftests
[ -f "$src/$ksft/drivers/net/hw/ncdevmem.c" ] || die "$src has no $ksft/drivers/net/hw/ncdevmem.c"

# Debian's python3 (the one scripts/bootstrap.sh equips with python3-yaml and
# python3-jsonschema), whatever python3 comes first in PATH (e.g. pyenv's).
PY=/usr/bin/python3
missing=()
for tool in make gcc ar rsync flock clang; do
	command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ! -x "$PY" ]; then
	missing+=("python3")
else
	"$PY" -c 'import yaml' 2>/dev/null || missing+=("python3-yaml")
	"$PY" -c 'import jsonschema' 2>/dev/null || missing+=("python3-jsonschema")
fi
[ ${#missing[@]} -eq 0 ] || die "missing: ${missing[*]} (run scripts/bootstrap.sh)"

work="$outdir/.build"
inst="$outdir/kselftest"
buildlog="$outdir/build.log"
missingf="$outdir/helpers-missing.txt"
appliedf="$outdir/fixes-applied.txt"
rm -rf "$work" "$inst" "$missingf" "$appliedf"
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$work/tree" "$work/bin"
# ynl's generators are run as executables (#!/usr/bin/env python3).
ln -s "$PY" "$work/bin/python3"
: >"$buildlog"

# uAPI headers of this kernel, in KOUT/usr/include. Serialised with the
# kernel build scripts, which take the same lock on KOUT.
log "make O=$kout headers"
(
	flock 9
	make -C "$src" O="$kout" headers >>"$buildlog" 2>&1
) 9>"$kout/.devmemsim-build.lock" || {
	tail -n 20 "$buildlog" >&2
	die "'make headers' failed; full log in $buildlog"
}

log "copying the parts of $src it needs to a scratch tree"
(cd "$src" && rsync -aR MAINTAINERS tools scripts Documentation/netlink include/uapi "$work/tree/")

: >"$appliedf"
if [ -n "$fixes" ]; then
	for fix in "$fixes"/*.patch; do
		[ -e "$fix" ] || continue
		log "applying the test fix $(basename "$fix")"
		patch -d "$work/tree" -p1 --batch --forward --fuzz=0 --no-backup-if-mismatch \
			<"$fix" >>"$buildlog" 2>&1 ||
			die "the test fix $fix does not apply to $src; see $buildlog"
		basename "$fix" >>"$appliedf"
	done
fi

cc=gcc
if [ -n "$liburing" ]; then
	cc="gcc -isystem $liburing/include -L$liburing/lib"
fi
# HAS_IOURING_ZCRX: drivers/net/hw/Makefile's own probe links -luring before
# its source, which a static liburing.a cannot satisfy; iou-zcrx is always
# tried, and fails with its reason when liburing is missing or too old.
kselftest_make() {
	PATH="$work/bin:$PATH" make -C "$work/tree/$ksft" TARGETS="$targets" \
		KHDR_INCLUDES="-isystem $kout/usr/include" CC="$cc" HAS_IOURING_ZCRX=y \
		"$@" >>"$buildlog" 2>&1
}

log "building the selftests of $targets (log: $buildlog)"
kselftest_make -k -j"$(nproc)" all || true
log "installing them to $inst"
# -i: install whatever built; what did not is listed below.
kselftest_make -i INSTALL_PATH="$inst" install || true

# helper_names DIR: the files the selftest makefile of DIR generates.
helper_names() {
	# shellcheck disable=SC2016 # make's variables, expanded by make
	PATH="$work/bin:$PATH" make -s --no-print-directory -C "$work/tree/$ksft/$1" \
		-f Makefile -f - CC="$cc" HAS_IOURING_ZCRX=y OUTPUT=/gen print-gen-files \
		<<<'print-gen-files: ; @echo $(TEST_GEN_FILES) $(TEST_GEN_PROGS) $(TEST_GEN_PROGS_EXTENDED)' \
		2>/dev/null | tr ' ' '\n' | sed -n 's|^/gen/||p'
}

# first_error DIR NAME: why NAME of DIR does not build, in one line.
first_error() {
	local out
	out=$(PATH="$work/bin:$PATH" make -C "$work/tree/$ksft/$1" OUTPUT="$work/tree/$ksft/$1" \
		KHDR_INCLUDES="-isystem $kout/usr/include" CC="$cc" HAS_IOURING_ZCRX=y \
		"$work/tree/$ksft/$1/$2" 2>&1 || true)
	printf '%s\n' "$out" | grep -m1 -iE 'error|not found|no such' ||
		printf '%s\n' "$out" | tail -n 1
}

[ -f "$inst/kselftest-list.txt" ] || {
	tail -n 20 "$buildlog" >&2
	die "the kselftest install made no kselftest-list.txt; full log in $buildlog"
}
# The install ignored errors: every test it lists must be there.
while IFS=: read -r dir test; do
	[ -e "$inst/$dir/$test" ] || die "the install lacks $dir/$test; full log in $buildlog"
done <"$inst/kselftest-list.txt"
: >"$missingf"
built=0
for dir in $targets; do
	for name in $(helper_names "$dir"); do
		if [ -e "$inst/$dir/$name" ]; then
			built=$((built + 1))
		else
			echo "$dir/$name: $(first_error "$dir" "$name" | cut -c1-200)" >>"$missingf"
		fi
	done
done
[ -x "$inst/drivers/net/hw/ncdevmem" ] || {
	cat "$missingf" >&2
	die "ncdevmem did not build; full log in $buildlog"
}
log "installed $built helpers; $(wc -l <"$missingf") did not build (see $missingf)"
echo "$inst"
