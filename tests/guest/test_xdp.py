"""Native XDP on dmsnic between two nodes (one boot): programs of
dms_xdp.bpf.c (compiled here with clang -target bpf, one object per
program) attached to node0's interface act on IPv4 UDP datagrams to port
9999 that node1 sends, and pass everything else.

- xdp-features and the RX metadata features the device advertises;
- single-buffer XDP_DROP at MTU 1500: header split goes off while it is
  attached, every test datagram is dropped and counted (rxN_xdp_drop,
  qstats rx-packets), TCP through the same program (XDP_PASS) arrives
  intact; a single-buffer program refuses MTU 9000 and tcp-data-split on;
- XDP_TX (single buffer) and XDP_REDIRECT to the ingress device
  (ndo_xdp_xmit) reflect datagrams back to node1, counted on both sides;
- MTU 9000 with header split: a multi-buffer program passes 8000-byte
  datagrams only if they arrived in several buffers (they all arrive,
  intact), TCP arrives intact, and a multi-buffer XDP_TX reflects them;
- AF_XDP zero-copy (dms_xsk.py): a socket bound with XDP_ZEROCOPY to
  queue 1 receives the datagrams node1 sends there, byte for byte, and
  sends datagrams node1 receives intact; it keeps receiving, every frame
  checked, while the first program is attached, RX rings are restarted,
  the channel count changes and the program goes and comes back; and when
  it goes away while the device refuses the pair's new rings (the
  driver's fault-injection hook), the pool is released all the same, and
  the pair's TX queue, down, drops what it is sent."""

import base64
import json
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from guestlib import (ALL_CASES, DEBUG_KERNEL, DMSNIC_IF, TwoNodes, cluster_name, complaints, data_addr, main,
                      scaled)

NAME = cluster_name("xdp-test")
SOURCE = Path(__file__).resolve().parent / "dms_xdp.bpf.c"
PROGRAMS = {"DROP": "xdp", "TX": "xdp", "TX_MB": "xdp.frags", "REDIRECT": "xdp.frags",
            "PASS_MB": "xdp.frags", "XSK": "xdp.frags"}
XSK_TOOL = Path(__file__).resolve().parent / "dms_xsk.py"
PORT = 9999
NODE0, NODE1 = data_addr(0), data_addr(1)
IF = DMSNIC_IF
MiB = 1 << 20

# node1: send N datagrams of SIZE random bytes to node0:PORT from one
# connected socket, wait for each to come back; prints how many came back
# intact.
ECHO = r"""
import os, socket, sys
dst, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect((dst, %d))
s.settimeout(3)
ok = 0
for _ in range(n):
    data = os.urandom(size)
    s.send(data)
    try:
        ok += s.recv(65536) == data
    except socket.timeout:
        pass
print(ok)
""" % PORT

# Receive datagrams on PORT until SECONDS pass without one; prints the
# count and the sha256 of each one's payload, in order. The buffer holds
# a burst (an AF_XDP socket sends at line rate).
RECEIVE = r"""
import hashlib, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE
s.bind(("", %d))
s.settimeout(float(sys.argv[1]))
open("/tmp/xdp-rx-ready", "w").close()
got = []
try:
    while True:
        got.append(hashlib.sha256(s.recv(65536)).hexdigest())
except socket.timeout:
    pass
print(len(got), *got)
""" % PORT

# node1: send N datagrams of SIZE random bytes to node0:PORT; prints the
# sha256 of each.
SEND = r"""
import hashlib, os, socket, sys, time
dst, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sums = []
for _ in range(n):
    data = os.urandom(size)
    sums.append(hashlib.sha256(data).hexdigest())
    s.sendto(data, (dst, %d))
    time.sleep(0.01)
print(*sums)
""" % PORT

