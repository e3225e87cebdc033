"""Four nodes on one VDE switch, booted from a cluster file
(configs/cluster/four.toml: 1 vCPU and 512 MiB each): every node has the
addresses the plan gives it, and pings every other node over the data
network, IPv4 and IPv6 (a few minutes under TCG on two cores)."""

import time
import unittest
from pathlib import Path

from guestlib import boot, kernel_complaints, main, sh, stop
from devmemsim import clusterfile

FILE = Path(__file__).resolve().parents[2] / "configs" / "cluster" / "four.toml"
NAME = "cluster4"


def mac_ifname(mac: str) -> str:
    """Shell: the interface that has this MAC address."""
    return f"$(grep -l '^{mac}$' /sys/class/net/*/address | cut -d/ -f5)"


class FourNodes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.plan = clusterfile.load(FILE)
        started = time.monotonic()
        boot(NAME, "--cluster", str(FILE))
        print(f"cluster4: 4 nodes booted in {time.monotonic() - started:.1f} s", flush=True)

    @classmethod
    def tearDownClass(cls):
        stop(NAME)

    def test_every_nic_has_its_planned_addresses(self):
        for node in self.plan.nodes:
            (nic,) = node.nics
            a = nic.address
            out = sh(NAME, node.index, f"ip -o addr show dev {mac_ifname(a.mac)}")
            self.assertIn(f" {a.cidr} ", out)
            self.assertIn(f" {a.cidr6} ", out)
            self.assertEqual(sh(NAME, node.index, "hostname").strip(), node.name)

    def test_every_node_pings_every_other_ipv4_and_ipv6(self):
        for node in self.plan.nodes:
            peers = [p.nics[0].address for p in self.plan.nodes if p is not node]
            # A first ping may wait for neighbour discovery: up to 30 tries.
            script = "\n".join(
                f"ok=; for i in $(seq 30); do ping -c1 -W2 {addr} >/dev/null && ok=1 && break; done; "
                f"[ -n \"$ok\" ] || {{ echo 'no answer from {addr}'; exit 1; }}"
                for p in peers for addr in (p.addr, p.addr6))
            sh(NAME, node.index, script, timeout=900)

    def test_zz_no_kernel_complaints(self):
        for node in self.plan.nodes:
            self.assertEqual(kernel_complaints(NAME, node.index), [])


if __name__ == "__main__":
    main()
