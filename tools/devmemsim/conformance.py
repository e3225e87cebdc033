"""`devmemsim conformance`: docs/conformance.md, the kernel's netdev driver
selftests (drivers/net and drivers/net/hw, the default set of `devmemsim
kselftest`) on two nodes, as one table with a written reason for every case
that does not pass.

The run is `devmemsim kselftest`'s (the kselftest package), fresh or a JSON summary
it wrote (--from). Reasons come from one table, conformance_reasons.toml:
entries of file and case patterns (first match wins) with the reason the
case skips or xfails on devmemsim, and the few cases that fail on every NIC
because the test itself is wrong (test_bug entries: the failure message must
match, and the reason gives the evidence; the case still counts as a fail).
A reason marked `sometimes` is for a case whose outcome the reason shows
to hang on something outside the NIC (e.g. which queue the boot's random
RSS key picks): it is not stale in a run where its case passed.
The files the default set leaves out carry kselftest.EXCLUDED's reasons.
Conformance means: no fail but those test bugs, no skip or xfail without a
reason, no file of the set missing from the run, no entry that matches
nothing (stale); each is reported and exits 1, the table is written anyway."""

import fnmatch
import json
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from . import build, kselftest, ktree, options
from .errors import Failure, UsageError, log
from .nodeargs import check_plan_configs
from .paths import BUILD, ROOT

REASONS = ROOT / "tools" / "devmemsim" / "conformance_reasons.toml"
OUTPUT = ROOT / "docs" / "conformance.md"
RUN_JSON = BUILD / "conformance" / "run.json"  # a fresh run's summary; consoles beside it
NOT_PASSING = ("skip", "xfail")
REASON_KEYS = {"file", "case", "says", "reason", "sometimes"}
TEST_BUG = "test_bug"  # the reasons table's entries for fails that are the test's own bug


@dataclass
class Reason:
    """One entry of the reasons table: file and case are fnmatch patterns
    (file under drivers/net, e.g. hw/tso.py; case as KTAP names it, e.g.
    tso.ipv4_*, or a list of such), says an optional regular expression the
    test's own skip message must match; reason is what the docs say."""

    where: str  # "FILE: entry N", for messages
    file: str
    case: tuple
    says: str
    reason: str
    kind: str = "reason"  # or TEST_BUG: matches a fail, not a skip or xfail
    sometimes: bool = False  # the case may pass too (the reason says on what it hangs)
    used: int = 0
    passed: int = 0  # sometimes: its cases that passed in the run

    def names(self, rel: str, case: str) -> bool:
        return fnmatch.fnmatchcase(rel, self.file) and any(fnmatch.fnmatchcase(case, c) for c in self.case)

    def matches(self, rel: str, case: str, message: str) -> bool:
        return self.names(rel, case) and (not self.says or re.search(self.says, message) is not None)


@dataclass
class Row:
    case: str
    result: str  # ok, fail, skip, xfail
    says: str = ""  # the test's own message
    why: str = ""  # our reason (skip/xfail, or a fail's test bug)
    test_bug: bool = False  # a fail the test itself causes on every NIC (why says how)


@dataclass
class FileRows:
    rel: str  # hw/devmem.py, or devmemsim:boot for a run's own failures
    rows: list = field(default_factory=list)
    excluded: str = ""  # kselftest.EXCLUDED's reason: not run
    missing: bool = False  # of the set, but not in the run

    def count(self, result: str) -> int:
        return sum(r.result == result for r in self.rows)


@dataclass
class Report:
    meta: dict
    files: list  # FileRows, the run's order, then the files not run
    errors: list  # one line each: what breaks conformance

    def totals(self) -> dict:
        return {res: sum(f.count(res) for f in self.files) for res in ("ok", "fail", "skip", "xfail")}

    def test_bugs(self) -> list:
        """(file, row) of each fail a test_bug entry explains."""
        return [(f.rel, r) for f in self.files for r in f.rows if r.test_bug]

    def test_fixes(self) -> list:
        """The fixes the run's tests carried (kselftest's test_fixes)."""
        return self.meta.get("test_fixes") or []


