"""Kernel trees other than the pinned build: a developer's own tree
(`devmemsim kselftest --kernel-tree DIR`) and guest-kselftest's test tree,
each built incrementally (O=) in CACHE/ktree-KEY with our modules, the
tree's selftests and a payload; and the pinned kernel as `kselftest`
boots it (build_kselftest)."""

import hashlib
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .build import (KERNEL_FRAGMENT, KSELFTEST_DEPS, KSELFTEST_GUEST_ROOT, NODE_TARGETS, SCRIPTS, SELFTEST_CONFIGS,
                    Artifacts, build_lock, build_model, build_modules, build_payload, build_pinned, build_qemu,
                    build_rootfs, build_selftests, digest, linux_source, timed)
from .errors import Failure, TreeBroken, UsageError, log
from .paths import cache_dir


@dataclass
class KselftestBuild:
    """What `devmemsim kselftest` boots and runs (see build_kselftest)."""

    artifacts: Artifacts  # qemu, bzimage, kernel_version, rootfs, payload: boot it like any node
    tree: Path  # the kernel source tree used (pinned or DIR)
    guest_root: str  # the selftests' directory in the guest
    config_missing: list  # "CONFIG_X: fragment F asks y, .config has n" lines (own tree only)
    helpers_missing: dict  # helper name -> one-line reason
    test_fixes: list  # Selftests.fixes: the fixes applied to the tests (pinned kernel only)
    seconds: dict  # what each build step took this run ("kernel", "modules", "helpers", "payload")


def build_kselftest(tree: Path | None, fragments: list) -> KselftestBuild:
    """Everything a selftest run boots: the pinned default kernel (tree None)
    or an incremental O= build of tree with tinyconfig + the selftests'
    config fragments (best effort) + ours + fragments (strict), our modules
    and the selftests built against it, and the guest image.

    Raises UsageError for a tree that is not a clean kernel tree or a missing
    fragment, TreeBroken for a tree that does not configure or build."""
    with build_lock():
        qemu = build_qemu(build_model(NODE_TARGETS))
        if tree is None:
            if fragments:
                raise UsageError("--kconfig needs --kernel-tree (the pinned kernel's configuration is fixed)")
            artifacts, src, selftests, seconds = build_pinned(qemu, "default")
            return KselftestBuild(artifacts, src, KSELFTEST_GUEST_ROOT, [], selftests.helpers_missing,
                                  selftests.fixes, seconds)
        build_rootfs()  # the one thing the tree's build shares with the cache's other users
    # The tree's build holds its own lock only: boots of the pinned kernels
    # need not wait the minutes a kernel tree takes.
    return build_tree(qemu, tree_dir(tree), [Path(f) for f in fragments])


def tree_dir(tree: Path) -> Path:
    """tree's real path, checked to be a kernel tree that O= builds can use."""
    src = Path(os.path.realpath(tree))
    if not (src / "Makefile").is_file() or not (src / "Kconfig").is_file():
        raise UsageError(f"{tree} is not a kernel source tree (no Makefile and Kconfig)")
    if (src / ".config").exists() or (src / "include" / "config").is_dir():
        raise UsageError(f"{tree} has been configured in place; run 'make -C {tree} mrproper' first")
    return src


def tree_key(src: Path) -> str:
    """The key of an own tree's directory and lock: its real path's hash."""
    return hashlib.sha256(str(src).encode()).hexdigest()[:16]


def tree_lock(src: Path) -> build_lock:
    """The lock build_tree holds for src: held, nothing builds that tree."""
    return build_lock(f"ktree-{tree_key(src)}")


def test_tree() -> Path:
    """guest-kselftest's own kernel tree (tests/guest/test_kselftest.py):
    CACHE/kselftest-test-tree/linux, a hardlinked copy (cp -al) of the
    pinned source, made again when that changes. Its path stays put, so
    that its build is incremental from one run to the next; the test only
    ever replaces its files (a new file renamed over the old), never writes
    them in place."""
    src = linux_source()
    top = cache_dir() / "kselftest-test-tree"
    copy, copy_of = top / "linux", top / "copy-of"
    with build_lock("kselftest-test-tree"):
        if not (copy.is_dir() and copy_of.is_file() and copy_of.read_text() == str(src)):
            top.mkdir(parents=True, exist_ok=True)
            for old in (copy, top / "linux.new"):
                if old.exists():
                    shutil.rmtree(old)  # unlinks: the pinned source keeps its files
            subprocess.run(["cp", "-al", str(src), str(top / "linux.new")], check=True)
            os.rename(top / "linux.new", copy)
            copy_of.write_text(str(src))
    return copy


