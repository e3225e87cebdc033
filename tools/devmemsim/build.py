"""Build every artifact a node needs, each cached by a hash of its inputs.

  model    libdevmemsim + tools + tests   build/ (meson, incremental)
  qemu     QEMU 10.0.13 + our devices     CACHE/qemu        (incremental)
  kernel   Linux 7.3.x bzImage            CACHE/kernel-KEY
  modules  dmsnic.ko, dmsgpu.ko           build/guest/modules
  selftests the kernel's netdev driver    CACHE/selftests-KEY
           selftests and their C helpers (ncdevmem, iou-zcrx, ...)
  rootfs   Debian guest image             CACHE/rootfs-KEY
  payload  modules + tools disk           build/guest/payload.img
           (+ the selftests and an ssh key pair for them)

For `devmemsim kselftest --kernel-tree DIR` (build_kselftest), one directory
per tree, CACHE/ktree-KEY (KEY: DIR's real path), holds the tree's
incremental O= build (obj/), our modules, the selftests and the payload.
"""

import fcntl
import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .addressing import DATA
from .errors import Failure, TreeBroken, UsageError, log
from .paths import BUILD, ROOT, cache_dir, qemu_binary, qemu_work

QEMU_VERSION = "1:10.0.13+ds-0+deb13u1"
SCRIPTS = ROOT / "scripts"
KERNEL_FRAGMENT = ROOT / "configs" / "kernel" / "devmemsim.config"
# Kernel flavours: the Kconfig fragments each applies, in order, on top of
# tinyconfig. "debug" (KASAN, lockdep, kmemleak, DEBUG_NET, dma-buf and
# DMA-API checks) is built from the same source when DEVMEMSIM_KERNEL=debug
# asks for it; its kernel, modules and payload sit beside the default ones.
KERNEL_FLAVOURS = {
    "default": [KERNEL_FRAGMENT],
    "debug": [KERNEL_FRAGMENT, ROOT / "configs" / "kernel" / "debug.config"],
}
GUEST_MODULES = ["dmsgpu", "dmsnic"]  # load order
# Shared libraries and programs of the guest tools (guest/tools/meson.build),
# installed beside them: libdmsrx.so, dms-devmem's receive loop; dms-session,
# the nodes' ssh sessions (SSH_SESSION below).
GUEST_TOOL_LIBS = BUILD / "guest" / "tools"
GUEST_TOOL_PROGRAMS = ["dms-session"]
# The selftests' kselftest install (scripts/build-selftests.sh) goes to
# selftests/tools/testing/selftests in the payload, its path in the kernel
# tree; beside it, at their tree paths too, the YNL Python library and the
# netlink specs, for our own guest tests that use them.
KSELFTEST_GUEST_ROOT = "/opt/devmemsim/selftests/tools/testing/selftests"
KSELFTEST_TREE_PATHS = ["tools/net/ynl/pyynl", "Documentation/netlink/specs"]
# liburing with io_uring zero-copy receive (io_uring_register_ifq), for the
# iou-zcrx helper: Debian's source package (scripts/fetch-liburing.sh).
LIBURING_VERSION = "2.15-1"
# Best-effort config fragments of an own tree's kernel, before the selftests'
# own (tools/testing/selftests/SELFTEST_CONFIGS).
KSELFTEST_DEPS = ROOT / "configs" / "kernel" / "kselftest-deps.config"
SELFTEST_CONFIGS = ["drivers/net/config", "drivers/net/hw/config"]
# Fixes to the pinned kernel's selftests themselves (upstream-ready patches,
# each with its evidence), applied to what the pinned runs install; an own
# tree's tests run as the tree has them.
KSELFTEST_FIXES = ROOT / "guest" / "kselftest-fixes"
# guest-kselftest builds its own tree (test_tree()) with this fragment.
TEST_TREE_FRAGMENT = ROOT / "tests" / "guest" / "kselftest-tree.config"


