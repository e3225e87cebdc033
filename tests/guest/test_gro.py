"""Hardware GRO (rx-gro-hw, NIC v1.5) end to end on a two-node cluster (one
boot): rx-gro-hw is on by default and stays on with software GRO off; a
16 MiB TCP transfer of random data arrives intact (sha256 on both ends)
while node1's NIC coalesces (ethtool -S and netdev qstats agree); with
rx-gro-hw off nothing coalesces; a devmem transfer into node1's GPU memory
(dms-devmem, CRC-checked on both GPUs) with rx-gro-hw on coalesces too.
iperf3 node0 -> node1 with rx-gro-hw on and off is printed, not asserted."""

import json
import os
import re
import sys

from guestlib import DMSNIC_IF, TwoNodes, data_addr, main

NAME = f"gro-test-{os.getpid()}"
TOOL = "/opt/devmemsim/bin/dms-devmem"
SERVER, CLIENT = data_addr(1), data_addr(0)  # node1 receives, node0 sends
MiB = 1 << 20
IF = DMSNIC_IF

# netdev qstats of one interface's RX queues through the kernel's YNL
# library (as gro_hw.py reads them): a JSON list of the rx queues' dicts.
QSTATS = r"""
import json, socket, sys
sys.path.insert(0, "/opt/devmemsim/selftests/tools/net/ynl")
from pyynl.lib import YnlFamily
ynl = YnlFamily("/opt/devmemsim/selftests/Documentation/netlink/specs/netdev.yaml", schema="")
req = {"ifindex": socket.if_nametoindex(sys.argv[1]), "scope": ["queue"]}
print(json.dumps([q for q in ynl.dump("qstats-get", req) if q["queue-type"] == "rx"]))
"""

# 256 UDP datagrams to as many ports of argv[1] from one unconnected
# socket: 256 flows, each frame's TX queue picked on its own.
UDP_BURST = ("import socket, sys; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
             "[s.sendto(b'x' * 64, (sys.argv[1], 9000 + i)) for i in range(256)]")


