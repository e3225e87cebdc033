"""devmemsim(1), generated from the parser (cli.make_parser) by Debian's
argparse-manpage (python3-argparse-manpage), with the exit statuses the
errors carry (errors.py). meson builds it as build/devmemsim.1:

  python3 -m devmemsim.manpage FILE      ('-': stdout)

Bash completion comes from the same parser, through Debian's argcomplete
(python3-argcomplete): the launcher answers argcomplete's requests
(cli.main), and `register-python-argcomplete devmemsim ./devmemsim` is the
shell's side (meson: build/devmemsim.bash-completion)."""

import argparse
import os
import re
import sys

from . import cli
from .errors import Failure, GuestDied, TreeBroken, UsageError
from .paths import ROOT

SUMMARY = "emulated devmem TCP hardware (NIC + GPU) in QEMU: clusters, kernel selftests, simulation"


def exit_statuses() -> str:
    """One line per exit status, from the errors' own docstrings."""
    lines = ["0: done (run and exec: the command's own exit status)"]
    for error in sorted((Failure, UsageError, GuestDied, TreeBroken), key=lambda e: e.status):
        said = re.split(r":|\.\s", " ".join(error.__doc__.split()), maxsplit=1)[0]
        lines.append(f"{error.status}: {said[0].lower()}{said[1:]}")
    return "\n".join(lines + ["130: interrupted (Ctrl-C)"])


def text() -> str:
    """The man page (roff)."""
    from build_manpages.manpage import Manpage  # Debian's python3-argparse-manpage

    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "1000"  # argparse wraps help at the terminal's width; man wraps it itself
    try:
        p = cli.make_parser()
        # Its own line breaks kept (the exit statuses), no wrapping: man wraps.
        p.formatter_class = argparse.RawDescriptionHelpFormatter
        p.man_short_description = SUMMARY
        p._manpage = [
            {"heading": "exit status", "content": exit_statuses()},
            {"heading": "see also", "content": f"README.md and docs/cli.md in the source tree ({ROOT}), "
                                               "or 'devmemsim help COMMAND'."},
        ]
        return str(Manpage(p))
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns


def main(argv: list) -> int:
    if len(argv) != 1:
        print("usage: python3 -m devmemsim.manpage FILE ('-': stdout)", file=sys.stderr)
        return 2
    page = text()
    if argv[0] == "-":
        sys.stdout.write(page)
    else:
        with open(argv[0], "w") as f:
            f.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