@dataclass
class Artifacts:
    qemu: Path
    bzimage: Path
    kernel_version: str
    rootfs: Path
    payload: Path


def digest(*parts) -> str:
    """sha256 over strings, bytes and files/directories (by content)."""
    h = hashlib.sha256()
    for p in parts:
        if isinstance(p, Path):
            files = sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]
            for f in files:
                h.update(str(f.relative_to(ROOT) if f.is_relative_to(ROOT) else f).encode())
                h.update(f.read_bytes())
        elif isinstance(p, bytes):
            h.update(p)
        else:
            h.update(str(p).encode())
        h.update(b"\0")
    return h.hexdigest()


def run(cmd, what: str, capture: bool = False, logname: str = "") -> str:
    """Run cmd; on failure raise Failure naming what failed.

    With logname, the command's stderr goes to build/logs/LOGNAME.log and
    its last lines are shown only if it fails."""
    logf = None
    if logname:
        logdir = BUILD / "logs"
        logdir.mkdir(parents=True, exist_ok=True)
        logpath = logdir / f"{logname}.log"
        logf = open(logpath, "w")
    try:
        res = subprocess.run(
            [str(c) for c in cmd],
            text=True,
            stdout=subprocess.PIPE if capture else (logf or sys.stderr),
            stderr=logf or sys.stderr,
        )
    except FileNotFoundError as e:
        raise Failure(f"{what}: {e.filename} not found") from None
    finally:
        if logf:
            logf.close()
    if res.returncode != 0:
        if logname:
            tail = logpath.read_text(errors="replace").splitlines()[-40:]
            print("\n".join(tail), file=sys.stderr)
            raise Failure(f"{what} failed (exit {res.returncode}); full log: {logpath}")
        raise Failure(f"{what} failed (exit {res.returncode}); see the output above")
    return res.stdout.strip() if capture else ""


def stamped(stamp: Path, key: str) -> bool:
    return stamp.is_file() and stamp.read_text() == key


def build_model() -> Path:
    """meson/ninja for everything of ours; returns the build dir."""
    if not (BUILD / "build.ninja").is_file():
        run(["meson", "setup", BUILD, ROOT], "meson setup", logname="meson-setup")
    run(["ninja", "-C", BUILD], "building the model library", logname="model")
    return BUILD


def build_qemu(model_build: Path) -> Path:
    cache = cache_dir()
    work = qemu_work()
    staged = model_build / "qemu-model"
    # What QEMU links: the shared model library and its public headers.
    if staged.exists():
        shutil.rmtree(staged)
    (staged / "include").mkdir(parents=True)
    shutil.copytree(ROOT / "sysc-model" / "include" / "devmemsim", staged / "include" / "devmemsim")
    shutil.copy2(model_build / "sysc-model" / "libdevmemsim.so", staged / "libdevmemsim.so")
    key = digest(
        QEMU_VERSION,
        SCRIPTS / "build-qemu.sh",
        SCRIPTS / "fetch-qemu.sh",
        ROOT / "qemu-device",
        staged,
    )
    binary = qemu_binary()
    if stamped(work / "stamp", key) and binary.is_file():
        return binary
    started = time.monotonic()
    src = run([SCRIPTS / "fetch-qemu.sh", cache, QEMU_VERSION], "fetching QEMU", capture=True, logname="fetch-qemu")
    log(f"building QEMU {QEMU_VERSION} with devmemsim devices (first time: ~10 min)")
    run([SCRIPTS / "build-qemu.sh", src, work, ROOT / "qemu-device", staged, binary], "building QEMU", capture=True, logname="qemu")
    (work / "stamp").write_text(key)
    log(f"QEMU ready in {time.monotonic() - started:.0f} s")
    return binary


def kernel_flavour() -> str:
    """The kernel flavour DEVMEMSIM_KERNEL names ("default" if unset)."""
    flavour = os.environ.get("DEVMEMSIM_KERNEL") or "default"
    if flavour not in KERNEL_FLAVOURS:
        raise UsageError(f"DEVMEMSIM_KERNEL={flavour}: must be one of {', '.join(KERNEL_FLAVOURS)}")
    return flavour


