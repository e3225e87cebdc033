"""The CLI's answers to bad input: one line naming the problem, exit 2.
And to a node that dies under a command (exit 3, the kernel's report and the
console's path): the console watcher (console.Watch) on console files the
test writes, and `exec` on a fake node -- a process standing for its QEMU,
a console file, and dms-agent run here behind its NODE.ctl. No guest boots."""

import argparse
import collections
import contextlib
import io
import json
import os
import re
import select
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

from clilib import cli
from devmemsim import agent, build, cli as devmemsim_cli, clustercmd, console, testcmd
from devmemsim.paths import LAUNCHER
from devmemsim.errors import GuestDied


class BadInput(unittest.TestCase):
    def toml(self, text: str) -> str:
        """A TOML file holding text, removed after the test: its path."""
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
            f.write(text)
        self.addCleanup(os.unlink, f.name)
        return f.name

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
        path = self.toml("[nic]\nqueues = 4\nqueues = 8\n")
        self.assertOneLineError(cli("run", "--config", path, "--", "true"), f"{path}:3:")

    def test_unknown_config_key(self):
        self.assertOneLineError(cli("boot", "--config", self.toml("[gpu]\nmemsize = \"1G\"\n")),
                                "gpu.memsize: unknown key")

    def test_bad_override(self):
        self.assertOneLineError(cli("run", "--set", "nic.queues=100", "--", "true"),
                                "nic.queues: 100 is out of range [1, 64]")

    def test_sim_bad_override(self):
        self.assertOneLineError(cli("sim", "--set", "traffic.mode"), "--set traffic.mode: expected KEY=VALUE")
        self.assertOneLineError(cli("sim", "--set", "traffic.pace=1"), "traffic.pace: unknown key")
        self.assertOneLineError(cli("sim", "--set", "run.duration_us=0"), "run.duration_us: expected a number")

    def test_sim_output_in_a_missing_directory(self):
        self.assertOneLineError(cli("sim", "--json", "/nonexistent/x.json"),
                                "--json /nonexistent/x.json: no such directory /nonexistent")
        self.assertOneLineError(cli("sim", "--trace-file", "/nonexistent/t.log"),
                                "--trace-file /nonexistent/t.log: no such directory /nonexistent")

    def test_fidelity_bad_output(self):
        self.assertOneLineError(cli("fidelity", "--output", "/nonexistent/fidelity.md"),
                                "--output /nonexistent/fidelity.md: no such directory")

    def test_bad_node_count(self):
        self.assertOneLineError(cli("run", "--nodes", "0", "--", "true"), "--nodes 0: must be 1..16")

    def test_bad_demo_size_and_mtu(self):
        self.assertOneLineError(cli("demo", "--mib", "0"), "--mib 0: must be 1..65536")
        self.assertOneLineError(cli("demo", "--mtu", "100"), "--mtu 100: must be 1280..9000")
        # The upper bound is the NIC's, read from the hardware contract.
        self.assertOneLineError(cli("demo", "--mtu", "20000"), "--mtu 20000: must be 1280..9000 (the NIC's largest")
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
        self.assertOneLineError(cli("kselftest", "--kconfig", "/nonexistent/extra.config", "hw/devmem.py"),
                                "--kconfig /nonexistent/extra.config: no such file")

    def test_kselftest_needs_two_nodes(self):
        self.assertOneLineError(cli("kselftest", "--nodes", "1", "hw/devmem.py"), "--nodes 1")

    def test_run_without_a_command_builds_nothing(self):
        with tempfile.TemporaryDirectory() as build_dir:
            res = subprocess.run([str(LAUNCHER), "run", "--nodes", "2"], capture_output=True, text=True,
                                 env=dict(os.environ, DEVMEMSIM_BUILD=build_dir), timeout=60)
            self.assertOneLineError(res, "no command given")
            self.assertEqual(os.listdir(build_dir), [])

    def test_demo_checks_the_cluster_files_node_keys_before_building(self):
        path = self.toml('[nodes]\ncount = 2\nset = ["nic.frobnicate=1"]\n')
        self.assertOneLineError(cli("demo", "--cluster", path), "nic.frobnicate: unknown key")