# node1: datagrams of SIZE bytes to DST:PORT whose payloads are those of
# dms_xsk.py's stream_payload(), numbered from FIRST: either a flood (BURST
# at a time, GAP seconds apart) until the file UNTIL exists, or COUNT of them
# 10 ms apart. Prints how many it sent.
#   stream-send.py DST PORT SIZE FIRST flood UNTIL BURST GAP
#   stream-send.py DST PORT SIZE FIRST count COUNT
STREAM_SEND = r"""
import hashlib, os, socket, struct, sys, time
dst, port, size, first, mode, arg = sys.argv[1:7]
port, size, first = int(port), int(size), int(first)
def payload(seq):
    head = struct.pack("!Q", seq)
    body = hashlib.sha256(head).digest()
    return head + (body * (size // len(body) + 1))[:size - len(head)]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
seq = first
if mode == "flood":
    burst, gap = int(sys.argv[7]), float(sys.argv[8])
    while not os.path.exists(arg):
        for _ in range(burst):
            s.sendto(payload(seq), (dst, port))
            seq += 1
        time.sleep(gap)
else:
    for _ in range(int(arg)):
        s.sendto(payload(seq), (dst, port))
        seq += 1
        time.sleep(0.01)
print(seq - first)
"""
# node0: receive COUNT datagrams on PORT (20 s at most); print how many
# are 1472 bytes of 0xff, the UDP payload of a full-size frame at MTU 1500.
FULL_RECEIVE = r"""
import socket, sys
port, count = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("", port))
s.settimeout(20)
print("ready", flush=True)
whole = 0
try:
    for _ in range(count):
        whole += s.recv(2048) == b"\xff" * 1472
except socket.timeout:
    pass
print(f"whole {whole} of {count}", flush=True)
"""
# The first stream datagram sent once the reconfigurations are over.
TAIL_FIRST = 1 << 40
# test_7's flood: datagrams per burst, seconds between bursts. The debug
# kernel spends ~1.7 ms of vCPU per packet under TCG: a full flood there
# leaves the vCPUs little time for the reconfigurations it runs under
# (235 s for three rounds); 100 a second still fill every NAPI-off window.
FLOOD = "1 0.01" if DEBUG_KERNEL and not ALL_CASES else "32 0.001"

# dmsnic's fault-injection hook for the device refusing a queue (debugfs;
# Documentation/fault-injection/): FAIL PROBABILITY [TIMES] arms it,
# FAIL 0 disarms it.
FAIL = r"""
FAIL() {
    mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
    d=/sys/kernel/debug/dmsnic/fail_queue_enable
    echo 1 >$d/verbose && echo ${2:--1} >$d/times && echo $1 >$d/probability
}
"""

# The interface's netdev attributes and device qstats through the kernel's
# YNL library: {"dev": dev-get, "qstats": device qstats}.
NETDEV = r"""
import json, socket, sys
sys.path.insert(0, "/opt/devmemsim/selftests/tools/net/ynl")
from pyynl.lib import YnlFamily
ynl = YnlFamily("/opt/devmemsim/selftests/Documentation/netlink/specs/netdev.yaml", schema="")
idx = socket.if_nametoindex(sys.argv[1])
print(json.dumps({"dev": ynl.do("dev-get", {"ifindex": idx}),
                  "qstats": ynl.dump("qstats-get", {"ifindex": idx})[0]}, default=sorted))
"""


def compile_programs(out: Path) -> dict:
    """{program: base64 of its BPF object}."""
    objs = {}
    for prog in PROGRAMS:
        obj = out / f"{prog}.o"
        subprocess.run(["clang", "-O2", "-g", "-target", "bpf", f"-DDMS_XDP_{prog}", "-c", str(SOURCE),
                        "-o", str(obj)], check=True)
        objs[prog] = base64.b64encode(obj.read_bytes()).decode()
    return objs


