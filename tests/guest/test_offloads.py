"""dmsnic's TX segmentation offloads on a two-node cluster (one boot):
TSO over IPv4 and IPv6, devmem TX out of GPU memory with TSO, and UDP GSO
(USO) from node0 to node1, every byte verified on the receiver, with the driver's per-queue GSO counters, the
netdev qstats and the device's own counters showing that the NIC cut the
super-frames; iperf3 with TSO on and off (printed, not asserted).

Then the kernel's own drivers/net/hw/tso.py and uso.py, node1 their ssh
remote over the data link (as `devmemsim kselftest hw/tso.py hw/uso.py`
runs them): TSO over IPv4 and IPv6 and the four USO variants pass, the
tunnel variants skip (dmsnic segments no tunnels)."""

import json
import re
import sys

from guestlib import TwoNodes, cluster_name, default_kernel_only, kernel_complaints, main, run, scaled
from devmemsim.addressing import data_addr, data_addr6
from devmemsim.kselftest import REMOTE_NO_TIME_WAIT

NAME = cluster_name("offloads-test")
HW = "/opt/devmemsim/selftests/tools/testing/selftests/drivers/net/hw"
DEVMEM = "/opt/devmemsim/bin/dms-devmem"
# What the kernel's tests must report; every other case is a tunnel and skips.
SELFTESTS_PASS = {
    "tso.py": {"tso.ipv4", "tso.ipv6"},
    "uso.py": {f"uso.test_uso.v{v}_{k}" for v in (4, 6) for k in ("partial", "exact")},
}
TCP_BYTES = scaled(16 << 20)
# USO: super-frames of USO_SEGS datagrams of USO_MSS bytes each.
USO_MSS, USO_SEGS, USO_SENDS = 1400, 40, 48

# Per-queue TX qstats (the selftests' view), summed over queues:
# qstats IF -> JSON {key: total}.
QSTATS = r"""
import json, socket, sys
sys.path.insert(0, "/opt/devmemsim/selftests/tools/net/ynl")
from pyynl.lib import YnlFamily
ynl = YnlFamily("/opt/devmemsim/selftests/Documentation/netlink/specs/netdev.yaml", schema="")
total = {}
for q in ynl.dump("qstats-get", {"ifindex": socket.if_nametoindex(sys.argv[1]), "scope": ["queue"]}):
    if q["queue-type"] == "tx":
        for k, v in q.items():
            if k.startswith("tx-"):
                total[k] = total.get(k, 0) + v
print(json.dumps(total))
"""

# USO datagram i: its index, then bytes only i determines.
RECORD = r"""
import random
def record(i, n):
    return i.to_bytes(8, "big") + random.Random(i).randbytes(n - 8)
"""

USO_SEND = RECORD + r"""
import socket, sys, time
family = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
mss, segs, sends = map(int, sys.argv[3:6])
s = socket.socket(family, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_UDP, 103, mss)  # UDP_SEGMENT
for k in range(sends):
    s.sendto(b"".join(record(k * segs + j, mss) for j in range(segs)), (sys.argv[1], int(sys.argv[2])))
    time.sleep(0.1)
"""

# Receive until every datagram came (or 30 s of silence), then check them
# (checking as they come would be too slow for a burst under TCG); print
# how many were right, wrong, missing.
USO_RECV = RECORD + r"""
import socket, sys
family = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
mss, total = int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(family, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
s.bind((sys.argv[1], int(sys.argv[2])))
s.settimeout(30)
got = []
print("ready", flush=True)
try:
    while len(got) < total:
        got.append(s.recv(65536))
except socket.timeout:
    pass
good, bad = set(), 0
for d in got:
    i = int.from_bytes(d[:8], "big")
    if i < total and d == record(i, mss):
        good.add(i)
    else:
        bad += 1
print(f"good={len(good)} bad={bad} missing={total - len(good)}")
"""


