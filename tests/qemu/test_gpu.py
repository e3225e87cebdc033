"""QEMU level, no guest kernel: the GPU's copy and CRC engines driven through
its registers, results read back from guest RAM and device memory, errors
raise the error interrupt, and the counters are readable over QMP."""

import json
import random
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from qtest import SWITCH, Pci, QTest  # noqa: E402
from devmemsim.contract import C  # noqa: E402

GPU = (C.DMS_PCI_VENDOR_ID, C.DMS_PCI_DEVICE_ID_GPU)
DEVICES = SWITCH + [
    "-device", "devmemsim-nic,node=dms,bus=dn0",
    "-device", "devmemsim-gpu,node=dms,bus=dn1",
]
IRQ_STATUS, IRQ_MASK = C.DMS_GPU_REG_IRQ_STATUS, C.DMS_GPU_REG_IRQ_MASK
COPY_DEV, COPY_HOST, COPY_LEN = C.DMS_GPU_REG_COPY_DEV_LO, C.DMS_GPU_REG_COPY_HOST_LO, C.DMS_GPU_REG_COPY_LEN_LO
COPY_CTRL, COPY_DOORBELL, COPY_STATUS = C.DMS_GPU_REG_COPY_CTRL, C.DMS_GPU_REG_COPY_DOORBELL, C.DMS_GPU_REG_COPY_STATUS
CRC_DEV, CRC_LEN, CRC_SEED = C.DMS_GPU_REG_CRC_DEV_LO, C.DMS_GPU_REG_CRC_LEN_LO, C.DMS_GPU_REG_CRC_SEED
CRC_DOORBELL, CRC_STATUS, CRC_RESULT = C.DMS_GPU_REG_CRC_DOORBELL, C.DMS_GPU_REG_CRC_STATUS, C.DMS_GPU_REG_CRC_RESULT
DONE, ERROR = C.DMS_GPU_STATUS_DONE, C.DMS_GPU_STATUS_ERROR
IRQ_COPY, IRQ_CRC, IRQ_ERROR = C.DMS_GPU_IRQ_COPY_DONE, C.DMS_GPU_IRQ_CRC_DONE, C.DMS_GPU_IRQ_ERROR
ERR = C.DMS_GPU_STATUS_ERR_SHIFT
MSI_ADDR, MSI_DATA = 0x3000, 0x4242  # guest RAM the MSI-X message lands in

HOST_SRC = 0x1000000  # 16 MiB: guest RAM
HOST_DST = 0x2000000


def crc32c(data: bytes, crc: int = 0xFFFFFFFF) -> int:
    """Bitwise CRC32C without final inversion (Linux's crc32c())."""
    table = crc32c.table
    for b in data:
        crc = (crc >> 8) ^ table[(crc ^ b) & 0xFF]
    return crc


crc32c.table = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ (0x82F63B78 if _c & 1 else 0)
    crc32c.table.append(_c)


