"""devmemsim command line: the parser and one function per command."""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from . import build, clusterfile, collective, conformance, demo, fidelity, kselftest, sim, srun, stats, sweep
from .addressing import MAX_NODES
from .build import build_all, build_for_tests, build_in_background, build_lock, build_model
from .cluster import Cluster, Machine, list_clusters, node_config
from .errors import Failure, UsageError, log
from .paths import BUILD


class Parser(argparse.ArgumentParser):
    """argparse that reports a mistake as one line and exits with 2."""

    def error(self, message):
        raise UsageError(message)


# What --cluster FILE replaces: the file says it (option -> its default).
NODE_OPTION_DEFAULTS = {"nodes": 1, "config": "", "set": [], "memory": "1G", "smp": 2}


def add_cluster_file_options(p):
    p.add_argument("--cluster", metavar="FILE",
                   help="cluster file (TOML: nodes, their hardware, networks; configs/cluster/example.toml)")
    p.add_argument("--pcap", metavar="DIR",
                   help="record every node's data-link traffic in DIR/NODE-NETWORK.pcap (QEMU's filter-dump)")
    p.add_argument("--srun", action="store_true",
                   help="inside a Slurm allocation (salloc, sbatch): start each node's QEMU as a job step "
                        "(srun) on the job's hosts, round robin or the node's own host")


def add_node_options(p):
    # Defaults are None so that check_node_options() sees what was given.
    p.add_argument("--nodes", type=int, metavar="N", help="number of nodes (default 1): the default cluster of "
                   "N nodes alike, short for a cluster file")
    p.add_argument("--config", metavar="FILE", help="node configuration (TOML; default configs/node/default.toml)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override one configuration key")
    p.add_argument("--accel", choices=["tcg", "kvm"], default="tcg", help="QEMU accelerator (default tcg)")
    p.add_argument("--memory", metavar="SIZE", help="guest RAM per node (default 1G)")
    p.add_argument("--smp", type=int, metavar="N", help="vCPUs per node (default 2)")
    add_cluster_file_options(p)
    p.add_argument("--trace", action="append", default=[], metavar="PATTERN",
                   help="pass '-trace PATTERN' to every node's QEMU (repeatable; e.g. 'devmemsim_*', "
                        "docs/tracing.md); the events go to NODE.log in the cluster's run directory")


# What run, exec, boot and demo do when a node dies under them.
DYING = ("Exit status 3 if a node dies meanwhile: its kernel reports an oops, BUG, panic, a stall or a hung "
         "task, its QEMU exits, or its agent stops answering; the report and the console's path are printed "
         "(a WARN and other kernel complaints are printed too, and the command goes on).")


def add_cluster_commands(sub):
    r = sub.add_parser("run", help="boot, run CMD on node0, print its output, power off, exit with its status")
    add_node_options(r)
    r.add_argument("--stats-json", metavar="FILE", help="write the node's counters here at power-off")
    r.epilog = ("CMD follows '--'. With --trace the run directory is kept (its path is printed). " + DYING)

    b = sub.add_parser("boot", help="boot a long-lived cluster")
    add_node_options(b)
    b.add_argument("--name", default="default", help="cluster name (default 'default')")
    b.add_argument("--compare-nics", action="store_true",
                   help="two nodes only: also link them by e1000e and virtio-net (benchmarks)")
    b.epilog = DYING

    e = sub.add_parser("exec", help="run CMD on a node of a booted cluster")
    e.add_argument("node", metavar="NODE", help="node0, node1, ... (or 0, 1, ...)")
    e.add_argument("--name", default="default", help="cluster name")
    e.epilog = "CMD follows '--'. " + DYING

    s = sub.add_parser("stop", help="power off a booted cluster")
    s.add_argument("--name", default="default", help="cluster name")
    s.add_argument("--keep", action="store_true", help="keep the run directory (consoles, logs)")

    st = sub.add_parser("stats", help="a running cluster's PCIe and device counters")
    st.add_argument("node", nargs="?", metavar="NODE", help="only this node")
    st.add_argument("--name", default="default", help="cluster name")
    st.add_argument("--json", action="store_true", help="print JSON (docs/stats.md)")

    sub.add_parser("status", help="list booted clusters and their nodes")