class Conventions(unittest.TestCase):
    """What every Linux command line answers: its version, its usage when
    called bare, help for each command, Ctrl-C said as such."""

    def test_version(self):
        res = cli("--version")
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertRegex(res.stdout, r"^devmemsim \S+\nQEMU: Debian's qemu \S+.*\nguest kernel: linux-source-")

    def test_bare_command_prints_usage(self):
        res = cli()
        self.assertEqual(res.returncode, 2)
        self.assertIn("usage: devmemsim [-h] [--version] COMMAND ...", res.stderr)
        self.assertIn("kselftest", res.stderr)

    def test_help_command(self):
        res = cli("help", "exec")
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn("usage: devmemsim exec [-h] [--name NAME] NODE -- CMD [ARGS...]", res.stdout)
        self.assertIn("Run CMD on a node of a booted cluster.", res.stdout)
        self.assertEqual(cli("help").stdout, cli("--help").stdout)
        self.assertEqual(cli("help", "launch").stderr.strip(),
                         "devmemsim: help launch: no such command (devmemsim help lists them)")

    def test_every_command_says_what_it_does(self):
        commands = devmemsim_cli.make_parser()._subparsers._group_actions[0].choices
        self.assertIn("kselftest", commands)
        for name, parser in commands.items():
            with self.subTest(command=name):
                self.assertTrue(parser.description and parser.description.endswith("."), parser.description)

    def test_one_meaning_per_option_name(self):
        """An option string means one thing in every command that has it:
        its meaning() is the same (deprecated aliases left out)."""
        meanings = collections.defaultdict(lambda: collections.defaultdict(list))
        for option, command, action in parser_options(devmemsim_cli.make_parser()):
            meanings[option][meaning(action)].append(command)
        self.assertIn("--json", meanings)
        for option, seen in sorted(meanings.items()):
            with self.subTest(option=option):
                self.assertEqual(len(seen), 1, f"{option} has {len(seen)} meanings: " + "; ".join(
                    f"{', '.join(commands)}: {m}" for m, commands in seen.items()))

    def test_closed_stdout_ends_quietly(self):
        # As `devmemsim demo --dry-run | head -1` when head has gone: no
        # traceback, the status of a command SIGPIPE ended.
        r, w = os.pipe()
        os.close(r)
        with os.fdopen(w, "wb") as out:
            res = subprocess.run([str(LAUNCHER), "demo", "--dry-run"], stdout=out, stderr=subprocess.PIPE,
                                 text=True, timeout=60)
        self.assertEqual((res.returncode, res.stderr), (128 + signal.SIGPIPE, ""))

    def test_interrupt_is_said(self):
        err = io.StringIO()
        with mock.patch.object(clustercmd, "cmd_status", side_effect=KeyboardInterrupt), \
                contextlib.redirect_stderr(err):
            status = devmemsim_cli.main(["status"])
        self.assertEqual((status, err.getvalue()), (130, "devmemsim: interrupted\n"))


