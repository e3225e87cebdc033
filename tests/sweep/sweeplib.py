"""What the sweep tests share: a 4-point sweep of short dms-sim runs and
results.csv as rows."""

import csv
from pathlib import Path

FOUR_POINTS = """[sweep]
engine = "sim"
[set]
"run.duration_us" = 60
"run.warmup_us" = 10
[grid]
"traffic.mode" = ["devmem", "bounce"]
"driver.mtu" = {start = 1500, stop = 9000, step = 7500}
"""


def rows(out):
    """results.csv of an output directory, as dicts of strings."""
    with open(Path(out) / "results.csv", newline="") as f:
        return list(csv.DictReader(f))
