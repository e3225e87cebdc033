"""What a kernel log says went wrong: the complaint patterns, defined once
(the guest tests and `devmemsim kselftest` scan consoles and dmesg with
them, and every command watches the consoles of the nodes it waits on:
Watch), report excerpts, and the kernel's taint flags."""

import collections
import time
from dataclasses import dataclass, field
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
# Complaints after which the kernel, or the task that met them, does not go
# on: an oops, a panic, and a CPU or task the kernel found stuck. A command
# waiting on such a node may never return: the CLI stops waiting on it
# (cluster.py). After the other complaints (a WARN, lockdep, kmemleak...)
# the command goes on; their reports are shown.
FATAL = ("BUG:", "kernel BUG at", "Oops", "general protection fault", "Kernel panic",
         "detected stall", "blocked for more than")
SHOWN_LINES = 15  # of a report, as a command shows it while it happens
SETTLE = 1.0  # seconds without a console line after which a shorter report is taken as whole

# /proc/sys/kernel/tainted, bit by bit (Documentation/admin-guide/tainted-kernels.rst).
TAINT_LETTERS = "PFSRMBUDAWCIOELKXTNJ"


def is_complaint(line):
    if "kmemleak: " in line:
        return any(head in line for head in KMEMLEAK_HEADLINES)
    return any(bad in line for bad in KERNEL_COMPLAINTS)


def is_fatal(line):
    return is_complaint(line) and any(bad in line for bad in FATAL)


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


TAIL_BYTES = 256 << 10  # where tail() looks for a log's last lines


def tail(path, lines: int) -> str:
    """The last lines of a console log (or of QEMU's: with --trace, it
    grows large)."""
    text, _ = read_from(path, max(0, size(path) - TAIL_BYTES))
    return "\n".join(text.splitlines()[-lines:])


@dataclass
class Report:
    """A complaint as a node's console shows it: from its "cut here" line,
    if any, at most SHOWN_LINES lines."""

    node: str
    path: Path
    lines: list = field(default_factory=list)

    @property
    def fatal(self) -> bool:
        return any(is_fatal(line) for line in self.lines)

    @property
    def headline(self) -> str:
        """Its first complaint line, without the kernel's timestamp."""
        line = next(line for line in self.lines if is_complaint(line))
        return line.split("] ", 1)[-1].strip() if line.startswith("[") else line.strip()

    def text(self) -> str:
        return f"console {self.path}:\n  " + "\n  ".join(self.lines)


class Watch:
    """A node's console followed as it grows from an offset (by default,
    its end now): poll() reads only what is new and returns the reports
    it completes."""

    def __init__(self, node: str, path, offset: int = None):
        self.node, self.path = node, Path(path)
        self.offset = size(path) if offset is None else offset
        self.partial = ""  # the last line, unfinished
        self.before = collections.deque(maxlen=CUT_HERE_BEFORE)  # where a WARN's "cut here" may be
        self.open = None  # the report still getting its lines
        self.heard = time.monotonic()  # when the console last grew

    def poll(self, now: float = None, final: bool = False) -> list:
        """The reports completed since the last poll. A report is complete
        with SHOWN_LINES lines, or once the console has said nothing for
        SETTLE seconds; with final (nothing more will be waited for), as
        it is."""
        now = time.monotonic() if now is None else now
        text, self.offset = read_from(self.path, self.offset)
        if text:
            self.heard = now
        lines = (self.partial + text).split("\n")
        self.partial = lines.pop()
        done = [report for line in lines for report in self._line(line)]
        if self.open and (final or now - self.heard >= SETTLE):
            done.append(self.open)
            self.open = None
        return done

    def end(self) -> list:
        """The last reports of a node that is gone: its console's
        unfinished last line counts too."""
        done = self.poll(final=True)
        line, self.partial = self.partial, ""
        done += self._line(line) if line else []
        if self.open:
            done.append(self.open)
            self.open = None
        return done

    def _line(self, line: str) -> list:
        """Take one more line; the report it completes, if any."""
        done = []
        if self.open:
            self.open.lines.append(line)
            if len(self.open.lines) >= SHOWN_LINES:
                done.append(self.open)
                self.open = None
        elif is_complaint(line):
            cut = [i for i, seen in enumerate(self.before) if CUT_HERE in seen]
            self.open = Report(self.node, self.path, list(self.before)[cut[-1]:] if cut else [])
            self.open.lines.append(line)
        self.before.append(line)
        return done


def taint_flags(value: int) -> str:
    """The letters of a taint mask, e.g. 4608 -> 'WO' ('' when clean)."""
    return "".join(letter for bit, letter in enumerate(TAINT_LETTERS) if value >> bit & 1)
