"""devmemsim kselftest --cluster FILE: who runs the selftests and
who is their ssh remote, from the plan (kselftest.roles), and the one-line
refusals before anything is built or booted. No guest boots (seconds)."""

import unittest
from pathlib import Path

from clilib import FileCase, cli
from devmemsim import addressing, clusterfile, kselftest
from devmemsim.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
CLUSTERS = ROOT / "configs" / "cluster"

# Node a's NIC 0 is on "lan" with c's, the second network (10.10.1.0/24);
# b is alone on "other": the remote is c, not the second node.
SECOND_NETWORK = """\
    [nodes]
    names = ["a", "b", "c"]
    networks = ["lan"]
    [node.b]
    networks = ["other"]
    [[network]]
    name = "other"
    [[network]]
    name = "lan"
    """
# a alone on "lan", b on "other": nobody for the runner to reach.
ALONE = SECOND_NETWORK.replace('["a", "b", "c"]', '["a", "b"]')

class Roles(FileCase):
    def test_default_cluster_is_node0_and_node1(self):
        """Without --cluster, the environment the selftests get is the one
        the fixed node0/node1 addresses gave."""
        plan = kselftest.cluster_plan("", 3)
        self.assertTrue(kselftest.default_cluster(plan))
        r = kselftest.roles(plan)
        self.assertEqual((r.runner.name, r.remote.name), ("node0", "node1"))
        self.assertEqual(r.env("eth1"), {
            "NETIF": "eth1", "LOCAL_V4": addressing.data_addr(0), "REMOTE_V4": addressing.data_addr(1),
            "LOCAL_V6": addressing.data_addr6(0), "REMOTE_V6": addressing.data_addr6(1),
            "LOCAL_PREFIX_V6": addressing.container_prefix6(0), "REMOTE_TYPE": "ssh",
            "REMOTE_ARGS": addressing.data_addr(1)})
        self.assertEqual(sorted(r.members), ["node0", "node1", "node2"])
        self.assertEqual(addressing.data_link(r.local.network).host_glob(), addressing.DATA.host_glob())

    def test_two_networks(self):
        """alpha (two NICs) runs against NIC 0 on the switch "fabric"; beta,
        the first other node there, is the remote (not over "side")."""
        plan = kselftest.cluster_plan(str(CLUSTERS / "two-networks.toml"), 2)
        self.assertFalse(kselftest.default_cluster(plan))
        r = kselftest.roles(plan)
        self.assertEqual((r.runner.name, r.remote.name), ("alpha", "beta"))
        env = r.env("eth1")
        self.assertEqual((env["LOCAL_V4"], env["REMOTE_V4"], env["REMOTE_ARGS"]), ("10.10.0.1", "10.10.0.2", "10.10.0.2"))
        self.assertEqual((env["LOCAL_V6"], env["REMOTE_V6"]), ("fd10:10::1", "fd10:10::2"))
        self.assertEqual(env["LOCAL_PREFIX_V6"], "fd10:20:0::/64")
        self.assertEqual((r.local.mac, r.peer.mac), ("52:54:00:d5:00:00", "52:54:00:d5:00:01"))
        self.assertEqual(sorted(r.members), ["alpha", "beta", "gamma"])
        self.assertIn("= 52:54:00:d5:00:00 ]", kselftest.FIND_NETIF.format(mac=r.local.mac))

    def test_remote_on_the_runners_network(self):
        r = kselftest.roles(clusterfile.load(self.write(SECOND_NETWORK)))
        self.assertEqual((r.runner.name, r.remote.name), ("a", "c"))
        self.assertEqual((r.local.addr, r.peer.addr, r.peer.addr6), ("10.10.1.1", "10.10.1.3", "fd10:10:1::3"))
        self.assertEqual(sorted(r.members), ["a", "c"])  # b's clock is left alone
        self.assertEqual(addressing.data_link(r.local.network).host_glob(), "10.10.1.*")

    def assertRefused(self, path: str, msg: str, *args):
        with self.assertRaises(UsageError) as cm:
            kselftest.cluster_plan(path, 2)
        self.assertEqual(str(cm.exception), msg)
        for cmd in (["kselftest", "--cluster", path, *args], ["conformance", "--cluster", path, "--output", "-"]):
            with self.subTest(cmd=cmd[0]):
                res = cli(*cmd, timeout=60)
                self.assertEqual(res.returncode, 2, res.stderr)
                self.assertEqual(res.stderr.strip(), f"devmemsim: {msg}")

    def test_no_shared_network(self):
        path = self.write(ALONE)
        self.assertRefused(path, f"{path}: node.a.networks: the first node runs the selftests on its NIC 0, which is "
                                 "on network 'lan' with no other node (their ssh remote must be on that NIC's network)",
                           "hw/devmem.py")

    def test_runner_nic_unconnected(self):
        path = self.write('[nodes]\ncount = 2\n[node.node0]\nnetworks = [""]\n[[network]]\nname = "lan"\n')
        self.assertRefused(path, f"{path}: node.node0.networks: the first node runs the selftests on its NIC 0, which is "
                                 "on no network (their ssh remote must be on that NIC's network)")

    def test_node_configuration_checked_first(self):
        """A node's configuration the model refuses: one line, the same from
        kselftest and conformance, before anything is built or booted."""
        path = self.write('[nodes]\ncount = 2\n[node.node1]\nset = ["nic.bogus=1"]\n')
        errors = set()
        for cmd in (["kselftest", "--cluster", path, "hw/devmem.py"], ["conformance", "--cluster", path, "--output", "-"]):
            with self.subTest(cmd=cmd[0]):
                res = cli(*cmd, timeout=120)
                self.assertEqual(res.returncode, 2, res.stdout + res.stderr)
                self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
                self.assertTrue(res.stderr.startswith("devmemsim: --set nic.bogus=1: nic.bogus: unknown key"), res.stderr)
                errors.add(res.stderr)
        self.assertEqual(len(errors), 1, errors)

    def test_refusals(self):
        four = str(CLUSTERS / "four.toml")
        res = cli("kselftest", "--cluster", four, "--nodes", "2", "hw/devmem.py", timeout=60)
        self.assertEqual(res.returncode, 2, res.stderr)
        self.assertEqual(res.stderr.strip(), "devmemsim: --nodes: not with --cluster (the cluster file says it)")
        res = cli("kselftest", "--cluster", "/nonexistent/c.toml", timeout=60)
        self.assertEqual(res.returncode, 2, res.stderr)
        self.assertEqual(res.stderr.strip(), "devmemsim: --cluster /nonexistent/c.toml: no such file")
        res = cli("conformance", "--cluster", four, "--from", "/nonexistent/run.json", timeout=60)
        self.assertEqual(res.returncode, 2, res.stderr)
        self.assertEqual(res.stderr.strip(), "devmemsim: --cluster: not with --from (the run is read, not made)")
        res = cli("kselftest", "--nodes", "1", timeout=60)
        self.assertEqual(res.stderr.strip(), f"devmemsim: --nodes 1: must be 2..{addressing.MAX_NODES} "
                                             "(node0 runs the tests, node1 is the remote)")


if __name__ == "__main__":
    unittest.main(verbosity=2)
