"""Sweep points that run the QEMU demo: `devmemsim demo --mib N --mtu M
--mode MODE --json FILE` (two TCG nodes, a devmem and a bounce transfer
or one of them, CRC-verified). Axes are the demo's options
(spec.DEMO_KEYS); the values are checked by the demo's own check_options
before anything boots. Each point boots two nodes, so points run one at
a time."""

from .. import demo, transfer
from ..errors import UsageError
from ..paths import LAUNCHER
from .spec import DEMO_KEYS, Point, Spec, SpecError

DIRECTIONS = ("tx", "rx")
# The scalars of each run (transfer._run_row) copied into results.csv as
# MODE.DIRECTION.NAME, beside mbit_s and rc_per_payload.
RUN_KEYS = ("payload_bytes", "root_complex_bytes", "p2p_bytes", "host_write_bytes",
            "host_read_bytes", "nic_link_bytes", "gpu_link_bytes", "dma_faults",
            "throughput_bps", "seconds", "verified")
REPORT = "the demo's report (MODE.DIRECTION.NAME, e.g. devmem.rx.mbit_s, or verified)"


def defaults() -> dict:
    """The demo command's own defaults for the keys a sweep leaves out."""
    return {k: demo.DEFAULTS[k] for k in DEMO_KEYS}


def options(spec: Spec, point: Point) -> dict:
    settings = spec.settings(point)
    return {**defaults(), **{k: settings[k] for k in DEMO_KEYS if k in settings}}


def demo_argv(spec: Spec, point: Point) -> list:
    """The point's demo command line, without --json."""
    opts = options(spec, point)
    return [str(LAUNCHER), "demo", *(a for k in DEMO_KEYS for a in (f"--{k}", str(opts[k])))]


def check_value(spec: Spec, where: str, key: str, value) -> None:
    kind, what = (str, "a string") if key == "mode" else (int, "a whole number")
    if not isinstance(value, kind) or isinstance(value, bool):
        raise SpecError(spec.path, where, f"{value!r}: {key} is {what}")
    try:
        demo.check_options(**{**defaults(), key: value})
    except UsageError as e:
        raise SpecError(spec.path, where, f"value {value!r}: {e}") from None


def check(spec: Spec) -> None:
    """Every [set], grid and zip value through the demo's check_options
    (it checks each option on its own, so a value at a time covers every
    point)."""
    for section, table in (("set", {k: [v] for k, v in spec.fixed.items()}),
                           ("grid", spec.grid), ("zip", spec.zip)):
        for key, values in table.items():
            for v in values:
                check_value(spec, f"{section}.{key}", key, v)


def metric_names() -> set:
    runs = {f"{m}.{d}.{k}" for m in transfer.MODES for d in DIRECTIONS
            for k in ("mbit_s", "rc_per_payload", *RUN_KEYS)}
    return runs | {"verified", *DEMO_KEYS}


def metrics(report: dict) -> dict:
    """The demo's JSON as flat columns: MODE.DIRECTION.NAME per run (a
    point of one mode has only its columns), and verified (every run
    verified; false without runs)."""
    if not report:
        return {}
    out = {k: report[k] for k in DEMO_KEYS if k in report}
    runs = report.get("runs", [])
    for r in runs:
        prefix = f"{r['mode']}.{r['direction']}."
        out[prefix + "mbit_s"] = r.get("throughput_bps", 0) / 1e6
        out[prefix + "rc_per_payload"] = r.get("root_complex_per_payload_byte")
        out.update({prefix + k: r[k] for k in RUN_KEYS if k in r})
    out["verified"] = bool(runs) and all(r.get("verified") for r in runs)
    return out
