"""'devmemsim sweep': a TOML grid of dms-sim configurations, run in
parallel on this machine, into results.csv/json, plots and report.md
(spec.py: the file; engine.py: its checks and each point's command;
runner.py: the runs; results.py, plots.py: the outputs)."""

import json
import os
import shutil
import signal
from pathlib import Path

from ..build import build_lock, build_model
from ..errors import UsageError, log
from . import engine, plots, results, runner, spec as specmod


def add_command(sub):
    s = sub.add_parser("sweep", help="run a TOML grid of dms-sim configurations in parallel: "
                       "CSV, JSON, plots (configs/sweeps/)")
    s.add_argument("file", metavar="FILE.toml", help="the sweep (configs/sweeps/README.md)")
    s.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="points run at once (default: the cores, %(default)s)")
    s.add_argument("--out", default="", metavar="DIR",
                   help="output directory (default sweeps/NAME in the current directory)")
    s.add_argument("--resume", action="store_true",
                   help="DIR holds this sweep already: run only its missing and failed points")
    s.add_argument("--check", action="store_true",
                   help="check the file and every point against dms-sim's schema, run nothing")


def prepare_out(spec, out: Path, resume: bool) -> None:
    """A new DIR with the sweep file and its points, or, with --resume, one
    made by the same sweep."""
    listing = [{"point": p.label, "axes": p.axes, "repeat": p.repeat} for p in spec.points()]
    state = out / "points.json"
    if resume:
        if not state.is_file():
            raise UsageError(f"--resume: {out} holds no sweep (no points.json)")
        if json.loads(state.read_text()) != listing:
            raise UsageError(f"--resume: {out} holds other points than {spec.path} makes "
                             "(the sweep file changed?)")
        return
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"--out {out}: exists and is not empty (--resume continues it)")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(spec.path, out / "sweep.toml")
    runner.write_json(state, listing)


def collect(spec, out: Path) -> list:
    """results.csv/json, plots and report.md from DIR's points."""
    rows = [results.point_row(out, p, runner.read_status(out, p)) for p in spec.points()]
    results.write_tables(spec, out, rows)
    plots.write_plots(spec, out, rows)
    results.write_report(spec, out, rows, spec.plots)
    return rows


def run_points(spec, out: Path, jobs: int) -> None:
    points = spec.points()
    todo = [p for p in points if not runner.is_done(out, p)]
    if todo and len(todo) < len(points):
        log(f"resuming: {len(points) - len(todo)} of {len(points)} points done, running "
            + " ".join(p.label for p in todo))
    progress = runner.Progress(len(points), len(points) - len(todo), jobs)
    try:
        runner.Runner(spec, out, jobs).run(todo, progress)
    finally:
        progress.close()


def interrupt(signum, frame):
    """SIGTERM stops a sweep as Ctrl-C does."""
    raise KeyboardInterrupt


def run(a) -> int:
    if a.jobs < 1:
        raise UsageError(f"--jobs {a.jobs}: must be 1 or more")
    spec = specmod.load(a.file)
    out = Path(a.out or Path("sweeps") / spec.name)
    with build_lock():
        build_model()
    engine.check(spec, a.jobs)
    if a.check:
        print(f"{a.file}: {len(spec.points())} points, {len(spec.plots)} plots: valid")
        return 0
    prepare_out(spec, out, a.resume)
    signal.signal(signal.SIGTERM, interrupt)
    try:
        run_points(spec, out, a.jobs)
    except KeyboardInterrupt:
        log(f"interrupted; the finished points are kept: 'sweep {a.file} --out {out} --resume' "
            "runs the others")
        return 130
    rows = collect(spec, out)
    failed = sum(r["status"] != "ok" for r in rows)
    print(f"sweep {spec.name}: {len(rows) - failed}/{len(rows)} points ok; {out}/report.md, "
          f"{out}/results.csv")
    return 1 if failed else 0
