"""`devmemsim kselftest`: the kernel's netdev driver selftests
(tools/testing/selftests/drivers/net and drivers/net/hw) on a booted
cluster, node0 running them against its dmsnic and node1 as their ssh
remote, the way drivers/net/README.rst describes a hardware run. With a
cluster file (--cluster), the file's first node runs them against its NIC 0
and the first other node on that NIC's network is the remote (Roles).

Per file: the timeout of its directory's `settings` (kselftest's rule: 45 s
without one, 0 = none) and a host-side limit above it; cases are shown as
their KTAP lines arrive; both consoles are scanned for kernel complaints and
the taint mask compared; a node that died fails the file and the cluster is
booted again for the next one. Results go to the terminal (a table) and, on
request, to KTAP, JUnit XML and JSON (ktap.py)."""

import os
import re
import shlex
import signal
import socket
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from . import build, clusterfile, console, ktap
from .addressing import container_prefix6, data_link
from .agent import Agent
from .cluster import Cluster, Machine
from .errors import Failure, TreeBroken, UsageError, log
from .paths import ROOT

SELFTESTS = "tools/testing/selftests"
NET = "drivers/net"  # TEST paths are relative to SELFTESTS/NET
DEFAULT_DIRS = ("", "hw")  # whose Makefile's TEST_PROGS make the default set
# Files of those Makefiles the default set leaves out: they need hardware
# devmemsim does not model (each node has one NIC port, cabled to the other
# node's; no switch ASIC, e-switch or SR-IOV).
EXCLUDED = {
    "hw/devlink_rate_cross_esw.py": "needs two PFs of one chip in switchdev mode behind a bond (an e-switch)",
    "hw/devlink_rate_tc_bw.py": "needs SR-IOV VFs, their representors and devlink-rate TC shaping (an e-switch)",
    "hw/hw_stats_l3.sh": "needs a switch ASIC with router-interface L3 counters (mlxsw)",
    "hw/hw_stats_l3_gre.sh": "needs a switch ASIC that offloads GRE tunnels, with L3 counters",
    "hw/ethtool.sh": "needs two local ports cabled to each other (link mode autonegotiation)",
    "hw/ethtool_extended_state.sh": "needs two local ports cabled to each other and one without cable",
    "hw/ethtool_mm.sh": "needs two local ports cabled to each other with MAC Merge (802.3br)",
    "hw/loopback.sh": "needs two local ports cabled to each other",
    "hw/devlink_port_split.py": "needs devlink ports with lanes to split (a switch ASIC; TEST_PROGS_EXTENDED)",
}
# Files that need more vCPUs on the runner than the cluster has: it is
# booted again with them for these files (and back for the files after
# them); Session.plan_for() says which nodes get them.
# toeplitz.py's RPS cases steer packets to CPUs that no RX queue interrupt
# uses and skip without two such CPUs: dmsnic's 4 queue vectors take one
# CPU each (CPUs 0-3), so node0 needs 6 vCPUs to leave CPUs 4 and 5 free.
FILE_MACHINES = {
    "hw/toeplitz.py": Machine(smp=6),
}
DEFAULT_TIMEOUT = 45  # kselftest_default_timeout (kselftest/runner.sh)
NO_TIMEOUT_LIMIT = 1800  # host-side limit of a file whose settings say timeout=0
HOST_MARGIN = 60  # host-side limit above the guest's own timeout
CHECK_LIMIT = 30.0  # host-side limit of a node check (taint, peer)
CONSOLE_TAIL = 40  # lines of a dead node's console shown
NODE_CONFIG = ROOT / "configs" / "node" / "default.toml"
# The data interface: the one dmsnic drives with the MAC of the NIC the plan
# names (devmemsim-init gave it its addresses; a node may have several).
FIND_NETIF = ("for d in /sys/class/net/*; do drv=$(readlink $d/device/driver) || continue; "
              "[ \"${{drv##*/}}\" = dmsnic ] && [ \"$(cat $d/address)\" = {mac} ] && echo ${{d##*/}} && exit 0; "
              "done; exit 1")
