#!/usr/bin/python3
"""Run one linter over the repository's files of its kind.

  lint.py clang-format | checkpatch | shellcheck | pyflakes | import-cycles | doc-links
          | test-index

Files are the repository's own (git ls-files, plus new files git does not
ignore); a file's kind comes from its extension or, for extensionless
scripts, its shebang. Prints each finding, then one line
'lint-NAME: N findings in M files'; exits 1 if there are findings, 77 (meson:
skipped) when the linter cannot run, with the reason.

test-index checks docs/testing.md's "Test index" table against the tests
meson lists for the build (DEVMEMSIM_BUILD, else build/): a row per test,
its suites, and links to files that exist, among them every file of the
repository the test's command line names.
"""

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from devmemsim.paths import BUILD, cache_dir  # the build's own tree and cache

SKIP = 77

# clang-format 14 (bookworm) has no .clang-format-ignore (clang-format 18
# added it), so the files it must not format are listed here, each with why.
CLANG_FORMAT_EXCLUDED = {
    "guest/kernel/": "kernel modules follow the kernel's coding style, which "
                     "checkpatch --strict checks (lint-checkpatch); clang-format "
                     "output for kernel code disagrees with it",
    "guest/include/uapi/": "the dmsgpu UAPI header is kernel code, checked by "
                           "checkpatch with the modules",
}

C_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hh", ".hpp")
SHELLS = ("sh", "bash", "dash")


def repo_files() -> list:
    """Tracked files and new files git does not ignore, relative to ROOT."""
    if (ROOT / ".git").exists():
        out = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            check=True, capture_output=True, text=True).stdout
        return sorted({p for p in out.split("\0") if p and (ROOT / p).is_file()})
    skip = {".git", "build", ".cache", "__pycache__"}
    found = []
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in skip]
        found += [str(Path(top, f).relative_to(ROOT)) for f in files]
    return sorted(found)


def interpreter(path: str) -> str:
    """The program a script names on its '#!' line ('' if none), e.g. 'bash'."""
    try:
        with open(ROOT / path, "rb") as f:
            first = f.readline(200).decode("utf-8", "replace")
    except OSError:
        return ""
    m = re.match(r"#!\s*(\S+)(?:\s+(\S+))?", first)
    if not m:
        return ""
    prog = os.path.basename(m.group(1))
    if prog == "env" and m.group(2):
        prog = m.group(2)
    return prog


def is_shell(path: str) -> bool:
    if path.endswith(".sh"):
        return True
    if interpreter(path) in SHELLS:
        return True
    # Sourced libraries carry no shebang but a shellcheck shell directive.
    with open(ROOT / path, "rb") as f:
        return f.readline(200).startswith(b"# shellcheck shell=")


def is_python(path: str) -> bool:
    return path.endswith(".py") or re.fullmatch(r"python[0-9.]*", interpreter(path)) is not None


def run(cmd: list) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    except FileNotFoundError:
        return subprocess.CompletedProcess(
            cmd, 127, "", f"{cmd[0]}: not installed (scripts/bootstrap.sh installs it)\n")


def report(name: str, findings: dict) -> int:
    """findings: file -> number of findings. Prints the summary line."""
    total = sum(findings.values())
    files = sum(1 for n in findings.values() if n)
    for path, n in sorted(findings.items()):
        if n:
            print(f"  {n:4d}  {path}")
    print(f"lint-{name}: {total} findings in {files} files")
    return 1 if total else 0


def lint_clang_format(files: list) -> int:
    for prefix, why in CLANG_FORMAT_EXCLUDED.items():
        print(f"not formatted by clang-format: {prefix}: {why}")
    targets = [f for f in files if f.endswith(C_SUFFIXES)
               and not any(f.startswith(p) for p in CLANG_FORMAT_EXCLUDED)]
    findings = {}
    for path in targets:
        # -style=file (the default): the nearest .clang-format above the
        # file, so qemu-device/ gets QEMU's layout and the rest the repo's.
        res = run(["clang-format", "--dry-run", "--Werror", path])
        sys.stdout.write(res.stderr)
        findings[path] = res.stderr.count("[-Wclang-format-violations]")
        if res.returncode and not findings[path]:
            findings[path] = 1  # clang-format itself failed on the file
    return report("clang-format", findings)


def kernel_source() -> Path:
    """The Linux tree the build uses, located by the build's own script.

    fetch-linux.sh without a version reuses the newest tree already in the
    cache with no network access; it is only called when one is there."""
    cache = cache_dir()
    if not any(cache.glob("src/linux-*/.devmemsim-unpacked")):
        return None
    res = run([str(ROOT / "scripts" / "fetch-linux.sh"), str(cache)])
    if res.returncode:
        sys.stderr.write(res.stderr)
        return None
    return Path(res.stdout.strip())


