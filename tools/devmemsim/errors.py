"""Errors the CLI reports as one line, with the exit status they carry, and
its progress lines."""

import sys


def log(msg: str) -> None:
    """One progress line on stderr."""
    print(f"devmemsim: {msg}", file=sys.stderr, flush=True)


class UsageError(Exception):
    """A mistake in the command line or a configuration: exit status 2."""

    status = 2


class Failure(Exception):
    """Something that was asked for could not be done: exit status 1."""

    status = 1


class TreeBroken(Failure):
    """A kernel tree that does not configure, build or boot, for reasons
    unrelated to the tests: exit status 125 (`git bisect run` skips it)."""

    status = 125


class GuestDied(Failure):
    """A node died while the CLI waited on it: its kernel reported an oops,
    a panic or a stuck CPU or task, its QEMU exited, or its agent went
    silent. Exit status 3; the message names the node and carries the
    report (or the console's last lines) and the console's path."""

    status = 3

    def __init__(self, node: str, why: str, details: str):
        super().__init__(f"{node} died: {why}\n{details}")
        self.node = node