# The remote's data interface gets a name of its own: the forwarding
# library's tests (ethtool_rmon.sh, ...) refuse a remote named like NETIF.
# Its addresses stay over down and up (devmemsim-init: keep_addr_on_down).
REMOTE_NETIF = "dms-remote"
RENAME_REMOTE = """\
d=$({find}) || exit 1
[ "$d" = {name} ] && exit 0
ip link set dev $d down && ip link set dev $d name {name} && ip link set dev {name} up
"""
# The remote keeps no TIME_WAIT sockets. devmem.py's RX cases bind the
# remote's source port to a port node0 picked (rand_port) and do not set
# SO_REUSEADDR; the remote closes first, so each case leaves that port in
# TIME_WAIT there for 60 s, and a later case that draws the same port again
# fails its bind ("Address already in use"): ~1 run in 100 (19 cases, 14,000
# odd ports). On a private emulated link no old duplicate can arrive, so
# TIME_WAIT guards nothing here.
REMOTE_NO_TIME_WAIT = "sysctl -qw net.ipv4.tcp_max_tw_buckets=0"
# The remote routes node0's container prefix (LOCAL_PREFIX_V6) to node0:
# drivers/net/README.rst wants the DUT reachable at those addresses from the
# endpoint (nk_netns.py pings a netkit container behind node0 from node1).
REMOTE_ROUTE = "ip -6 route replace {prefix} via {via} 2>&1"
# One wall clock for the cluster. A node's CLOCK_REALTIME starts from the
# RTC's whole seconds at boot, so two nodes differ by up to a second (their
# TSCs then agree within a ppm). Tests that time packets across the link need
# them to agree: so_txtime.py's sender and its remote receiver both sleep
# until one wall-clock instant taken on node0, and the receiver checks each
# arrival against it within 8 ms. After boot every other node's clock is set
# to node0's over the data link: node0 sends CLOCK_ROUNDS numbered UDP
# requests, the node answers each with its number and its clock, and the
# answer with the shortest round trip gives the offset (wrong by at most half
# that round trip; a late answer to an earlier request is not used).
CLOCK_PORT = 47999
CLOCK_ROUNDS = 30
CLOCK_SERVER = """\
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("{addr}", {port}))
s.settimeout(30)
while True:
    data, peer = s.recvfrom(16)
    if data == b"done":
        break
    s.sendto(data + b" %d" % time.clock_gettime_ns(time.CLOCK_REALTIME), peer)
"""
CLOCK_CLIENT = """\
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(0.5)
best = None
for n in range({rounds}):
    t0 = time.clock_gettime_ns(time.CLOCK_REALTIME)
    try:
        s.sendto(b"%d" % n, ("{addr}", {port}))
        seq, theirs = s.recvfrom(64)[0].split()
        while int(seq) != n:  # a late answer to an earlier request
            seq, theirs = s.recvfrom(64)[0].split()
    except (socket.timeout, ConnectionRefusedError):
        time.sleep(0.1)  # the server is not listening yet
        continue
    t2 = time.clock_gettime_ns(time.CLOCK_REALTIME)
    theirs = int(theirs)
    if best is None or t2 - t0 < best[0]:
        best = (t2 - t0, theirs - (t0 + t2) // 2)
if {last}:
    s.sendto(b"done", ("{addr}", {port}))
print(*(best or ("none", "none")))
"""
CLOCK_STEP = ("python3 -c 'import time; "
              "time.clock_settime_ns(time.CLOCK_REALTIME, time.clock_gettime_ns(time.CLOCK_REALTIME) - {offset})'")
MARK = "devmemsim-mark"
AGENT_NOISE = "dms-agent: host "  # the agent's console lines as hosts come and go  # node0's script reports uptime and taint on stderr with it


@dataclass
class TestFile:
    rel: str  # under SELFTESTS/NET, e.g. hw/devmem.py
    timeout: int  # seconds, 0 = none

    @property
    def collection(self) -> str:
        return str(Path(NET) / Path(self.rel).parent).rstrip("/.")

    @property
    def name(self) -> str:
        return Path(self.rel).name

    @property
    def test(self) -> str:
        return f"{self.collection}:{self.name}"

    @property
    def host_limit(self) -> float:
        return self.timeout + HOST_MARGIN if self.timeout else NO_TIMEOUT_LIMIT


# ---- which files ----------------------------------------------------------

