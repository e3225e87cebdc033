"""KTAP in and out: parse what a kselftest file prints (TAP 13 / KTAP 1,
nested by kselftest's "# " prefix or KTAP's four spaces, with SKIP / XFAIL /
TIMEOUT directives and "# Totals:" lines), and write a run's results as
KTAP, JUnit XML and JSON.

A file's results live in FileResult: its cases (one per result line at the
file's own depth) and its problems (what failed the file besides its cases:
a bad exit status, a timeout, missing results, a kernel complaint or taint, a
node that died), each with the detail a reader needs (console report)."""

import json
import re
import socket
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from . import options

RESULT = re.compile(r"^(not ok|ok)\s+(\d+)(?:\s+(?:-\s+)?(.*?))?(?:\s+#\s*(.*))?$")
PLAN = re.compile(r"^1\.\.(\d+)")
VERSION = re.compile(r"^K?TAP version \d+")
TOTALS = re.compile(r"^Totals: (.*)")
NESTING = ("# ", "    ")
MAX_DEPTH = 4
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# What run_kselftest.sh itself says about a file, among the file's lines.
RUNNER_CHATTER = re.compile(r"^# (timeout set to \d+|overriding timeout to \d+|selftests: \S+: \S+|"
                            r"Warning: file \S+ is (not executable|missing!))$")
# kselftest's exit statuses (kselftest.h) and timeout(1)'s.
KSFT_PASS, KSFT_FAIL, KSFT_XFAIL, KSFT_XPASS, KSFT_SKIP = 0, 1, 2, 3, 4
TIMEOUT_STATUS = 124
# The first line of a Python traceback; the exception's own line is the
# first unindented one after it (frames and their code are indented).
TRACEBACK = "Traceback (most recent call last):"
NOTES_KEPT = 200  # diagnostic lines kept with a failed case


@dataclass
class Case:
    name: str
    result: str  # ok, fail, skip, xfail
    reason: str = ""
    seconds: float = 0.0
    log: str = ""  # what the file printed before a failed case's result line


@dataclass
class Problem:
    """Something that fails a file besides its cases."""

    kind: str  # exit, timeout, plan, kernel, taint, node
    message: str  # one line
    detail: str = ""  # e.g. the console report
    node: str = ""


@dataclass
class FileResult:
    test: str  # COLLECTION:FILE, run_kselftest.sh's name, e.g. drivers/net/hw:devmem.py
    status: str = "fail"  # ok, fail, skip
    reason: str = ""
    seconds: float = 0.0  # wall time on the host, checks included
    run_seconds: float = 0.0  # the test's own run, in the guest
    exit_code: int = None
    cases: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    output: list = field(default_factory=list)  # the file's own lines, unprefixed

    @property
    def collection(self) -> str:
        return self.test.split(":", 1)[0]

    @property
    def name(self) -> str:
        return self.test.split(":", 1)[-1]

    def complaints(self) -> list:
        return [{"node": p.node, "report": p.detail} for p in self.problems if p.kind == "kernel"]


def split_nesting(line: str):
    """(depth, text) of a TAP line: how many nesting prefixes stand before a
    version, plan or result line; (None, line) for any other line."""
    text = line
    for depth in range(MAX_DEPTH + 1):
        if VERSION.match(text) or PLAN.match(text) or RESULT.match(text):
            return depth, text
        for prefix in NESTING:
            if text.startswith(prefix):
                text = text[len(prefix):]
                break
        else:
            break
    return None, line


def strip_nesting(line: str, depth: int) -> str:
    for _ in range(depth):
        for prefix in NESTING:
            if line.startswith(prefix):
                line = line[len(prefix):]
                break
        else:
            if line.rstrip() == "#":
                return ""
            break
    return line


def directive_result(ok: bool, directive: str):
    """(result, reason) of a result line and its directive."""
    word, _, rest = directive.partition(" ")
    word = word.upper()
    if word == "SKIP":
        return "skip", rest.strip()
    if word in ("XFAIL", "TODO"):
        return "xfail", rest.strip()
    if not ok:
        return "fail", directive.strip()
    return "ok", ""


def raised_line(notes: list) -> str:
    """The exception of the last traceback ksft printed ("Exception| ..."
    lines): its own line ("SomeError: why", or a bare "Exception: why") with
    the lines of its message (CmdExitFailure: CMD, EXIT, STDERR), or ""."""
    # ksft_pr puts one space after the prefix: what follows keeps its indent
    lines = [n.partition("Exception|")[2][1:].rstrip() for n in notes if "Exception|" in n]
    starts = [i for i, line in enumerate(lines) if line.startswith(TRACEBACK)]
    after = lines[starts[-1] + 1:] if starts else lines
    first = next((i for i, line in enumerate(after) if line and not line[0].isspace()), None)
    if first is None:
        return ""
    message = after[first:]
    message = message[:message.index("")] if "" in message else message
    return "; ".join(line.strip() for line in message)[:300]


