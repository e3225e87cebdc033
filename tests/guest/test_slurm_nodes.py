"""Cluster nodes as Slurm job steps (`--srun`), on a one-node Slurm cluster
started for the test (tests/slurmlib.py: private munged, slurmctld and
slurmd in a temporary directory). Checks: --srun outside an allocation is
one line (exit 2); a node with more vCPUs than the job's CPUs is refused
before anything starts; Ctrl-C during `run --srun` leaves no step and no
QEMU; inside an allocation (`salloc --no-shell`, then the CLI with its
SLURM_JOB_ID) both nodes' QEMUs are steps of the job (squeue -s lists
devmemsim-CLUSTER-NODE, QEMU's parent is slurmstepd), status shows them, a
devmem transfer between the nodes is verified, and after stop no step and
no QEMU is left; `salloc ... devmemsim demo --srun` (docs/clusters.md's recipe)
verifies its transfers. Needs root and Slurm (exit 77 otherwise). A few minutes
under TCG."""

import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from guestlib import complaints
from clilib import LAUNCHER
from devmemsim.cluster import Cluster
from devmemsim.transfer import transfer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from slurmlib import OneNodeSlurm, skip_without_slurm, wait_for  # noqa: E402

NAME = "slurm"
NODES = ("sa", "sb")
NBYTES = 8 << 20
CLUSTER = """
[nodes]
names = ["sa", "sb"]
memory = "512M"
smp = {smp}
"""


def qemus(run_dir: Path) -> list:
    """Pids of the QEMUs whose command line names run_dir."""
    out = []
    for p in Path("/proc").iterdir():
        try:
            argv = (p / "cmdline").read_bytes().decode(errors="replace").split("\0") if p.name.isdigit() else []
        except OSError:
            continue
        if argv and argv[0].endswith("qemu-system-x86_64") and any(str(run_dir) + "/" in a for a in argv):
            out.append(int(p.name))
    return out


