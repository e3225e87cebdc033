"""A sweep file: its parsing, its structural checks and its points.

    [sweep]
    engine = "sim"               # dms-sim; "demo": the QEMU demo (keys mib, mtu, mode)
    config = "../node/x.toml"    # node TOML, relative to this file; or
    node_template = '''...'''    # node TOML text with {param} placeholders
    workload = "../sim/bulk.toml"
    repeats = 3                  # each point with run.seed = 1, 2, 3
    [set]                        # keys every point gets
    [grid]                       # cartesian product, first key slowest
    [zip]                        # lock-step lists, one more grid dimension
    [[plot]]                     # name, x, y (metric or list), series, facet

Axis values are lists or ranges {start, stop, step} (stop included). Keys
are what `dms-sim --set` takes, template parameters, or "config"/"workload"
(node or workload TOML files). Every mistake is a SpecError naming the file
and the key; dms-sim's own schema is checked by check.py."""

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import tomlfile
from ..errors import UsageError

ENGINES = ("sim", "demo")
FILE_KEYS = ("config", "workload")
DEMO_KEYS = ("mib", "mtu", "mode")  # `devmemsim demo` options a demo sweep sets
SWEEP_KEYS = {"engine", "name", "config", "node_template", "workload", "repeats"}
PLOT_KEYS = {"name", "x", "y", "series", "facet", "title", "xlabel", "ylabel"}
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
SEED_KEY = "run.seed"


class SpecError(UsageError):
    """A mistake in a sweep file: one line, file and key named."""

    def __init__(self, path, key, problem):
        super().__init__(f"{path}: {key}: {problem}")


@dataclass
class Plot:
    name: str
    x: str
    y: list
    series: str = ""
    facet: str = ""
    title: str = ""
    xlabel: str = ""
    ylabel: str = ""


@dataclass
class Point:
    index: int
    axes: dict          # axis key -> value (grid and zip)
    repeat: int = 0

    @property
    def label(self) -> str:
        return f"{self.index:04d}"


@dataclass
class Spec:
    path: Path
    name: str
    engine: str
    config: str = ""
    node_template: str = ""
    workload: str = ""
    repeats: int = 1
    fixed: dict = field(default_factory=dict)
    grid: dict = field(default_factory=dict)
    zip: dict = field(default_factory=dict)
    plots: list = field(default_factory=list)

    @property
    def axes(self) -> list:
        return [*self.grid, *self.zip]

    def template_params(self) -> set:
        return set(PLACEHOLDER.findall(self.node_template))

    def points(self) -> list:
        """Every point: the grid's product, times the zip's rows, times the
        repeats (index order: first grid key slowest, repeats fastest)."""
        dims = [[(k, v) for v in vals] for k, vals in self.grid.items()]
        if self.zip:
            n = len(next(iter(self.zip.values())))
            dims.append([tuple((k, vals[i]) for k, vals in self.zip.items()) for i in range(n)])
        out = []
        for combo in itertools.product(*dims):
            axes = {}
            for item in combo:
                axes.update(dict(item) if isinstance(item[0], tuple) else dict([item]))
            for r in range(self.repeats):
                out.append(Point(len(out), axes, r))
        return out

    def settings(self, point: Point) -> dict:
        """Fixed keys, then the point's axes, then its seed: {key: value}."""
        s = {**self.fixed, **point.axes}
        if self.repeats > 1:
            s[SEED_KEY] = point.repeat + 1
        return s

    def node_toml(self, point: Point) -> str:
        """The point's node TOML from node_template ("" without one)."""
        s = self.settings(point)
        return PLACEHOLDER.sub(lambda m: toml_value(s[m.group(1)]), self.node_template)

    def file_arg(self, key: str, point: Point) -> str:
        """config/workload of a point, an absolute path ("" if none)."""
        value = self.settings(point).get(key, getattr(self, key))
        return str((self.path.parent / value).resolve()) if value else ""


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(v)