@unittest.skipIf(shutil.which("clang") is None, "no clang to build the XDP programs")
class Xdp(TwoNodes):
    NAME = NAME
    CHECK_DMESG = True

    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as tmp:
            cls.objects = compile_programs(Path(tmp))
        super().setUpClass()

    @classmethod
    def setup_nodes(cls):
        cls.ifname = {n: cls.sh(n, f"echo {IF}").strip() for n in (0, 1)}
        for prog, b64 in cls.objects.items():
            cls.sh(0, f"echo {b64} | base64 -d > /tmp/{prog}.o")
        for n in (0, 1):
            cls.sh(n, f"cat > /tmp/xdp-rx.py <<'EOF'\n{RECEIVE}\nEOF")
        cls.sh(1, f"cat > /tmp/stream-send.py <<'EOF'\n{STREAM_SEND}\nEOF")
        cls.sh(0, f"cat > /tmp/dms_xsk.py <<'EOF'\n{XSK_TOOL.read_text()}\nEOF")
        # The sysctl exists with CONFIG_BPF_SYSCALL only.
        if cls.sh(0, "cat /proc/sys/kernel/unprivileged_bpf_disabled", check=False) == "":
            raise unittest.SkipTest("the guest kernel has no BPF syscall")

    def attach(self, prog):
        """Attach a program to node0's interface, replacing one attached."""
        self.sh(0, f"ip -force link set dev {self.ifname[0]} xdpdrv obj /tmp/{prog}.o sec {PROGRAMS[prog]}")

    def refused(self, node, command):
        """Run command on the node; its output if it failed, else fail."""
        out = self.sh(node, f"{command} 2>&1; echo rc=$?", check=False)
        self.assertNotIn("rc=0\n", out, command)
        return out

    def detach(self):
        self.sh(0, f"ip link set dev {self.ifname[0]} xdpdrv off")

    def set_mtu(self, mtu):
        for n in (0, 1):
            self.sh(n, f"ip link set dev {self.ifname[n]} mtu {mtu}")

    def ethtool_stats(self, node):
        """ethtool -S: the per-queue XDP counters summed over the queues
        (xdp_drop, ..., xdp_xmit) and the device's rx/tx packets."""
        out = self.sh(node, f"ethtool -S {self.ifname[node]}")
        totals = {}
        for kind, name, value in re.findall(r"^\s*(rx|tx)\d+_(xdp_\w+|packets):\s*(\d+)\s*$", out, re.M):
            key = name if name.startswith("xdp") else f"{kind}_{name}"
            totals[key] = totals.get(key, 0) + int(value)
        return totals

    def delta(self, before, after):
        return {k: after[k] - before.get(k, 0) for k in after}

    def netdev(self, node):
        return json.loads(self.sh(node, f"python3 - {self.ifname[node]} <<'EOF'\n{NETDEV}\nEOF"))

    def header_split(self):
        out = self.sh(0, f"ethtool -g {self.ifname[0]}")
        return re.search(r"TCP data split:\s*(\S+)", out).group(1)

    def echo(self, n, size):
        out = self.sh(1, f"python3 - {NODE0} {n} {size} <<'EOF'\n{ECHO}\nEOF", timeout=300)
        return int(out.strip())

    def start_receiver(self, node, seconds):
        """Receive datagrams on node's PORT until seconds pass without one."""
        self.sh(node, "rm -f /tmp/xdp-rx-ready /tmp/xdp-rx; "
                      f"nohup sh -c 'python3 /tmp/xdp-rx.py {seconds} >/tmp/xdp-rx.tmp; "
                      "mv /tmp/xdp-rx.tmp /tmp/xdp-rx' >/dev/null 2>&1 & "
                      "for i in $(seq 100); do [ -e /tmp/xdp-rx-ready ] && break; sleep 0.1; done")

    def received(self, node):
        """sha256s of what start_receiver()'s receiver got."""
        got = self.sh(node, "for i in $(seq 600); do [ -e /tmp/xdp-rx ] && break; sleep 0.2; done; "
                            "cat /tmp/xdp-rx", timeout=300).split()
        self.assertEqual(int(got[0]), len(got) - 1)
        return got[1:]

    def send_datagrams(self, n, size, seconds=5):
        """n datagrams node1 -> node0:PORT; (sha256s sent, sha256s received)."""
        self.start_receiver(0, seconds)
        sent = self.sh(1, f"python3 - {NODE0} {n} {size} <<'EOF'\n{SEND}\nEOF", timeout=300).split()
        return sent, self.received(0)

    def test_1_features(self):
        dev = self.netdev(0)["dev"]
        self.assertLessEqual({"basic", "redirect", "ndo-xmit", "rx-sg", "ndo-xmit-sg", "xsk-zerocopy"},
                             set(dev["xdp-features"]))
        self.assertIn("hash", dev["xdp-rx-metadata-features"])

    def test_2_drop_single_buffer(self):
        self.assertEqual(self.header_split(), "on")
        self.attach("DROP")
        try:
            self.assertEqual(self.header_split(), "off")
            # Single-buffer programs see whole frames: no jumbo MTU, no split.
            self.refused(0, f"ip link set dev {self.ifname[0]} mtu 9000")
            self.refused(0, f"ethtool -G {self.ifname[0]} tcp-data-split on")
            # qstats read outside the ethtool reads: they see at least as much.
            q_before = self.netdev(0)["qstats"]
            before = self.ethtool_stats(0)
            sent, got = self.send_datagrams(200, 512)
            tcp = self.tcp_transfer(2 * MiB, 5500, sender=1)
            after = self.ethtool_stats(0)
            q_after = self.netdev(0)["qstats"]
        finally:
            self.detach()
        self.assertEqual(self.header_split(), "on")
        d = self.delta(before, after)
        self.assertEqual((len(sent), got), (200, []))
        self.assertEqual(d["xdp_drop"], 200)
        self.assertEqual(tcp[0], tcp[1])
        self.assertGreaterEqual(d["xdp_pass"], 2 * MiB // 1500)
        # XDP is the first layer of the stack: what it drops was received.
        self.assertGreaterEqual(q_after["rx-packets"] - q_before["rx-packets"], 200 + d["xdp_pass"])

    def reflect(self, prog, n, size):
        self.attach(prog)
        try:
            before, peer_before = self.ethtool_stats(0), self.ethtool_stats(1)
            back = self.echo(n, size)
            after, peer_after = self.ethtool_stats(0), self.ethtool_stats(1)
        finally:
            self.detach()
        self.assertEqual(back, n)
        return self.delta(before, after), self.delta(peer_before, peer_after)

    def test_3_tx_single_buffer(self):
        d, peer = self.reflect("TX", 100, 1000)
        self.assertEqual(d["xdp_tx"], 100)
        self.assertGreaterEqual(d["tx_packets"], 100)
        self.assertGreaterEqual(peer["rx_packets"], 100)

    def test_4_redirect_to_ingress_device(self):
        d, _ = self.reflect("REDIRECT", 100, 1000)
        self.assertEqual(d["xdp_redirect"], 100)
        self.assertEqual(d["xdp_xmit"], 100)
        self.assertEqual(d["xdp_xmit_errors"], 0)

    def test_5_multi_buffer_mtu_9000(self):
        self.set_mtu(9000)
        try:
            # A single-buffer program cannot see 9000-byte frames whole.
            self.assertIn("single-buffer", self.refused(
                0, f"ip link set dev {self.ifname[0]} xdpdrv obj /tmp/DROP.o sec xdp"))
            self.attach("PASS_MB")
            self.assertEqual(self.header_split(), "on")
            before = self.ethtool_stats(0)
            sent, got = self.send_datagrams(20, 8000)
            tcp = self.tcp_transfer(4 * MiB, 5501, sender=1)
            after = self.ethtool_stats(0)
            self.assertEqual(sent, got)
            self.assertEqual(tcp[0], tcp[1])
            self.assertEqual(self.delta(before, after)["xdp_drop"], 0)
            # Replacing a multi-buffer program by another keeps the rings.
            self.attach("TX_MB")
            self.assertEqual(self.echo(20, 8000), 20)
        finally:
            self.detach()
            self.set_mtu(1500)


    def xsk_attach(self, queue):
        """Steer the test datagrams to queue and attach the XSK program
        (its map pinned); returns the ntuple rule's id."""
        if0 = self.ifname[0]
        out = self.sh(0, f"ethtool -N {if0} flow-type udp4 dst-port {PORT} action {queue}")
        rule = re.search(r"Added rule with ID (\d+)", out).group(1)
        self.sh(0, "bpftool prog load /tmp/XSK.o /sys/fs/bpf/dms_xsk type xdp "
                   f"pinmaps /sys/fs/bpf/dms_xsk_maps && bpftool net attach xdpdrv pinned /sys/fs/bpf/dms_xsk "
                   f"dev {if0}")
        return rule

    def xsk_detach(self, rule):
        # A pattern that its own shell's command line does not match.
        self.sh(0, "pkill -f '[d]ms_xsk.py'; "
                   f"ip link set dev {self.ifname[0]} xdpdrv off; rm -rf /sys/fs/bpf/dms_xsk*; "
                   + (f"ethtool -N {self.ifname[0]} delete {rule}" if rule else "true"), check=False)

    def test_6_af_xdp_zero_copy(self):
        """A multi-buffer program keeps header split on; the zero-copy queue
        takes every frame whole into one XSK frame all the same."""
        queue, n, size = 1, 50, 1000
        peer_mac = self.sh(1, f"cat /sys/class/net/{self.ifname[1]}/address").strip()
        rule = None
        try:
            rule = self.xsk_attach(queue)
            self.assertEqual(self.header_split(), "on")
            before = self.ethtool_stats(0)
            ready = self.sh(0, f"nohup python3 /tmp/dms_xsk.py {self.ifname[0]} {queue} "
                               f"/sys/fs/bpf/dms_xsk_maps/dms_xsks {n} {n} {NODE0} {NODE1} {peer_mac} "
                               f"{PORT} {size} >/tmp/xsk.out 2>&1 & "
                               "for i in $(seq 300); do grep -q ready /tmp/xsk.out && break; "
                               "kill -0 $! 2>/dev/null || break; sleep 0.1; done; cat /tmp/xsk.out")
            self.assertIn("ready", ready)
            self.start_receiver(1, 15)
            sent = self.sh(1, f"python3 - {NODE0} {n} {size} <<'EOF'\n{SEND}\nEOF", timeout=300).split()
            out = self.sh(0, "for i in $(seq 600); do grep -q '^tx' /tmp/xsk.out && break; sleep 0.2; done; "
                             "cat /tmp/xsk.out", timeout=300)
            after = self.ethtool_stats(0)
            peer_got = self.received(1)
        finally:
            self.xsk_detach(rule)
        lines = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line}
        self.assertEqual(lines.get("rx"), sent, out)
        self.assertEqual(self.delta(before, after)["xdp_redirect"], n)
        tx = lines.get("tx", ["0"])
        self.assertEqual(int(tx[0]), n, out)
        self.assertEqual(peer_got, tx[1:])

    def xsk_stream(self, queue, size):
        """Steer the test datagrams to queue, load the XSK program (not
        attached) and start dms_xsk.py --stream on it; returns the ntuple
        rule's id. /tmp/xsk-stop ends the stream."""
        if0 = self.ifname[0]
        out = self.sh(0, f"ethtool -N {if0} flow-type udp4 dst-port {PORT} action {queue}")
        rule = re.search(r"Added rule with ID (\d+)", out).group(1)
        self.sh(0, "bpftool prog load /tmp/XSK.o /sys/fs/bpf/dms_xsk type xdp "
                   "pinmaps /sys/fs/bpf/dms_xsk_maps")
        ready = self.sh(0, f"rm -f /tmp/xsk-stop; nohup python3 /tmp/dms_xsk.py --stream {if0} {queue} "
                           f"/sys/fs/bpf/dms_xsk_maps/dms_xsks {PORT} {size} /tmp/xsk-stop >/tmp/xsk.out 2>&1 & "
                           "for i in $(seq 300); do grep -q ready /tmp/xsk.out && break; "
                           "kill -0 $! 2>/dev/null || break; sleep 0.1; done; cat /tmp/xsk.out")
        self.assertIn("ready", ready)
        return rule

    def test_7_af_xdp_zero_copy_under_reconfiguration(self):
        """A zero-copy socket on queue 1 receives a flood while its ring
        and its pool change hands: the first program attached with the
        socket bound, every RX queue restarted (ethtool -G rx), every pair
        rebuilt (ethtool -L), the program detached and attached again.
        Each is a NAPI-off window in which the old ring gives its frames
        back to the pool and the new one takes them. Frames may be lost
        while that happens; none may come changed, twice, from outside
        the socket's receive frames, or while the socket holds it (a frame
        posted twice). Once the changes end every datagram arrives."""
        queue, size, tail = 1, 1000, 200
        if0 = self.ifname[0]
        attach = f"bpftool net attach xdpdrv pinned /sys/fs/bpf/dms_xsk dev {if0}"
        rule = None
        mark = int(self.sh(0, "dmesg | wc -l"))
        try:
            rule = self.xsk_stream(queue, size)
            self.sh(1, f"rm -f /tmp/flood-stop; nohup python3 /tmp/stream-send.py {NODE0} {PORT} {size} 0 "
                       f"flood /tmp/flood-stop {FLOOD} >/tmp/flood.out 2>&1 &")
            self.sh(0, f"""set -e
sleep 1; {attach}
for i in $(seq {scaled(3)}); do
    sleep 1; ethtool -G {if0} rx 512; sleep 1; ethtool -G {if0} rx 1024
    sleep 1; ethtool -L {if0} combined 2; sleep 1; ethtool -L {if0} combined 4
    sleep 1; ip link set dev {if0} xdpdrv off; sleep 1; {attach}
done""", timeout=900)
            flood = self.sh(1, "touch /tmp/flood-stop; while pgrep -f '[s]tream-send.py' >/dev/null; do sleep 0.2; done; "
                               "cat /tmp/flood.out")
            sent = self.sh(1, f"python3 /tmp/stream-send.py {NODE0} {PORT} {size} {TAIL_FIRST} count {tail}",
                           timeout=300)
            out = self.sh(0, "sleep 1; touch /tmp/xsk-stop; "
                             "for i in $(seq 600); do pgrep -f '[d]ms_xsk.py' >/dev/null || break; sleep 0.2; done; "
                             "cat /tmp/xsk.out", timeout=300)
        finally:
            self.xsk_detach(rule)
            self.sh(0, f"ethtool -G {if0} rx 1024; ethtool -L {if0} combined 4", check=False)
        report = json.loads(out.splitlines()[-1])
        got = set(report["seqs"])
        during = len(got & set(range(int(flood))))
        print(f"\nAF_XDP zero-copy under reconfiguration: {report['frames']} frames, {during} of "
              f"{int(flood)} flood datagrams and {len(got) - during} of {tail} after; bad {report['bad']} "
              f"(dup {report['dup']}, double {report['double']}, foreign {report['foreign']}); "
              f"socket statistics {report['statistics']}", flush=True)
        self.assertEqual(complaints(self.sh(0, f"dmesg | tail -n +{mark + 1}")), [])
        self.assertEqual((report["bad"], report["problems"]), (0, []))
        self.assertEqual(int(sent), tail)
        self.assertEqual(sorted(set(range(TAIL_FIRST, TAIL_FIRST + tail)) - got), [])
        self.assertGreater(during, 0, "nothing arrived during the reconfigurations")

    def test_8_zero_copy_off_when_the_device_refuses(self):
        """The zero-copy socket on queue 1 goes away while the device
        refuses the pair's new page-pool rings once (fail_queue_enable).
        The driver cannot keep the pool (the core WARNs if it says it
        failed): the pool is released, the pair is left down, its refusal
        counted. For longer than the stack's TX watchdog waits (5 s),
        datagrams steered to TX queue 1 are dropped and counted there, not
        held behind a stopped queue (which the watchdog reports as a hang).
        Detaching the program restarts every pair, and queue 1 receives
        again."""
        queue, n, size = 1, 50, 1000
        if0 = self.ifname[0]
        rule = None
        mark = int(self.sh(0, "dmesg | wc -l"))
        counter = f"ethtool -S {if0} | sed -n 's/^ *%s: //p'"
        before = self.sh(0, counter % f"q{queue}_start_errors")
        drops = self.sh(0, counter % f"tx{queue}_drops")
        try:
            rule = self.xsk_stream(queue, size)
            self.sh(0, f"bpftool net attach xdpdrv pinned /sys/fs/bpf/dms_xsk dev {if0}")
            down = self.sh(0, FAIL + f"""
FAIL 100 1
pkill -f '[d]ms_xsk.py'
for i in $(seq 300); do dmesg | tail -n +{mark + 1} | grep 'queue pair {queue} stays down' && break; sleep 0.1; done
FAIL 0
tc qdisc add dev {if0} clsact
tc filter add dev {if0} egress pref 1 protocol ip flower ip_proto udp dst_port 5298 \
    action skbedit queue_mapping {queue}
python3 -c "import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(70):
    s.sendto(bytes(100), ('{NODE1}', 5298))
    time.sleep(0.1)"
tc qdisc del dev {if0} clsact
ip link set dev {if0} xdpdrv off""")
            after = self.sh(0, counter % f"q{queue}_start_errors")
            dropped = int(self.sh(0, counter % f"tx{queue}_drops")) - int(drops)
            before_rx = self.ethtool_stats(0)
            sent, got = self.send_datagrams(n, size)
            after_rx = self.ethtool_stats(0)
        finally:
            self.sh(0, FAIL + f"FAIL 0; tc qdisc del dev {if0} clsact 2>/dev/null", check=False)
            self.xsk_detach(rule)
        self.assertEqual(complaints(self.sh(0, f"dmesg | tail -n +{mark + 1}")), [])
        self.assertIn("stays down", down)
        self.assertEqual(int(after) - int(before), 1, "the refusal was not counted")
        self.assertGreaterEqual(dropped, 60, "the down pair's TX queue did not drop what it was sent")
        self.assertEqual(sent, got)
        self.assertGreaterEqual(after_rx["rx_packets"] - before_rx["rx_packets"], n)

    def test_9_full_size_frames_passed_from_zero_copy(self):
        """Frames the program passes to the stack from a zero-copy queue
        are copied into skbs. A full-size one (1514 bytes at MTU 1500)
        fits the 2 KiB chunk's 1792-byte frame but not the 1472 bytes that
        xdp_build_skb_from_zc() leaves before the new skb's shared info:
        copied there, its last bytes (0xff here) overwrote the shared info
        and the kernel crashed. Each must arrive whole at a UDP socket."""
        queue, n, port = 1, 20, PORT - 1
        if0 = self.ifname[0]
        rule = pass_rule = None
        mark = int(self.sh(0, "dmesg | wc -l"))
        try:
            rule = self.xsk_stream(queue, 1000)
            self.sh(0, f"bpftool net attach xdpdrv pinned /sys/fs/bpf/dms_xsk dev {if0}")
            out = self.sh(0, f"ethtool -N {if0} flow-type udp4 dst-port {port} action {queue}")
            pass_rule = re.search(r"Added rule with ID (\d+)", out).group(1)
            self.sh(0, f"cat > /tmp/full-rx.py <<'EOF'\n{FULL_RECEIVE}\nEOF\n"
                       f"nohup python3 /tmp/full-rx.py {port} {n} >/tmp/full.out 2>&1 &\n"
                       "for i in $(seq 300); do grep -q ready /tmp/full.out && break; sleep 0.1; done")
            self.sh(1, f"python3 -c \"import socket, time\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                       f"for _ in range({n}): s.sendto(b'\\xff' * 1472, ('{NODE0}', {port})); time.sleep(0.01)\"")
            got = self.sh(0, "for i in $(seq 600); do grep -q '^whole' /tmp/full.out && break; sleep 0.1; done; "
                             "cat /tmp/full.out")
        finally:
            if pass_rule:
                self.sh(0, f"ethtool -N {if0} delete {pass_rule}", check=False)
            self.xsk_detach(rule)
        self.assertEqual(complaints(self.sh(0, f"dmesg | tail -n +{mark + 1}")), [])
        self.assertIn(f"whole {n} of {n}", got)


if __name__ == "__main__":
    main()