def makefile_list(makefile: Path, var: str) -> list:
    """The words a Makefile assigns to var (:=, = or +=), without make
    expansions: TEST_PROGS of a selftest directory."""
    try:
        text = makefile.read_text(errors="replace").replace("\\\n", " ")
    except OSError:
        return []
    words = []
    for line in text.splitlines():
        m = re.match(rf"^{var}\s*(?::=|\+=|=)(.*)$", line)
        if m:
            words += [w for w in m.group(1).split("#", 1)[0].split() if "$" not in w]
    return words


def test_progs(d: Path) -> list:
    mk = d / "Makefile"
    return makefile_list(mk, "TEST_PROGS") + makefile_list(mk, "TEST_PROGS_EXTENDED")


def settings_timeout(d: Path) -> int:
    """The timeout a directory's `settings` file gives its tests."""
    try:
        for line in (d / "settings").read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "timeout" and value.strip().isdigit():
                return int(value)
    except OSError:
        pass
    return DEFAULT_TIMEOUT


def default_set(base: Path) -> list:
    rels = []
    for d in DEFAULT_DIRS:
        rels += [str(Path(d) / f) for f in makefile_list(base / d / "Makefile", "TEST_PROGS")]
    return [r for r in rels if r not in EXCLUDED]


def check_tree(tree: Path) -> Path:
    """tree's drivers/net selftest directory, or UsageError."""
    base = tree / SELFTESTS / NET
    if not (base / "Makefile").is_file():
        raise UsageError(f"{tree}: has no {SELFTESTS}/{NET}/Makefile")
    return base


def resolve(tree: Path, names: list) -> list:
    """The TestFiles TEST arguments name (paths under drivers/net, a leading
    tools/testing/selftests/drivers/net/ allowed), or the default set."""
    base = check_tree(tree)
    rels = []
    for name in names:
        rel = name.removeprefix(f"{SELFTESTS}/").removeprefix(f"{NET}/")
        path = (base / rel).resolve()
        if not path.is_relative_to(base.resolve()) or not path.is_file():
            raise UsageError(f"{name}: no such test in {base}")
        rel = str(path.relative_to(base.resolve()))
        if path.name not in test_progs(path.parent):
            raise UsageError(f"{name}: not a test program of {NET}/{Path(rel).parent}/Makefile".replace("/./", "/"))
        rels.append(rel)
    rels = rels or default_set(base)
    return [TestFile(rel, settings_timeout((base / rel).parent)) for rel in dict.fromkeys(rels)]


def excluded_table() -> str:
    return "\n".join(f"  {rel:32} {why}" for rel, why in EXCLUDED.items())


# ---- running commands with a host-side limit ------------------------------

class Lines:
    """A stream the agent writes bytes to, handed on a line at a time."""

    def __init__(self, on_line):
        self.on_line = on_line
        self.buf = b""

    def write(self, data: bytes):
        self.buf += data
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            self.on_line(line.decode(errors="replace"))

    def flush(self):
        pass

    def close(self):
        if self.buf:
            self.on_line(self.buf.decode(errors="replace"))
        self.buf = b""


def exec_limited(agent: Agent, argv: list, out, err, limit: float):
    """Run argv through agent, giving up after limit seconds: (status, why);
    status None when the node did not answer (why says how)."""
    result = {}

    def target():
        try:
            result["status"] = agent.exec(argv, out=out, err=err)
        except (Failure, OSError) as e:
            result["why"] = str(e)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(limit)
    if t.is_alive():
        try:  # wakes the reader up: it sees the connection end
            agent.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        t.join(10.0)
        return None, f"no answer from the node for {limit:.0f} s"
    return result.get("status"), result.get("why", "")


# ---- the cluster the files run on ----------------------------------------

# node0 reaches node1 over the data link (IPv4, IPv6) and by ssh, which also
# leaves the master connection the tests' ssh commands reuse. The payload's
# ssh config (build.SSH_CLIENT_CONFIG) names data link 0's addresses: a
# runner whose NIC is on another network adds that network's to its Host line.
PEER_CHECK = """\
ok() {{ for i in $(seq 60); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done; echo "failed: $*"; exit 1; }}
grep -qF ' {hosts}' /root/.ssh/config 2>/dev/null || sed -i '1s|$| {hosts}|' /root/.ssh/config
ok ping -c1 -W1 {v4}
ok ping -6 -c1 -W1 {v6}
ok ssh {v4} true
echo "netif=$({find})"
[ -x {root}/run_kselftest.sh ] && grep -q . {root}/kselftest-list.txt && echo runner=1
echo "taint=$(cat /proc/sys/kernel/tainted)"
"""


