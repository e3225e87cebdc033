"""Sweeps on a Slurm cluster: DIR/slurm/sweep.sbatch, a job array with one
task per point, each running `devmemsim sweep FILE --output DIR --point N` (the
checkout and DIR on a file system every node sees), submitted with sbatch;
`devmemsim sweep --collect DIR` then writes the results."""

import shlex
import shutil
import subprocess
from pathlib import Path

from ..errors import Failure, log
from ..paths import LAUNCHER


def array_ranges(indices: list) -> str:
    """0,1,2,5,7,8 -> '0-2,5,7-8' (sbatch --array)."""
    parts, start = [], None
    for i, n in enumerate(indices):
        if start is None:
            start = n
        if i + 1 == len(indices) or indices[i + 1] != n + 1:
            parts.append(f"{start}-{n}" if n != start else f"{n}")
            start = None
    return ",".join(parts)


def script(spec, out: Path, points: list, partition: str, time_limit: str) -> str:
    out = out.resolve()
    lines = ["#!/bin/bash",
             f"#SBATCH --job-name=dms-sweep-{spec.name}",
             f"#SBATCH --array={array_ranges([p.index for p in points])}",
             f"#SBATCH --output={out}/slurm/%A_%a.out",
             "#SBATCH --ntasks=1",
             # A demo point's two TCG nodes need a core each.
             f"#SBATCH --cpus-per-task={2 if spec.engine == 'demo' else 1}"]
    if partition:
        lines.append(f"#SBATCH --partition={partition}")
    if time_limit:
        lines.append(f"#SBATCH --time={time_limit}")
    cmd = [str(LAUNCHER), "sweep", str(spec.path.resolve()), "--output", str(out), "--point"]
    lines += ["# One point of the sweep; 'devmemsim sweep --collect DIR' gathers them.",
              shlex.join(cmd) + ' "$SLURM_ARRAY_TASK_ID"', ""]
    return "\n".join(lines)


def submit(spec, out: Path, points: list, partition: str, time_limit: str) -> int:
    """Write the job array's script and sbatch it."""
    if not points:
        log(f"every point of {out} is done; 'devmemsim sweep --collect {out}' writes the results")
        return 0
    if not shutil.which("sbatch"):
        raise Failure("--slurm: sbatch not found (Debian: slurm-client, with a configured cluster)")
    (out / "slurm").mkdir(exist_ok=True)
    path = out / "slurm" / "sweep.sbatch"
    path.write_text(script(spec, out, points, partition, time_limit))
    res = subprocess.run(["sbatch", "--parsable", str(path)], capture_output=True, text=True)
    if res.returncode != 0:
        raise Failure(f"sbatch {path}: {res.stderr.strip() or res.stdout.strip()}")
    job = res.stdout.strip().split(";")[0]
    (out / "slurm" / "job").write_text(job + "\n")
    print(f"submitted Slurm job {job}: {len(points)} points ({path}); when it is done: "
          f"devmemsim sweep --collect {out}")
    return 0
