"""A cluster spanning two hosts, on this machine: the "hosts" are two network
namespaces joined by a veth pair, both made (and removed) by the test, so
all traffic stays inside them. Host A runs the devmemsim CLI and node ha;
host B runs a private sshd (its own config, host key and client key, in a
temporary directory: /etc/ssh and root's keys are never used) and node hb,
which the CLI starts through ssh (DEVMEMSIM_SSH="ssh -F CONFIG") and
reaches through ssh's socket forwarding. Their data network is a multicast
one (VDE's vxvde) on the veth. Checks: hb's QEMU runs in namespace B;
exec, stats and status reach it; the nodes ping each other; a devmem
transfer between their GPUs at MTU 9000 is verified and crossed the veth;
an unreachable host is one line; a killed forwarding ssh ends hb's QEMU
there. Then `demo --cluster` on such a cluster, through the CLI with
--pcap: verified, and hb's pcap, fetched from host B at stop, holds the
transfer's TCP stream. Needs root, ip, sshd and ssh-keygen (exit 77
otherwise). A few minutes under TCG."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from guestlib import complaints, tcp_payloads
from clilib import LAUNCHER
from devmemsim import clusterfile, demo
from devmemsim.cluster import Cluster
from devmemsim.transfer import transfer

NAME = "xhost"
NS = (f"dms-xh{os.getpid()}-a", f"dms-xh{os.getpid()}-b")
VETH = "xh0"  # in both namespaces
ADDR = ("10.199.0.1", "10.199.0.2")  # the hosts' addresses on the veth
GONE = "10.199.0.9"  # nobody on the veth has it
GROUP = "239.255.199.1"
NBYTES = 8 << 20
NEEDS = ("ip", "ssh", "ssh-keygen", "/usr/sbin/sshd")

CLUSTER = f"""
[nodes]
names = ["ha", "hb"]
memory = "512M"
smp = 1

[node.hb]
host = "{{host}}"

[[network]]
name = "span"
kind = "multicast"
group = "{GROUP}"
interface = "{VETH}"
"""

SSHD_CONFIG = """ListenAddress {addr}
HostKey {d}/host_key
AuthorizedKeysFile {d}/authorized_keys
PidFile {d}/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowTcpForwarding local
AllowStreamLocalForwarding yes
X11Forwarding no
"""

SSH_CONFIG = """Host host-b
  HostName {addr}
Host host-gone
  HostName {gone}
Host *
  User root
  IdentityFile {d}/id
  IdentitiesOnly yes
  UserKnownHostsFile {d}/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
"""


def sh(*argv, **kw) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kw).stdout


def make_hosts(d: Path) -> None:
    """The namespaces, the veth between them, and host B's sshd."""
    for ns in NS:
        sh("ip", "netns", "add", ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    sh("ip", "link", "add", VETH, "netns", NS[0], "type", "veth", "peer", "name", VETH, "netns", NS[1])
    for ns, addr in zip(NS, ADDR):
        sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", VETH)
        sh("ip", "-n", ns, "link", "set", VETH, "up")
    for key in ("host_key", "id"):
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"devmemsim-test-{key}", "-f", str(d / key))
    (d / "authorized_keys").write_text((d / "id.pub").read_text())
    (d / "known_hosts").write_text(f"{ADDR[1]} {(d / 'host_key.pub').read_text()}")
    (d / "sshd_config").write_text(SSHD_CONFIG.format(addr=ADDR[1], d=d))
    (d / "ssh_config").write_text(SSH_CONFIG.format(addr=ADDR[1], gone=GONE, d=d))
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation directory
    sh("ip", "netns", "exec", NS[1], "/usr/sbin/sshd", "-f", str(d / "sshd_config"), "-E", str(d / "sshd.log"))
    for _ in range(100):
        if (d / "sshd.pid").exists():
            return
        time.sleep(0.1)
    raise RuntimeError(f"sshd did not start: {(d / 'sshd.log').read_text()}")


def remove_hosts(d: Path) -> None:
    """Stop what runs in the namespaces (the test's own processes), then
    remove them (and so the veth)."""
    for ns in NS:
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), 9)
            except OSError:
                pass
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    shutil.rmtree(d, ignore_errors=True)


DIR = Path(tempfile.mkdtemp(prefix="dms-xh-"))