@dataclass(frozen=True)
class Roles:
    """Who runs the files and who is their ssh remote: the plan's first node
    (the runner), against its NIC 0 (local), and the first other node on
    that NIC's network (the remote), by its NIC there (peer). members: every
    node's NIC on that network, by node name."""

    runner: clusterfile.Node
    local: object  # addressing.NicAddress
    remote: clusterfile.Node
    peer: object  # addressing.NicAddress
    members: dict

    def env(self, netif: str) -> dict:
        """The selftests' environment (drivers/net/README.rst)."""
        return {"NETIF": netif, "LOCAL_V4": self.local.addr, "REMOTE_V4": self.peer.addr,
                "LOCAL_V6": self.local.addr6, "REMOTE_V6": self.peer.addr6,
                "LOCAL_PREFIX_V6": container_prefix6(self.runner.index),
                "REMOTE_TYPE": "ssh", "REMOTE_ARGS": self.peer.addr}


def roles(plan: clusterfile.Plan) -> Roles:
    """The runner and the remote of a plan; UsageError (one line, naming
    the file) when the first node's NIC 0 shares no network with another."""
    runner = plan.nodes[0]
    nic = runner.nics[0] if runner.nics else None
    net = plan.networks.get(nic.network) if nic and nic.network else None
    members = {node: plan.node(node).nics[pair].address for node, pair in net.members} if net else {}
    others = [node for node in members if node != runner.name]
    if not others:
        where = f"on network {net.name!r} with no other node" if net else "on no network"
        raise UsageError(f"{plan.source}: node.{runner.name}.networks: the first node runs the selftests on its "
                         f"NIC 0, which is {where} (their ssh remote must be on that NIC's network)")
    remote = plan.node(others[0])
    return Roles(runner, nic.address, remote, members[remote.name], members)


def default_cluster(plan: clusterfile.Plan) -> bool:
    """Whether plan is `--nodes N`'s (clusterfile.default_plan), not a file's."""
    return plan.source == f"--nodes {len(plan.nodes)}"


def cluster_plan(path: str, nodes: int) -> clusterfile.Plan:
    """The cluster the files run on: a cluster file's, its runner and
    remote checked before anything is built, or the default of `nodes`."""
    if not path:
        return clusterfile.default_plan(nodes, str(NODE_CONFIG))
    if not os.path.isfile(path):
        raise UsageError(f"--cluster {path}: no such file")
    plan = clusterfile.load(path)
    roles(plan)
    return plan


def add_cluster_option(p) -> None:
    p.add_argument("--cluster", metavar="FILE",
                   help="boot this cluster file's nodes instead (configs/cluster/*.toml): the first node runs the "
                        "tests against its NIC 0, the first other node on that NIC's network is their remote")


