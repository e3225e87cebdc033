"""Errors the CLI reports as one line, with the exit status they carry."""


class UsageError(Exception):
    """A mistake in the command line or a configuration: exit status 2."""

    status = 2


class Failure(Exception):
    """Something that was asked for could not be done: exit status 1."""

    status = 1
