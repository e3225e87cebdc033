"""devmemsim sweep --slurm on a one-node Slurm cluster started for the test
in a temporary directory (Debian's slurm-wlm and munge: munged with its own
key and socket, slurmctld and slurmd on free ports, as root), then
--collect. Skipped (exit 77) without those daemons or root.

Run by meson with the dms-sim binary as the first argument."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from clilib import cli  # noqa: E402
from sweeplib import FOUR_POINTS, rows  # noqa: E402

DMS_SIM = sys.argv.pop(1)
DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue")

SLURM_CONF = """ClusterName=dmssweeptest
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
PartitionName=sweeptest Nodes={host} Default=YES MaxTime=INFINITE State=UP
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


class Slurm(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="dms-slurm-")
        self.dir = Path(self.tmp.name)
        self.cluster = OneNodeSlurm(self.dir / "slurm")
        # devmemsim's sbatch finds the cluster through the environment.
        os.environ["SLURM_CONF"] = self.cluster.env["SLURM_CONF"]

    def tearDown(self):
        del os.environ["SLURM_CONF"]
        self.cluster.stop()
        self.tmp.cleanup()

    def test_sweep_runs_as_a_job_array_and_collects(self):
        self.cluster.start()
        path, out = self.dir / "s.toml", self.dir / "out"
        path.write_text(FOUR_POINTS)
        res = cli("sweep", str(path), "--out", str(out), "--slurm", "--time", "5")
        self.assertEqual(res.returncode, 0, res.stderr + self.cluster.logs())
        self.assertIn("submitted Slurm job", res.stdout)
        job = (out / "slurm" / "job").read_text().strip()
        wait_for("the job array", lambda: not self.cluster.run("squeue", "-h", "-j", job).stdout.strip(), 120)
        self.assertEqual(sorted(p.name for p in (out / "slurm").glob("*.out")),
                         [f"{job}_{i}.out" for i in range(4)])
        res = cli("sweep", "--collect", str(out))
        self.assertEqual(res.returncode, 0, res.stderr + self.cluster.logs())
        table = rows(out)
        self.assertEqual([r["status"] for r in table], ["ok"] * 4)
        mine = json.loads((out / "points" / "0003" / "result.json").read_text())
        self.assertEqual(mine["flows"][0]["mtu"], 9000)
        self.assertEqual(table[3]["flows.0.mode"], "bounce")
        # Nothing is missing: --resume submits no second job.
        res = cli("sweep", str(path), "--out", str(out), "--slurm", "--resume")
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn("every point", res.stderr)
        self.assertEqual((out / "slurm" / "job").read_text().strip(), job)


def main():
    missing = [d for d in DAEMONS if not shutil.which(d)]
    if missing or os.geteuid() != 0:
        print(f"SKIP: needs root and {', '.join(missing) or 'Slurm'} (Debian: slurm-wlm, munge)")
        sys.exit(77)
    unittest.main(argv=sys.argv)


if __name__ == "__main__":
    main()
