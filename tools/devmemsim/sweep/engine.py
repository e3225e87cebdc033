"""What runs one point, and the checks of a sweep against the engine's own
schema: dms-sim --check for every point's keys and values, and a tiny run
whose report names the metrics plots may use (demo points: demo_points)."""

import json
import signal
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..paths import BUILD
from . import demo_points
from .results import flatten
from .spec import FILE_KEYS, Point, Spec, SpecError, toml_value

DMS_SIM = BUILD / "sysc-model" / "dms-sim"
# A probe run only has to produce a report with every metric's name.
PROBE_SETS = {"run.duration_us": 1, "run.warmup_us": 0}
SIM_REPORT = "dms-sim's report"


def point_argv(spec: Spec, point: Point, node_file: str) -> list:
    """The point's command line, without --json FILE."""
    if spec.engine == "demo":
        return demo_points.demo_argv(spec, point)
    return sim_argv(spec, point, node_file)


def stop_signal(spec: Spec) -> int:
    """What stops a running point: the demo stops its QEMU nodes on
    SIGINT (KeyboardInterrupt), not on SIGTERM."""
    return signal.SIGINT if spec.engine == "demo" else signal.SIGTERM


def metrics(spec: Spec, report: dict) -> dict:
    """A point's report as results.csv's metric columns."""
    return demo_points.metrics(report) if spec.engine == "demo" else flatten(report)


def sim_argv(spec: Spec, point: Point, node_file: str, extra: dict = None) -> list:
    """dms-sim's command line for a point, without --json."""
    argv = [str(DMS_SIM)]
    config = node_file or spec.file_arg("config", point)
    workload = spec.file_arg("workload", point)
    if config:
        argv += ["--config", config]
    if workload:
        argv += ["--workload", workload]
    params = spec.template_params()
    for k, v in {**spec.settings(point), **(extra or {})}.items():
        if k not in FILE_KEYS and k not in params:
            argv += ["--set", f"{k}={toml_value(v)}"]  # dms-sim reads TOML values
    return argv


def with_node_file(spec: Spec, point: Point, directory: Path, fn):
    """fn(node_file) with the point's rendered node_template written into
    DIRECTORY (node_file "" without a template)."""
    if not spec.node_template:
        return fn("")
    with tempfile.NamedTemporaryFile("w", suffix=".toml", dir=directory) as f:
        f.write(spec.node_toml(point))
        f.flush()
        return fn(f.name)


def check_one(spec: Spec, point: Point, tmp: Path) -> str:
    """'' or dms-sim's one-line complaint about this point."""
    def run(node_file):
        res = subprocess.run(sim_argv(spec, point, node_file) + ["--check"],
                             capture_output=True, text=True, timeout=60)
        lines = res.stderr.strip().splitlines()
        return "" if res.returncode == 0 else (lines[-1] if lines else f"exit status {res.returncode}")
    msg = with_node_file(spec, point, tmp, run)
    return msg.removeprefix("dms-sim: ")


def axis_probes(spec: Spec) -> list:
    """(where, what, point): the first point with one grid axis at each of
    its values, or with each row of the zip (its keys go together): all
    points of the sweep, each blaming one key or row."""
    first = spec.points()[0]
    probes = []
    for k, values in spec.grid.items():
        probes += [(f"grid.{k}", f"value {v!r}", Point(0, {**first.axes, k: v})) for v in values]
    for i in range(len(next(iter(spec.zip.values()), []))):
        row = {k: values[i] for k, values in spec.zip.items()}
        what = "row " + ", ".join(f"{k}={v!r}" for k, v in row.items())
        probes.append(("zip", what, Point(0, {**first.axes, **row})))
    return probes


def check_sim(spec: Spec, jobs: int) -> None:
    """Every axis value, then every point, through dms-sim --check: the
    first complaint as a SpecError naming the key (or the point)."""
    if not DMS_SIM.is_file():
        raise SpecError(spec.path, "sweep.engine", f"{DMS_SIM} is not built")
    with tempfile.TemporaryDirectory(prefix="dms-sweep-") as tmp, ThreadPoolExecutor(jobs) as pool:
        tmp = Path(tmp)
        probes = axis_probes(spec)
        for (where, what, _), msg in zip(probes, pool.map(lambda p: check_one(spec, p[2], tmp), probes)):
            if msg:
                raise SpecError(spec.path, where, f"{what}: {msg}")
        points = spec.points()
        for p, msg in zip(points, pool.map(lambda p: check_one(spec, p, tmp), points)):
            if msg:
                desc = ", ".join(f"{k}={v!r}" for k, v in p.axes.items())
                raise SpecError(spec.path, f"point {p.label} ({desc})" if desc else "set", msg)


def metric_names(spec: Spec) -> set:
    """Flattened metric names of tiny runs of the first and last points."""
    points = spec.points()
    names = set()
    with tempfile.TemporaryDirectory(prefix="dms-sweep-") as tmp:
        for p in {points[0].index: points[0], points[-1].index: points[-1]}.values():
            def run(node_file):
                return subprocess.run(sim_argv(spec, p, node_file, PROBE_SETS) + ["--json", "-"],
                                      capture_output=True, text=True, timeout=60)
            res = with_node_file(spec, p, Path(tmp), run)
            if res.returncode in (0, 1):
                names |= set(flatten(json.loads(res.stdout)))
    return names


def check_plot_metrics(spec: Spec, names: set, report: str) -> None:
    """Each plot's y (and a non-axis x) is one of NAMES, the metrics of
    the engine's report."""
    for i, plot in enumerate(spec.plots):
        if plot.x not in spec.axes and plot.x not in names:
            raise SpecError(spec.path, f"plot[{i}].x", f"{plot.x!r} is neither an axis nor a metric of "
                            f"{report} (results.csv's columns)")
        for y in plot.y:
            if y not in names:
                raise SpecError(spec.path, f"plot[{i}].y", f"{y!r} is not a metric of {report} "
                                "(results.csv's columns)")


def check(spec: Spec, jobs: int) -> None:
    if spec.engine == "demo":
        demo_points.check(spec)
        check_plot_metrics(spec, demo_points.metric_names(), demo_points.REPORT)
        return
    check_sim(spec, jobs)
    if spec.plots:
        check_plot_metrics(spec, metric_names(spec), SIM_REPORT)
