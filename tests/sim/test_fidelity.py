"""docs/fidelity.md's generator: it runs, its tables parse, their numbers
are the runs' numbers, checked against bounds computed here, and the
committed document is what it writes now.

Run by meson with the dms-sim and dms-pcie binaries as arguments."""

import json
import re
import subprocess
import sys
import unittest
from pathlib import Path

DMS_SIM, DMS_PCIE = sys.argv.pop(1), sys.argv.pop(1)
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from devmemsim import fidelity  # noqa: E402


def table_rows(text):
    """Every Markdown table row but headers and rulers, as lists of cells."""
    rows = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("|") or line.startswith("| ---"):
            continue
        if i + 1 < len(lines) and lines[i + 1].startswith("| ---"):
            continue  # a header
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def number(cell):
    return float(re.match(r"[-+]?[0-9.]+", cell).group(0))


class Document(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.text = fidelity.generate(DMS_SIM, DMS_PCIE)
        cls.rows = table_rows(cls.text)

    def test_the_committed_document_is_current(self):
        committed = (ROOT / "docs" / "fidelity.md").read_text().splitlines()
        fresh = self.text.splitlines()
        stale = next((i for i, (a, b) in enumerate(zip(committed, fresh)) if a != b),
                     None if len(committed) == len(fresh) else min(len(committed), len(fresh)))
        self.assertIsNone(stale, "docs/fidelity.md differs from a fresh run from line "
                          f"{(stale or 0) + 1}: run ./devmemsim fidelity and commit it")

    def row(self, first):
        """The row whose first cell is first, or else starts with it."""
        found = [r for r in self.rows if r[0] == first] or \
            [r for r in self.rows if r[0].startswith(first)]
        self.assertEqual(len(found), 1, f"one row starting with {first!r}")
        return found[0]

    def test_headline_is_the_run_and_within_1_percent_of_the_bound(self):
        # 200 Gb/s, MTU 8244: MSS 8192 per MTU + 38 bytes on the wire.
        bound = 200e9 * 8192 / (8244 + 14 + 4 + 8 + 12)
        res = subprocess.run([DMS_SIM, "--json", "-", "--set", "nic.line_rate_gbps=200",
                              "--set", "driver.mtu=8244", "--set", "pcie.gen=5",
                              "--set", "run.duration_us=5000", "--set", "run.warmup_us=100"],
                             capture_output=True, text=True, check=True)
        goodput = json.loads(res.stdout)["flows"][0]["goodput_bps"]
        model = self.row("goodput, % of line rate")[2]
        self.assertEqual(model, f"{goodput / 200e9:.2%}")
        self.assertLess(abs(goodput - bound) / bound, 0.01)

    def test_goodput_grid_rows_carry_the_analytic_bound(self):
        grid = [r for r in self.rows if len(r) == 9]
        self.assertEqual(len(grid), 12)
        for r in grid:
            gbps, mtu = int(r[0]), int(r[1])
            self.assertAlmostEqual(number(r[3]), gbps * (mtu - 52) / (mtu + 38), places=3)
            self.assertAlmostEqual(number(r[5]), 100 * number(r[4]) / number(r[3]), delta=0.01)

    def test_pcie_matches_pcie_bench(self):
        self.assertAlmostEqual(number(self.row("TLP-layer bandwidth")[2]), 57.88, delta=0.01)

    def test_root_complex_bytes_per_payload_byte(self):
        self.assertLess(number(self.row("devmem")[3]), 0.05)
        self.assertGreaterEqual(number(self.row("bounce")[3]), 2.0)

    def test_pair_scaling_devmem_linear_bounce_flat_at_the_uplink(self):
        rows = {int(r[0]): r for r in self.rows if len(r) == 7 and r[0] in ("1", "2", "4", "8")}
        self.assertEqual(sorted(rows), [1, 2, 4, 8])
        one_devmem = number(rows[1][1])
        for k, r in rows.items():
            self.assertAlmostEqual(number(r[2]), number(r[1]) / (k * one_devmem), delta=0.001)
            self.assertGreater(number(r[2]), 0.95, f"devmem with {k} pairs: {r[1]} Gb/s")
            devmem_rc, bounce_rc = (number(x.strip()) for x in r[6].split("/"))
            self.assertLess(devmem_rc, 0.05)
            self.assertGreaterEqual(bounce_rc, 2.0)
        # Gen4 x16: 16 GT/s x 16 lanes x 128/130 per direction; a 64-byte
        # completion takes 64 + 12 (header) + 8 (framing) bytes of it.
        completion_bound = 16 * 16 * 128 / 130 * 64 / (64 + 12 + 8)
        self.assertLess(number(rows[8][3]), completion_bound)
        self.assertLess(number(rows[8][3]), 1.05 * number(rows[4][3]), "bounce flattens")
        self.assertGreater(number(rows[8][3]), 0.8 * completion_bound, "at the uplink")
        self.assertLess(number(rows[8][4]), 0.5)

    def test_latency_devmem_below_bounce_and_the_gap_grows_with_size(self):
        rows = [self.row(f"{kib} KiB") for kib in (4, 64, 1024)]
        gaps = []
        for r in rows:
            devmem_p50, devmem_p99, bounce_p50, bounce_p99, gap = (number(c) for c in r[1:])
            self.assertLess(0, devmem_p50)
            self.assertLessEqual(devmem_p50, devmem_p99)
            self.assertLessEqual(bounce_p50, bounce_p99)
            self.assertLess(devmem_p50, bounce_p50)
            self.assertAlmostEqual(gap, bounce_p50 - devmem_p50, delta=0.011)
            gaps.append(gap)
        self.assertEqual(gaps, sorted(gaps))


if __name__ == "__main__":
    unittest.main()
