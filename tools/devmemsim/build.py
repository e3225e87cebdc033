"""Build every artifact a node needs, each cached by a hash of its inputs.

  model    libdevmemsim + tools + tests   build/ (meson, incremental)
  qemu     QEMU 10.0.13 + our devices     CACHE/qemu        (incremental)
  kernel   Linux 7.3.x bzImage            CACHE/kernel-KEY
  modules  dmsnic.ko, dmsgpu.ko           build/guest/modules
  ncdevmem the kernel's devmem tool       CACHE/ncdevmem-KEY
  rootfs   Debian guest image             CACHE/rootfs-KEY
  payload  modules + tools disk           build/guest/payload.img
           (+ the kernel's devmem selftest and an ssh key pair for it)
"""

import fcntl
import fnmatch
import hashlib
import json
import os
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
# The kernel's devmem selftest and the Python libraries it imports, copied from
# the guest kernel's source into the payload at their paths in the kernel tree
# (the libraries find each other, the YNL code and the netlink specs by
# relative path): /opt/devmemsim/selftests/tools/testing/selftests/...
KSELFTEST_PATHS = [
    "tools/testing/selftests/net/lib/py",
    "tools/testing/selftests/drivers/net/lib/py",
    "tools/testing/selftests/drivers/net/hw/lib/py",
    "tools/testing/selftests/drivers/net/hw/devmem.py",
    "tools/testing/selftests/drivers/net/hw/devmem_lib.py",
    "tools/net/ynl/pyynl",
    "Documentation/netlink/specs",
]
KSELFTEST_HW = "selftests/tools/testing/selftests/drivers/net/hw"  # in the payload


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


def build_kernel(flavour: str = "default"):
    """Returns (source tree, build dir, bzImage, kernel release)."""
    cache = cache_dir()
    src = Path(run([SCRIPTS / "fetch-linux.sh", cache], "fetching Linux", capture=True, logname="fetch-linux"))
    fragments = KERNEL_FLAVOURS[flavour]
    key = digest(src.name, *fragments, SCRIPTS / "build-kernel.sh")[:16]
    out = cache / (f"kernel-{key}" if flavour == "default" else f"kernel-{flavour}-{key}")
    bz = out / "arch" / "x86" / "boot" / "bzImage"
    if not stamped(out / "devmemsim.key", key) or not bz.is_file():
        log(f"building the {flavour} Linux kernel from {src.name} "
            f"(first time: {'~12' if flavour == 'default' else '~25'} min)")
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


def build_modules(kout: Path, flavour: str = "default") -> list:
    outdir = guest_dir(flavour) / "modules"
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


def build_ncdevmem(src: Path, kout: Path) -> Path:
    key = digest(src.name, kout.name, SCRIPTS / "build-ncdevmem.sh")[:16]
    out = cache_dir() / f"ncdevmem-{key}"
    binary = out / "ncdevmem"
    if not stamped(out / "devmemsim.key", key) or not binary.is_file():
        run([SCRIPTS / "build-ncdevmem.sh", src, kout, out], "building ncdevmem", capture=True, logname="ncdevmem")
        (out / "devmemsim.key").write_text(key)
    return binary


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


def build_payload(kos: list, ncdevmem: Path, ksrc: Path, flavour: str = "default") -> Path:
    """The second guest disk: our modules and tools, mounted at /opt/devmemsim.

    Also: the kernel's devmem selftest from ksrc (KSELFTEST_PATHS, under
    selftests/, with ncdevmem next to devmem.py where it looks for it) and a
    fresh ssh key pair per payload in ssh/ (id_ed25519, authorized_keys, and a
    client config for the nodes' data addresses): every node's init installs
    authorized_keys and starts sshd, so the nodes reach each other as root, as
    the selftest's ssh remote needs. The key stays in build/guest/payload/ssh
    (never in the source tree)."""
    stage = guest_dir(flavour) / "payload"
    img = guest_dir(flavour) / "payload.img"
    inputs = [*kos, ncdevmem, ROOT / "guest" / "tools", *(ksrc / p for p in KSELFTEST_PATHS)]
    key = digest(*inputs)
    stamp = guest_dir(flavour) / "payload.key"
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
    shutil.copy2(ncdevmem, stage / "bin")
    stage_kselftest(ksrc, ncdevmem, stage)
    make_ssh_keys(stage / "ssh")
    tmp = img.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    run(["mkfs.ext4", "-q", "-F", "-L", "dmspayload", "-d", stage, tmp, "64M"], "making the payload disk", logname="payload")
    tmp.chmod(0o600)  # it holds the nodes' root ssh key
    tmp.rename(img)
    stamp.write_text(key)
    return img


