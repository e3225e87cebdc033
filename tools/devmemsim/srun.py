"""Nodes as Slurm job steps (`boot|run|demo --srun`, inside an allocation
made by salloc or sbatch: SLURM_JOB_ID is set).

Each node's QEMU is one step of the job, started by srun on this host:
  srun --jobid=JOB --overlap --nodes=1 --ntasks=1 --nodelist=HOST
       --cpus-per-task=SMP --job-name=devmemsim-CLUSTER-NODE --chdir=DIR QEMU...
so slurmstepd on HOST is QEMU's parent and Slurm accounts, lists (squeue -s)
and cancels (scancel JOB.STEP) it. --overlap: the steps share the job's
CPUs, so nodes' vCPUs may add up to more than the allocation has (they run
slower); a node with more vCPUs than the job has on its host is refused,
as srun would refuse its step.

Placement: a node whose `host` names a host of the job runs there; the
others go round robin over the job's hosts, this host first when it is one
of them. A node on this host is a local node (its sockets are in
RUN/NAME/, srun is its NODE.pid). A node on another host of the job is
reached as a `host =` node is (remote.py): its run directory is prepared
there over ssh (pam_slurm_adopt lets a job's user ssh to its hosts), and
one ssh forwards its sockets here (that ssh is its NODE.pid). Only
multicast networks span hosts: a p2p link or a switch is a socket of this
host, so its NICs must all land here.

RUN/NAME/NODE.srun records the step (job, name, host, srun's pid); stop
powers the node off, the step ends with QEMU; a step whose QEMU does not
is cancelled.
"""

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import remote
from .errors import Failure, UsageError

START_TIMEOUT = 60.0  # srun's step, until QEMU made its sockets
END_TIMEOUT = 15.0  # a powered-off node's step, until srun exits
CPU_IDS_RE = r"^\s*Nodes=(\S+) CPU_IDs=(\S+)"


@dataclass(frozen=True)
class Allocation:
    job: str
    hosts: tuple  # the job's hosts, this host first when it is one
    cpus: dict  # host -> the job's CPUs there
    here: str  # this host's name among hosts, "" when it is none of them


@dataclass(frozen=True)
class Placement:
    """Where a plan's nodes run as steps of a job."""

    alloc: Allocation
    hosts: dict  # node -> host


def _slurm(*argv) -> str:
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Failure(f"--srun: {argv[0]}: {e}") from None
    if res.returncode:
        lines = (res.stderr or res.stdout).strip().splitlines()
        raise Failure(f"--srun: `{' '.join(argv)}` failed: {lines[-1] if lines else res.returncode}")
    return res.stdout


def _count(cpu_ids: str) -> int:
    """CPUs in a list such as 0-1,4."""
    n = 0
    for part in cpu_ids.split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


def allocation() -> Allocation:
    """The allocation this process runs in (its hosts and CPUs, from
    `scontrol show job -d`), or a UsageError of one line outside one."""
    job = os.environ.get("SLURM_JOB_ID", "")
    if not job:
        raise UsageError("--srun: not inside a Slurm allocation (SLURM_JOB_ID is unset; "
                         "run under salloc or sbatch)")
    cpus = {}
    for nodes, ids in re.findall(CPU_IDS_RE, _slurm("scontrol", "show", "job", "-d", job), re.M):
        for host in _slurm("scontrol", "show", "hostnames", nodes).split():
            cpus[host] = cpus.get(host, 0) + _count(ids)
    if not cpus:
        raise Failure(f"--srun: Slurm job {job} has no hosts (is it running? squeue -j {job})")
    names = {socket.gethostname(), socket.gethostname().split(".")[0], os.environ.get("SLURMD_NODENAME", "")}
    here = next((h for h in cpus if h in names), "")
    hosts = tuple(sorted(cpus, key=lambda h: h != here))
    return Allocation(job, hosts, cpus, here)