def guest_dir(flavour: str) -> Path:
    """Where the modules and payload built against a kernel flavour go."""
    return BUILD / "guest" if flavour == "default" else BUILD / "guest" / flavour


def linux_source() -> Path:
    """The pinned kernel's source tree (fetched once into the cache)."""
    return Path(run([SCRIPTS / "fetch-linux.sh", cache_dir()], "fetching Linux", capture=True, logname="fetch-linux"))


def build_kernel(flavour: str = "default"):
    """Returns (source tree, build dir, bzImage, kernel release)."""
    cache = cache_dir()
    src = linux_source()
    fragments = KERNEL_FLAVOURS[flavour]
    key = digest(src.name, *fragments, SCRIPTS / "build-kernel.sh")[:16]
    out = cache / (f"kernel-{key}" if flavour == "default" else f"kernel-{flavour}-{key}")
    bz = out / "arch" / "x86" / "boot" / "bzImage"
    if not stamped(out / "devmemsim.key", key) or not bz.is_file():
        log(f"building the {flavour} Linux kernel from {src.name} "
            f"(first time on 2 idle cores: {'~8' if flavour == 'default' else '~7'} min)")
        fragment = fragments[0]
        if len(fragments) > 1:
            # build-kernel.sh applies and checks one fragment: the
            # concatenation, in which a later setting of a symbol wins.
            out.mkdir(parents=True, exist_ok=True)
            fragment = out / f"devmemsim-{flavour}.config"
            fragment.write_text("".join(f.read_text() for f in fragments))
        logname = "kernel" if flavour == "default" else f"kernel-{flavour}"
        run([SCRIPTS / "build-kernel.sh", src, out, fragment], f"building the {flavour} kernel", capture=True,
            logname=logname)
        (out / "devmemsim.key").write_text(key)
    release = (out / "include" / "config" / "kernel.release").read_text().strip()
    return src, out, bz, release


def build_modules(kout: Path, flavour: str = "default", outdir: Path | None = None) -> list:
    """dmsgpu.ko and dmsnic.ko built against kout, in outdir (by default
    the flavour's guest_dir)."""
    outdir = outdir or guest_dir(flavour) / "modules"
    kos = []
    for mod in GUEST_MODULES:
        mo = outdir / mod
        mo.mkdir(parents=True, exist_ok=True)
        run(
            ["make", "-s", "-C", kout, f"M={ROOT / 'guest' / 'kernel' / mod}", f"MO={mo}", f"-j{os.cpu_count()}", "modules"],
            f"building {mod}.ko",
            logname=f"module-{mod}" if flavour == "default" else f"module-{mod}-{flavour}",
        )
        kos.append(mo / f"{mod}.ko")
    return kos


def build_liburing() -> Path | None:
    """The static liburing prefix for iou-zcrx, or None (with a message) if
    it cannot be had: iou-zcrx is then listed as missing."""
    try:
        return Path(run([SCRIPTS / "fetch-liburing.sh", cache_dir(), LIBURING_VERSION], f"building liburing {LIBURING_VERSION}",
                        capture=True, logname="liburing"))
    except Failure as e:
        log(f"{e}: iou-zcrx will not be built")
        return None


@dataclass
class Selftests:
    """A kselftest install of the netdev driver selftests (build_selftests)."""

    path: Path
    helpers_missing: dict  # helper name -> one-line reason
    fixes: list  # the test fixes applied: {"patch": file name, "subject": its subject}


