"""devmemsim sweep: sweep-file mistakes, a local sweep against dms-sim run
by hand, a failed point, --resume after an interrupted sweep, and the data
the plots are drawn from. Every point simulates well under a second.

Run by meson with the dms-sim binary as the first argument."""

import json
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from clilib import cli  # noqa: E402
from devmemsim.paths import LAUNCHER  # noqa: E402
from sweeplib import FOUR_POINTS, rows  # noqa: E402

DMS_SIM = sys.argv.pop(1)
# Wall-clock figures differ between any two runs.
VOLATILE = ("wall_time_s", "events_per_s", "sim_gbps_per_wall_s")

FOUR_POINTS_PLOT = FOUR_POINTS + """[[plot]]
name = "goodput"
x = "driver.mtu"
y = ["goodput_bps", "flows.0.analytic_bound_bps"]
series = "traffic.mode"
"""


def flatten(report, prefix=""):
    out = {}
    for k, v in (report.items() if isinstance(report, dict) else enumerate(report)):
        if isinstance(v, (dict, list)):
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def text(v):
    """A JSON scalar as results.csv spells it."""
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


class SweepDir(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="dms-sweep-test-")
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def sweep_file(self, body, name="s.toml"):
        path = self.dir / name
        path.write_text(body)
        return path

    def assertRejected(self, body, *needles):
        path = self.sweep_file(body)
        out = self.dir / "out"
        res = cli("sweep", str(path), "--output", str(out))
        self.assertEqual(res.returncode, 2, res.stderr)
        lines = [ln for ln in res.stderr.strip().splitlines()
                 if not ln.startswith("devmemsim: waiting for another devmemsim build")]
        self.assertEqual(len(lines), 1, res.stderr)
        for needle in (str(path), *needles):
            self.assertIn(needle, lines[0])
        self.assertFalse(out.exists(), "nothing runs before the file is valid")


class Validation(SweepDir):
    def test_mistakes_get_one_line_naming_file_and_key(self):
        base = '[sweep]\nengine = "sim"\n'
        cases = [
            ('[sweep]\nengine = "qemu"\n', "sweep.engine", "expected 'sim' or 'demo'"),
            (base + '[grid]\n"traffic.pace" = [1, 2]\n', "grid.traffic.pace", "unknown key"),
            (base + '[grid]\n"nic.frobs" = [1]\n', "grid.nic.frobs", "unknown key"),
            (base + '[grid]\n"driver.mtu" = [1500, 100]\n', "grid.driver.mtu", "value 100",
             "expected a number from 576 to 9000"),
            (base + '[grid]\n"driver.mtu" = {start = 9000, stop = 1500, step = 500}\n',
             "grid.driver.mtu", "below start"),
            (base + '[grid]\n"driver.mtu" = {start = 1500, stop = 9000, step = 0}\n',
             "grid.driver.mtu", "step 0"),
            (base + '[grid]\n"driver.mtu" = []\n', "grid.driver.mtu", "empty axis"),
            (base + '[zip]\n"driver.mtu" = [1500, 9000]\n"traffic.mode" = ["bounce"]\n', "zip",
             "different lengths"),
            (base + '[grid]\npairs = [1, 2]\n', "grid.pairs", "unknown key"),
            (base + '[grid]\n"network.nodes" = [2, 3]\n', "grid.network.nodes", "value 3", "a wire joins 2"),
            (base + '[zip]\n"network.kind" = ["wire", "wire"]\n"network.nodes" = [2, 4]\n', "zip",
             "row network.kind='wire', network.nodes=4", "a wire joins 2"),
            (base + '[grid]\n"driver.mtu" = [1500]\n[[plot]]\nname = "p"\nx = "driver.mtu"\n'
             'y = "goodput_gbps"\n', "plot[0].y", "'goodput_gbps' is not a metric"),
            (base + '[grid]\n"driver.mtu" = [1500]\n[[plot]]\nname = "p"\nx = "pcie.gen"\n'
             'y = "goodput_bps"\n', "plot[0].x", "neither an axis nor a metric"),
            (base + '[grid]\n"driver.mtu" = [1500]\n[[plot]]\nname = "p"\nx = "driver.mtu"\n'
             'y = "goodput_bps"\nseries = "traffic.mode"\n', "plot[0].series", "is not an axis"),
            (base + '[grid]\n"driver.mtu" = [1500]\n"traffic.mode" = ["devmem", "bounce"]\n[[plot]]\n'
             'name = "p"\nx = "driver.mtu"\ny = "goodput_bps"\n', "plot[0]", "traffic.mode varies"),
        ]
        for body, *needles in cases:
            with self.subTest(needles[0]):
                self.assertRejected(body, *needles)