def failure_reason(notes: list) -> str:
    """The line of a failed case's log that says why: ksft's "Check failed",
    else the exception's own line (raised_line), else the last line."""
    said = [n.lstrip("# ").strip() for n in notes]
    checks = [n for n in said if n.startswith("Check failed")]
    if checks:
        return checks[-1][:300]
    raised = raised_line(notes)
    if raised:
        return raised
    said = [n for n in said if n]
    return said[-1][:300] if said else ""


class Parser:
    """One file's output, line by line. depth: the nesting of the file's own
    results (0 when run directly, 1 under run_kselftest.sh, whose own result
    line for the file, one level up, is `outer`)."""

    def __init__(self, depth: int = 0):
        self.depth = depth
        self.cases, self.lines, self.notes = [], [], []
        self.plan = self.totals = self.outer = None
        self.last = time.monotonic()

    def feed(self, raw: str):
        """Take one line; returns the Case it completes, if any."""
        line = ANSI.sub("", raw.rstrip("\r\n"))
        if self.outer is not None:
            return None  # run_kselftest.sh's closing lines (its totals)
        depth, text = split_nesting(line)
        if depth is not None and depth < self.depth:
            m = RESULT.match(text)
            if m:
                self.outer = (m.group(1) == "ok", m.group(4) or "")
            return None
        if self.depth and RUNNER_CHATTER.match(line):
            return None
        own = strip_nesting(line, self.depth)
        self.lines.append(own)
        if depth is None or depth > self.depth:
            self._note(own)
            return None
        if PLAN.match(text) and not self.cases:
            self.plan = int(PLAN.match(text).group(1))
        m = RESULT.match(text)
        if not m:
            return None
        return self._case(m)

    def _note(self, own: str):
        self.notes = (self.notes + [own])[-NOTES_KEPT:]
        m = TOTALS.match(own.lstrip("# "))
        if m and own.startswith("#"):
            self.totals = dict(kv.split(":", 1) for kv in m.group(1).split() if ":" in kv)

    def _case(self, m):
        ok = m.group(1) == "ok"
        result, reason = directive_result(ok, m.group(4) or "")
        now = time.monotonic()
        case = Case(m.group(3) or f"case {m.group(2)}", result, reason, round(now - self.last, 2))
        if result == "fail":
            case.log = "\n".join(self.notes)
            case.reason = reason or failure_reason(self.notes)
        self.last, self.notes = now, []
        self.cases.append(case)
        return case


def exit_result(code: int):
    """The result a file's exit status stands for when it printed no cases."""
    return {KSFT_PASS: "ok", KSFT_SKIP: "skip", KSFT_XFAIL: "xfail", KSFT_XPASS: "ok"}.get(code, "fail")


def runner_status(parser: Parser, code, timed_out: bool):
    """(exit status, timed out) of a file: under run_kselftest.sh its result
    line for the file tells ("# exit=N", "# TIMEOUT ...", "# SKIP")."""
    if parser.outer is None:
        return code, timed_out
    ok, directive = parser.outer
    word = directive.upper()
    if word.startswith("TIMEOUT"):
        return TIMEOUT_STATUS, True
    if word.startswith("SKIP"):
        return KSFT_SKIP, timed_out
    m = re.search(r"exit=(\d+)", directive)
    return (KSFT_PASS if ok else int(m.group(1)) if m else KSFT_FAIL), timed_out


def finish(res: FileResult, parser: Parser, code, timed_out: bool) -> None:
    """Fill in a file's cases, problems and status from its parsed output and
    exit status (None: it has none, its node died); problems the caller
    found stay."""
    code, timed_out = runner_status(parser, code, timed_out)
    res.exit_code = code
    res.cases = list(parser.cases)
    res.output = list(parser.lines)
    if timed_out:
        res.problems.insert(0, Problem("timeout", "timed out"))
    elif code is None:
        pass  # the caller said why
    elif not res.cases:
        # Not KTAP (e.g. a forwarding lib.sh test): one case, the file.
        result = exit_result(code)
        said = [n.strip() for n in parser.lines if n.strip()]
        reason = said[-1][:300] if said and result != "ok" else ""
        res.cases = [Case(res.name, result, reason, res.run_seconds,
                          "\n".join(parser.notes) if result == "fail" else "")]
    elif exit_result(code) == "fail" and not any(c.result == "fail" for c in res.cases):
        res.problems.insert(0, Problem("exit", f"exit={code}"))
    if parser.plan is not None and len(parser.cases) < parser.plan and not timed_out and code is not None:
        res.problems.append(Problem("plan", f"plan 1..{parser.plan} but {len(parser.cases)} results"))
    res.status = file_status(res)
    if res.status == "fail":
        res.reason = res.problems[0].message if res.problems else \
            next(f"{c.name}: {c.reason}" for c in res.cases if c.result == "fail")
    elif res.status == "skip":
        res.reason = next((c.reason for c in res.cases if c.reason), "")


