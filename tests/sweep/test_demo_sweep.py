"""A demo sweep end to end: `devmemsim sweep` with engine = "demo" runs
`devmemsim demo --mib 8 --mtu M` for MTU 1500 and 9000 (two TCG nodes per
point, devmem and bounce, CRC-verified), one point at a time although
--jobs 2 is given, into a results.csv of 2 verified rows and a plot's data
(about 25 s in all on two cores)."""

import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from clilib import cli  # noqa: E402
from sweeplib import rows  # noqa: E402

MTUS = (1500, 9000)
SWEEP = f"""[sweep]
engine = "demo"
[set]
mib = 8
[grid]
mtu = [{", ".join(map(str, MTUS))}]
[[plot]]
name = "throughput"
x = "mtu"
y = ["devmem.rx.mbit_s", "bounce.rx.mbit_s"]
"""


def failed_logs(out: Path) -> str:
    """The end of each failed point's log: the temporary directory that
    holds it is gone once the test ends."""
    text = ""
    for r in rows(out) if (out / "results.csv").is_file() else []:
        log = out / "points" / r.get("point", "") / "log"
        if r.get("status") != "ok" and log.is_file():
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-40:])
            text += f"\n--- points/{r['point']}/log (last 40 lines)\n{tail}"
    return text


class DemoSweep(unittest.TestCase):
    def test_two_mtus_give_two_verified_rows(self):
        with tempfile.TemporaryDirectory(prefix="dms-demo-sweep-") as tmp:
            path, out = Path(tmp) / "demo.toml", Path(tmp) / "out"
            path.write_text(SWEEP)
            res = cli("sweep", str(path), "--output", str(out), "--jobs", "2", timeout=1700)
            self.assertEqual(res.returncode, 0, res.stdout + res.stderr + failed_logs(out))
            self.assertIn("demo points run one at a time", res.stderr)
            got = rows(out)
            self.assertEqual(len(got), 2, got)
            self.assertEqual([r["mtu"] for r in got], [str(m) for m in MTUS])
            for r in got:
                with self.subTest(mtu=r["mtu"]):
                    self.assertEqual(r["status"], "ok")
                    self.assertEqual(r["mib"], "8")
                    self.assertEqual(r["verified"], "true")
                    for mode in ("devmem", "bounce"):
                        self.assertEqual(r[f"{mode}.rx.verified"], "true")
                        self.assertEqual(r[f"{mode}.rx.payload_bytes"], str(8 << 20))
                        self.assertGreater(float(r[f"{mode}.rx.mbit_s"]), 0)
                    # Bounce crosses node1's root complex, devmem stays below the switch.
                    self.assertLess(float(r["devmem.rx.rc_per_payload"]),
                                    float(r["bounce.rx.rc_per_payload"]))
            plot = json.loads((out / "plots" / "throughput.json").read_text())
            self.assertTrue((out / "plots" / "throughput.png").is_file())
            series = plot["facets"][0]["series"]
            self.assertEqual(len(series), 2, plot)
            for line in series:
                self.assertEqual(len(line["x"]), 2, plot)
            for r in got:
                print(f"mtu {r['mtu']}: devmem {float(r['devmem.rx.mbit_s']):.1f} Mbit/s "
                      f"(RC/payload {float(r['devmem.rx.rc_per_payload']):.3f}), bounce "
                      f"{float(r['bounce.rx.mbit_s']):.1f} Mbit/s "
                      f"(RC/payload {float(r['bounce.rx.rc_per_payload']):.3f})")


if __name__ == "__main__":
    unittest.main(verbosity=2)
