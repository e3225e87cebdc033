#!/usr/bin/python3
"""The demo's devmem and bounce transfers at several sizes, measured side by
side in one boot of two TCG nodes; prints the receiver's goodput of each and
the devmem/bounce ratio.

  bench/demo.py [--mib 16,64,256] [--mtu 9000] [--warmup-mib 8]

Each transfer is the demo's (tools/devmemsim/transfer.py): node0's GPU memory
to node1's, every byte checked by both GPUs' CRC engines; the bench fails if
one is not verified. A first, unreported transfer of each mode warms up the
guests (QEMU translates code on its first run, and that would count against
whichever mode ran first).
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from devmemsim import demo, transfer  # noqa: E402


def sizes(text):
    return [int(x) for x in text.split(",") if x]


def goodput(cl, mode, mib):
    """The receiver's Mbit/s of one verified transfer."""
    rows = transfer.transfer(cl, mode, mib << 20)
    if not all(r["verified"] for r in rows):
        sys.exit(f"{mode} {mib} MiB: not verified: {rows}")
    return next(r for r in rows if r["direction"] == "rx")["throughput_bps"] / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=sizes, default=[16, 64, 256], help="MiB per transfer, comma separated")
    ap.add_argument("--mtu", type=int, default=9000)
    ap.add_argument("--warmup-mib", type=int, default=8)
    ap.add_argument("--accel", choices=["tcg", "kvm"], default="tcg")
    a = ap.parse_args()
    for mib in a.mib:
        demo.check_options(mib, a.mtu)
    cl = demo.boot(a.accel, "bench-demo")
    try:
        demo.set_mtu(cl, ["node0", "node1"], a.mtu)
        for mode in transfer.MODES:
            goodput(cl, mode, a.warmup_mib)
        rows = [(mib, *(goodput(cl, mode, mib) for mode in transfer.MODES)) for mib in a.mib]
    finally:
        cl.stop()
        cl.cleanup()
    print(f"MTU {a.mtu}; receiver goodput, every transfer verified")
    print(f"{'MiB':>6}{'devmem Mbit/s':>15}{'bounce Mbit/s':>15}{'devmem/bounce':>15}")
    for mib, dev, bounce in rows:
        print(f"{mib:>6}{dev:>15.1f}{bounce:>15.1f}{dev / bounce:>15.2f}")


if __name__ == "__main__":
    main()
