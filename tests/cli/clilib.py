"""The devmemsim command as the tests run it, and the CLI's package (for the
facts the tests share with it, e.g. devmemsim.addressing)."""

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from devmemsim.paths import LAUNCHER  # noqa: E402


def cli(*args, timeout=600):
    """Run `devmemsim ARGS`; the finished process, output captured as text."""
    return subprocess.run([str(LAUNCHER), *args], text=True, capture_output=True, timeout=timeout)
