"""devmemsim kselftest stopped by SIGTERM or SIGINT in the middle of a file:
the nodes are powered off (the session closed), the files that ran and the
one interrupted are in the JSON summary, and the exit status is 128 + the
signal. The cluster is a stand-in (no guest boots): the signal handling and
the clean-up are kselftest.run's own."""

import json
import signal
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[2] / "tools"

# Runs kselftest.run with a session whose second file blocks, then exits as
# the CLI does (cli.main: a KeyboardInterrupt's status, else 130).
CHILD = textwrap.dedent("""\
    import sys, time
    from types import SimpleNamespace
    sys.path.insert(0, sys.argv[1])
    from devmemsim import kselftest, ktap

    class Session:
        def __init__(self, art, plan, guest_root, keep):
            self.boots, self.dead, self.runner, self.current, self.booted = 0, False, True, None, None

        def node_names(self):
            return ["node0", "node1"]

        def plan_for(self, machine=None):
            return None

        def boot(self, plan=None):
            return []

        def run_file(self, tf, on_case):
            if tf.rel == "b.py":
                print("RUNNING", flush=True)
                time.sleep(120)
            return ktap.FileResult(tf.test, status="ok", cases=[ktap.Case(tf.name + ".case", "ok")])

        def close(self):
            open(sys.argv[3], "w").write("closed")

    kselftest.runner.Session = Session  # the run's own name for it
    kbuild = SimpleNamespace(artifacts=SimpleNamespace(kernel_version="7.3.4-test"), tree="tree",
                             guest_root="/g", config_missing=[], helpers_missing={}, test_fixes=[], seconds={})
    files = [kselftest.TestFile(rel, 45) for rel in ("a.py", "b.py", "c.py")]
    try:
        sys.exit(kselftest.run(kbuild, files, kselftest.cluster_plan("", 2), kselftest.Outputs(json=sys.argv[2])))
    except KeyboardInterrupt as e:
        print(f"devmemsim: {e}", file=sys.stderr)
        sys.exit(getattr(e, "status", 130))
    """)


class Stop(unittest.TestCase):
    def stop_with(self, sig):
        with tempfile.TemporaryDirectory() as d:
            out, closed = Path(d) / "run.json", Path(d) / "closed"
            p = subprocess.Popen([sys.executable, "-c", CHILD, str(TOOLS), str(out), str(closed)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for line in p.stdout:
                if line.strip() == "RUNNING":
                    break
            p.send_signal(sig)
            _, err = p.communicate(timeout=60)
            self.assertEqual(p.returncode, 128 + sig, err)
            self.assertIn(f"stopped by {signal.Signals(sig).name}", err)
            self.assertTrue(closed.exists(), "the session (the nodes) was not closed")
            run = json.loads(out.read_text())
            files = {f["test"]: f for f in run["files"]}
            self.assertEqual(list(files), ["drivers/net:a.py", "drivers/net:b.py"])
            self.assertEqual(files["drivers/net:a.py"]["status"], "ok")
            self.assertEqual(files["drivers/net:b.py"]["status"], "fail")
            self.assertIn(f"stopped by {signal.Signals(sig).name} while it ran",
                          files["drivers/net:b.py"]["problems"][0]["message"])

    def test_sigterm(self):
        self.stop_with(signal.SIGTERM)

    def test_sigint(self):
        self.stop_with(signal.SIGINT)


if __name__ == "__main__":
    unittest.main(verbosity=2)
