"""What a kernel log says went wrong: the complaint patterns, defined once
(the guest tests and `devmemsim kselftest` scan consoles and dmesg with
them), report excerpts, and the kernel's taint flags."""

from pathlib import Path

# Kernel log lines that mean the kernel found something wrong. WARNING: and
# BUG: cover most checkers (WARN_ON, DMA-API, debug objects, refcount_t,
# list and page_pool sanity, "BUG: KASAN: ...", "BUG: KFENCE: ...", soft
# lockups, sleeping in atomic context, "BUG: Bad page state"); the rest name
# reports that carry neither.
KERNEL_COMPLAINTS = (
    "WARNING:", "BUG:", "kernel BUG at", "Oops", "general protection fault", "Kernel panic",
    # lockdep and RCU (the lockdep headers follow a "WARNING:" line; named
    # here so that a report cut short still counts)
    "possible circular locking dependency", "possible recursive locking", "inconsistent lock state",
    "suspicious RCU usage", "detected stall", "blocked for more than",
    # kmemleak after a scan (echo scan > /sys/kernel/debug/kmemleak)
    "new suspected memory leaks", "unreferenced object",
    "Bad page state", "UBSAN:", "unregister_netdevice: waiting for",
    # our drivers and the stack's page_pool
    "leak", "stalled pool", "NETDEV WATCHDOG", "bad completion",
)
# Every kmemleak line says "leak": of its lines only a report's headlines count
# (not its banner, nor the backtrace lines under a headline).
KMEMLEAK_HEADLINES = ("unreferenced object", "new suspected memory leaks")
# A report is its first line and what follows it, up to this many lines
# (an oops with its stack trace and module list fits).
REPORT_LINES = 80
CUT_HERE = "------------[ cut here ]------------"
CUT_HERE_BEFORE = 5  # lines a WARN()'s message may take between "cut here" and "WARNING:"

# /proc/sys/kernel/tainted, bit by bit (Documentation/admin-guide/tainted-kernels.rst).
TAINT_LETTERS = "PFSRMBUDAWCIOELKXTNJ"


def is_complaint(line):
    if "kmemleak: " in line:
        return any(head in line for head in KMEMLEAK_HEADLINES)
    return any(bad in line for bad in KERNEL_COMPLAINTS)


def complaints(log):
    """The lines of a kernel log (dmesg or a serial console) that carry one
    of KERNEL_COMPLAINTS."""
    return [line for line in log.splitlines() if is_complaint(line)]


def console_complaints(path):
    """The complaints in a node's serial console log (NODE.console): unlike
    dmesg, it also holds what the kernel said while powering off."""
    return complaints(Path(path).read_text(errors="replace"))


def report(log, lines=REPORT_LINES):
    """The lines of log from its first complaint on, at most `lines` of
    them ('' if it has none): the report a reader needs to see. A WARN() or
    BUG() starts at its "cut here" line, a few lines above: its message
    comes between that and "WARNING: file:line ..." (lib/bug.c)."""
    text = log.splitlines()
    for i, line in enumerate(text):
        if is_complaint(line):
            cut = [j for j in range(max(0, i - CUT_HERE_BEFORE), i) if CUT_HERE in text[j]]
            start = cut[-1] if cut else i
            shown = text[start:start + lines]
            if len(text) - start > lines:
                shown.append(f"[... {len(text) - start - lines} more lines]")
            return "\n".join(shown)
    return ""


def size(path) -> int:
    """How far a console log has grown (0 if it does not exist yet)."""
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0


def read_from(path, offset: int):
    """(what a console log got after offset, the offset of its end now)."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except OSError:
        return "", offset
    return data.decode(errors="replace").replace("\r", ""), offset + len(data)


def tail(path, lines: int) -> str:
    """The last lines of a console log."""
    text, _ = read_from(path, 0)
    return "\n".join(text.splitlines()[-lines:])


def taint_flags(value: int) -> str:
    """The letters of a taint mask, e.g. 4608 -> 'WO' ('' when clean)."""
    return "".join(letter for bit, letter in enumerate(TAINT_LETTERS) if value >> bit & 1)
