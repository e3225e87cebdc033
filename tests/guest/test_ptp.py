"""NIC v1.6 timing hardware end to end on a two-node cluster (one boot):
the PTP hardware clock (ethtool -T, clock_gettime/settime/adjtime on the
PHC: steps and a frequency trim, checked against CLOCK_MONOTONIC), hardware
timestamps through SO_TIMESTAMPING (UDP node1 -> node0 stamped on RX, node0
-> node1 stamped on TX: present, increasing, close to the PHC), the MAC's
PAUSE and FEC reports (ethtool -a/--show-fec with statistics), its v1.8
IEEE 802.3 MAC, MAC control and RMON counters (ethtool -S --groups: frames
of each kind from node0 to node1 move each counter by their number), and, where
the guest kernel has them, devlink dev info, a net-shaper queue rate limit
the device holds (iperf3 through one queue) and a net-shaper node holding
two queues' sum (NIC v1.8 scheduler nodes)."""

import json
import os
import sys

from guestlib import DMSNIC_IF, TwoNodes, data_addr, main

from devmemsim.contract import C  # noqa: E402

NAME = f"ptp-test-{os.getpid()}"
IF = DMSNIC_IF
YNL = "/opt/devmemsim/selftests/tools/net/ynl"
SPECS = "/opt/devmemsim/selftests/Documentation/netlink/specs"

# Python run in the guest: SIOCSHWTSTAMP, the PHC as a POSIX clock, and
# SO_TIMESTAMPING. Each script prints one JSON line.
COMMON = r"""
import ctypes, ctypes.util, fcntl, glob, json, os, socket, struct, sys, time
IF = sys.argv[1]
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)

class HwtstampConfig(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_int), ("tx_type", ctypes.c_int), ("rx_filter", ctypes.c_int)]

class Ifreq(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 16), ("data", ctypes.POINTER(HwtstampConfig))]

def hwtstamp(tx_on, rx_all):
    cfg = HwtstampConfig(0, int(tx_on), 1 if rx_all else 0)  # HWTSTAMP_FILTER_ALL = 1
    req = Ifreq(IF.encode(), ctypes.pointer(cfg))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        fcntl.ioctl(s.fileno(), 0x89b0, req)  # SIOCSHWTSTAMP
    return cfg.tx_type, cfg.rx_filter

def phc_path():
    return "/dev/" + os.path.basename(glob.glob(f"/sys/class/net/{IF}/device/ptp/ptp*")[0])

def phc_clock(fd):
    return ((~fd) << 3) | 3  # FD_TO_CLOCKID

class Timex(ctypes.Structure):
    _fields_ = [("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long),
                ("maxerror", ctypes.c_long), ("esterror", ctypes.c_long), ("status", ctypes.c_int), ("constant", ctypes.c_long),
                ("precision", ctypes.c_long), ("tolerance", ctypes.c_long),
                ("tv_sec", ctypes.c_long), ("tv_usec", ctypes.c_long), ("rest", ctypes.c_long * 20)]

def adjtime(clk, **kw):
    tx = Timex()
    for k, v in kw.items():
        setattr(tx, k, v)
    if libc.clock_adjtime(ctypes.c_int(clk), ctypes.byref(tx)) < 0:
        raise OSError(ctypes.get_errno(), "clock_adjtime")

def stamp(cmsgs):
    for level, kind, data in cmsgs:
        if level == socket.SOL_SOCKET and kind == 37:  # SCM_TIMESTAMPING
            sec, nsec = struct.unpack_from("qq", data, 32)  # ts[2]: raw hardware
            return sec * 10**9 + nsec
    return None
"""