def build_selftests(src: Path, kout: Path, key: str, outdir: Path | None = None,
                    fixes: Path | None = None) -> Selftests:
    """The selftests' kselftest install with their C helpers, built from src
    against kout's uAPI headers with the test fixes in fixes (a directory of
    patches) applied, cached by key (in CACHE/selftests-KEY unless outdir is
    given)."""
    key = digest(key, LIBURING_VERSION, SCRIPTS / "build-selftests.sh", SCRIPTS / "fetch-liburing.sh",
                 *([fixes] if fixes else []))[:16]
    out = outdir or cache_dir() / f"selftests-{key}"
    inst = out / "kselftest"
    if not stamped(out / "devmemsim.key", key) or not (inst / "kselftest-list.txt").is_file():
        log(f"building the selftests and their helpers from {src}")
        liburing = build_liburing()
        run([SCRIPTS / "build-selftests.sh", *(["--fixes", fixes] if fixes else []), src, kout, out,
             *([liburing] if liburing else [])],
            "building the selftests", capture=True, logname="selftests")
        (out / "devmemsim.key").write_text(key)
    applied = (out / "fixes-applied.txt").read_text().split()
    return Selftests(inst, helpers_missing(out / "helpers-missing.txt"),
                     [{"patch": name, "subject": patch_message(fixes / name)[0]} for name in applied])


def patch_message(patch: Path) -> tuple[str, str]:
    """A git-format patch's (subject, body): the Subject header unfolded and
    without its [PATCH] tag, and the message up to the '---' line."""
    head, _, rest = patch.read_text().partition("\n\n")
    subject = re.search(r"^Subject: (.*(?:\n[ \t].*)*)", head, re.M)
    subject = " ".join(subject.group(1).split()) if subject else patch.name
    body = rest.split("\n---\n", 1)[0]
    return re.sub(r"^\[PATCH[^\]]*\]\s*", "", subject), body.strip()


def patch_files(patch: Path) -> list:
    """The files a patch changes, from the tree's top."""
    return re.findall(r"^\+\+\+ b/(\S+)", patch.read_text(), re.M)


def helpers_missing(listing: Path) -> dict:
    """{helper: reason} from build-selftests.sh's "NAME: reason" lines."""
    missing = {}
    for line in listing.read_text().splitlines():
        name, _, reason = line.partition(": ")
        missing[name] = reason
    return missing


def build_rootfs() -> Path:
    rootfs = ROOT / "guest" / "rootfs"
    key = digest(rootfs, ROOT / "guest" / "tools" / "dms-agent", SCRIPTS / "build-rootfs.sh")[:16]
    out = cache_dir() / f"rootfs-{key}"
    img = out / "rootfs.img"
    if not stamped(out / "devmemsim.key", key) or not img.is_file():
        log("building the Debian guest image (first time: ~2 min)")
        run([SCRIPTS / "build-rootfs.sh", out], "building the guest image", capture=True, logname="rootfs")
        (out / "devmemsim.key").write_text(key)
    return img


