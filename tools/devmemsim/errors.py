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