def parser_options(parser, command="devmemsim"):
    """(option string, command, action) of every option of the parser and
    its commands' parsers, but deprecated aliases (options.deprecated_alias)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from parser_options(sub, f"devmemsim {name}")
        elif not getattr(action, "deprecated", False):
            for option in action.option_strings:
                yield option, command, action


def meaning(action) -> tuple:
    """What an option means, as its parser says it: the shape of its value
    (none, one, an optional one, several; repeatable or not), the kind of
    value (its metavar; FILE and DIR are both a path), its choices, and what
    its help says it is: the words before the first '(', ':', ';' or ','."""
    shape = {0: "flag", None: "one value", "?": "an optional value"}.get(action.nargs, f"values {action.nargs}")
    if isinstance(action, argparse._AppendAction):
        shape += ", repeatable"
    kind = action.metavar
    if kind in ("FILE", "DIR") or "." in (kind or ""):
        kind = "PATH"
    gloss = re.split(r"[(:;,]", action.help or "", maxsplit=1)[0].strip().lower()
    return shape, kind, tuple(action.choices or ()), gloss


class RenamedOptions(unittest.TestCase):
    """The old spellings of renamed options work for one release and say
    once that they are deprecated; --json to stdout is JSON alone."""
    OLD = (  # old argv, the option's destination and value, the warning
        (["kselftest", "--config", "a.config", "--config", "b.config"], "kconfig", ["a.config", "b.config"],
         "devmemsim: --config for kselftest is deprecated; use --kconfig"),
        (["sim", "--trace", "t.log"], "trace_file", "t.log",
         "devmemsim: --trace for sim is deprecated; use --trace-file"),
        (["sweep", "s.toml", "--out", "d"], "out", "d", "devmemsim: --out for sweep is deprecated; use --output"),
    )

    def test_old_spellings_warn_once_and_work(self):
        for argv, dest, value, warning in self.OLD:
            with self.subTest(argv=argv):
                err = io.StringIO()
                with contextlib.redirect_stderr(err):
                    a = devmemsim_cli.make_parser().parse_args(argv)
                self.assertEqual(getattr(a, dest), value)
                self.assertEqual(err.getvalue(), warning + "\n")

    def test_old_spelling_through_the_command(self):
        res = cli("kselftest", "--config", "/nonexistent/extra.config", "hw/devmem.py")
        self.assertEqual(res.returncode, 2, res.stderr)
        self.assertEqual(res.stderr.splitlines(), ["devmemsim: --config for kselftest is deprecated; use --kconfig",
                                                   "devmemsim: --kconfig /nonexistent/extra.config: no such file"])

    def test_old_spellings_are_not_shown(self):
        for command, old in (("kselftest", "--config"), ("sim", "--trace "), ("sweep", "--out ")):
            with self.subTest(command=command):
                self.assertNotIn(old, cli(command, "--help").stdout)

    def test_json_without_file_is_stdout(self):
        a = devmemsim_cli.make_parser().parse_args(["stats", "node1", "--json"])
        self.assertEqual((a.node, a.json), ("node1", "-"))
        self.assertEqual(devmemsim_cli.make_parser().parse_args(["demo", "--json", "x.json"]).json, "x.json")

    def test_json_to_stdout_is_json_alone(self):
        """Inside options.text_to_stderr() the command's lines, its
        subprocesses' too, go to stderr; json_file("-") to stdout."""
        script = ("import subprocess\nfrom devmemsim import options\n"
                  "with options.text_to_stderr():\n"
                  "    print('table')\n"
                  "    subprocess.run(['echo', 'child'])\n"
                  "    with options.json_file('-') as f:\n"
                  "        f.write('{}\\n')\n"
                  "    print('done')\n"
                  "print('after')\n")
        res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                             env=dict(os.environ, PYTHONPATH=str(Path(devmemsim_cli.__file__).parents[1])))
        self.assertEqual((res.stdout, res.stderr), ("{}\nafter\n", "table\nchild\ndone\n"))


def private_rundir(test: unittest.TestCase) -> Path:
    """A run root of the test's own (DEVMEMSIM_RUNDIR) until it ends."""
    tmp = tempfile.TemporaryDirectory(prefix="dms-")
    test.addCleanup(tmp.cleanup)
    env = mock.patch.dict(os.environ, {"DEVMEMSIM_RUNDIR": tmp.name})
    env.start()
    test.addCleanup(env.stop)
    return Path(tmp.name)