class DemoValidation(SweepDir):
    """engine = "demo": the demo's own options and checks, no guest boots."""

    def test_demo_mistakes_get_one_line_naming_file_and_key(self):
        base = '[sweep]\nengine = "demo"\n'
        cases = [
            (base + '[grid]\nmtu = [1500, 100]\n', "grid.mtu", "value 100", "must be 1280..9000"),
            (base + '[grid]\nmtu = [9000, 9216]\n', "grid.mtu", "value 9216", "the NIC's largest MTU"),
            (base + '[set]\nmib = 0\n', "set.mib", "value 0", "must be 1..65536"),
            (base + '[zip]\nmib = [8, 70000]\nmtu = [1500, 9000]\n', "zip.mib", "value 70000"),
            (base + '[grid]\nmtu = [1500.5]\n', "grid.mtu", "1500.5", "whole number"),
            (base + '[grid]\n"driver.mtu" = [1500]\n', "grid.driver.mtu",
             "unknown key (the demo engine's keys: mib, mtu, mode)"),
            (base + '[grid]\npairs = [1, 2]\n', "grid.pairs", "unknown key"),
            (base + '[grid]\nmode = ["devmem", "all"]\n', "grid.mode", "value 'all'",
             "--mode all: expected both, devmem, bounce"),
            (base + '[set]\nmode = 1\n', "set.mode", "mode is a string"),
            (base + 'workload = "w.toml"\n', "sweep.workload", "not used by the demo engine"),
            (base + '[grid]\nmtu = [1500]\n[[plot]]\nname = "p"\nx = "mtu"\ny = "goodput_bps"\n',
             "plot[0].y", "'goodput_bps' is not a metric of the demo's report"),
        ]
        for body, *needles in cases:
            with self.subTest(needles[0]):
                self.assertRejected(body, *needles)

    def test_each_demo_point_runs_the_demo_with_its_options(self):
        from devmemsim.sweep import demo_points, spec
        path = self.sweep_file('[sweep]\nengine = "demo"\n[set]\nmib = 8\n'
                               '[grid]\nmode = ["devmem", "bounce"]\n')
        s = spec.load(path)
        argvs = [demo_points.demo_argv(s, p) for p in s.points()]
        self.assertEqual([a[1:] for a in argvs],
                         [["demo", "--mib", "8", "--mtu", "9000", "--mode", m] for m in ("devmem", "bounce")])
        self.assertEqual(argvs[0][0], str(LAUNCHER))

    def test_demo_report_becomes_columns_per_mode_and_direction(self):
        from devmemsim.sweep import demo_points
        run = {"direction": "rx", "node": "node1", "payload_bytes": 8 << 20, "verified": True,
               "throughput_bps": 2.5e8, "root_complex_per_payload_byte": 0.02}
        report = {"mib": 8, "mtu": 1500, "runs": [{**run, "mode": "devmem"},
                                                  {**run, "mode": "bounce", "verified": False}]}
        got = demo_points.metrics(report)
        self.assertEqual(got["devmem.rx.mbit_s"], 250.0)
        self.assertEqual(got["devmem.rx.rc_per_payload"], 0.02)
        self.assertEqual(got["bounce.rx.payload_bytes"], 8 << 20)
        self.assertIs(got["verified"], False, "one unverified run fails the point's verified")
        self.assertLessEqual(set(got), demo_points.metric_names())
        self.assertEqual(demo_points.metrics({}), {}, "a point that did not run has no metrics")


