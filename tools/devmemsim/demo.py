"""`devmemsim demo`: devmem TCP vs bounce buffers between two nodes' GPU
memories, with each node's PCIe counters (transfer.py moves the data), or
with --pattern between every GPU of the cluster (collective.py)."""

import os
import time

from . import clusterfile, collective, dryrun, options, srun, transfer
from .build import build_all
from .cluster import Cluster, Machine
from .contract import C
from .errors import UsageError
from .nodeargs import DYING, add_cluster_file_options, check_pcap, check_plan_configs, cluster_plan
from .paths import ROOT
from .stats import write_json

# Shows where the devices sit and that their drivers probed; runs on node0.
GUEST_SCRIPT = r"""
echo "== uname -r"; uname -r
echo "== lspci -tv"; lspci -tv
echo "== where our devices sit (pci.ids does not know them by name)"
for id in 10f0:devmemsim-nic 10f1:devmemsim-gpu; do
  dev=$(lspci -D -n -d "1af4:${id%%:*}" | head -n1 | cut -d' ' -f1)
  path=$(readlink -f "/sys/bus/pci/devices/$dev")
  down=$(basename "$(dirname "$path")"); up=$(basename "$(dirname "$(dirname "$path")")")
  echo "${id#*:} $dev [1af4:${id%%:*}] <- $(lspci -s "$down" | cut -d' ' -f2-)"
  echo "    <- $(lspci -s "$up" | cut -d' ' -f2-)"
done
echo "== probe lines (dmesg)"; dmesg | grep -E 'dmsnic|dmsgpu'
"""


# --mode: both transfers (the demo's comparison) or one of them.
MODE_CHOICES = ("both", *transfer.MODES)
# The options a demo sweep sets (sweep/spec.py DEMO_KEYS), as the command
# defaults them.
DEFAULTS = {"mib": 256, "mtu": 9000, "mode": "both"}


def add_command(sub):
    d = sub.add_parser("demo", help="the main job: devmem TCP vs bounce buffers between two nodes, "
                       "with PCIe counters")
    d.add_argument("--mib", type=int, default=DEFAULTS["mib"], metavar="N",
                   help=f"MiB per transfer (default {DEFAULTS['mib']})")
    d.add_argument("--mtu", type=int, default=DEFAULTS["mtu"], help=f"data-link MTU (default {DEFAULTS['mtu']})")
    d.add_argument("--mode", default=DEFAULTS["mode"],
                   help="transfers: both (default), devmem or bounce")
    options.add_json(d, "the runs too ({\"runs\": [...]}); to stdout, the demo's text goes to stderr")
    d.add_argument("--accel", choices=["tcg", "kvm"], default="tcg", help="QEMU accelerator (default tcg)")
    d.add_argument("--pattern", choices=collective.PATTERNS,
                   help="a collective instead: every GPU of each data network sends --mib MiB to another "
                        "(ring: i -> i+1; pairs: 0<->1, 2<->3...; all-to-all: n-1 steps of a shifted ring), "
                        "the transfers of a step at once")
    add_cluster_file_options(d)
    options.add_dry_run(d)
    d.epilog = ("With --cluster, the transfers go between the file's first two nodes (their NIC 0); with "
                "--pattern, between every NIC/GPU pair of each network that joins two or more. " + DYING)
    d.set_defaults(run=cmd_demo)


def cmd_demo(a) -> int:
    """`devmemsim demo`: the command line checked, then run()."""
    plan = None
    alloc = srun.allocation() if a.srun else None
    checked = True  # the default cluster: the default node configuration
    if a.cluster:
        plan = cluster_plan(a)
        if len(plan.nodes) < 2:
            raise UsageError(f"{a.cluster}: the demo needs two nodes; the file has {len(plan.nodes)}")
        checked = check_plan_configs(plan, build=not a.dry_run)
        crossed = [plan.networks.get(plan.nodes[0].nics[0].network)]
        if a.pattern:
            crossed = collective.networks(plan)
        for net in crossed:
            if net and net.kind == "switch" and a.mtu > clusterfile.SWITCH_MTU:
                raise UsageError(f"--mtu {a.mtu}: the transfers cross network {net.name!r}, a VDE switch, which "
                                 f"carries an MTU of {clusterfile.SWITCH_MTU} at most (--mtu {clusterfile.SWITCH_MTU})")
    pcap = check_pcap(a)
    placement = srun.place(plan or default_plan(), alloc) if alloc else None
    if a.dry_run:
        return dry_run(a, plan or default_plan(), Machine(accel=a.accel, pcap=pcap, srun=placement), checked)
    return run(a.mib, a.mtu, a.accel, a.json, a.mode, plan=plan, pcap=pcap, pattern=a.pattern or "",
               placement=placement)


def dry_run(a, plan: clusterfile.Plan, machine: Machine, configs_checked: bool) -> int:
    """--dry-run: the cluster, the transfers after its boot, the QEMU
    command lines; nothing built or booted."""
    check_options(a.mib, a.mtu, a.mode)
    modes = " and ".join(transfer.MODES if a.mode == "both" else (a.mode,))
    if a.pattern:
        then = [f"then: {a.pattern}, {modes}, {a.mib} MiB per transfer, MTU {a.mtu}:",
                *("  " + line for line in collective.describe(collective.schedule(plan, a.pattern)).splitlines())]
    else:
        sender, receiver = (n.name for n in plan.nodes[:2])
        then = [f"then: {modes}, {a.mib} MiB from {sender}'s GPU memory to {receiver}'s, MTU {a.mtu}"]
    if a.json:
        then.append(f"  the runs as JSON to {'stdout' if a.json == '-' else a.json}")
    art, rows = dryrun.pinned_artifacts()
    return dryrun.show("demo", "demo-PID", plan, machine, art, rows, configs_checked, then)


