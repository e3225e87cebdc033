"""Run a guest test file under the debug kernel; then check every console.

    test_debug_kernel.py TEST_FILE [unittest arguments: test names...]

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

Exit status: the test file's if it failed, else 1 if a console complained or
none was kept, else 0.
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from guestlib import console_complaints

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


def check_console(path: Path) -> list:
    """Problems with one kept console: missing banners, complaints (each
    with the lines that follow its first occurrence)."""
    text = path.read_text(errors="replace")
    problems = [f"{path.name}: no '{b}': not a debug-kernel boot?" for b in DEBUG_BANNERS if b not in text]
    lines = text.splitlines()
    for n, bad in enumerate(console_complaints(path)):
        report = ""
        if n < REPORTS_SHOWN:
            at = lines.index(bad)
            report = "\n    " + "\n    ".join(lines[at + 1:at + REPORT_LINES])
        problems.append(f"{path.name}: {bad.strip()}{report}")
    return problems


def main(argv) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    test, args = Path(argv[0]), argv[1:]
    with tempfile.TemporaryDirectory(prefix="dms-consoles-") as keep:
        env = dict(os.environ, DEVMEMSIM_KERNEL="debug", DEVMEMSIM_KEEP_CONSOLES=keep)
        started = time.monotonic()
        status = subprocess.call([sys.executable, str(test), *args], env=env)
        print(f"{test.name} under the debug kernel: exit {status} in {time.monotonic() - started:.0f} s",
              file=sys.stderr)
        consoles = sorted(Path(keep).glob("*.console"))
        problems = [p for c in consoles for p in check_console(c)]
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