# node0: one TCP/IPv4 frame through a packet socket with a virtio_net_hdr
# asking for a checksum (VIRTIO_NET_HDR_F_NEEDS_CSUM) from csum_start
# CSUM_START into the payload, stored csum_offset 16 bytes on (where a TCP
# header's checksum would be): not the TCP header the NIC finds and
# checksums. argv: interface, destination MAC, source and destination IP;
# prints the frame as sent (hex). The TCP checksum field holds 0x1234.
CSUM_START = 14 + 20 + 20 + 16
CSUM_SEND = r"""
import socket, struct, sys
ifname, dst_mac, src, dst = sys.argv[1:5]
def fold(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s
payload = b"DMSCSUM:" + bytes(range(200))
tcp = struct.pack("!HHIIBBHHH", 40000, 5799, 1, 0, 5 << 4, 0x10, 65535, 0x1234, 0)
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40 + len(payload), 1, 0x4000, 64, 6, 0,
                 socket.inet_aton(src), socket.inet_aton(dst))
ip = ip[:10] + struct.pack("!H", ~fold(ip) & 0xffff) + ip[12:]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
s.setsockopt(263, 15, 1)  # SOL_PACKET, PACKET_VNET_HDR
s.bind((ifname, 0))
frame = bytes.fromhex(dst_mac.replace(":", "")) + s.getsockname()[4] + b"\x08\x00" + ip + tcp + payload
s.send(struct.pack("<BBHHHH", 1, 0, 0, 0, int(sys.argv[5]), 16) + frame)
print(frame.hex())
"""

# node1: prints (hex) the first frame on argv[1] carrying CSUM_SEND's marker.
CSUM_RECV = r"""
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))  # ETH_P_ALL
s.bind((sys.argv[1], 0))
s.settimeout(60)
print("ready", flush=True)
while True:
    f = s.recv(65536)
    if b"DMSCSUM:" in f:
        print(f.hex(), flush=True)
        break
"""


def inet_csum(data):
    """The Internet checksum of data (even length), as skb_checksum_help() stores it."""
    s = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s & 0xffff) or 0xffff


