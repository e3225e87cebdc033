"""Boot a node with the real kernel and check what the guest sees: both
devices enumerate under one PCIe switch with our IDs and BAR sizes, both
drivers probe, and the CLI carries the command's exit status back -- or,
when the node dies under the command, ends it within seconds (exit 3) with
the kernel's report and the console's path."""

import re
import shutil
import subprocess
import tempfile
import time
import tomllib
import unittest

from guestlib import boot, check_alive, cli, main, stop
from devmemsim.addressing import DATA
from devmemsim.errors import GuestDied
from devmemsim.paths import LAUNCHER, ROOT, run_root

# The NIC's queue pairs in the default node configuration (the driver
# reports the device's count, whatever it uses at first).
QUEUES = tomllib.loads((ROOT / "configs" / "node" / "default.toml").read_text())["nic"]["queues"]

# Prints sections the host parses; runs in the guest.
PROBE = r"""
echo "@uname"; uname -r
for d in /sys/bus/pci/devices/*; do
  echo "@dev $(basename $d) $(cat $d/vendor) $(cat $d/device) $(readlink -f $d)"
done
echo "@lspci"; lspci -vv -d 1af4:
echo "@dmesg"; dmesg | grep -E 'dmsnic|dmsgpu'
"""


def run(*args, timeout=900):
    return check_alive(cli("run", *args, timeout=timeout))


def sections(out):
    cur, res = None, {}
    for line in out.splitlines():
        if line.startswith("@uname") or line.startswith("@lspci") or line.startswith("@dmesg"):
            cur = line[1:]
            res[cur] = []
        elif line.startswith("@dev "):
            res.setdefault("dev", []).append(line.split()[1:])
        elif cur:
            res[cur].append(line)
    return res


def regions(lspci_text, bdf):
    """{region number: (kind, size)} for one device from lspci -vv."""
    block = re.search(rf"^{re.escape(bdf[5:])} .*?(?=^\S|\Z)", lspci_text, re.M | re.S)
    assert block, f"{bdf} missing from lspci output"
    out = {}
    for m in re.finditer(r"Region (\d+): Memory at \S+ \(([^)]*)\) \[size=(\w+)\]", block.group(0)):
        out[int(m.group(1))] = (m.group(2), m.group(3))
    return out


class Smoke(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.res = run("--", PROBE)
        cls.s = sections(cls.res.stdout)

    def test_exit_status_zero(self):
        self.assertEqual(self.res.returncode, 0, self.res.stderr)

    def test_kernel_is_7_3(self):
        self.assertRegex(self.s["uname"][0], r"^7\.3\.\d+")

    def devices(self):
        return {(v, d): (bdf, path) for bdf, v, d, path in self.s["dev"]}

    def test_devices_under_one_switch(self):
        devs = self.devices()
        nic = devs[("0x1af4", "0x10f0")]
        gpu = devs[("0x1af4", "0x10f1")]
        by_bdf = {bdf: (v, d) for bdf, v, d, _ in self.s["dev"]}
        # .../<root port>/<switch upstream>/<downstream>/<endpoint>
        nic_path = nic[1].split("/")
        gpu_path = gpu[1].split("/")
        self.assertEqual(nic_path[:-2], gpu_path[:-2], "NIC and GPU share the switch upstream port")
        self.assertNotEqual(nic_path[-2], gpu_path[-2], "NIC and GPU sit on different downstream ports")
        self.assertEqual(by_bdf[nic_path[-2]], ("0x104c", "0x8233"))  # xio3130 downstream
        self.assertEqual(by_bdf[gpu_path[-2]], ("0x104c", "0x8233"))
        self.assertEqual(by_bdf[nic_path[-3]], ("0x104c", "0x8232"))  # x3130 upstream

    def test_bar_sizes(self):
        lspci = "\n".join(self.s["lspci"])
        devs = self.devices()
        nic = regions(lspci, devs[("0x1af4", "0x10f0")][0])
        gpu = regions(lspci, devs[("0x1af4", "0x10f1")][0])
        self.assertEqual(nic[0], ("64-bit, non-prefetchable", "64K"))
        self.assertIn(4, nic)  # MSI-X table and PBA
        self.assertEqual(gpu[0], ("64-bit, non-prefetchable", "64K"))
        self.assertEqual(gpu[2], ("64-bit, prefetchable", "256M"))
        self.assertIn(4, gpu)

    def test_drivers_probe(self):
        dmesg = "\n".join(self.s["dmesg"])
        self.assertRegex(dmesg, rf"dmsnic \S+: devmemsim NIC v1\.\d+: {QUEUES} queue pairs, MAC {DATA.mac(0)}")
        self.assertRegex(dmesg, r"dmsgpu \S+: devmemsim GPU v1\.\d+: 256 MiB device memory")


class ExitStatus(unittest.TestCase):
    def test_false_fails(self):
        res = run("--", "false")
        self.assertNotEqual(res.returncode, 0)

    def test_status_and_config_override(self):
        # The GPU BAR follows the configuration; the status comes back as is.
        res = run("--set", "gpu.mem_size=64M", "--set", "nic.queues=2", "--",
                  "lspci -vv -d 1af4:10f1 | grep -q 'Region 2.*size=64M' && "
                  "dmesg | grep -q 'dmsnic.*2 queue pairs' && exit 7")
        self.assertEqual(res.returncode, 7, res.stdout + res.stderr)


class ThreeNodes(unittest.TestCase):
    def test_nodes_share_one_switched_data_network(self):
        # More than two nodes meet on a VDE switch (cluster.py).
        peers = " && ".join(f"ping -c1 -W5 {DATA.addr(i)}" for i in (1, 2))
        res = run("--nodes", "3", "--", peers)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)


