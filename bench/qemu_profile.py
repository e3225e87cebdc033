#!/usr/bin/python3
"""Where each node's QEMU spends its CPU time during a transfer, by code
object (perf record -p on both QEMU processes while the transfer runs):
the model (libdevmemsim.so), the TCG-generated guest code, QEMU itself
(TCG runtime, memory API, devices), the host kernel and the libraries.

  bench/qemu_profile.py [--mode devmem|bounce] [--mib 64] [--mtu 9000]

Prints one table per node; the model's share is the libdevmemsim.so row.
Needs perf (Debian's linux-perf) and root (or perf_event_paranoid <= 1).
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from devmemsim import transfer  # noqa: E402
from devmemsim.build import build_all  # noqa: E402
from devmemsim.cluster import Cluster, Machine  # noqa: E402
from devmemsim.demo import set_mtu  # noqa: E402
from devmemsim.paths import ROOT  # noqa: E402

NODES = ("node0", "node1")
# perf names TCG's generated code by the JIT's anonymous mapping.
GROUPS = (("model (libdevmemsim.so)", re.compile(r"libdevmemsim\.so")),
          ("TCG-generated guest code", re.compile(r"^\[(unknown|anon|JIT)|^//anon|perf-\d+\.map")),
          ("QEMU (TCG runtime, devices)", re.compile(r"qemu-system")),
          ("host kernel", re.compile(r"kernel|vmlinux")),
          ("SystemC", re.compile(r"libsystemc")),
          ("C/C++ libraries", re.compile(r"lib(c|stdc\+\+|m|pthread|glib)")))


def shares(report: str) -> dict:
    """perf report --sort dso --stdio -> {group: percent}."""
    out = {}
    for line in report.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S.*)$", line)
        if not m:
            continue
        dso = m.group(2).strip()
        group = next((g for g, rx in GROUPS if rx.search(dso)), "other")
        out[group] = out.get(group, 0.0) + float(m.group(1))
    return out


def record(cl: Cluster, outdir: Path, a) -> dict:
    """Run the transfer with perf sampling both QEMUs; returns the runs."""
    perfs = {}
    for node in NODES:
        data = outdir / f"{node}.perf"
        perfs[node] = subprocess.Popen(["perf", "record", "-q", "-F", "499", "-p", str(cl.pid(node)),
                                        "-o", str(data)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        runs = transfer.transfer(cl, a.mode, a.mib << 20)
    finally:
        for p in perfs.values():
            p.send_signal(signal.SIGINT)
        for node, p in perfs.items():
            rc = p.wait(timeout=120)
            if rc not in (0, -signal.SIGINT, 128 + signal.SIGINT):
                sys.exit(f"perf record on {node}: exit {rc}: {p.stderr.read().decode().strip()}")
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=transfer.MODES, default="devmem")
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--mtu", type=int, default=9000)
    a = ap.parse_args()
    art = build_all()
    cl = Cluster(f"profile-{os.getpid()}")
    cl.boot(art, 2, str(ROOT / "configs" / "node" / "default.toml"), [], Machine())
    with tempfile.TemporaryDirectory(prefix="dms-profile-") as tmp:
        try:
            set_mtu(cl, NODES, a.mtu)
            runs = record(cl, Path(tmp), a)
        finally:
            cl.stop()
            cl.cleanup()
        rate = min(r["throughput_bps"] for r in runs) / 1e6
        print(f"{a.mode}, {a.mib} MiB, MTU {a.mtu}: {rate:.0f} Mbit/s, verified: "
              f"{all(r['verified'] for r in runs)}")
        for node, role in zip(NODES, ("sender", "receiver")):
            rep = subprocess.run(["perf", "report", "-i", str(Path(tmp) / f"{node}.perf"), "--sort", "dso",
                                  "--stdio", "--percent-limit", "0.1"], capture_output=True, text=True, check=True)
            print(f"\n{node} ({role}) QEMU CPU time by code object")
            for group, pct in sorted(shares(rep.stdout).items(), key=lambda kv: -kv[1]):
                print(f"  {group:<32}{pct:>6.1f} %")


if __name__ == "__main__":
    main()
