"""Collective transfers' plan (tools/devmemsim/collective.py): who sends to
whom in each step of ring, pairs and all-to-all, on the shipped cluster files,
and the demo's one-line answers to collectives it cannot run. No guest
boots."""

import tempfile
import textwrap
import unittest
from pathlib import Path

from clilib import cli
from devmemsim import clusterfile, collective
from devmemsim.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
CLUSTERS = ROOT / "configs" / "cluster"


def load(name: str) -> clusterfile.Plan:
    return clusterfile.load(CLUSTERS / name)


def edges(step) -> list:
    return [(m.sender, m.receiver) for m in step]


class PatternSteps(unittest.TestCase):
    def test_ring(self):
        self.assertEqual(collective.pattern_steps("ring", 3), [[(0, 1), (1, 2), (2, 0)]])
        self.assertEqual(collective.pattern_steps("ring", 2), [[(0, 1), (1, 0)]])

    def test_pairs(self):
        self.assertEqual(collective.pattern_steps("pairs", 4), [[(0, 1), (1, 0), (2, 3), (3, 2)]])
        with self.assertRaisesRegex(UsageError, "needs an even number of members, not 3"):
            collective.pattern_steps("pairs", 3)

    def test_all_to_all_sends_to_every_other_once(self):
        for n in range(2, 9):
            steps = collective.pattern_steps("all-to-all", n)
            self.assertEqual(len(steps), n - 1)
            sent = [e for step in steps for e in step]
            self.assertEqual(sorted(sent), [(i, j) for i in range(n) for j in range(n) if i != j])
            for step in steps:  # every member sends once and receives once per step
                self.assertEqual(sorted(i for i, _ in step), list(range(n)))
                self.assertEqual(sorted(j for _, j in step), list(range(n)))

    def test_bad_patterns(self):
        with self.assertRaisesRegex(UsageError, "--pattern star: expected ring, pairs, all-to-all"):
            collective.pattern_steps("star", 3)
        with self.assertRaisesRegex(UsageError, "needs two members or more, not 1"):
            collective.pattern_steps("ring", 1)