PHC = COMMON + r"""
fd = os.open(phc_path(), os.O_RDWR)
clk = phc_clock(fd)
out = {"start_offset_s": (time.clock_gettime_ns(clk) - time.time_ns()) / 1e9}
def sample():
    # The PHC between two monotonic reads, the closest pair of 20 (as
    # PTP_SYS_OFFSET does): a vCPU that loses the host CPU between the two
    # clocks' reads (a loaded host) would move the rate by ms per 2 s.
    best = None
    for _ in range(20):
        a = time.monotonic_ns()
        p = time.clock_gettime_ns(clk)
        b = time.monotonic_ns()
        if best is None or b - a < best[0]:
            best = (b - a, p, (a + b) // 2)
    return best[1:]
def rate(seconds):
    p0, m0 = sample()
    time.sleep(seconds)
    p1, m1 = sample()
    return (p1 - p0) / (m1 - m0)
time.clock_settime_ns(clk, 1_000_000 * 10**9)
out["after_set_s"] = time.clock_gettime_ns(clk) / 1e9
before = time.clock_gettime_ns(clk)
adjtime(clk, modes=0x0100 | 0x2000, tv_sec=5, tv_usec=0)  # ADJ_SETOFFSET | ADJ_NANO
out["step_s"] = (time.clock_gettime_ns(clk) - before) / 1e9
out["rate0"] = rate(2)
adjtime(clk, modes=0x0002, freq=800 * 65536)  # ADJ_FREQUENCY: +800 ppm
out["rate800"] = rate(2)
adjtime(clk, modes=0x0002, freq=0)
time.clock_settime_ns(clk, time.time_ns())
print(json.dumps(out))
"""

RX = COMMON + r"""
print(json.dumps(hwtstamp(True, True)), file=sys.stderr)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 37, 4 | 64)  # SO_TIMESTAMPING: RX_HARDWARE | RAW_HARDWARE
s.bind(("0.0.0.0", 5320))
s.settimeout(60)
clk = phc_clock(os.open(phc_path(), os.O_RDONLY))
open("/tmp/rx-ready", "w").close()
stamps, lags = [], []
for _ in range(int(sys.argv[2])):
    _, cmsgs, _, _ = s.recvmsg(2048, 1024)
    now = time.clock_gettime_ns(clk)
    t = stamp(cmsgs)
    stamps.append(t)
    lags.append(None if t is None else (now - t) / 1e9)
print(json.dumps({"stamps": stamps, "lags_s": lags}))
"""

TX = COMMON + r"""
print(json.dumps(hwtstamp(True, False)), file=sys.stderr)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 37, 1 | 64 | 2048)  # TX_HARDWARE | RAW_HARDWARE | OPT_TSONLY
clk = phc_clock(os.open(phc_path(), os.O_RDONLY))
stamps, lags = [], []
for i in range(int(sys.argv[3])):
    sent = time.clock_gettime_ns(clk)
    s.sendto(b"x" * 200, (sys.argv[2], 5321))
    t = None
    for _ in range(200):
        try:
            _, cmsgs, _, _ = s.recvmsg(2048, 1024, socket.MSG_ERRQUEUE | socket.MSG_DONTWAIT)
            t = stamp(cmsgs)
            break
        except BlockingIOError:
            time.sleep(0.01)
    stamps.append(t)
    lags.append(None if t is None else (t - sent) / 1e9)
    time.sleep(0.05)
print(json.dumps({"stamps": stamps, "lags_s": lags}))
"""

