"""`devmemsim kselftest` end to end, run as users run it (the command line):

  - PinnedKernel: the pinned kernel's drivers/net/hw/devmem.py on two nodes: exit
    0, its 5 cases ok, streamed as they finish, a summary table, and the
    same results in the KTAP (nested under the file), JUnit and JSON files.
  - SecondTree: a second kernel tree, a hardlinked copy (cp -al) of the pinned
    source at a stable path in the cache (CACHE/kselftest-test-tree/linux, so
    that a rerun builds incrementally) whose net/core/devmem.c is changed on
    the bind path, in turn: a pr_info_once marker (exit 0, the marker on
    node0's console: that tree's kernel ran), a WARN_ONCE (exit 1, the report
    in the output, the JUnit failure and the JSON; the one-file rebuild is
    timed) and a syntax error (exit 125 naming the build failure). The file
    is restored at the end. The tree is built with one user fragment,
    kselftest-tree.config (--kconfig: no DWARF, so no BTF, which devmem.py
    does not need), and the JSON lists the BTF it turned off as missing.

The copy (devmemsim.ktree.test_tree()) shares its files' inodes with the
pinned source: a file of it is only ever replaced (new file, renamed over
the old one), never written in place. Its first build is a full kernel
build (about a quarter cheaper without DWARF), which `./devmemsim test`
runs in the background while the suites before this one run; later runs
rebuild the changed file only."""

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from devmemsim.build import KSELFTEST_FIXES, TEST_TREE_FRAGMENT, linux_source  # noqa: E402
from devmemsim.ktree import test_tree, tree_lock  # noqa: E402
from devmemsim.paths import LAUNCHER  # noqa: E402

DEVMEM_CASES = ["check_rx", "check_tx", "check_tx_chunks", "check_rx_hds", "check_rx_large_niov"]
TEST = "hw/devmem.py"
JSON_TEST = "drivers/net/hw:devmem.py"  # how the JSON summary names it
CHANGED = "net/core/devmem.c"
MARKER = "devmemsim-kselftest-tree: bind in the test tree"
WARNING = "devmemsim-kselftest-tree: forced warning"
# What the copy's net_devmem_bind_dmabuf() runs first, per step.
STATEMENTS = {
    "marker": f'pr_info_once("{MARKER}\\n");',
    "warn": f'WARN_ONCE(1, "{WARNING}\\n");',
    "broken": "devmemsim_kselftest_tree_broken(;",
}
BUILD_TIMEOUT = 2400  # a fresh build of the copy, then the run


class Run:
    """A finished `devmemsim kselftest` run: returncode, stdout, stderr,
    lines (stdout's lines with the second each arrived, from the start),
    seconds (wall time)."""

    def __init__(self, args, timeout):
        start = time.monotonic()
        with tempfile.TemporaryFile("w+") as err:
            with subprocess.Popen([str(LAUNCHER), "kselftest", *args], text=True,
                                  stdout=subprocess.PIPE, stderr=err) as proc:
                timer = threading.Timer(timeout, proc.kill)
                timer.start()
                self.lines = []
                for line in proc.stdout:
                    self.lines.append((time.monotonic() - start, line.rstrip("\n")))
                    print(line, end="", flush=True)  # the meson log shows the run as it goes
                self.returncode = proc.wait()
                timer.cancel()
            err.seek(0)
            self.stderr = err.read()
        self.seconds = time.monotonic() - start
        self.stdout = "\n".join(line for _, line in self.lines)
        print(self.stderr, end="", file=sys.stderr, flush=True)
        print(f"# kselftest {' '.join(args)}: exit {self.returncode} after {self.seconds:.1f} s", flush=True)
        if timer.finished.is_set() and self.returncode < 0:
            raise AssertionError(f"kselftest {' '.join(args)} killed after {timeout} s")


# A KTAP result line, at any depth: nested lines are indented by four
# spaces (KTAP) or prefixed "# " (kselftest's runner) per level.
KTAP_RESULT = re.compile(r"^((?:    |# )*)(ok|not ok) (\d+)(?: -)? ?([^#]*?)\s*(?:#\s*(.*))?$")


