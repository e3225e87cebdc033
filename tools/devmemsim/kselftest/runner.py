"""A run: the files one after the other on a Session, booted again after
a node died, the results shown and written, stopped cleanly by SIGINT or
SIGTERM."""

import signal
import time
from dataclasses import dataclass
from pathlib import Path

from .. import build, clusterfile, ktap
from ..errors import Failure, TreeBroken, log
from ..paths import ROOT
from .selection import FILE_MACHINES, TestFile
from .session import Session, default_cluster

# ---- the run ----------------------------------------------------------------

class Stopped(KeyboardInterrupt):
    """SIGINT or SIGTERM during a run: the nodes are stopped and what ran is
    written before the command exits with 128 + the signal's number. Not a
    Failure: nothing on the way out may take it for a broken tree."""

    def __init__(self, signum: int):
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.status = 128 + signum


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def stop_on_signals() -> dict:
    """Make SIGINT and SIGTERM raise Stopped in the main thread, the first
    one only: the clean-up after it (powering the nodes off, writing the
    outputs) is not cut short by a second. Returns the old handlers."""

    def handler(signum, frame):
        for s in STOP_SIGNALS:
            signal.signal(s, signal.SIG_IGN)
        log(f"{signal.Signals(signum).name}: stopping the nodes, writing what ran")
        raise Stopped(signum)

    return {s: signal.signal(s, handler) for s in STOP_SIGNALS}


RESULT_WORDS = {"ok": "ok", "fail": "FAIL", "skip": "skip", "xfail": "xfail"}


def show_case(tf: TestFile, case: ktap.Case) -> None:
    why = f": {case.reason}" if case.reason else ""
    print(f"  {RESULT_WORDS[case.result]:5} {tf.rel} {case.name}{why} ({case.seconds:.1f} s)", flush=True)


def show_file(tf: TestFile, res: ktap.FileResult) -> None:
    for p in res.problems:
        print(f"  FAIL  {tf.rel}: {p.message}")
        if p.detail:
            print("        " + "\n        ".join(p.detail.splitlines()))
    print(f"{tf.rel}: {res.status.upper() if res.status == 'fail' else res.status} in {res.seconds:.1f} s "
          f"(test {res.run_seconds:.1f} s, around it {res.seconds - res.run_seconds:.1f} s)", flush=True)


def table(results: list) -> str:
    """The summary: file, case, result and reason, one case a line."""
    rows = [("FILE", "CASE", "RESULT", "REASON")]
    for res in results:
        for c in res.cases:
            rows.append((res.test, c.name, c.result, c.reason))
        for p in res.problems:
            rows.append((res.test, f"({p.kind})", "fail", p.message))
    width = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n".join(f"{a:{width[0]}}  {b:{width[1]}}  {c:{width[2]}}  {d[:120]}".rstrip() for a, b, c, d in rows)


def boot_result(problems: list, boot: int) -> ktap.FileResult:
    """What a boot logged that fails the run, as a file of its own."""
    res = ktap.FileResult(f"devmemsim:boot-{boot}" if boot else "devmemsim:boot", problems=problems)
    res.status, res.reason = "fail", problems[0].message
    return res


def not_run(tf: TestFile, why: str) -> ktap.FileResult:
    return ktap.FileResult(tf.test, reason=why, problems=[ktap.Problem("node", why)])


def vcpus_booted(plan: clusterfile.Plan) -> str:
    """The vCPUs a plan_for() plan gives: '6 vCPUs a node', or the runner's."""
    smp = plan.nodes[0].smp
    if all(n.smp == smp for n in plan.nodes):
        return f"{smp} vCPUs a node"
    return f"{smp} vCPUs on {plan.nodes[0].name}"


