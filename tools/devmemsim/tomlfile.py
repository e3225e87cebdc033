"""Reading a TOML file the CLI was given (a node config, a cluster file, a
sweep file): a file that is missing or does not parse is one line."""

import tomllib

from .errors import UsageError


def read(path) -> dict:
    """path's TOML document; UsageError naming the file when it cannot be
    read or does not parse (tomllib's message names the line)."""
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{path}: {e}") from None
