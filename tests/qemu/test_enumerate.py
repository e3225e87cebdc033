"""QEMU level, no guest kernel: the devices enumerate behind the switch with
our IDs and BAR layout, answer their identity registers, and survive random
register writes."""

import random
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sysc-model" / "include"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from qtest import SWITCH, Pci, QTest  # noqa: E402
from devmemsim.contract import C  # noqa: E402

NIC = (C.DMS_PCI_VENDOR_ID, C.DMS_PCI_DEVICE_ID_NIC)
GPU = (C.DMS_PCI_VENDOR_ID, C.DMS_PCI_DEVICE_ID_GPU)
NODE_DEVICES = SWITCH + [
    "-device", "devmemsim-nic,node=dms,bus=dn0,mac=52:54:00:12:34:56",
    "-device", "devmemsim-gpu,node=dms,bus=dn1",
]


class Enumerate(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.qt = QTest(*NODE_DEVICES)
        cls.pci = Pci(cls.qt)

    @classmethod
    def tearDownClass(cls):
        cls.qt.close()

    def test_topology(self):
        pci = self.pci
        nic, gpu = pci.devices[NIC], pci.devices[GPU]
        nic_port, gpu_port = pci.parent[nic], pci.parent[gpu]
        self.assertNotEqual(nic_port, gpu_port)
        self.assertEqual(pci.ids[nic_port], (0x104C, 0x8233))  # xio3130 downstream
        self.assertEqual(pci.ids[gpu_port], (0x104C, 0x8233))
        up = pci.parent[nic_port]
        self.assertEqual(up, pci.parent[gpu_port])
        self.assertEqual(pci.ids[up], (0x104C, 0x8232))  # x3130 upstream
        self.assertEqual(pci.ids[pci.parent[up]], (0x1B36, 0x000C))  # pcie-root-port

    def test_class_codes(self):
        self.assertEqual(self.qt.cfg_read(self.pci.devices[NIC], 8) >> 16, 0x0200)
        self.assertEqual(self.qt.cfg_read(self.pci.devices[GPU], 8) >> 16, 0x0302)

    def test_bars(self):
        self.assertEqual(self.pci.bar(NIC, C.DMS_NIC_BAR_REGS)[1:], (C.DMS_NIC_REGS_SIZE, True, False))
        self.assertEqual(self.pci.bar(GPU, C.DMS_GPU_BAR_REGS)[1:], (C.DMS_GPU_REGS_SIZE, True, False))
        self.assertEqual(self.pci.bar(GPU, 2)[1:], (256 << 20, True, True))
        self.assertIn((self.pci.devices[NIC], 4), self.pci.bars)
        self.assertIn((self.pci.devices[GPU], 4), self.pci.bars)

    def test_identity_registers(self):
        nic = self.pci.bar(NIC, 0)[0]
        gpu = self.pci.bar(GPU, 0)[0]
        self.assertEqual(self.qt.readl(nic + C.DMS_NIC_REG_ID), C.DMS_NIC_ID_MAGIC)
        self.assertEqual(self.qt.readl(nic + C.DMS_NIC_REG_VERSION), C.DMS_NIC_VERSION)
        self.assertEqual(self.qt.readl(nic + C.DMS_NIC_REG_NUM_QUEUES), 16)
        self.assertEqual(self.qt.readl(nic + C.DMS_NIC_REG_MAC_LO), 0x12005452)  # 52:54:00:12
        self.assertEqual(self.qt.readl(nic + C.DMS_NIC_REG_MAC_HI), 0x5634)  # 34:56
        self.assertEqual(self.qt.readl(gpu + C.DMS_GPU_REG_ID), C.DMS_GPU_ID_MAGIC)
        self.assertEqual(self.qt.readq(gpu + C.DMS_GPU_REG_MEM_SIZE_LO), 256 << 20)

    def test_gpu_memory_is_ram(self):
        mem = self.pci.bar(GPU, 2)[0]
        self.qt.writeq(mem + 0x1000, 0x1122334455667788)
        self.assertEqual(self.qt.readq(mem + 0x1000), 0x1122334455667788)
        last = mem + (256 << 20) - 8
        self.qt.writeq(last, 0xDEADBEEF)
        self.assertEqual(self.qt.readq(last), 0xDEADBEEF)

    def test_random_register_writes(self):
        rng = random.Random(7)
        for base in (self.pci.bar(NIC, 0)[0], self.pci.bar(GPU, 0)[0]):
            for _ in range(2000):
                off = rng.randrange(0, 0x10000)
                width = rng.choice((1, 2, 4, 8))
                off &= ~(width - 1)
                val = rng.getrandbits(8 * width)
                {1: self.qt.writeb, 2: self.qt.writew, 4: self.qt.writel, 8: self.qt.writeq}[width](base + off, val)
            # Identity intact, unknown offsets undefined, QEMU alive.
            self.assertIn(self.qt.readl(base), (C.DMS_NIC_ID_MAGIC, C.DMS_GPU_ID_MAGIC))
            self.assertEqual(self.qt.readl(base + 0xFFFC), C.DMS_REG_UNDEFINED)
            self.assertEqual(self.qt.readb(base + 1), 0xFF)
        self.assertTrue(self.qt.alive())


class Config(unittest.TestCase):
    def test_gpu_memory_size_follows_config(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".toml") as f:
            f.write("[gpu]\nmem_size = \"1G\"\n[nic]\nqueues = 8\n")
            f.flush()
            qt = QTest(*NODE_DEVICES, config=f.name)
            try:
                pci = Pci(qt)
                self.assertEqual(pci.bar(GPU, 2)[1], 1 << 30)
                self.assertEqual(qt.readl(pci.bar(NIC, 0)[0] + 8), 8)
            finally:
                qt.close()

    def test_bad_config_is_a_clear_qemu_error(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".toml") as f:
            f.write("[gpu]\nmem_size = \"3M\"\n")
            f.flush()
            with self.assertRaises(RuntimeError) as cm:
                QTest(*NODE_DEVICES, config=f.name)
            self.assertIn("devmemsim-node: " + f.name + ": gpu.mem_size", str(cm.exception))

    def test_device_without_node_is_refused(self):
        with self.assertRaises(RuntimeError) as cm:
            QTest(*SWITCH, "-device", "devmemsim-gpu,bus=dn1")
        self.assertIn("the node property is required", str(cm.exception))

    def test_second_gpu_on_one_node_is_refused(self):
        with self.assertRaises(RuntimeError) as cm:
            QTest(*SWITCH, "-device", "devmemsim-gpu,node=dms,bus=dn0", "-device", "devmemsim-gpu,node=dms,bus=dn1")
        self.assertIn("already has a GPU", str(cm.exception))

    def test_second_node_in_one_process_is_refused(self):
        with self.assertRaises(RuntimeError) as cm:
            QTest(*SWITCH, "-object", "devmemsim-node,id=other")
        self.assertIn("devmemsim-node: one node per QEMU process", str(cm.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
