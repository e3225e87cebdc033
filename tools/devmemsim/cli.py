"""devmemsim command line: the registry of commands. Each command's module
adds its parser (add_command, or add_commands for a family) and names the
function that runs it (the parser's default `run`)."""

import argparse
import os
import re
import signal
import subprocess
import sys

from . import clustercmd, conformance, demo, fidelity, kselftestcmd, sim, sweep, testcmd
from .build import QEMU_VERSION, SCRIPTS
from .errors import Failure, UsageError
from .paths import ROOT


class Parser(argparse.ArgumentParser):
    """argparse that reports a mistake as one line and exits with 2."""

    def error(self, message):
        raise UsageError(message)


def version() -> str:
    """This tree's git description and what it builds the guests from."""
    described = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True,
                               text=True)
    tree = described.stdout.strip() if described.returncode == 0 else "(not a git checkout)"
    kernel = re.search(r"^PKG=(\S+)", (SCRIPTS / "fetch-linux.sh").read_text(), re.M).group(1)
    return f"devmemsim {tree}\nQEMU: Debian's qemu {QEMU_VERSION}, with devmemsim's devices\nguest kernel: {kernel}"


class Version(argparse.Action):
    """--version: computed when asked for (it runs git)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        print(version())
        parser.exit()


def add_help_command(sub, parser):
    h = sub.add_parser("help", help="this list, or a command's help", description="Print the list of "
                       "commands, or COMMAND's help (as COMMAND --help does).")
    h.add_argument("command", nargs="?", metavar="COMMAND")

    def show(a) -> int:
        if a.command is None:
            parser.print_help()
            return 0
        if a.command not in sub.choices:
            raise UsageError(f"help {a.command}: no such command (devmemsim help lists them)")
        sub.choices[a.command].print_help()
        return 0
    h.set_defaults(run=show)


def make_parser():
    p = Parser(prog="devmemsim", description="Emulated devmem TCP hardware (NIC + GPU) in QEMU.",
               epilog="'devmemsim help COMMAND' or 'devmemsim COMMAND --help': what a command does.")
    p.add_argument("--version", action=Version)
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    add_help_command(sub, p)
    testcmd.add_commands(sub)
    clustercmd.add_commands(sub)
    demo.add_command(sub)
    sim.add_command(sub)
    sweep.add_command(sub)
    fidelity.add_command(sub)
    conformance.add_command(sub)
    kselftestcmd.add_command(sub)
    for action in sub._choices_actions:  # a command's --help says what it does
        command = sub.choices[action.dest]
        command.description = command.description or action.help[0].upper() + action.help[1:] + "."
    return p


def complete() -> int:
    """Answer the shell's completion request (argcomplete's protocol: the
    command line in COMP_LINE, the answer on fd 8) from the parser; the
    shell's side is `register-python-argcomplete devmemsim ./devmemsim`
    (docs/cli.md). Deprecated spellings are not offered."""
    try:
        import argcomplete  # Debian's python3-argcomplete
    except ImportError:
        return 1  # the shell completes file names instead
    argcomplete.autocomplete(make_parser())  # exits
    return 1


def main(argv=None) -> int:
    if "_ARGCOMPLETE" in os.environ:
        return complete()
    argv = sys.argv[1:] if argv is None else argv
    # Everything after the first '--' is the command to run (or, for
    # 'test', arguments for meson test), never options of ours.
    rest = []
    if "--" in argv:
        i = argv.index("--")
        argv, rest = argv[:i], argv[i + 1 :]
    try:
        if not argv and not rest:
            make_parser().print_help(sys.stderr)
            return UsageError.status
        a = make_parser().parse_args(argv)
        if rest and not getattr(a, "takes_command", False):
            raise UsageError(f"'{a.cmd}' takes no command after '--'")
        a.argv = rest
        return a.run(a)
    except (UsageError, Failure) as e:
        print(f"devmemsim: {e}", file=sys.stderr)
        return e.status
    except KeyboardInterrupt as e:  # kselftest.Stopped says which signal
        print(f"devmemsim: {str(e) or 'interrupted'}", file=sys.stderr)
        return getattr(e, "status", 130)
    except BrokenPipeError:
        # The reader of stdout went away (`... | head`): stop quietly, as a
        # command killed by SIGPIPE would; nothing more can reach it.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
