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


def run_root() -> Path:
    """Per-cluster run directories (sockets, consoles, logs).

    Kept short: UNIX socket paths are limited to 107 bytes."""
    env = os.environ.get("DEVMEMSIM_RUNDIR")
    if env:
        return Path(env)
    return Path("/tmp") / f"devmemsim-{os.getuid()}"
