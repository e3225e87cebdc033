"""Where things live: the source tree, the build tree, the cache, run dirs."""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("DEVMEMSIM_BUILD", ROOT / "build"))
LAUNCHER = ROOT / "devmemsim"  # the command line, as users (and tests) run it


def cache_dir() -> Path:
    """Heavy artifacts (QEMU, kernel, guest image), keyed by their inputs."""
    env = os.environ.get("DEVMEMSIM_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(xdg) / "devmemsim"


def qemu_work() -> Path:
    """QEMU's incremental build (source copy, build tree, binary)."""
    return cache_dir() / "qemu"


def qemu_binary() -> Path:
    """The QEMU every node and every qtest test runs."""
    return qemu_work() / "bin" / "qemu-system-x86_64"


def qemu_env() -> dict:
    """The environment QEMU runs in: this checkout's model library first.

    The cached QEMU finds libdevmemsim.so by its RUNPATH in the cache, a
    copy of whichever checkout built QEMU last; two checkouts (a worktree,
    a clone) sharing the cache would otherwise run each other's model."""
    env = dict(os.environ)
    lib = str(BUILD / "sysc-model")
    env["LD_LIBRARY_PATH"] = ":".join(filter(None, [lib, env.get("LD_LIBRARY_PATH")]))
    return env


def run_root() -> Path:
    """Per-cluster run directories (sockets, consoles, logs).

    Kept short: UNIX socket paths are limited to 107 bytes."""
    env = os.environ.get("DEVMEMSIM_RUNDIR")
    if env:
        return Path(env)
    return Path("/tmp") / f"devmemsim-{os.getuid()}"
