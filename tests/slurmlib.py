"""A one-node Slurm cluster for tests, started in a temporary directory
(Debian's slurm-wlm and munge: munged with its own key and socket,
slurmctld and slurmd on free ports, as root); tests/sweep/test_slurm.py
and tests/guest/test_slurm_nodes.py start it. Its tools find it through
SLURM_CONF=DIR/slurm.conf (OneNodeSlurm.env)."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue")


def skip_without_slurm(*tools) -> None:
    """Exit 77 (meson's skip) unless root, with the daemons and tools."""
    missing = [d for d in (*DAEMONS, *tools) if not shutil.which(d)]
    if missing or os.geteuid() != 0:
        print(f"SKIP: needs root and {', '.join(missing) or 'Slurm'} (Debian: slurm-wlm, munge)")
        sys.exit(77)

SLURM_CONF = """ClusterName=dmstest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
AuthInfo=socket={dir}/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=dmstest Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, ok, timeout=60):
    deadline = time.monotonic() + timeout
    while not ok():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def running(pid):
    """Alive and not a zombie (daemons are reparented; nobody may reap them)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class OneNodeSlurm:
    """munged, slurmctld and slurmd of a private cluster in DIR."""

    def __init__(self, d: Path):
        self.dir = d
        d.mkdir()
        self.env = {**os.environ, "SLURM_CONF": str(d / "slurm.conf")}
        for sub in ("state", "spool"):
            (d / sub).mkdir()
        key = d / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        (d / "slurm.conf").write_text(SLURM_CONF.format(
            host=socket.gethostname().split(".")[0], ctld_port=free_port(), slurmd_port=free_port(),
            dir=d, cpus=os.cpu_count()))

    def start(self):
        d = self.dir
        subprocess.run(["munged", "--force", f"--socket={d}/munge.socket", f"--key-file={d}/munge.key",
                        f"--pid-file={d}/munged.pid", f"--log-file={d}/munged.log",
                        f"--seed-file={d}/munged.seed"], check=True)
        subprocess.run(["slurmctld", "-f", str(d / "slurm.conf")], check=True, env=self.env)
        subprocess.run(["slurmd", "-f", str(d / "slurm.conf")], check=True, env=self.env)
        wait_for("the node to be idle", lambda: "idle" in self.run("sinfo", "-h", "-o", "%T").stdout)

    def run(self, *argv):
        return subprocess.run(argv, capture_output=True, text=True, env=self.env)

    def stop(self):
        """Each daemon, by its pid file, and wait until it is gone."""
        for name in ("slurmd", "slurmctld", "munged"):
            try:
                pid = int((self.dir / f"{name}.pid").read_text())
                os.kill(pid, signal.SIGTERM)
            except (OSError, ValueError):
                continue
            wait_for(f"{name} to exit", lambda: not running(pid), 30)

    def logs(self):
        return "\n".join(f"--- {p.name}\n{p.read_text()[-2000:]}" for p in self.dir.glob("*.log"))