class Schedule(unittest.TestCase):
    def test_ring_on_three_nodes(self):
        steps = collective.schedule(load("three.toml"), "ring")
        self.assertEqual(len(steps), 1)
        self.assertEqual(edges(steps[0]), [("node0", "node1"), ("node1", "node2"), ("node2", "node0")])
        self.assertEqual([m.port for m in steps[0]], [5201, 5202, 5203])
        self.assertTrue(all(m.network == "fabric" and m.spair == m.rpair == 0 and m.step == 1 for m in steps[0]))
        self.assertEqual(collective.nics(steps), [("node0", 0), ("node1", 0), ("node2", 0)])
        self.assertEqual(collective.describe(steps), "step 1: node0.gpu0 -> node1.gpu0 (fabric), "
                         "node1.gpu0 -> node2.gpu0 (fabric), node2.gpu0 -> node0.gpu0 (fabric)")

    def test_all_to_all_on_four_nodes(self):
        steps = collective.schedule(load("four.toml"), "all-to-all")
        self.assertEqual([m.step for s in steps for m in s], [1] * 4 + [2] * 4 + [3] * 4)
        self.assertEqual(edges(steps[1]), [("node0", "node2"), ("node1", "node3"),
                                           ("node2", "node0"), ("node3", "node1")])

    def test_pairs_on_four_nodes(self):
        steps = collective.schedule(load("four.toml"), "pairs")
        self.assertEqual(edges(steps[0]), [("node0", "node1"), ("node1", "node0"),
                                           ("node2", "node3"), ("node3", "node2")])

    def test_every_network_at_once(self):
        # fabric: alpha, beta, gamma (NIC 0 each); side: alpha and beta's NIC 1.
        steps = collective.schedule(load("two-networks.toml"), "ring")
        self.assertEqual(len(steps), 1)
        self.assertEqual([(m.network, m.sender, m.spair, m.receiver, m.rpair) for m in steps[0]],
                         [("fabric", "alpha", 0, "beta", 0), ("fabric", "beta", 0, "gamma", 0),
                          ("fabric", "gamma", 0, "alpha", 0), ("side", "alpha", 1, "beta", 1),
                          ("side", "beta", 1, "alpha", 1)])
        self.assertEqual(len({m.port for m in steps[0]}), 5)

    def test_networks_of_different_sizes(self):
        # all-to-all: fabric's three members take 2 steps, side's two take 1.
        steps = collective.schedule(load("two-networks.toml"), "all-to-all")
        self.assertEqual([[m.network for m in s] for s in steps], [["fabric"] * 3 + ["side"] * 2, ["fabric"] * 3])
        self.assertEqual([m.port for m in steps[1]], [5201, 5202, 5203])

    def test_pairs_needs_even_networks(self):
        with self.assertRaisesRegex(UsageError, r"^--pattern pairs: needs an even number of members, not 3 "
                                                r"\(the NICs on network 'fabric'\)$"):
            collective.schedule(load("three.toml"), "pairs")

    def test_nobody_to_send_to(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "one.toml"
            path.write_text("[nodes]\ncount = 1\n")
            with self.assertRaisesRegex(UsageError, "no data network joins two NICs"):
                collective.schedule(clusterfile.load(path), "ring")


class Table(unittest.TestCase):
    def test_one_row_per_node_and_step(self):
        row = {"mode": "devmem", "step": 1, "node": "node0", "sent_bytes": 8 << 20, "received_bytes": 8 << 20,
               "root_complex_bytes": 503316, "p2p_bytes": 16 << 20, "root_complex_per_payload_byte": 0.03,
               "rx_throughput_bps": 250e6, "verified": True}
        lines = collective.table([row, {**row, "node": "node1", "verified": False,
                                        "root_complex_per_payload_byte": None}]).splitlines()
        self.assertEqual(len(lines), 4)
        self.assertEqual(lines[2].split(), ["devmem", "1", "node0", "8388608", "8388608", "503316", "16777216",
                                            "0.030", "250.0", "yes"])
        self.assertEqual(lines[3].split()[-3:], ["-", "250.0", "NO"])


class DemoCommand(unittest.TestCase):
    """Answered before anything is built or booted."""

    def demo(self, *args):
        res = cli("demo", *args, timeout=60)
        self.assertEqual(res.returncode, 2, res.stdout + res.stderr)
        return res.stderr.strip()

    def test_mtu_over_a_switch(self):
        self.assertEqual(self.demo("--cluster", str(CLUSTERS / "three.toml"), "--pattern", "ring"),
                         "devmemsim: --mtu 9000: the transfers cross network 'fabric', a VDE switch, "
                         "which carries an MTU of 1500 at most (--mtu 1500)")

    def test_pairs_of_three(self):
        self.assertEqual(self.demo("--cluster", str(CLUSTERS / "three.toml"), "--pattern", "pairs",
                                   "--mtu", "1500"),
                         "devmemsim: --pattern pairs: needs an even number of members, not 3 "
                         "(the NICs on network 'fabric')")

    def test_unknown_pattern(self):
        self.assertIn("--pattern: invalid choice: 'star'", self.demo("--pattern", "star"))

    def test_mtu_over_any_switch_the_collective_crosses(self):
        # NIC 0 of the first node is on a p2p link; node2's only NIC on a switch.
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "c.toml"
            path.write_text(textwrap.dedent(f"""\
                [nodes]
                count = 3
                config = "{ROOT / 'configs' / 'node' / 'two-pairs.toml'}"
                networks = ["link", "fabric"]
                [node.node2]
                config = "{ROOT / 'configs' / 'node' / 'default.toml'}"
                networks = ["fabric"]
                [[network]]
                name = "link"
                kind = "p2p"
                [[network]]
                name = "fabric"
                kind = "switch"
                """))
            self.assertIn("cross network 'fabric', a VDE switch", self.demo("--cluster", str(path), "--pattern", "ring"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