class Status(unittest.TestCase):
    """`devmemsim status`: a table of the running clusters' nodes with the
    ssh command that reaches each; --json, the JSON it always printed."""

    def setUp(self):
        root = private_rundir(self)
        self.qemu = subprocess.Popen(["sleep", "600"])  # node0's QEMU
        self.addCleanup(self.qemu.wait)
        self.addCleanup(self.qemu.kill)
        self.dir = root / "c"
        self.dir.mkdir()
        (self.dir / "cluster.json").write_text(json.dumps({"nodes": [{"name": "node0", "nics": []},
                                                                     {"name": "node1", "nics": []}]}))
        (self.dir / "node0.pid").write_text(str(self.qemu.pid))  # node1: its QEMU exited
        (self.dir / "node0.cmdline").write_text(
            "/c/qemu/bin/qemu-system-x86_64 -name devmemsim-node0 -drive file=/b/guest/payload.img,if=none,"
            "id=payload,format=raw,readonly=on -netdev user,id=mgmt,restrict=on,hostfwd=tcp:127.0.0.1:40022-:22\n")
        (root / "stopped").mkdir()  # a cluster that no longer runs is not listed

    def status(self, *args) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(devmemsim_cli.main(["status", *args]), 0)
        return out.getvalue()

    def test_table(self):
        lines = self.status().splitlines()
        self.assertEqual([line.split()[:4] for line in lines],
                         [["CLUSTER", "NODE", "STATE", "PID"], ["c", "node0", "running", str(self.qemu.pid)],
                          ["c", "node1", "exited", "-"]])
        self.assertTrue(lines[1].endswith(
            "  ssh -i /b/guest/payload/ssh/id_ed25519 -p 40022 -o StrictHostKeyChecking=no "
            "-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR root@127.0.0.1"), lines[1])
        self.assertEqual(lines[2].split(), ["c", "node1", "exited", "-", "-"])

    def test_json_as_before(self):
        self.assertEqual(json.loads(self.status("--json")), [{"cluster": "c", "nodes": [
            {"node": "node0", "pid": self.qemu.pid, "dir": str(self.dir)},
            {"node": "node1", "pid": 0, "dir": str(self.dir)}]}])

    def test_nothing_running(self):
        self.qemu.kill()
        self.qemu.wait()
        self.assertEqual(self.status(), "no cluster is running (devmemsim boot starts one)\n")
        self.assertEqual(json.loads(self.status("--json")), [])


class DryRun(unittest.TestCase):
    """--dry-run prints the plan and each node's QEMU command line at
    once, and builds, boots and writes nothing: on a machine with an empty
    build tree and cache both stay empty, and no run directory appears."""

    def dry_run(self, *args):
        with tempfile.TemporaryDirectory() as build_dir, tempfile.TemporaryDirectory() as cache, \
                tempfile.TemporaryDirectory() as tmp:
            run_root = Path(tmp) / "run"
            env = dict(os.environ, DEVMEMSIM_BUILD=build_dir, DEVMEMSIM_CACHE=cache, DEVMEMSIM_RUNDIR=str(run_root))
            started = time.monotonic()
            res = subprocess.run([str(LAUNCHER), *args], capture_output=True, text=True, env=env, timeout=60)
            seconds = time.monotonic() - started
            self.assertEqual(res.returncode, 0, res.stderr)
            self.assertEqual((os.listdir(build_dir), os.listdir(cache), run_root.exists()), ([], [], False))
        return res, seconds

    def qemu_lines(self, res) -> list:
        return [line for line in res.stdout.splitlines() if "qemu-system-x86_64" in line]

    def test_boot_two_nodes(self):
        res, seconds = self.dry_run("boot", "--dry-run", "--nodes", "2")
        self.assertLess(seconds, 2.0)
        lines = self.qemu_lines(res)
        self.assertEqual([line.split(": ", 1)[0] for line in lines], ["node0", "node1"])
        for node, line in zip(("node0", "node1"), lines):
            argv = shlex.split(line.split(": ", 1)[1])
            self.assertTrue(argv[0].endswith("/qemu/bin/qemu-system-x86_64"), argv[0])
            self.assertEqual(argv[argv.index("-name") + 1], f"devmemsim-{node}")
            self.assertEqual(argv[argv.index("-kernel") + 1], "<bzImage: built on first boot>")
            self.assertIn("-object", argv)
        self.assertIn("node0: configs/node/default.toml; 1G RAM, 2 vCPU(s); NIC 0 on data (10.10.0.1)",
                      res.stdout)

    def test_run_demo_kselftest(self):
        for args, nodes in ((["run", "--dry-run", "--", "uname", "-r"], 1),
                            (["demo", "--dry-run", "--mib", "4"], 2),
                            (["kselftest", "--dry-run", "--nodes", "3", "hw/devmem.py"], 3)):
            with self.subTest(command=args[0]):
                res, _ = self.dry_run(*args)
                self.assertEqual(len(self.qemu_lines(res)), nodes, res.stdout)
        self.assertIn("then: uname -r on node0", self.dry_run("run", "--dry-run", "--", "uname", "-r")[0].stdout)

    def test_checks_still_come_first(self):
        res = cli("run", "--dry-run", "--nodes", "2")
        self.assertEqual((res.returncode, res.stderr.strip()),
                         (2, "devmemsim: no command given (usage: ... -- CMD [ARGS...])"))
        res = cli("demo", "--dry-run", "--mtu", "100")
        self.assertEqual(res.returncode, 2, res.stderr)


