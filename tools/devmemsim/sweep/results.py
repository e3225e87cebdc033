"""A sweep's results: results.csv (a row per point: its axes, then every
scalar of the engine's JSON report under a dotted name), results.json and
report.md."""

import csv
import json
import subprocess
from pathlib import Path

from ..paths import ROOT

# Columns before the metrics.
POINT_COLUMNS = ("point", "repeat", "status")


def flatten(report, prefix: str = "") -> dict:
    """{dotted name: scalar} of a JSON report; list items by index."""
    items = report.items() if isinstance(report, dict) else enumerate(report)
    out = {}
    for k, v in items:
        name = f"{prefix}{k}"
        if isinstance(v, (dict, list)):
            out.update(flatten(v, name + "."))
        else:
            out[name] = v
    return out


def point_row(out: Path, point, status: dict, metrics=flatten) -> dict:
    """The row of one point: axes, status, and its report's metrics
    (METRICS(report): {column: scalar})."""
    row = {"point": point.label, "repeat": point.repeat}
    row["status"] = ("ok" if status.get("exit") == 0 else
                     "not run" if not status else f"failed (exit {status['exit']})")
    row.update(point.axes)
    try:
        report = json.loads((out / "points" / point.label / "result.json").read_text())
    except (OSError, ValueError):
        report = {}
    row.update({k: v for k, v in metrics(report).items() if k not in row})
    return row


def columns(spec, rows: list) -> list:
    """Point columns, the axes, then metrics in first-seen order."""
    cols = [*POINT_COLUMNS, *spec.axes]
    seen = set(cols)
    for row in rows:
        for k in row:
            if k not in seen:
                seen.add(k)
                cols.append(k)
    return cols


def csv_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return "" if v is None else str(v)


def software_version() -> str:
    """git describe of the checkout that ran the sweep."""
    res = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty", "--tags"],
                         capture_output=True, text=True)
    return res.stdout.strip() if res.returncode == 0 else "unknown (not a git checkout)"


def write_tables(spec, out: Path, rows: list) -> None:
    cols = columns(spec, rows)
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for row in rows:
            w.writerow([csv_value(row.get(c)) for c in cols])
    doc = {"sweep": str(spec.path), "name": spec.name, "engine": spec.engine,
           "version": software_version(), "axes": spec.axes, "points": rows}
    (out / "results.json").write_text(json.dumps(doc, indent=1) + "\n")


def write_report(spec, out: Path, rows: list, plots: list) -> None:
    """report.md: what ran (the sweep file, the version), how it went,
    and the plots."""
    ok = sum(r["status"] == "ok" for r in rows)
    text = [f"# Sweep {spec.name}", "",
            f"- sweep file: `{spec.path}` (copied to [sweep.toml](sweep.toml))",
            f"- engine: {spec.engine}; software version: `{software_version()}`",
            f"- points: {len(rows)}, {ok} ok, {len(rows) - ok} failed or not run",
            "- results: [results.csv](results.csv), [results.json](results.json); "
            "each point's command, report and log under points/NNNN/", ""]
    failed = [r for r in rows if r["status"] != "ok"]
    if failed:
        text += ["## Failed points", ""]
        text += [f"- {r['point']}: {r['status']} ([log](points/{r['point']}/log))" for r in failed]
        text.append("")
    for p in plots:
        text += [f"## {p.title or p.name}", "", f"![{p.name}](plots/{p.name}.png)", "",
                 f"[SVG](plots/{p.name}.svg), [data](plots/{p.name}.json)", ""]
    text += ["## Sweep file", "", "```toml", spec.path.read_text().rstrip(), "```", ""]
    (out / "report.md").write_text("\n".join(text))