def make_parser():
    p = Parser(prog="devmemsim", description="Emulated devmem TCP hardware (NIC + GPU) in QEMU.")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    sub.add_parser("build", help="build QEMU, the model, the kernel, modules and guest image")
    add_cluster_commands(sub)
    d = sub.add_parser("demo", help="the main job: devmem TCP vs bounce buffers between two nodes, "
                       "with PCIe counters")
    d.add_argument("--mib", type=int, default=256, metavar="N",
                   help="MiB per transfer (default 256)")
    d.add_argument("--mtu", type=int, default=9000, help="data-link MTU (default 9000)")
    d.add_argument("--mode", default="both", help="transfers: both (default), devmem or bounce")
    d.add_argument("--json", metavar="FILE", help="also write the runs as JSON ({\"runs\": [...]})")
    d.add_argument("--accel", choices=["tcg", "kvm"], default="tcg", help="QEMU accelerator (default tcg)")
    d.add_argument("--pattern", choices=collective.PATTERNS,
                   help="a collective instead: every GPU of each data network sends --mib MiB to another "
                        "(ring: i -> i+1; pairs: 0<->1, 2<->3...; all-to-all: n-1 steps of a shifted ring), "
                        "the transfers of a step at once")
    add_cluster_file_options(d)
    d.epilog = ("With --cluster, the transfers go between the file's first two nodes (their NIC 0); with "
                "--pattern, between every NIC/GPU pair of each network that joins two or more. " + DYING)
    sim.add_command(sub)
    sweep.add_command(sub)
    fidelity.add_command(sub)
    conformance.add_command(sub)
    t = sub.add_parser("test", help="build what the selected tests need and run them (meson test)")
    t.add_argument("--quick", action="store_true",
                   help="only the contributors' tier (meson suite 'quick': unit, qemu, cli, lint, the "
                        "fuzz smoke and one guest smoke; no debug kernel, no second kernel tree)")
    t.epilog = "Arguments after '--' go to meson test."
    add_kselftest_command(sub)
    return p


def add_kselftest_command(sub):
    k = sub.add_parser("kselftest", formatter_class=argparse.RawDescriptionHelpFormatter,
                       help="boot two nodes on a kernel (the pinned one or --kernel-tree) and run its "
                            "netdev driver selftests")
    k.add_argument("tests", nargs="*", metavar="TEST",
                   help="a file under tools/testing/selftests/drivers/net, e.g. hw/devmem.py "
                        "(default: the TEST_PROGS of drivers/net and drivers/net/hw, less those listed below)")
    k.add_argument("--kernel-tree", metavar="DIR", help="build and run this kernel source tree (default: the pinned kernel)")
    k.add_argument("--config", action="append", default=[], metavar="FRAGMENT",
                   help="one more kernel config fragment for --kernel-tree (repeatable, in order)")
    k.add_argument("--nodes", type=int, metavar="N", help="nodes to boot (default 2: node0 runs the "
                   "tests, node1 is their ssh remote)")
    kselftest.add_cluster_option(k)
    k.add_argument("--ktap", metavar="FILE", help="write the run as KTAP (one nested block per file)")
    k.add_argument("--junit", metavar="FILE", help="write JUnit XML (a testsuite per file, a testcase per case)")
    k.add_argument("--json", metavar="FILE", help="write a JSON summary; the consoles are kept beside it")
    k.epilog = ("Exit status: 0 every case passed (skips allowed), 1 a case failed or a kernel complained,\n"
                "125 the tree did not build or boot (git bisect run skips it), 2 a usage error.\n\n"
                "Left out of the default set (they need hardware devmemsim does not model):\n"
                + kselftest.excluded_table())


def command(argv):
    """The command after '--': a single word list is run as is; a single
    string with shell syntax goes through sh -c."""
    if not argv:
        raise UsageError("no command given (usage: ... -- CMD [ARGS...])")
    if len(argv) == 1 and any(c in argv[0] for c in " |;&$<>*(){}'\""):
        return ["sh", "-c", argv[0]]
    return argv