class CompletionAndManPage(unittest.TestCase):
    """Bash completion (argcomplete's protocol, answered by the launcher)
    and devmemsim(1), both from the parser, without its deprecated
    spellings."""

    def complete(self, line: str) -> list:
        """What the shell's side (register-python-argcomplete) gets for line."""
        with tempfile.NamedTemporaryFile("r") as out:
            env = dict(os.environ, _ARGCOMPLETE="1", COMP_LINE=line, COMP_POINT=str(len(line)),
                       _ARGCOMPLETE_STDOUT_FILENAME=out.name)
            res = subprocess.run([str(LAUNCHER)], env=env, capture_output=True, text=True, timeout=30)
            self.assertEqual(res.returncode, 0, res.stderr)
            return sorted(word.strip() for word in out.read().split("\013") if word.strip())

    def test_completion(self):
        self.assertEqual(self.complete("./devmemsim st"), ["stats", "status", "stop"])
        self.assertEqual(self.complete("./devmemsim kselftest --k"), ["--kconfig", "--kernel-tree", "--ktap"])
        self.assertEqual(self.complete("./devmemsim boot --accel "), ["kvm", "tcg"])
        self.assertEqual(self.complete("./devmemsim sim --tr"), ["--trace-file"])

    def test_man_page(self):
        res = subprocess.run(["/usr/bin/python3", "-m", "devmemsim.manpage", "-"], capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=str(Path(devmemsim_cli.__file__).parents[1])),
                             timeout=30)
        self.assertEqual(res.returncode, 0, res.stderr)
        page = res.stdout
        self.assertTrue(page.startswith('.TH devmemsim "1"'), page[:40])
        sections = {"devmemsim": page}
        for part in page.split(".SH OPTIONS '")[1:]:
            name, _, text = part.partition("'")
            sections[name] = text
        for option, command, action in parser_options(devmemsim_cli.make_parser()):
            if option not in ("-h", "--help"):
                with self.subTest(command=command, option=option):
                    self.assertIn(option.replace("-", "\\-"), sections[command])
        self.assertNotIn("\\-\\-config", sections["devmemsim kselftest"])  # deprecated: --kconfig
        self.assertIn(".SH EXIT STATUS\n0: done", page)
        self.assertIn("\n3: a node died while the CLI waited on it\n", page)


# Console lines as the kernel writes them (7.3: an oops and a WARN).
OOPS = """\
[   41.201811] BUG: unable to handle page fault for address: ffffc90000a3f000
[   41.202410] #PF: supervisor write access in kernel mode
[   41.202871] #PF: error_code(0x0002) - not-present page
[   41.203342] PGD 100000067 P4D 100000067 PUD 1001bf067 PMD 1045e2067 PTE 0
[   41.203989] Oops: Oops: 0002 [#1] SMP NOPTI
[   41.204351] CPU: 1 UID: 0 PID: 312 Comm: python3 Tainted: G           O        7.3.4 #1
[   41.205100] RIP: 0010:vmf_insert_pfn_prot+0x5a/0x1a0
[   41.205561] Call Trace:
[   41.205781]  <TASK>
[   41.205990]  dmsgpu_vm_fault+0x6d/0xb0 [dmsgpu]
[   41.206402]  __do_fault+0x33/0x110
[   41.206733]  do_fault+0x2c1/0x4f0
[   41.207054]  handle_mm_fault+0x7c9/0xd60
[   41.207402]  do_user_addr_fault+0x1a5/0x650
[   41.207770]  exc_page_fault+0x6b/0x150
[   41.208112]  asm_exc_page_fault+0x26/0x30
[   41.208450]  </TASK>
"""
WARN = """\
[   12.000100] ------------[ cut here ]------------
[   12.000200] dmsnic: ring 3 stopped twice
[   12.000300] WARNING: drivers/net/dmsnic/dmsnic_main.c:812 at dmsnic_stop_ring+0x41/0x90 [dmsnic], CPU#0: ip/201
"""


