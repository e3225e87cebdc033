"""dmsnic RSS (NIC v1.6) end to end on a two-node cluster: flows steered by
ntuple rules into additional RSS contexts land on those contexts' queues
(and a rule's queue offset adds to the context's table), a context hashing
addresses only keeps all of one host pair's streams on one queue, the
table resizes with the channel count, and contexts survive link down/up.

Queue counts come from ethtool -S rx<q>_packets deltas on node1 while
node0 sends with iperf3."""

import json
import os
import re

from guestlib import TwoNodes, data_addr, main, run
from devmemsim.addressing import data_addr6  # noqa: E402 (guestlib puts tools/ on the path)

NAME = f"rss-test-{os.getpid()}"
ADDR = {n: data_addr(n) for n in (0, 1)}
STREAMS = 8  # iperf3 -P: streams of one host pair, different source ports
SECONDS = 2


class Rss(TwoNodes):
    NAME = NAME

    @classmethod
    def setup_nodes(cls):
        cls.ifname = {n: cls.nic_up(n) for n in (0, 1)}
        cls.rif = cls.ifname[1]

    def ethtool(self, args, check=True):
        return self.sh(1, f"ethtool {args}", check=check)

    def create(self, args):
        """An ethtool -X/-N that prints a new id: the id."""
        return int(self.ethtool(args).split()[-1])

    def rx_packets(self):
        out = self.ethtool(f"-S {self.rif}")
        return {int(q): int(v) for q, v in re.findall(r"^\s*rx(\d+)_packets:\s*(\d+)", out, re.M)}

    def traffic(self, port, addr=ADDR[1]):
        """Per-queue RX frames on node1 while node0 sends STREAMS TCP
        streams to port, and the data frames that carried."""
        before = self.rx_packets()
        self.sh(1, f"iperf3 -s -D -1 -p {port} >/dev/null 2>&1; sleep 0.5")
        res = json.loads(self.sh(0, f"iperf3 -c {addr} -p {port} -t {SECONDS} -P {STREAMS} -J", timeout=300))
        after = self.rx_packets()
        counts = {q: after[q] - before.get(q, 0) for q in after}
        return counts, res["end"]["sum_received"]["bytes"] // 1500

    def table(self, context=0):
        out = self.ethtool(f"-x {self.rif} context {context}")
        rows = re.findall(r"^\s*\d+:\s+(.*)$", out, re.M)
        return [int(v) for row in rows for v in row.split()]

    def setUp(self):
        self.cleanup = []
        self.ethtool(f"-L {self.rif} combined 6")
        self.cleanup.append(f"-L {self.rif} combined 4")
        self.ethtool(f"-X {self.rif} equal 2")
        self.cleanup.append(f"-X {self.rif} default")

    def tearDown(self):
        for args in reversed(self.cleanup):
            self.ethtool(args, check=False)

    def context(self, args):
        ctx = self.create(f"-X {self.rif} context new {args}")
        self.cleanup.append(f"-X {self.rif} context {ctx} delete")
        return ctx

    def rule(self, args):
        rule = self.create(f"-N {self.rif} flow-type tcp4 dst-ip {ADDR[1]} {args}")
        self.cleanup.append(f"-N {self.rif} delete {rule}")
        return rule

    def assert_on(self, counts, data_frames, queues, what):
        on = sum(counts.get(q, 0) for q in queues)
        self.assertGreater(on, data_frames * 9 // 10, f"{what}: {counts}")

    def test_01_rules_steer_into_contexts(self):
        a = self.context("start 2 equal 2")
        b = self.context("start 4 equal 2")
        self.assertEqual(set(self.table(a)), {2, 3})
        self.rule(f"dst-port 5301 context {a}")
        rule_b = self.rule(f"dst-port 5302 context {b}")
        self.assertRegex(self.ethtool(f"-n {self.rif} rule {rule_b}"), rf"RSS Context (ID: )?{b}")
        for port, queues, other in ((5301, (2, 3), (4, 5)), (5302, (4, 5), (2, 3))):
            counts, data = self.traffic(port)
            self.assert_on(counts, data, queues, f"port {port}")
            self.assertEqual(sum(counts.get(q, 0) for q in other), 0, f"port {port}: {counts}")
        # Without a rule: the default context's queues 0 and 1.
        counts, data = self.traffic(5303)
        self.assert_on(counts, data, (0, 1), "no rule")

    def test_02_rule_queue_adds_to_the_context_table(self):
        ctx = self.context("equal 2")  # queues 0 and 1, + 3: queues 3 and 4
        self.rule(f"dst-port 5311 context {ctx} action 3")
        counts, data = self.traffic(5311)
        self.assert_on(counts, data, (3, 4), "offset 3")
        # Queue 4 + the table's 1 would be queue 6: refused.
        self.assertNotEqual(run(NAME, 1, f"ethtool -N {self.rif} flow-type tcp4 dst-port 5312 context {ctx} "
                                         "action 5").returncode, 0)

    def test_03_hashed_fields_per_context(self):
        ctx = self.context("start 2 equal 4")
        self.rule(f"dst-port 5321 context {ctx}")
        self.ethtool(f"-N {self.rif} rx-flow-hash tcp4 sd context {ctx}")
        fields = self.ethtool(f"-n {self.rif} rx-flow-hash tcp4 context {ctx}")
        self.assertIn("IP DA", fields)
        self.assertNotIn("L4 bytes", fields)
        counts, data = self.traffic(5321)
        self.assert_on(counts, data, (2, 3, 4, 5), "addresses only")
        used = [q for q in (2, 3, 4, 5) if counts.get(q, 0) > data // 100]
        self.assertEqual(len(used), 1, f"one host pair, addresses only: one queue: {counts}")
        self.ethtool(f"-N {self.rif} rx-flow-hash tcp4 sdfn context {ctx}")
        counts, data = self.traffic(5321)
        used = [q for q in (2, 3, 4, 5) if counts.get(q, 0) > data // 100]
        self.assertGreater(len(used), 1, f"{STREAMS} streams with ports hashed: {counts}")
        # The default context kept its fields.
        self.assertIn("L4 bytes 0 & 1", self.ethtool(f"-n {self.rif} rx-flow-hash tcp4"))

    def test_04_table_follows_channels_and_contexts_persist(self):
        self.ethtool(f"-X {self.rif} default")
        self.assertEqual(len(self.table()), 32)  # 6 queues: 4 per queue, a power of two
        ctx = self.context("start 4 equal 2")
        self.rule(f"dst-port 5331 context {ctx}")
        self.ethtool(f"-L {self.rif} combined 16")
        self.assertEqual(len(self.table()), 64)
        self.assertEqual(len(self.table(ctx)), 64)
        self.assertEqual(set(self.table(ctx)), {4, 5})
        self.ethtool(f"-L {self.rif} combined 6")
        self.assertEqual(len(self.table(ctx)), 32)
        # A queue the context uses cannot go.
        self.assertNotEqual(run(NAME, 1, f"ethtool -L {self.rif} combined 5").returncode, 0)
        self.sh(1, f"ip link set {self.rif} down; ip link set {self.rif} up")
        self.sh(0, f"for i in $(seq 50); do ping -c1 -W1 {ADDR[1]} >/dev/null && exit 0; done; exit 1")
        counts, data = self.traffic(5331)
        self.assert_on(counts, data, (4, 5), "after down/up")

    def test_05_ipv6_rule_into_a_context_and_its_fields(self):
        addr6 = data_addr6(1)
        ctx = self.context("start 2 equal 4")
        rule = self.create(f"-N {self.rif} flow-type tcp6 dst-ip {addr6} dst-port 5341 context {ctx}")
        self.cleanup.append(f"-N {self.rif} delete {rule}")
        for fields, queues_used in (("sd", 1), ("sdfn", 2)):
            self.ethtool(f"-N {self.rif} rx-flow-hash tcp6 {fields} context {ctx}")
            counts, data = self.traffic(5341, addr6)
            self.assert_on(counts, data, (2, 3, 4, 5), f"IPv6, fields {fields}")
            used = [q for q in (2, 3, 4, 5) if counts.get(q, 0) > data // 100]
            self.assertGreaterEqual(len(used), queues_used, f"fields {fields}: {counts}")

    def test_06_flow_label_spreads_one_tuple(self):
        """UDP over IPv6 from one source port to one port, a new socket
        (so a new auto flow label) per datagram: with the label hashed, the
        52-byte key (v1.7) lets the label pick the queue."""
        key = re.search(r"RSS hash key:\s*(\S+)", self.ethtool(f"-x {self.rif}")).group(1)
        self.assertEqual(len(key.split(":")), 52)
        self.ethtool(f"-X {self.rif} default")
        self.ethtool(f"-N {self.rif} rx-flow-hash udp6 lsdfn")
        self.cleanup.append(f"-N {self.rif} rx-flow-hash udp6 sdfn")
        before = self.rx_packets()
        self.sh(0, "python3 -c \"import socket\nfor i in range(32):\n"
                   "    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)\n"
                   "    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                   f"    s.bind(('', 5361)); s.connect(('{data_addr6(1)}', 5362)); s.send(b'x'); s.close()\"")
        after = self.rx_packets()
        used = [q for q in after if after[q] - before.get(q, 0) >= 2]
        self.assertGreater(len(used), 1, f"32 labels of one 4-tuple: {after} - {before}")

    def test_07_rule_matching_another_slots_rule_is_refused(self):
        """A second rule matching what a rule in another slot matches is
        refused (EEXIST, as bnxt and ice refuse it: the first match wins, so
        it would never match); naming the first rule's slot replaces it."""
        flow = f"flow-type tcp4 dst-ip {ADDR[1]} dst-port 5371"
        rule = self.rule("dst-port 5371 action 1")
        res = run(NAME, 1, f"ethtool -N {self.rif} {flow} action 2")
        self.assertNotEqual(res.returncode, 0, res.stdout)
        self.assertIn("File exists", res.stdout + res.stderr)
        self.assertEqual(self.ethtool(f"-n {self.rif}").count("Filter:"), 1)
        self.ethtool(f"-N {self.rif} {flow} action 2 loc {rule}")
        self.assertIn("Action: Direct to queue 2", self.ethtool(f"-n {self.rif} rule {rule}"))

    def test_08_changes_that_would_strand_a_rule_are_refused(self):
        """A rule into a context sends its flows to its queue plus the
        context's table entry. A new table for the context (-X context N)
        or fewer channels (-L) that would take them to a queue not in use
        (where the device drops them) is refused, one that keeps them in
        range is not, and the flows still arrive on the rule's queues."""
        ctx = self.context("equal 2")  # queues 0 and 1, + 3: queues 3 and 4
        self.rule(f"dst-port 5381 context {ctx} action 3")
        self.ethtool(f"-X {self.rif} context {ctx} equal 3")  # 3..5 of 6
        for change in (f"-X {self.rif} context {ctx} equal 4",  # 3..6
                       f"-L {self.rif} combined 5"):  # queue 5 would go
            res = run(NAME, 1, f"ethtool {change}")
            self.assertNotEqual(res.returncode, 0, f"{change}: {res.stdout}")
        self.assertEqual(set(self.table(ctx)), {0, 1, 2})
        current = self.ethtool(f"-l {self.rif}").split("Current")[1]
        self.assertEqual(re.search(r"Combined:\s+(\d+)", current).group(1), "6")
        counts, data = self.traffic(5381)
        self.assert_on(counts, data, (3, 4, 5), "rule into a context, offset 3")


if __name__ == "__main__":
    main()