def ktap_results(text):
    """The top-level results of a KTAP document, each a dict of name, ok,
    directive and children (the results nested under it, the same way)."""
    pending = {}  # depth -> results at that depth not yet claimed by a parent
    for line in text.splitlines():
        m = KTAP_RESULT.match(line)
        if not m:
            continue
        depth = len(re.findall(r"    |# ", m[1]))
        pending.setdefault(depth, []).append({
            "name": m[4], "ok": m[2] == "ok", "directive": m[5] or "",
            "children": pending.pop(depth + 1, []),
        })
    return pending.get(0, [])


def case_name(name):
    """check_rx from devmem.check_rx (ksft.py's case names), or as given."""
    return name.rsplit(".", 1)[-1]


def json_file(doc):
    """The JSON summary's entry for devmem.py."""
    files = [f for f in doc["files"] if f["test"] == JSON_TEST]
    if len(files) != 1:
        raise AssertionError(f"{JSON_TEST}: {len(files)} entries in the JSON summary: {doc['files']}")
    return files[0]


class PinnedKernel(unittest.TestCase):
    """The pinned kernel's devmem.py, all three output files at once."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="dms-kselftest-")
        d = Path(cls.tmp.name)
        cls.ktap, cls.junit, cls.json = d / "run.ktap", d / "run.xml", d / "run.json"
        cls.result = Run([TEST, "--ktap", str(cls.ktap), "--junit", str(cls.junit), "--json", str(cls.json)],
                      timeout=BUILD_TIMEOUT)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_exit_status(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)

    def test_ktap_has_the_cases_nested_under_the_file(self):
        top = ktap_results(self.ktap.read_text())
        files = [r for r in top if r["name"].endswith("devmem.py")]
        self.assertEqual(len(files), 1, top)
        self.assertTrue(files[0]["ok"], files[0])
        cases = {case_name(c["name"]): c for c in files[0]["children"]}
        self.assertEqual(sorted(cases), sorted(DEVMEM_CASES))
        for name, c in cases.items():
            self.assertTrue(c["ok"] and not c["directive"], f"{name}: {c}")

    def test_junit_parses_with_five_passed_cases(self):
        root = ET.parse(self.junit).getroot()
        cases = list(root.iter("testcase"))
        self.assertEqual(sorted(case_name(c.get("name")) for c in cases), sorted(DEVMEM_CASES))
        for c in cases:
            self.assertEqual([e.tag for e in c if e.tag in ("failure", "error", "skipped")], [], c.get("name"))
        props = {p.get("name"): p.get("value") for p in root.iter("property")}
        self.assertEqual(props.get("test_fixes"), " ".join(sorted(p.name for p in KSELFTEST_FIXES.glob("*.patch"))))

    def test_json_agrees(self):
        doc = json.loads(self.json.read_text())
        report_build(doc, self.result)
        f = json_file(doc)
        self.assertEqual(f["status"], "ok", f)
        self.assertEqual({case_name(c["name"]): c["result"] for c in f["cases"]},
                         {name: "ok" for name in DEVMEM_CASES})
        # The pinned kernel's tests carry every fix in guest/kselftest-fixes.
        self.assertEqual([fix["patch"] for fix in doc["test_fixes"]],
                         sorted(p.name for p in KSELFTEST_FIXES.glob("*.patch")))
        self.assertTrue(all(fix["subject"] for fix in doc["test_fixes"]), doc["test_fixes"])

    def test_cases_streamed_then_summary(self):
        """Every case shows up on stdout as it finishes, well before the
        end, and the run closes with a summary table naming them all."""
        out = self.result.lines
        seen = {name: [i for i, (_, line) in enumerate(out) if re.search(rf"\b{name}\b", line)]
                for name in DEVMEM_CASES}
        self.assertTrue(all(seen.values()), f"cases not on stdout: {seen}")
        first = out[seen["check_rx"][0]][0]
        self.assertLess(first, out[-1][0] - 1, "check_rx printed only at the end")
        all_ran = max(lines[0] for lines in seen.values())
        for name, lines in seen.items():
            self.assertGreater(lines[-1], all_ran, f"{name} missing from the summary after the last case")


def replace_file(path, text):
    """Replace path by a new file holding text. Never written in place: the
    copy's files are hardlinks of the pinned source's."""
    tmp = path.with_name(path.name + ".devmemsim-new")
    tmp.write_text(text)
    os.replace(tmp, path)


def with_statement(pristine, statement):
    """devmem.c with statement first in net_devmem_bind_dmabuf()'s body
    (before its first check)."""
    fn = pristine.index("\nnet_devmem_bind_dmabuf(")
    at = pristine.index("\n\tif (!dma_dev) {", fn)
    return pristine[:at] + f"\n\t{statement}" + pristine[at:]


class SecondTree(unittest.TestCase):
    """kselftest --kernel-tree on the copy, its devmem.c changed per step (the
    steps run in order; each writes its own change)."""

    @classmethod
    def setUpClass(cls):
        cls.pristine = (linux_source() / CHANGED).read_text()
        cls.copy = test_tree().resolve()
        cls.tmp = tempfile.TemporaryDirectory(prefix="dms-kselftest-tree-")

    @classmethod
    def tearDownClass(cls):
        with tree_lock(cls.copy):
            replace_file(cls.copy / CHANGED, cls.pristine)
        cls.tmp.cleanup()

    def kselftest(self, step, *outputs):
        """Run devmem.py on the copy with step's change; the Run and the
        paths of the outputs asked for (e.g. "json", "junit")."""
        # Not while the test command's background build compiles the copy:
        # a devmem.o compiled from the old text but newer than the new
        # file would never be rebuilt.
        with tree_lock(self.copy):
            replace_file(self.copy / CHANGED, with_statement(self.pristine, STATEMENTS[step]))
        paths = {kind: Path(self.tmp.name) / f"{step}.{kind}" for kind in outputs}
        args = ["--kernel-tree", str(self.copy), "--kconfig", str(TEST_TREE_FRAGMENT), TEST]
        for kind, path in paths.items():
            args += [f"--{kind}", str(path)]
        return Run(args, timeout=BUILD_TIMEOUT), paths

    def test_1_the_trees_kernel_runs(self):
        run, out = self.kselftest("marker", "json")
        self.assertEqual(run.returncode, 0, run.stderr)
        doc = json.loads(out["json"].read_text())
        report_build(doc, run)
        self.assertEqual(Path(doc["tree"]).resolve(), self.copy)
        self.assertEqual(doc["test_fixes"], [])  # an own tree's tests run as the tree has them
        self.assertIn(MARKER, node_console(doc, "node0"))
        # The fragment applied: the selftests' wish for BTF is reported unmet.
        self.assertTrue(any(line.startswith("CONFIG_DEBUG_INFO_BTF:") for line in doc["config_missing"]),
                        doc["config_missing"])

    def test_2_warn_fails_the_file(self):
        run, out = self.kselftest("warn", "json", "junit")
        self.assertEqual(run.returncode, 1, run.stderr)
        report_build(json.loads(out["json"].read_text()), run)
        # The report: where the WARN is, and the WARN's own message.
        self.assertRegex(run.stdout, rf"WARNING: {re.escape(CHANGED)}:\d+")
        self.assertIn(WARNING, run.stdout)
        failures = [e.text or "" for e in ET.parse(out["junit"]).getroot().iter("failure")]
        self.assertTrue(any(WARNING in text for text in failures), failures)
        f = json_file(json.loads(out["json"].read_text()))
        self.assertEqual(f["status"], "fail", f)
        self.assertIn(WARNING, json.dumps(f))

    def test_3_broken_tree_exits_125(self):
        run, _ = self.kselftest("broken")
        self.assertEqual(run.returncode, 125, run.stderr)
        # Which tree did not build, and the compiler's error in the changed file.
        self.assertRegex(run.stderr, rf"{re.escape(str(self.copy))}.*\bbuild")
        self.assertRegex(run.stderr, rf"{re.escape(CHANGED)}:\d+:\d+: error:")


def report_build(doc, run):
    """Print what the build steps and the run took (the meson log keeps it)."""
    steps = ", ".join(f"{k} {v:.1f} s" for k, v in doc["build_seconds"].items())
    files = ", ".join(f"{f['test']} {f['seconds']:.1f} s" for f in doc["files"])
    print(f"# {doc['kernel']} from {doc['tree']}: build {steps}; boot to first test "
          f"{doc['boot_to_first_test_seconds']:.1f} s; {files}; whole command {run.seconds:.1f} s", flush=True)


def node_console(doc, node):
    """A node's console log of the run, as the JSON summary names it."""
    return Path(doc["consoles"][node]).read_text(errors="replace")


if __name__ == "__main__":
    unittest.main(verbosity=2)
