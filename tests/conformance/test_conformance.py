"""devmemsim conformance: the table written from a synthetic `devmemsim
kselftest --json` run (a fake kernel tree gives the default set), reasons
matched by file, case and message, and what breaks conformance: a fail, a
skip or xfail without a reason, a file missing from the run, a stale reason,
an out-of-date table (--check). No guest boots."""

import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from clilib import cli  # noqa: E402
from devmemsim import build, conformance, kselftest  # noqa: E402

REASONS = """\
[[reason]]
file = "hw/tso.py"
case = ["tso.vxlan_tunnel*", "tso.gre_tunnel*"]
reason = "tunnel segmentation not modelled: the device has no tunnel offload"

[[reason]]
file = "stats.py"
says = "pause"
reason = "no pause frames: the link has no flow control"
"""

CASES = {
    "drivers/net:stats.py": [("stats.check_pause", "skip", "pause not supported"), ("stats.check_rx", "ok", "")],
    "drivers/net/hw:tso.py": [("tso.ipv4", "ok", ""), ("tso.vxlan_tunnel_v4", "skip", "no tunnel offload"),
                              ("tso.gre_tunnel_v6", "xfail", "")],
}


def run_json(tree: Path, cases=None, problems=None) -> dict:
    """A kselftest --json summary of the fake tree's files."""
    files = []
    for test, rows in (cases or CASES).items():
        files.append({"test": test, "status": "ok", "reason": "", "seconds": 1.0, "run_seconds": 1.0,
                      "exit_code": 0, "cases": [{"name": n, "result": r, "reason": why, "seconds": 0.1}
                                                for n, r, why in rows],
                      "problems": (problems or {}).get(test, []), "complaints": []})
    return {"kernel": "7.3.4-test", "tree": str(tree), "nodes": 2, "runner": "run_kselftest.sh",
            "cluster_seconds": 600.0, "files": files, "totals": {}}


