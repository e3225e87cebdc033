"""Named nodes on two data networks (configs/cluster/two-networks.toml):
alpha and beta (two NIC/GPU pairs each) and gamma on the switch "fabric",
alpha and beta also on the point-to-point link "side". Every NIC has the
addresses the plan gives it, every node reaches every other on every network
they share (IPv4 and IPv6), and a devmem transfer over "side" (pair 1) is
verified (about 1 min under TCG)."""

import unittest
from pathlib import Path

from guestlib import boot, cli, complaints, main, stop
from devmemsim import clusterfile
from devmemsim.cluster import Cluster
from devmemsim.transfer import transfer

FILE = Path(__file__).resolve().parents[2] / "configs" / "cluster" / "two-networks.toml"
NAME = "networks"
NBYTES = 4 << 20


def sh(node: str, script: str) -> str:
    res = cli("exec", "--name", NAME, node, "--", script, timeout=900)
    if res.returncode:
        raise AssertionError(f"{node}: exit {res.returncode}\n$ {script}\n{res.stdout}\n{res.stderr}")
    return res.stdout


class TwoNetworks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.plan = clusterfile.load(FILE)
        boot(NAME, "--cluster", str(FILE))

    @classmethod
    def tearDownClass(cls):
        stop(NAME)

    def test_every_nic_has_its_planned_addresses(self):
        for node in self.plan.nodes:
            self.assertEqual(sh(node.name, "hostname").strip(), node.name)
            for nic in node.nics:
                a = nic.address
                out = sh(node.name, f"ip -o addr show dev $(grep -l '^{a.mac}$' /sys/class/net/*/address | cut -d/ -f5)")
                self.assertIn(f" {a.cidr} ", out)
                self.assertIn(f" {a.cidr6} ", out)

    def test_every_node_reaches_its_peers_on_every_network(self):
        for net in self.plan.networks.values():
            for node, pair in net.members:
                peers = [self.plan.node(n).nics[p].address for n, p in net.members if n != node]
                script = "\n".join(
                    f"ok=; for i in $(seq 30); do ping -c1 -W2 {addr} >/dev/null && ok=1 && break; done; "
                    f"[ -n \"$ok\" ] || {{ echo 'no answer from {addr}'; exit 1; }}"
                    for p in peers for addr in (p.addr, p.addr6))
                sh(node, script)

    def test_devmem_transfer_over_the_p2p_link(self):
        tx, rx = transfer(Cluster(NAME), "devmem", NBYTES, "alpha", "beta", pair=1)
        for run in (tx, rx):
            self.assertTrue(run["verified"], run)
            self.assertEqual(run["payload_bytes"], NBYTES, run)

    def test_transfer_needs_one_network(self):
        with self.assertRaisesRegex(Exception, "no node .gamma. with a connected NIC 1"):
            transfer(Cluster(NAME), "devmem", NBYTES, "alpha", "gamma", pair=1)

    def test_zz_no_kernel_complaints(self):
        for node in self.plan.nodes:
            self.assertEqual(complaints(sh(node.name, "dmesg")), [])


if __name__ == "__main__":
    main()