class Session:
    """A cluster booted for the run, and booted again after a node died.
    keep: where the consoles of every boot are appended (path prefix) or None."""

    def __init__(self, art, plan: clusterfile.Plan, guest_root: str, keep):
        self.art, self.plan, self.guest_root, self.keep = art, plan, guest_root, keep
        self.roles = roles(plan)
        self.boots = 0
        self.cl = None
        self.machine = Machine()  # accelerator and the like; the nodes' vCPUs and memory are the plan's
        self.booted = plan  # the plan of the cluster booted (or to boot): plan_for()
        self.dead = False
        self.runner = False  # run_kselftest.sh is on the payload
        self.current = None  # the TestFile running
        self.env, self.marks, self.taint = {}, {}, {}
        for node in self.node_names() if keep else ():
            Path(f"{keep}.{node}.console").unlink(missing_ok=True)

    def node_names(self) -> list:
        """The runner first."""
        return [n.name for n in self.plan.nodes]

    def plan_for(self, machine: Machine = None) -> clusterfile.Plan:
        """The plan to boot for a file that needs machine's vCPUs
        (FILE_MACHINES; None: nothing more). The default cluster's nodes all
        get them, as today's `--nodes N` nodes are alike; of a cluster
        file's, the runner alone, the others keep what the file says."""
        if not machine:
            return self.plan
        raised = self.plan.nodes if default_cluster(self.plan) else self.plan.nodes[:1]
        return replace(self.plan, nodes=tuple(replace(n, smp=max(n.smp, machine.smp)) if n in raised else n
                                              for n in self.plan.nodes))

    def console(self, node: str) -> Path:
        return self.cl.dir / f"{node}.console"

    def boot(self, plan: clusterfile.Plan = None) -> list:
        """Boot (again, plan_for() a file if given) and set the runner up;
        the problems the boot logged (kernel complaints). Raises Failure if
        it does not come up."""
        self.close()
        self.booted = plan or self.booted
        self.cl = Cluster(f"kselftest-{os.getpid()}-{self.boots}")
        self.boots += 1
        self.dead = True  # until it is up: close() keeps a failed boot's run directory
        self.cl.boot_plan(self.art, self.booted, self.machine)
        self.marks = {n: 0 for n in self.node_names()}
        r = self.roles
        runner, remote, prefix = r.runner.name, r.remote.name, container_prefix6(r.runner.index)
        self.sh(remote, RENAME_REMOTE.format(find=FIND_NETIF.format(mac=r.peer.mac), name=REMOTE_NETIF))
        self.sh(remote, REMOTE_NO_TIME_WAIT)
        said = self.sh(remote, REMOTE_ROUTE.format(prefix=prefix, via=r.local.addr6), check=False)
        if said:
            log(f"{remote}: no route to {runner}'s containers ({prefix}): {said}")
        facts = dict(line.split("=", 1) for line in self.sh(runner, PEER_CHECK.format(
            v4=r.peer.addr, v6=r.peer.addr6, find=FIND_NETIF.format(mac=r.local.mac), root=self.guest_root,
            hosts=data_link(r.local.network).host_glob()), limit=120).split() if "=" in line)
        self.runner = facts.get("runner") == "1"
        self.sync_clocks()
        self.taint = {runner: int(facts["taint"])}
        for node in self.node_names()[1:]:
            self.taint[node] = int(self.sh(node, "cat /proc/sys/kernel/tainted"))
        self.env = r.env(facts["netif"])
        problems = []
        for node in self.node_names():
            problems += self.console_problems(node)
        self.dead = False
        return problems

    def sync_clocks(self) -> None:
        """Set the wall clock of every other node on the runner's network to
        the runner's (CLOCK_PORT says why and how). A node that does not
        answer, or is not on that network, keeps its clock, logged."""
        runner = self.roles.runner.name
        for node in self.node_names()[1:]:
            nic = self.roles.members.get(node)
            if not nic:
                log(f"{node}: not on {runner}'s data network; its wall clock is left as it is")
                continue
            fmt = dict(addr=nic.addr, port=CLOCK_PORT, rounds=CLOCK_ROUNDS)
            server = shlex.quote(CLOCK_SERVER.format(**fmt))
            self.sh(node, f"setsid python3 -c {server} </dev/null >/dev/null 2>&1 &")
            measure = [shlex.quote(CLOCK_CLIENT.format(**fmt, last=last)) for last in (False, True)]
            rtt, offset = self.sh(runner, f"python3 -c {measure[0]}").split()
            if offset == "none":
                log(f"{node}: no answer to {runner}'s clock requests; its wall clock is left as it is")
                continue
            self.sh(node, CLOCK_STEP.format(offset=int(offset)))
            rtt, left = self.sh(runner, f"python3 -c {measure[1]}").split()
            after = f"now {int(left) / 1e3:+.0f} us apart, round trip {int(rtt) / 1e3:.0f} us" \
                if left != "none" else "no answer after"
            print(f"{node}: wall clock set to {runner}'s ({int(offset) / 1e6:+.1f} ms; {after})", flush=True)

    def sh(self, node: str, script: str, limit: float = CHECK_LIMIT, check: bool = True) -> str:
        """A shell script's stdout on a node; Failure if the node does not
        answer in time or (with check) the script fails."""
        chunks, errs = [], []
        out, err = Lines(chunks.append), Lines(errs.append)
        if not self.cl.pid(node):
            raise Failure(f"{node}: QEMU exited")
        agent = self.cl.agent(node)
        try:
            status, why = exec_limited(agent, ["sh", "-c", script], out, err, limit)
        finally:
            agent.close()
        out.close()
        err.close()
        if status is None or (check and status):
            raise Failure(f"{node}: {why or 'exit ' + str(status)}: {' '.join(errs + chunks)[-500:]}")
        return "\n".join(chunks)

    def console_problems(self, node: str) -> list:
        """Kernel complaints in what node's console got since the last look."""
        text, self.marks[node] = console.read_from(self.console(node), self.marks[node])
        text = "\n".join(line for line in text.splitlines() if not line.startswith(AGENT_NOISE))
        found = console.complaints(text)
        if not found:
            return []
        return [ktap.Problem("kernel", f"{node}: kernel: {found[0].strip()[:200]}", console.report(text), node)]

    def taint_problem(self, node: str, new: int) -> list:
        old, self.taint[node] = self.taint[node], new
        if new & ~old:
            flags = console.taint_flags
            return [ktap.Problem("taint", f"{node}: kernel tainted: '{flags(old)}' -> '{flags(new)}' "
                                          f"({old} -> {new})", node=node)]
        return []

    def close(self):
        """Power the cluster off; its consoles go to keep first."""
        if not self.cl:
            return
        self.cl.stop(quiet=True)
        if self.keep:
            for node in self.node_names():
                with open(f"{self.keep}.{node}.console", "ab") as f:
                    f.write(f"==== devmemsim kselftest: {self.cl.name} (boot {self.boots}) ====\n".encode())
                    try:
                        f.write(self.console(node).read_bytes())
                    except OSError:
                        pass
        if self.dead:
            log(f"consoles and logs of the failed cluster kept in {self.cl.dir}")
        else:
            self.cl.cleanup()
        self.cl = None

    def script(self, tf: TestFile) -> str:
        """The runner's shell script for a file: kselftest's runner or the file
        itself under timeout(1), between two marks (uptime, taint)."""
        if self.runner:
            cmd = f"cd {self.guest_root} && ./run_kselftest.sh -t {tf.test}"
        else:
            name = shlex.quote(tf.name)
            limit = f"timeout -k 10 {tf.timeout} " if tf.timeout else ""
            cmd = (f"cd {self.guest_root}/{tf.collection} && [ -e {name} ] || "
                   f"{{ echo '{tf.test} is not on the payload'; exit 127; }}\n"
                   f"if [ -x {name} ]; then set -- ./{name}; else set -- $(sed -n '1s/^#!//p' {name}) ./{name}; fi\n"
                   f'{limit}"$@"')
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        return (f"mark() {{ read -r up _ </proc/uptime; t=$(cat /proc/sys/kernel/tainted); "
                f"echo \"{MARK} $1 $up $t\" >&2; }}\n"
                f"export {env} PYTHONUNBUFFERED=1 PYTHONPYCACHEPREFIX=/tmp/pycache\n"
                f"mark start\n(\n{cmd}\n) 2>&1\nrc=$?\nmark end\nexit $rc\n")

    def run_file(self, tf: TestFile, on_case) -> ktap.FileResult:
        """Run one file on the runner; on_case(tf, case) as each case ends."""
        res = ktap.FileResult(tf.test)
        parser = ktap.Parser(1 if self.runner else 0)
        marks, said = {}, []

        def on_line(line):
            case = parser.feed(line)
            if case:
                on_case(tf, case)

        def on_err(line):
            m = re.match(rf"^{MARK} (\w+) ([\d.]+) (\d+)$", line)
            if m:
                marks[m.group(1)] = (float(m.group(2)), int(m.group(3)))
            else:  # the agent's own words
                said.append(line)

        started = time.monotonic()
        out, err = Lines(on_line), Lines(on_err)
        try:
            agent = self.cl.agent(self.roles.runner.name)
        except (Failure, UsageError) as e:
            status, why = None, str(e)
        else:
            status, why = exec_limited(agent, ["sh", "-c", self.script(tf)], out, err, tf.host_limit)
            agent.close()
        out.close()
        err.close()
        if "start" in marks and "end" in marks:
            res.run_seconds = marks["end"][0] - marks["start"][0]
        timed_out = bool(tf.timeout) and status in (124, 137) and res.run_seconds >= tf.timeout - 1
        self.check_nodes(res, marks, why if status is None else "")
        ktap.finish(res, parser, status, timed_out)
        res.seconds = time.monotonic() - started
        return res

    def check_nodes(self, res: ktap.FileResult, marks: dict, runner_silent: str) -> None:
        """After a file: each node's new console lines, taint and life."""
        for node in self.node_names():
            res.problems += self.console_problems(node)
            why, taint = "", None
            if not self.cl.pid(node):
                why = "its QEMU exited"
            elif node == self.roles.runner.name and runner_silent:
                why = f"its agent is silent: {runner_silent}"
            elif node == self.roles.runner.name:
                taint = marks.get("end", (0, None))[1]
            else:
                try:
                    taint = int(self.sh(node, "cat /proc/sys/kernel/tainted"))
                except (Failure, ValueError) as e:
                    why = f"its agent is silent: {e}"
            if why:
                self.dead = True
                lines = console.tail(self.console(node), 4 * CONSOLE_TAIL).splitlines()
                tail = [line for line in lines if not line.startswith(AGENT_NOISE)][-CONSOLE_TAIL:]
                res.problems.append(ktap.Problem("node", f"{node} died ({why})", "\n".join(tail), node))
            elif taint is not None:
                res.problems += self.taint_problem(node, taint)


