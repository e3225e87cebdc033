#!/bin/bash
# build-qemu.sh SRC WORK OVERLAY MODEL_DIR BINARY
#   SRC       unpacked Debian qemu source (scripts/fetch-qemu.sh)
#   WORK      work area: WORK/src (a copy of SRC plus our overlay), WORK/build
#   OVERLAY   qemu-device/ (its hw/devmemsim becomes WORK/src/hw/devmemsim)
#   MODEL_DIR directory holding libdevmemsim.so and include/devmemsim/
#   BINARY    where qemu-system-x86_64 goes (tools/devmemsim/paths.py decides)
# Incremental: files are synced by content, so ninja only rebuilds what
# changed. Prints the binary's path.
set -euo pipefail
src=$1
work=$2
overlay=$3
model=$4
binary=$5

# Keep in step with the README's requirements section.
CONFIGURE_ARGS=(
	--python=/usr/bin/python3
	--target-list=x86_64-softmmu
	--without-default-features
	--enable-tcg --enable-kvm
	--enable-slirp --enable-vde
	--disable-docs --disable-download --disable-install-blobs
	--disable-werror
)

for f in "$model/libdevmemsim.so" "$model/include/devmemsim/devmemsim.h"; do
	[ -e "$f" ] || { echo "build-qemu: missing $f (build the model first)" >&2; exit 1; }
done

# A copy of the source with the hook patch applied. A changed patch is
# swapped in place (old one reversed, new one applied), so only what it
# touches is rebuilt.
hooks="$overlay/qemu-hooks.patch"
applied="$work/src/.devmemsim-hooks.patch"
if [ "$(cat "$work/src/.devmemsim-copied" 2>/dev/null)" != "$src" ]; then
	rm -rf "$work/src" "$work/build"
	mkdir -p "$work"
	cp -a "$src" "$work/src"
	echo "$src" >"$work/src/.devmemsim-copied"
fi
if ! cmp -s "$hooks" "$applied"; then
	if [ -f "$applied" ]; then
		patch -d "$work/src" -p1 --quiet -R <"$applied"
	fi
	patch -d "$work/src" -p1 --quiet --forward <"$hooks"
	cp "$hooks" "$applied"
fi
s="$work/src"

rsync -r --checksum --delete "$overlay/hw/devmemsim/" "$s/hw/devmemsim/"
mkdir -p "$s/devmemsim-model"
rsync -r --checksum --delete "$model/include/" "$s/devmemsim-model/include/"
# Replace the library by rename so running QEMUs keep their mapping.
if ! cmp -s "$model/libdevmemsim.so" "$s/devmemsim-model/libdevmemsim.so"; then
	cp "$model/libdevmemsim.so" "$s/devmemsim-model/.libdevmemsim.so.new"
	mv -f "$s/devmemsim-model/.libdevmemsim.so.new" "$s/devmemsim-model/libdevmemsim.so"
fi

b="$work/build"
want="${CONFIGURE_ARGS[*]}"
if [ ! -f "$b/build.ninja" ] || [ "$(cat "$b/.devmemsim-configure" 2>/dev/null)" != "$want" ]; then
	rm -rf "$b"
	mkdir -p "$b"
	echo "build-qemu: configure ${CONFIGURE_ARGS[*]}" >&2
	(cd "$b" && "$s/configure" "${CONFIGURE_ARGS[@]}" >configure.log 2>&1) || {
		tail -n 30 "$b/configure.log" >&2
		echo "build-qemu: configure failed; full log: $b/configure.log" >&2
		exit 1
	}
	echo "$want" >"$b/.devmemsim-configure"
fi
echo "build-qemu: ninja in $b" >&2
ninja -C "$b" -j"$(nproc)" qemu-system-x86_64 >&2
mkdir -p "$(dirname "$binary")"
install -m 0755 "$b/qemu-system-x86_64" "$binary.new"
mv -f "$binary.new" "$binary"
echo "$binary"
