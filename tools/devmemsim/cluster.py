"""Launch, reach and stop clusters of emulated nodes (one QEMU each).

A cluster is booted from its plan (clusterfile.py: a cluster file, or the
default cluster of `--nodes N`) and lives in RUN/<name>/: cluster.json (the
plan), per node NODE.ctl (agent socket), NODE.qmp, NODE.console (serial
console), NODE.log (QEMU's stdout/stderr, and its trace output with
--trace), NODE.pid and NODE.toml (the node configuration as the model reads
it). Names, MACs and addresses follow addressing.py; the PCIe layout of a
node is topology.py's, from NODE.toml's [topology]. Every NIC goes on the
data network the plan gives it:
  p2p    : -netdev stream over RUN/<name>/NETWORK.sock (its first node listens)
  switch : a VDE switch on RUN/<name>/vde-NETWORK/ (vde_switch --daemon)
  multicast: VDE's distributed switch, -netdev vde,sock=vxvde://GROUP/...
           (vdeplug4: Ethernet in UDP multicast; it spans hosts)
  a network of one NIC links nothing (the NIC has no netdev).
A node with a host runs there (remote.py: ssh, and ssh's forwarding of its
NODE.ctl and NODE.qmp to this host).
With a pcap directory, QEMU's filter-dump writes every linked NIC's traffic
to DIR/NODE-NETWORK.pcap (a node on another host: in its run directory
there, which stop copies into DIR).
The QEMU processes of all nodes start at once and boot in parallel.
While the CLI waits on nodes (a boot, a command), it watches them all
(NodeWatch): a node that dies ends the wait within seconds (GuestDied).
The management NIC is -netdev user,restrict=on (no way out of the host);
its only host forward is 127.0.0.1:<port> -> guest port 22.
"""

import collections
import dataclasses
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import addressing, clusterfile, console, remote, srun, topology
from .agent import Agent, Silent
from .build import Artifacts
from .errors import Failure, GuestDied, UsageError, log
from .paths import BUILD, qemu_env, run_root

BOOT_TIMEOUT = 300.0  # TCG boots in ~10-30 s; a loaded machine is slower
# A kernel with kmemleak (the debug flavour) scans before it powers off, so
# that leaks reach the console. An object is reported only once a scan finds
# it unreferenced and unchanged since the previous scan: two scans.
KMEMLEAK_SCAN = ("k=/sys/kernel/debug/kmemleak; [ -w $k ] || exit 0; "
                 "echo 1 >/sys/module/kmemleak/parameters/verbose; echo scan >$k && echo scan >$k")
KMEMLEAK_TIMEOUT = 600.0
KMEMLEAK_BANNER = "kmemleak: Kernel memory leak detector initialized"
# A node that died without a report shows the last lines of its console and
# of its QEMU's output. Of the reports that do not end a wait, a command
# shows this many per node; the console has the rest.
TAIL_LINES = 15
REPORTS_SHOWN = 5
# After the agent's connection ended: how long to look for why (a panic
# reaches the console and QEMU exits within a second or so).
LOST_WAIT = 5.0


@dataclass
class NodeSpec:
    node: clusterfile.Node  # what the plan says
    config: Path  # the merged configuration, as the model reads it

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def index(self) -> int:
        return self.node.index


@dataclass
class Machine:
    """What QEMU makes of every node of a cluster."""

    accel: str = "tcg"
    memory: str = "1G"  # for the default cluster (boot()); a plan says per node
    smp: int = 2
    pcap: str = ""  # a directory: every data link's traffic, one pcap per node and network
    compare_nics: bool = False  # two nodes: also e1000e and virtio-net links
    trace: tuple = ()  # QEMU -trace patterns; the output goes to NODE.log
    srun: object = None  # srun.Placement: every node's QEMU a step of that job


# TCG's CPU: QEMU's "max" without 5-level paging. With LA57 the guest kernel
# (7.3) runs an interrupt inside identify_cpu() while boot_cpu_data's feature
# bits are zeroed, so pgtable_l5_enabled() briefly reads false and the debug
# kernel's KASAN reports the interrupt's own irq_desc as a wild access
# (do_raw_spin_lock from handle_edge_irq: 4 of 14 debug consoles of one full
# test run). Under TCG that window is wide enough for a timer tick; 4-level
# paging avoids it.
TCG_CPU = "max,la57=off"