class Gro(TwoNodes):
    NAME = NAME
    CHECK_DMESG = True
    iperf = {}

    @classmethod
    def setup_nodes(cls):
        cls.ifname = {n: cls.sh(n, f"echo {IF}").strip() for n in (0, 1)}

    @classmethod
    def tearDownClass(cls):
        if cls.iperf:
            print("\niperf3 node0 -> node1 (Mbit/s): " +
                  ", ".join(f"rx-gro-hw {k}: {v:.0f}" for k, v in cls.iperf.items()), file=sys.stderr)
        super().tearDownClass()

    def features(self, node):
        out = self.sh(node, f"ethtool -k {self.ifname[node]}")
        return dict(re.findall(r"^(\S+): (on|off)", out, re.M))

    def set_features(self, node, **feats):
        args = " ".join(f"{k.replace('_', '-')} {v}" for k, v in feats.items())
        self.sh(node, f"ethtool -K {self.ifname[node]} {args}")

    def gro_stats(self, node):
        """ethtool -S's hardware GRO counters summed over the RX queues."""
        out = self.sh(node, f"ethtool -S {self.ifname[node]}")
        totals = {}
        for name, value in re.findall(r"^\s*rx\d+_(hw_gro_\w+|packets):\s*(\d+)\s*$", out, re.M):
            totals[name] = totals.get(name, 0) + int(value)
        return totals

    def qstats(self, node):
        out = self.sh(node, f"python3 - {self.ifname[node]} <<'EOF'\n{QSTATS}\nEOF")
        return json.loads(out)

    def tx_packets(self, node):
        """ethtool -S's tx packets per TX queue."""
        out = self.sh(node, f"ethtool -S {self.ifname[node]}")
        return {int(q): int(v) for q, v in re.findall(r"^\s*tx(\d+)_packets:\s*(\d+)\s*$", out, re.M)}

    def test_1_gro_hw_on_by_default_and_independent_of_gro(self):
        feats = self.features(1)
        self.assertEqual(feats["rx-gro-hw"], "on")
        self.assertEqual(feats["large-receive-offload"], "off")
        self.set_features(1, gro="off")
        try:
            self.assertEqual(self.features(1)["rx-gro-hw"], "on")
        finally:
            self.set_features(1, gro="on")
        # The device coalesces only what it checksummed.
        self.set_features(1, rx="off")
        try:
            self.assertEqual(self.features(1)["rx-gro-hw"], "off")
        finally:
            self.set_features(1, rx="on", rx_gro_hw="on")
        self.assertEqual(self.features(1)["rx-gro-hw"], "on")

    def test_2_tcp_transfer_coalesced_and_verified(self):
        self.set_features(1, gro="off")  # the stack sees the device's frames as they are
        try:
            before, q_before = self.gro_stats(1), self.qstats(1)
            sent, got, size = self.tcp_transfer(16 * MiB, 5400)
            after, q_after = self.gro_stats(1), self.qstats(1)
        finally:
            self.set_features(1, gro="on")
        self.assertEqual(size, 16 * MiB)
        self.assertEqual(sent, got)
        gro = {k: after[k] - before.get(k, 0) for k in after}
        print(f"\n16 MiB TCP, rx-gro-hw on: {gro}", file=sys.stderr)
        self.assertGreater(gro["hw_gro_packets"], 0)
        self.assertGreaterEqual(gro["hw_gro_wire_packets"], 2 * gro["hw_gro_packets"])
        self.assertGreater(gro["hw_gro_wire_bytes"], gro["hw_gro_bytes"])
        # qstats report the same GRO counters (only the transfer coalesces).
        for key in ("hw_gro_packets", "hw_gro_bytes", "hw_gro_wire_packets", "hw_gro_wire_bytes"):
            qkey = "rx-" + key.replace("_", "-")
            qdelta = sum(q.get(qkey, 0) for q in q_after) - sum(q.get(qkey, 0) for q in q_before)
            self.assertEqual(qdelta, gro[key], qkey)

    def test_3_gro_hw_off_coalesces_nothing(self):
        self.set_features(1, rx_gro_hw="off")
        try:
            before = self.gro_stats(1)
            sent, got, _ = self.tcp_transfer(4 * MiB, 5401)
            after = self.gro_stats(1)
        finally:
            self.set_features(1, rx_gro_hw="on")
        self.assertEqual(sent, got)
        self.assertEqual(after["hw_gro_packets"], before["hw_gro_packets"])
        self.assertGreater(after["packets"], before["packets"])

    def test_4_devmem_transfer_with_gro_hw(self):
        port = 5402
        before = self.gro_stats(1)
        self.sh(1, f"rm -f /tmp/r{port} /tmp/s{port}; nohup {TOOL} server --addr {SERVER} "
                   f"--peer {CLIENT} --port {port} --ready-file /tmp/r{port} "
                   f"--result /tmp/s{port} >/dev/null 2>&1 & "
                   f"for i in $(seq 300); do [ -e /tmp/r{port} ] && break; sleep 0.1; done")
        out = self.sh(0, f"{TOOL} client --addr {SERVER} --port {port} --bytes {16 * MiB}", timeout=900)
        client = json.loads(out.strip().splitlines()[-1])
        server = json.loads(self.sh(1, f"for i in $(seq 600); do [ -e /tmp/s{port} ] && break; "
                                       f"sleep 0.1; done; cat /tmp/s{port}"))
        after = self.gro_stats(1)
        gro = {k: after[k] - before.get(k, 0) for k in after}
        print(f"\n16 MiB devmem, rx-gro-hw on: {gro}", file=sys.stderr)
        self.assertEqual(server["crc32c"], client["crc32c"])
        self.assertGreater(gro["hw_gro_packets"], 0)

    def test_5_iperf3_with_gro_hw_on_and_off(self):
        for state in ("on", "off"):
            self.set_features(1, rx_gro_hw=state)
            try:
                self.sh(1, "iperf3 -s -D -1 -p 5410 >/dev/null 2>&1; sleep 0.5")
                res = json.loads(self.sh(0, f"iperf3 -c {SERVER} -p 5410 -t 8 -J", timeout=300))
            finally:
                self.set_features(1, rx_gro_hw="on")
            self.iperf[state] = res["end"]["sum_received"]["bits_per_second"] / 1e6
            self.assertGreater(self.iperf[state], 0)

    def test_6_each_cpu_sends_on_its_own_tx_queue(self):
        """XPS: the frames one CPU sends go out on one TX queue, whatever
        their flows, so they leave in the order it sent them (gro_hw.py's
        order check sends 1024 frames of 512 flows and needs that); each
        online CPU has a queue of its own."""
        queues = {}
        for cpu in range(int(self.sh(0, "getconf _NPROCESSORS_ONLN"))):
            before = self.tx_packets(0)
            self.sh(0, f"taskset -c {cpu} python3 -c \"{UDP_BURST}\" {SERVER}")
            after = self.tx_packets(0)
            grew = {q: n - before.get(q, 0) for q, n in after.items() if n - before.get(q, 0) >= 16}
            self.assertEqual(len(grew), 1, f"CPU {cpu}: 256 flows went out on TX queues {grew}")
            queues[cpu] = next(iter(grew))
        self.assertEqual(len(set(queues.values())), len(queues), f"TX queue by CPU: {queues}")


    def test_7_ipip_aggregates_forwarded_and_resegmented(self):
        """TCP through an IP-in-IP tunnel from node0 to a network namespace
        behind node1: node1's NIC coalesces the tunnelled segments and
        node1 forwards the aggregates into a veth without TSO, where the
        stack segments them again. That takes an IP-in-IP GSO skb
        (encapsulation, inner headers, SKB_GSO_IPXIP4): as plain
        SKB_GSO_TCPV4 ipip_gso_segment() refuses it and every aggregate is
        lost. Software GRO is off on node1, so what the stack gets is the
        driver's metadata, not its own GRO's. 4 MiB of random data arrive
        intact (TCP's retransmissions get them through the drops too, more
        slowly); node1 coalesced and refused nothing, and the veth dropped
        nothing."""
        port, peer = 5420, "10.99.0.2"
        self.sh(1, f"sysctl -qw net.ipv4.ip_forward=1 && ip netns add dmsgw && "
                   f"ip link add dmsv0 type veth peer name dmsv1 netns dmsgw && "
                   f"ip addr add 10.99.0.1/24 dev dmsv0 && ip link set dmsv0 up && "
                   f"ethtool -K dmsv0 tso off && "
                   f"ip -n dmsgw link set lo up && ip -n dmsgw addr add {peer}/24 dev dmsv1 && "
                   f"ip -n dmsgw link set dmsv1 up && ip -n dmsgw route add default via 10.99.0.1 && "
                   f"ip -n dmsgw tunnel add dmst mode ipip local {peer} remote {CLIENT} && "
                   f"ip -n dmsgw addr add 192.168.99.2/24 dev dmst && ip -n dmsgw link set dmst up")
        self.sh(0, f"ip tunnel add dmst mode ipip local {CLIENT} remote {peer} && "
                   f"ip addr add 192.168.99.1/24 dev dmst && ip link set dmst up && "
                   f"ip route add 10.99.0.0/24 via {SERVER}")
        self.set_features(1, gro="off")
        try:
            before = self.gro_stats(1)
            self.sh(1, f"rm -f /tmp/ipip.rx; nohup ip netns exec dmsgw socat -u "
                       f"TCP4-LISTEN:{port},reuseaddr OPEN:/tmp/ipip.rx,creat,trunc >/dev/null 2>&1 & "
                       f"echo $! >/tmp/ipip.pid; sleep 0.5")
            sent = self.sh(0, f"head -c {4 * MiB} /dev/urandom >/tmp/ipip.tx && "
                              f"timeout 180 socat -u OPEN:/tmp/ipip.tx TCP4:192.168.99.2:{port} && "
                              f"sha256sum /tmp/ipip.tx", timeout=300, check=False)
            got = self.sh(1, "for i in $(seq 100); do kill -0 $(cat /tmp/ipip.pid) 2>/dev/null || break; "
                             "sleep 0.1; done; sha256sum /tmp/ipip.rx")
            after = self.gro_stats(1)
            # validate_xmit_skb() counts a GSO skb it cannot segment here.
            dropped = int(self.sh(1, "cat /sys/class/net/dmsv0/statistics/tx_dropped"))
        finally:
            self.set_features(1, gro="on")
            self.sh(0, "ip route del 10.99.0.0/24; ip tunnel del dmst", check=False)
            self.sh(1, "kill $(cat /tmp/ipip.pid) 2>/dev/null; ip netns del dmsgw; "
                       "sysctl -qw net.ipv4.ip_forward=0", check=False)
        gro = {k: after[k] - before.get(k, 0) for k in after}
        print(f"\n4 MiB TCP in IP-in-IP, forwarded: {gro}", file=sys.stderr)
        self.assertTrue(sent, "the transfer through the tunnel did not finish")
        self.assertEqual(sent.split()[0], got.split()[0])
        self.assertGreater(gro["hw_gro_packets"], 0)
        self.assertEqual(gro["hw_gro_bad"], 0)
        self.assertEqual(dropped, 0, "forwarded aggregates that could not be resegmented")

if __name__ == "__main__":
    main()