# ---- the run ----------------------------------------------------------------

class Stopped(KeyboardInterrupt):
    """SIGINT or SIGTERM during a run: the nodes are stopped and what ran is
    written before the command exits with 128 + the signal's number. Not a
    Failure: nothing on the way out may take it for a broken tree."""

    def __init__(self, signum: int):
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.status = 128 + signum


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def stop_on_signals() -> dict:
    """Make SIGINT and SIGTERM raise Stopped in the main thread, the first
    one only: the clean-up after it (powering the nodes off, writing the
    outputs) is not cut short by a second. Returns the old handlers."""

    def handler(signum, frame):
        for s in STOP_SIGNALS:
            signal.signal(s, signal.SIG_IGN)
        log(f"{signal.Signals(signum).name}: stopping the nodes, writing what ran")
        raise Stopped(signum)

    return {s: signal.signal(s, handler) for s in STOP_SIGNALS}


RESULT_WORDS = {"ok": "ok", "fail": "FAIL", "skip": "skip", "xfail": "xfail"}


def show_case(tf: TestFile, case: ktap.Case) -> None:
    why = f": {case.reason}" if case.reason else ""
    print(f"  {RESULT_WORDS[case.result]:5} {tf.rel} {case.name}{why} ({case.seconds:.1f} s)", flush=True)