def node_config(config: str, sets: list, index: int = 0, out: Path = None) -> Path:
    """Check the configuration with the model's own schema (dms-config);
    with out, write the node's merged configuration there."""
    cmd = [str(BUILD / "sysc-model" / "dms-config"), "--set", f"node.index={index}"]
    if out:
        cmd += ["--output", str(out)]
    for s in sets:
        cmd += ["--set", s]
    if config:
        cmd.append(config)
    res = subprocess.run(cmd, text=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if res.returncode != 0:
        lines = res.stderr.strip().splitlines()
        raise UsageError(lines[0] if lines else "invalid configuration")
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kernel_cmdline(node: NodeSpec) -> str:
    # tsc=reliable: TCG's TSC follows the host clock; without it the
    # clocksource watchdog's cross-CPU skew check can spin forever
    # against stop_machine on the other vCPU early in boot (seen about
    # once in 20 two-node boots: both vCPUs busy, console stopped).
    # sysctl.kernel.timer_migration=0: every CPU expires its own timers. A
    # debug-kernel node left idle while the host was overloaded once slept
    # ~390 s through its timers (RCU: "timer wakeup didn't happen ...
    # Possible timer handling issue"; QEMU idle at 0 % CPU) until an
    # interrupt woke CPU 0, which then ran CPU 1's overdue timers through
    # the timer-migration hierarchy (tmigr_handle_remote). Timer migration
    # saves power on real hardware only; it is off so that no CPU's timers
    # wait on another (idle) CPU whose vCPU thread the host has preempted.
    return (f"console=ttyS0 root=/dev/vda rw init=/sbin/devmemsim-init panic=-1 tsc=reliable "
            f"sysctl.kernel.timer_migration=0 "
            f"devmemsim.node={node.name} {node.node.cmdline()}")


def qemu_argv(art: Artifacts, d: Path, node: NodeSpec, plan: clusterfile.Plan, m: Machine,
              config_at: Path = None) -> list:
    """QEMU's command line for a node whose run directory is d (config_at:
    where its QEMU reads its configuration, if not from node.config)."""
    n = node.name
    layout = topology.load(node.config)
    argv = [
        str(art.qemu),
        "-name", f"devmemsim-{n}",
        "-M", "q35",
        "-accel", m.accel,
        "-cpu", TCG_CPU if m.accel == "tcg" else "host",
        "-smp", str(node.node.smp),
        "-m", node.node.memory,
        "-nodefaults", "-no-user-config", "-nographic", "-no-reboot",
        "-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
        "-kernel", str(art.bzimage),
        "-append", kernel_cmdline(node),
        "-serial", f"file:{d / (n + '.console')}",
        "-qmp", f"unix:{d / (n + '.qmp')},server=on,wait=off",
        "-drive", f"file={art.rootfs},if=none,id=root,format=raw,snapshot=on",
        "-device", "virtio-blk-pci,drive=root",
        "-drive", f"file={art.payload},if=none,id=payload,format=raw,readonly=on",
        "-device", "virtio-blk-pci,drive=payload",
        # Entropy for the guest's early getrandom() (python, sshd).
        "-device", "virtio-rng-pci",
        "-device", "virtio-serial-pci",
        "-chardev", f"socket,id=ctl,path={d / (n + '.ctl')},server=on,wait=off",
        "-device", "virtserialport,chardev=ctl,name=org.devmemsim.agent",
        "-netdev", f"user,id=mgmt,restrict=on,hostfwd=tcp:127.0.0.1:{free_port()}-:22",
        "-device", f"virtio-net-pci,netdev=mgmt,mac={addressing.mgmt_mac(node.index)},romfile=",
        # The node: its NICs and GPUs where its [topology] puts them (by
        # default one pair under one PCIe switch, so P2P stays below it).
        "-object", f"devmemsim-node,id=dms,config={config_at or node.config},stats-json={d / (n + '.stats.json')}",
        *layout.ports,
    ]
    for gpu in layout.gpus:
        argv += ["-device", gpu.device()]
    for nic in layout.nics:
        argv += data_link_argv(d, node, plan, nic, m.pcap)
    for link in addressing.COMPARE if m.compare_nics else ():
        argv += stream_link_argv(d / f"link-{link.netdev}.sock", link.netdev, node.index == 0)
        argv += ["-device", f"{link.device},netdev={link.netdev},mac={link.mac(node.index)},romfile="]
    for pattern in m.trace:
        argv += ["-trace", pattern]
    return argv


def stream_link_argv(sock: Path, netdev: str, listen: bool) -> list:
    """One side of a point-to-point link over a UNIX stream socket."""
    server = "server=on" if listen else "server=off,reconnect-ms=500"
    return ["-netdev", f"stream,id={netdev},{server},addr.type=unix,addr.path={sock}"]


def data_link_argv(d: Path, node: NodeSpec, plan: clusterfile.Plan, nic: topology.Device, pcap: str) -> list:
    """One devmemsim-nic and, when its network links it to others, its
    netdev (and, with a pcap directory, the filter-dump that records it)."""
    planned = node.node.nics[nic.index]
    netdev = addressing.data_link(nic.index).netdev
    dev = f"{nic.device()},mac={addressing.data_link(nic.index).mac(node.index)}"
    net = plan.networks.get(planned.network)
    if not net or not net.linked:
        return ["-device", dev]
    if net.kind == "p2p":
        argv = stream_link_argv(d / f"{net.name}.sock", netdev, net.members[0] == (node.name, nic.index))
    elif net.kind == "multicast":
        argv = ["-netdev", f"vde,id={netdev},sock={net.multicast.url()}"]
    else:
        argv = ["-netdev", f"vde,id={netdev},sock={d / ('vde-' + net.name)}"]
    if pcap:
        argv += ["-object", f"filter-dump,id=dump-{netdev},netdev={netdev},"
                            f"file={Path(pcap) / f'{node.name}-{net.name}.pcap'}"]
    return argv + ["-device", f"{dev},netdev={netdev}"]


def on_host(machine: Machine, there: remote.RemoteNode) -> Machine:
    """The machine of a node on another host: its pcaps stay in its run
    directory there until stop fetches them."""
    return dataclasses.replace(machine, pcap=str(there.pcap_dir) if machine.pcap else "")


def indented(title: str, text: str) -> str:
    return f"{title}:\n  " + text.replace("\n", "\n  ")


class NodeWatch:
    """A cluster's nodes while the CLI waits on them (a boot, a command):
    check() reads what each console got since the last look
    (console.Watch) and sees that each QEMU runs. A fatal report or an
    exited QEMU raises GuestDied; other reports are shown on stderr and the
    wait goes on. from_start: the consoles from their start and every node
    (a boot); else from now on, the nodes running now."""

    def __init__(self, cl, from_start: bool):
        self.cl = cl
        nodes = [n for n in cl.node_names() if from_start or cl.pid(n)]
        self.consoles = {n: console.Watch(n, cl.dir / f"{n}.console", 0 if from_start else None) for n in nodes}
        self.shown = collections.Counter()

    def check(self, final: bool = False) -> None:
        """final: the wait is over; reports still being written count as they are."""
        for node, watch in self.consoles.items():
            for report in watch.poll(final=final):
                self._report(report)
            if not self.cl.pid(node):
                self.died(node, "its QEMU exited")

    def alive(self) -> bool:
        """Agent.connect's alive(): check(), which raises if not."""
        self.check()
        return True

    def _report(self, report: console.Report) -> None:
        if report.fatal:
            self.cl.dead.add(report.node)
            raise GuestDied(report.node, f"its kernel reported: {report.headline}", report.text())
        self.shown[report.node] += 1
        if self.shown[report.node] <= REPORTS_SHOWN:
            log(f"{report.node}: kernel: {report.headline} (not fatal: carrying on)\n{report.text()}")
        elif self.shown[report.node] == REPORTS_SHOWN + 1:
            log(f"{report.node}: more kernel complaints in {report.path}")

    def died(self, node: str, why: str) -> None:
        """Raise GuestDied for node: with the fatal report its console has
        last, if any, else why with the console's last lines (and QEMU's,
        if it exited)."""
        self.cl.dead.add(node)
        there = remote.RemoteNode.recorded(self.cl.dir, node)
        if there:
            there.fetch()
        gone = not self.cl.pid(node)
        watch = self.consoles.setdefault(node, console.Watch(node, self.cl.dir / f"{node}.console"))
        for report in watch.end() if gone else watch.poll(final=True):
            self._report(report)
        details = [indented(f"last lines of console {watch.path}", console.tail(watch.path, TAIL_LINES))]
        for qemu_log in (self.cl.dir / f"{node}.log", self.cl.dir / f"{node}.qemu.log") if gone else ():
            if console.size(qemu_log):
                details.append(indented(f"QEMU's last output ({qemu_log})", console.tail(qemu_log, TAIL_LINES)))
        raise GuestDied(node, why, "\n".join(details))

    def lost(self, node: str, error: Exception) -> None:
        """The agent's connection to node ended: raise GuestDied if a node
        shows why within LOST_WAIT s, else Failure with error."""
        end = time.monotonic() + LOST_WAIT
        while time.monotonic() < end:
            self.check()
            time.sleep(0.2)
        raise Failure(f"{node}: {error}")


class Cluster:
    def __init__(self, name: str):
        if not name or "/" in name or name.startswith("."):
            raise UsageError(f"bad cluster name {name!r}")
        self.name = name
        self.dir = run_root() / name
        self.procs = {}  # nodes this process started, so it can reap them
        self.watcher = None  # NodeWatch of the waits on this cluster's nodes
        self.dead = set()  # nodes seen dying: stop() kills them at once, cleanup() keeps their consoles

    def plan(self) -> dict:
        """The plan it was booted from (clusterfile.Plan.to_json())."""
        try:
            return json.loads((self.dir / "cluster.json").read_text())
        except (OSError, ValueError):
            return {"nodes": [], "networks": []}

    def node_names(self) -> list:
        """In the plan's order (a cluster booted before plans: its pid files)."""
        names = [n["name"] for n in self.plan()["nodes"]]
        return names or sorted(p.stem for p in self.dir.glob("*.pid") if not p.stem.startswith("vde"))

    def nic(self, node: str, pair: int = 0) -> dict:
        """A node's NIC as the plan addresses it: pair, network, netdev,
        mac, ipv4 and ipv6 (CIDR)."""
        for n in self.plan()["nodes"]:
            if n["name"] == node and pair < len(n["nics"]) and n["nics"][pair]["network"]:
                return n["nics"][pair]
        raise UsageError(f"cluster {self.name!r}: no node {node!r} with a connected NIC {pair}")

    def pid(self, node: str) -> int:
        if node in self.procs:
            p = self.procs[node]
            return p.pid if p.poll() is None else 0
        try:
            pid = int((self.dir / f"{node}.pid").read_text())
            os.kill(pid, 0)
            # An exited process that its parent (often init, for a node
            # whose CLI has exited) has not reaped yet is not running.
            with open(f"/proc/{pid}/stat") as f:
                return 0 if f.read().rsplit(")", 1)[1].split()[0] == "Z" else pid
        except (OSError, ValueError, IndexError):
            return 0

    def running(self) -> bool:
        return any(self.pid(n) for n in self.node_names())

    def boot(self, art: Artifacts, nodes: int, config: str, sets: list, machine: Machine) -> dict:
        """boot_plan() of the default cluster of `nodes` nodes alike."""
        plan = clusterfile.default_plan(nodes, config, sets, machine.memory, machine.smp)
        return self.boot_plan(art, plan, machine)

    def boot_plan(self, art: Artifacts, plan: clusterfile.Plan, machine: Machine, watch: bool = False) -> dict:
        """Start every node and wait until each agent answers; returns
        {node: hello}. On failure every started node is stopped. With
        watch, the consoles are watched from their start on (NodeWatch),
        through the boot and the commands that follow (exec())."""
        if self.running():
            raise UsageError(f"cluster {self.name!r} is already running (devmemsim stop --name {self.name})")
        if self.dir.exists():
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True, mode=0o700)
        os.chmod(self.dir.parent, 0o700)
        (self.dir / "cluster.json").write_text(json.dumps(plan.to_json(), indent=1) + "\n")
        specs = [NodeSpec(n, node_config(str(n.config), list(n.sets), n.index, self.dir / f"{n.name}.toml"))
                 for n in plan.nodes]
        procs = self.procs
        try:
            remote.check_hosts(plan.nodes)
            for net in plan.networks.values():
                if net.kind == "switch" and net.linked:
                    self._start_vde(net.name)
            if machine.pcap:
                os.makedirs(machine.pcap, exist_ok=True)
            for spec in specs:
                procs[spec.name] = self._start(art, spec, plan, machine)
            self._check_started(specs)
            if watch:
                self.watcher = NodeWatch(self, from_start=True)
            hellos = {}
            # The nodes share the host's cores: more of them boot slower.
            deadline = time.monotonic() + BOOT_TIMEOUT * max(1.0, len(specs) / 2)
            for spec in specs:
                p = procs[spec.name]
                a = Agent(self.dir / f"{spec.name}.ctl")
                alive = self.watcher.alive if watch else (lambda p=p: p.poll() is None)
                try:
                    hellos[spec.name] = a.connect(deadline, alive=alive)
                except GuestDied:
                    raise
                except Failure as e:
                    raise Failure(f"{spec.name}: {e}\n{self._diagnose(spec.name, p)}") from None
                finally:
                    a.close()
            if watch:
                self.watcher.check(final=True)
            return hellos
        except BaseException:
            self.stop(quiet=True)
            raise

    def _start_vde(self, network: str):
        vde = shutil.which("vde_switch")
        if not vde:
            raise Failure(f"network {network!r} is a switch, which needs VDE: apt-get install vde2")
        # A vde_switch in the foreground reads commands from stdin and exits
        # at its end: it runs as a daemon, which writes its pid for stop().
        sock, pidfile, logpath = (self.dir / f"vde-{network}{ext}" for ext in ("", ".pid", ".log"))
        with open(logpath, "w") as logf:
            res = subprocess.run([vde, "--sock", str(sock), "--mode", "0700", "--daemon",
                                  "--pidfile", str(pidfile)],
                                 stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT, timeout=30)
        for _ in range(50):
            if res.returncode == 0 and (sock / "ctl").exists() and pidfile.exists():
                return
            time.sleep(0.1)
        raise Failure(f"vde_switch of network {network!r} did not start (exit {res.returncode}); see {logpath}")

    def _start(self, art: Artifacts, spec: NodeSpec, plan: clusterfile.Plan, machine: Machine):
        if machine.srun:
            return self._start_step(art, spec, plan, machine)
        if spec.node.host:
            there = remote.RemoteNode(self.dir, spec.name, spec.node.host)
            argv = qemu_argv(art, there.dir, spec, plan, on_host(machine, there), there.dir / f"{spec.name}.toml")
            (self.dir / f"{spec.name}.cmdline").write_text(" ".join(argv) + "\n")
            p = there.start(argv, qemu_env(), spec.config, machine.pcap)
            (self.dir / f"{spec.name}.pid").write_text(str(p.pid))
            return p
        argv = qemu_argv(art, self.dir, spec, plan, machine)
        (self.dir / f"{spec.name}.cmdline").write_text(" ".join(argv) + "\n")
        logf = open(self.dir / f"{spec.name}.log", "w")
        try:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                                 start_new_session=True, env=qemu_env())
        finally:
            logf.close()
        (self.dir / f"{spec.name}.pid").write_text(str(p.pid))
        return p

    def _start_step(self, art: Artifacts, spec: NodeSpec, plan: clusterfile.Plan, machine: Machine):
        """The node's QEMU as a step of the Slurm job (srun.py)."""
        step = srun.Step.planned(self.dir, self.name, spec.name, machine.srun)
        if step.local:
            argv = qemu_argv(art, step.dir, spec, plan, machine)
        else:
            there = remote.RemoteNode(self.dir, spec.name, step.host)
            argv = qemu_argv(art, step.dir, spec, plan, on_host(machine, there), step.dir / f"{spec.name}.toml")
        (self.dir / f"{spec.name}.cmdline").write_text(" ".join(step.srun_argv(argv, spec.node.smp)) + "\n")
        return step.start(argv, spec.node.smp, qemu_env(), spec.config, machine.pcap)

    def _check_started(self, specs: list) -> None:
        """A bad device or option makes QEMU exit at once: report its stderr."""
        for _ in range(10):
            for spec in specs:
                p = self.procs[spec.name]
                if p.poll() is not None:
                    raise Failure(f"{spec.name}: QEMU failed to start (exit {p.returncode}):\n"
                                  f"{self._qemu_log(spec.name)}")
            time.sleep(0.05)

    def _qemu_log(self, node: str) -> str:
        """QEMU's output (a node on another host: ssh's, then QEMU's there)."""
        out = []
        for name in (f"{node}.log", f"{node}.qemu.log"):
            try:
                out.append((self.dir / name).read_text(errors="replace").strip())
            except OSError:
                pass
        return "\n".join(filter(None, out))

    def _diagnose(self, node: str, p) -> str:
        there = remote.RemoteNode.recorded(self.dir, node)
        if there:
            there.fetch()
        lines = []
        if p.poll() is not None:
            lines.append(f"QEMU exited with status {p.returncode}: {self._qemu_log(node)}")
        try:
            tail = (self.dir / f"{node}.console").read_text(errors="replace").splitlines()[-25:]
            lines.append("last console lines:\n  " + "\n  ".join(tail))
        except OSError:
            pass
        return "\n".join(lines)

    def agent(self, node: str, watch: NodeWatch = None) -> Agent:
        """A connection to node's agent (watch: while connecting, as ever)."""
        if not self.pid(node):
            known = ", ".join(self.node_names()) or "none"
            raise UsageError(f"no running node {node!r} in cluster {self.name!r} (running: {known})")
        a = Agent(self.dir / f"{node}.ctl")
        a.connect(time.monotonic() + 30.0, alive=watch.alive if watch else lambda: bool(self.pid(node)))
        return a

    def watch(self) -> NodeWatch:
        """The watch of this cluster's nodes (from now on, if none yet)."""
        if not self.watcher:
            self.watcher = NodeWatch(self, from_start=False)
        return self.watcher

    def exec(self, node: str, argv, out=None, err=None, timeout: float = 0) -> int:
        """Run argv on node through its agent, streaming its output; its
        exit status (with a timeout, the agent kills it after that many
        seconds: agent.TIMED_OUT). Meanwhile every node is watched (watch()): one that
        dies raises GuestDied within seconds."""
        w = self.watch()
        try:
            ag = self.agent(node, w)
        except GuestDied:
            raise
        except Failure as e:
            w.died(node, str(e))
        try:
            status = ag.exec(argv, out, err, timeout=timeout, watch=w.check)
            w.check(final=True)
            return status
        except GuestDied:
            raise
        except Silent as e:
            w.died(node, str(e))
        except (Failure, OSError) as e:
            w.lost(node, e)
        finally:
            ag.close()

    def stop(self, quiet: bool = False, timeout: float = 30.0):
        """Power every node off through its agent; kill what does not exit,
        and a node seen dying at once (its kernel may not get that far)."""
        for node in self.node_names():
            pid = self.pid(node)
            if not pid or node in self.dead:
                continue
            try:
                a = Agent(self.dir / f"{node}.ctl")
                a.connect(time.monotonic() + 5.0, alive=lambda n=node: bool(self.pid(n)))
                if self._has_kmemleak(node):
                    a.exec(["sh", "-c", KMEMLEAK_SCAN], out=io.BytesIO(), err=io.BytesIO(), timeout=KMEMLEAK_TIMEOUT)
                a.poweroff()
                a.close()
            except (Failure, OSError):
                pass
        deadline = time.monotonic() + timeout
        for node in self.node_names():
            while self.pid(node) and node not in self.dead and time.monotonic() < deadline:
                time.sleep(0.1)
            pid = self.pid(node)
            there = remote.RemoteNode.recorded(self.dir, node)
            if pid:
                if not quiet and node not in self.dead:
                    log(f"{node} did not power off; killing QEMU {there.qemu_pid if there else pid}"
                        + (f" on {there.host}" if there else ""))
                if there:
                    there.kill()
                step = srun.Step.recorded(self.dir, node)
                if step:
                    step.end(0)  # scancel JOB.STEP: srun first would leave the step
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if there:
                there.fetch()
        for node in self.node_names():
            step = srun.Step.recorded(self.dir, node)
            if step:
                step.end()
        for vde in self.dir.glob("vde-*.pid"):
            try:
                os.kill(int(vde.read_text()), signal.SIGTERM)
            except (OSError, ValueError):
                pass

    def _has_kmemleak(self, node: str) -> bool:
        """Its kernel has kmemleak (says its console, here or on its host)."""
        there = remote.RemoteNode.recorded(self.dir, node)
        if there:
            return there.console_has(KMEMLEAK_BANNER)
        try:
            with open(self.dir / f"{node}.console", errors="replace") as f:
                return any(KMEMLEAK_BANNER in line for line in f)
        except OSError:
            return False

    def qmp(self, node: str, command: str, **arguments):
        """One QMP command on a running node."""
        if not self.pid(node):
            raise UsageError(f"no running node {node!r} in cluster {self.name!r}")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(30)
            s.connect(str(self.dir / f"{node}.qmp"))
            f = s.makefile("rw")
            json.loads(f.readline())  # greeting
            for cmd, args in (("qmp_capabilities", {}), (command, arguments)):
                f.write(json.dumps({"execute": cmd, "arguments": args}) + "\n")
                f.flush()
                while True:
                    msg = json.loads(f.readline())
                    if "error" in msg:
                        raise Failure(f"{node}: QMP {cmd}: {msg['error'].get('desc')}")
                    if "return" in msg:
                        break
            return msg["return"]

    def stats(self, node: str) -> dict:
        return json.loads(self.qmp(node, "qom-get", path="/objects/dms", property="stats"))

    def reset_stats(self, node: str) -> None:
        self.qmp(node, "qom-set", path="/objects/dms", property="reset-stats", value=True)

    def sh(self, node: str, script: str, check: bool = True) -> str:
        """Run a shell script on a node; its stdout. With check, a failure
        raises Failure with its stderr (or stdout)."""
        out, err = io.BytesIO(), io.BytesIO()
        status = self.exec(node, ["sh", "-c", script], out=out, err=err)
        if check and status:
            raise Failure(f"{node}: `{script.strip()}` exited {status}: "
                          f"{(err.getvalue() or out.getvalue()).decode(errors='replace').strip()}")
        return out.getvalue().decode(errors="replace")

    def final_stats(self) -> dict:
        """Counters the nodes wrote when they powered off."""
        out = {}
        for node in self.node_names():
            try:
                out[node] = json.loads((self.dir / f"{node}.stats.json").read_text())
            except (OSError, ValueError):
                pass
        return out

    def cleanup(self):
        """Remove the run directory of a stopped cluster, unless a node
        died (its console is what the reader needs: logged); with
        DEVMEMSIM_KEEP_CONSOLES=DIR, its consoles go to DIR/CLUSTER-NODE.console
        first (the debug-kernel tests read them after `run` and `demo`)."""
        if self.running():
            return
        keep = os.environ.get("DEVMEMSIM_KEEP_CONSOLES")
        if keep:
            for path in self.dir.glob("*.console"):
                shutil.copy2(path, Path(keep) / f"{self.name}-{path.name}")
        if self.dead:
            log(f"consoles and logs kept in {self.dir}")
            return
        for node in self.node_names():
            there = remote.RemoteNode.recorded(self.dir, node)
            if there:
                there.remove()
        shutil.rmtree(self.dir, ignore_errors=True)

    def status(self) -> list:
        hosts = {n["name"]: n.get("host", "") for n in self.plan()["nodes"]}
        steps = {n: srun.Step.recorded(self.dir, n) for n in self.node_names()}
        return [{"node": n, "pid": self.pid(n), "dir": str(self.dir), **({"host": hosts[n]} if hosts.get(n) else {}),
                 **(steps[n].status() if steps[n] else {})}
                for n in self.node_names()]


def list_clusters() -> list:
    root = run_root()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir())
