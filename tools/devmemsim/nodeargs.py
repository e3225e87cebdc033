"""What the commands that boot nodes share on the command line: the node and
cluster-file options, their checks (before anything heavy is built), the
command after '--', and a node named by index."""

import os
from pathlib import Path

from . import clusterfile, options, srun
from .addressing import MAX_NODES
from .build import build_lock, build_model
from .cluster import Cluster, Machine, node_config
from .errors import UsageError
from .paths import BUILD

# What --cluster FILE replaces: the file says it (option -> its default).
NODE_OPTION_DEFAULTS = {"nodes": 1, "config": "", "set": [], "memory": "1G", "smp": 2}

# What run, exec, boot and demo do when a node dies under them.
DYING = ("Exit status 3 if a node dies meanwhile: its kernel reports an oops, BUG, panic, a stall or a hung "
         "task, its QEMU exits, or its agent stops answering; the report and the console's path are printed "
         "(a WARN and other kernel complaints are printed too, and the command goes on).")


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
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a configuration key (the nodes'; repeatable)")
    p.add_argument("--accel", choices=["tcg", "kvm"], default="tcg", help="QEMU accelerator (default tcg)")
    p.add_argument("--memory", metavar="SIZE", help="guest RAM per node (default 1G)")
    p.add_argument("--smp", type=int, metavar="N", help="vCPUs per node (default 2)")
    add_cluster_file_options(p)
    p.add_argument("--trace", action="append", default=[], metavar="PATTERN",
                   help="pass '-trace PATTERN' to every node's QEMU (repeatable; e.g. 'devmemsim_*', "
                        "docs/tracing.md); the events go to NODE.log in the cluster's run directory")
    options.add_dry_run(p)


def takes_command(p, tail="-- CMD [ARGS...]"):
    """p's usage line ends in tail, what follows '--' (not parsed)."""
    p.usage = p.format_usage().removeprefix("usage: ").rstrip() + " " + tail


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
    options; checked before anything heavy is built (with --dry-run, by
    a dms-config already built only: a.configs_checked says whether)."""
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
    a.configs_checked = check_configs([(a.config or str(clusterfile.DEFAULT_CONFIG), a.set)],
                                      build=not getattr(a, "dry_run", False))
    return clusterfile.default_plan(a.nodes, a.config, a.set, a.memory, a.smp)


def check_configs(configs: list, build: bool = True) -> bool:
    """Check node configurations [(file, sets)] with the model's schema
    (dms-config), before anything heavy is built. Without build
    (--dry-run), only if dms-config is built already; whether they were
    checked."""
    if build:
        with build_lock():
            build_model(["sysc-model/dms-config"])
    elif not (BUILD / "sysc-model" / "dms-config").is_file():
        return False
    for config, sets in configs:
        node_config(config, sets)
    return True


def check_plan_configs(plan: clusterfile.Plan, build: bool = True) -> bool:
    """check_configs() of every node of a cluster file's plan."""
    return check_configs([(str(n.config), list(n.sets)) for n in plan.nodes], build)


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
        a.configs_checked = check_plan_configs(plan, build=not getattr(a, "dry_run", False))
    return plan


def machine(a, compare_nics: bool = False) -> Machine:
    return Machine(accel=a.accel, pcap=check_pcap(a), compare_nics=compare_nics, trace=tuple(a.trace),
                   srun=a.steps)


def node_arg(cl: Cluster, s: str) -> str:
    """A NODE argument: its name, or its index in the cluster for short."""
    if s.isdigit():
        names = cl.node_names()
        return names[int(s)] if int(s) < len(names) else f"node{s}"
    return s
