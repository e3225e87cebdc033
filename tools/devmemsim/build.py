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

Other kernel trees (`devmemsim kselftest --kernel-tree DIR`, the test
suite's test tree) are ktree.py's; which of these a test run needs is
testcmd.py's.
"""

import fcntl
import functools
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .addressing import DATA
from .errors import Failure, UsageError, log
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


# What booting a node needs of the meson build: the model QEMU links, the
# configuration checker, and the guest tools' binaries the payload carries
# (GUEST_TOOL_LIBS). The rest (unit tests, fuzzers, RTL variants, dms-sim)
# is for the commands that use it; on a fresh machine it is minutes of the
# first boot's wait.
NODE_TARGETS = ("sysc-model/libdevmemsim.so", "sysc-model/dms-config", "guest/tools/libdmsrx.so",
                "guest/tools/dms-session")
SIM_TARGETS = ("sysc-model/dms-sim", "sysc-model/dms-pcie", "sysc-model/dms-config")
# The CLI's man page and bash completion (meson.build; `devmemsim build`).
CLI_DOCS = ("devmemsim.1", "devmemsim.bash-completion")


def build_model(targets=()) -> Path:
    """meson/ninja for the named build outputs (by default everything of
    ours); returns the build dir."""
    if not (BUILD / "build.ninja").is_file():
        run(["meson", "setup", BUILD, ROOT], "meson setup", logname="meson-setup")
    run(["ninja", "-C", BUILD, *targets], "building the model library", logname="model")
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


def linux_source_fetched() -> Path | None:
    """The tree linux_source() returns without fetching (fetch-linux.sh
    reuses the newest unpacked tree of the series), or None: no network,
    nothing written."""
    series = re.search(r"^SERIES=(\S+)", (SCRIPTS / "fetch-linux.sh").read_text(), re.M).group(1)
    trees = [p.parent for p in (cache_dir() / "src").glob(f"linux-{series}.*/.devmemsim-unpacked")]
    if len(trees) > 1:  # dpkg's version order, as fetch-linux.sh's newest()
        trees.sort(key=functools.cmp_to_key(lambda a, b: -1 if subprocess.run(
            ["dpkg", "--compare-versions", a.name[6:], "lt", b.name[6:]]).returncode == 0 else 1))
    return trees[-1] if trees else None


def kernel_build_dir(src_name: str, flavour: str = "default") -> tuple[str, Path]:
    """(key, build dir) of a kernel flavour built from the source tree
    named src_name: CACHE/kernel[-FLAVOUR]-KEY."""
    key = digest(src_name, *KERNEL_FLAVOURS[flavour], SCRIPTS / "build-kernel.sh")[:16]
    return key, cache_dir() / (f"kernel-{key}" if flavour == "default" else f"kernel-{flavour}-{key}")


def build_kernel(flavour: str = "default"):
    """Returns (source tree, build dir, bzImage, kernel release)."""
    src = linux_source()
    fragments = KERNEL_FLAVOURS[flavour]
    key, out = kernel_build_dir(src.name, flavour)
    bz = out / "arch" / "x86" / "boot" / "bzImage"
    if not stamped(out / "devmemsim.key", key) or not bz.is_file():
        log(f"building the {flavour} Linux kernel from {src.name} "
            "(the longest step of a first run: about 20 min on 2 idle cores)")
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


def rootfs_dir() -> tuple[str, Path]:
    """(key, directory) of the guest image: CACHE/rootfs-KEY."""
    key = digest(ROOT / "guest" / "rootfs", ROOT / "guest" / "tools" / "dms-agent", SCRIPTS / "build-rootfs.sh")[:16]
    return key, cache_dir() / f"rootfs-{key}"


def build_rootfs() -> Path:
    key, out = rootfs_dir()
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
        return build_guest(build_qemu(build_model(NODE_TARGETS)))


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
