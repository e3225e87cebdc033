"""The cluster a run's files go to: who runs the tests and who is their
remote (Roles), and the Session that boots it, runs a file and checks the
nodes after it."""

import os
import re
import shlex
import time
from dataclasses import dataclass, replace
from pathlib import Path

from .. import clusterfile, console, ktap
from ..addressing import container_prefix6, data_link
from ..cluster import Cluster, Machine
from ..errors import Failure, UsageError, log
from ..paths import ROOT
from .clock import CLOCK_CLIENT, CLOCK_PORT, CLOCK_ROUNDS, CLOCK_SERVER, CLOCK_STEP
from .limited import Lines, exec_limited
from .selection import TestFile

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
MARK = "devmemsim-mark"
AGENT_NOISE = "dms-agent: host "  # the agent's console lines as hosts come and go  # node0's script reports uptime and taint on stderr with it
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
                   help="cluster file (TOML; configs/cluster/*.toml): boot its nodes instead; the first node runs "
                        "the tests against its NIC 0, the first other node on that NIC's network is their remote")


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
