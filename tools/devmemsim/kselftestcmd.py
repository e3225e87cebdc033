"""`devmemsim kselftest`: the command line of a kernel selftest run (the
run itself is the kselftest package's)."""

import argparse
import os
from pathlib import Path

from . import build, dryrun, kselftest, ktree, options
from .cluster import Machine
from .addressing import MAX_NODES
from .errors import UsageError
from .nodeargs import check_plan_configs
from .paths import cache_dir


def add_command(sub):
    k = sub.add_parser("kselftest", formatter_class=argparse.RawDescriptionHelpFormatter,
                       help="boot two nodes on a kernel (the pinned one or --kernel-tree) and run its "
                            "netdev driver selftests")
    k.add_argument("tests", nargs="*", metavar="TEST",
                   help="a file under tools/testing/selftests/drivers/net, e.g. hw/devmem.py "
                        "(default: the TEST_PROGS of drivers/net and drivers/net/hw, less those listed below)")
    k.add_argument("--kernel-tree", metavar="DIR", help="build and run this kernel source tree (default: the pinned kernel)")
    k.add_argument("--kconfig", action="append", default=[], metavar="FRAGMENT",
                   help="one more kernel config fragment for --kernel-tree (repeatable, in order)")
    options.deprecated_alias(k, "--config", "--kconfig", "kselftest")
    k.add_argument("--nodes", type=int, metavar="N", help="number of nodes (default 2: node0 runs the "
                   "tests, node1 is their ssh remote)")
    kselftest.add_cluster_option(k)
    k.add_argument("--ktap", metavar="FILE", help="write the run as KTAP (one nested block per file)")
    k.add_argument("--junit", metavar="FILE", help="write JUnit XML (a testsuite per file, a testcase per case)")
    options.add_json(k, "a summary; the consoles are kept beside FILE")
    options.add_dry_run(k)
    k.epilog = ("Exit status: 0 every case passed (skips allowed), 1 a case failed or a kernel complained,\n"
                "125 the tree did not build or boot (git bisect run skips it), 2 a usage error.\n\n"
                "Left out of the default set (they need hardware devmemsim does not model):\n"
                + kselftest.excluded_table())
    k.set_defaults(run=cmd_kselftest)


def cmd_kselftest(a) -> int:
    if a.cluster and a.nodes is not None:
        raise UsageError("--nodes: not with --cluster (the cluster file says it)")
    a.nodes = 2 if a.nodes is None else a.nodes
    if not 2 <= a.nodes <= MAX_NODES:
        raise UsageError(f"--nodes {a.nodes}: must be 2..{MAX_NODES} (node0 runs the tests, node1 is the remote)")
    fragments = []
    for frag in a.kconfig:
        if not os.path.isfile(frag):
            raise UsageError(f"--kconfig {frag}: no such file")
        fragments.append(Path(frag).resolve())
    for opt in ("ktap", "junit", "json"):
        out = getattr(a, opt)
        if out and not (opt == "json" and out == "-") and not Path(out).resolve().parent.is_dir():
            raise UsageError(f"--{opt} {out}: no such directory {Path(out).parent}")
    if fragments and not a.kernel_tree:
        raise UsageError("--kconfig needs --kernel-tree (the pinned kernel's configuration is fixed)")
    plan = kselftest.cluster_plan(a.cluster, a.nodes)
    checked = check_plan_configs(plan, build=not a.dry_run) if a.cluster else True
    tree = ktree.tree_dir(Path(a.kernel_tree)) if a.kernel_tree else None
    if a.dry_run:
        return dry_run(a, plan, tree, checked)
    files = kselftest.resolve(tree or build.linux_source(), a.tests)
    # --json to stdout: the run's lines go to stderr, stdout is the summary alone.
    with options.text_to_stderr(a.json == "-"):
        kbuild = ktree.build_kselftest(tree, fragments)
        return kselftest.run(kbuild, files, plan, kselftest.Outputs(a.ktap or "", a.junit or "", a.json or ""))


def dry_run(a, plan, tree: Path | None, configs_checked: bool) -> int:
    """--dry-run: the cluster, the files it would run, the QEMU command
    lines; nothing fetched, built or booted."""
    r = kselftest.roles(plan)
    src = tree or build.linux_source_fetched()
    then = [f"then: {r.runner.name} runs the selftests against its NIC 0, {r.remote.name} is their ssh remote"]
    if src:
        files = kselftest.resolve(src, a.tests)
        then += [f"  {tf.rel}" + (" (on a boot with more vCPUs)" if tf.rel in kselftest.FILE_MACHINES else "")
                 for tf in files]
    else:
        then.append("  " + (" ".join(a.tests) or "the default set") + " (checked once the pinned kernel's source "
                    "is fetched)")
    for opt in ("ktap", "junit", "json"):
        if getattr(a, opt):
            then.append(f"  --{opt}: {'stdout' if getattr(a, opt) == '-' else getattr(a, opt)}")
    if tree:
        art, rows = dryrun.tree_artifacts(cache_dir() / f"ktree-{ktree.tree_key(tree)}")
        rows.insert(1, ("kernel tree", str(tree), "built incrementally with " + " ".join(
            ["its selftests' fragments", "configs/kernel/devmemsim.config", *a.kconfig])))
    else:
        art, rows = dryrun.pinned_artifacts("default")
    return dryrun.show("kselftest", "kselftest-PID-0", plan, Machine(), art, rows, configs_checked, then)
