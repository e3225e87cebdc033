"""A ring collective over devmem (`devmemsim demo --pattern ring`) on three
nodes on one VDE switch (configs/cluster/three.toml, MTU 1500): node0 ->
node1 -> node2 -> node0, 8 MiB each, the three transfers at the same time.
Every transfer is verified by the GPUs' CRC engines on both ends, and on
every node the root complex carries less than 10 % of the payload it sent
and received (the payload goes NIC <-> GPU through the node's PCIe switch)."""

import json
import tempfile
import unittest
from pathlib import Path

from guestlib import cli, main

FILE = Path(__file__).resolve().parents[2] / "configs" / "cluster" / "three.toml"
MIB = 8
NODES = ["node0", "node1", "node2"]


class RingCollective(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "ring.json"
            cls.res = cli("demo", "--cluster", str(FILE), "--pattern", "ring", "--mode", "devmem",
                          "--mib", str(MIB), "--mtu", "1500", "--json", str(out), timeout=1500)
            cls.result = json.loads(out.read_text()) if out.exists() else {}
        print(cls.res.stdout, cls.res.stderr, sep="\n", flush=True)  # the demo's table, in the test log

    def setUp(self):
        self.assertTrue(self.result, f"no JSON from the demo:\n{self.res.stdout}\n{self.res.stderr}")

    def test_demo_exits_0(self):
        self.assertEqual(self.res.returncode, 0, self.res.stdout + self.res.stderr)
        self.assertIn("step 1: node0.gpu0 -> node1.gpu0 (fabric)", self.res.stdout)

    def test_every_transfer_verified_at_once(self):
        transfers = self.result["transfers"]
        self.assertEqual([(t["sender"], t["receiver"]) for t in transfers],
                         [("node0", "node1"), ("node1", "node2"), ("node2", "node0")])
        for t in transfers:
            self.assertTrue(t["verified"], t)
            self.assertEqual((t["step"], t["mode"], t["bytes"]), (1, "devmem", MIB << 20), t)
            self.assertIsNotNone(t["crc32c"], t)

    def test_root_complex_under_a_tenth_of_the_payload(self):
        runs = self.result["runs"]
        self.assertEqual([r["node"] for r in runs], NODES)
        for r in runs:
            self.assertEqual((r["sent_bytes"], r["received_bytes"]), (MIB << 20, MIB << 20), r)
            self.assertLess(r["root_complex_bytes"], 0.1 * r["payload_bytes"], r)
            # The payload turned around at the switch, both ways.
            self.assertGreater(r["p2p_bytes"], 0.9 * r["payload_bytes"], r)
            self.assertEqual(r["dma_faults"], 0, r)
            self.assertTrue(r["verified"], r)


if __name__ == "__main__":
    main()
