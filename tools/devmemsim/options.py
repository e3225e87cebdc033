"""Options several commands share, each with one meaning wherever it
appears (tests/cli checks the whole parser: no option string with two), and
the old spellings of renamed options, kept for one release as deprecated
aliases that say so.

  --json [FILE]   write JSON to FILE; '-' or no FILE: stdout (the command's
                  text goes to stderr then, so that stdout is JSON alone)
  --output PATH   where the results go (a file, or a sweep's directory)
  --dry-run       print the plan and each node's QEMU command line; build,
                  boot and write nothing (dryrun.py)
"""

import argparse
import contextlib
import os
import sys

from .errors import log


def add_json(p, what: str, default=None, stdout: bool = True) -> None:
    """--json [FILE]; `what`: what the JSON holds. Without stdout, the
    command refuses '-' (and no FILE) itself: its help says so."""
    to = "'-' or no FILE: stdout" if stdout else "a file only"
    p.add_argument("--json", nargs="?", const="-", default=default, metavar="FILE",
                   help=f"write JSON to FILE ({to}): {what}")


def add_output(p, what: str, metavar: str = "FILE", default=None) -> None:
    """--output FILE (or DIR); `what`: what goes there, with the default."""
    p.add_argument("--output", default=default, metavar=metavar, help=f"where the results go: {what}")


def add_dry_run(p) -> None:
    p.add_argument("--dry-run", action="store_true",
                   help="print the plan: the nodes, their configurations, the artifacts and each node's QEMU "
                        "command line; build, boot and write nothing")


class _Alias(argparse.Action):
    """An old spelling of an option: warns once, then does what the new
    one does (the same destination, value and checks)."""

    deprecated = True  # tests/cli leaves deprecated aliases out of its check

    def __init__(self, option_strings, dest, target=None, message="", **kwargs):
        super().__init__(option_strings, dest, **kwargs)
        self.target, self.message, self.warned = target, message, False

    def __call__(self, parser, namespace, values, option_string=None):
        if not self.warned:
            log(self.message)
            self.warned = True
        self.target(parser, namespace, values, option_string)


def deprecated_alias(p, old: str, new: str, command: str) -> None:
    """Accept `old` for p's option `new` for one release, with one warning
    line when it is used (it is not shown in --help)."""
    target = next(a for a in p._actions if new in a.option_strings)
    p.add_argument(old, action=_Alias, target=target, dest=target.dest, default=argparse.SUPPRESS,
                   nargs=target.nargs, const=target.const, type=target.type, choices=target.choices,
                   metavar=target.metavar, help=argparse.SUPPRESS,
                   message=f"{old} for {command} is deprecated; use {new}")


# While text_to_stderr() runs: the command's own stdout, where JSON goes.
_stdout = None


@contextlib.contextmanager
def text_to_stderr(active: bool = True):
    """With active (--json to stdout), everything the body prints on stdout
    (its own lines and its subprocesses') goes to stderr, and json_file("-")
    writes to the real stdout: stdout carries the JSON alone."""
    global _stdout
    if not active or _stdout is not None:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    _stdout = os.fdopen(saved, "w")
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        _stdout.flush()
        os.dup2(saved, 1)
        _stdout.close()
        _stdout = None


@contextlib.contextmanager
def json_file(path: str):
    """A text stream to write a --json FILE to: FILE, or for '-' stdout
    (the real one inside text_to_stderr())."""
    if path != "-":
        with open(path, "w") as f:
            yield f
        return
    f = _stdout or sys.stdout
    yield f
    f.flush()