SHAPER = r"""
import json, socket, sys
sys.path.insert(0, "%s")
from pyynl.lib import YnlFamily
ynl = YnlFamily("%s/net_shaper.yaml", schema="")
ifindex = socket.if_nametoindex(sys.argv[1])
if sys.argv[2] == "caps":
    scope = sys.argv[3] if len(sys.argv) > 3 else "queue"
    print(json.dumps(ynl.do("cap-get", {"ifindex": ifindex, "scope": scope})))
    sys.exit()
if sys.argv[2] == "group":
    leaves = [{"handle": {"scope": "queue", "id": int(q)}, "weight": 1} for q in sys.argv[3].split(",")]
    node = ynl.do("group", {"ifindex": ifindex, "leaves": leaves, "handle": {"scope": "node"},
                            "metric": "bps", "bw-max": int(sys.argv[4])})
    print(json.dumps(ynl.do("get", {"ifindex": ifindex, "handle": node["handle"]})))
    sys.exit()
queue = {"scope": "queue", "id": int(sys.argv[3])}
if sys.argv[2] == "set":
    ynl.do("set", {"ifindex": ifindex, "handle": queue, "metric": "bps", "bw-max": int(sys.argv[4])})
    print(json.dumps(ynl.do("get", {"ifindex": ifindex, "handle": queue})))
elif sys.argv[2] == "delete":
    ynl.do("delete", {"ifindex": ifindex, "handle": queue})
    print("{}")
""" % (YNL, SPECS)
# Frames of each kind the MAC counts, sent raw from IF (AF_PACKET) to
# argv[2]'s MAC: name -> (destination, EtherType, length without FCS, count).
MAC_FRAMES = r"""
import json, socket, sys
IF, PEER = sys.argv[1], bytes.fromhex(sys.argv[2].replace(":", ""))
KINDS = {
    "bcast": (b"\xff" * 6, 0x88b5, 100, 40),
    "mcast": (bytes.fromhex("01005e000001"), 0x88b5, 200, 30),
    "ctrl": (bytes.fromhex("0180c2000001"), 0x8808, 60, 20),  # opcode 0
    "pause": (bytes.fromhex("0180c2000001"), 0x8808, 60, 10),  # opcode 1
    "big": (PEER, 0x88b5, 1000, 25),
    "short": (PEER, 0x88b5, 30, 15),  # padded to 60 by the MAC
}
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((IF, 0))
src = open(f"/sys/class/net/{IF}/address").read().strip()
for name, (dst, etype, length, count) in KINDS.items():
    head = dst + bytes.fromhex(src.replace(":", "")) + etype.to_bytes(2, "big")
    body = (b"\x00\x01" if name == "pause" else b"\x00\x00") + b"\x00\x10"
    frame = (head + body).ljust(length, b"\x00")
    for _ in range(count):
        s.send(frame)
print(json.dumps({k: v[3] for k, v in KINDS.items()}))
"""

# Sends node0's traffic through TX queue {queue} (act_skbedit on clsact egress).
PIN_TX_QUEUE = "tc qdisc add dev {dev} clsact && tc filter add dev {dev} egress matchall action skbedit queue_mapping {queue}"
# Sends node0's TCP traffic to port {port} through TX queue {queue}.
PIN_PORT_TO_QUEUE = ("tc filter add dev {dev} egress protocol ip flower ip_proto tcp dst_port {port} "
                     "action skbedit queue_mapping {queue}")


