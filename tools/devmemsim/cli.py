"""devmemsim command line: build, boot clusters, run commands, test."""

import argparse
import json
import os
import subprocess
import sys
import time

from . import build as B
from . import transfer as T
from .cluster import Cluster, dumps, list_clusters, node_config
from .errors import Failure, UsageError
from .paths import BUILD, ROOT

DEMO_SCRIPT = r"""
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


class Parser(argparse.ArgumentParser):
    """argparse that reports a mistake as one line and exits with 2."""

    def error(self, message):
        raise UsageError(message)


def add_node_options(p):
    p.add_argument("--nodes", type=int, default=1, metavar="N", help="number of nodes (default 1)")
    p.add_argument("--config", default="", metavar="FILE", help="node configuration (TOML; default configs/node/default.toml)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override one configuration key")
    p.add_argument("--accel", choices=["tcg", "kvm"], default="tcg", help="QEMU accelerator (default tcg)")
    p.add_argument("--memory", default="1G", metavar="SIZE", help="guest RAM per node (default 1G)")
    p.add_argument("--smp", type=int, default=2, metavar="N", help="vCPUs per node (default 2)")


def make_parser():
    p = Parser(prog="devmemsim", description="Emulated devmem TCP hardware (NIC + GPU) in QEMU.")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=Parser)
    sub.required = True

    sub.add_parser("build", help="build QEMU, the model, the kernel, modules and guest image")

    r = sub.add_parser("run", help="boot, run CMD on node0, print its output, power off, exit with its status")
    add_node_options(r)
    r.add_argument("--stats-json", metavar="FILE", help="write the node's counters here at power-off")
    r.epilog = "CMD follows '--'."

    b = sub.add_parser("boot", help="boot a long-lived cluster")
    add_node_options(b)
    b.add_argument("--name", default="default", help="cluster name (default 'default')")
    b.add_argument("--compare-nics", action="store_true",
                   help="two nodes only: also link them by e1000e and virtio-net (benchmarks)")

    e = sub.add_parser("exec", help="run CMD on a node of a booted cluster")
    e.add_argument("node", metavar="NODE", help="node0, node1, ... (or 0, 1, ...)")
    e.add_argument("--name", default="default", help="cluster name")
    e.epilog = "CMD follows '--'."

    s = sub.add_parser("stop", help="power off a booted cluster")
    s.add_argument("--name", default="default", help="cluster name")
    s.add_argument("--keep", action="store_true", help="keep the run directory (consoles, logs)")

    st = sub.add_parser("stats", help="a running cluster's PCIe and device counters")
    st.add_argument("node", nargs="?", metavar="NODE", help="only this node")
    st.add_argument("--name", default="default", help="cluster name")
    st.add_argument("--json", action="store_true", help="print JSON (docs/stats.md)")

    sub.add_parser("status", help="list booted clusters and their nodes")
    d = sub.add_parser("demo", help="the main job: devmem TCP vs bounce buffers between two nodes, "
                       "with PCIe counters")
    d.add_argument("--mib", type=int, default=256, metavar="N",
                   help="MiB per transfer (default 256)")
    d.add_argument("--mtu", type=int, default=9000, help="data-link MTU (default 9000)")
    d.add_argument("--json", metavar="FILE", help="also write the runs as JSON ({\"runs\": [...]})")
    d.add_argument("--accel", choices=["tcg", "kvm"], default="tcg", help="QEMU accelerator (default tcg)")
    t = sub.add_parser("test", help="build everything and run the test suite (meson test)")
    t.epilog = "Arguments after '--' go to meson test."
    return p


def command(argv):
    """The command after '--': a single word list is run as is; a single
    string with shell syntax goes through sh -c."""
    if not argv:
        raise UsageError("no command given (usage: ... -- CMD [ARGS...])")
    if len(argv) == 1 and any(c in argv[0] for c in " |;&$<>*(){}'\""):
        return ["sh", "-c", argv[0]]
    return argv


def check_node_options(a):
    if a.nodes < 1 or a.nodes > 16:
        raise UsageError(f"--nodes {a.nodes}: must be 1..16")
    if a.smp < 1 or a.smp > 8:
        raise UsageError(f"--smp {a.smp}: must be 1..8")
    if a.config:
        if not os.path.isfile(a.config):
            raise UsageError(f"--config {a.config}: no such file")
        a.config = os.path.abspath(a.config)
    else:
        a.config = str(ROOT / "configs" / "node" / "default.toml")
    # Configuration mistakes are reported before anything heavy is built.
    with B.build_lock():
        B.build_model()
    node_config(a.config, a.set)


def cmd_run(a) -> int:
    check_node_options(a)
    argv = command(a.argv)
    art = B.build_all()
    cl = Cluster(f"run-{os.getpid()}")
    try:
        cl.boot(art, a.nodes, a.config, a.set, a.accel, a.memory, a.smp)
    except Failure:
        cl.cleanup()  # the message already carries QEMU's output and the console
        raise
    try:
        ag = cl.agent("node0")
        try:
            status = ag.exec(argv)
        finally:
            ag.close()
    finally:
        cl.stop()
        if a.stats_json:
            write_json(a.stats_json, {"nodes": cl.final_stats()})
        cl.cleanup()
    return status


def write_json(path: str, obj) -> None:
    try:
        with open(path, "w") as f:
            f.write(dumps(obj) + "\n")
    except OSError as e:
        raise Failure(f"cannot write {path}: {e.strerror}") from None


def stats_table(node: str, st: dict) -> str:
    p = st["pcie"]
    rows = [f"{node}: PCIe Gen{p['links']['upstream']['gen']} x{p['links']['upstream']['width']}, "
            f"MPS {p['mps']}, MRRS {p['mrrs']}, {p['mode']} mode, t={st['time_ns'] / 1e9:.3f} s"]
    rows.append(f"  {'link':<9}{'dir':<5}{'TLPs':>12}{'payload B':>16}{'wire B':>16}{'busy us':>12}")
    for link in ("nic", "gpu", "upstream"):
        for d in ("up", "down"):
            c = p["links"][link][d]
            rows.append(f"  {link:<9}{d:<5}{c['tlps']:>12}{c['payload_bytes']:>16}{c['wire_bytes']:>16}"
                        f"{c['busy_ns'] / 1000:>12.1f}")
    rc = p["root_complex"]
    rows.append(f"  switch: p2p {p['switch']['p2p_bytes']} B   root complex: to host {rc['host_write_bytes']} B, "
                f"from host {rc['host_read_bytes']} B, p2p {rc['p2p_bytes']} B   DMA faults {p['dma_faults']}")
    g = st["gpu"]
    rows.append(f"  gpu: copy {g['copy_jobs']} jobs ({g['copy_to_dev_bytes']} B in, {g['copy_to_host_bytes']} B out), "
                f"crc {g['crc_jobs']} jobs ({g['crc_bytes']} B), p2p in {g['p2p_in_bytes']} B, "
                f"out {g['p2p_out_bytes']} B, errors {g['errors']}")
    return "\n".join(rows)


def cmd_stats(a) -> int:
    cl = Cluster(a.name)
    if not cl.running():
        raise UsageError(f"cluster {a.name!r} is not running")
    nodes = [node_name(a.node)] if a.node else cl.node_names()
    all_stats = {n: cl.stats(n) for n in nodes}
    if a.json:
        print(dumps({"nodes": all_stats}))
    else:
        print("\n".join(stats_table(n, st) for n, st in all_stats.items()))
    return 0


def cmd_boot(a) -> int:
    check_node_options(a)
    art = B.build_all()
    cl = Cluster(a.name)
    started = time.monotonic()
    if a.compare_nics and a.nodes != 2:
        raise UsageError("--compare-nics needs --nodes 2")
    hellos = cl.boot(art, a.nodes, a.config, a.set, a.accel, a.memory, a.smp, a.compare_nics)
    for node, h in hellos.items():
        print(f"{node}: up, Linux {h.get('kernel')}")
    print(f"cluster {a.name!r}: {len(hellos)} node(s) in {time.monotonic() - started:.1f} s; run dir {cl.dir}")
    print(f"  devmemsim exec node0 --name {a.name} -- CMD    devmemsim stop --name {a.name}")
    return 0


def node_name(s: str) -> str:
    return f"node{s}" if s.isdigit() else s


def cmd_exec(a) -> int:
    argv = command(a.argv)
    cl = Cluster(a.name)
    ag = cl.agent(node_name(a.node))
    try:
        return ag.exec(argv)
    finally:
        ag.close()


def cmd_stop(a) -> int:
    cl = Cluster(a.name)
    if not cl.running():
        raise UsageError(f"cluster {a.name!r} is not running")
    cl.stop()
    if a.keep:
        print(f"cluster {a.name!r} stopped; consoles and logs kept in {cl.dir}")
    else:
        cl.cleanup()
        print(f"cluster {a.name!r} stopped")
    return 0


def cmd_status(a) -> int:
    out = []
    for name in list_clusters():
        cl = Cluster(name)
        if cl.running():
            out.append({"cluster": name, "nodes": cl.status()})
    print(dumps(out))
    return 0


def cmd_demo(a) -> int:
    if not 1 <= a.mib <= 65536:
        raise UsageError(f"--mib {a.mib}: must be 1..65536")
    if a.mtu < 1280:  # the upper bound is the NIC's (MAX_MTU); the guest reports it
        raise UsageError(f"--mtu {a.mtu}: must be at least 1280")
    started = time.monotonic()
    art = B.build_all()
    print(f"devmemsim: built in {time.monotonic() - started:.0f} s; booting two nodes ({a.accel})", flush=True)
    cl = Cluster(f"demo-{os.getpid()}")
    cl.boot(art, 2, str(ROOT / "configs" / "node" / "default.toml"), [], a.accel, "1G", 2)
    try:
        print(T.sh(cl, "node0", DEMO_SCRIPT), end="", flush=True)
        T.set_mtu(cl, ["node0", "node1"], a.mtu)
        runs = []
        for mode in T.MODES:
            print(f"== {mode}: {a.mib} MiB from node0's GPU memory to node1's, MTU {a.mtu}", flush=True)
            runs += T.transfer(cl, mode, a.mib << 20)
    finally:
        cl.stop()
        cl.cleanup()
    print("== node0 sends (tx), node1 receives (rx); counters of that node's PCIe fabric")
    print(T.table(runs))
    if a.json:
        write_json(a.json, {"mib": a.mib, "mtu": a.mtu, "runs": runs})
    print(f"devmemsim: demo finished in {time.monotonic() - started:.0f} s", flush=True)
    return 0 if all(r["verified"] for r in runs) else 1


def cmd_test(a) -> int:
    B.build_all()
    status = subprocess.call(["meson", "test", "-C", str(BUILD), "--print-errorlogs", *a.argv])
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    try:
        with open(BUILD / "meson-logs" / "testlog.json") as f:
            for line in f:
                result = json.loads(line).get("result")
                key = {"OK": "passed", "EXPECTEDFAIL": "passed", "SKIP": "skipped"}.get(result, "failed")
                counts[key] += 1
    except (OSError, ValueError):
        pass
    print(f"tests: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    return status


COMMANDS = {
    "build": lambda a: (B.build_all(), 0)[1],
    "run": cmd_run,
    "boot": cmd_boot,
    "exec": cmd_exec,
    "stop": cmd_stop,
    "stats": cmd_stats,
    "status": cmd_status,
    "demo": cmd_demo,
    "test": cmd_test,
}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Everything after the first '--' is the command to run (or, for
    # 'test', arguments for meson test), never options of ours.
    rest = []
    if "--" in argv:
        i = argv.index("--")
        argv, rest = argv[:i], argv[i + 1 :]
    try:
        a = make_parser().parse_args(argv)
        if rest and a.cmd not in ("run", "exec", "test"):
            raise UsageError(f"'{a.cmd}' takes no command after '--'")
        a.argv = rest
        return COMMANDS[a.cmd](a)
    except (UsageError, Failure) as e:
        print(f"devmemsim: {e}", file=sys.stderr)
        return e.status
    except KeyboardInterrupt:
        print("devmemsim: interrupted", file=sys.stderr)
        return 130