class TestStages(unittest.TestCase):
    """What `devmemsim test -- ARGS` builds before meson runs."""
    TESTS = {"unit-a": ["unit", "quick"], "qemu-a": ["qemu"], "guest-a": ["guest"],
             "guest-debug-a": ["guest-debug"]}

    def stage(self, *args):
        return testcmd.stage_for_tests(list(args), self.TESTS)

    def test_listing_builds_no_guest(self):
        self.assertEqual(self.stage("--list"), "model")
        self.assertEqual(self.stage("--suite", "guest-debug", "--list"), "model")

    def test_selection_builds_what_it_needs(self):
        self.assertEqual(self.stage("--suite", "quick"), "model")
        self.assertEqual(self.stage("qemu-a"), "qemu")
        self.assertEqual(self.stage("--no-suite", "guest-debug"), "guest")
        self.assertEqual(self.stage(), "guest-debug")

    def test_counts_read_from_the_setups_log(self):
        self.assertEqual(testcmd.test_log(["guest-lies"]), "testlog.json")
        self.assertEqual(testcmd.test_log(["--setup", "stress", "guest-lies"]), "testlog-stress.json")
        self.assertEqual(testcmd.test_log(["--setup=stress"]), "testlog-stress.json")

    def test_suites_selected(self):
        """What the test command builds in the background follows them."""
        self.assertEqual(testcmd.selected_suites(["guest-*"], self.TESTS), {"guest", "guest-debug"})
        self.assertEqual(testcmd.selected_suites(["--suite", "quick"], self.TESTS), {"unit", "quick"})