class Shipped(unittest.TestCase):
    def test_shipped_sweeps_are_valid(self):
        sweeps = sorted((Path(__file__).resolve().parents[2] / "configs" / "sweeps").glob("*.toml"))
        self.assertGreaterEqual(len(sweeps), 5)
        for path in sweeps:
            with self.subTest(path.name):
                res = cli("sweep", str(path), "--check")
                self.assertEqual(res.returncode, 0, res.stderr)
                self.assertIn("valid", res.stdout)


class ZipRows(SweepDir):
    def test_zip_keys_are_checked_together(self):
        # Valid only in lock-step: 4 nodes need a switch.
        body = ('[sweep]\nengine = "sim"\n[zip]\n"network.kind" = ["wire", "switch"]\n'
                '"network.nodes" = [2, 4]\n"traffic.flows" = ["0->1", "ring"]\n')
        res = cli("sweep", str(self.sweep_file(body)), "--check")
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn("2 points", res.stdout)


class LocalSweep(SweepDir):
    def test_four_points_equal_dms_sim_run_by_hand(self):
        out = self.dir / "out"
        res = cli("sweep", str(self.sweep_file(FOUR_POINTS_PLOT)), "--jobs", "2", "--output", str(out))
        self.assertEqual(res.returncode, 0, res.stderr)
        table = rows(out)
        self.assertEqual(len(table), 4)
        for row in table:
            self.assertEqual(row["status"], "ok")
            args = ["--set", "run.duration_us=60", "--set", "run.warmup_us=10",
                    "--set", f"traffic.mode={row['traffic.mode']}", "--set", f"driver.mtu={row['driver.mtu']}"]
            by_hand = flatten(json.loads(subprocess.run([DMS_SIM, *args, "--json", "-"], check=True,
                                                        capture_output=True, text=True).stdout))
            for k, v in by_hand.items():
                if k not in VOLATILE:
                    self.assertEqual(row[k], text(v), f"point {row['point']}: {k}")
        report = (out / "report.md").read_text()
        self.assertIn("plots/goodput.png", report)
        self.assertIn("software version", report)

    def test_plot_data_has_a_series_per_value_and_metric(self):
        out = self.dir / "out"
        res = cli("sweep", str(self.sweep_file(FOUR_POINTS_PLOT)), "--output", str(out))
        self.assertEqual(res.returncode, 0, res.stderr)
        data = json.loads((out / "plots" / "goodput.json").read_text())
        series = data["facets"][0]["series"]
        # Goodput per mode; the bound does not depend on the mode: one line.
        self.assertCountEqual([(s["metric"], s["value"]) for s in series],
                              [("goodput_bps", "devmem"), ("goodput_bps", "bounce"),
                               ("flows.0.analytic_bound_bps", None)])
        table = rows(out)
        for s in series:
            mode = s["value"] or "devmem"  # the merged line: either mode's rows
            mine = sorted((r for r in table if r["traffic.mode"] == mode),
                          key=lambda r: int(r["driver.mtu"]))
            self.assertEqual(s["x"], [int(r["driver.mtu"]) for r in mine])
            want = [float(r[s["metric"]]) / 1e9 for r in mine]  # drawn in Gbit/s
            self.assertEqual(len(s["y"]), len(want))
            for got, value in zip(s["y"], want):
                self.assertAlmostEqual(got, value, places=9)
        self.assertEqual(data["ylabel"], "Gbit/s")
        for ext in ("png", "svg"):
            head = (out / "plots" / f"goodput.{ext}").read_bytes()[:8]
            self.assertTrue(head.startswith(b"\x89PNG") if ext == "png" else b"<?xml" in head)

    def test_a_failed_point_is_recorded_and_the_others_run(self):
        body = FOUR_POINTS.replace('"traffic.mode" = ["devmem", "bounce"]', '"faults.rx_drop_rate" = [0, 0.5]')
        out = self.dir / "out"
        res = cli("sweep", str(self.sweep_file(body)), "--output", str(out))
        self.assertEqual(res.returncode, 1, res.stderr)
        status = {r["faults.rx_drop_rate"]: r["status"] for r in rows(out)}
        self.assertEqual(status, {"0": "ok", "0.5": "failed (exit 1)"}, status)
        self.assertIn("Failed points", (out / "report.md").read_text())