def setUpModule():
    (DIR / "cluster.toml").write_text(CLUSTER.format(host="host-b"))
    try:
        make_hosts(DIR)
    except BaseException:
        remove_hosts(DIR)
        raise


def tearDownModule():
    remove_hosts(DIR)


def cli(*args, timeout=600):
    """`devmemsim ARGS` on host A."""
    env = {**os.environ, "DEVMEMSIM_SSH": f"ssh -F {DIR / 'ssh_config'}"}
    return subprocess.run(["ip", "netns", "exec", NS[0], str(LAUNCHER), *args], env=env, text=True,
                          capture_output=True, timeout=timeout)


def qemu_in(ns: str) -> list:
    """The QEMU processes in namespace ns (pids)."""
    pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
    out = []
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/comm").read_text().startswith("qemu-system"):
                out.append(int(pid))
        except OSError:
            pass
    return out


class CrossHost(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        res = cli("boot", "--name", NAME, "--cluster", str(DIR / "cluster.toml"), "--pcap", str(DIR / "xpcap"),
                  timeout=1800)
        if res.returncode:
            cli("stop", "--name", NAME, timeout=300)
            raise RuntimeError(f"boot failed:\n{res.stdout}\n{res.stderr}")

    @classmethod
    def tearDownClass(cls):
        res = cli("stop", "--name", NAME, timeout=300)
        print(res.stdout, res.stderr, flush=True)

    cli = staticmethod(cli)

    def exec(self, node: str, script: str) -> str:
        res = self.cli("exec", "--name", NAME, node, "--", script, timeout=600)
        self.assertEqual(res.returncode, 0, f"{node}: {script}\n{res.stdout}\n{res.stderr}")
        return res.stdout

    def test_a_each_node_runs_on_its_host(self):
        cl = Cluster(NAME)
        there = json.loads((cl.dir / "hb.remote").read_text())
        self.assertEqual(there["host"], "host-b")
        for node, pid, ns in (("ha", cl.pid("ha"), NS[0]), ("hb", there["pid"], NS[1])):
            self.assertEqual(sh("ip", "netns", "identify", str(pid)).strip(), ns, node)
            self.assertEqual(self.exec(node, "hostname").strip(), node)

    def test_b_stats_and_status_reach_the_other_host(self):
        res = self.cli("stats", "--name", NAME, "hb", "--json")
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn("hb", json.loads(res.stdout)["nodes"])
        res = self.cli("status", "--json")
        mine = [c for c in json.loads(res.stdout) if c["cluster"] == NAME]
        self.assertEqual([(n["node"], n.get("host", "")) for n in mine[0]["nodes"]], [("ha", ""), ("hb", "host-b")])

    def test_c_nodes_reach_each_other(self):
        cl = Cluster(NAME)
        for node, peer in (("ha", "hb"), ("hb", "ha")):
            nic = cl.nic(peer)
            for addr in (nic["ipv4"].split("/")[0], nic["ipv6"].split("/")[0]):
                self.exec(node, f"for i in $(seq 30); do ping -c1 -W2 {addr} >/dev/null && exit 0; done; exit 1")

    def test_d_devmem_transfer_across_hosts_at_mtu_9000(self):
        cl = Cluster(NAME)
        demo.set_mtu(cl, ["ha", "hb"], 9000)
        before = self.veth_bytes()
        tx, rx = transfer(cl, "devmem", NBYTES, "ha", "hb")
        for run in (tx, rx):
            self.assertTrue(run["verified"], run)
            self.assertEqual(run["payload_bytes"], NBYTES, run)
        # The payload left host A over the veth (in UDP multicast).
        crossed = self.veth_bytes() - before
        self.assertGreater(crossed, NBYTES)
        print(f"devmem ha -> hb: {NBYTES} B at {tx['throughput_bps'] / 1e6:.0f} Mbit/s, verified; "
              f"{crossed} B left host A on the veth", flush=True)

    def test_e_unreachable_host_is_one_line(self):
        path = DIR / "gone.toml"
        path.write_text(CLUSTER.format(host="host-gone"))
        res = self.cli("boot", "--name", "xhost-gone", "--cluster", str(path), timeout=600)
        self.assertEqual(res.returncode, 1, res.stdout + res.stderr)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
        self.assertRegex(res.stderr, r"^devmemsim: node hb: host 'host-gone' is unreachable over ssh "
                                     rf"\(BatchMode\): ssh: connect to host {GONE} port 22: ")
        gone = Cluster("xhost-gone")
        self.assertFalse(gone.running())
        shutil.rmtree(gone.dir, ignore_errors=True)  # boot keeps a failed cluster's run dir

    def test_f_remote_pcap_stays_on_its_host_until_stop(self):
        """hb's QEMU writes its pcap in its run directory on host B, not
        in --pcap DIR (which needs not exist there); stop fetches it."""
        cl = Cluster(NAME)
        self.assertIn(f"file={cl.dir}/host-hb/pcap/hb-span.pcap", (cl.dir / "hb.cmdline").read_text())
        self.assertEqual(sorted(p.name for p in (DIR / "xpcap").iterdir()), ["ha-span.pcap"])

    def test_y_no_kernel_complaints(self):
        for node in ("ha", "hb"):
            self.assertEqual(complaints(self.exec(node, "dmesg")), [])

    def test_z_lost_forwarding_ssh_ends_remote_qemu(self):
        """kill -9 of hb's forwarding ssh (last: hb is gone after it)."""
        cl = Cluster(NAME)
        qemu = json.loads((cl.dir / "hb.remote").read_text())["pid"]
        self.assertEqual(qemu_in(NS[1]), [qemu])
        os.kill(cl.pid("hb"), signal.SIGKILL)
        started = time.monotonic()
        while qemu_in(NS[1]) and time.monotonic() - started < 15:
            time.sleep(0.2)
        self.assertEqual(qemu_in(NS[1]), [], "hb's QEMU runs on without its ssh")
        print(f"hb's QEMU ended {time.monotonic() - started:.1f} s after its ssh was killed", flush=True)
        res = self.cli("status", "--json")
        mine = [c for c in json.loads(res.stdout) if c["cluster"] == NAME]
        self.assertEqual([(n["node"], bool(n["pid"])) for n in mine[0]["nodes"]], [("ha", True), ("hb", False)])

    def veth_bytes(self) -> int:
        return int(sh("ip", "netns", "exec", NS[0], "cat", f"/sys/class/net/{VETH}/statistics/tx_bytes"))


class CrossHostDemo(unittest.TestCase):
    """`demo --cluster` (after CrossHost's cluster is stopped: the same group)."""

    def test_demo_with_a_remote_node(self):
        out, pcap = DIR / "demo.json", DIR / "pcap"
        res = cli("demo", "--cluster", str(DIR / "cluster.toml"), "--mode", "devmem", "--mib", str(NBYTES >> 20),
                  "--json", str(out), "--pcap", str(pcap), timeout=1800)
        self.assertEqual(res.returncode, 0, f"{res.stdout}\n{res.stderr}")
        runs = json.loads(out.read_text())["runs"]
        self.assertEqual([(r["direction"], r["node"], r["verified"]) for r in runs], [("tx", "ha", True), ("rx", "hb", True)])
        self.assertEqual(qemu_in(NS[1]), [])
        # hb's QEMU wrote its pcap on host B, in its run directory there
        # (removed at stop): it is here only if stop fetched it.
        self.assertEqual(sorted(p.name for p in pcap.iterdir()), ["ha-span.pcap", "hb-span.pcap"])
        ha, hb = (n["nics"][0]["ipv4"].split("/")[0] for n in clusterfile.load(str(DIR / "cluster.toml")).to_json()["nodes"])
        streams = tcp_payloads(pcap / "hb-span.pcap")
        to_hb = [v for k, v in streams.items() if k[0] == ha and k[2:] == (hb, 5201) and v >= NBYTES]
        self.assertEqual(len(to_hb), 1, streams)
        print(f"demo ha -> hb: {runs[0]['throughput_bps'] / 1e6:.0f} Mbit/s, verified; hb's pcap fetched from host B, "
              f"{(pcap / 'hb-span.pcap').stat().st_size} B, the transfer's stream {to_hb[0]} B of TCP payload", flush=True)


def main():
    missing = [n for n in NEEDS if not shutil.which(n)]
    if missing or os.geteuid() != 0:
        shutil.rmtree(DIR)
        print(f"SKIP: needs root and {', '.join(missing) or 'network namespaces'} (Debian: iproute2, openssh-server)")
        sys.exit(77)
    unittest.main(argv=sys.argv, verbosity=2)


if __name__ == "__main__":
    main()
