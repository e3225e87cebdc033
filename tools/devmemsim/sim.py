"""'devmemsim sim': the standalone timed simulator (dms-sim), no QEMU.

Nodes of the model in one process, a driver model per NIC, Ethernet wires or
an ideal switch, bulk TCP-like streams or request/response messages;
docs/architecture.md, "dms-sim"."""

import os
import subprocess
from pathlib import Path

from . import options
from .build import SIM_TARGETS, build_lock, build_model
from .errors import UsageError
from .paths import BUILD


def add_command(sub):
    s = sub.add_parser("sim", help="standalone timed simulation of nodes on a wire or a switch "
                       "(no QEMU): devmem or bounce streams or messages, JSON out")
    s.add_argument("--config", default="", metavar="FILE",
                   help="node configuration (TOML; default: the model's defaults, timed mode)")
    s.add_argument("--workload", default="", metavar="FILE",
                   help="workload (TOML; configs/sim/bulk.toml lists every key, configs/sim/rr.toml "
                        "the request/response ones)")
    s.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a configuration key (repeatable): the workload's (run.*, traffic.*, driver.*, "
                        "cpu.*, bounce.*, rr.*, network.*) or the nodes'")
    options.add_json(s, "the full report")
    s.add_argument("--trace-file", metavar="FILE", help="write the model's trace lines, with simulated time "
                   "and node, to FILE")
    options.deprecated_alias(s, "--trace", "--trace-file", "sim")
    s.set_defaults(run=run)


def run(a) -> int:
    args = []
    for opt, path in (("--config", a.config), ("--workload", a.workload)):
        if path:
            if not os.path.isfile(path):
                raise UsageError(f"{opt} {path}: no such file")
            args += [opt, os.path.abspath(path)]
    for kv in a.set:
        if "=" not in kv:
            raise UsageError(f"--set {kv}: expected KEY=VALUE")
        args += ["--set", kv]
    for opt, value in (("--json", a.json), ("--trace-file", a.trace_file)):
        if value:
            # Checked here: dms-sim writes its outputs after the run.
            if value != "-" and not Path(value).resolve().parent.is_dir():
                raise UsageError(f"{opt} {value}: no such directory {Path(value).parent}")
            args += ["--trace" if opt == "--trace-file" else opt, value]  # dms-sim's own options
    with build_lock():
        build_model(SIM_TARGETS)
    return subprocess.call([str(BUILD / "sysc-model" / "dms-sim"), *args])
