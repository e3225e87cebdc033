"""devmemsim command line: the registry of commands. Each command's module
adds its parser (add_command, or add_commands for a family) and names the
function that runs it (the parser's default `run`)."""

import argparse
import sys

from . import clustercmd, conformance, demo, fidelity, kselftestcmd, sim, sweep, testcmd
from .errors import Failure, UsageError


class Parser(argparse.ArgumentParser):
    """argparse that reports a mistake as one line and exits with 2."""

    def error(self, message):
        raise UsageError(message)


def make_parser():
    p = Parser(prog="devmemsim", description="Emulated devmem TCP hardware (NIC + GPU) in QEMU.")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    testcmd.add_commands(sub)
    clustercmd.add_commands(sub)
    demo.add_command(sub)
    sim.add_command(sub)
    sweep.add_command(sub)
    fidelity.add_command(sub)
    conformance.add_command(sub)
    kselftestcmd.add_command(sub)
    return p


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Everything after the first '--' is the command to run (or, for
    # 'test', arguments for meson test), never options of ours.
    rest = []
    if "--" in argv:
        i = argv.index("--")
        argv, rest = argv[:i], argv[i + 1 :]
    try:
        a = make_parser().parse_args(argv)
        if rest and not getattr(a, "takes_command", False):
            raise UsageError(f"'{a.cmd}' takes no command after '--'")
        a.argv = rest
        return a.run(a)
    except (UsageError, Failure) as e:
        print(f"devmemsim: {e}", file=sys.stderr)
        return e.status
    except KeyboardInterrupt as e:  # kselftest.Stopped says which signal
        print(f"devmemsim: {e or 'interrupted'}", file=sys.stderr)
        return getattr(e, "status", 130)