class BackgroundBuild(unittest.TestCase):
    """build_in_background: the jobs run in order in a child at idle
    priority; leaving the block waits for them, or stops them when the
    block failed."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)

    def test_jobs_run_in_order_at_idle_priority(self):
        out = self.dir / "jobs"

        def job(name):
            with open(out, "a") as f:
                f.write(f"{name} {os.sched_getscheduler(0) == os.SCHED_IDLE}\n")

        with build.build_in_background([("a", lambda: job("a")), ("b", lambda: job("b"))]):
            pass
        self.assertEqual(out.read_text(), "a True\nb True\n")

    def test_a_failed_block_stops_the_jobs(self):
        started = self.dir / "started"
        finished = self.dir / "finished"

        def job():
            started.touch()
            subprocess.run(["sleep", "30"])  # the build's make, in the child's process group
            finished.touch()

        t0 = time.monotonic()
        with self.assertRaises(KeyboardInterrupt):
            with build.build_in_background([("slow", job)]):
                while not started.exists():
                    time.sleep(0.05)
                raise KeyboardInterrupt
        self.assertLess(time.monotonic() - t0, 10)
        self.assertFalse(finished.exists())


class ConsoleWatch(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.path = Path(tmp.name) / "node0.console"
        self.path.write_text("[    0.000000] Linux version 7.3.4\n")

    def write(self, text: str):
        with open(self.path, "a") as f:
            f.write(text)

    def test_reads_only_what_came_after_its_start(self):
        self.write(OOPS)  # before the watch: another command's
        w = console.Watch("node0", self.path)
        self.assertEqual(w.poll(now=10.0, final=True), [])
        self.write(WARN + "[   12.1] dmsnic 0000:03:00.0: ring 3 restarted\n" * 20)
        reports = w.poll(now=11.0)
        self.assertEqual(w.offset, self.path.stat().st_size)
        self.assertEqual(len(reports), 1)
        self.assertFalse(reports[0].fatal)
        # From its "cut here" on (the WARN's message is above "WARNING:").
        self.assertIn("cut here", reports[0].lines[0])
        self.assertEqual(len(reports[0].lines), console.SHOWN_LINES)
        self.assertTrue(reports[0].headline.startswith("WARNING: drivers/net/dmsnic/dmsnic_main.c:812"))
        self.assertEqual(w.poll(now=20.0), [])

    def test_a_report_is_whole_when_the_console_pauses(self):
        w = console.Watch("node0", self.path)
        self.write(OOPS[:OOPS.index("[   41.204351]")])  # 5 lines: more may come
        self.assertEqual(w.poll(now=100.0), [])
        self.assertEqual(w.poll(now=100.0 + console.SETTLE / 2), [])
        reports = w.poll(now=100.0 + console.SETTLE)
        self.assertEqual(len(reports), 1)
        self.assertTrue(reports[0].fatal)
        self.assertEqual(reports[0].headline, "BUG: unable to handle page fault for address: ffffc90000a3f000")
        self.assertEqual(len(reports[0].lines), 5)

    def test_a_line_written_in_two_parts_is_read_whole(self):
        w = console.Watch("node0", self.path)
        self.write("[   41.201811] BU")
        self.assertEqual(w.poll(now=1.0, final=True), [])
        self.write("G: kernel NULL pointer dereference, address: 0000000000000008\n")
        reports = w.poll(now=2.0, final=True)
        self.assertEqual([r.headline for r in reports], ["BUG: kernel NULL pointer dereference, address: "
                                                         "0000000000000008"])

    def test_a_gone_nodes_unfinished_last_line_counts(self):
        w = console.Watch("node0", self.path)
        self.write("[   50.1] sysrq: Trigger a crash\n[   50.2] Kernel panic - not syncing: sysrq triggered crash")
        self.assertEqual(w.poll(now=1.0, final=True), [])
        reports = w.end()
        self.assertEqual(len(reports), 1)
        self.assertTrue(reports[0].fatal)
        self.assertIn(str(self.path), reports[0].text())

    def test_which_reports_end_a_wait(self):
        for line in ("BUG: KASAN: slab-use-after-free in dmsgpu_release+0x1c/0x80",
                     "Oops: general protection fault, probably for non-canonical address 0xdead: 0000 [#1]",
                     "kernel BUG at mm/memory.c:2391!",
                     "Kernel panic - not syncing: Fatal exception",
                     "rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
                     "INFO: task ncdevmem:301 blocked for more than 122 seconds."):
            self.assertTrue(console.is_fatal(line), line)
        for line in ("WARNING: net/core/devmem.c:205 at net_devmem_bind_dmabuf+0x2c/0x5c0, CPU#0: ncdevmem/169",
                     "WARNING: possible circular locking dependency detected",
                     "kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)",
                     "dmsnic 0000:03:00.0: NETDEV WATCHDOG: eth1 (dmsnic): transmit queue 0 timed out",
                     "dmsgpu 0000:04:00.0: devmemsim GPU v1.3: 256 MiB device memory"):
            self.assertFalse(console.is_fatal(line), line)


AGENT = Path(__file__).resolve().parents[2] / "guest" / "tools" / "dms-agent"


class FakeNode:
    """node0 of cluster "c" under run_dir, without QEMU or guest: a sleep
    stands for its QEMU (node0.pid), the test writes its console, and
    dms-agent runs here on its test transport behind node0.ctl, where a
    relay stands for QEMU's chardev (a host that leaves hangs the agent up)."""

    def __init__(self, run_dir: Path):
        self.dir = run_dir / "c"
        self.dir.mkdir(parents=True)
        (self.dir / "cluster.json").write_text(json.dumps({"nodes": [{"name": "node0", "nics": []}]}))
        self.console = self.dir / "node0.console"
        self.console.write_text("[    0.000000] Linux version 7.3.4\n")
        self.qemu = subprocess.Popen(["sleep", "600"])
        (self.dir / "node0.pid").write_text(str(self.qemu.pid))
        self.host_side, self.guest_side = (self.listen(self.dir / name) for name in ("node0.ctl", "guest.sock"))
        threading.Thread(target=self.relay, daemon=True).start()
        self.agent = subprocess.Popen([sys.executable, str(AGENT), "--port", f"unix:{self.dir / 'guest.sock'}"],
                                      stderr=subprocess.DEVNULL)

    @staticmethod
    def listen(path: Path) -> socket.socket:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(str(path))
        s.listen(1)
        return s

    def relay(self):
        while True:
            try:
                guest, host = self.guest_side.accept()[0], self.host_side.accept()[0]
            except OSError:
                return
            with guest, host:
                ends = {guest: host, host: guest}
                while all(s.fileno() >= 0 for s in ends):
                    ready, _, _ = select.select(list(ends), [], [], 1.0)
                    data = [(s, s.recv(65536)) for s in ready]
                    if any(not d for _, d in data):
                        break
                    for s, d in data:
                        ends[s].sendall(d)

    def write(self, text: str, after: float = 0.5):
        """Append text to the console after a while (the command runs)."""
        def append():
            with open(self.console, "a") as f:
                f.write(text)
        threading.Timer(after, append).start()

    def close(self):
        for p in (self.agent, self.qemu):
            p.kill()
            p.wait()
        self.host_side.close()
        self.guest_side.close()