def load(path) -> Spec:
    """Parse and check a sweep file's structure (not dms-sim's keys)."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    doc = tomlfile.read(path)
    for section in doc:
        if section not in ("sweep", "set", "grid", "zip", "plot"):
            raise SpecError(path, section, "unknown section (sweep, set, grid, zip, plot)")
    spec = sweep_section(path, table(path, doc, "sweep"))
    spec.fixed = scalars(path, "set", table(path, doc, "set"))
    spec.grid = axes_of(path, "grid", table(path, doc, "grid"))
    spec.zip = axes_of(path, "zip", table(path, doc, "zip"))
    check_axes(spec)
    spec.plots = [plot_of(spec, i, p) for i, p in enumerate(plot_tables(path, doc))]
    return spec


def table(path, doc, name) -> dict:
    t = doc.get(name, {})
    if not isinstance(t, dict):
        raise SpecError(path, name, "expected a table")
    return t


def sweep_section(path, t) -> Spec:
    for k in t:
        if k not in SWEEP_KEYS:
            raise SpecError(path, f"sweep.{k}", "unknown key (" + ", ".join(sorted(SWEEP_KEYS)) + ")")
    engine = t.get("engine")
    if engine not in ENGINES:
        raise SpecError(path, "sweep.engine", f"{engine!r}: expected " + " or ".join(map(repr, ENGINES)))
    for k in ("name", "config", "node_template", "workload"):
        if not isinstance(t.get(k, ""), str):
            raise SpecError(path, f"sweep.{k}", "expected a string")
    repeats = t.get("repeats", 1)
    if not isinstance(repeats, int) or isinstance(repeats, bool) or not 1 <= repeats <= 1000:
        raise SpecError(path, "sweep.repeats", f"{repeats!r}: expected a whole number from 1 to 1000")
    if engine == "demo":
        for k in ("config", "node_template", "workload"):
            if k in t:
                raise SpecError(path, f"sweep.{k}", "not used by the demo engine (it boots the default nodes)")
    if t.get("config") and t.get("node_template"):
        raise SpecError(path, "sweep.node_template", "give config or node_template, not both")
    for k in FILE_KEYS:
        if t.get(k) and not (path.parent / t[k]).is_file():
            raise SpecError(path, f"sweep.{k}", f"{t[k]}: no such file (relative to the sweep file)")
    return Spec(path, t.get("name") or path.stem, engine, t.get("config", ""),
                t.get("node_template", ""), t.get("workload", ""), repeats)


def scalars(path, section, t) -> dict:
    for k, v in t.items():
        if not is_scalar(v):
            raise SpecError(path, f"{section}.{k}", "expected a number, string or boolean")
    return dict(t)


def is_scalar(v) -> bool:
    return isinstance(v, (int, float, str, bool))


def axes_of(path, section, t) -> dict:
    return {k: axis_values(path, f"{section}.{k}", v) for k, v in t.items()}


def axis_values(path, where, v) -> list:
    """An axis: a list of scalars, or a range {start, stop, step}."""
    if isinstance(v, dict):
        return range_values(path, where, v)
    if not isinstance(v, list):
        raise SpecError(path, where, "expected a list of values or a range {start, stop, step}")
    if not v:
        raise SpecError(path, where, "empty axis")
    for x in v:
        if not is_scalar(x):
            raise SpecError(path, where, f"{x!r}: expected a number, string or boolean")
    if where.startswith("grid.") and len(set(map(repr, v))) != len(v):
        raise SpecError(path, where, "a value appears twice")
    return v


def range_values(path, where, r) -> list:
    extra = set(r) - {"start", "stop", "step"}
    if extra or not {"start", "stop"} <= set(r):
        raise SpecError(path, where, "a range is {start, stop, step} (step default 1)")
    start, stop, step = r["start"], r["stop"], r.get("step", 1)
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (start, stop, step)):
        raise SpecError(path, where, "range start, stop and step must be numbers")
    if step <= 0:
        raise SpecError(path, where, f"range step {step}: must be above 0")
    if stop < start:
        raise SpecError(path, where, f"range stop {stop} is below start {start}")
    n = int((stop - start) / step + 1e-9) + 1
    if n > 10000:
        raise SpecError(path, where, f"range of {n} values (at most 10000)")
    whole = all(isinstance(x, int) for x in (start, stop, step))
    return [start + i * step if whole else round(start + i * step, 12) for i in range(n)]


def check_axes(spec: Spec) -> None:
    path = spec.path
    lengths = {len(v) for v in spec.zip.values()}
    if len(lengths) > 1:
        desc = ", ".join(f"{k} {len(v)}" for k, v in spec.zip.items())
        raise SpecError(path, "zip", f"lists of different lengths ({desc})")
    for k in spec.zip:
        if k in spec.grid:
            raise SpecError(path, f"zip.{k}", "is a grid axis too")
    for k in spec.axes:
        if k in spec.fixed:
            raise SpecError(path, f"set.{k}", "is an axis too")
    if spec.repeats > 1 and SEED_KEY in [*spec.axes, *spec.fixed]:
        raise SpecError(path, SEED_KEY, "sweep.repeats sets it (seeds 1 to repeats)")
    params = spec.template_params()
    for p in params:
        if p not in spec.axes and p not in spec.fixed:
            raise SpecError(path, "sweep.node_template", f"{{{p}}} is neither an axis nor a [set] key")
    for k in [*spec.axes, *spec.fixed]:
        section = "set" if k in spec.fixed else "grid" if k in spec.grid else "zip"
        if spec.engine == "demo":
            if k not in DEMO_KEYS:
                raise SpecError(path, f"{section}.{k}", "unknown key (the demo engine's keys: "
                                + ", ".join(DEMO_KEYS) + ")")
            continue
        if k == "config" and spec.node_template:
            raise SpecError(path, f"{section}.config", "sweep.node_template gives the node configuration")
        if "." not in k and k not in FILE_KEYS and k not in params:
            raise SpecError(path, f"{section}.{k}", "unknown key (not a dms-sim key SECTION.KEY, "
                            "config, workload or a {placeholder} of sweep.node_template)")
    for k in FILE_KEYS:
        for v in spec.grid.get(k, spec.zip.get(k, [spec.fixed[k]] if k in spec.fixed else [])):
            if not isinstance(v, str) or not (path.parent / v).is_file():
                raise SpecError(path, k, f"{v}: no such file (relative to the sweep file)")


def plot_tables(path, doc) -> list:
    plots = doc.get("plot", [])
    if not isinstance(plots, list) or not all(isinstance(p, dict) for p in plots):
        raise SpecError(path, "plot", "expected [[plot]] tables")
    return plots


def plot_of(spec: Spec, i: int, t: dict) -> Plot:
    """A [[plot]]'s structure; whether y (and a metric x) exist is checked
    against the engine's report (check.check_plot_metrics)."""
    where = f"plot[{i}]"
    for k in t:
        if k not in PLOT_KEYS:
            raise SpecError(spec.path, f"{where}.{k}", "unknown key (" + ", ".join(sorted(PLOT_KEYS)) + ")")
    for k in ("name", "x", "y"):
        if k not in t:
            raise SpecError(spec.path, f"{where}.{k}", "missing")
    y = t["y"] if isinstance(t["y"], list) else [t["y"]]
    for k, v in t.items():
        if k != "y" and not isinstance(v, str) or k == "y" and not all(isinstance(m, str) for m in y):
            raise SpecError(spec.path, f"{where}.{k}", "expected a string" + (" or a list of them" if k == "y" else ""))
    if not re.fullmatch(r"[A-Za-z0-9_-]+", t["name"]):
        raise SpecError(spec.path, f"{where}.name", f"{t['name']!r}: letters, digits, _ and - only")
    for k in ("series", "facet"):
        if t.get(k) and t[k] not in spec.axes:
            raise SpecError(spec.path, f"{where}.{k}", f"{t[k]!r} is not an axis")
    plot = Plot(t["name"], t["x"], y, t.get("series", ""), t.get("facet", ""),
                t.get("title", ""), t.get("xlabel", ""), t.get("ylabel", ""))
    check_plot_groups(spec, where, plot)
    return plot


def check_plot_groups(spec: Spec, where: str, plot: Plot) -> None:
    """Points drawn at one (facet, series, x) may differ only in repeat."""
    if plot.x not in spec.axes:
        return  # a metric x: every point is its own mark
    seen = {}
    for p in spec.points():
        group = tuple(p.axes.get(k) for k in (plot.facet, plot.series, plot.x) if k)
        other = seen.setdefault(group, p)
        if other.axes != p.axes:
            diff = next(k for k in p.axes if p.axes[k] != other.axes[k])
            raise SpecError(spec.path, f"{where}", f"axis {diff} varies but is not its x, series or facet")
