#!/usr/bin/python3
"""iperf3 TCP throughput between two TCG nodes over devmemsim-nic, e1000e and
virtio-net, measured side by side in one run; prints the ratios.

  bench/nic_compare.py [--seconds 5] [--name bench]
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from devmemsim import addressing  # noqa: E402
from devmemsim.paths import LAUNCHER  # noqa: E402

CLI = str(LAUNCHER)
# The links, in the order of the table: (label, link); the compare links'
# interfaces are found by MAC and addressed here, the data link's by the init.
NICS = (("devmemsim-nic", addressing.DATA), ("e1000e", addressing.COMPARE[0]),
        ("virtio-net", addressing.COMPARE[1]))


def sh(name, node, script, check=True):
    res = subprocess.run([CLI, "exec", node, "--name", name, "--", script], text=True, capture_output=True)
    if check and res.returncode:
        sys.exit(f"{node}: {script!r} failed: {res.stderr.strip()}")
    return res.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--name", default="bench")
    a = ap.parse_args()
    subprocess.run([CLI, "boot", "--nodes", "2", "--compare-nics", "--name", a.name], check=True)
    try:
        for i, node in enumerate(("node0", "node1")):
            for _, link in NICS[1:]:
                sh(a.name, node, f"dev=$(ip -o link | grep -i '{link.mac(i)}' | cut -d: -f2 | tr -d ' '); "
                                 f"ip addr add {link.cidr(i)} dev $dev && ip link set $dev up")
        sh(a.name, "node1", "iperf3 -s -D >/dev/null 2>&1")
        rows = []
        for label, link in NICS:
            out = sh(a.name, "node0", f"sleep 1; iperf3 -c {link.addr(1)} -t {a.seconds} -J")
            bps = json.loads(out)["end"]["sum_received"]["bits_per_second"]
            rows.append((label, bps))
        base = rows[0][1]
        print(f"{'NIC':<16}{'Mbit/s':>10}{'vs devmemsim-nic':>18}")
        for label, bps in rows:
            print(f"{label:<16}{bps / 1e6:>10.1f}{bps / base:>18.2f}")
    finally:
        subprocess.run([CLI, "stop", "--name", a.name])


if __name__ == "__main__":
    main()
