"""NIC v1.6 timing hardware end to end on a two-node cluster (one boot):
the PTP hardware clock (ethtool -T, clock_gettime/settime/adjtime on the
PHC: steps and a frequency trim, checked against CLOCK_MONOTONIC), hardware
timestamps through SO_TIMESTAMPING (UDP node1 -> node0 stamped on RX, node0
-> node1 stamped on TX: present, increasing, close to the PHC), the MAC's
PAUSE and FEC reports (ethtool -a/--show-fec with statistics), and, where
the guest kernel has them, devlink dev info and a net-shaper queue rate
limit the device holds (iperf3 through one queue)."""

import json
import os
import sys
import unittest

from guestlib import DMSNIC_IF, TwoNodes, data_addr

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
def rate(seconds):
    p0, m0 = time.clock_gettime_ns(clk), time.monotonic_ns()
    time.sleep(seconds)
    p1, m1 = time.clock_gettime_ns(clk), time.monotonic_ns()
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
    print(json.dumps(ynl.do("cap-get", {"ifindex": ifindex, "scope": "queue"})))
elif sys.argv[2] == "set":
    ynl.do("set", {"ifindex": ifindex, "handle": {"scope": "queue", "id": 0},
                   "metric": "bps", "bw-max": int(sys.argv[3])})
    print(json.dumps(ynl.do("get", {"ifindex": ifindex, "handle": {"scope": "queue", "id": 0}})))
else:
    ynl.do("delete", {"ifindex": ifindex, "handle": {"scope": "queue", "id": 0}})
    print("{}")
""" % (YNL, SPECS)


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

    def test_6_devlink_dev_info(self):
        res = self.sh(0, "command -v devlink && devlink -j dev info", check=False)
        if "pci/" not in res:
            self.skipTest(f"no devlink in this guest: {res.strip()[-200:]}")
        info = json.loads(res.strip().splitlines()[-1])["info"]
        dev = next(iter(info.values()))
        self.assertEqual(dev["driver"], "dmsnic")
        self.assertRegex(dev["serial_number"], r"^[0-9a-f]{16}$")
        self.assertEqual(dev["versions"]["running"]["fw"], "1.6")
        # The netdev's port: physical, one lane, so it cannot be split (what
        # drivers/net/hw/devlink_port_split.py checks of a one-lane port).
        ports = json.loads(self.sh(0, "devlink -j port show"))["port"]
        name, port = next((k, v) for k, v in ports.items() if v.get("netdev") == self.ifname[0])
        self.assertEqual((port["flavour"], port["lanes"], port["splittable"]), ("physical", 1, False))
        self.assertNotEqual(self.run_rc(0, f"devlink port split {name} count 2"), "0")

    def test_7_queue_rate_limit_holds(self):
        caps = self.sh(0, f"python3 - {self.ifname[0]} caps <<'EOF'\n{SHAPER}\nEOF", check=False)
        if "support-bw-max" not in caps:
            self.skipTest(f"no net-shaper in this guest: {caps.strip()[-200:]}")
        self.sh(0, f"ethtool -L {self.ifname[0]} combined 1")
        rate = 20_000_000
        try:
            self.py(0, SHAPER, "set", rate)
            self.sh(1, "iperf3 -s -D -1 -p 5420 >/dev/null 2>&1; sleep 0.5")
            res = json.loads(self.sh(0, f"iperf3 -c {data_addr(1)} -p 5420 -t 4 -J", timeout=300))
        finally:
            self.py(0, SHAPER, "delete")
            self.sh(0, f"ethtool -L {self.ifname[0]} combined 4", check=False)
        got = res["end"]["sum_received"]["bits_per_second"]
        print(f"\niperf3 through a {rate / 1e6:.0f} Mbit/s queue: {got / 1e6:.1f} Mbit/s", file=sys.stderr)
        self.assertLess(got, rate * 1.1)
        self.assertGreater(got, rate * 0.5)


if __name__ == "__main__":
    unittest.main(verbosity=2)