def show_file(tf: TestFile, res: ktap.FileResult) -> None:
    for p in res.problems:
        print(f"  FAIL  {tf.rel}: {p.message}")
        if p.detail:
            print("        " + "\n        ".join(p.detail.splitlines()))
    print(f"{tf.rel}: {res.status.upper() if res.status == 'fail' else res.status} in {res.seconds:.1f} s "
          f"(test {res.run_seconds:.1f} s, around it {res.seconds - res.run_seconds:.1f} s)", flush=True)


def table(results: list) -> str:
    """The summary: file, case, result and reason, one case a line."""
    rows = [("FILE", "CASE", "RESULT", "REASON")]
    for res in results:
        for c in res.cases:
            rows.append((res.test, c.name, c.result, c.reason))
        for p in res.problems:
            rows.append((res.test, f"({p.kind})", "fail", p.message))
    width = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n".join(f"{a:{width[0]}}  {b:{width[1]}}  {c:{width[2]}}  {d[:120]}".rstrip() for a, b, c, d in rows)


def boot_result(problems: list, boot: int) -> ktap.FileResult:
    """What a boot logged that fails the run, as a file of its own."""
    res = ktap.FileResult(f"devmemsim:boot-{boot}" if boot else "devmemsim:boot", problems=problems)
    res.status, res.reason = "fail", problems[0].message
    return res


def not_run(tf: TestFile, why: str) -> ktap.FileResult:
    return ktap.FileResult(tf.test, reason=why, problems=[ktap.Problem("node", why)])


def vcpus_booted(plan: clusterfile.Plan) -> str:
    """The vCPUs a plan_for() plan gives: '6 vCPUs a node', or the runner's."""
    smp = plan.nodes[0].smp
    if all(n.smp == smp for n in plan.nodes):
        return f"{smp} vCPUs a node"
    return f"{smp} vCPUs on {plan.nodes[0].name}"