def stage_kselftest(ksrc: Path, ncdevmem: Path, stage: Path) -> None:
    for rel in KSELFTEST_PATHS:
        src = ksrc / rel
        dst = stage / "selftests" / rel
        if not src.exists():
            raise Failure(f"{ksrc} has no {rel} (needed for the devmem selftest)")
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    shutil.copy2(ncdevmem, stage / KSELFTEST_HW / "ncdevmem")


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


def make_ssh_keys(d: Path) -> None:
    d.mkdir(mode=0o700)
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "devmemsim-payload", "-f", d / "id_ed25519"],
        "making the payload's ssh key", logname="payload-ssh")
    shutil.copy2(d / "id_ed25519.pub", d / "authorized_keys")
    (d / "config").write_text(SSH_CLIENT_CONFIG)


class build_lock:
    """One build at a time per cache (and build tree): a second devmemsim
    waits instead of building the same kernel or QEMU into the same place."""

    def __enter__(self):
        cache = cache_dir()
        cache.mkdir(parents=True, exist_ok=True)
        self.f = open(cache / ".build.lock", "w")
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
    with build_lock():
        return build_guest(build_qemu(build_model()))


def build_guest(qemu: Path, flavour: str = "") -> Artifacts:
    """Everything a booted node needs besides QEMU, for a kernel flavour
    (by default the one DEVMEMSIM_KERNEL names)."""
    flavour = flavour or kernel_flavour()
    src, kout, bz, release = build_kernel(flavour)
    kos = build_modules(kout, flavour)
    ncdevmem = build_ncdevmem(src, kout)
    rootfs = build_rootfs()
    payload = build_payload(kos, ncdevmem, src, flavour)
    return Artifacts(qemu=qemu, bzimage=bz, kernel_version=release, rootfs=rootfs, payload=payload)


# What each test suite needs built (tests/meson.build): the model build is
# enough for the unit, RTL, fuzz and lint suites, QEMU too for the qtest and CLI
# suites, every artifact for the guest suite (and for a suite not listed),
# and the debug kernel's too for the guest-debug suite.
STAGES = ("model", "qemu", "guest", "guest-debug")
SUITE_NEEDS = {"unit": "model", "rtl": "model", "fuzz": "model", "lint": "model", "cli": "qemu",
               "qemu": "qemu", "guest-debug": "guest-debug"}
# meson test options that take a value (the next argument unless given as --opt=value).
_MESON_VALUE_OPTS = {"--suite", "--no-suite", "--repeat", "--num-processes", "-j", "--setup",
                     "--wrapper", "--timeout-multiplier", "-t", "--test-args", "--logbase",
                     "--gdb-path", "--max-lines", "-C"}


def build_for_tests(meson_args: list) -> None:
    """Build what the tests that `meson test MESON_ARGS` selects need."""
    with build_lock():
        model = build_model()
        stage = stage_for_tests(meson_args, suites_by_test(model))
        if stage == "model":
            return
        qemu = build_qemu(model)
        if stage in ("guest", "guest-debug"):
            build_guest(qemu, "default")
        if stage == "guest-debug":
            build_guest(qemu, "debug")


def suites_by_test(model_build: Path) -> dict:
    """{test name: [suite, ...]} from meson's introspection."""
    out = run(["meson", "introspect", model_build, "--tests"], "listing the tests", capture=True)
    return {t["name"]: [s.split(":")[-1] for s in t["suite"]] for t in json.loads(out)}


def stage_for_tests(meson_args: list, tests: dict) -> str:
    """The last of STAGES the selected tests need."""
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
    needs = [SUITE_NEEDS.get(suite, "guest") for suite in suites] or ["model"]
    return max(needs, key=STAGES.index)