def lint_checkpatch(files: list) -> int:
    ksrc = kernel_source()
    if ksrc is None:
        print(f"skipped: no Linux source under {cache_dir()}/src "
              "(./devmemsim build fetches it; checkpatch.pl comes with it)")
        return SKIP
    targets = [f for f in files if f.startswith(("guest/kernel/", "guest/include/"))
               and f.endswith((".c", ".h"))]
    # As in a kernel tree (--root): --strict then knows the kernel headers'
    # names (CamelCase IEEE 802.3 counters in struct ethtool_eth_mac_stats).
    # GIT_DIR: the tree's, not this repository's, or it looks for them here.
    res = run(["env", f"GIT_DIR={ksrc / '.git'}", "perl", str(ksrc / "scripts" / "checkpatch.pl"),
               "--strict", "--root", str(ksrc), "--show-types", "--color=never", "-f", *targets])
    sys.stdout.write(res.stdout + res.stderr)
    findings, current = {}, None
    for line in res.stdout.splitlines():
        # Each file's block starts with its name (between dashed lines) and
        # ends with "total: E errors, W warnings, C checks, N lines checked".
        if line in targets:
            current = line
        m = re.match(r"total: (\d+) errors, (\d+) warnings, (\d+) checks", line)
        if m and current:
            findings[current] = sum(int(n) for n in m.groups())
    if res.returncode and not findings:
        findings["checkpatch.pl"] = 1  # failed without a per-file total
    return report("checkpatch", findings)


def report_by_path(name: str, res) -> int:
    """Report a linter whose findings are "PATH:..." lines on stdout; a
    failure without any counts as one finding of its own."""
    sys.stdout.write(res.stdout + res.stderr)
    findings = {}
    for line in res.stdout.splitlines():
        path = line.split(":", 1)[0]
        findings[path] = findings.get(path, 0) + 1
    if res.returncode and not findings:
        findings[name] = 1
    return report(name, findings)


def lint_shellcheck(files: list) -> int:
    targets = [f for f in files if is_shell(f)]
    # -x follows 'source' directives (paths relative to the repository root).
    res = run(["shellcheck", "-x", "-f", "gcc", *targets])
    return report_by_path("shellcheck", res)


def lint_pyflakes(files: list) -> int:
    targets = [f for f in files if is_python(f)]
    # Debian's python3 and its python3-pyflakes, like every tool of the project.
    res = run(["/usr/bin/python3", "-m", "pyflakes", *targets])
    return report_by_path("pyflakes", res)


# The Python package whose modules must not import each other in a cycle.
PACKAGE = "tools/devmemsim"


def module_name(path: str) -> str:
    """tools/devmemsim/sweep/spec.py -> devmemsim.sweep.spec (a package's
    __init__.py -> the package)."""
    parts = Path(path).relative_to(Path(PACKAGE).parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: str, modules: dict) -> set:
    """The package's modules the file imports, at any level of its code."""
    me = module_name(path)
    package = me if path.endswith("__init__.py") else me.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse((ROOT / path).read_text(), path)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # from . / from .. : the package, or one up
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            # "from PKG import name": the module PKG.name, or a name in PKG
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names)
    return {m for m in found if m in modules and m != me}


def cycles(graph: dict) -> list:
    """Each import cycle once, as the modules along it (depth-first)."""
    state, stack, found = {}, [], []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for dep in sorted(graph[m]):
            if state.get(dep) == "open":
                found.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)
    return found


def lint_import_cycles(files: list) -> int:
    paths = {module_name(f): f for f in files if f.startswith(PACKAGE + "/") and f.endswith(".py")}
    graph = {m: imported(p, paths) for m, p in paths.items()}
    findings = {p: 0 for p in paths.values()}
    for cycle in cycles(graph):
        print(f"{paths[cycle[0]]}: import cycle: {' -> '.join(cycle)}")
        findings[paths[cycle[0]]] += 1
    return report("import-cycles", findings)


def heading_anchors(text: str) -> set:
    """The anchors of a Markdown file's headings, as GitHub makes them
    (lower case, punctuation but '-' dropped, spaces to '-'), code
    blocks skipped."""
    anchors, code = set(), False
    for line in text.splitlines():
        if line.startswith("```"):
            code = not code
        elif not code and (m := re.match(r"#+ (.*)", line)):
            anchors.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return anchors


