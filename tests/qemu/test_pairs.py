"""QEMU level, no guest kernel: nodes of several NIC/GPU pairs. The CLI's
layout (tools/devmemsim/topology.py) puts every device of the node's
[topology] where the topology says, each PCI function is the model instance
its index= names, and a command line that does not match the topology is
refused with one line."""

import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from qtest import ROOT, Pci, QTest, topology  # noqa: E402
from devmemsim.contract import C  # noqa: E402

NIC = (C.DMS_PCI_VENDOR_ID, C.DMS_PCI_DEVICE_ID_NIC)
GPU = (C.DMS_PCI_VENDOR_ID, C.DMS_PCI_DEVICE_ID_GPU)
TWO_PAIRS = ROOT / "configs" / "node" / "two-pairs.toml"
# Eight pairs: four under sw0 (count=), three under sw1, one on root ports.
EIGHT_PAIRS = """
[gpu]
mem_size = "16M"
[[topology.switch]]
[[topology.switch]]
[[topology.nic]]
name = "a"
count = 4
on = "sw0"
[[topology.gpu]]
name = "ga"
count = 4
on = "sw0"
[[topology.nic]]
name = "b"
count = 3
on = "sw1"
[[topology.gpu]]
name = "gb"
count = 3
on = "sw1"
[[topology.nic]]
name = "solo"
on = "s0.rp7"
[[topology.gpu]]
name = "gsolo"
on = "s0.rp8"
"""


def nic_mac(index: int) -> str:
    return f"52:54:00:12:34:{index:02x}"


def node_argv(layout, skip=()) -> list:
    """The layout's ports and devices; NIC i gets MAC nic_mac(i)."""
    argv = list(layout.ports)
    for dev in layout.nics + layout.gpus:
        if dev not in skip:
            mac = f",mac={nic_mac(dev.index)}" if dev.kind == "nic" else ""
            argv += ["-device", dev.device() + mac]
    return argv


def functions(qt) -> dict:
    """(vendor, device) of every PCI function -> [(bdf, [qdev ids of the
    bridges above it, root port first])], from QMP's view of the tree."""
    found = {}

    def walk(devices, above):
        for d in devices:
            bdf = (d["bus"], d["slot"], d["function"])
            found.setdefault((d["id"]["vendor"], d["id"]["device"]), []).append((bdf, above))
            if "pci_bridge" in d:
                walk(d["pci_bridge"].get("devices", []), above + [d.get("qdev_id", "")])

    for bus in qt.qmp("query-pci"):
        walk(bus["devices"], [])
    return found


class Layout(unittest.TestCase):
    def test_default_is_one_pair_under_one_switch_as_always(self):
        d = topology.DEFAULT
        self.assertEqual(list(d.ports), [
            "-device", "pcie-root-port,id=rp0,bus=pcie.0,chassis=1,slot=0",
            "-device", "x3130-upstream,id=up0,bus=rp0",
            "-device", "xio3130-downstream,id=dn0,bus=up0,chassis=2,slot=0",
            "-device", "xio3130-downstream,id=dn1,bus=up0,chassis=3,slot=1",
        ])
        self.assertEqual([n.device() for n in d.nics], ["devmemsim-nic,node=dms,bus=dn0"])
        self.assertEqual([g.device() for g in d.gpus], ["devmemsim-gpu,node=dms,bus=dn1"])

    def test_two_pairs_file(self):
        t = topology.load(TWO_PAIRS)
        self.assertEqual([(d.name, d.on, d.bus) for d in t.nics + t.gpus],
                         [("nic0", "sw0", "dn0"), ("nic1", "sw1", "dn2"),
                          ("gpu0", "sw0", "dn1"), ("gpu1", "sw1", "dn3")])
        self.assertEqual(t.switches, {"sw0": "up0", "sw1": "up1"})
        self.assertEqual(t.nics[1].device(), "devmemsim-nic,node=dms,bus=dn2,index=1")