def file_status(res: FileResult) -> str:
    if res.problems or any(c.result == "fail" for c in res.cases):
        return "fail"
    if res.cases and all(c.result == "skip" for c in res.cases):
        return "skip"
    return "ok"


# ---- writers --------------------------------------------------------------

def ktap_lines(results: list) -> list:
    """The whole run as KTAP, one nested block per file as kselftest's
    runner prints it ("# " before every line of the file's output)."""
    out = ["KTAP version 1", f"1..{len(results)}"]
    for n, res in enumerate(results, 1):
        title = f"selftests: {res.collection}: {res.name}"
        out.append(f"# {title}")
        out += [f"# {line}".rstrip() for line in res.output]
        for p in res.problems:
            out.append(f"# devmemsim: {p.message}")
            out += [f"# {line}".rstrip() for line in p.detail.splitlines()]
        directive = {"ok": "", "skip": f" # SKIP {res.reason}".rstrip(),
                     "fail": f" # {res.reason}" if res.reason else ""}[res.status]
        out.append(f"{'not ok' if res.status == 'fail' else 'ok'} {n} {title}{directive}")
    return out


def write_ktap(path, results: list) -> None:
    with open(path, "w") as f:
        f.write("\n".join(ktap_lines(results)) + "\n")


def junit_tree(results: list, props: dict) -> ET.ElementTree:
    """JUnit XML (the Ant/Jenkins schema): a testsuite per file, a testcase
    per case, one more per problem of the file."""
    top = ET.Element("testsuites", name="devmemsim kselftest")
    totals = dict(tests=0, failures=0, errors=0, skipped=0)
    for i, res in enumerate(results):
        counts = dict(tests=0, failures=0, errors=0, skipped=0)
        suite = ET.SubElement(top, "testsuite", name=res.test, id=str(i), package=res.collection,
                              timestamp=time.strftime("%Y-%m-%dT%H:%M:%S"), hostname=socket.gethostname(),
                              time=f"{res.seconds:.2f}")
        properties = ET.SubElement(suite, "properties")
        for k, v in props.items():
            ET.SubElement(properties, "property", name=k, value=str(v))
        classname = res.test.replace("/", ".").replace(":", ".")
        for c in res.cases:
            counts["tests"] += 1
            tc = ET.SubElement(suite, "testcase", name=c.name, classname=classname, time=f"{c.seconds:.2f}")
            if c.result == "fail":
                counts["failures"] += 1
                ET.SubElement(tc, "failure", message=c.reason or "failed", type="fail").text = c.log
            elif c.result in ("skip", "xfail"):
                counts["skipped"] += 1
                ET.SubElement(tc, "skipped", message=f"{c.result.upper()} {c.reason}".strip())
        for p in res.problems:
            counts["tests"] += 1
            counts["failures"] += 1
            name = f"{p.kind}[{p.node}]" if p.node else p.kind
            tc = ET.SubElement(suite, "testcase", name=name, classname=classname, time="0")
            ET.SubElement(tc, "failure", message=p.message, type=p.kind).text = p.detail
        ET.SubElement(suite, "system-out").text = "\n".join(res.output)
        ET.SubElement(suite, "system-err")
        for k, v in counts.items():
            suite.set(k, str(v))
            totals[k] += v
    for k, v in totals.items():
        top.set(k, str(v))
    top.set("time", f"{sum(r.seconds for r in results):.2f}")
    ET.indent(top)
    return ET.ElementTree(top)


def write_junit(path, results: list, props: dict) -> None:
    junit_tree(results, props).write(path, encoding="utf-8", xml_declaration=True)


def totals(results: list) -> dict:
    cases = {"ok": 0, "fail": 0, "skip": 0, "xfail": 0}
    for res in results:
        for c in res.cases:
            cases[c.result] += 1
    files = {s: sum(r.status == s for r in results) for s in ("ok", "fail", "skip")}
    return {"files": files, "cases": cases}


def summary(results: list, meta: dict) -> dict:
    """The JSON summary: meta (kernel, tree, build facts, timings), each file
    with its cases and console complaints, and the totals."""
    files = []
    for res in results:
        files.append({
            "test": res.test, "status": res.status, "reason": res.reason,
            "seconds": round(res.seconds, 2), "run_seconds": round(res.run_seconds, 2),
            "exit_code": res.exit_code,
            "cases": [{"name": c.name, "result": c.result, "reason": c.reason, "seconds": c.seconds,
                       **({"log": c.log} if c.result == "fail" else {})} for c in res.cases],
            "problems": [{"kind": p.kind, "node": p.node, "message": p.message} for p in res.problems],
            "complaints": res.complaints(),
        })
    return {**meta, "files": files, "totals": totals(results)}


def write_json(path, results: list, meta: dict) -> None:
    """The summary to path ('-': stdout, options.json_file())."""
    with options.json_file(path) as f:
        json.dump(summary(results, meta), f, indent=2)
        f.write("\n")
