"""devmemsim kselftest boots the cluster again for a file that needs more of
a node than the default (kselftest.FILE_MACHINES: toeplitz.py's RPS cases
want vCPUs no RX queue interrupt uses) and back to the default machine for
the files after it. The cluster is a stand-in (no guest boots)."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

from devmemsim import ktap, kselftest  # noqa: E402
from devmemsim.cluster import Machine  # noqa: E402


class Session:
    """Records each boot's vCPUs and the machine each file ran on."""

    def __init__(self):
        self.machine, self.dead, self.runner = Machine(), False, True
        self.boots, self.ran = [], []
        self.current = None

    def boot(self, machine=None):
        self.machine = machine or self.machine
        self.boots.append(self.machine.smp)
        return []

    def run_file(self, tf, on_case):
        self.ran.append((tf.rel, self.machine.smp))
        return ktap.FileResult(tf.test, status="ok")


class FileMachines(unittest.TestCase):
    def run_set(self, rels):
        session = Session()
        kselftest.run_files(session, [kselftest.TestFile(rel, 0) for rel in rels], [])
        return session

    def test_toeplitz_gets_vcpus_beyond_the_queue_interrupts(self):
        self.assertGreaterEqual(kselftest.FILE_MACHINES["hw/toeplitz.py"].smp, 4 + 2)

    def test_booted_for_the_file_and_back(self):
        s = self.run_set(["hw/rss_ctx.py", "hw/toeplitz.py", "hw/tso.py", "hw/uso.py"])
        six = kselftest.FILE_MACHINES["hw/toeplitz.py"].smp
        self.assertEqual(s.ran, [("hw/rss_ctx.py", 2), ("hw/toeplitz.py", six), ("hw/tso.py", 2), ("hw/uso.py", 2)])
        self.assertEqual(s.boots, [2, six, 2])

    def test_first_file_boots_its_machine(self):
        s = self.run_set(["hw/toeplitz.py"])
        self.assertEqual(s.boots, [kselftest.FILE_MACHINES["hw/toeplitz.py"].smp])


if __name__ == "__main__":
    unittest.main(verbosity=2)