def place(plan, alloc: Allocation) -> Placement:
    """Each node's host (see the module's doc), or a UsageError of one line
    when a node or a network cannot run there."""
    hosts, turn = {}, 0
    for node in plan.nodes:
        if node.host and node.host not in alloc.cpus:
            raise UsageError(f"node {node.name}: host {node.host!r} is not a host of Slurm job {alloc.job} "
                             f"({', '.join(alloc.hosts)})")
        if not node.host:
            turn += 1
        hosts[node.name] = node.host or alloc.hosts[(turn - 1) % len(alloc.hosts)]
        if node.smp > alloc.cpus[hosts[node.name]]:
            raise UsageError(f"node {node.name}: {node.smp} vCPUs, but Slurm job {alloc.job} has "
                             f"{alloc.cpus[hosts[node.name]]} CPU(s) on {hosts[node.name]}: srun would "
                             f"refuse its step (allocate more, e.g. salloc -c {node.smp})")
    for net in plan.networks.values():
        if not net.linked or net.kind == "multicast":
            continue
        on = [h for h in alloc.hosts if h in {hosts[name] for name, _ in net.members}]
        if on != [alloc.here]:
            kind = "a point-to-point link" if net.kind == "p2p" else "a VDE switch"
            raise UsageError(f"network {net.name!r} is {kind}, a socket of this host, but with --srun its NICs "
                             f"land on {', '.join(on)}: only multicast networks span hosts")
    return Placement(alloc, hosts)


