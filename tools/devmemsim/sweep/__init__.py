"""'devmemsim sweep': a TOML grid of dms-sim configurations (or of QEMU
demo runs, demo_points.py), run in parallel on this machine or as a
Slurm job array, into results.csv/json, plots and report.md (spec.py:
the file; engine.py: its checks and each point's command; runner.py:
local runs; slurm.py: the job array; results.py, plots.py: the outputs).

DIR/state.json ties an output directory to its sweep: the sweep file's
path and its points. --resume, --point and --collect refuse a directory
whose points the file no longer makes."""

import json
import os
import shutil
import signal
from pathlib import Path

from ..build import build_lock, build_model
from .. import options
from ..errors import Failure, UsageError, log
from . import engine, plots, results, runner, slurm, spec as specmod


def add_command(sub):
    s = sub.add_parser("sweep", help="run a TOML grid of dms-sim configurations (or QEMU demo "
                       "runs) in parallel or on Slurm: CSV, JSON, plots (configs/sweeps/)")
    s.add_argument("file", nargs="?", metavar="FILE.toml", help="the sweep (configs/sweeps/README.md)")
    s.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="points run at once (default: the cores, %(default)s; demo points: 1)")
    s.add_argument("--output", dest="out", default="", metavar="DIR",
                   help="where the results go: a directory (default sweeps/NAME in the current directory)")
    options.deprecated_alias(s, "--out", "--output", "sweep")
    s.add_argument("--resume", action="store_true",
                   help="DIR holds this sweep already: run only its missing and failed points")
    s.add_argument("--check", action="store_true",
                   help="check only: the file and every point against dms-sim's schema; run nothing")
    s.add_argument("--slurm", action="store_true",
                   help="submit the points (the missing ones with --resume) as a Slurm job array")
    s.add_argument("--partition", default="", metavar="P", help="--slurm: the partition")
    s.add_argument("--time", default="", metavar="T", help="--slurm: each task's time limit (sbatch --time)")
    s.add_argument("--point", type=int, metavar="N",
                   help="run point N of DIR's sweep only (what each Slurm array task runs)")
    s.add_argument("--collect", metavar="DIR",
                   help="write DIR's results.csv/json, plots and report.md from its points")
    s.set_defaults(run=run)


def listing(spec) -> list:
    return [{"point": p.label, "axes": p.axes, "repeat": p.repeat} for p in spec.points()]


def load_state(out: Path, what: str) -> dict:
    try:
        return json.loads((out / "state.json").read_text())
    except (OSError, ValueError):
        raise UsageError(f"{what}: {out} holds no sweep (no state.json)") from None


def check_state(spec, out: Path, what: str) -> None:
    if load_state(out, what)["points"] != listing(spec):
        raise UsageError(f"{what}: {out} holds other points than {spec.path} makes (the sweep file changed?)")


def prepare_out(spec, out: Path, resume: bool) -> None:
    """A new DIR with the sweep file and its points, or, with --resume, one
    made by the same sweep."""
    if resume:
        check_state(spec, out, "--resume")
        return
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"--output {out}: exists and is not empty (--resume continues it)")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(spec.path, out / "sweep.toml")
    runner.write_json(out / "state.json", {"sweep": str(spec.path.resolve()), "points": listing(spec)})


def collect(spec, out: Path) -> int:
    """results.csv/json, plots and report.md from DIR's points; 1 if a
    point failed or did not run."""
    def metrics(report):
        return engine.metrics(spec, report)
    rows = [results.point_row(out, p, runner.read_status(out, p), metrics) for p in spec.points()]
    results.write_tables(spec, out, rows)
    plots.write_plots(spec, out, rows)
    results.write_report(spec, out, rows, spec.plots)
    failed = sum(r["status"] != "ok" for r in rows)
    print(f"sweep {spec.name}: {len(rows) - failed}/{len(rows)} points ok; {out}/report.md, "
          f"{out}/results.csv")
    return 1 if failed else 0


def run_points(spec, out: Path, todo: list, jobs: int) -> None:
    points = spec.points()
    if spec.engine == "demo" and jobs > 1:
        log("demo points run one at a time (each boots two QEMU nodes), whatever --jobs says")
        jobs = 1
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


def check_options(a) -> None:
    if a.jobs < 1:
        raise UsageError(f"--jobs {a.jobs}: must be 1 or more")
    if bool(a.file) == bool(a.collect):
        raise UsageError("give a sweep file, or --collect DIR")
    if (a.partition or a.time) and not a.slurm:
        raise UsageError("--partition and --time go with --slurm")
    if a.point is not None and not a.out:
        raise UsageError("--point needs --output DIR (the sweep's directory)")


def cmd_point(spec, out: Path, n: int) -> int:
    """One point, as a Slurm array task runs it (checked at submission)."""
    check_state(spec, out, "--point")
    points = spec.points()
    if not 0 <= n < len(points):
        raise UsageError(f"--point {n}: the sweep has points 0 to {len(points) - 1}")
    if spec.engine == "sim" and not engine.DMS_SIM.is_file():
        raise Failure(f"{engine.DMS_SIM} is not built")
    status = runner.Runner(spec, out, 1).run_point(points[n])
    return 0 if status == 0 else 1


def run(a) -> int:
    check_options(a)
    if a.collect:
        out = Path(a.collect)
        spec = specmod.load(load_state(out, "--collect")["sweep"])
        check_state(spec, out, "--collect")
        return collect(spec, out)
    spec = specmod.load(a.file)
    out = Path(a.out or Path("sweeps") / spec.name)
    if a.point is not None:
        return cmd_point(spec, out, a.point)
    with build_lock():
        build_model()
    engine.check(spec, a.jobs)
    if a.check:
        print(f"{a.file}: {len(spec.points())} points, {len(spec.plots)} plots: valid")
        return 0
    prepare_out(spec, out, a.resume)
    todo = [p for p in spec.points() if not runner.is_done(out, p)]
    if a.slurm:
        return slurm.submit(spec, out, todo, a.partition, a.time)
    signal.signal(signal.SIGTERM, interrupt)
    try:
        run_points(spec, out, todo, a.jobs)
    except KeyboardInterrupt:
        log(f"interrupted; the finished points are kept: 'sweep {a.file} --output {out} --resume' "
            "runs the others")
        return 130
    return collect(spec, out)
