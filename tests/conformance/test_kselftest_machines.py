"""devmemsim kselftest boots the cluster again for a file that needs more of
a node than the default (kselftest.FILE_MACHINES: toeplitz.py's RPS cases
want vCPUs no RX queue interrupt uses) and back to the default machine for
the files after it: every node of the default cluster, the runner alone of
a cluster file's. The cluster is a stand-in (no guest boots)."""

import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from devmemsim import clusterfile, ktap, kselftest  # noqa: E402
from devmemsim.cluster import Machine  # noqa: E402


class Session(kselftest.Session):
    """kselftest's Session on a plan, recording each boot's vCPUs (the
    runner's, every node's) and the runner's vCPUs each file ran on."""

    def __init__(self, plan):
        super().__init__(None, plan, "/g", None)
        self.boots, self.ran = [], []

    def boot(self, plan=None):
        self.booted = plan or self.booted
        self.boots.append(self.booted.nodes[0].smp)
        self.every = [n.smp for n in self.booted.nodes]
        return []

    def run_file(self, tf, on_case):
        self.ran.append((tf.rel, self.booted.nodes[0].smp))
        return ktap.FileResult(tf.test, status="ok")


class FileMachines(unittest.TestCase):
    def run_set(self, rels, plan=None):
        session = Session(plan or clusterfile.default_plan(2))
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

    def test_default_cluster_every_node(self):
        six = kselftest.FILE_MACHINES["hw/toeplitz.py"].smp
        self.assertEqual(self.run_set(["hw/toeplitz.py"]).every, [six, six])

    def test_cluster_file_runner_only(self):
        """A cluster file's runner gets the vCPUs, its other nodes keep the
        file's (two-networks.toml: 1 each); the files before and after run
        on the file's own plan."""
        plan = clusterfile.load(ROOT / "configs" / "cluster" / "two-networks.toml")
        six = kselftest.FILE_MACHINES["hw/toeplitz.py"].smp
        s = self.run_set(["hw/rss_ctx.py", "hw/toeplitz.py", "hw/tso.py"], plan)
        self.assertEqual(s.ran, [("hw/rss_ctx.py", 1), ("hw/toeplitz.py", six), ("hw/tso.py", 1)])
        self.assertEqual(s.boots, [1, six, 1])
        self.assertEqual(s.every, [1, 1, 1])
        self.assertEqual(kselftest.vcpus_booted(s.plan_for(Machine(smp=six))), f"{six} vCPUs on alpha")


if __name__ == "__main__":
    unittest.main(verbosity=2)