class Conformance(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        net = self.dir / "tree" / kselftest.SELFTESTS / kselftest.NET
        (net / "hw").mkdir(parents=True)
        (net / "Makefile").write_text("TEST_PROGS := \\\n\tstats.py \\\n#\n")
        (net / "hw" / "Makefile").write_text("TEST_PROGS = tso.py\nTEST_PROGS += ethtool.sh\n")
        self.reasons = self.dir / "reasons.toml"
        self.reasons.write_text(REASONS)
        self.out = self.dir / "conformance.md"

    def tearDown(self):
        self.tmp.cleanup()

    def conform(self, run, *extra, reasons=None):
        path = self.dir / "run.json"
        path.write_text(json.dumps(run))
        return cli("conformance", "--from", str(path), "--output", str(self.out),
                   "--reasons", str(reasons or self.reasons), *extra, timeout=120)

    def test_conformant_run(self):
        p = self.conform(run_json(self.dir / "tree"))
        self.assertEqual(p.returncode, 0, p.stderr)
        text = self.out.read_text()
        self.assertIn("**Conformant**", text)
        self.assertIn("Cases: 2 ok, 0 fail, 2 skip, 1 xfail.", text)
        self.assertIn("| [hw/tso.py](#hwtsopy) | 1 | 0 | 1 | 1 |", text)
        self.assertIn("| tso.vxlan_tunnel_v4 | skip | no tunnel offload | tunnel segmentation not modelled: "
                      "the device has no tunnel offload |", text)
        self.assertIn("| stats.check_pause | skip | pause not supported | no pause frames", text)
        # A file of EXCLUDED is in the table with its reason, not run.
        self.assertIn(f"| hw/ethtool.sh | | | | | excluded: {kselftest.EXCLUDED['hw/ethtool.sh']} |", text)
        self.assertNotIn("## Open", text)

    def test_runs_in_parts(self):
        """--from twice: two runs of parts of the set make one table; a file
        run again counts as its last run."""
        first = run_json(self.dir / "tree", {"drivers/net:stats.py": [("stats.check_rx", "fail", "x")],
                                             "drivers/net/hw:tso.py": CASES["drivers/net/hw:tso.py"]})
        second = run_json(self.dir / "tree", {"drivers/net:stats.py": CASES["drivers/net:stats.py"]})
        paths = []
        for n, run in enumerate((first, second)):
            paths += ["--from", str(self.dir / f"part{n}.json")]
            (self.dir / f"part{n}.json").write_text(json.dumps(run))
        p = cli("conformance", *paths, "--output", str(self.out), "--reasons", str(self.reasons), timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        text = self.out.read_text()
        self.assertIn("Cases: 2 ok, 0 fail, 2 skip, 1 xfail.", text)
        self.assertIn("20 min of cluster time", text)

    def test_missing_reason(self):
        cases = dict(CASES)
        cases["drivers/net:stats.py"] = [("stats.check_fec", "skip", "FEC not supported")]
        p = self.conform(run_json(self.dir / "tree", cases))
        self.assertEqual(p.returncode, 1)
        self.assertIn("no reason for skip stats.py stats.check_fec (FEC not supported)", p.stderr)
        # The pause entry now matches nothing: stale.
        self.assertIn("stale reason", p.stderr)
        self.assertIn("'stats.py'", p.stderr)
        text = self.out.read_text()  # written anyway
        self.assertIn("**Not conformant**: 2 problem(s)", text)
        self.assertIn("- no reason for skip stats.py stats.check_fec", text)

    def test_stale_reason(self):
        reasons = self.dir / "more.toml"
        reasons.write_text(REASONS + '\n[[reason]]\nfile = "hw/tso.py"\ncase = "tso.ipv6"\nreason = "x y"\n')
        p = self.conform(run_json(self.dir / "tree"), reasons=reasons)
        self.assertEqual(p.returncode, 1)
        self.assertIn("stale reason", p.stderr)
        self.assertIn("case 'tso.ipv6'", p.stderr)

    def test_sometimes_reason(self):
        # A reason for a case that passes in some runs: not stale where it
        # passed, still stale where it neither passed nor matched.
        entry = '\n[[reason]]\nfile = "hw/tso.py"\ncase = "tso.ipv4"\nsometimes = true\nreason = "x y"\n'
        reasons = self.dir / "more.toml"
        reasons.write_text(REASONS + entry)
        p = self.conform(run_json(self.dir / "tree"), reasons=reasons)
        self.assertEqual(p.returncode, 0, p.stderr)
        cases = {**CASES, "drivers/net/hw:tso.py": [r for r in CASES["drivers/net/hw:tso.py"] if r[0] != "tso.ipv4"]}
        p = self.conform(run_json(self.dir / "tree", cases), reasons=reasons)
        self.assertEqual(p.returncode, 1)
        self.assertIn("stale reason", p.stderr)
        # Only a reason that names its case may say so.
        reasons.write_text(REASONS + entry.replace('case = "tso.ipv4"\n', ""))
        p = self.conform(run_json(self.dir / "tree"), reasons=reasons)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("'sometimes' is true or false, for a reason that names its case", p.stderr)

    def test_fails_and_missing_files(self):
        cases = {"drivers/net/hw:tso.py": CASES["drivers/net/hw:tso.py"] + [("tso.ipv6", "fail", "Check failed")]}
        problems = {"drivers/net/hw:tso.py": [{"kind": "kernel", "node": "node1", "message": "node1: kernel: BUG"}]}
        p = self.conform(run_json(self.dir / "tree", cases, problems))
        self.assertEqual(p.returncode, 1)
        for line in ("FAIL hw/tso.py tso.ipv6: Check failed", "FAIL hw/tso.py (kernel): node1: kernel: BUG",
                     "FAIL stats.py: not in the run"):
            self.assertIn(line, p.stderr)
        text = self.out.read_text()
        self.assertIn("| tso.ipv6 | **FAIL** | Check failed |", text)
        self.assertIn("| (kernel) (node1) | **FAIL** |", text)
        self.assertIn("| (not run) | **FAIL** | not in the run |", text)
        self.assertIn("Files: 1 run, 1 of the set not run, ", text)
        # The stats.py reason is not judged while stats.py did not run.
        self.assertNotIn("stale", p.stderr)

    def test_test_bug(self):
        """A [[test_bug]] entry explains a fail whose message it matches: still
        a fail in the counts, listed under Test bugs, not a problem; the same
        case failing otherwise is one, and an entry matching no fail is stale."""
        reasons = self.dir / "bugs.toml"
        reasons.write_text(REASONS + '\n[[test_bug]]\nfile = "hw/tso.py"\ncase = "tso.ipv6"\n'
                           'says = "too low for existing indirection table"\nreason = "the core refuses it first"\n')
        bug = ("tso.ipv6", "fail", "CmdExitFailure: ethtool -L; requested channel counts are too low for existing "
                                   "indirection table (15)")
        cases = dict(CASES, **{"drivers/net/hw:tso.py": CASES["drivers/net/hw:tso.py"] + [bug]})
        p = self.conform(run_json(self.dir / "tree", cases), reasons=reasons)
        self.assertEqual(p.returncode, 0, p.stderr)
        text = self.out.read_text()
        self.assertIn("**Conformant**: no fail but 1 the test itself causes on every NIC", text)
        self.assertIn("Cases: 2 ok, 1 fail (1 of them a test bug), 2 skip, 1 xfail.", text)
        self.assertIn("| [hw/tso.py](#hwtsopy) | 1 | 1 | 1 | 1 | test bug |", text)
        self.assertIn("| tso.ipv6 | **FAIL** (test bug) | CmdExitFailure: ethtool -L;", text)
        self.assertIn("- hw/tso.py tso.ipv6: the core refuses it first", text)
        other = ("tso.ipv6", "fail", "Check failed 1 != 2")
        cases["drivers/net/hw:tso.py"] = CASES["drivers/net/hw:tso.py"] + [other]
        p = self.conform(run_json(self.dir / "tree", cases), reasons=reasons)
        self.assertEqual(p.returncode, 1)
        self.assertIn("FAIL hw/tso.py tso.ipv6: Check failed 1 != 2", p.stderr)
        self.assertIn("stale test bug", p.stderr)
        self.assertIn("matches no fail of the run", p.stderr)
        reasons.write_text('[[test_bug]]\nfile = "hw/tso.py"\nreason = "r s t u"\n')
        p = self.conform(run_json(self.dir / "tree"), reasons=reasons)
        self.assertIn("test_bug 1: a test bug names its case and the failure it 'says'", p.stderr)

    def test_test_fixes(self):
        """The fixes a run's tests carried (kselftest's test_fixes, the shipped
        patches) are listed under Test fixes with their message, and the file
        a fix changes is marked in the Files table; a run without fixes has
        no such section."""
        fix = sorted(build.KSELFTEST_FIXES.glob("*.patch"))[0]
        subject, body = build.patch_message(fix)
        fixed = [f for f in build.patch_files(fix) if f.startswith(f"{kselftest.SELFTESTS}/{kselftest.NET}/")]
        self.assertTrue(fixed, f"{fix.name} changes no file of the set")
        test = fixed[0].removeprefix(f"{kselftest.SELFTESTS}/")
        collection, _, name = test.rpartition("/")
        cases = dict(CASES, **{f"{collection}:{name}": [("case", "ok", "")]})
        run = run_json(self.dir / "tree", cases)
        run["test_fixes"] = [{"patch": fix.name, "subject": subject}]
        p = self.conform(run)
        self.assertEqual(p.returncode, 0, p.stderr)
        text = self.out.read_text()
        self.assertIn("## Test fixes", text)
        self.assertIn(f"- **{subject}** (`guest/kselftest-fixes/{fix.name}`): {' '.join(body.split())[:60]}", text)
        rel = conformance.rel_of(f"{collection}:{name}")
        self.assertIn(f"| [{rel}](#{conformance.anchor(rel)}) | 1 | 0 | 0 | 0 | [test fix](#test-fixes) |", text)
        self.assertIn("The tests carry 1 fix(es) of their own", text)
        self.assertEqual(self.conform(run_json(self.dir / "tree")).returncode, 0)
        self.assertNotIn("Test fixes", self.out.read_text())

    def test_check(self):
        run = run_json(self.dir / "tree")
        self.assertEqual(self.conform(run).returncode, 0)
        written = self.out.read_text()
        p = self.conform(run, "--check")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.out.write_text(written.replace("1 xfail", "2 xfail"))
        p = self.conform(run, "--check")
        self.assertEqual(p.returncode, 1)
        self.assertIn("is out of date", p.stderr)
        self.assertIn("2 xfail", self.out.read_text())  # --check writes nothing

    def test_bad_inputs(self):
        bad = self.dir / "bad.toml"
        bad.write_text('[[reason]]\nfile = "a.py"\nreason = "r"\ncases = "x"\n')
        p = self.conform(run_json(self.dir / "tree"), reasons=bad)
        self.assertEqual(p.returncode, 1)
        self.assertIn("reason 1: unknown key(s) cases", p.stderr)
        p = cli("conformance", "--from", str(self.dir / "none.json"), "--output", str(self.out), timeout=120)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--from", p.stderr)

    def test_repository_reasons_load(self):
        """The shipped table parses, and every entry says something."""
        for r in conformance.load_reasons(conformance.REASONS):
            self.assertGreater(len(r.reason.split()), 3, r.where)


if __name__ == "__main__":
    unittest.main(verbosity=2)
