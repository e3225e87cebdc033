"""What the guest tests share: the devmemsim CLI (clilib.cli) and a booted
cluster's nodes, driven through it (boot, exec, stop), and the cluster's
address plan (data_addr(node): node N's address on the data link)."""

import contextlib
import io
import json
import os
import re
import struct
import subprocess
import sys
import time
import unittest
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from clilib import cli  # noqa: E402
from devmemsim.addressing import DATA, data_addr, data_addr6  # noqa: E402
from devmemsim import console  # noqa: E402
from devmemsim.agent import TIMED_OUT  # noqa: E402
from devmemsim.nodeargs import command  # noqa: E402
from devmemsim.cluster import Cluster  # noqa: E402
from devmemsim.errors import Failure, GuestDied, UsageError  # noqa: E402


# The debug tier (suite guest-debug, tests/guest/test_debug_kernel.py) runs a
# test file again under the debug kernel so that KASAN, lockdep and kmemleak
# watch the drivers' paths. Under TCG that kernel is about four times slower,
# so a case that takes no driver path the file's other cases do not already
# take there (a throughput figure, a second size of the same transfer) is
# marked default_kernel_only(why) and runs in the default-kernel suite only.
# DEVMEMSIM_ALL_CASES=1 runs every case under either kernel.
DEBUG_KERNEL = os.environ.get("DEVMEMSIM_KERNEL") == "debug"
ALL_CASES = os.environ.get("DEVMEMSIM_ALL_CASES") == "1"


def default_kernel_only(why):
    """Skip the decorated case under the debug kernel, saying why."""
    return unittest.skipIf(DEBUG_KERNEL and not ALL_CASES, f"default kernel only: {why}")