class Ptp(TwoNodes):
    NAME = NAME
    CHECK_DMESG = True

    @classmethod
    def setup_nodes(cls):
        cls.ifname = {n: cls.sh(n, f"echo {IF}").strip() for n in (0, 1)}

    def run_rc(self, node, script):
        return self.sh(node, f"{script} >/dev/null 2>&1; echo $?", check=False).strip()

    def py(self, node, script, *args, timeout=300):
        out = self.sh(node, f"python3 - {self.ifname[node]} {' '.join(map(str, args))} <<'EOF'\n{script}\nEOF",
                      timeout=timeout)
        return json.loads(out.strip().splitlines()[-1])

    def test_1_ethtool_reports_the_phc_and_hardware_timestamping(self):
        out = self.sh(0, f"ethtool -T {self.ifname[0]}")
        # ethtool 6.14 calls the PHC "Hardware timestamp provider index"
        self.assertRegex(out, r"(PTP Hardware Clock|Hardware timestamp provider index): \d+")
        for cap in ("hardware-transmit", "hardware-receive", "hardware-raw-clock"):
            self.assertIn(cap, out)
        self.assertIn("all", out)  # HWTSTAMP_FILTER_ALL

    def test_2_phc_set_step_and_frequency_trim(self):
        r = self.py(0, PHC, timeout=600)
        print(f"\nPHC: {r}", file=sys.stderr)
        self.assertLess(abs(r["start_offset_s"]), 60)  # set to real time at probe
        self.assertAlmostEqual(r["after_set_s"], 1_000_000, delta=1)
        self.assertAlmostEqual(r["step_s"], 5, delta=0.5)
        self.assertAlmostEqual(r["rate0"], 1, delta=0.002)
        self.assertAlmostEqual((r["rate800"] - r["rate0"]) * 1e6, 800, delta=250)

    def test_3_rx_hardware_stamps(self):
        self.sh(0, f"cat >/tmp/rx.py <<'EOF'\n{RX}\nEOF\n"
                   f"rm -f /tmp/rx-ready /tmp/rx.json; nohup python3 /tmp/rx.py {self.ifname[0]} 10 "
                   ">/tmp/rx.json 2>/tmp/rx.err & "
                   "for i in $(seq 100); do [ -e /tmp/rx-ready ] && break; sleep 0.1; done")
        self.sh(1, "python3 -c \"import socket,time\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
                   f"for i in range(10): s.sendto(b'y'*300,('{data_addr(0)}',5320)); time.sleep(0.05)\"")
        r = json.loads(self.sh(0, "for i in $(seq 100); do [ -s /tmp/rx.json ] && break; sleep 0.2; done; "
                                  "cat /tmp/rx.json /tmp/rx.err >&2; head -n1 /tmp/rx.json"))
        self.assertNotIn(None, r["stamps"], r)
        self.assertEqual(r["stamps"], sorted(r["stamps"]))
        for lag in r["lags_s"]:
            self.assertGreaterEqual(lag, 0)
            self.assertLess(lag, 1)

    def test_4_tx_hardware_stamps(self):
        r = self.py(0, TX, data_addr(1), 10)
        self.assertNotIn(None, r["stamps"], r)
        self.assertEqual(r["stamps"], sorted(r["stamps"]))
        for lag in r["lags_s"]:
            self.assertGreaterEqual(lag, 0)
            self.assertLess(lag, 1)

    def test_5_pause_and_fec_reports(self):
        pause = self.sh(0, f"ethtool -I -a {self.ifname[0]}")
        self.assertRegex(pause, r"Autonegotiate:\s+off")
        self.assertRegex(pause, r"RX:\s+off")
        self.assertRegex(pause, r"TX:\s+off")
        self.assertRegex(pause, r"(?i)tx_pause_frames:\s*0")
        fec = self.sh(0, f"ethtool -I --show-fec {self.ifname[0]}")
        self.assertRegex(fec, r"Active FEC encoding:\s+RS")
        self.assertRegex(fec, r"(?i)corrected[ _]blocks:\s*0")

    def mac_counters(self, node):
        """eth-mac, eth-ctrl, rmon and pause counters of node's NIC, flat."""
        std = json.loads(self.sh(node, f"ethtool --json -S {self.ifname[node]} --groups eth-mac eth-ctrl rmon"))[0]
        flat = {**std["eth-mac"], **std["eth-ctrl"]}
        for d in ("rx", "tx"):
            for b in std["rmon"][f"{d}-pktsNtoM"]:
                flat[f"{d}-{b['low']}-{b['high']}"] = b["val"]
        pause = json.loads(self.sh(node, f"ethtool -I --json -a {self.ifname[node]}"))[0]["statistics"]
        return {**flat, **pause}

    def test_5b_ieee_mac_counters_count_each_kind_of_frame(self):
        """node0 sends frames of each kind to node1: node0's TX counters and
        node1's RX counters move by their number (broadcast, multicast, MAC
        control, PAUSE, lengths on the wire with FCS and padding); the data
        link's own traffic (IPv6 neighbour discovery) may add a few."""
        peer = self.sh(1, f"cat /sys/class/net/{self.ifname[1]}/address").strip()
        tx0, rx0 = self.mac_counters(0), self.mac_counters(1)
        n = self.py(0, MAC_FRAMES, peer)
        self.sh(0, "sleep 1")
        tx1, rx1 = self.mac_counters(0), self.mac_counters(1)
        tx = {k: tx1[k] - tx0[k] for k in tx0}
        rx = {k: rx1[k] - rx0[k] for k in rx0}
        print(f"\nsent {n}\nTX {tx}\nRX {rx}", file=sys.stderr)
        total = sum(n.values())
        # Wire lengths: max(len, 60) + 4 (FCS).
        octets = 104 * n["bcast"] + 204 * n["mcast"] + 64 * (n["ctrl"] + n["pause"] + n["short"]) + 1004 * n["big"]
        slack = 10  # frames of the link's own traffic meanwhile
        for d, c, sent in (("Xmitted", tx, "Transmitted"), ("Received", rx, "Received")):
            self.assertEqual(c[f"MACControlFrames{sent}"], n["ctrl"] + n["pause"], c)
            self.assertGreaterEqual(c[f"BroadcastFrames{d}OK"], n["bcast"])
            self.assertLessEqual(c[f"BroadcastFrames{d}OK"], n["bcast"] + slack)
            # PAUSE and MAC control frames go to a multicast address too
            mcast = n["mcast"] + n["ctrl"] + n["pause"]
            self.assertGreaterEqual(c[f"MulticastFrames{d}OK"], mcast)
            self.assertLessEqual(c[f"MulticastFrames{d}OK"], mcast + slack)
            self.assertGreaterEqual(c[f"Frames{sent}OK"], total)
            self.assertLessEqual(c[f"Frames{sent}OK"], total + slack)
            self.assertGreaterEqual(c[f"Octets{sent}OK"], octets)
            self.assertLessEqual(c[f"Octets{sent}OK"], octets + slack * 1522)
        for d, c in (("tx", tx), ("rx", rx)):
            self.assertGreaterEqual(c[f"{d}-512-1023"], n["big"])
            self.assertLessEqual(c[f"{d}-512-1023"], n["big"] + slack)
            self.assertGreaterEqual(c[f"{d}-0-64"], n["ctrl"] + n["pause"] + n["short"])
        self.assertEqual(tx["tx_pause_frames"], n["pause"])
        self.assertEqual(rx["rx_pause_frames"], n["pause"])
        for err in ("FrameTooLongErrors", "InRangeLengthErrors", "OutOfRangeLengthField",
                    "FramesLostDueToIntMACRcvError"):
            self.assertEqual(rx[err], 0, err)
        self.assertEqual(tx["FramesLostDueToIntMACXmitError"], 0)

    def test_6_devlink_dev_info(self):
        res = self.sh(0, "command -v devlink && devlink -j dev info", check=False)
        if "pci/" not in res:
            self.skipTest(f"no devlink in this guest: {res.strip()[-200:]}")
        info = json.loads(res.strip().splitlines()[-1])["info"]
        dev = next(iter(info.values()))
        self.assertEqual(dev["driver"], "dmsnic")
        self.assertRegex(dev["serial_number"], r"^[0-9a-f]{16}$")
        major, minor = C.DMS_NIC_VERSION >> 16, C.DMS_NIC_VERSION & 0xffff
        self.assertEqual(dev["versions"]["running"]["fw"], f"{major}.{minor}")
        # The netdev's port: physical, one lane, so it cannot be split (what
        # drivers/net/hw/devlink_port_split.py checks of a one-lane port).
        ports = json.loads(self.sh(0, "devlink -j port show"))["port"]
        name, port = next((k, v) for k, v in ports.items() if v.get("netdev") == self.ifname[0])
        self.assertEqual((port["flavour"], port["lanes"], port["splittable"]), ("physical", 1, False))
        self.assertNotEqual(self.run_rc(0, f"devlink port split {name} count 2"), "0")

    def need_shaper(self, scope="queue"):
        caps = self.sh(0, f"python3 - {self.ifname[0]} caps {scope} <<'EOF'\n{SHAPER}\nEOF", check=False)
        if "support-bw-max" not in caps:
            self.skipTest(f"no net-shaper {scope} scope in this guest: {caps.strip()[-200:]}")

    def iperf_bps(self, port):
        """node0 -> node1 iperf3 for 4 s: the bits per second received."""
        self.sh(1, f"iperf3 -s -D -1 -p {port} >/dev/null 2>&1; sleep 0.5")
        res = json.loads(self.sh(0, f"iperf3 -c {data_addr(1)} -p {port} -t 4 -J", timeout=300))
        return res["end"]["sum_received"]["bits_per_second"]

    def test_7_queue_rate_limit_holds(self):
        self.need_shaper()
        self.sh(0, f"ethtool -L {self.ifname[0]} combined 1")
        rate = 20_000_000
        try:
            self.py(0, SHAPER, "set", 0, rate)
            got = self.iperf_bps(5420)
        finally:
            self.py(0, SHAPER, "delete", 0)
            self.sh(0, f"ethtool -L {self.ifname[0]} combined 4", check=False)
        print(f"\niperf3 through a {rate / 1e6:.0f} Mbit/s queue: {got / 1e6:.1f} Mbit/s", file=sys.stderr)
        self.assertLess(got, rate * 1.1)
        self.assertGreater(got, rate * 0.5)

    def test_8_a_removed_queue_comes_back_unlimited(self):
        """Fewer channels drop the shapers of the queues that go, without a
        delete call: the driver must lift their limits in the device, or a
        queue that comes back stays limited while the core says it is not."""
        self.need_shaper()
        dev, rate = self.ifname[0], 100_000
        self.py(0, SHAPER, "set", 1, rate)
        self.sh(0, f"ethtool -L {dev} combined 1; ethtool -L {dev} combined 4")
        sent = f"ethtool -S {dev} | awk '$1 == \"tx1_packets:\" {{print $2}}'"
        try:
            self.sh(0, PIN_TX_QUEUE.format(dev=dev, queue=1))
            before = int(self.sh(0, sent))
            got = self.iperf_bps(5421)
            through_q1 = int(self.sh(0, sent)) - before
        finally:
            self.sh(0, f"tc qdisc del dev {dev} clsact", check=False)
        print(f"\niperf3 through queue 1 after its {rate / 1e3:.0f} kbit/s shaper went: {got / 1e6:.1f} Mbit/s, "
              f"{through_q1} frames", file=sys.stderr)
        self.assertGreater(through_q1, 1000)  # the traffic did take queue 1
        self.assertGreater(got, 100 * rate)

    def test_9_a_node_rate_holds_its_queues_together(self):
        """Queues 0 and 1 grouped under a net-shaper node of 20 Mbit/s (NIC
        v1.8 scheduler node): two iperf3 streams, one through each queue,
        share the node's rate; their sum stays under it."""
        self.need_shaper("node")
        dev, rate = self.ifname[0], 20_000_000
        ports = (5422, 5423)
        sent = f"ethtool -S {dev} | awk '$1 == \"tx0_packets:\" || $1 == \"tx1_packets:\" {{print $2}}'"
        try:
            node = self.py(0, SHAPER, "group", "0,1", rate)
            self.sh(0, f"tc qdisc add dev {dev} clsact")
            for queue, port in enumerate(ports):
                self.sh(0, PIN_PORT_TO_QUEUE.format(dev=dev, port=port, queue=queue))
                self.sh(1, f"iperf3 -s -D -1 -p {port} >/dev/null 2>&1")
            before = [int(x) for x in self.sh(0, sent).split()]
            self.sh(1, "sleep 0.5")
            client = f"iperf3 -c {data_addr(1)} -t 4 -J -p"
            out = self.sh(0, f"{client} {ports[0]} >/tmp/q0.json & {client} {ports[1]} >/tmp/q1.json; wait; "
                             "cat /tmp/q0.json; echo ===; cat /tmp/q1.json", timeout=300)
            through = [b - a for a, b in zip(before, (int(x) for x in self.sh(0, sent).split()))]
        finally:
            self.sh(0, f"tc qdisc del dev {dev} clsact", check=False)
            for queue in (0, 1):  # the node goes with its last queue
                self.sh(0, f"python3 - {dev} delete {queue} <<'EOF'\n{SHAPER}\nEOF", check=False)
        got = [json.loads(part)["end"]["sum_received"]["bits_per_second"] for part in out.split("===")]
        print(f"\niperf3 through queues 0 and 1 under a {rate / 1e6:.0f} Mbit/s node ({node}): "
              f"{got[0] / 1e6:.1f} + {got[1] / 1e6:.1f} Mbit/s, frames {through}", file=sys.stderr)
        self.assertEqual(node.get("bw-max"), rate)
        # Each stream took its queue and was served. How the two TCP
        # streams split the node is TCP's affair (one at 1.3 of 18.6 Mbit/s
        # was seen); the hardware's split of busy queues is the unit tests'.
        self.assertTrue(all(n > 500 for n in through), through)
        self.assertLess(sum(got), rate * 1.1)
        self.assertGreater(sum(got), rate * 0.5)


if __name__ == "__main__":
    main()