def fixed_files(fix: dict) -> list:
    """The files under drivers/net a test fix changes (hw/rss_drv.py), when
    its patch is here."""
    patch = build.KSELFTEST_FIXES / fix["patch"]
    prefix = f"{kselftest.SELFTESTS}/{kselftest.NET}/"
    return [f.removeprefix(prefix) for f in build.patch_files(patch) if f.startswith(prefix)] if patch.is_file() else []


# ---- inputs ---------------------------------------------------------------

def load_reasons(path: Path) -> list:
    """The reasons table ([[reason]] and [[test_bug]] entries); Failure
    naming the entry when one is malformed."""
    try:
        data = tomllib.loads(Path(path).read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise Failure(f"{path}: {e}") from None
    reasons = []
    for kind in ("reason", TEST_BUG):
        for n, entry in enumerate(data.get(kind, []), 1):
            reasons.append(load_entry(f"{path}: {kind} {n}", kind, entry))
    if set(data) - {"reason", TEST_BUG}:
        raise Failure(f"{path}: unknown table(s) {', '.join(sorted(set(data) - {'reason', TEST_BUG}))}")
    return reasons


def load_entry(where: str, kind: str, entry: dict) -> Reason:
    unknown = set(entry) - REASON_KEYS
    if unknown:
        raise Failure(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    if not entry.get("file") or not str(entry.get("reason", "")).strip():
        raise Failure(f"{where}: needs 'file' and a non-empty 'reason'")
    says = entry.get("says", "")
    if kind == TEST_BUG and (not says or entry.get("case", "*") == "*"):
        raise Failure(f"{where}: a test bug names its case and the failure it 'says'")
    try:
        re.compile(says)
    except re.error as e:
        raise Failure(f"{where}: 'says' is not a regular expression: {e}") from None
    case = entry.get("case", "*")
    sometimes = entry.get("sometimes", False)
    if not isinstance(sometimes, bool) or (sometimes and (kind == TEST_BUG or case == "*")):
        raise Failure(f"{where}: 'sometimes' is true or false, for a reason that names its case")
    return Reason(where, entry["file"], tuple([case] if isinstance(case, str) else case), says,
                  " ".join(entry["reason"].split()), kind, sometimes)


def load_run(path: Path) -> dict:
    """A `devmemsim kselftest --json` summary."""
    try:
        run = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise UsageError(f"--from {path}: {e}") from None
    if not isinstance(run, dict) or not isinstance(run.get("files"), list):
        raise UsageError(f"--from {path}: not a `devmemsim kselftest --json` summary (no files)")
    return run


def merge_runs(runs: list) -> dict:
    """Runs of parts of the set as one: the first run's facts, every run's
    files in order (a file run again counts as its last run), the runs'
    cluster times added up."""
    merged = dict(runs[0])
    files = {}
    for run in runs:
        for f in run["files"]:
            files.pop(f["test"], None)
            files[f["test"]] = f
    merged["files"] = list(files.values())
    times = [run.get("cluster_seconds") for run in runs]
    merged["cluster_seconds"] = sum(times) if all(times) else None
    return merged


def rel_of(test: str) -> str:
    """hw/devmem.py for drivers/net/hw:devmem.py; other names as they are."""
    collection, _, name = test.partition(":")
    if collection != kselftest.NET and not collection.startswith(kselftest.NET + "/"):
        return test
    return str(Path(collection.removeprefix(kselftest.NET).lstrip("/")) / name)


def expected_files(run: dict) -> list:
    """The default set of the run's tree, when that tree is here."""
    base = Path(run.get("tree") or "/nonexistent") / kselftest.SELFTESTS / kselftest.NET
    return kselftest.default_set(base) if (base / "Makefile").is_file() else []


# ---- judging ----------------------------------------------------------------

def judge_case(rel: str, case: dict, reasons: list, errors: list) -> Row:
    result, says = case["result"], case.get("reason", "")
    row = Row(case["name"], result, says)
    if result == "ok":
        for r in reasons:
            r.passed += r.sometimes and r.names(rel, row.case)
    elif result == "fail":
        bug = next((r for r in reasons if r.kind == TEST_BUG and r.matches(rel, row.case, says)), None)
        if bug:
            bug.used += 1
            row.why, row.test_bug = bug.reason, True
        else:
            errors.append(f"FAIL {rel} {row.case}: {says}".rstrip(": "))
    elif result in NOT_PASSING:
        reason = next((r for r in reasons if r.kind != TEST_BUG and r.matches(rel, row.case, says)), None)
        if reason:
            reason.used += 1
            row.why = reason.reason
        else:
            errors.append(f"no reason for {result} {rel} {row.case}" + (f" ({says})" if says else ""))
    return row


def judge(run: dict, reasons: list) -> Report:
    """Every case of the run with its reason, and what breaks conformance."""
    errors, files = [], []
    for f in run["files"]:
        rel = rel_of(f["test"])
        fr = FileRows(rel, [judge_case(rel, c, reasons, errors) for c in f.get("cases", [])])
        for p in f.get("problems", []):
            node = f" ({p['node']})" if p.get("node") else ""
            fr.rows.append(Row(f"({p['kind']}){node}", "fail", p["message"]))
            errors.append(f"FAIL {rel} ({p['kind']}): {p['message']}")
        files.append(fr)
    run_rels, expected = {fr.rel for fr in files}, expected_files(run)
    for rel in expected:
        if rel not in run_rels:
            files.append(FileRows(rel, [Row("(not run)", "fail", "not in the run")], missing=True))
            errors.append(f"FAIL {rel}: not in the run")
    for rel, why in kselftest.EXCLUDED.items():
        if rel not in run_rels:
            files.append(FileRows(rel, excluded=why))
    not_run = set(expected) - run_rels  # reported above; their reasons are not judged
    for r in reasons:
        if not r.used and not r.passed and not any(fnmatch.fnmatchcase(rel, r.file) for rel in not_run):
            errors.append(f"stale {'test bug' if r.kind == TEST_BUG else 'reason'} ({r.where}: file {r.file!r}, "
                          f"case {' '.join(r.case)!r}): matches no "
                          f"{'fail' if r.kind == TEST_BUG else 'skip or xfail'} of the run")
    return Report(run, files, errors)


# ---- the document -----------------------------------------------------------

def cell(text: str) -> str:
    """Text for a Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def header(report: Report) -> list:
    m, t = report.meta, report.totals()
    minutes = f", {m['cluster_seconds'] / 60:.0f} min of cluster time" if m.get("cluster_seconds") else ""
    run_files = [f for f in report.files if not f.excluded and not f.missing]
    missing = sum(f.missing for f in report.files)
    bugs = len(report.test_bugs())
    verdict = ("**Conformant**: no fail, every skip and xfail has a written reason." if not report.errors else
               f"**Not conformant**: {len(report.errors)} problem(s), listed under [Open](#open).")
    if bugs and not report.errors:
        verdict = (f"**Conformant**: no fail but {bugs} the test itself causes on every NIC (listed under "
                   "[Test bugs](#test-bugs), with the evidence); every skip and xfail has a written reason.")
    fixes = report.test_fixes()
    if fixes:
        verdict += (f" The tests carry {len(fixes)} fix(es) of their own, listed under "
                    "[Test fixes](#test-fixes) with the evidence.")
    return [
        "# Conformance: the kernel's netdev driver selftests on devmemsim",
        "",
        "Generated by `./devmemsim conformance` from a `devmemsim kselftest` run of the default set",
        f"(`{kselftest.SELFTESTS}/{kselftest.NET}` and `.../hw`) on {m.get('nodes', 2)} nodes"
        + (f" (cluster file `{m['cluster']}`)" if m.get("cluster") else "") + ": "
        f"Linux {m.get('kernel', '?')}, runner {m.get('runner', '?')}{minutes}.",
        "Do not edit: the reasons come from `tools/devmemsim/conformance_reasons.toml`, the files left",
        "out of the set (excluded) from `tools/devmemsim/kselftest/selection.py`.",
        "",
        verdict,
        "",
        f"Files: {len(run_files)} run, " + (f"{missing} of the set not run, " if missing else "") +
        f"{sum(bool(f.excluded) for f in report.files)} excluded. "
        f"Cases: {t['ok']} ok, {t['fail']} fail" + (f" ({bugs} of them a test bug)" if bugs else "") +
        f", {t['skip']} skip, {t['xfail']} xfail.",
        "",
    ]


def files_table(report: Report) -> list:
    lines = ["## Files", "", "| file | ok | fail | skip | xfail | |", "|---|--:|--:|--:|--:|---|"]
    fixed = {rel for fix in report.test_fixes() for rel in fixed_files(fix)}
    for f in report.files:
        if f.excluded:
            lines.append(f"| {cell(f.rel)} | | | | | excluded: {cell(f.excluded)} |")
        else:
            counts = " | ".join(str(f.count(r)) for r in ("ok", "fail", "skip", "xfail"))
            bugs = sum(r.test_bug for r in f.rows)
            mark = "FAIL" if f.count("fail") > bugs else "test bug" if bugs else ""
            if f.rel in fixed:
                mark = ", ".join(filter(None, [mark, "[test fix](#test-fixes)"]))
            lines.append(f"| [{cell(f.rel)}](#{anchor(f.rel)}) | {counts} | {mark} |")
    return lines + [""]


def anchor(rel: str) -> str:
    """GitHub's heading anchor for a file's section."""
    return re.sub(r"[^a-z0-9 _-]", "", rel.lower()).replace(" ", "-")


def cases_tables(report: Report) -> list:
    lines = ["## Cases", ""]
    for f in report.files:
        if f.excluded:
            continue
        lines += [f"### {f.rel}", "", "| case | result | the test says | why, on devmemsim |", "|---|---|---|---|"]
        for r in f.rows:
            result = "**FAIL** (test bug)" if r.test_bug else "**FAIL**" if r.result == "fail" else r.result
            lines.append(f"| {cell(r.case)} | {result} | {cell(r.says)} | {cell(r.why)} |")
        lines.append("")
    return lines


def render(report: Report) -> str:
    lines = header(report) + files_table(report)
    if report.errors:
        lines += ["## Open", ""] + [f"- {cell(e)}" for e in report.errors] + [""]
    if report.test_bugs():
        lines += ["## Test bugs", "", "Cases that fail on every NIC because of the test itself, with the evidence:", ""]
        lines += [f"- {cell(rel)} {cell(r.case)}: {cell(r.why)}" for rel, r in report.test_bugs()] + [""]
    lines += fixes_section(report.test_fixes())
    lines += cases_tables(report)
    return "\n".join(lines).rstrip("\n") + "\n"


def fixes_section(fixes: list) -> list:
    """Each fix the tests carried: its subject, patch and message (the
    evidence that the unfixed test fails on every NIC)."""
    if not fixes:
        return []
    where = build.KSELFTEST_FIXES.relative_to(ROOT)
    lines = ["## Test fixes", "",
             f"Fixes to the tests themselves that the run carried (patches in `{where}/`, applied to the",
             "pinned kernel's selftests when they are built; a `--kernel-tree` run uses the tree's tests as",
             "they are). Each says why the test as it stands fails on every NIC:", ""]
    for fix in fixes:
        patch = build.KSELFTEST_FIXES / fix["patch"]
        body = build.patch_message(patch)[1] if patch.is_file() else "(the patch is not in this checkout)"
        lines.append(f"- **{cell(fix['subject'])}** (`{where}/{fix['patch']}`): {cell(body)}")
    return lines + [""]


# ---- the command --------------------------------------------------------------

def add_command(sub):
    c = sub.add_parser("conformance", help="run the netdev driver selftests (kselftest's default set) on two "
                       "nodes and write docs/conformance.md: every case, a reason for every skip and xfail")
    c.add_argument("--from", dest="run_json", action="append", default=[], metavar="RUN.json",
                   help="use this `devmemsim kselftest --json` summary instead of running the set "
                        "(repeatable: runs of parts of the set, in order)")
    options.add_output(c, "the table (default docs/conformance.md; '-': stdout)", default=str(OUTPUT))
    c.add_argument("--check", action="store_true",
                   help="check only: write nothing; exit 1 if --output's FILE differs from the table this run gives")
    c.add_argument("--reasons", default=str(REASONS), metavar="FILE",
                   help="the reasons table (default tools/devmemsim/conformance_reasons.toml)")
    options.add_json(c, "without --from, the run's summary, its consoles beside FILE (default "
                        "build/conformance/run.json)", default=str(RUN_JSON), stdout=False)
    kselftest.add_cluster_option(c)
    c.epilog = ("Exit status: 0 conformant; 1 a case (not a listed test bug) or file failed, a skip/xfail has no "
                "reason, a file of the set is missing from the run, a reason matches nothing, or (--check) FILE "
                "is out of date; 2 a usage error.")
    c.set_defaults(run=run)


def fresh_run(json_path: Path, plan) -> dict:
    """The default set on plan's cluster (two nodes unless --cluster), as
    `devmemsim kselftest --json` runs it."""
    json_path.parent.mkdir(parents=True, exist_ok=True)
    files = kselftest.resolve(build.linux_source(), [])
    kbuild = ktree.build_kselftest(None, [])
    kselftest.run(kbuild, files, plan, kselftest.Outputs(json=str(json_path)))
    log(f"the run's summary: {json_path}")
    return load_run(json_path)


def run(a) -> int:
    if a.output != "-" and not Path(a.output).resolve().parent.is_dir():
        raise UsageError(f"--output {a.output}: no such directory")
    if a.check and a.output == "-":
        raise UsageError("--check compares with a file: give --output FILE")
    if a.json == "-" and not a.run_json:
        raise UsageError("--json: give a FILE (conformance reads the run's summary back, its consoles beside it)")
    if a.cluster and a.run_json:
        raise UsageError("--cluster: not with --from (the run is read, not made)")
    plan = None if a.run_json else kselftest.cluster_plan(a.cluster, 2)
    if a.cluster:
        # The nodes' configurations, with the model's schema, before anything is built.
        check_plan_configs(plan)
    reasons = load_reasons(Path(a.reasons))
    runs = [load_run(Path(p)) for p in a.run_json] or [fresh_run(Path(a.json), plan)]
    run_data = merge_runs(runs)
    report = judge(run_data, reasons)
    text = render(report)
    errors = list(report.errors)
    if a.check:
        try:
            current = Path(a.output).read_text()
        except OSError:
            current = None
        if current != text:
            errors.append(f"{a.output} is out of date: `./devmemsim conformance` regenerates it")
    elif a.output == "-":
        sys.stdout.write(text)
    else:
        Path(a.output).write_text(text)
        print(f"wrote {a.output}")
    t = report.totals()
    for e in errors:
        print(f"conformance: {e}", file=sys.stderr)
    bugs = len(report.test_bugs())
    print(f"cases: {t['ok']} ok, {t['fail']} fail" + (f" ({bugs} test bug(s))" if bugs else "") +
          f", {t['skip']} skip, {t['xfail']} xfail; {len(errors)} problem(s)", file=sys.stderr)
    return 1 if errors else 0