class QemuFailure(unittest.TestCase):
    def test_qemu_error_is_shown(self):
        # A size the CLI accepts (digits and a unit) and QEMU refuses: more
        # bytes than 64 bits hold.
        res = run("--memory", "20000000000G", "--", "true", timeout=300)
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("QEMU failed to start", res.stderr)
        self.assertIn("out of range", res.stderr)  # QEMU's own message


# Commands that harm their node after saying "harming" and would then wait
# for ten minutes. A report written to /dev/kmsg reaches the console as the
# kernel's own do: it stands for an oops whose task never ends (the node
# lives on, the command hangs), which the guest kernel offers no other way
# to make (no LKDTM). sysrq's crash is a real panic: the node's QEMU exits
# (panic=-1, -no-reboot).
HARM_AFTER = 1  # seconds: "harming" reaches the host first
HARMING = f"echo harming; sleep {HARM_AFTER}; "
FAKE_BUG = HARMING + "echo '<2>BUG: devmemsim smoke: a report in the kernel log' >/dev/kmsg; sleep 600"
PANIC = HARMING + "echo c >/proc/sysrq-trigger; sleep 600"
DIES_WITHIN = 30  # seconds from the harm to the CLI's exit


def timed(*args):
    """(exit status, stderr, seconds from the harm to the exit) of
    `devmemsim ARGS`; AssertionError if it does not exit within a minute
    of the harm."""
    with tempfile.TemporaryFile("w+") as err, \
            subprocess.Popen([str(LAUNCHER), *args], text=True, stdout=subprocess.PIPE, stderr=err) as p:
        for line in p.stdout:
            if line.strip() == "harming":
                break
        harmed = time.monotonic() + HARM_AFTER
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            raise AssertionError(f"devmemsim {args[0]} did not exit within 60 s of the harm")
        err.seek(0)
        return p.returncode, err.read(), time.monotonic() - harmed


class DyingNodeRun(unittest.TestCase):
    def test_a_kernel_bug_ends_run(self):
        status, err, seconds = timed("run", "--", FAKE_BUG)
        print(f"run: exit {status} {seconds:.1f} s after the harm", flush=True)
        kept = re.search(r"^console (\S+):$", err, re.M)
        self.addCleanup(lambda: kept and shutil.rmtree(kept.group(1).rsplit("/", 1)[0], ignore_errors=True))
        self.assertEqual(status, GuestDied.status, err)
        self.assertLess(seconds, DIES_WITHIN, err)
        self.assertIn("devmemsim: node0 died: its kernel reported: BUG: devmemsim smoke: a report in the kernel log",
                      err)
        self.assertTrue(kept, err)
        self.assertTrue(kept.group(1).endswith("/node0.console"), err)
        with open(kept.group(1)) as f:  # kept for the reader
            self.assertIn("BUG: devmemsim smoke", f.read())


class DyingNodeExec(unittest.TestCase):
    """exec on a booted node: a complaint that is not fatal is shown, a
    fatal one ends the command; then a panic ends it, and the node (the
    tests run in name order)."""

    NAME = "smoke-dying"

    @classmethod
    def setUpClass(cls):
        boot(cls.NAME, "--nodes", "1")

    @classmethod
    def tearDownClass(cls):
        stop(cls.NAME)
        shutil.rmtree(run_root() / cls.NAME, ignore_errors=True)  # a dead node's cluster: stop keeps it

    def test_a_warning_is_shown_and_the_command_goes_on(self):
        res = cli("exec", "--name", self.NAME, "node0", "--",
                  "echo '<4>WARNING: devmemsim smoke: a warning' >/dev/kmsg; sleep 2; exit 7")
        self.assertEqual(res.returncode, 7, res.stderr)
        self.assertIn("devmemsim: node0: kernel: WARNING: devmemsim smoke: a warning (not fatal", res.stderr)

    def test_b_a_kernel_bug_ends_a_command_that_hangs(self):
        status, err, seconds = timed("exec", "--name", self.NAME, "node0", "--", FAKE_BUG)
        print(f"exec, BUG: exit {status} {seconds:.1f} s after the harm", flush=True)
        self.assertEqual(status, GuestDied.status, err)
        self.assertLess(seconds, DIES_WITHIN, err)
        self.assertIn("devmemsim: node0 died: its kernel reported: BUG: devmemsim smoke", err)
        self.assertRegex(err, rf"console {run_root() / self.NAME}/node0.console:")
        # The node lives on (the report was not the kernel's own).
        self.assertEqual(cli("exec", "--name", self.NAME, "node0", "--", "true").returncode, 0)

    def test_c_a_panic_ends_the_command(self):
        status, err, seconds = timed("exec", "--name", self.NAME, "node0", "--", PANIC)
        print(f"exec, panic: exit {status} {seconds:.1f} s after the harm", flush=True)
        self.assertEqual(status, GuestDied.status, err)
        self.assertLess(seconds, DIES_WITHIN, err)
        self.assertIn("devmemsim: node0 died: its kernel reported: Kernel panic - not syncing: sysrq triggered crash",
                      err)


if __name__ == "__main__":
    main()
