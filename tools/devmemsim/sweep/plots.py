"""A sweep's plots: per [[plot]], DIR/plots/NAME.json (the data drawn:
facets, series, x, y, error) and NAME.png/.svg drawn from it with
matplotlib (Agg): a line per series and y metric, the mean over repeats
with the standard deviation as error bars."""

import json
import statistics
from pathlib import Path

from .spec import FILE_KEYS, toml_value

# Name suffix -> (unit shown, factor applied): what the report's and
# dms-sim's key names (and the demo's columns, demo_points.py) end with.
UNITS = (
    ("mbit_s", "Mbit/s", 1), ("rc_per_payload", "bytes per byte", 1), ("mib", "MiB", 1),
    ("_gbps", "Gbit/s", 1), ("_bps", "Gbit/s", 1e-9), ("_ns", "ns", 1), ("_us", "µs", 1),
    ("_ps", "ps", 1), ("_s", "s", 1), ("_bytes", "bytes", 1), ("_kib", "KiB", 1),
    ("utilisation", "fraction of time busy", 1), ("mtu", "bytes", 1),
    ("_per_byte", "bytes per byte", 1), ("_per_s", "1/s", 1), ("width", "lanes", 1),
)


def unit_of(name: str):
    """(unit, factor) for a metric or key name; ("", 1) when unknown."""
    for suffix, unit, factor in UNITS:
        if name.endswith(suffix):
            return unit, factor
    return "", 1


def label_of(name: str) -> str:
    unit, _ = unit_of(name)
    return f"{name} ({unit})" if unit else name


def scaled(name: str, v):
    _, factor = unit_of(name)
    return v * factor if isinstance(v, (int, float)) and not isinstance(v, bool) else v


def x_order(spec, plot):
    """Sort key of x values: an axis's own order, else numbers first."""
    values = values_of(spec, plot.x)
    return lambda v: (values.index(v), 0, "") if v in values else \
        (len(values), v, "") if isinstance(v, (int, float)) else (len(values) + 1, 0, str(v))


def x_shown(key: str, v):
    """An x value as drawn: a file (config, workload) by its name's stem."""
    return Path(v).stem if key in FILE_KEYS and isinstance(v, str) else scaled(key, v)


def series_line(spec, rows: list, plot, y: str) -> dict:
    """x, mean y, stdev over repeats of ROWS (points of one series)."""
    by_x = {}
    for r in rows:
        if r["status"] == "ok" and r.get(y) is not None and r.get(plot.x) is not None:
            by_x.setdefault(r[plot.x], []).append(scaled(y, r[y]))
    xs = sorted(by_x, key=x_order(spec, plot))
    return {"x": [x_shown(plot.x, x) for x in xs],
            "y": [statistics.fmean(by_x[x]) for x in xs],
            "yerr": [statistics.stdev(by_x[x]) if len(by_x[x]) > 1 else 0.0 for x in xs],
            "n": [len(by_x[x]) for x in xs]}


def values_of(spec, key: str) -> list:
    return (spec.grid.get(key) or spec.zip.get(key) or [None]) if key else [None]


def merge_same(series: list, metrics: int) -> list:
    """With several metrics, one whose line is the same for every series
    value (a bound, a line rate) is drawn once, labelled by the metric."""
    if metrics < 2:
        return series
    out, merged = [], set()
    for s in series:
        same = [t for t in series if t["metric"] == s["metric"]]
        if len(same) > 1 and all((t["x"], t["y"]) == (s["x"], s["y"]) for t in same):
            if s["metric"] not in merged:
                merged.add(s["metric"])
                out.append({**s, "label": s["metric"], "value": None})
        else:
            out.append(s)
    return out


def plot_data(spec, plot, rows: list) -> dict:
    """Everything a figure shows, as plain data."""
    facets = []
    for fv in values_of(spec, plot.facet):
        series = []
        for sv in values_of(spec, plot.series):
            sel = [r for r in rows if (not plot.facet or r.get(plot.facet) == fv)
                   and (not plot.series or r.get(plot.series) == sv)]
            for y in plot.y:
                parts = ([y] if len(plot.y) > 1 else []) + ([f"{plot.series}={toml_value(sv)}"] if plot.series else [])
                series.append({"label": ", ".join(parts) or y, "metric": y, "value": sv,
                               **series_line(spec, sel, plot, y)})
        facets.append({"facet": f"{plot.facet}={toml_value(fv)}" if plot.facet else "", "series": merge_same(series, len(plot.y))})
    ylabel = plot.ylabel or (label_of(plot.y[0]) if len(plot.y) == 1 else
                             ", ".join(sorted({unit_of(y)[0] or y for y in plot.y})))
    return {"name": plot.name, "title": plot.title or plot.name, "x": plot.x, "y": plot.y,
            "xlabel": plot.xlabel or label_of(plot.x), "ylabel": ylabel, "facets": facets}


def draw(data: dict, out: Path) -> None:
    """NAME.png and NAME.svg from plot_data's dict."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(data["facets"])
    cols = min(n, 2)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.4 * cols, 4.6 * rows), squeeze=False, sharey=True)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax, facet in zip(axes.flat, data["facets"]):
        for s in facet["series"]:
            has_err = any(e > 0 for e in s["yerr"])
            ax.errorbar(s["x"], s["y"], yerr=s["yerr"] if has_err else None, marker="o",
                        capsize=3 if has_err else 0, label=s["label"])
        ax.set_xlabel(data["xlabel"])
        ax.set_title(facet["facet"] or data["title"], fontsize="medium")
        ax.grid(True, alpha=0.3)
        if len(facet["series"]) > 1:
            ax.legend(fontsize="small")
    for row in axes:
        row[0].set_ylabel(data["ylabel"])
    if n > 1:
        fig.suptitle(data["title"])
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(out / f"{data['name']}.{ext}", dpi=120)
    plt.close(fig)


def write_plots(spec, out: Path, rows: list) -> None:
    d = out / "plots"
    d.mkdir(exist_ok=True)
    for plot in spec.plots:
        data = plot_data(spec, plot, rows)
        (d / f"{plot.name}.json").write_text(json.dumps(data, indent=1) + "\n")
        draw(data, d)