def cluster_plan(a) -> clusterfile.Plan:
    """The plan of --cluster FILE, or the default cluster of the node
    options; checked before anything heavy is built."""
    if a.cluster:
        given = [f"--{k}" for k in NODE_OPTION_DEFAULTS if getattr(a, k, None) is not None]
        if given:
            raise UsageError(f"{given[0]}: not with --cluster (the cluster file says it)")
        if not os.path.isfile(a.cluster):
            raise UsageError(f"--cluster {a.cluster}: no such file")
        return clusterfile.load(a.cluster)
    for k, v in NODE_OPTION_DEFAULTS.items():
        if getattr(a, k, None) is None:
            setattr(a, k, v)
    if not 1 <= a.nodes <= MAX_NODES:
        raise UsageError(f"--nodes {a.nodes}: must be 1..{MAX_NODES}")
    if a.smp < 1 or a.smp > clusterfile.MAX_SMP:
        raise UsageError(f"--smp {a.smp}: must be 1..{clusterfile.MAX_SMP}")
    if not clusterfile.MEMORY_RE.match(a.memory):
        raise UsageError(f"--memory {a.memory}: expected a size such as 512M or 2G")
    if a.config and not os.path.isfile(a.config):
        raise UsageError(f"--config {a.config}: no such file")
    # The model's own checks first: they name the line of a malformed file.
    check_configs([(a.config or str(clusterfile.DEFAULT_CONFIG), a.set)])
    return clusterfile.default_plan(a.nodes, a.config, a.set, a.memory, a.smp)


def check_configs(configs: list) -> None:
    """Check node configurations [(file, sets)] with the model's schema
    (dms-config), before anything heavy is built."""
    with build_lock():
        build_model()
    for config, sets in configs:
        node_config(config, sets)


def check_plan_configs(plan: clusterfile.Plan) -> None:
    """check_configs() of every node of a cluster file's plan."""
    check_configs([(str(n.config), list(n.sets)) for n in plan.nodes])


def cmd_conformance(a) -> int:
    return conformance.run(a, check_plan_configs)


def check_pcap(a) -> str:
    """--pcap DIR as an absolute path ("" without it)."""
    if not a.pcap:
        return ""
    pcap = Path(a.pcap).resolve()
    if not pcap.parent.is_dir():
        raise UsageError(f"--pcap {a.pcap}: no such directory {pcap.parent}")
    return str(pcap)


def check_node_options(a) -> clusterfile.Plan:
    check_pcap(a)
    alloc = srun.allocation() if a.srun else None
    plan = cluster_plan(a)
    a.steps = srun.place(plan, alloc) if alloc else None
    if a.cluster:
        check_configs([(str(n.config), list(n.sets)) for n in plan.nodes])
    return plan


def machine(a, compare_nics: bool = False) -> Machine:
    return Machine(accel=a.accel, pcap=check_pcap(a), compare_nics=compare_nics, trace=tuple(a.trace),
                   srun=a.steps)


def cmd_build(a) -> int:
    build_all()
    return 0


def cmd_run(a) -> int:
    plan = check_node_options(a)
    argv = command(a.argv)
    art = build_all()
    cl = Cluster(f"run-{os.getpid()}")
    try:
        cl.boot_plan(art, plan, machine(a), watch=True)
    except Failure:
        cl.cleanup()  # the message already carries QEMU's output and the console
        raise
    try:
        status = cl.exec(plan.nodes[0].name, argv)
    finally:
        cl.stop()
        if a.stats_json:
            stats.write_json(a.stats_json, {"nodes": cl.final_stats()})
        if a.trace:
            log(f"trace output kept in {cl.dir}/node*.log")
        else:
            cl.cleanup()
    return status


def cmd_stats(a) -> int:
    cl = Cluster(a.name)
    if not cl.running():
        raise UsageError(f"cluster {a.name!r} is not running")
    nodes = [node_arg(cl, a.node)] if a.node else cl.node_names()
    all_stats = {n: cl.stats(n) for n in nodes}
    if a.json:
        print(stats.dumps({"nodes": all_stats}))
    else:
        print("\n".join(stats.table(n, st) for n, st in all_stats.items()))
    return 0


def cmd_boot(a) -> int:
    plan = check_node_options(a)
    if a.compare_nics and (a.cluster or a.nodes != 2):
        raise UsageError("--compare-nics needs --nodes 2")
    art = build_all()
    cl = Cluster(a.name)
    started = time.monotonic()
    hellos = cl.boot_plan(art, plan, machine(a, a.compare_nics), watch=True)
    booted = time.monotonic() - started
    for node, h in hellos.items():
        print(f"{node}: up, Linux {h.get('kernel')}")
    print(f"cluster {a.name!r}: {len(hellos)} node(s) in {booted:.1f} s; run dir {cl.dir}")
    if a.pcap:
        print(f"  data-link traffic recorded in {Path(a.pcap).resolve()}/NODE-NETWORK.pcap")
    print(f"  devmemsim exec {plan.nodes[0].name} --name {a.name} -- CMD    devmemsim stop --name {a.name}")
    return 0