def check_options(mib: int, mtu: int, mode: str = "both") -> None:
    if mode not in MODE_CHOICES:
        raise UsageError(f"--mode {mode}: expected " + ", ".join(MODE_CHOICES))
    if not 1 <= mib <= 65536:
        raise UsageError(f"--mib {mib}: must be 1..65536")
    # 1280: the data link carries IPv6, whose minimum MTU that is; the
    # largest is the NIC's (the contract's, which its MAX_MTU register reads).
    if not 1280 <= mtu <= C.DMS_NIC_MAX_MTU:
        raise UsageError(f"--mtu {mtu}: must be 1280..{C.DMS_NIC_MAX_MTU} (the NIC's largest MTU)")


def set_mtu(cl: Cluster, nodes, mtu: int, pair: int = 0) -> None:
    """On each node's NIC `pair` (NIC 0: the one two-node transfers use)."""
    for n in nodes:
        mac = cl.nic(n, pair)["mac"]
        cl.sh(n, f"IF=$(grep -l '^{mac}$' /sys/class/net/*/address | cut -d/ -f5) && "
                 f"ip link set \"$IF\" mtu {mtu}")


def boot(accel: str, name: str, plan: clusterfile.Plan = None, pcap: str = "", placement=None) -> Cluster:
    """Build what is stale, then boot the cluster transfers run in (by
    default two nodes alike; with a srun.Placement, as Slurm job steps;
    the caller stops it)."""
    plan = plan or default_plan()
    started = time.monotonic()
    art = build_all()
    print(f"devmemsim: built in {time.monotonic() - started:.0f} s; booting {len(plan.nodes)} nodes ({accel})",
          flush=True)
    cl = Cluster(name)
    cl.boot_plan(art, plan, Machine(accel=accel, pcap=pcap, srun=placement), watch=True)
    return cl


def run(mib: int, mtu: int, accel: str, json_path: str = "", mode: str = "both",
        plan: clusterfile.Plan = None, pcap: str = "", pattern: str = "", placement=None) -> int:
    """The whole demo, from the first node of the plan to its second (or
    the collective `pattern` on the plan's networks); exit status 0 when
    every run is verified."""
    check_options(mib, mtu, mode)
    modes = transfer.MODES if mode == "both" else (mode,)
    if pattern:
        steps = collective.schedule(plan or default_plan(), pattern)
    started = time.monotonic()
    # --json to stdout: the demo's text goes to stderr, stdout is the JSON alone.
    with options.text_to_stderr(json_path == "-"):
        cl = boot(accel, f"demo-{os.getpid()}", plan, pcap, placement)
        try:
            print(cl.sh(cl.node_names()[0], GUEST_SCRIPT), end="", flush=True)
            if pattern:
                result = _collective(cl, mib, mtu, modes, pattern, steps)
            else:
                result = _two_nodes(cl, mib, mtu, modes)
        finally:
            cl.stop()
            cl.cleanup()
        print(result.pop("table"))
        if json_path:
            write_json(json_path, result)
        print(f"devmemsim: demo finished in {time.monotonic() - started:.0f} s", flush=True)
    return 0 if all(r["verified"] for r in result["runs"]) else 1


def default_plan() -> clusterfile.Plan:
    return clusterfile.default_plan(2, str(ROOT / "configs" / "node" / "default.toml"))


def _two_nodes(cl: Cluster, mib: int, mtu: int, modes) -> dict:
    sender, receiver = cl.node_names()[:2]
    set_mtu(cl, [sender, receiver], mtu)
    runs = []
    for m in modes:
        print(f"== {m}: {mib} MiB from {sender}'s GPU memory to {receiver}'s, MTU {mtu}", flush=True)
        runs += transfer.transfer(cl, m, mib << 20, sender, receiver)
    text = f"== {sender} sends (tx), {receiver} receives (rx); counters of that node's PCIe fabric\n" + table(runs)
    return {"mib": mib, "mtu": mtu, "runs": runs, "table": text}


def _collective(cl: Cluster, mib: int, mtu: int, modes, pattern: str, steps: list) -> dict:
    for node, pair in collective.nics(steps):
        set_mtu(cl, [node], mtu, pair)
    print(f"== {pattern}, {mib} MiB per transfer, MTU {mtu}:\n{collective.describe(steps)}", flush=True)
    transfers, runs = [], []
    for m in modes:
        t, r = collective.run(cl, m, mib << 20, steps)
        transfers += t
        runs += r
    text = ("== per step, each node's counters (what it sent and received in that step)\n"
            + collective.table(runs))
    return {"pattern": pattern, "mib": mib, "mtu": mtu, "steps": [[m.to_json() for m in s] for s in steps],
            "transfers": transfers, "runs": runs, "table": text}


COLUMNS = (
    ("mode", "{:<8}", lambda r: r["mode"]),
    ("dir", "{:<4}", lambda r: r["direction"]),
    ("node", "{:<7}", lambda r: r["node"]),
    ("payload B", "{:>12}", lambda r: str(r["payload_bytes"])),
    *transfer.COUNTER_COLUMNS,
    ("Mbit/s", "{:>9}", lambda r: f"{r['throughput_bps'] / 1e6:.1f}"),
    transfer.VERIFIED_COLUMN,
)


def table(runs: list) -> str:
    """The run rows: per mode, each node's direction and counters."""
    return transfer.text_table(COLUMNS, runs)