class Step:
    """A node's QEMU as a step of a job (RUN/NAME/NODE.srun)."""

    def __init__(self, local_dir: Path, node: str, job: str = "", name: str = "", host: str = "",
                 local: bool = True):
        self.local_dir, self.node = local_dir, node
        self.record = local_dir / f"{node}.srun"
        self.job, self.name, self.host, self.local, self.srun_pid = job, name, host, local, 0
        if not job and self.record.exists():
            saved = json.loads(self.record.read_text())
            self.job, self.name, self.host = saved["job"], saved["name"], saved["host"]
            self.local, self.srun_pid = saved["local"], saved["srun_pid"]

    @staticmethod
    def planned(local_dir: Path, cluster: str, node: str, where: Placement):
        host = where.hosts[node]
        return Step(local_dir, node, where.alloc.job, f"devmemsim-{cluster}-{node}", host,
                    host == where.alloc.here)

    @staticmethod
    def recorded(local_dir: Path, node: str):
        """The Step of a node that runs as one, else None."""
        return Step(local_dir, node) if (local_dir / f"{node}.srun").exists() else None

    @property
    def dir(self) -> Path:
        """The node's run directory on its host."""
        return self.local_dir if self.local else remote.RemoteNode(self.local_dir, self.node, self.host).dir

    def srun_argv(self, qemu: list, smp: int) -> list:
        """srun starting qemu (its pid in NODE.qemu-pid, then exec: QEMU is
        slurmstepd's child)."""
        return ["srun", f"--jobid={self.job}", "--overlap", "--nodes=1", "--ntasks=1",
                f"--nodelist={self.host}", f"--cpus-per-task={smp}", f"--job-name={self.name}",
                f"--chdir={self.dir}", "sh", "-c", f'echo $$ >{self.node}.qemu-pid && exec "$@"', "sh", *qemu]

    def start(self, qemu: list, smp: int, env: dict, config: Path, pcap: str) -> subprocess.Popen:
        """Start the step; returns the node's process here (srun for a local
        node, the forwarding ssh for a node on another host)."""
        there = None
        if not self.local:
            there = remote.RemoteNode(self.local_dir, self.node, self.host)
            _prepare(there, config, pcap)
        # QEMU's output (srun's): NODE.log, or beside the forwarding ssh's NODE.log
        out = self.local_dir / f"{self.node}.{'log' if self.local else 'qemu.log'}"
        with open(out, "w") as logf:
            p = subprocess.Popen(self.srun_argv(qemu, smp), stdin=subprocess.DEVNULL, stdout=logf,
                                 stderr=subprocess.STDOUT, start_new_session=True, env=env)
        self.srun_pid = p.pid
        self.record.write_text(json.dumps({"job": self.job, "name": self.name, "host": self.host,
                                           "local": self.local, "srun_pid": p.pid}) + "\n")
        (self.local_dir / f"{self.node}.pid").write_text(str(p.pid))
        if self.local:
            self._wait_local(p, out)
            return p
        there.qemu_pid, there.pcap = self._wait_remote(p, out), pcap
        there.save()
        fwd = there.forward()
        (self.local_dir / f"{self.node}.pid").write_text(str(fwd.pid))
        return fwd

    def _fail(self, p, out: Path, what: str):
        self.end(0)
        lines = out.read_text(errors="replace").strip().splitlines()
        raise Failure(f"{self.node}: {what}: {lines[-1] if lines else 'no message'}")

    def _wait_local(self, p, out: Path) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while not all((self.local_dir / f"{self.node}.{s}").exists() for s in ("ctl", "qmp")):
            if p.poll() is not None:
                self._fail(p, out, f"srun's step ended (exit {p.returncode})")
            if time.monotonic() > deadline:
                self._fail(p, out, f"srun did not start the step in {START_TIMEOUT:.0f} s")
            time.sleep(0.1)

    def _wait_remote(self, p, out: Path) -> int:
        d, n = shlex.quote(str(self.dir)), self.node
        script = (f"cd {d} && i=0; until [ -S {n}.ctl ] && [ -S {n}.qmp ] && [ -s {n}.qemu-pid ]; do "
                  f"i=$((i + 1)); [ $i -lt {int(START_TIMEOUT * 10)} ] || exit 1; sleep 0.1; done; cat {n}.qemu-pid")
        res = remote.run(self.host, script, timeout=START_TIMEOUT + 30)
        if res.returncode or p.poll() is not None:
            self._fail(p, out, f"srun did not start the step on {self.host}")
        return int(res.stdout.split()[-1])

    def step_id(self) -> str:
        """JOB.STEP while the step runs, else ""."""
        try:
            res = subprocess.run(["squeue", "-h", "-s", "-j", self.job, "-o", "%i|%j"],
                                 capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        for line in res.stdout.splitlines():
            sid, _, name = line.partition("|")
            if name == self.name:
                return sid
        return ""

    def running(self) -> bool:
        if not self.srun_pid:
            return False
        try:  # alive and not a zombie; it may go between the two looks
            os.kill(self.srun_pid, 0)
            return Path(f"/proc/{self.srun_pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False

    def end(self, timeout: float = END_TIMEOUT) -> None:
        """Wait for srun to exit (its QEMU powered off); else cancel the step
        (scancel JOB.STEP) and kill srun."""
        deadline = time.monotonic() + timeout
        while self.running() and time.monotonic() < deadline:
            time.sleep(0.1)
        sid = self.step_id()
        if sid:
            subprocess.run(["scancel", sid], capture_output=True, timeout=30)
        if self.running():
            os.kill(self.srun_pid, signal.SIGTERM)
            deadline = time.monotonic() + 10
            while self.running() and time.monotonic() < deadline:
                time.sleep(0.1)
            if self.running():
                os.kill(self.srun_pid, signal.SIGKILL)

    def status(self) -> dict:
        return {"slurm": {"job": self.job, "step": self.step_id(), "name": self.name, "host": self.host}}


def _prepare(there: remote.RemoteNode, config: Path, pcap: str) -> None:
    """The node's run directory on its host, with its configuration."""
    d, n = shlex.quote(str(there.dir)), there.node
    script = (f"rm -rf {d} && mkdir -p -m 700 {d} && cat >{d}/{n}.toml"
              + (f" && mkdir {shlex.quote(str(there.pcap_dir))}" if pcap else ""))
    res = remote.run(there.host, script, stdin=config.read_bytes())
    if res.returncode:
        raise Failure(f"{n}: preparing its directory on host {there.host!r} failed: "
                      f"{remote.last_line(res.stderr)}")