class GpuEngines(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.qt = QTest(*DEVICES, "-m", "256M", qmp=True)
        cls.pci = Pci(cls.qt)
        cls.regs = cls.pci.bar(GPU, 0)[0]
        cls.mem, cls.mem_size = cls.pci.bar(GPU, 2)[:2]
        cls.pci.enable_msix(GPU, 0, MSI_ADDR, MSI_DATA)
        cls.qt.writel(cls.regs + IRQ_MASK, IRQ_COPY | IRQ_CRC | IRQ_ERROR)

    @classmethod
    def tearDownClass(cls):
        cls.qt.close()

    def setUp(self):
        self.qt.writel(self.regs + IRQ_STATUS, 0xFFFFFFFF)
        self.qt.writel(MSI_ADDR, 0)
        self.qt.qmp("qom-set", path="/objects/dms", property="reset-stats", value=True)

    def run_engine(self, doorbell, status_reg):
        self.qt.writel(self.regs + doorbell, 1)
        for _ in range(100):
            self.qt.clock_step(1000)
            status = self.qt.readl(self.regs + status_reg)
            if status & DONE:
                return status
        self.fail("engine never finished")

    def copy(self, dev, host, length, to_dev):
        self.qt.writeq(self.regs + COPY_DEV, dev)
        self.qt.writeq(self.regs + COPY_HOST, host)
        self.qt.writeq(self.regs + COPY_LEN, length)
        self.qt.writel(self.regs + COPY_CTRL, 1 if to_dev else 0)
        return self.run_engine(COPY_DOORBELL, COPY_STATUS)

    def stats(self):
        return json.loads(self.qt.qmp("qom-get", path="/objects/dms", property="stats"))

    def test_copy_round_trip_and_counters(self):
        data = random.Random(1).randbytes(1 << 20)
        self.qt.memwrite(HOST_SRC, data)
        self.assertEqual(self.copy(0x100000, HOST_SRC, len(data), True), DONE)
        # Device memory (BAR2) now holds it: read through the BAR.
        self.assertEqual(self.qt.memread(self.mem + 0x100000, len(data)), data)
        self.assertEqual(self.copy(0x100000, HOST_DST, len(data), False), DONE)
        self.assertEqual(self.qt.memread(HOST_DST, len(data)), data)
        self.assertEqual(self.qt.readl(MSI_ADDR), MSI_DATA)  # MSI-X fired
        s = self.stats()["pcie"]
        gpu, up = s["links"]["gpu"], s["links"]["upstream"]
        self.assertEqual(gpu["down"]["payload_bytes"], len(data))  # read completions
        self.assertEqual(gpu["up"]["payload_bytes"], len(data))  # writes to host
        self.assertEqual(up["up"]["payload_bytes"], len(data))
        self.assertEqual(s["root_complex"]["host_read_bytes"], len(data))
        self.assertEqual(s["root_complex"]["host_write_bytes"], len(data))
        self.assertEqual(s["switch"]["p2p_bytes"], 0)

    def test_crc_engine(self):
        data = random.Random(2).randbytes(64 * 1024)
        self.qt.memwrite(self.mem + 0x400000, data)  # CPU writes straight into BAR2
        self.qt.writeq(self.regs + CRC_DEV, 0x400000)
        self.qt.writeq(self.regs + CRC_LEN, len(data))
        self.qt.writel(self.regs + CRC_SEED, 0xFFFFFFFF)
        self.assertEqual(self.run_engine(CRC_DOORBELL, CRC_STATUS), DONE)
        self.assertEqual(self.qt.readl(self.regs + CRC_RESULT), crc32c(data))
        self.assertEqual(self.qt.readl(self.regs + IRQ_STATUS), IRQ_CRC)

    def test_out_of_range_copy_is_an_error_interrupt(self):
        status = self.copy(self.mem_size - 16, HOST_DST, 4096, False)
        self.assertEqual(status, DONE | ERROR | C.DMS_GPU_ERR_DEV_RANGE << ERR)
        self.assertTrue(self.qt.readl(self.regs + IRQ_STATUS) & IRQ_ERROR)
        self.assertEqual(self.qt.readl(MSI_ADDR), MSI_DATA)
        self.assertTrue(self.qt.alive())

    def test_dma_outside_guest_ram_is_a_fault(self):
        # The GPU's own register BAR and an unassigned address: not RAM.
        for host in (self.regs, 0x7F00000000):
            status = self.copy(0, host, 4096, False)
            self.assertEqual(status, DONE | ERROR | C.DMS_GPU_ERR_HOST_DMA << ERR)
        self.assertEqual(self.qt.readl(self.regs), C.DMS_GPU_ID_MAGIC)  # registers intact
        self.assertEqual(self.stats()["pcie"]["dma_faults"], 2)

    def test_no_dma_without_bus_master(self):
        # P2P into the GPU's own BAR2 and guest RAM alike: the fabric refuses.
        bdf = self.pci.devices[GPU]
        self.qt.cfg_write(bdf, 0x4, 0x2)  # memory space only
        try:
            for host in (HOST_DST, self.mem + 0x100000):
                status = self.copy(0, host, 4096, False)
                self.assertEqual(status, DONE | ERROR | C.DMS_GPU_ERR_HOST_DMA << ERR)
        finally:
            self.qt.cfg_write(bdf, 0x4, 0x6)
        self.assertEqual(self.stats()["pcie"]["dma_faults"], 2)
        self.assertEqual(self.copy(0, HOST_DST, 4096, False), DONE)

    def test_random_register_writes_keep_qemu_alive(self):
        rng = random.Random(3)
        for _ in range(3000):
            off = rng.randrange(0, 0x400) & ~3
            self.qt.writel(self.regs + off, rng.getrandbits(32))
            if rng.random() < 0.05:
                self.qt.clock_step(1000)
        self.qt.clock_step(100000)
        self.assertTrue(self.qt.alive())
        self.assertEqual(self.qt.readl(self.regs), C.DMS_GPU_ID_MAGIC)


if __name__ == "__main__":
    unittest.main(verbosity=2)
