#!/usr/bin/python3
"""iperf3 TCP throughput between two TCG nodes over devmemsim-nic (offloads
off and on), e1000e and virtio-net at MTU 1500 and 9000, measured side by
side in one run; prints one row per NIC configuration with its ratio to
virtio-net at the same MTU.

  bench/nic_compare.py [--seconds 5] [--repeat 1] [--name bench] [--mtu 1500,9000]

Every link is the same kind of QEMU backend: `boot --compare-nics` gives
each NIC its own -netdev stream over a UNIX socket between the two QEMUs
(tools/devmemsim/cluster.py), and stream carries no vnet header, so
virtio-net cannot hand segmentation or coalescing to the host: what a
guest's NIC driver does not get from its device it does in software.

"offloads on" turns on, on both nodes, whichever of tso, gso, gro and
rx-gro-hw `ethtool -k` shows devmemsim-nic has and does not mark [fixed];
"offloads off" turns the same set off; each row names those node0's
`ethtool -k` then shows on. e1000e and virtio-net keep their
drivers' defaults (software GSO and GRO on).
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
# The links: (label, link); the compare links' interfaces are addressed
# here, the data link's by the init. Their interfaces are found by MAC.
NICS = (("devmemsim-nic", addressing.DATA), ("e1000e", addressing.COMPARE[0]),
        ("virtio-net", addressing.COMPARE[1]))
BASE = "virtio-net"
# ethtool -K name -> its line in ethtool -k.
OFFLOADS = {"tso": "tcp-segmentation-offload", "gso": "generic-segmentation-offload",
            "gro": "generic-receive-offload", "rx-gro-hw": "rx-gro-hw"}
NODES = ("node0", "node1")


def sh(name, node, script, check=True):
    res = subprocess.run([CLI, "exec", node, "--name", name, "--", script], text=True, capture_output=True)
    if check and res.returncode:
        sys.exit(f"{node}: {script!r} failed: {res.stderr.strip()}")
    return res.stdout


def interface(name, node, link):
    i = NODES.index(node)
    return sh(name, node, f"ip -o link | grep -i '{link.mac(i)}' | cut -d: -f2 | tr -d ' '").strip()


def features(name, ifname):
    """ethtool -k ifname on node0: {feature line: state}."""
    return dict(line.strip().split(": ", 1) for line in sh(name, "node0", f"ethtool -k {ifname}").splitlines()
                if ": " in line)


def settable_offloads(name, ifname):
    """The OFFLOADS ifname's driver has and lets ethtool -K change (a
    feature whose sub-features are all fixed shows no [fixed] itself: what
    ethtool -K really turned on shows in the row's label)."""
    lines = features(name, ifname)
    return [k for k, label in OFFLOADS.items() if label in lines and "[fixed]" not in lines[label]]


def offloads_on(name, ifname):
    lines = features(name, ifname)
    return ",".join(k for k, label in OFFLOADS.items() if lines.get(label, "").startswith("on")) or "none"


def iperf(a, link):
    """The best of --repeat iperf3 runs (other load only ever slows one)."""
    best = 0
    for _ in range(a.repeat):
        out = sh(a.name, "node0", f"sleep 1; iperf3 -c {link.addr(1)} -t {a.seconds} -J")
        best = max(best, json.loads(out)["end"]["sum_received"]["bits_per_second"])
    return best


def measure(a, mtu, ifs, offloads):
    """[(label, bits/s)] of every NIC configuration at this MTU."""
    rows = []
    for label, link in NICS:
        for node in NODES:
            sh(a.name, node, f"ip link set {ifs[node, label]} mtu {mtu}")
        if label != "devmemsim-nic":
            rows.append((label, iperf(a, link)))
            continue
        for state in ("off", "on"):
            if offloads:
                for node in NODES:
                    sh(a.name, node, f"ethtool -K {ifs[node, label]} "
                                     + " ".join(f"{k} {state}" for k in offloads))
            rows.append((f"{label} offloads {state} ({offloads_on(a.name, ifs['node0', label])})",
                         iperf(a, link)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--name", default="bench")
    ap.add_argument("--mtu", default="1500,9000", help="MTUs, comma separated")
    ap.add_argument("--repeat", type=int, default=1, help="iperf3 runs per row; the best counts")
    a = ap.parse_args()
    subprocess.run([CLI, "boot", "--nodes", "2", "--compare-nics", "--name", a.name], check=True)
    try:
        ifs = {(node, label): interface(a.name, node, link) for node in NODES for label, link in NICS}
        for i, node in enumerate(NODES):
            for label, link in NICS[1:]:
                sh(a.name, node, f"ip addr add {link.cidr(i)} dev {ifs[node, label]} && "
                                 f"ip link set {ifs[node, label]} up")
        offloads = settable_offloads(a.name, ifs["node0", "devmemsim-nic"])
        sh(a.name, "node1", "iperf3 -s -D >/dev/null 2>&1")
        table = [(int(mtu), measure(a, int(mtu), ifs, offloads)) for mtu in a.mtu.split(",")]
    finally:
        subprocess.run([CLI, "stop", "--name", a.name])
    print(f"iperf3 {a.seconds} s, one stream, best of {a.repeat}; devmemsim-nic offloads switched: {', '.join(offloads) or 'none'}")
    width = max(len(label) for _, rows in table for label, _ in rows) + 2
    print(f"{'MTU':>5}  {'NIC':<{width}}{'Mbit/s':>10}{'vs ' + BASE:>16}")
    for mtu, rows in table:
        base = dict(rows)[BASE]
        for label, bps in rows:
            print(f"{mtu:>5}  {label:<{width}}{bps / 1e6:>10.1f}{bps / base:>16.2f}")


if __name__ == "__main__":
    main()
