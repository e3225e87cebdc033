"""Boot a node with the real kernel and check what the guest sees: both
devices enumerate under one PCIe switch with our IDs and BAR sizes, both
drivers probe, and the CLI carries the command's exit status back."""

import re
import tomllib
import unittest

from guestlib import cli
from devmemsim.addressing import DATA
from devmemsim.paths import ROOT

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
    return cli("run", *args, timeout=timeout)


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


if __name__ == "__main__":
    unittest.main(verbosity=2)