class SlurmNodes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = Path(tempfile.mkdtemp(prefix="dms-srun-"))
        cls.slurm = OneNodeSlurm(cls.dir / "slurm")
        cls.env = {k: v for k, v in cls.slurm.env.items() if not k.startswith("SLURM_JOB")}
        cls.jobs = []
        try:
            cls.slurm.start()
            for smp in (1, 2):
                (cls.dir / f"smp{smp}.toml").write_text(CLUSTER.format(smp=smp))
        except BaseException:
            cls.slurm.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.cli("stop", "--name", NAME)
        for job in cls.jobs:
            cls.slurm.run("scancel", job)
        print(cls.slurm.run("squeue", "-s").stdout, flush=True)
        cls.slurm.stop()
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def cli(cls, *args, job="", timeout=600):
        env = {**cls.env, **({"SLURM_JOB_ID": job} if job else {})}
        return subprocess.run([str(LAUNCHER), *args], env=env, text=True, capture_output=True, timeout=timeout)

    def allocate(self, cpus: int) -> str:
        """A job of `cpus` CPUs on the node (salloc --no-shell), cancelled
        when the test ends; its id."""
        res = self.slurm.run("salloc", "--no-shell", "--immediate=60", "-n1", f"-c{cpus}", "--job-name=dms-srun-test")
        m = re.search(r"Granted job allocation (\d+)", res.stderr + res.stdout)
        if not m:
            raise AssertionError(f"salloc: {res.stderr}\n{self.slurm.logs()}")
        self.jobs.append(m.group(1))
        self.addCleanup(self.slurm.run, "scancel", m.group(1))
        return m.group(1)

    def steps(self, job: str) -> list:
        """The devmemsim steps of job: [(JOB.STEP, name)]."""
        res = self.slurm.run("squeue", "-h", "-s", "-j", job, "-o", "%i|%j")
        return [tuple(line.split("|")) for line in res.stdout.split() if "|devmemsim-" in line]

    def assertNothingLeft(self, job: str, run_dir: Path):
        """No step of job and no QEMU of run_dir (a cancelled step may take
        a moment to leave squeue)."""
        try:
            wait_for("the steps to end", lambda: not self.steps(job) and not qemus(run_dir), 30)
        except AssertionError:
            self.fail(f"left running: steps {self.steps(job)}, QEMUs {qemus(run_dir)}")

    def test_a_outside_an_allocation_is_one_line(self):
        res = self.cli("boot", "--name", NAME, "--cluster", str(self.dir / "smp1.toml"), "--srun")
        self.assertEqual(res.returncode, 2, res.stdout + res.stderr)
        self.assertEqual(res.stderr, "devmemsim: --srun: not inside a Slurm allocation (SLURM_JOB_ID is unset; "
                                     "run under salloc or sbatch)\n")

    def test_b_more_vcpus_than_the_job_has_is_one_line(self):
        job = self.allocate(1)
        res = self.cli("demo", "--cluster", str(self.dir / "smp2.toml"), "--srun", "--mib", "8", job=job)
        self.assertEqual(res.returncode, 2, res.stdout + res.stderr)
        self.assertRegex(res.stderr, rf"^devmemsim: node sa: 2 vCPUs, but Slurm job {job} has 1 CPU\(s\) on "
                                     r"\S+: srun would refuse its step \(allocate more, e\.g\. salloc -c 2\)\n$")
        self.assertEqual(self.steps(job), [])

    def test_c_ctrl_c_leaves_nothing(self):
        job = self.allocate(2)
        p = subprocess.Popen([str(LAUNCHER), "run", "--cluster", str(self.dir / "smp1.toml"), "--srun", "--",
                              "sleep 600"], env={**self.env, "SLURM_JOB_ID": job}, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        run_dir = Cluster(f"run-{p.pid}").dir  # the launcher execs the CLI
        wait_for("the nodes' steps and QEMUs",
                 lambda: len(self.steps(job)) == 2 and len(qemus(run_dir)) == 2 or p.poll() is not None, 600)
        if p.poll() is not None:
            self.fail("run ended before Ctrl-C: " + "\n".join(p.communicate()))
        time.sleep(10)  # booting or running `sleep 600`: Ctrl-C either way
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=300)
        self.assertEqual(p.returncode, 130, out + err)
        self.assertNothingLeft(job, run_dir)
        shutil.rmtree(run_dir, ignore_errors=True)

    def test_d_nodes_are_steps_and_transfer(self):
        job = self.allocate(2)
        started = time.monotonic()
        res = self.cli("boot", "--name", NAME, "--cluster", str(self.dir / "smp1.toml"), "--srun", job=job,
                       timeout=1800)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr + self.slurm.logs())
        print(f"booted as steps of job {job} in {time.monotonic() - started:.0f} s", flush=True)
        cl = Cluster(NAME)
        steps = self.steps(job)
        self.assertEqual(sorted(name for _, name in steps), [f"devmemsim-{NAME}-{n}" for n in NODES])
        print("squeue -s:", steps, flush=True)
        for node in NODES:
            pid = int((cl.dir / f"{node}.qemu-pid").read_text())
            ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            self.assertEqual(Path(f"/proc/{ppid}/comm").read_text().strip(), "slurmstepd", node)
            self.assertIn("qemu-system", Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"))
        res = self.cli("status", "--json")
        mine = [c for c in json.loads(res.stdout) if c["cluster"] == NAME][0]
        self.assertEqual(sorted((n["node"], n["slurm"]["step"]) for n in mine["nodes"]),
                         sorted((name.rsplit("-", 1)[1], sid) for sid, name in steps))
        tx, rx = transfer(cl, "devmem", NBYTES, *NODES)
        for run in (tx, rx):
            self.assertTrue(run["verified"], run)
            self.assertEqual(run["payload_bytes"], NBYTES, run)
        print(f"devmem sa -> sb: {NBYTES} B at {tx['throughput_bps'] / 1e6:.0f} Mbit/s, verified", flush=True)
        for node in NODES:
            res = self.cli("exec", "--name", NAME, node, "--", "dmesg")
            self.assertEqual(complaints(res.stdout), [], node)
        res = self.cli("stop", "--name", NAME, "--keep", timeout=300)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertNothingLeft(job, cl.dir)
        shutil.rmtree(cl.dir, ignore_errors=True)


    def test_e_demo_under_salloc(self):
        """docs/clusters.md's recipe: salloc runs the CLI inside its allocation."""
        res = self.slurm.run("salloc", "--immediate=60", "-n1", "-c2", "--job-name=dms-srun-demo", str(LAUNCHER),
                             "demo", "--cluster", str(self.dir / "smp1.toml"), "--srun", "--mode", "devmem",
                             "--mib", "8")
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr + self.slurm.logs())
        rows = [line for line in res.stdout.splitlines() if line.startswith("devmem ")]
        self.assertEqual([row.split()[-1] for row in rows], ["yes", "yes"], res.stdout)
        self.assertRegex(res.stderr, r"salloc: Granted job allocation \d+")
        print("demo under salloc:", rows, flush=True)


def main():
    skip_without_slurm("salloc", "srun", "scancel")
    unittest.main(argv=sys.argv, verbosity=2)


if __name__ == "__main__":
    main()
