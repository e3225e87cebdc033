"""The devmemsim command as the tests run it, and the CLI's package (for the
facts the tests share with it, e.g. devmemsim.addressing)."""

import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from devmemsim.paths import LAUNCHER  # noqa: E402


def cli(*args, timeout=600):
    """Run `devmemsim ARGS`; the finished process, output captured as text."""
    return subprocess.run([str(LAUNCHER), *args], text=True, capture_output=True, timeout=timeout)


class FileCase(unittest.TestCase):
    """A test case with a temporary directory that write() puts a cluster
    file in (the text dedented)."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, text: str) -> str:
        path = Path(self.dir.name) / "cluster.toml"
        path.write_text(textwrap.dedent(text))
        return str(path)
