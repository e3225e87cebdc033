"""--dry-run (boot, run, demo, kselftest): what the command would start,
with nothing built, booted or written -- the plan's nodes and their
configurations, where each artifact is or would be, and each node's QEMU
command line as cluster.qemu_argv() makes it.

The artifacts' paths are keyed by their inputs (build.py); what cannot be
known without building shows as a placeholder: the kernel's build directory
is keyed by the name of the source tree fetch-linux.sh unpacks, so before
the first fetch the bzImage is "<bzImage: built on first boot>". A boot
first rebuilds whatever of them is stale; the paths stay."""

import re
import shlex
from pathlib import Path

from . import build, clusterfile
from .build import Artifacts
from .cluster import Machine, NodeSpec, qemu_argv
from .paths import BUILD, ROOT, qemu_binary, run_root

BZIMAGE_LATER = "<bzImage: built on first boot>"
# qemu_argv() asks the kernel for a free port for the management NIC's ssh
# forward; the boot asks again.
HOSTFWD = re.compile(r"(hostfwd=tcp:127\.0\.0\.1:)\d+")


def pinned_artifacts(flavour: str = "") -> tuple[Artifacts, list]:
    """The pinned build's Artifacts as a boot would get them from
    build.build_all(), and a row (what, where, state) per artifact."""
    flavour = flavour or build.kernel_flavour()
    qemu = qemu_binary()
    rows = [("QEMU", f"Debian's qemu {build.QEMU_VERSION} with devmemsim's devices", cached(qemu))]
    bzimage, release = BZIMAGE_LATER, ""
    src = build.linux_source_fetched()
    if src:
        key, out = build.kernel_build_dir(src.name, flavour)
        bzimage = out / "arch" / "x86" / "boot" / "bzImage"
        kernel_state = "built" if build.stamped(out / "devmemsim.key", key) and bzimage.is_file() else "not built yet"
        if kernel_state == "built":
            release = (out / "include" / "config" / "kernel.release").read_text().strip()
        rows.append((f"kernel ({flavour})", str(bzimage), kernel_state + (f", Linux {release}" if release else "")))
    else:
        rows.append((f"kernel ({flavour})", BZIMAGE_LATER, "linux-source not fetched yet"))
    key, rootfs_dir = build.rootfs_dir()
    rootfs = rootfs_dir / "rootfs.img"
    rows.append(("guest image", str(rootfs), "built" if build.stamped(rootfs_dir / "devmemsim.key", key)
                 and rootfs.is_file() else "not built yet"))
    payload = build.guest_dir(flavour) / "payload.img"
    rows.append(("payload disk", str(payload), cached(payload)))
    return Artifacts(qemu=qemu, bzimage=bzimage, kernel_version=release, rootfs=rootfs, payload=payload), rows


def tree_artifacts(where: Path) -> tuple[Artifacts, list]:
    """A kernel tree's build in where (ktree.build_tree), with the pinned
    QEMU and guest image."""
    pinned, rows = pinned_artifacts("default")
    bzimage = where / "obj" / "arch" / "x86" / "boot" / "bzImage"
    payload = where / "payload.img"
    rows = [rows[0], ("kernel (your tree)", str(bzimage), cached(bzimage)), rows[2],
            ("payload disk", str(payload), cached(payload))]
    return Artifacts(qemu=pinned.qemu, bzimage=bzimage, kernel_version="", rootfs=pinned.rootfs,
                     payload=payload), rows


def cached(path: Path) -> str:
    return "built" if path.is_file() else "not built yet"


def show(command: str, cluster: str, plan: clusterfile.Plan, machine: Machine, art: Artifacts, rows: list,
         configs_checked: bool, steps: list = ()) -> int:
    """Print the plan of `command` (its cluster name, nodes, artifacts),
    then what it does after the boot (steps: lines), then one QEMU command
    line per node; exit status 0."""
    d = run_root() / cluster
    print(f"devmemsim {command} --dry-run: nothing is built, booted or written")
    print(f"cluster {cluster!r} from {plan.source}: {len(plan.nodes)} node(s), run directory {d}")
    if not configs_checked:
        print(f"  (node configurations not checked: {BUILD / 'sysc-model' / 'dms-config'} is not built yet; "
              "the boot checks them first)")
    for n in plan.nodes:
        where = ""
        if n.host:
            where = f", on host {n.host} (QEMU started there through ssh)"
        if machine.srun:
            where = f", as a Slurm job step on {machine.srun.hosts[n.name]}"
        nics = ", ".join(f"NIC {c.pair} on {c.network} ({c.address.addr})" if c.address else f"NIC {c.pair} unlinked"
                         for c in n.nics)
        sets = "".join(f" --set {s}" for s in n.sets)
        print(f"  {n.name}: {shown(n.config)}{sets}; {n.memory} RAM, {n.smp} vCPU(s); {nics}{where}")
    print("artifacts (a boot first builds what is missing or stale):")
    width = max(len(r[0]) for r in rows)
    for what, where, state in rows:
        print(f"  {what.ljust(width)}  {where}: {state}")
    for line in steps:
        print(line)
    print(f"QEMU command lines ({machine.accel}; QEMU runs with {BUILD / 'sysc-model'} first in LD_LIBRARY_PATH):")
    for n in plan.nodes:
        # The layout comes from the node's file; the boot writes the merged
        # configuration (its --set keys applied) to RUN/NAME/NODE.toml, which QEMU reads.
        spec = NodeSpec(n, Path(n.config))
        argv = qemu_argv(art, d, spec, plan, machine, config_at=d / f"{n.name}.toml")
        print(f"{n.name}: " + shlex.join(HOSTFWD.sub(r"\1<free port>", arg) for arg in argv))
    return 0


def shown(path) -> str:
    """A configuration file, relative to the checkout when in it."""
    p = Path(path)
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)
