#!/usr/bin/python3
"""dms-sim's speed on one 200 Gb/s NIC/GPU pair (Gen5 x16, MTU 8244), devmem
and bounce measured side by side in one run; prints simulated Gb/s per wall
second, events per second and the ratios; then devmem's speed with 1, 2, 4 and 8
pairs per node under one switch (one stream per pair).

  bench/sim_speed.py [--sim-us 5000] [--repeat 3] [--dms-sim PATH]

Each mode runs --repeat times and the fastest run counts (the machine's
other load only ever slows a run down). Without --dms-sim it runs
'./devmemsim sim', which builds the model first.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from devmemsim.fidelity import pairs_node_toml  # noqa: E402
from devmemsim.paths import LAUNCHER  # noqa: E402

PAIR = ("nic.line_rate_gbps=200", "driver.mtu=8244", "pcie.gen=5")
MODES = ("devmem", "bounce")
PAIRS = (1, 2, 4, 8)


def simulate(a, mode, config=""):
    cmd = [a.dms_sim] if a.dms_sim else [str(LAUNCHER), "sim"]
    if config:
        cmd += ["--config", config]
    for kv in (*PAIR, f"traffic.mode={mode}", f"run.duration_us={a.sim_us}"):
        cmd += ["--set", kv]
    res = subprocess.run([*cmd, "--json", "-"], text=True, capture_output=True)
    if res.returncode:
        sys.exit(f"{mode}: dms-sim failed ({res.returncode}): {res.stderr.strip()}")
    return json.loads(res.stdout)


def fastest(a, mode, config=""):
    runs = [simulate(a, mode, config) for _ in range(a.repeat)]
    return min(runs, key=lambda r: r["wall_time_s"])


def print_pair_scaling(a):
    print(f"devmem with K pairs per node under one switch, {a.sim_us} µs simulated, fastest of {a.repeat}")
    print(f"{'pairs':<8}{'goodput Gb/s':>14}{'sim Gb/s per wall s':>21}{'events/s':>12}")
    for k in PAIRS:
        with tempfile.NamedTemporaryFile("w", suffix=".toml") as f:
            f.write(pairs_node_toml(k))  # its links take --set pcie.gen=5
            f.flush()
            r = fastest(a, "devmem", f.name)
        goodput = sum(flow["goodput_bps"] for flow in r["flows"])
        print(f"{k:<8}{goodput / 1e9:>14.3f}{r['sim_gbps_per_wall_s']:>21.2f}{r['events_per_s']:>12.0f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim-us", type=int, default=5000, help="simulated time per run, µs (default 5000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per mode; the fastest counts (default 3)")
    ap.add_argument("--dms-sim", default="", metavar="PATH", help="a dms-sim binary to run instead of the CLI's")
    a = ap.parse_args()
    if a.sim_us <= 0 or a.repeat <= 0:
        ap.error("--sim-us and --repeat must be positive")
    rows = [(mode, fastest(a, mode)) for mode in MODES]
    print(f"one 200 Gb/s pair, Gen5 x16, MTU 8244: {a.sim_us} µs simulated, fastest of {a.repeat}")
    print(f"{'mode':<8}{'goodput Gb/s':>14}{'sim Gb/s per wall s':>21}{'events/s':>12}"
          f"{'wall s per sim s':>18}")
    for mode, r in rows:
        slowdown = r["wall_time_s"] / (r["sim_time_ns"] * 1e-9)
        print(f"{mode:<8}{r['flows'][0]['goodput_bps'] / 1e9:>14.3f}{r['sim_gbps_per_wall_s']:>21.2f}"
              f"{r['events_per_s']:>12.0f}{slowdown:>18.1f}")
    (_, dev), (_, bnc) = rows
    print(f"devmem / bounce: {dev['sim_gbps_per_wall_s'] / bnc['sim_gbps_per_wall_s']:.2f} "
          f"(sim Gb/s per wall s), {dev['events_per_s'] / bnc['events_per_s']:.2f} (events/s)")
    print_pair_scaling(a)


if __name__ == "__main__":
    main()