def scaled(n):
    """n, a transfer's bytes or a loop's rounds that only set how long a
    case runs: a quarter (at least 1) under the debug kernel, the same
    driver paths in a quarter of the time, unless DEVMEMSIM_ALL_CASES=1."""
    return max(1, n // 4) if DEBUG_KERNEL and not ALL_CASES else n


class TimedResult(unittest.TextTestResult):
    """unittest's verbose result plus each case's wall time, so that the
    suite's log shows where its minutes go."""

    def startTest(self, test):
        self.started = time.monotonic()
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        self.stream.writeln(f"    ({time.monotonic() - self.started:.1f} s)")
        self.stream.flush()


def main():
    """unittest.main for a guest test file: verbose, with case times."""
    unittest.main(verbosity=2, testRunner=unittest.TextTestRunner(resultclass=TimedResult, verbosity=2))


def boot(name, *args):
    """Boot cluster `name` (`devmemsim boot --name NAME ARGS`) or raise."""
    res = cli("boot", "--name", name, *args, timeout=1800)
    if res.returncode != 0:
        raise RuntimeError(f"boot failed:\n{res.stdout}\n{res.stderr}")


def stop(name):
    cli("stop", "--name", name, timeout=120)


def run(name, node, script, timeout=600):
    """Run a shell script on node N of cluster `name`; the finished process.
    A node that died under it raises AssertionError (check_alive()); one
    that outlives `timeout` raises subprocess.TimeoutExpired."""
    return check_alive(exec_in_process(name, f"node{node}", script, timeout))


def exec_in_process(name, node, script, timeout):
    """`devmemsim exec --name NAME NODE -- SCRIPT` by the CLI's own code,
    in this process: the tests run thousands of commands, and starting the
    CLI for each cost ~0.3 s of host CPU, a third of guest-nic's time (the
    CLI's exec itself is tested by guest-smoke). The finished process as
    subprocess.run(text=True, capture_output=True) gives it."""
    out, err, said = io.BytesIO(), io.BytesIO(), io.StringIO()
    with contextlib.redirect_stderr(said):
        try:
            status = Cluster(name).exec(node, command([script]), out, err, timeout=timeout)
        except (UsageError, Failure) as e:
            print(f"devmemsim: {e}", file=sys.stderr)
            status = e.status
    args = ["devmemsim", "exec", "--name", name, node, "--", script]
    stderr = err.getvalue().decode(errors="replace") + said.getvalue()
    if status == TIMED_OUT and "dms-agent: timeout after" in stderr:
        raise subprocess.TimeoutExpired(args, timeout, out.getvalue(), err.getvalue())
    return subprocess.CompletedProcess(args, status, out.getvalue().decode(errors="replace"), stderr)


def check_alive(res):
    """res, a finished devmemsim command; AssertionError with the CLI's
    report if a node died under it (errors.GuestDied: exit 3, "NODE died:
    ..."), so that no test takes that for its command's own status."""
    if res.returncode == GuestDied.status and re.search(r"^devmemsim: \S+ died: ", res.stderr, re.M):
        raise AssertionError(f"a node died:\n{res.stderr}")
    return res


def sh(name, node, script, timeout=600, check=True):
    """Run a shell script on node N; its stdout, or AssertionError if it
    failed and check is set."""
    res = run(name, node, script, timeout)
    if check and res.returncode != 0:
        raise AssertionError(f"node{node}: exit {res.returncode}\n$ {script}\n{res.stdout}\n{res.stderr}")
    return res.stdout


def wait_for_peer(name, node, addr):
    """Wait (up to a minute) until node N of cluster `name` gets an answer
    from addr over the data link, or raise AssertionError."""
    sh(name, node, f"for i in $(seq 60); do ping -c1 -W1 {addr} >/dev/null && exit 0; sleep 1; done; exit 1",
       timeout=300)


# The complaint patterns are devmemsim's (`devmemsim kselftest` scans
# consoles with them too); the tests know them by these names.
KERNEL_COMPLAINTS = console.KERNEL_COMPLAINTS
KMEMLEAK_HEADLINES = console.KMEMLEAK_HEADLINES
is_complaint = console.is_complaint
complaints = console.complaints
console_complaints = console.console_complaints


def kernel_complaints(name, node):
    """The complaints in node N's dmesg."""
    return complaints(sh(name, node, "dmesg"))


# The dmsnic data interface's name, as a shell word (a guest has one dmsnic).
DMSNIC_IF = "$(ls /sys/bus/pci/drivers/dmsnic/*/net/ | head -n1)"
# Brings the dmsnic interface up with the address $CIDR, and $CIDR6 if
# set (set before the script; the guest init gives them, this adds them if
# missing), stops iperf3s an earlier test left, and prints IF=NAME.
NIC_UP = rf"""
set -e
IF={DMSNIC_IF}
[ -n "$IF" ]
ip link set "$IF" up
ip -4 addr show dev "$IF" | grep -q "$CIDR" ||
	ip addr add "$CIDR" dev "$IF"
[ -z "$CIDR6" ] || ip -6 addr show dev "$IF" | grep -q "$CIDR6" ||
	ip addr add "$CIDR6" dev "$IF" nodad
pkill iperf3 || true
echo "IF=$IF"
"""


def tcp_payloads(path: Path) -> Counter:
    """TCP payload bytes per (src, sport, dst, dport) of the IPv4 frames in
    a pcap file (libpcap format, Ethernet link type)."""
    data = path.read_bytes()
    magic, *_, linktype = struct.unpack_from("<IHHiIII", data)
    if magic != 0xA1B2C3D4 or linktype != 1:
        raise AssertionError(f"{path}: not a little-endian Ethernet pcap ({magic:#x}, link type {linktype})")
    streams = Counter()
    off = 24
    while off + 16 <= len(data):
        _, _, caplen, _ = struct.unpack_from("<IIII", data, off)
        frame = data[off + 16:off + 16 + caplen]
        off += 16 + caplen
        if len(frame) < 54 or frame[12:14] != b"\x08\x00" or frame[23] != 6:  # IPv4, TCP
            continue
        ihl = (frame[14] & 0x0F) * 4
        total = struct.unpack_from("!H", frame, 16)[0]
        src, dst = (".".join(map(str, frame[i:i + 4])) for i in (26, 30))
        sport, dport = struct.unpack_from("!HH", frame, 14 + ihl)
        tcp_len = (frame[14 + ihl + 12] >> 4) * 4
        streams[src, sport, dst, dport] += total - ihl - tcp_len
    return streams


# The debug tier runs several test files on one booted two-node cluster
# (test_debug_kernel.py --shared), because a debug-kernel boot costs over a
# minute under TCG: DEVMEMSIM_SHARED_CLUSTER names that cluster. A TwoNodes
# class then neither boots nor stops it; it starts from data NICs probed
# afresh (FRESH_NIC: dmsnic reloaded, the addresses the init gives), so
# that no setting an earlier file left (MTU, rings, channels, rules, XDP)
# reaches it.
SHARED_CLUSTER = os.environ.get("DEVMEMSIM_SHARED_CLUSTER")


def cluster_name(prefix):
    """A test file's cluster name: the shared cluster's, else its own."""
    return SHARED_CLUSTER or f"{prefix}-{os.getpid()}"


# Reloads dmsnic as the guest init loads it (its load-order line, with the
# parameters) and keeps the new interface's IPv6 address over down/up as
# the init does; NIC_UP then gives it its addresses. Test tools an earlier
# file left running are stopped first.
FRESH_NIC = rf"""
set -e
for tool in iperf3 socat dms-devmem ncdevmem; do pkill -x "$tool" || true; done
rmmod dmsnic
grep '^dmsnic\.ko' /opt/devmemsim/modules/load-order | {{
	read -r mod params
	# shellcheck disable=SC2086
	insmod "/opt/devmemsim/modules/$mod" $params
}}
IF={DMSNIC_IF}
echo 1 >"/proc/sys/net/ipv6/conf/$IF/keep_addr_on_down"
"""


def fresh_nic(name, node):
    """FRESH_NIC and NIC_UP on node N of the shared cluster `name`."""
    sh(name, node, f"CIDR={DATA.cidr(node)}\nCIDR6={DATA.cidr6(node)}\n{FRESH_NIC}{NIC_UP}", timeout=300)


class TwoNodes(unittest.TestCase):
    """Tests on a two-node cluster of their own: booted before the first
    test, with node0 reaching node1 (data_addr(1)) over the data link, and
    stopped after the last (on the shared cluster, SHARED_CLUSTER: its data
    NICs probed afresh instead). A subclass sets NAME (cluster_name()) and
    may check its nodes in setup_nodes() (run before the peer check; a
    failure stops the cluster). BOOT_ARGS go to `boot` (e.g. "--set",
    "KEY=VALUE"); a class with them cannot run on the shared cluster. With
    CHECK_DMESG the class fails if a node's dmesg has a kernel complaint
    when the tests are done."""

    NAME = None
    BOOT_ARGS = ()
    CHECK_DMESG = False

    @classmethod
    def setUpClass(cls):
        if SHARED_CLUSTER:
            if cls.BOOT_ARGS:
                raise unittest.SkipTest(f"{cls.__name__} needs a cluster booted with {cls.BOOT_ARGS}")
            # Both nodes at once: a reload takes ~25 s of a debug guest.
            with ThreadPoolExecutor(2) as pool:
                list(pool.map(lambda n: fresh_nic(cls.NAME, n), (0, 1)))
        else:
            boot(cls.NAME, "--nodes", "2", *cls.BOOT_ARGS)
        try:
            cls.setup_nodes()
            wait_for_peer(cls.NAME, 0, data_addr(1))
        except Exception:
            cls.stop_own_cluster()
            raise

    @classmethod
    def stop_own_cluster(cls):
        if not SHARED_CLUSTER:
            stop(cls.NAME)

    @classmethod
    def setup_nodes(cls):
        pass

    @classmethod
    def tearDownClass(cls):
        found = {n: kernel_complaints(cls.NAME, n) for n in (0, 1)} if cls.CHECK_DMESG else {}
        cls.stop_own_cluster()
        assert not any(found.values()), found

    @classmethod
    def sh(cls, node, script, timeout=600, check=True):
        return sh(cls.NAME, node, script, timeout, check)

    @classmethod
    def tcp_transfer(cls, nbytes, port, sender=0, ipv6=False):
        """nbytes of random data from node `sender` to the other node over
        TCP (socat, to its data-link address): the sha256 of what was sent,
        the sha256 of what arrived and how many bytes did."""
        receiver = 1 - sender
        if ipv6:
            to, listen = f"TCP6:[{data_addr6(receiver)}]", "TCP6-LISTEN"
        else:
            to, listen = f"TCP4:{data_addr(receiver)}", "TCP4-LISTEN"
        cls.sh(receiver, f"rm -f /tmp/rx; nohup socat -u {listen}:{port},reuseaddr OPEN:/tmp/rx,creat,trunc "
                         ">/dev/null 2>&1 & sleep 0.5")
        sent = cls.sh(sender, f"head -c {nbytes} /dev/urandom >/tmp/tx && socat -u OPEN:/tmp/tx {to}:{port} && "
                              "sha256sum /tmp/tx", timeout=600)
        got = cls.sh(receiver, "while pgrep -x socat >/dev/null; do sleep 0.1; done; "
                               "sha256sum /tmp/rx; stat -c %s /tmp/rx", timeout=300).split()
        return sent.split()[0], got[0], int(got[2])

    def verified_tcp(self, nbytes, port, sender=0, ipv6=False):
        """tcp_transfer(), and every byte arrived unchanged."""
        sent, got, size = self.tcp_transfer(nbytes, port, sender, ipv6)
        self.assertEqual((got, size), (sent, nbytes), "bytes changed or went missing")

    @classmethod
    def nic_up(cls, node, ipv6=False):
        """NIC_UP on node N with its data-link address (and IPv6 address):
        the dmsnic interface's name."""
        cidr6 = f"CIDR6={DATA.cidr6(node)}\n" if ipv6 else ""
        out = cls.sh(node, f"CIDR={DATA.cidr(node)}\n{cidr6}{NIC_UP}")
        return re.search(r"^IF=(\S+)$", out, re.M).group(1)


# dms-devmem, the guest's devmem TCP tool (guest/tools), and the data-link
# addresses of the transfers the fault tests run: node1 receives.
DMS_DEVMEM = "/opt/devmemsim/bin/dms-devmem"
SERVER, CLIENT = data_addr(1), data_addr(0)


class FaultNodes(TwoNodes):
    """TwoNodes whose tests set the devices' fault injection at run time
    (the devmemsim-node object's `faults` property over QMP) and answer
    for what the kernels say while they run (new_dmesg())."""

    @classmethod
    def setup_nodes(cls):
        cls.cluster = Cluster(cls.NAME)

    def setUp(self):
        self.dmesg_lines = [int(self.sh(n, "dmesg | wc -l")) for n in (0, 1)]

    def new_dmesg(self, node):
        """What node N's kernel said since the test began."""
        return self.sh(node, f"dmesg | tail -n +{self.dmesg_lines[node] + 1}")

    def sh(self, node, script, timeout=600):
        res = run(self.NAME, node, script, timeout)
        self.assertEqual(res.returncode, 0, f"node{node}: {script}\n{res.stdout}\n{res.stderr}")
        return res.stdout

    def set_faults(self, node, settings):
        self.cluster.qmp(f"node{node}", "qom-set", path="/objects/dms", property="faults",
                         value=settings)

    def faults(self, node):
        """The model's fault counters of node N."""
        return self.cluster.stats(f"node{node}")["faults"]

    def ethtool(self, node, stat):
        """The sum of the ethtool -S counters of eth1 whose name holds stat."""
        out = self.sh(node, f"ethtool -S eth1 | awk '/{stat}/ {{s += $2}} END {{print s + 0}}'")
        return int(out.strip())

    def tool(self, node, args, timeout=600):
        """dms-devmem ARGS on node N: its exit status and its JSON result."""
        res = run(self.NAME, node, f"{DMS_DEVMEM} {args}", timeout)
        lines = res.stdout.strip().splitlines()
        self.assertTrue(lines, f"node{node}: dms-devmem {args}: no output\n{res.stderr}")
        return res.returncode, json.loads(lines[-1])

    def transfer(self, port, nbytes, mode="devmem", timeout=600):
        """A dms-devmem transfer node0 -> node1; both results, checked:
        every byte arrived and the CRC32C of the source (node0's GPU) and of
        what arrived (node1's GPU) agree."""
        self.sh(1, f"rm -f /tmp/r{port} /tmp/s{port}; nohup {DMS_DEVMEM} server --addr {SERVER} "
                   f"--peer {CLIENT} --port {port} --mode {mode} --ready-file /tmp/r{port} "
                   f"--result /tmp/s{port} >/dev/null 2>&1 & "
                   f"for i in $(seq 300); do [ -e /tmp/r{port} ] && break; sleep 0.1; done")
        rc, client = self.tool(0, f"client --addr {SERVER} --port {port} --mode {mode} "
                                  f"--bytes {nbytes}", timeout)
        server = json.loads(self.sh(1, f"for i in $(seq 600); do [ -e /tmp/s{port} ] && break; "
                                       f"sleep 0.1; done; cat /tmp/s{port}"))
        self.assertEqual(rc, 0, client)
        self.assertNotIn("error", server)
        self.assertEqual(server["bytes"], nbytes, server)
        self.assertEqual(server["crc32c"], client["crc32c"], (server, client))
        return client, server