def run_files(session: Session, files: list, results: list) -> float:
    """Boot, run every file (booting again after a node died); results
    collect as they come. Returns the seconds from boot to the first test."""
    started = time.monotonic()
    try:
        problems = session.boot(session.plan_for(FILE_MACHINES.get(files[0].rel)) if files else None)
    except Failure as e:
        raise TreeBroken(f"the cluster did not boot: {e}") from None
    if problems:
        results.append(boot_result(problems, 0))
    first = time.monotonic() - started
    runner = session.node_names()[0]
    for i, tf in enumerate(files):
        plan = session.plan_for(FILE_MACHINES.get(tf.rel))
        if session.dead or plan != session.booted:
            log(f"a node died: booting the cluster again for {tf.rel}" if session.dead else
                f"booting the cluster again with {vcpus_booted(plan)} for {tf.rel}")
            try:
                problems = session.boot(plan)
            except Failure as e:
                results += [not_run(left, f"the cluster did not boot again: {e}") for left in files[i:]]
                break
            if problems:
                results.append(boot_result(problems, session.boots - 1))
        print(f"{tf.rel}: running on {runner} (timeout {tf.timeout or 'none'}"
              f"{', run_kselftest.sh' if session.runner else ''})", flush=True)
        session.current = tf
        res = session.run_file(tf, show_case)
        session.current = None
        results.append(res)
        show_file(tf, res)
    return first


@dataclass
class Outputs:
    ktap: str = ""
    junit: str = ""
    json: str = ""

    def consoles_prefix(self) -> str:
        """Where the consoles are kept: beside the JSON summary, if any."""
        return str(Path(self.json).with_suffix("")) if self.json else ""


def run(kbuild, files: list, plan: clusterfile.Plan, outputs: Outputs) -> int:
    """Run files on plan's cluster (cluster_plan()) booted from kbuild
    (build.KselftestBuild); exit status: 0 all passed (skips allowed), 1 a
    failure."""
    keep = outputs.consoles_prefix()
    for fix in kbuild.test_fixes:
        log(f"the tests carry a fix: {fix['subject']} ({build.KSELFTEST_FIXES.relative_to(ROOT) / fix['patch']})")
    session = Session(kbuild.artifacts, plan, kbuild.guest_root, keep)
    results, first = [], None
    started = time.monotonic()
    handlers = stop_on_signals()
    try:
        first = run_files(session, files, results)
    except Stopped as e:
        if session.current:
            results.append(not_run(session.current, f"{e} while it ran"))
        raise
    finally:
        session.close()
        cluster_seconds = time.monotonic() - started
        meta = {
            "kernel": kbuild.artifacts.kernel_version, "tree": str(kbuild.tree), "guest_root": kbuild.guest_root,
            "config_missing": kbuild.config_missing, "helpers_missing": kbuild.helpers_missing,
            "test_fixes": kbuild.test_fixes,
            "build_seconds": kbuild.seconds, "nodes": len(plan.nodes),
            **({} if default_cluster(plan) else {"cluster": plan.source}),
            "runner": "run_kselftest.sh" if session.runner else "direct",
            "boot_to_first_test_seconds": round(first, 2) if first is not None else None,
            "cluster_seconds": round(cluster_seconds, 2),
            "consoles": {n: f"{keep}.{n}.console" for n in session.node_names()} if keep else {},
        }
        write_outputs(outputs, results, meta)
        for sig, old in handlers.items():
            signal.signal(sig, old)
    print(f"\n{table(results)}\n")
    t = ktap.totals(results)
    overhead = [r.seconds - r.run_seconds for r in results if r.run_seconds]
    print(f"files: {t['files']['ok']} ok, {t['files']['fail']} failed, {t['files']['skip']} skipped; cases: "
          + ", ".join(f"{v} {k}" for k, v in t["cases"].items()))
    print(f"boot to first test {first:.1f} s; per file around the test "
          f"{sum(overhead) / len(overhead) if overhead else 0:.1f} s (mean of {len(overhead)}); "
          f"boot to power-off {cluster_seconds:.1f} s")
    return 1 if t["files"]["fail"] else 0


def write_outputs(outputs: Outputs, results: list, meta: dict) -> None:
    if outputs.ktap:
        ktap.write_ktap(outputs.ktap, results)
    if outputs.junit:
        props = {k: meta[k] for k in ("kernel", "tree", "runner")}
        props["test_fixes"] = " ".join(f["patch"] for f in meta["test_fixes"])
        ktap.write_junit(outputs.junit, results, props)
    if outputs.json:
        ktap.write_json(outputs.json, results, meta)