def build_tree(qemu: Path, src: Path, fragments: list) -> KselftestBuild:
    """build_kselftest for an own tree, in CACHE/ktree-KEY."""
    for f in fragments:
        if not f.is_file():
            raise UsageError(f"--kconfig {f}: no such file")
    with tree_lock(src):
        return build_tree_locked(qemu, src, fragments, cache_dir() / f"ktree-{tree_key(src)}")


def build_tree_locked(qemu: Path, src: Path, fragments: list, where: Path) -> KselftestBuild:
    """build_tree's work, in where."""
    seconds = {}
    with timed(seconds, "kernel"):
        kout, bz, release, config_missing = build_tree_kernel(src, where, fragments)
    with timed(seconds, "modules"):
        try:
            kos = build_modules(kout, "tree", where / "modules")
        except Failure as e:
            raise TreeBroken(f"{e} (against {src})") from None
    with timed(seconds, "helpers"):
        try:
            selftests = build_selftests(src, kout, tree_inputs_key(src), where / "helpers")
        except Failure as e:
            raise TreeBroken(str(e)) from None
    rootfs = build_rootfs()
    with timed(seconds, "payload"):
        payload = build_payload(kos, selftests.path, src, where)
    artifacts = Artifacts(qemu=qemu, bzimage=bz, kernel_version=release, rootfs=rootfs, payload=payload)
    return KselftestBuild(artifacts, src, KSELFTEST_GUEST_ROOT, config_missing, selftests.helpers_missing,
                          selftests.fixes, seconds)


def build_tree_kernel(src: Path, where: Path, fragments: list):
    """The tree's kernel in where/obj, configured again only when the
    config inputs changed. Returns (build dir, bzImage, release, config
    options of the selftests' fragments the .config lacks)."""
    kout = where / "obj"
    kout.mkdir(parents=True, exist_ok=True)
    best = [KSELFTEST_DEPS] + [c for c in (src / "tools/testing/selftests" / r for r in SELFTEST_CONFIGS) if c.is_file()]
    strict = [KERNEL_FRAGMENT, *fragments]
    # By name and content, not path: the same fragments read from another
    # checkout of devmemsim are the same configuration.
    inputs = {"script": digest(SCRIPTS / "build-kernel-tree.sh"),
              "best-effort": [[f.name, digest(f)] for f in best],
              "strict": [[f.name, digest(f)] for f in strict]}
    stamp = where / "config.json"
    current = stamp.is_file() and json.loads(stamp.read_text()) == inputs and (kout / ".config").is_file()
    if not current:
        stamp.unlink(missing_ok=True)  # a configuration that fails is not current either
    cmd = [SCRIPTS / "build-kernel-tree.sh", *([] if current else ["--configure"]), src, kout]
    for flag, frags in (("--best-effort", best), ("--strict", strict)):
        cmd += [arg for f in frags for arg in (flag, f)]
    log(f"building {src} in {kout} ({'incremental' if current else 'configuring first'})")
    res = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    (where / "build-kernel-tree.log").write_text(res.stderr)
    if res.returncode != 0:
        raise TreeBroken(tree_broken_message(src, kout, res.stderr))
    stamp.write_text(json.dumps(inputs))
    release = (kout / "include" / "config" / "kernel.release").read_text().strip()
    missing = (kout / "devmemsim-config-missing.txt").read_text().splitlines()
    return kout, Path(res.stdout.strip()), release, missing


# gcc's and ld's "FILE:LINE:COL: error: ..." (and "fatal error:") lines.
COMPILER_ERROR = re.compile(r": (?:fatal )?error: ")


def tree_broken_message(src: Path, kout: Path, stderr: str) -> str:
    """The compiler's first errors in the make log (warnings and make's own
    lines can fill the tail), the last lines of the script's messages, and
    where the whole log is."""
    buildlog = kout / "devmemsim-build.log"
    try:
        errors = [line for line in buildlog.read_text(errors="replace").splitlines() if COMPILER_ERROR.search(line)]
    except OSError:
        errors = []
    first = "first errors:\n" + "\n".join(errors[:5]) + "\n" if errors else ""
    tail = "\n".join(stderr.strip().splitlines()[-20:])
    return f"{src} does not configure or build:\n{first}{tail}\nfull log: {buildlog}"


def tree_inputs_key(src: Path) -> str:
    """A key of what the selftests' build reads from an own tree: every
    file's path, size and modification time (0.3 s where hashing contents
    would take seconds)."""
    h = hashlib.sha256()
    for top in ("tools", "scripts", "Documentation/netlink", "include/uapi", "arch/x86/include/uapi"):
        for d, dirs, files in os.walk(src / top):
            dirs.sort()
            for f in sorted(files):
                st = os.lstat(os.path.join(d, f))
                h.update(f"{d}/{f}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()