class Pairs:
    """A node of the subclass's topology (TOML text or file), enumerated."""

    TOML = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.NamedTemporaryFile("w", suffix=".toml")
        cls.tmp.write(cls.TOML if isinstance(cls.TOML, str) else cls.TOML.read_text())
        cls.tmp.flush()
        cls.layout = topology.load(cls.tmp.name)
        cls.qt = QTest(*node_argv(cls.layout), "-m", "256M", config=cls.tmp.name, qmp=True)
        cls.pci = Pci(cls.qt)
        cls.found = functions(cls.qt)
        # The device each downstream or root port holds.
        cls.on_port = {d.bus: d for d in cls.layout.nics + cls.layout.gpus}

    @classmethod
    def tearDownClass(cls):
        cls.qt.close()
        cls.tmp.close()

    def placed(self, ids):
        """[(bdf, the layout's Device there, bridges above it)] of one kind."""
        return [(bdf, self.on_port[above[-1]], above) for bdf, above in self.found.get(ids, [])]

    def stats(self) -> dict:
        return json.loads(self.qt.qmp("qom-get", path="/objects/dms", property="stats"))

    def test_every_device_under_its_switch(self):
        for ids, kind in ((NIC, "nic"), (GPU, "gpu")):
            placed = self.placed(ids)
            self.assertEqual(sorted(d.index for _, d, _ in placed), list(range(self.layout.pairs)))
            for _, dev, above in placed:
                self.assertEqual(dev.kind, kind)
                if "." in dev.on:  # on a root port of its own
                    self.assertEqual(len(above), 1, dev)
                else:  # root port, the switch's upstream port, a downstream port
                    self.assertEqual(len(above), 3, dev)
                    self.assertEqual(above[1], self.layout.switches[dev.on], dev)

    def test_each_nic_is_its_model_instance(self):
        for bdf, dev, _ in self.placed(NIC):
            regs = self.pci.bars[(bdf, C.DMS_NIC_BAR_REGS)][0]
            mac = self.qt.readl(regs + C.DMS_NIC_REG_MAC_LO).to_bytes(4, "little")
            mac += self.qt.readl(regs + C.DMS_NIC_REG_MAC_HI).to_bytes(4, "little")[:2]
            self.assertEqual(mac.hex(":"), nic_mac(dev.index), dev)

    def test_each_gpu_is_its_model_instance(self):
        """A CRC job on the GPU under a port counts for the model's GPU of
        that index (the counters name it as the topology does)."""
        for bdf, dev, _ in self.placed(GPU):
            regs = self.pci.bars[(bdf, C.DMS_GPU_BAR_REGS)][0]
            self.qt.qmp("qom-set", path="/objects/dms", property="reset-stats", value=True)
            self.qt.writeq(regs + C.DMS_GPU_REG_CRC_DEV_LO, 0)
            self.qt.writeq(regs + C.DMS_GPU_REG_CRC_LEN_LO, 4096)
            self.qt.writel(regs + C.DMS_GPU_REG_CRC_DOORBELL, 1)
            for _ in range(100):
                self.qt.clock_step(1000)
                if self.qt.readl(regs + C.DMS_GPU_REG_CRC_STATUS) & C.DMS_GPU_STATUS_DONE:
                    break
            jobs = {name: g["crc_jobs"] for name, g in self.stats()["gpus"].items()}
            self.assertEqual(jobs, {g.name: int(g is dev) for g in self.layout.gpus})

    def test_links_named_by_the_topology(self):
        links = self.stats()["pcie"]["links"]
        for dev in self.layout.nics + self.layout.gpus:
            self.assertIn(dev.name, links)


class TwoPairs(Pairs, unittest.TestCase):
    TOML = TWO_PAIRS


class EightPairs(Pairs, unittest.TestCase):
    TOML = EIGHT_PAIRS

    def test_names_and_order(self):
        self.assertEqual([n.name for n in self.layout.nics],
                         ["a0", "a1", "a2", "a3", "b0", "b1", "b2", "solo"])
        self.assertEqual(self.layout.gpus[7].on, "s0.rp8")


class Refusals(unittest.TestCase):
    """Command lines that do not match the node's topology: QEMU stops with
    one line naming the node and the index."""

    @classmethod
    def setUpClass(cls):
        cls.layout = topology.load(TWO_PAIRS)

    def refusal(self, argv, config=str(TWO_PAIRS)) -> str:
        with self.assertRaises(RuntimeError) as cm:
            QTest(*argv, config=config).close()
        text = str(cm.exception).removeprefix("QEMU did not start: ")
        # QEMU's lines, not the qtest protocol's log ("[I 0.000000] OPENED").
        lines = [line for line in text.splitlines() if line.strip() and not line.startswith("[")]
        self.assertEqual(len(lines), 1, text)
        return lines[0]

    def test_duplicate_index(self):
        nic1 = self.layout.nics[1]
        dup = nic1.device().replace(f"bus={nic1.bus}", "bus=pcie.0")
        line = self.refusal(node_argv(self.layout) + ["-device", dup])
        self.assertIn("devmemsim-node 'dms' already has a NIC with index 1", line)

    def test_index_out_of_range(self):
        argv = node_argv(self.layout) + ["-device", "devmemsim-gpu,node=dms,bus=pcie.0,index=2"]
        line = self.refusal(argv)
        self.assertIn("devmemsim-node 'dms' has no GPU with index 2 "
                      "(its topology has 2 NIC/GPU pairs: index 0..1)", line)

    def test_device_of_the_topology_missing(self):
        line = self.refusal(node_argv(self.layout, skip=(self.layout.gpus[1],)))
        self.assertIn("devmemsim-node 'dms': its topology's gpu1 (GPU 1 of 2) has no "
                      "-device devmemsim-gpu,node=dms,index=1", line)

    def test_tree_qemu_cannot_lay_out(self):
        with tempfile.NamedTemporaryFile("w", suffix=".toml") as f:
            f.write("[[topology.switch]]\n[[topology.nic]]\ncount = 17\n[[topology.gpu]]\ncount = 17\n")
            f.flush()
            line = self.refusal([], config=f.name)
        self.assertIn("devmemsim-node: topology: switch \"sw0\" has 34 devices; under QEMU a "
                      "switch has at most 32 (a downstream port each)", line)


if __name__ == "__main__":
    unittest.main(verbosity=2)
