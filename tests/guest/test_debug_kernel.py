"""Run guest test files under the debug kernel; then check every console.

    test_debug_kernel.py [--allow TEXT]... TEST_FILE [unittest arguments: test names...]
    test_debug_kernel.py [--allow TEXT]... --shared TEST_FILE...

TEST_FILE runs with DEVMEMSIM_KERNEL=debug, so every cluster it boots
(`devmemsim boot`, `run` or `demo`) runs the debug kernel flavour
(configs/kernel/debug.config: KASAN, lockdep, kmemleak, DEBUG_NET, dma-buf and
DMA-API checks) with modules built against it, and with
DEVMEMSIM_KEEP_CONSOLES naming a private directory: when a cluster is cleaned
up, after `stop` made each kmemleak kernel scan for leaks, its nodes' serial
consoles are copied there. Afterwards every console kept must show the debug
kernel booting with its checkers on, and no complaint
(guestlib.console_complaints: KASAN, lockdep, WARN, BUG, kmemleak, RCU
stalls, hung tasks...). Each complaint is printed with the report that follows
it in the console.

A complaint line that holds an --allow TEXT is what the test provokes on
purpose (guest-lies: dmsnic's "bad completion" lines) and no problem.

With --shared, the files run one after the other on one two-node cluster
booted here (guestlib.SHARED_CLUSTER: a TwoNodes class probes the data NICs
afresh instead of booting; a debug boot and stop cost ~80 s under TCG);
a cluster a file boots itself (`demo`, `run`) is its own as before.

Exit status: the first failed test file's, else 1 if a console complained or
none was kept, else 0.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from guestlib import console_complaints
from devmemsim.paths import LAUNCHER

# What a console of a debug-flavour boot shows: the release, and the
# checkers' banners (so that a test cannot pass on a kernel without them).
DEBUG_BANNERS = (
    "-devmemsim-debug",
    "KernelAddressSanitizer initialized",
    "Lock dependency validator",
    "kmemleak: Kernel memory leak detector initialized",
)
REPORT_LINES = 40  # console lines shown with a complaint
REPORTS_SHOWN = 5  # per console; later complaints are listed as one line


def check_console(path: Path, allowed=()) -> list:
    """Problems with one kept console: missing banners, complaints but the
    allowed ones (each with the lines that follow its first occurrence)."""
    text = path.read_text(errors="replace")
    problems = [f"{path.name}: no '{b}': not a debug-kernel boot?" for b in DEBUG_BANNERS if b not in text]
    lines = text.splitlines()
    found = [c for c in console_complaints(path) if not any(a in c for a in allowed)]
    for n, bad in enumerate(found):
        report = ""
        if n < REPORTS_SHOWN:
            at = lines.index(bad)
            report = "\n    " + "\n    ".join(lines[at + 1:at + REPORT_LINES])
        problems.append(f"{path.name}: {bad.strip()}{report}")
    return problems


def run_files(runs, env) -> int:
    """Each (test file, unittest arguments) in runs, in order: the first
    failed file's exit status, or 0."""
    first_failure = 0
    for test, args in runs:
        started = time.monotonic()
        status = subprocess.call([sys.executable, str(test), *args], env=env)
        print(f"{test.name} under the debug kernel: exit {status} in {time.monotonic() - started:.0f} s",
              file=sys.stderr)
        first_failure = first_failure or status
    return first_failure


def run_shared(tests, env) -> int:
    """The test files on one two-node cluster booted for them."""
    name = f"debug-shared-{os.getpid()}"
    env = dict(env, DEVMEMSIM_SHARED_CLUSTER=name)
    # meson's timeout sends SIGTERM: stop the cluster on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    started = time.monotonic()
    boot = subprocess.run([str(LAUNCHER), "boot", "--name", name, "--nodes", "2"], env=env, text=True,
                          capture_output=True, timeout=1800)
    if boot.returncode:
        print(f"debug kernel: boot of the shared cluster failed:\n{boot.stdout}{boot.stderr}", file=sys.stderr)
        subprocess.run([str(LAUNCHER), "stop", "--name", name], env=env, timeout=300)
        return boot.returncode
    print(f"debug kernel: shared cluster {name} booted in {time.monotonic() - started:.0f} s", file=sys.stderr)
    try:
        return run_files([(t, []) for t in tests], env)
    finally:
        subprocess.run([str(LAUNCHER), "stop", "--name", name], env=env, timeout=300)


def main(argv) -> int:
    shared, allowed = False, []
    while argv[:1] in (["--shared"], ["--allow"]):
        if argv[0] == "--shared":
            shared, argv = True, argv[1:]
        else:
            allowed, argv = allowed + argv[1:2], argv[2:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="dms-consoles-") as keep:
        env = dict(os.environ, DEVMEMSIM_KERNEL="debug", DEVMEMSIM_KEEP_CONSOLES=keep)
        if shared:
            status = run_shared([Path(t) for t in argv], env)
        else:
            status = run_files([(Path(argv[0]), argv[1:])], env)
        consoles = sorted(Path(keep).glob("*.console"))
        problems = [p for c in consoles for p in check_console(c, allowed)]
    if not consoles:
        problems.append("no console was kept: did the test boot a cluster?")
    for p in problems:
        print(f"debug kernel: {p}", file=sys.stderr)
    print(f"debug kernel: {len(consoles)} console(s) checked, {len(problems)} problem(s)", file=sys.stderr)
    if status:
        return status
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
