"""--srun (tools/devmemsim/srun.py) without Slurm: where a plan's nodes run
on a job's hosts (own host, round robin, this host first), the one-line
refusals (outside an allocation, a host not of the job, more vCPUs than the
job has there, a p2p link or switch whose NICs leave this host) and the
srun command line. No guest boots, no Slurm daemons."""

import os
import subprocess
import unittest
from pathlib import Path

from clilib import LAUNCHER, FileCase
from devmemsim import clusterfile, srun
from devmemsim.errors import UsageError

JOB = srun.Allocation("42", ("h1", "h2"), {"h1": 2, "h2": 4}, "h1")

SPAN = """
[nodes]
names = ["a", "b", "c"]
networks = ["span"]
smp = 1

[node.c]
host = "h1"

[[network]]
name = "span"
kind = "multicast"
group = "239.255.10.1"
"""


class Srun(FileCase):
    def test_outside_an_allocation_is_one_line(self):
        env = {k: v for k, v in os.environ.items() if k != "SLURM_JOB_ID"}
        for cmd in (["boot", "--nodes", "2"], ["run", "--nodes", "2"], ["demo"]):
            res = subprocess.run([str(LAUNCHER), *cmd, "--srun", *(["--", "true"] if cmd[0] == "run" else [])],
                                 text=True, capture_output=True, timeout=60, env=env)
            self.assertEqual(res.returncode, 2, res.stderr)
            self.assertEqual(res.stderr, "devmemsim: --srun: not inside a Slurm allocation (SLURM_JOB_ID is "
                                         "unset; run under salloc or sbatch)\n")

    def test_round_robin_this_host_first_and_own_host(self):
        plan = clusterfile.load(self.write(SPAN))
        self.assertEqual(srun.place(plan, JOB).hosts, {"a": "h1", "b": "h2", "c": "h1"})

    def test_default_cluster_on_one_host_is_local(self):
        one = srun.Allocation("7", ("vm",), {"vm": 2}, "vm")
        self.assertEqual(srun.place(clusterfile.default_plan(2, "", [], "1G", 2), one).hosts,
                         {"node0": "vm", "node1": "vm"})

    def assertRefused(self, plan, alloc, message):
        with self.assertRaises(UsageError) as cm:
            srun.place(plan, alloc)
        self.assertEqual(str(cm.exception), message)

    def test_refusals(self):
        self.assertRefused(clusterfile.default_plan(2, "", [], "1G", 1), JOB,
                           "network 'data' is a point-to-point link, a socket of this host, but with --srun its "
                           "NICs land on h1, h2: only multicast networks span hosts")
        self.assertRefused(clusterfile.default_plan(3, "", [], "1G", 1), JOB,
                           "network 'data' is a VDE switch, a socket of this host, but with --srun its NICs "
                           "land on h1, h2: only multicast networks span hosts")
        away = srun.Allocation("42", ("h2",), {"h2": 4}, "")
        self.assertRefused(clusterfile.default_plan(2, "", [], "1G", 1), away,
                           "network 'data' is a point-to-point link, a socket of this host, but with --srun its "
                           "NICs land on h2: only multicast networks span hosts")
        self.assertRefused(clusterfile.load(self.write(SPAN.replace('host = "h1"', 'host = "h9"'))), JOB,
                           "node c: host 'h9' is not a host of Slurm job 42 (h1, h2)")
        self.assertRefused(clusterfile.load(self.write(SPAN.replace("smp = 1", "smp = 3"))), JOB,
                           "node a: 3 vCPUs, but Slurm job 42 has 2 CPU(s) on h1: srun would refuse its step "
                           "(allocate more, e.g. salloc -c 3)")

    def test_srun_command_line(self):
        plan = clusterfile.load(self.write(SPAN))
        step = srun.Step.planned(Path("/run/x"), "span", "b", srun.place(plan, JOB))
        self.assertFalse(step.local)
        self.assertEqual(step.srun_argv(["qemu", "-m", "512M"], 1),
                         ["srun", "--jobid=42", "--overlap", "--nodes=1", "--ntasks=1", "--nodelist=h2",
                          "--cpus-per-task=1", "--job-name=devmemsim-span-b", "--chdir=/run/x/host-b",
                          "sh", "-c", 'echo $$ >b.qemu-pid && exec "$@"', "sh", "qemu", "-m", "512M"])

    def test_cpu_ids(self):
        self.assertEqual([srun._count(s) for s in ("0", "0-1", "0-3,8,10-11")], [1, 2, 7])


if __name__ == "__main__":
    unittest.main()