def run_files(session: Session, files: list, results: list) -> float:
    """Boot, run every file (booting again after a node died); results
    collect as they come. Returns the seconds from boot to the first test."""
    started = time.monotonic()
    try:
        problems = session.boot(session.plan_for(FILE_MACHINES.get(files[0].rel)) if files else None)
    except Failure as e:
        raise TreeBroken(f"the cluster did not boot: {e}") from None
    if problems:
        results.append(boot_result(problems, 0))
    first = time.monotonic() - started
    runner = session.node_names()[0]
    for i, tf in enumerate(files):
        plan = session.plan_for(FILE_MACHINES.get(tf.rel))
        if session.dead or plan != session.booted:
            log(f"a node died: booting the cluster again for {tf.rel}" if session.dead else
                f"booting the cluster again with {vcpus_booted(plan)} for {tf.rel}")
            try:
                problems = session.boot(plan)
            except Failure as e:
                results += [not_run(left, f"the cluster did not boot again: {e}") for left in files[i:]]
                break
            if problems:
                results.append(boot_result(problems, session.boots - 1))
        print(f"{tf.rel}: running on {runner} (timeout {tf.timeout or 'none'}"
              f"{', run_kselftest.sh' if session.runner else ''})", flush=True)
        session.current = tf
        res = session.run_file(tf, show_case)
        session.current = None
        results.append(res)
        show_file(tf, res)
    return first


@dataclass
class Outputs:
    ktap: str = ""
    junit: str = ""
    json: str = ""

    def consoles_prefix(self) -> str:
        """Where the consoles are kept: beside the JSON summary, if any
        (none when it goes to stdout)."""
        return str(Path(self.json).with_suffix("")) if self.json not in ("", "-") else ""


def run(kbuild, files: list, plan: clusterfile.Plan, outputs: Outputs) -> int:
    """Run files on plan's cluster (cluster_plan()) booted from kbuild
    (ktree.KselftestBuild); exit status: 0 all passed (skips allowed), 1 a
    failure."""
    keep = outputs.consoles_prefix()
    for fix in kbuild.test_fixes:
        log(f"the tests carry a fix: {fix['subject']} ({build.KSELFTEST_FIXES.relative_to(ROOT) / fix['patch']})")
    session = Session(kbuild.artifacts, plan, kbuild.guest_root, keep)
    results, first = [], None
    started = time.monotonic()
    handlers = stop_on_signals()
    try:
        first = run_files(session, files, results)
    except Stopped as e:
        if session.current:
            results.append(not_run(session.current, f"{e} while it ran"))
        raise
    finally:
        session.close()
        cluster_seconds = time.monotonic() - started
        meta = {
            "kernel": kbuild.artifacts.kernel_version, "tree": str(kbuild.tree), "guest_root": kbuild.guest_root,
            "config_missing": kbuild.config_missing, "helpers_missing": kbuild.helpers_missing,
            "test_fixes": kbuild.test_fixes,
            "build_seconds": kbuild.seconds, "nodes": len(plan.nodes),
            **({} if default_cluster(plan) else {"cluster": plan.source}),
            "runner": "run_kselftest.sh" if session.runner else "direct",
            "boot_to_first_test_seconds": round(first, 2) if first is not None else None,
            "cluster_seconds": round(cluster_seconds, 2),
            "consoles": {n: f"{keep}.{n}.console" for n in session.node_names()} if keep else {},
        }
        write_outputs(outputs, results, meta)
        for sig, old in handlers.items():
            signal.signal(sig, old)
    print(f"\n{table(results)}\n")
    t = ktap.totals(results)
    overhead = [r.seconds - r.run_seconds for r in results if r.run_seconds]
    print(f"files: {t['files']['ok']} ok, {t['files']['fail']} failed, {t['files']['skip']} skipped; cases: "
          + ", ".join(f"{v} {k}" for k, v in t["cases"].items()))
    print(f"boot to first test {first:.1f} s; per file around the test "
          f"{sum(overhead) / len(overhead) if overhead else 0:.1f} s (mean of {len(overhead)}); "
          f"boot to power-off {cluster_seconds:.1f} s")
    return 1 if t["files"]["fail"] else 0


def write_outputs(outputs: Outputs, results: list, meta: dict) -> None:
    if outputs.ktap:
        ktap.write_ktap(outputs.ktap, results)
    if outputs.junit:
        props = {k: meta[k] for k in ("kernel", "tree", "runner")}
        props["test_fixes"] = " ".join(f["patch"] for f in meta["test_fixes"])
        ktap.write_junit(outputs.junit, results, props)
    if outputs.json:
        ktap.write_json(outputs.json, results, meta)