def build_payload(kos: list, selftests: Path, ksrc: Path, where: Path) -> Path:
    """The second guest disk, where/payload.img: our modules and tools,
    mounted at /opt/devmemsim.

    Also: the selftests' install (under selftests/tools/testing/selftests,
    ncdevmem in bin/ too), KSELFTEST_TREE_PATHS from ksrc, and a fresh ssh
    key pair per payload in ssh/ (id_ed25519, authorized_keys, and a client
    config for the nodes' data addresses): every node's init installs
    authorized_keys and starts sshd, so the nodes reach each other as root,
    as the selftests' ssh remote needs. The key stays in where/payload/ssh
    (never in the source tree)."""
    stage = where / "payload"
    img = where / "payload.img"
    inputs = [*kos, selftests, ROOT / "guest" / "tools", *sorted(GUEST_TOOL_LIBS.glob("*.so")),
              *(GUEST_TOOL_LIBS / p for p in GUEST_TOOL_PROGRAMS), *(ksrc / p for p in KSELFTEST_TREE_PATHS),
              SSH_CLIENT_CONFIG, SSH_SESSION]
    key = digest(*inputs)
    stamp = where / "payload.key"
    if stamped(stamp, key) and img.is_file():
        return img
    if stage.exists():
        shutil.rmtree(stage)
    (stage / "modules").mkdir(parents=True)
    (stage / "bin").mkdir()
    for ko in kos:
        shutil.copy2(ko, stage / "modules")
    (stage / "modules" / "load-order").write_text("".join(f"{ko.name}\n" for ko in kos))
    for tool in sorted((ROOT / "guest" / "tools").iterdir()):
        # Executables, and the Python modules they import from their directory.
        if tool.is_file() and (os.access(tool, os.X_OK) or tool.suffix == ".py"):
            shutil.copy2(tool, stage / "bin")
    for lib in GUEST_TOOL_LIBS.glob("*.so"):  # built by meson (build_model)
        shutil.copy2(lib, stage / "bin")
    for prog in GUEST_TOOL_PROGRAMS:
        shutil.copy2(GUEST_TOOL_LIBS / prog, stage / "bin")
    shutil.copy2(selftests / "drivers" / "net" / "hw" / "ncdevmem", stage / "bin")
    guest_root = stage / Path(KSELFTEST_GUEST_ROOT).relative_to("/opt/devmemsim")
    shutil.copytree(selftests, guest_root, symlinks=True)
    for rel in KSELFTEST_TREE_PATHS:
        if not (ksrc / rel).is_dir():
            raise Failure(f"{ksrc} has no {rel} (needed for the selftests)")
        shutil.copytree(ksrc / rel, stage / "selftests" / rel, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    make_ssh_keys(stage / "ssh")
    tmp = img.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    run(["mkfs.ext4", "-q", "-F", "-L", "dmspayload", "-d", stage, tmp, f"{payload_mib(stage)}M"],
        "making the payload disk", logname="payload")
    tmp.chmod(0o600)  # it holds the nodes' root ssh key
    tmp.rename(img)
    stamp.write_text(key)
    return img


def payload_mib(stage: Path) -> int:
    """An ext4 size for stage's content: its 4 KiB blocks (and one more per
    file and directory, for the inodes), a quarter more for ext4's own metadata, and 16 MiB of room."""
    blocks = 0
    for top, dirs, files in os.walk(stage):
        blocks += len(dirs) + sum(-(-Path(top, f).lstat().st_size // 4096) + 1 for f in files)
    return -(-(blocks * 4096 * 5 // 4) // (1 << 20)) + 16


# Root on a node reaches the other nodes' data addresses with the payload key.
# One cluster's nodes share the image's host keys, and a new cluster is new
# hosts with old addresses: no known_hosts. Persistent connections, as the
# selftests' README recommends (an ssh handshake costs ~1 s under TCG).
SSH_CLIENT_CONFIG = f"""\
Host {DATA.host_glob()}
    User root
    IdentityFile /opt/devmemsim/ssh/id_ed25519
    IdentitiesOnly yes
    StrictHostKeyChecking no
    UserKnownHostsFile /dev/null
    LogLevel ERROR
    ControlMaster auto
    ControlPath /tmp/ssh-%C
    ControlPersist 300
"""
# Through that master connection a killed ssh client does not end its remote
# command: every session's command runs under dms-session
# (guest/tools/dms-session.c says why), forced by the nodes' key.
SSH_SESSION = 'command="/opt/devmemsim/bin/dms-session" '


def make_ssh_keys(d: Path) -> None:
    d.mkdir(mode=0o700)
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "devmemsim-payload", "-f", d / "id_ed25519"],
        "making the payload's ssh key", logname="payload-ssh")
    (d / "authorized_keys").write_text(SSH_SESSION + (d / "id_ed25519.pub").read_text())
    (d / "config").write_text(SSH_CLIENT_CONFIG)


class build_lock:
    """One build at a time per cache (and build tree): a second devmemsim
    waits instead of building the same kernel or QEMU into the same place.
    A named lock guards one part of the cache alone (a kernel flavour's
    artifacts), so that it can be built while other commands build or
    check the rest."""

    def __init__(self, name: str = "build"):
        self.name = name

    def __enter__(self):
        cache = cache_dir()
        cache.mkdir(parents=True, exist_ok=True)
        self.f = open(cache / f".{self.name}.lock", "w")
        # A short wait is silent (another command checking its build).
        for _ in range(20):
            try:
                fcntl.flock(self.f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except BlockingIOError:
                time.sleep(0.1)
        log(f"waiting for another devmemsim build using {cache}")
        fcntl.flock(self.f, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.f, fcntl.LOCK_UN)
        self.f.close()


def build_all() -> Artifacts:
    # A background build of this flavour (build_in_background) ends first,
    # and meanwhile the cache's lock stays free for everyone else.
    with build_lock(f"build-{kernel_flavour()}"):
        pass
    with build_lock():
        return build_guest(build_qemu(build_model()))


def build_guest(qemu: Path, flavour: str = "") -> Artifacts:
    """Everything a booted node needs besides QEMU, for a kernel flavour
    (by default the one DEVMEMSIM_KERNEL names)."""
    return build_pinned(qemu, flavour)[0]


def build_pinned(qemu: Path, flavour: str = "") -> tuple[Artifacts, Path, Selftests, dict]:
    """build_guest's work: (artifacts, source tree, the selftests' install,
    seconds per step)."""
    flavour = flavour or kernel_flavour()
    seconds = {}
    with build_lock(f"build-{flavour}"):  # build_in_background's builder may hold it
        with timed(seconds, "kernel"):
            src, kout, bz, release = build_kernel(flavour)
        with timed(seconds, "modules"):
            kos = build_modules(kout, flavour)
        with timed(seconds, "helpers"):
            # The uAPI headers are the same for every flavour: one build.
            fixes = KSELFTEST_FIXES if KSELFTEST_FIXES.is_dir() else None  # git keeps no empty directory
            selftests = build_selftests(src, kout, src.name, fixes=fixes)
        rootfs = build_rootfs()
        with timed(seconds, "payload"):
            payload = build_payload(kos, selftests.path, src, guest_dir(flavour))
    return Artifacts(qemu=qemu, bzimage=bz, kernel_version=release, rootfs=rootfs, payload=payload), src, selftests, seconds


class build_in_background:
    """with build_in_background(jobs): a child process runs jobs, [(what,
    build function)], one after the other at idle priority (SCHED_IDLE:
    only CPU time nothing else wants) while the body runs, e.g. the debug
    kernel during the suites that boot the default one. Each job holds its
    own artifacts' lock (build_pinned's flavour lock, build_tree's tree
    lock), never the cache's, so other builds and boots go on; a command
    that needs those artifacts waits on that lock and then finds them built
    (or, after a failure, builds them again and reports the failure
    itself). Call only once everything the jobs share (model, QEMU, the
    default flavour's selftests and rootfs) is built. On the way out the
    child is waited for, or stopped with its make if the body failed or was
    interrupted (stamps are written last: the next run resumes)."""

    def __init__(self, jobs: list):
        self.jobs = jobs

    def __enter__(self):
        self.pid = os.fork() if self.jobs else -1
        if self.pid == 0:
            status = 0
            try:
                os.setpgid(0, 0)  # its make and compilers with it, to stop them as one
                os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
                for what, job in self.jobs:
                    log(f"building {what} in the background, at idle priority")
                    try:
                        job()
                    except Exception as e:  # whatever it is, the child must reach os._exit
                        log(f"background build of {what} failed ({e}); its first use retries it")
                        status = 1
            finally:
                os._exit(status)
        return self

    def __exit__(self, exc_type, *exc):
        if self.pid <= 0:
            return
        if exc_type is not None:
            try:
                os.killpg(self.pid, 15)
            except ProcessLookupError:
                pass
        os.waitpid(self.pid, 0)


class timed:
    """with timed(seconds, "step"): seconds["step"] = how long it took."""

    def __init__(self, seconds: dict, step: str):
        self.seconds, self.step = seconds, step

    def __enter__(self):
        self.started = time.monotonic()

    def __exit__(self, *exc):
        self.seconds[self.step] = round(time.monotonic() - self.started, 1)


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
        qemu = build_qemu(build_model())
        if tree is None:
            if fragments:
                raise UsageError("--config needs --kernel-tree (the pinned kernel's configuration is fixed)")
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
            raise UsageError(f"--config {f}: no such file")
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


# What each test suite needs built (tests/meson.build): the model build is
# enough for the unit, RTL, fuzz, lint, sweep, sim and conformance suites, QEMU too for the qtest and CLI
# suites, every artifact for the guest suite (and for a suite not listed),
# and the debug kernel's too for the guest-debug suite.
STAGES = ("model", "qemu", "guest", "guest-debug")
SUITE_NEEDS = {"unit": "model", "rtl": "model", "fuzz": "model", "lint": "model", "cli": "qemu",
               "sweep": "model", "sim": "model", "conformance": "model", "qemu": "qemu",
               "guest-debug": "guest-debug", "quick": "model"}
# meson test options that take a value (the next argument unless given as --opt=value).
_MESON_VALUE_OPTS = {"--suite", "--no-suite", "--repeat", "--num-processes", "-j", "--setup",
                     "--wrapper", "--timeout-multiplier", "-t", "--test-args", "--logbase",
                     "--gdb-path", "--max-lines", "-C"}


def build_for_tests(meson_args: list) -> list:
    """Build what the tests that `meson test MESON_ARGS` selects need, but
    for the kernels that only their later suites boot: those are returned
    as [(what, build function)], for build_in_background to build while
    the earlier suites run (guest-kselftest's test tree, then the debug
    flavour: the order they are needed in)."""
    with build_lock():
        model = build_model()
        tests = suites_by_test(model)
        stage = stage_for_tests(meson_args, tests)
        if stage == "model":
            return []
        qemu = build_qemu(model)
        if stage == "qemu":
            return []
        build_guest(qemu, "default")
    suites = selected_suites(meson_args, tests)
    later = []
    if "guest-kselftest" in suites:
        later.append(("guest-kselftest's kernel tree",
                      lambda: build_tree(qemu, tree_dir(test_tree()), [TEST_TREE_FRAGMENT])))
    if stage == "guest-debug":
        later.append(("the debug kernel flavour", lambda: build_pinned(qemu, "debug")))
    return later


def suites_by_test(model_build: Path) -> dict:
    """{test name: [suite, ...]} from meson's introspection."""
    out = run(["meson", "introspect", model_build, "--tests"], "listing the tests", capture=True)
    return {t["name"]: [s.split(":")[-1] for s in t["suite"]] for t in json.loads(out)}


def stage_for_tests(meson_args: list, tests: dict) -> str:
    """The last of STAGES the selected tests need (none but the model's
    configured build to list them)."""
    if "--list" in meson_args:
        return "model"
    needs = [SUITE_NEEDS.get(suite, "guest") for suite in selected_suites(meson_args, tests)] or ["model"]
    return max(needs, key=STAGES.index)


def selected_suites(meson_args: list, tests: dict) -> set:
    """The suites of the tests `meson test MESON_ARGS` selects."""
    wanted, unwanted, names = set(), set(), []
    args = list(meson_args)
    while args:
        arg = args.pop(0)
        opt, eq, value = arg.partition("=")
        if opt in _MESON_VALUE_OPTS and not eq:
            value = args.pop(0) if args else ""
        if opt == "--suite":
            wanted.add(value.split(":")[-1])
        elif opt == "--no-suite":
            unwanted.add(value.split(":")[-1])
        elif not arg.startswith("-"):
            names.append(arg.split(":")[-1])
    suites = set()
    for name, test_suites in tests.items():
        if names and not any(fnmatch.fnmatchcase(name, n) for n in names):
            continue
        if wanted and not wanted.intersection(test_suites):
            continue
        if unwanted.intersection(test_suites):
            continue
        suites.update(test_suites)
    return suites
