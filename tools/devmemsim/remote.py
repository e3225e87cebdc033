"""Nodes on other hosts (a cluster file's `host = "..."`): the node's QEMU
runs there, started through ssh, and this host reaches it through ssh's
UNIX-socket forwarding.

ssh is the user's own (`ssh`, with their ~/.ssh/config; DEVMEMSIM_SSH
replaces the command, e.g. "ssh -F FILE"), always with BatchMode: a host
that would ask for a password, or that does not answer, is an error of one
line. The node's run directory on its host is RUN/NAME/host-NODE/, the
same path as here: the other host runs as the same user and has the same
cached QEMU, kernel and guest image and the same build tree (a shared or
copied cache and checkout). One ssh process on this host forwards
RUN/NAME/NODE.ctl and NODE.qmp to the QEMU's sockets there and lasts as
long as that QEMU (its remote command, WATCH, waits for QEMU there): its
pid is NODE.pid here, so the agent, QMP, exec, stats, status and stop work
as for a local node. QEMU does not outlive that ssh: when its session ends
(the ssh here killed, its connection closed), WATCH ends QEMU.
RUN/NAME/NODE.remote says where the node runs (host, directory, QEMU pid,
and the pcap directory here). With --pcap, QEMU writes its pcaps into
host-NODE/pcap/ there, which stop copies into the pcap directory here.
"""

import json
import os
import shlex
import subprocess
import time
from pathlib import Path

from .errors import Failure

SSH_OPTIONS = ("-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=15")
START_TIMEOUT = 30.0  # for QEMU's sockets there, and for the forwarded ones here
# What a stopped node leaves on its host that this host's tools read:
# the console, the counters written at power-off, QEMU's output (as NODE.qemu.log).
FETCHED = (("console", "console"), ("stats.json", "stats.json"), ("log", "qemu.log"))
# The forwarding ssh's remote command: it lasts as long as QEMU (pid {q}),
# and ends QEMU when the session ends. Without a pty sshd sends no SIGHUP
# and leaves the command running when the connection closes; it only
# exits itself, so the command, whose parent it was, polls its parent.
# QEMU runs in a session of its own (setsid), so nothing else ends it.
WATCH = """q={q} p=$PPID
while kill -0 $q 2>/dev/null; do
  read -r _ _ _ pp _ </proc/$$/stat
  if [ "$pp" != "$p" ]; then
    kill -TERM $q; i=0
    while kill -0 $q && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done; kill -KILL $q; exit 0
  fi 2>/dev/null
  sleep 1
done"""
PCAP_DIR = "pcap"  # in host-NODE/: where a remote node's QEMU writes its pcaps


def ssh_argv(host: str, *options) -> list:
    """ssh to host (batch mode), before the remote command."""
    base = shlex.split(os.environ.get("DEVMEMSIM_SSH", "")) or ["ssh"]
    return [*base, *SSH_OPTIONS, *options, "--", host]


