"""The cluster commands: run (boot, one command, power off), boot, exec,
stop, stats and status."""

import os
import re
import shlex
import time
from pathlib import Path

from . import dryrun, options, srun, stats
from .build import build_all
from .cluster import Cluster, list_clusters
from .errors import Failure, UsageError, log
from .nodeargs import DYING, add_node_options, check_node_options, command, machine, node_arg, takes_command


def add_commands(sub):
    r = sub.add_parser("run", help="boot, run CMD on node0, print its output, power off, exit with its status")
    add_node_options(r)
    r.add_argument("--stats-json", metavar="FILE", help="write the node's counters here at power-off")
    r.epilog = ("CMD follows '--'. With --trace the run directory is kept (its path is printed). " + DYING)
    r.set_defaults(run=cmd_run, takes_command=True)
    takes_command(r)

    b = sub.add_parser("boot", help="boot a long-lived cluster")
    add_node_options(b)
    b.add_argument("--name", default="default", help="cluster name (default 'default')")
    b.add_argument("--compare-nics", action="store_true",
                   help="two nodes only: also link them by e1000e and virtio-net (benchmarks)")
    b.epilog = DYING
    b.set_defaults(run=cmd_boot)

    e = sub.add_parser("exec", help="run CMD on a node of a booted cluster")
    e.add_argument("node", metavar="NODE", help="node0, node1, ... (or 0, 1, ...)")
    e.add_argument("--name", default="default", help="cluster name")
    e.epilog = "CMD follows '--'. " + DYING
    e.set_defaults(run=cmd_exec, takes_command=True)
    takes_command(e)

    s = sub.add_parser("stop", help="power off a booted cluster")
    s.add_argument("--name", default="default", help="cluster name")
    s.add_argument("--keep", action="store_true", help="keep the run directory (consoles, logs)")
    s.set_defaults(run=cmd_stop)

    st = sub.add_parser("stats", help="a running cluster's PCIe and device counters")
    st.add_argument("node", nargs="?", metavar="NODE", help="only this node")
    st.add_argument("--name", default="default", help="cluster name")
    options.add_json(st, "the counters (docs/stats.md) instead of the table")
    st.set_defaults(run=cmd_stats)

    ss = sub.add_parser("status", help="list booted clusters and their nodes: state, QEMU pid, the ssh command "
                        "that reaches each")
    options.add_json(ss, "[{\"cluster\": NAME, \"nodes\": [{\"node\", \"pid\", \"dir\", ...}]}] instead of the table")
    ss.set_defaults(run=cmd_status)


def cmd_run(a) -> int:
    argv = command(a.argv)
    plan = check_node_options(a)
    if a.dry_run:
        art, rows = dryrun.pinned_artifacts()
        then = [f"then: {shlex.join(argv)} on {plan.nodes[0].name}, and the nodes power off"
                + (f"; their counters to {a.stats_json}" if a.stats_json else "")]
        return dryrun.show("run", "run-PID", plan, machine(a), art, rows, a.configs_checked, then)
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
    if a.json not in (None, "-") and a.node is None and (a.json.isdigit() or a.json in cl.node_names()):
        a.node, a.json = a.json, "-"  # `stats --json NODE`, as before --json took a FILE
    if a.json and a.json != "-" and not Path(a.json).resolve().parent.is_dir():
        raise UsageError(f"--json {a.json}: no such directory {Path(a.json).parent}")
    nodes = [node_arg(cl, a.node)] if a.node else cl.node_names()
    all_stats = {n: cl.stats(n) for n in nodes}
    if a.json:
        stats.write_json(a.json, {"nodes": all_stats})
    else:
        print("\n".join(stats.table(n, st) for n, st in all_stats.items()))
    return 0


def cmd_boot(a) -> int:
    plan = check_node_options(a)
    if a.compare_nics and (a.cluster or a.nodes != 2):
        raise UsageError("--compare-nics needs --nodes 2")
    if a.dry_run:
        art, rows = dryrun.pinned_artifacts()
        then = [f"cluster {a.name!r} is running: the boot would refuse it (devmemsim stop --name {a.name})"] \
            if Cluster(a.name).running() else []
        return dryrun.show("boot", a.name, plan, machine(a, a.compare_nics), art, rows, a.configs_checked, then)
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
    if a.json and a.json != "-" and not Path(a.json).resolve().parent.is_dir():
        raise UsageError(f"--json {a.json}: no such directory {Path(a.json).parent}")
    out = []
    for name in list_clusters():
        cl = Cluster(name)
        if cl.running():
            out.append({"cluster": name, "nodes": cl.status()})
    if a.json:
        stats.write_json(a.json, out)
    elif not out:
        print("no cluster is running (devmemsim boot starts one)")
    else:
        print(status_table(out))
    return 0


STATUS_COLUMNS = ("CLUSTER", "NODE", "STATE", "PID", "SSH")
# What a node's QEMU command line (RUN/NAME/NODE.cmdline) says of how to
# reach its sshd: the management NIC's host forward, and the payload disk,
# whose stage beside it holds the nodes' ssh key (build.build_payload).
HOSTFWD = re.compile(r"hostfwd=tcp:127\.0\.0\.1:(\d+)-:22\b")
PAYLOAD = re.compile(r"file=([^,\s]+),if=none,id=payload\b")


def status_table(clusters: list) -> str:
    """One row per node of each cluster (cmd_status's JSON)."""
    rows = []
    for c in clusters:
        cl = Cluster(c["cluster"])
        for n in c["nodes"]:
            host = n.get("host") or n.get("slurm", {}).get("host", "")
            on_host = bool(n.get("host")) or (bool(n.get("slurm")) and not getattr(
                srun.Step.recorded(cl.dir, n["node"]), "local", True))
            ssh = ssh_command(cl, n["node"], host if on_host else "") if n["pid"] else ""
            rows.append((c["cluster"], n["node"], "running" if n["pid"] else "exited", str(n["pid"] or "-"),
                         ssh or "-"))
    widths = [max(len(r[i]) for r in [STATUS_COLUMNS, *rows]) for i in range(len(STATUS_COLUMNS) - 1)]
    return "\n".join("  ".join([*(v.ljust(w) for v, w in zip(r, widths)), r[-1]]).rstrip()
                     for r in [STATUS_COLUMNS, *rows])


def ssh_command(cl: Cluster, node: str, host: str = "") -> str:
    """The ssh command that logs in to node as root through its
    management NIC (through `host`, the node's, if it runs on another)."""
    try:
        cmdline = (cl.dir / f"{node}.cmdline").read_text()
    except OSError:
        return ""
    port, payload = HOSTFWD.search(cmdline), PAYLOAD.search(cmdline)
    if not port:
        return ""
    argv = ["ssh"]
    if payload:
        argv += ["-i", str(Path(payload.group(1)).parent / "payload" / "ssh" / "id_ed25519")]
    argv += ["-p", port.group(1), "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
             "-o", "LogLevel=ERROR"]  # a new cluster is new host keys: nothing to remember or warn of
    if host:
        argv += ["-J", host]
    return shlex.join(argv + ["root@127.0.0.1"])
