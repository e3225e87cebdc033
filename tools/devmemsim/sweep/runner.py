"""Running a sweep's points on this machine: at most --jobs engine
processes (dms-sim; demo points one at a time), a progress line, each point's files under DIR/points/NNNN/
(point.json, node.toml with a template, result.json, log, status.json).

A point is done when its status.json says exit 0. Ctrl-C (or SIGTERM)
stops the running points and records nothing for them, so --resume runs
them again."""

import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

from .engine import point_argv, stop_signal
from .spec import Point, Spec


def point_dir(out: Path, point: Point) -> Path:
    return out / "points" / point.label


def write_json(path: Path, data) -> None:
    """Whole or not at all: a reader never sees half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, path)


def read_status(out: Path, point: Point) -> dict:
    try:
        return json.loads((point_dir(out, point) / "status.json").read_text())
    except (OSError, ValueError):
        return {}


def is_done(out: Path, point: Point) -> bool:
    return read_status(out, point).get("exit") == 0


class Runner:
    """Runs points in parallel; stop() ends the running ones unrecorded."""

    def __init__(self, spec: Spec, out: Path, jobs: int):
        self.spec, self.out, self.jobs = spec, out, jobs
        self.stopping = threading.Event()
        self.procs = {}
        self.lock = threading.Lock()

    def run_point(self, point: Point) -> int:
        """One point; its exit status (None when stopped)."""
        d = point_dir(self.out, point)
        d.mkdir(parents=True, exist_ok=True)
        node_file = ""
        if self.spec.node_template:
            node_file = str(d / "node.toml")
            Path(node_file).write_text(self.spec.node_toml(point))
        argv = point_argv(self.spec, point, node_file)
        result = d / "result.json"
        write_json(d / "point.json", {"point": point.label, "axes": point.axes, "repeat": point.repeat,
                                      "argv": argv + ["--json", str(result)]})
        started = time.time()
        with open(d / "log", "w") as log:
            with self.lock:
                if self.stopping.is_set():
                    return None
                proc = subprocess.Popen(argv + ["--json", f"{result}.tmp"], stdout=log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
                self.procs[point.index] = proc
            status = proc.wait()
        with self.lock:
            del self.procs[point.index]
        partial = Path(str(result) + ".tmp")
        if self.stopping.is_set():
            partial.unlink(missing_ok=True)
            return None
        if partial.exists():
            os.replace(partial, result)
        write_json(d / "status.json", {"exit": status, "started": started,
                                       "seconds": round(time.time() - started, 3)})
        return status

    def stop(self) -> None:
        with self.lock:
            self.stopping.set()
            for proc in self.procs.values():
                proc.send_signal(stop_signal(self.spec))

    def run(self, points: list, progress) -> None:
        """Every point of POINTS; progress(point, status) after each."""
        pool = ThreadPoolExecutor(self.jobs)
        pending = {pool.submit(self.run_point, p): p for p in points}
        try:
            while pending:
                finished, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for f in finished:
                    progress.finished(pending.pop(f), f.result())
                progress.tick()
        except KeyboardInterrupt:
            self.stop()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def fmt_time(s: float) -> str:
    s = int(s + 0.5)
    return f"{s // 3600}h{s // 60 % 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


class Progress:
    """done/total, failures and ETA: one line redrawn on a TTY, a line per
    finished point otherwise."""

    def __init__(self, total: int, already: int, jobs: int, stream=sys.stderr):
        self.total, self.done, self.failed = total, already, 0
        self.ran, self.jobs, self.stream = 0, jobs, stream
        self.tty = stream.isatty()
        self.start = time.monotonic()

    def eta(self) -> str:
        if not self.ran:
            return "ETA -"
        left = self.total - self.done - self.failed
        return "ETA " + fmt_time((time.monotonic() - self.start) / self.ran * left)

    def line(self) -> str:
        return (f"sweep: {self.done}/{self.total} done, {self.failed} failed, {self.eta()}, "
                f"elapsed {fmt_time(time.monotonic() - self.start)}")

    def finished(self, point: Point, status) -> None:
        if status is None:
            return
        self.ran += 1
        if status == 0:
            self.done += 1
        else:
            self.failed += 1
        if not self.tty:
            what = "ok" if status == 0 else f"FAILED (exit {status}, see points/{point.label}/log)"
            print(f"{self.line()} (point {point.label} {what})", file=self.stream, flush=True)
        elif status != 0:
            print(f"\r\x1b[Ksweep: point {point.label} failed (exit {status})", file=self.stream, flush=True)

    def tick(self) -> None:
        if self.tty:
            print(f"\r\x1b[K{self.line()}", end="", file=self.stream, flush=True)

    def close(self) -> None:
        if self.tty:
            print(file=self.stream, flush=True)
