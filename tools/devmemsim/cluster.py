"""Launch, reach and stop clusters of emulated nodes (one QEMU each).

A cluster lives in RUN/<name>/: per node NODE.ctl (agent socket), NODE.qmp,
NODE.console (serial console), NODE.log (QEMU's stdout/stderr), NODE.pid
and NODE.toml (the node configuration as the model reads it). Nodes are
named node0..nodeN-1; node i's devmemsim-nic has MAC 52:54:00:d5:00:ii and,
in the guest, address 10.10.0.(i+1)/24. The data link:
  2 nodes: -netdev stream over RUN/<name>/link.sock (node0 listens)
  3+     : a VDE switch on RUN/<name>/vde (vde_switch)
The management NIC is -netdev user,restrict=on (no way out of the host);
its only host forward is 127.0.0.1:<port> -> guest port 22.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .agent import Agent
from .build import BUILD, Artifacts, log
from .errors import Failure, UsageError
from .paths import run_root

BOOT_TIMEOUT = 300.0  # TCG boots in ~10-30 s; a loaded machine is slower


@dataclass
class NodeSpec:
    name: str
    index: int
    config: Path  # as the model reads it


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


# NICs a benchmark can compare with devmemsim-nic on extra links between two
# nodes: (device, tag, MAC byte 4).
COMPARE_NICS = (("e1000e", "e1000e", 0xe1), ("virtio-net-pci", "virtio", 0xf1))


def qemu_argv(art: Artifacts, d: Path, node: NodeSpec, nodes: int, accel: str, memory: str, smp: int,
              compare_nics: bool = False) -> list:
    n = node.name
    mac_mgmt = f"52:54:00:00:ff:{node.index:02x}"
    mac_data = f"52:54:00:d5:00:{node.index:02x}"
    argv = [
        str(art.qemu),
        "-name", f"devmemsim-{n}",
        "-M", "q35",
        "-accel", accel,
        "-cpu", "max" if accel == "tcg" else "host",
        "-smp", str(smp),
        "-m", memory,
        "-nodefaults", "-no-user-config", "-nographic", "-no-reboot",
        "-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
        "-kernel", str(art.bzimage),
        # tsc=reliable: TCG's TSC follows the host clock; without it the
        # clocksource watchdog's cross-CPU skew check can spin forever
        # against stop_machine on the other vCPU early in boot (seen about
        # once in 20 two-node boots: both vCPUs busy, console stopped).
        "-append", f"console=ttyS0 root=/dev/vda rw init=/sbin/devmemsim-init panic=-1 "
                   f"tsc=reliable devmemsim.node={n} devmemsim.index={node.index}",
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
        "-device", f"virtio-net-pci,netdev=mgmt,mac={mac_mgmt},romfile=",
        # The node: NIC and GPU under one PCIe switch, so P2P stays below it.
        "-object", f"devmemsim-node,id=dms,config={node.config},stats-json={d / (n + '.stats.json')}",
        "-device", "pcie-root-port,id=rp0,bus=pcie.0,chassis=1,slot=0",
        "-device", "x3130-upstream,id=up0,bus=rp0",
        "-device", "xio3130-downstream,id=dn0,bus=up0,chassis=2,slot=0",
        "-device", "xio3130-downstream,id=dn1,bus=up0,chassis=3,slot=1",
        "-device", "devmemsim-gpu,node=dms,bus=dn1",
    ]
    nic = f"devmemsim-nic,node=dms,bus=dn0,mac={mac_data}"
    if nodes == 2:
        sock = d / "link.sock"
        if node.index == 0:
            argv += ["-netdev", f"stream,id=data,server=on,addr.type=unix,addr.path={sock}"]
        else:
            argv += ["-netdev", f"stream,id=data,server=off,reconnect-ms=500,addr.type=unix,addr.path={sock}"]
        nic += ",netdev=data"
    elif nodes > 2:
        argv += ["-netdev", f"vde,id=data,sock={d / 'vde'}"]
        nic += ",netdev=data"
    argv += ["-device", nic]
    for model, tag, byte in COMPARE_NICS if compare_nics else ():
        sock = d / f"link-{tag}.sock"
        server = "server=on" if node.index == 0 else "server=off,reconnect-ms=500"
        argv += ["-netdev", f"stream,id={tag},{server},addr.type=unix,addr.path={sock}",
                 "-device", f"{model},netdev={tag},mac=52:54:00:{byte:02x}:00:{node.index:02x},romfile="]
    return argv


class Cluster:
    def __init__(self, name: str):
        if not name or "/" in name or name.startswith("."):
            raise UsageError(f"bad cluster name {name!r}")
        self.name = name
        self.dir = run_root() / name
        self.procs = {}  # nodes this process started, so it can reap them

    def node_names(self) -> list:
        return sorted(p.stem for p in self.dir.glob("node*.pid"))

    def pid(self, node: str) -> int:
        if node in self.procs:
            p = self.procs[node]
            return p.pid if p.poll() is None else 0
        try:
            pid = int((self.dir / f"{node}.pid").read_text())
            os.kill(pid, 0)
            return pid
        except (OSError, ValueError):
            return 0

    def running(self) -> bool:
        return any(self.pid(n) for n in self.node_names())

    def boot(self, art: Artifacts, nodes: int, config: str, sets: list, accel: str, memory: str, smp: int,
             compare_nics: bool = False) -> dict:
        """Start every node and wait until each agent answers; returns
        {node: hello}. On failure every started node is stopped."""
        if self.running():
            raise UsageError(f"cluster {self.name!r} is already running (devmemsim stop --name {self.name})")
        if self.dir.exists():
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True, mode=0o700)
        os.chmod(self.dir.parent, 0o700)
        specs = [NodeSpec(f"node{i}", i, node_config(config, sets, i, self.dir / f"node{i}.toml")) for i in range(nodes)]
        procs = self.procs
        try:
            if nodes > 2:
                self._start_vde()
            for spec in specs:
                procs[spec.name] = self._start(art, spec, nodes, accel, memory, smp, compare_nics)
            hellos = {}
            deadline = time.monotonic() + BOOT_TIMEOUT
            for spec in specs:
                p = procs[spec.name]
                a = Agent(self.dir / f"{spec.name}.ctl")
                try:
                    hellos[spec.name] = a.connect(deadline, alive=lambda p=p: p.poll() is None)
                except Failure as e:
                    raise Failure(f"{spec.name}: {e}\n{self._diagnose(spec.name, p)}") from None
                finally:
                    a.close()
            return hellos
        except BaseException:
            self.stop(quiet=True)
            raise

    def _start_vde(self):
        vde = shutil.which("vde_switch")
        if not vde:
            raise Failure("more than two nodes need a VDE switch: apt-get install vde2")
        with open(self.dir / "vde.log", "w") as logf:
            p = subprocess.Popen([vde, "--sock", str(self.dir / "vde"), "--mod", "0700"],
                                 stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
        (self.dir / "vde.pid").write_text(str(p.pid))
        for _ in range(50):
            if (self.dir / "vde" / "ctl").exists():
                return
            time.sleep(0.1)
        raise Failure(f"vde_switch did not start; see {self.dir / 'vde.log'}")

    def _start(self, art: Artifacts, spec: NodeSpec, nodes: int, accel: str, memory: str, smp: int,
               compare_nics: bool):
        argv = qemu_argv(art, self.dir, spec, nodes, accel, memory, smp, compare_nics)
        (self.dir / f"{spec.name}.cmdline").write_text(" ".join(argv) + "\n")
        logf = open(self.dir / f"{spec.name}.log", "w")
        try:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            logf.close()
        (self.dir / f"{spec.name}.pid").write_text(str(p.pid))
        # A bad device or option makes QEMU exit at once: report its stderr.
        for _ in range(10):
            if p.poll() is not None:
                raise Failure(f"{spec.name}: QEMU failed to start (exit {p.returncode}):\n{self._qemu_log(spec.name)}")
            time.sleep(0.05)
        return p

    def _qemu_log(self, node: str) -> str:
        try:
            return (self.dir / f"{node}.log").read_text(errors="replace").strip()
        except OSError:
            return ""

    def _diagnose(self, node: str, p) -> str:
        lines = []
        if p.poll() is not None:
            lines.append(f"QEMU exited with status {p.returncode}: {self._qemu_log(node)}")
        try:
            tail = (self.dir / f"{node}.console").read_text(errors="replace").splitlines()[-25:]
            lines.append("last console lines:\n  " + "\n  ".join(tail))
        except OSError:
            pass
        return "\n".join(lines)

    def agent(self, node: str) -> Agent:
        if not self.pid(node):
            known = ", ".join(self.node_names()) or "none"
            raise UsageError(f"no running node {node!r} in cluster {self.name!r} (running: {known})")
        a = Agent(self.dir / f"{node}.ctl")
        a.connect(time.monotonic() + 30.0, alive=lambda: bool(self.pid(node)))
        return a

    def stop(self, quiet: bool = False, timeout: float = 30.0):
        """Power every node off through its agent; kill what does not exit."""
        for node in self.node_names():
            pid = self.pid(node)
            if not pid:
                continue
            try:
                a = Agent(self.dir / f"{node}.ctl")
                a.connect(time.monotonic() + 5.0, alive=lambda n=node: bool(self.pid(n)))
                a.poweroff()
                a.close()
            except (Failure, OSError):
                pass
        deadline = time.monotonic() + timeout
        for node in self.node_names():
            while self.pid(node) and time.monotonic() < deadline:
                time.sleep(0.1)
            pid = self.pid(node)
            if pid:
                if not quiet:
                    log(f"{node} did not power off; killing QEMU {pid}")
                os.kill(pid, signal.SIGKILL)
        vde = self.dir / "vde.pid"
        if vde.exists():
            try:
                os.kill(int(vde.read_text()), signal.SIGTERM)
            except (OSError, ValueError):
                pass

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
        """Remove the run directory of a stopped cluster."""
        if not self.running():
            shutil.rmtree(self.dir, ignore_errors=True)

    def status(self) -> list:
        return [{"node": n, "pid": self.pid(n), "dir": str(self.dir)} for n in self.node_names()]


def list_clusters() -> list:
    root = run_root()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir())


def dumps(obj) -> str:
    return json.dumps(obj, indent=2)