def run(host: str, script: str, stdin: bytes = b"", timeout: float = 60.0) -> subprocess.CompletedProcess:
    """A shell script on host; the finished process (bytes)."""
    try:
        return subprocess.run([*ssh_argv(host), "sh -c " + shlex.quote(script)], input=stdin,
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failure(f"host {host!r}: ssh did not finish in {timeout:.0f} s") from None


def last_line(data: bytes) -> str:
    lines = data.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else "no message"


def check_hosts(nodes) -> None:
    """Every host the nodes name answers over ssh, or a Failure of one line."""
    seen = set()
    for node in nodes:
        if node.host and node.host not in seen:
            seen.add(node.host)
            res = run(node.host, "true", timeout=30.0)
            if res.returncode:
                raise Failure(f"node {node.name}: host {node.host!r} is unreachable over ssh "
                              f"(BatchMode): {last_line(res.stderr)}")


class RemoteNode:
    """A node's QEMU on its host, as RUN/NAME/NODE.remote records it."""

    def __init__(self, local_dir: Path, node: str, host: str = ""):
        self.local_dir, self.node = local_dir, node
        self.record = local_dir / f"{node}.remote"
        if not host and self.record.exists():
            saved = json.loads(self.record.read_text())
            host, self.qemu_pid, self.pcap = saved["host"], saved["pid"], saved.get("pcap", "")
        else:
            self.qemu_pid, self.pcap = 0, ""
        self.host = host
        self.dir = local_dir / f"host-{node}"  # on the host

    @staticmethod
    def recorded(local_dir: Path, node: str):
        """The RemoteNode of a node that runs on another host, else None."""
        return RemoteNode(local_dir, node) if (local_dir / f"{node}.remote").exists() else None

    @property
    def pcap_dir(self) -> Path:
        """Where the node's QEMU writes its pcaps (on the host)."""
        return self.dir / PCAP_DIR

    def start(self, argv: list, env: dict, config: Path, pcap: str) -> subprocess.Popen:
        """Start QEMU (argv, its paths in self.dir, its pcaps in
        self.pcap_dir) on the host with this host's node configuration, then
        the forwarding ssh; returns that. pcap: where stop copies the pcaps."""
        n, d = self.node, shlex.quote(str(self.dir))
        lib = shlex.quote(env.get("LD_LIBRARY_PATH", ""))
        self.pcap = pcap
        script = f"""
rm -rf {d} && mkdir -p -m 700 {d} && cd {d} && cat >{n}.toml || exit 1
{f'mkdir {PCAP_DIR} || exit 1' if pcap else ''}
LD_LIBRARY_PATH={lib} setsid {shlex.join(argv)} </dev/null >{n}.log 2>&1 &
pid=$!
echo $pid >{n}.pid
i=0
until [ -S {n}.ctl ] && [ -S {n}.qmp ]; do
  if ! kill -0 $pid 2>/dev/null; then echo "QEMU failed to start:" >&2; cat {n}.log >&2; exit 1; fi
  i=$((i + 1)); [ $i -lt {int(START_TIMEOUT * 10)} ] || {{ kill -KILL $pid; echo "QEMU made no sockets" >&2; exit 1; }}
  sleep 0.1
done
echo $pid"""
        res = run(self.host, script, stdin=config.read_bytes(), timeout=START_TIMEOUT + 30)
        if res.returncode:
            err = res.stderr.decode(errors="replace").strip()
            raise Failure(f"{n}: starting QEMU on host {self.host!r} failed: {err or 'no message'}")
        self.qemu_pid = int(res.stdout.split()[-1])
        self.save()
        return self.forward()

    def save(self) -> None:
        """Write RUN/NAME/NODE.remote (QEMU runs there, its pid known)."""
        saved = {"host": self.host, "dir": str(self.dir), "pid": self.qemu_pid, "pcap": self.pcap}
        self.record.write_text(json.dumps(saved) + "\n")

    def forward(self) -> subprocess.Popen:
        """The ssh that forwards the node's sockets here and ends QEMU
        when its session ends (WATCH)."""
        forwards = []
        for sock in ("ctl", "qmp"):
            forwards += ["-L", f"{self.local_dir / f'{self.node}.{sock}'}:{self.dir / f'{self.node}.{sock}'}"]
        argv = [*ssh_argv(self.host, "-o", "ExitOnForwardFailure=yes", "-o", "StreamLocalBindUnlink=yes",
                          *forwards), "exec sh -c " + shlex.quote(WATCH.format(q=self.qemu_pid))]
        with open(self.local_dir / f"{self.node}.log", "w") as logf:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                                 start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while not all((self.local_dir / f"{self.node}.{s}").exists() for s in ("ctl", "qmp")):
            if p.poll() is not None or time.monotonic() > deadline:
                self.kill()
                log = (self.local_dir / f"{self.node}.log").read_text(errors="replace").strip()
                raise Failure(f"{self.node}: ssh to {self.host!r} did not forward the node's sockets: "
                              f"{log.splitlines()[-1] if log else 'no message'}")
            time.sleep(0.1)
        return p

    def console_has(self, text: str) -> bool:
        """The node's console (on the host) has a line with text."""
        console = shlex.quote(str(self.dir / f"{self.node}.console"))
        return run(self.host, f"grep -qF -e {shlex.quote(text)} {console}", timeout=60.0).returncode == 0

    def kill(self) -> None:
        """Kill the QEMU on the host (a node that did not power off)."""
        if self.qemu_pid:
            run(self.host, f"kill -KILL {self.qemu_pid} 2>/dev/null || true", timeout=60.0)

    def fetch(self) -> None:
        """Copy what a stopped node left on its host (FETCHED) here, and
        its pcaps into the pcap directory."""
        for there, here in FETCHED:
            self._copy(self.dir / f"{self.node}.{there}", self.local_dir / f"{self.node}.{here}")
        if self.pcap:
            res = run(self.host, f"cd {shlex.quote(str(self.pcap_dir))} && ls", timeout=60.0)
            for name in res.stdout.decode(errors="replace").split() if res.returncode == 0 else ():
                if name.endswith(".pcap"):
                    self._copy(self.pcap_dir / name, Path(self.pcap) / name)

    def _copy(self, there: Path, here: Path) -> None:
        """A file on the host to here (streamed: a pcap may be large)."""
        part = here.with_name(here.name + ".part")
        with open(part, "wb") as f:
            try:
                status = subprocess.run([*ssh_argv(self.host), "cat " + shlex.quote(str(there))], stdout=f,
                                        stderr=subprocess.DEVNULL, timeout=600.0).returncode
            except subprocess.TimeoutExpired:
                status = -1
        if status == 0:
            part.replace(here)
        else:
            part.unlink()

    def remove(self) -> None:
        """Remove the node's run directory on its host."""
        run(self.host, f"rm -rf {shlex.quote(str(self.dir))}", timeout=60.0)
