"""The CLI's answers to bad input: one line naming the problem, exit 2."""

import os
import tempfile
import unittest

from clilib import cli


class BadInput(unittest.TestCase):
    def assertOneLineError(self, res, needle):
        self.assertEqual(res.returncode, 2, res.stderr)
        # Progress lines of a concurrent build are not part of the answer.
        lines = [ln for ln in res.stderr.strip().splitlines()
                 if not ln.startswith("devmemsim: waiting for another devmemsim build")]
        self.assertEqual(len(lines), 1, res.stderr)
        self.assertIn(needle, lines[0])

    def test_unknown_option(self):
        self.assertOneLineError(cli("run", "--frobnicate", "--", "true"), "unrecognized arguments: --frobnicate")

    def test_unknown_command(self):
        self.assertOneLineError(cli("launch"), "invalid choice: 'launch'")

    def test_missing_command_after_dashes(self):
        self.assertOneLineError(cli("run", "--"), "no command given")

    def test_missing_config_file(self):
        self.assertOneLineError(cli("run", "--config", "/nonexistent/node.toml", "--", "true"),
                                "--config /nonexistent/node.toml: no such file")

    def test_malformed_config_names_file_and_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
            f.write("[nic]\nqueues = 4\nqueues = 8\n")
        try:
            self.assertOneLineError(cli("run", "--config", f.name, "--", "true"), f"{f.name}:3:")
        finally:
            os.unlink(f.name)

    def test_unknown_config_key(self):
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
            f.write("[gpu]\nmemsize = \"1G\"\n")
        try:
            self.assertOneLineError(cli("boot", "--config", f.name), "gpu.memsize: unknown key")
        finally:
            os.unlink(f.name)

    def test_bad_override(self):
        self.assertOneLineError(cli("run", "--set", "nic.queues=100", "--", "true"),
                                "nic.queues: 100 is out of range [1, 64]")

    def test_sim_bad_override(self):
        self.assertOneLineError(cli("sim", "--set", "traffic.mode"), "--set traffic.mode: expected KEY=VALUE")
        self.assertOneLineError(cli("sim", "--set", "traffic.pace=1"), "traffic.pace: unknown key")
        self.assertOneLineError(cli("sim", "--set", "run.duration_us=0"), "run.duration_us: expected a number")

    def test_fidelity_bad_output(self):
        self.assertOneLineError(cli("fidelity", "--output", "/nonexistent/fidelity.md"),
                                "--output /nonexistent/fidelity.md: no such directory")

    def test_bad_node_count(self):
        self.assertOneLineError(cli("run", "--nodes", "0", "--", "true"), "--nodes 0: must be 1..16")

    def test_bad_demo_size_and_mtu(self):
        self.assertOneLineError(cli("demo", "--mib", "0"), "--mib 0: must be 1..65536")
        self.assertOneLineError(cli("demo", "--mtu", "100"), "--mtu 100: must be at least 1280")
        self.assertOneLineError(cli("demo", "--mode", "all"), "--mode all: expected both, devmem, bounce")

    def test_exec_without_cluster(self):
        self.assertOneLineError(cli("exec", "node0", "--name", "no-such-cluster", "--", "true"),
                                "no running node 'node0' in cluster 'no-such-cluster'")

    def test_stop_without_cluster(self):
        self.assertOneLineError(cli("stop", "--name", "no-such-cluster"), "is not running")

    # kselftest checks its command line before building anything.
    def test_kselftest_unknown_test(self):
        self.assertOneLineError(cli("kselftest", "hw/no-such-test.py"), "hw/no-such-test.py")

    def test_kselftest_tree_that_is_no_kernel_tree(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertOneLineError(cli("kselftest", "--kernel-tree", d, "hw/devmem.py"), d)

    def test_kselftest_missing_config_fragment(self):
        self.assertOneLineError(cli("kselftest", "--config", "/nonexistent/extra.config", "hw/devmem.py"),
                                "/nonexistent/extra.config")

    def test_kselftest_needs_two_nodes(self):
        self.assertOneLineError(cli("kselftest", "--nodes", "1", "hw/devmem.py"), "--nodes 1")


if __name__ == "__main__":
    unittest.main(verbosity=2)
