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

CLI = str(Path(__file__).resolve().parents[1] / "devmemsim")
# Interface of each NIC, found by MAC (tools/devmemsim/cluster.py), and its subnet.
NICS = (("devmemsim-nic", "52:54:00:d5:00", "10.10.0"),
        ("e1000e", "52:54:00:e1:00", "10.11.0"),
        ("virtio-net", "52:54:00:f1:00", "10.12.0"))


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
            for _, mac, net in NICS[1:]:
                sh(a.name, node, f"dev=$(ip -o link | grep -i '{mac}:{i:02x}' | cut -d: -f2 | tr -d ' '); "
                                 f"ip addr add {net}.{i + 1}/24 dev $dev && ip link set $dev up")
        sh(a.name, "node1", "iperf3 -s -D >/dev/null 2>&1")
        rows = []
        for label, _, net in NICS:
            out = sh(a.name, "node0", f"sleep 1; iperf3 -c {net}.2 -t {a.seconds} -J")
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
