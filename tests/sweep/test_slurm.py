"""devmemsim sweep --slurm on a one-node Slurm cluster started for the test
(tests/slurmlib.py), then --collect. Skipped (exit 77) without those daemons or root.

Run by meson with the dms-sim binary as the first argument."""

import json
import os
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from clilib import cli  # noqa: E402
from slurmlib import OneNodeSlurm, skip_without_slurm, wait_for  # noqa: E402
from sweeplib import FOUR_POINTS, rows  # noqa: E402

DMS_SIM = sys.argv.pop(1)


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
        res = cli("sweep", str(path), "--output", str(out), "--slurm", "--time", "5")
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
        res = cli("sweep", str(path), "--output", str(out), "--slurm", "--resume")
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn("every point", res.stderr)
        self.assertEqual((out / "slurm" / "job").read_text().strip(), job)


def main():
    skip_without_slurm()
    unittest.main(argv=sys.argv)


if __name__ == "__main__":
    main()