TEMPLATE_REPEATS = """[sweep]
engine = "sim"
repeats = 2
node_template = \"\"\"
[[topology.switch]]
[[topology.nic]]
count = {pairs}
[[topology.gpu]]
count = {pairs}
\"\"\"
[set]
"run.duration_us" = 60
"run.warmup_us" = 10
[grid]
pairs = [1, 2]
[[plot]]
name = "goodput"
x = "pairs"
y = "goodput_bps"
"""


class TemplateAndRepeats(SweepDir):
    def test_node_template_per_point_and_seeds_per_repeat(self):
        out = self.dir / "out"
        res = cli("sweep", str(self.sweep_file(TEMPLATE_REPEATS)), "--output", str(out))
        self.assertEqual(res.returncode, 0, res.stderr)
        table = rows(out)
        self.assertEqual([(r["pairs"], r["repeat"], r["seed"]) for r in table],
                         [("1", "0", "1"), ("1", "1", "2"), ("2", "0", "1"), ("2", "1", "2")])
        for r in table:
            self.assertEqual(r["network.pairs_per_node"], r["pairs"])
            self.assertEqual(r["flows.1.verified"], "true" if r["pairs"] == "2" else "")
        self.assertIn("count = 2", (out / "points" / "0003" / "node.toml").read_text())
        line = json.loads((out / "plots" / "goodput.json").read_text())["facets"][0]["series"][0]
        self.assertEqual(line["x"], [1, 2])
        self.assertEqual(line["n"], [2, 2])  # both repeats of each point
        self.assertEqual(len(line["yerr"]), 2)


class Resume(SweepDir):
    def test_resume_after_an_interrupt_runs_only_the_missing_points(self):
        body = FOUR_POINTS.replace('"run.duration_us" = 60', '"run.duration_us" = 20000')
        body = body.replace('"driver.mtu" = {start = 1500, stop = 9000, step = 7500}',
                            '"driver.mtu" = [1500, 4000, 9000]')
        path, out = self.sweep_file(body), self.dir / "out"
        proc = subprocess.Popen([str(LAUNCHER), "sweep", str(path), "--jobs", "1", "--output", str(out)],
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        statuses = out / "points"
        deadline = time.monotonic() + 120
        while len(list(statuses.glob("*/status.json"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, err)
        self.assertIn("--resume", err)
        before = {p.parent.name: p.read_text() for p in statuses.glob("*/status.json")}
        self.assertTrue(2 <= len(before) < 6, before)
        self.assertEqual(list(statuses.glob("*/result.json.tmp")), [])

        res = cli("sweep", str(path), "--jobs", "2", "--output", str(out), "--resume")
        self.assertEqual(res.returncode, 0, res.stderr)
        missing = sorted({f"{i:04d}" for i in range(6)} - set(before))
        self.assertIn("running " + " ".join(missing), res.stderr)
        after = {p.parent.name: p.read_text() for p in statuses.glob("*/status.json")}
        self.assertEqual(sorted(after), [f"{i:04d}" for i in range(6)])
        for point, text_before in before.items():
            self.assertEqual(after[point], text_before, f"point {point} ran again")
        self.assertEqual(len(rows(out)), 6)

    def test_resume_refuses_another_sweep(self):
        out = self.dir / "out"
        self.assertEqual(cli("sweep", str(self.sweep_file(FOUR_POINTS)), "--output", str(out)).returncode, 0)
        other = self.sweep_file(FOUR_POINTS.replace('["devmem", "bounce"]', '["devmem"]'), "t.toml")
        res = cli("sweep", str(other), "--output", str(out), "--resume")
        self.assertEqual(res.returncode, 2, res.stderr)
        self.assertIn("holds other points", res.stderr)
        res = cli("sweep", str(other), "--output", str(out))
        self.assertEqual(res.returncode, 2, res.stderr)
        self.assertIn("exists and is not empty", res.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv)