def node_arg(cl: Cluster, s: str) -> str:
    """A NODE argument: its name, or its index in the cluster for short."""
    if s.isdigit():
        names = cl.node_names()
        return names[int(s)] if int(s) < len(names) else f"node{s}"
    return s


def cmd_exec(a) -> int:
    argv = command(a.argv)
    cl = Cluster(a.name)
    return cl.exec(node_arg(cl, a.node), argv)


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
    print(stats.dumps(out))
    return 0


def cmd_demo(a) -> int:
    plan = None
    alloc = srun.allocation() if a.srun else None
    if a.cluster:
        plan = cluster_plan(a)
        if len(plan.nodes) < 2:
            raise UsageError(f"{a.cluster}: the demo needs two nodes; the file has {len(plan.nodes)}")
        crossed = [plan.networks.get(plan.nodes[0].nics[0].network)]
        if a.pattern:
            crossed = collective.networks(plan)
        for net in crossed:
            if net and net.kind == "switch" and a.mtu > clusterfile.SWITCH_MTU:
                raise UsageError(f"--mtu {a.mtu}: the transfers cross network {net.name!r}, a VDE switch, which "
                                 f"carries an MTU of {clusterfile.SWITCH_MTU} at most (--mtu {clusterfile.SWITCH_MTU})")
    pcap = check_pcap(a)
    placement = srun.place(plan or demo.default_plan(), alloc) if alloc else None
    return demo.run(a.mib, a.mtu, a.accel, a.json, a.mode, plan=plan, pcap=pcap, pattern=a.pattern or "",
                    placement=placement)


def cmd_kselftest(a) -> int:
    if a.cluster and a.nodes is not None:
        raise UsageError("--nodes: not with --cluster (the cluster file says it)")
    a.nodes = 2 if a.nodes is None else a.nodes
    if not 2 <= a.nodes <= MAX_NODES:
        raise UsageError(f"--nodes {a.nodes}: must be 2..{MAX_NODES} (node0 runs the tests, node1 is the remote)")
    fragments = []
    for frag in a.config:
        if not os.path.isfile(frag):
            raise UsageError(f"--config {frag}: no such file")
        fragments.append(Path(frag).resolve())
    for opt in ("ktap", "junit", "json"):
        out = getattr(a, opt)
        if out and not Path(out).resolve().parent.is_dir():
            raise UsageError(f"--{opt} {out}: no such directory {Path(out).parent}")
    if fragments and not a.kernel_tree:
        raise UsageError("--config needs --kernel-tree (the pinned kernel's configuration is fixed)")
    plan = kselftest.cluster_plan(a.cluster, a.nodes)
    if a.cluster:
        check_plan_configs(plan)
    tree = build.tree_dir(Path(a.kernel_tree)) if a.kernel_tree else None
    files = kselftest.resolve(tree or build.linux_source(), a.tests)
    kbuild = build.build_kselftest(tree, fragments)
    return kselftest.run(kbuild, files, plan, kselftest.Outputs(a.ktap or "", a.junit or "", a.json or ""))


def cmd_test(a) -> int:
    meson_args = (["--suite", "quick"] if a.quick else []) + a.argv
    with build_in_background(build_for_tests(meson_args)):
        status = subprocess.call(["meson", "test", "-C", str(BUILD), "--print-errorlogs", *meson_args])
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
    "build": cmd_build,
    "run": cmd_run,
    "boot": cmd_boot,
    "exec": cmd_exec,
    "stop": cmd_stop,
    "stats": cmd_stats,
    "status": cmd_status,
    "demo": cmd_demo,
    "sim": sim.run,
    "sweep": sweep.run,
    "fidelity": fidelity.run,
    "test": cmd_test,
    "kselftest": cmd_kselftest,
    "conformance": cmd_conformance,
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
    except KeyboardInterrupt as e:  # kselftest.Stopped says which signal
        print(f"devmemsim: {e or 'interrupted'}", file=sys.stderr)
        return getattr(e, "status", 130)