def broken_links(path: str) -> list:
    """The relative links of a Markdown file whose file or heading is not there."""
    text = (ROOT / path).read_text()
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)  # links in code are not links
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (ROOT / path).parent / file if file else ROOT / path
        if not dest.exists():
            broken.append(f"{path}: {target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in heading_anchors(dest.read_text()):
            broken.append(f"{path}: {target}: no such heading")
    return broken


def lint_doc_links(files: list) -> int:
    findings = {}
    for path in (f for f in files if f.endswith(".md")):
        broken = broken_links(path)
        print("".join(f"{b}\n" for b in broken), end="")
        findings[path] = len(broken)
    return report("doc-links", findings)


# The document whose "Test index" table lists every meson test.
TEST_INDEX_DOC = "docs/testing.md"
TEST_INDEX_HEADING = "## Test index"


def meson_tests() -> list:
    """The build's tests as meson lists them (name, suite, cmd, ...); None
    (with the reason printed) when there is no configured build to ask."""
    if not (BUILD / "meson-info").is_dir():
        print(f"skipped: {BUILD} is not a configured meson build directory "
              "(./devmemsim build sets it up; DEVMEMSIM_BUILD names another)")
        return None
    res = run(["meson", "introspect", str(BUILD), "--tests"])
    if res.returncode:
        print(f"skipped: meson introspect {BUILD} --tests failed: {res.stderr.strip()}")
        return None
    return json.loads(res.stdout)


def stale_introspection() -> str:
    """A meson.build newer than the build's list of tests ('' if none): the
    list is then that of the last configuration, until meson (meson test,
    ninja) configures the build again."""
    listed = BUILD / "meson-info" / "intro-tests.json"
    try:
        files = json.loads((BUILD / "meson-info" / "intro-buildsystem_files.json").read_text())
        since = listed.stat().st_mtime
    except (OSError, ValueError):
        return ""
    newer = [f for f in files if Path(f).is_file() and Path(f).stat().st_mtime > since]
    return os.path.relpath(newer[0], ROOT) if newer else ""


def source_files(cmd: list, files: set) -> list:
    """The repository's files (of files: paths relative to ROOT) that a
    test's command line names: a script, the files it runs, an RTL block;
    not a program the build made."""
    found = []
    for arg in cmd:
        path = Path(arg).resolve()
        if Path(arg).is_absolute() and path.is_relative_to(ROOT) \
                and str(path.relative_to(ROOT)) in files:
            found.append(path)
    return found


def test_index_rows(text: str) -> list:
    """The table under TEST_INDEX_HEADING: (line number, test, suites, links)
    per row, from its first three columns' backquoted names and link targets."""
    rows, inside = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("## "):
            inside = line.strip() == TEST_INDEX_HEADING
        elif inside and line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 3 or cells[0] == "test" or set(cells[0]) <= set("-: "):
                continue  # the header row and the one under it
            test = re.findall(r"`([^`]+)`", cells[0])
            rows.append((number, test[0] if test else cells[0], re.findall(r"`([^`]+)`", cells[1]),
                         re.findall(r"\]\(([^)\s]+)\)", cells[2])))
    return rows


def lint_test_index(files: list) -> int:
    tests = meson_tests()
    if tests is None:
        return SKIP
    doc = TEST_INDEX_DOC
    text = (ROOT / doc).read_text()
    if f"\n{TEST_INDEX_HEADING}\n" not in f"\n{text}":
        print(f"{doc}: no '{TEST_INDEX_HEADING}' section")
        return report("test-index", {doc: 1})
    rows = test_index_rows(text)
    # meson names a suite PROJECT:SUITE; the table, SUITE.
    suites = {t["name"]: [s.split(":", 1)[-1] for s in t["suite"]] for t in tests}
    ours = set(files)
    ran = {t["name"]: source_files(t["cmd"], ours) for t in tests}
    found, seen = [], {}
    for number, test, row_suites, links in rows:
        where = f"{doc}:{number}: `{test}`"
        if test in seen:
            found.append(f"{where}: a second row (the first is line {seen[test]})")
            continue
        seen[test] = number
        if test not in suites:
            found.append(f"{where}: no such meson test")
            continue
        if sorted(row_suites) != sorted(suites[test]):
            found.append(f"{where}: suites {', '.join(row_suites) or 'none'}, "
                         f"meson's are {', '.join(suites[test])}")
        if not links:
            found.append(f"{where}: no file link")
        linked = set()
        for target in links:
            dest = ((ROOT / doc).parent / target.partition("#")[0]).resolve()
            linked.add(dest)
            if not dest.is_file():
                found.append(f"{where}: {target}: no such file")
        for path in sorted(set(ran[test]) - linked):
            found.append(f"{where}: runs {path.relative_to(ROOT)}, which no link names")
    for test in sorted(set(suites) - set(seen)):
        found.append(f"{doc}: `{test}` (suites {', '.join(suites[test])}): no row")
    for suite in sorted({s for names in suites.values() for s in names}
                        - {s for _, _, names, _ in rows for s in names}):
        found.append(f"{doc}: suite `{suite}`: in no row")
    print("".join(f"{f}\n" for f in found), end="")
    if found and (newer := stale_introspection()):
        print(f"note: {newer} is newer than {BUILD}'s list of tests, which the next "
              "meson test (or ninja) run brings up to date")
    return report("test-index", {doc: len(found)})


LINTERS = {
    "clang-format": lint_clang_format,
    "checkpatch": lint_checkpatch,
    "shellcheck": lint_shellcheck,
    "pyflakes": lint_pyflakes,
    "import-cycles": lint_import_cycles,
    "doc-links": lint_doc_links,
    "test-index": lint_test_index,
}


def main() -> int:
    if len(sys.argv) != 2 or sys.argv[1] not in LINTERS:
        print(f"usage: lint.py {' | '.join(LINTERS)}", file=sys.stderr)
        return 2
    return LINTERS[sys.argv[1]](repo_files())


if __name__ == "__main__":
    sys.exit(main())