class Offloads(TwoNodes):
    NAME = NAME
    results = []

    @classmethod
    def setup_nodes(cls):
        cls.ifname = {n: cls.nic_up(n, ipv6=True) for n in (0, 1)}

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        for r in cls.results:
            print(f"  {r}", file=sys.stderr)

    def stats(self, node):
        """ethtool -S as {name: int}."""
        out = self.sh(node, f"ethtool -S {self.ifname[node]}")
        return {k: int(v) for k, v in re.findall(r"^\s*(\S+):\s*(\d+)\s*$", out, re.M)}

    def qstats(self, node):
        return json.loads(self.sh(node, f"python3 - {self.ifname[node]} <<'EOF'\n{QSTATS}\nEOF"))

    def counters(self, node):
        """ethtool -S and the TX qstats, one dict."""
        return {**self.stats(node), **self.qstats(node)}

    @staticmethod
    def delta(before, after, pattern):
        rx = re.compile(pattern)
        return sum(after[k] - before.get(k, 0) for k in after if rx.fullmatch(k))

    def features(self, node, **settings):
        args = " ".join(f"{k.replace('_', '-')} {v}" for k, v in settings.items())
        self.sh(node, f"ethtool -K {self.ifname[node]} {args}")

    def assert_segmented(self, before, after, min_super, min_wire):
        """The driver handed the NIC super-frames and the NIC cut them."""
        d = {k: self.delta(before, after, p) for k, p in (
            ("super", r"tx\d+_gso_packets"), ("wire", r"tx\d+_gso_wire_packets"),
            ("q_super", "tx-hw-gso-packets"), ("q_wire", "tx-hw-gso-wire-packets"),
            ("q_wire_bytes", "tx-hw-gso-wire-bytes"), ("hw_super", "hw_tso_super"),
            ("hw_wire", "hw_tso_wire"), ("hw_err", "hw_tso_err"), ("tx_err", r"tx\d+_errors"))}
        self.assertGreaterEqual(d["super"], min_super, d)
        self.assertGreaterEqual(d["wire"], min_wire, d)
        self.assertGreater(d["wire"], d["super"], d)
        # The qstats are the same counters; the device counts what it cut.
        # (read one after the other: a stray frame may land between)
        self.assertLessEqual(abs(d["q_super"] - d["super"]), 5, d)
        self.assertLessEqual(abs(d["q_wire"] - d["wire"]), 500, d)
        self.assertGreater(d["q_wire_bytes"], 0, d)
        self.assertLessEqual(abs(d["hw_super"] - d["super"]), 5, d)
        self.assertLessEqual(abs(d["hw_wire"] - d["wire"]), 500, d)
        self.assertEqual(d["hw_err"], 0, d)
        self.assertEqual(d["tx_err"], 0, d)
        return d

    # ---- tests (in name order, one cluster) ------------------------------

    def test_01_features(self):
        out = self.sh(0, f"ethtool -k {self.ifname[0]}")
        for feat in ("tcp-segmentation-offload: on", "tx-tcp-segmentation: on",
                     "tx-tcp6-segmentation: on", "tx-udp-segmentation: on"):
            self.assertIn(feat, out)
        self.assertNotIn("tx-tcp-segmentation: on [fixed]", out)

    def test_10_tso_ipv4_verified(self):
        before = self.counters(0)
        self.verified_tcp(TCP_BYTES, 5401)
        d = self.assert_segmented(before, self.counters(0), 16, TCP_BYTES // 1448 * 9 // 10)
        self.results.append(f"TSO IPv4, {TCP_BYTES >> 20} MiB verified: {d['super']} super-frames, "
                            f"{d['wire']} wire frames")

    def test_11_tso_ipv6_verified(self):
        before = self.counters(0)
        self.verified_tcp(TCP_BYTES, 5402, ipv6=True)
        d = self.assert_segmented(before, self.counters(0), 16, TCP_BYTES // 1428 * 9 // 10)
        self.results.append(f"TSO IPv6, {TCP_BYTES >> 20} MiB verified: {d['super']} super-frames, "
                            f"{d['wire']} wire frames")

    def test_12_tso_off_is_not_segmented(self):
        self.features(0, tso="off")
        try:
            before = self.counters(0)
            self.verified_tcp(TCP_BYTES, 5403)
            after = self.counters(0)
            self.assertEqual(self.delta(before, after, r"tx\d+_gso_packets"), 0)
            self.assertEqual(self.delta(before, after, "hw_tso_super"), 0)
        finally:
            self.features(0, tso="on")

    def test_13_devmem_tx_with_tso(self):
        """Devmem TX out of node0's GPU memory (dms-devmem: bind-tx of a
        dmsgpu dma-buf) with TSO on: the skbs' frags are net_iovs, the NIC
        reads each super-frame's payload from the GPU BAR and cuts it; the
        receiver's CRC of what landed in its GPU memory matches."""
        port, nbytes = 5310, scaled(8 << 20)
        self.sh(1, f"rm -f /tmp/r{port} /tmp/s{port}; nohup {DEVMEM} server --addr {data_addr(1)} "
                   f"--peer {data_addr(0)} --port {port} --ready-file /tmp/r{port} --result /tmp/s{port} "
                   f">/dev/null 2>&1 & for i in $(seq 300); do [ -e /tmp/r{port} ] && break; sleep 0.1; done")
        before = self.counters(0)
        out = self.sh(0, f"{DEVMEM} client --addr {data_addr(1)} --port {port} --bytes {nbytes}", timeout=600)
        client = json.loads(out.strip().splitlines()[-1])
        server = json.loads(self.sh(1, f"for i in $(seq 600); do [ -e /tmp/s{port} ] && break; sleep 0.1; "
                                       f"done; cat /tmp/s{port}"))
        self.assertNotIn("error", client)
        self.assertNotIn("error", server)
        self.assertEqual((client["mode"], server["devmem_bytes"]), ("devmem", nbytes))
        self.assertEqual(server["crc32c"], client["crc32c"])
        d = self.assert_segmented(before, self.counters(0), 8, nbytes // 1448 * 9 // 10)
        self.results.append(f"devmem TX with TSO, {nbytes >> 20} MiB CRC-verified: {d['super']} super-frames, "
                            f"{d['wire']} wire frames")

    def test_14_csum_start_the_nic_does_not_parse(self):
        """CHECKSUM_PARTIAL with csum_offset 16 over TCP/IPv4, but a
        csum_start 16 bytes into the payload (a packet socket's
        virtio_net_hdr may say so): the NIC would checksum the TCP header
        it parses instead, so the driver checksums in software. The frame
        arrives with the checksum of csum_start..end at csum_start + 16 and
        its TCP checksum field as sent."""
        ifname = self.ifname[1]
        self.sh(1, f"rm -f /tmp/csum.out; python3 - {ifname} >/tmp/csum.out 2>&1 <<'EOF' &\n{CSUM_RECV}\nEOF\n"
                   "for i in $(seq 50); do grep -q ready /tmp/csum.out && break; sleep 0.1; done")
        mac = self.sh(1, f"cat /sys/class/net/{ifname}/address").strip()
        sent = bytes.fromhex(self.sh(0, f"python3 - {self.ifname[0]} {mac} {data_addr(0)} {data_addr(1)} "
                                        f"{CSUM_START} <<'EOF'\n{CSUM_SEND}\nEOF").split()[-1])
        out = self.sh(1, "for i in $(seq 100); do [ $(wc -l </tmp/csum.out) -ge 2 ] && break; sleep 0.1; "
                         "done; cat /tmp/csum.out")
        got = bytes.fromhex(out.split()[-1])
        want = bytearray(sent)
        want[CSUM_START + 16:CSUM_START + 18] = inet_csum(sent[CSUM_START:]).to_bytes(2, "big")
        self.assertEqual(got[:len(want)].hex(), want.hex())

    def uso(self, dst, port):
        total = USO_SEGS * USO_SENDS
        self.sh(1, "sysctl -qw net.core.rmem_max=16777216")
        self.sh(1, f"python3 - {dst} {port} {USO_MSS} {total} >/tmp/uso.out 2>&1 <<'EOF' &\n{USO_RECV}\nEOF\n"
                   "for i in $(seq 50); do grep -q ready /tmp/uso.out && break; sleep 0.1; done")
        before = self.counters(0)
        self.sh(0, f"python3 - {dst} {port} {USO_MSS} {USO_SEGS} {USO_SENDS} <<'EOF'\n{USO_SEND}\nEOF",
                timeout=300)
        out = self.sh(1, "while ! grep -q good= /tmp/uso.out; do sleep 0.5; done; cat /tmp/uso.out",
                      timeout=300)
        self.assertIn(f"good={total} bad=0 missing=0", out)
        return self.assert_segmented(before, self.counters(0), USO_SENDS, total)

    def test_20_uso_ipv4_verified(self):
        d = self.uso(data_addr(1), 5501)
        self.results.append(f"USO IPv4: {d['super']} super-frames, {d['wire']} datagrams, all verified")

    def test_21_uso_ipv6_verified(self):
        d = self.uso(data_addr6(1), 5502)
        self.results.append(f"USO IPv6: {d['super']} super-frames, {d['wire']} datagrams, all verified")

    def iperf(self, seconds=5):
        self.sh(1, "iperf3 -s -D -1 -p 5601 >/dev/null 2>&1; sleep 0.5")
        out = self.sh(0, f"iperf3 -c {data_addr(1)} -p 5601 -t {seconds} -J", timeout=300)
        res = json.loads(out)
        self.assertNotIn("error", res, res.get("error"))
        return res["end"]["sum_received"]["bits_per_second"] / 1e6

    @default_kernel_only("a throughput figure; tests 10-12 take TSO on and off")
    def test_30_iperf_tso_on_and_off(self):
        """Throughput with the device segmenting and without: printed."""
        on = self.iperf()
        self.features(0, tso="off")
        try:
            off = self.iperf()
        finally:
            self.features(0, tso="on")
        self.results.append(f"iperf3 node0->node1 MTU 1500: TSO on {on:.0f} Mbit/s, off {off:.0f} Mbit/s "
                            f"({on / off:.2f}x)")

    # Under the debug kernel the selftests would take 85 s to drive the
    # TSO/USO paths tests 10-21 already drive there.
    @default_kernel_only("the kernel's tso.py and uso.py take tests 10-21's paths")
    def test_40_kernel_selftests(self):
        self.sh(0, f"for i in $(seq 30); do ssh {data_addr(1)} true && exit 0; sleep 1; done; exit 1",
                timeout=120)
        self.sh(1, REMOTE_NO_TIME_WAIT)
        env = (f"NETIF={self.ifname[0]} LOCAL_V4={data_addr(0)} REMOTE_V4={data_addr(1)} "
               f"LOCAL_V6={data_addr6(0)} REMOTE_V6={data_addr6(1)} REMOTE_TYPE=ssh "
               f"REMOTE_ARGS={data_addr(1)} PYTHONPYCACHEPREFIX=/tmp/pycache")
        for name, must_pass in SELFTESTS_PASS.items():
            with self.subTest(name):
                res = run(NAME, 0, f"cd /tmp && {env} python3 {HW}/{name} 2>&1", timeout=900)
                cases = {c: s for s, c in re.findall(r"^(ok|not ok) \d+ (\S+)", res.stdout, re.M)}
                skipped = set(re.findall(r"^ok \d+ (\S+) # SKIP", res.stdout, re.M))
                passed = {c for c, s in cases.items() if s == "ok"} - skipped
                failed = {c for c, s in cases.items() if s != "ok"}
                self.results.append(f"{name}: pass {sorted(passed)}, skip {len(skipped)}, "
                                    f"fail {sorted(failed)}")
                self.assertEqual(passed, must_pass, res.stdout[-4000:])
                self.assertEqual(failed, set(), res.stdout[-4000:])
                self.assertEqual(res.returncode, 0, res.stdout[-4000:])

    def test_90_no_kernel_warnings(self):
        for n in (0, 1):
            self.assertEqual(kernel_complaints(NAME, n), [], f"node{n}")


if __name__ == "__main__":
    main()