class DyingNode(unittest.TestCase):
    """`devmemsim exec` on a node that dies under its command: exit 3
    within seconds, with the report and the console's path."""

    def setUp(self):
        self.node = FakeNode(private_rundir(self))
        self.addCleanup(self.node.close)

    def exec(self, *argv):
        """(exit status, stderr, seconds) of `devmemsim exec node0 --name c -- ARGV`."""
        out, err = (io.TextIOWrapper(io.BytesIO(), write_through=True) for _ in range(2))
        started = time.monotonic()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = devmemsim_cli.main(["exec", "node0", "--name", "c", "--", *argv])
        return status, err.buffer.getvalue().decode(), time.monotonic() - started

    def test_an_oops_ends_a_command_that_hangs(self):
        self.node.write(OOPS)
        status, err, seconds = self.exec("sleep", "60")
        self.assertEqual(status, GuestDied.status, err)
        self.assertLess(seconds, 10)
        self.assertIn("devmemsim: node0 died: its kernel reported: BUG: unable to handle page fault", err)
        self.assertIn(f"console {self.node.console}:", err)
        self.assertIn("dmsgpu_vm_fault+0x6d/0xb0 [dmsgpu]", err)  # the report's lines
        self.assertNotIn("asm_exc_page_fault", err)  # its first SHOWN_LINES only

    def test_a_warning_is_shown_and_the_command_goes_on(self):
        self.node.write(WARN)
        status, err, _ = self.exec("sh", "-c", "sleep 3; exit 7")
        self.assertEqual(status, 7, err)
        self.assertIn("devmemsim: node0: kernel: WARNING: drivers/net/dmsnic/dmsnic_main.c:812", err)
        self.assertIn("dmsnic: ring 3 stopped twice", err)

    def test_what_came_before_the_command_is_not_its(self):
        with open(self.node.console, "a") as f:
            f.write(OOPS)
        status, err, _ = self.exec("true")
        self.assertEqual((status, err), (0, ""))

    def test_qemu_exit_ends_the_command(self):
        threading.Timer(0.5, self.node.qemu.kill).start()
        status, err, seconds = self.exec("sleep", "60")
        self.assertEqual(status, GuestDied.status, err)
        self.assertLess(seconds, 10)
        self.assertIn("devmemsim: node0 died: its QEMU exited", err)
        self.assertIn("Linux version 7.3.4", err)  # the console's last lines

    def test_a_silent_agent_ends_the_command(self):
        threading.Timer(0.5, self.node.agent.send_signal, [signal.SIGSTOP]).start()
        with mock.patch.object(agent, "PING_AFTER", 0.5), mock.patch.object(agent, "SILENT_LIMIT", 2.0):
            status, err, seconds = self.exec("sleep", "60")
        self.assertEqual(status, GuestDied.status, err)
        self.assertLess(seconds, 10)
        self.assertIn("devmemsim: node0 died: its agent answered nothing for 2 s", err)

    def test_a_quiet_command_is_no_silent_agent(self):
        # The agent answers the pings while the command runs.
        with mock.patch.object(agent, "PING_AFTER", 0.5), mock.patch.object(agent, "SILENT_LIMIT", 2.0):
            status, err, _ = self.exec("sleep", "4")
        self.assertEqual((status, err), (0, ""))


if __name__ == "__main__":
    unittest.main(verbosity=2)
