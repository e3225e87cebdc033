"""`devmemsim demo`: devmem TCP vs bounce buffers between two nodes' GPU
memories, with each node's PCIe counters (transfer.py moves the data)."""

import os
import time

from . import transfer
from .build import build_all
from .cluster import Cluster, Machine
from .errors import UsageError
from .paths import ROOT
from .stats import write_json

# Shows where the devices sit and that their drivers probed; runs on node0.
GUEST_SCRIPT = r"""
echo "== uname -r"; uname -r
echo "== lspci -tv"; lspci -tv
echo "== where our devices sit (pci.ids does not know them by name)"
for id in 10f0:devmemsim-nic 10f1:devmemsim-gpu; do
  dev=$(lspci -D -n -d "1af4:${id%%:*}" | cut -d' ' -f1)
  path=$(readlink -f "/sys/bus/pci/devices/$dev")
  down=$(basename "$(dirname "$path")"); up=$(basename "$(dirname "$(dirname "$path")")")
  echo "${id#*:} $dev [1af4:${id%%:*}] <- $(lspci -s "$down" | cut -d' ' -f2-)"
  echo "    <- $(lspci -s "$up" | cut -d' ' -f2-)"
done
echo "== probe lines (dmesg)"; dmesg | grep -E 'dmsnic|dmsgpu'
"""


# --mode: both transfers (the demo's comparison) or one of them.
MODE_CHOICES = ("both", *transfer.MODES)


def check_options(mib: int, mtu: int, mode: str = "both") -> None:
    if mode not in MODE_CHOICES:
        raise UsageError(f"--mode {mode}: expected " + ", ".join(MODE_CHOICES))
    if not 1 <= mib <= 65536:
        raise UsageError(f"--mib {mib}: must be 1..65536")
    if mtu < 1280:  # the upper bound is the NIC's (MAX_MTU); the guest reports it
        raise UsageError(f"--mtu {mtu}: must be at least 1280")


def set_mtu(cl: Cluster, nodes, mtu: int) -> None:
    for n in nodes:
        cl.sh(n, f"IF=$(ls /sys/bus/pci/drivers/dmsnic/*/net/ | head -n1) && ip link set \"$IF\" mtu {mtu}")


def boot(accel: str, name: str) -> Cluster:
    """Build what is stale, then boot the two default nodes transfers run
    between (the caller stops the cluster)."""
    started = time.monotonic()
    art = build_all()
    print(f"devmemsim: built in {time.monotonic() - started:.0f} s; booting two nodes ({accel})", flush=True)
    cl = Cluster(name)
    cl.boot(art, 2, str(ROOT / "configs" / "node" / "default.toml"), [], Machine(accel=accel))
    return cl


def run(mib: int, mtu: int, accel: str, json_path: str = "", mode: str = "both") -> int:
    """The whole demo; exit status 0 when every run is verified."""
    check_options(mib, mtu, mode)
    modes = transfer.MODES if mode == "both" else (mode,)
    started = time.monotonic()
    cl = boot(accel, f"demo-{os.getpid()}")
    try:
        print(cl.sh("node0", GUEST_SCRIPT), end="", flush=True)
        set_mtu(cl, ["node0", "node1"], mtu)
        runs = []
        for m in modes:
            print(f"== {m}: {mib} MiB from node0's GPU memory to node1's, MTU {mtu}", flush=True)
            runs += transfer.transfer(cl, m, mib << 20)
    finally:
        cl.stop()
        cl.cleanup()
    print("== node0 sends (tx), node1 receives (rx); counters of that node's PCIe fabric")
    print(table(runs))
    if json_path:
        write_json(json_path, {"mib": mib, "mtu": mtu, "runs": runs})
    print(f"devmemsim: demo finished in {time.monotonic() - started:.0f} s", flush=True)
    return 0 if all(r["verified"] for r in runs) else 1


def table(runs: list) -> str:
    head = (f"{'mode':<8}{'dir':<4}{'node':<7}{'payload B':>12}{'root complex B':>16}"
            f"{'P2P switch B':>14}{'RC/payload':>12}{'Mbit/s':>9}  verified")
    rows = [head, "-" * len(head)]
    for r in runs:
        ratio = r["root_complex_per_payload_byte"]
        rows.append(f"{r['mode']:<8}{r['direction']:<4}{r['node']:<7}{r['payload_bytes']:>12}"
                    f"{r['root_complex_bytes']:>16}{r['p2p_bytes']:>14}"
                    f"{(f'{ratio:.3f}' if ratio is not None else '-'):>12}"
                    f"{r['throughput_bps'] / 1e6:>9.1f}  {'yes' if r['verified'] else 'NO'}")
    return "\n".join(rows)
