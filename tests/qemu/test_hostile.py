"""QEMU level, no guest kernel: the five guest actions of issue 10 that used to
crash or hang QEMU. Each runs in a fresh QEMU; afterwards QEMU must be alive,
its main loop answering QMP within a second, and nothing written outside the
buffers the guest gave."""

import os
import socket
import struct
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from contract import C  # noqa: E402
from qtest import SWITCH, Pci, QTest  # noqa: E402
from test_nic import frame  # noqa: E402

NIC = (C.DMS_PCI_VENDOR_ID, C.DMS_PCI_DEVICE_ID_NIC)
GPU = (C.DMS_PCI_VENDOR_ID, C.DMS_PCI_DEVICE_ID_GPU)
Q0 = C.DMS_NIC_Q_BASE(0)
RAM = 0x1000000  # rings and buffers in guest RAM from 16 MiB
HBUF, PBUF, RCMPL, TDESC, TCMPL = RAM, RAM + 0x1000, RAM + 0x2000, RAM + 0x3000, RAM + 0x4000
HDATA, PDATA, TDATA = RAM + 0x10000, RAM + 0x100000, RAM + 0x200000
HBUF_STRIDE = 256  # header buffers sit this far apart; the rest is canary
CANARY = 0xCC
ACPI_PCIHP = 0x0CC0  # ICH9's ACPI PCI hotplug registers (QEMU hw/acpi/pcihp.c)
ACPI_PCIHP_EJ, ACPI_PCIHP_SEL = ACPI_PCIHP + 0x8, ACPI_PCIHP + 0x10


def deep_header_frame(payload: bytes) -> bytes:
    """Two VLAN tags, IPv4 and TCP with 40 bytes of options each: 142 bytes
    of headers (checksums are not checked: RX checksum offload is off)."""
    eth = bytes.fromhex("525400d50000525400d50001")
    vlans = struct.pack("!HHHH", 0x88A8, 1, 0x8100, 2)
    tcp = struct.pack("!HHIIBBHHH", 40000, 5201, 1, 0, 15 << 4, 0x18, 65535, 0, 0) + b"\x01" * 40
    ip = struct.pack("!BBHHHBBH4s4s", 0x4F, 0, 60 + len(tcp) + len(payload), 1, 0, 64, 6, 0,
                     bytes([10, 10, 0, 2]), bytes([10, 10, 0, 1])) + b"\x01" * 40
    return eth + vlans + b"\x08\x00" + ip + tcp + payload


class Hostile(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dms-hostile-")
        path = os.path.join(self.tmp, "wire.sock")
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(1)
        self.qt = QTest(*SWITCH,
                        "-netdev", f"stream,id=wire,server=off,addr.type=unix,addr.path={path}",
                        "-device", "devmemsim-nic,node=dms,bus=dn0,netdev=wire",
                        "-device", "devmemsim-gpu,node=dms,bus=dn1", "-m", "256M", qmp=True)
        srv.settimeout(10)
        self.wire, _ = srv.accept()
        srv.close()
        self.qt.sock.settimeout(60)  # a hung main loop fails the test, not the suite
        self.pci = Pci(self.qt)
        self.nic = self.pci.bar(NIC, 0)[0]
        self.gpu = self.pci.bar(GPU, 0)[0]

    def tearDown(self):
        self.wire.close()
        self.qt.close()

    def assert_responsive(self, gpu_powered=True):
        """QEMU runs and its main loop answers QMP within a second."""
        self.assertTrue(self.qt.alive(), self.qt.output())
        answer = []
        t = threading.Thread(target=lambda: answer.append(self.qt.qmp("query-status")), daemon=True)
        start = time.monotonic()
        t.start()
        t.join(1.0)
        self.assertTrue(answer, f"no QMP answer within 1 s: {self.qt.output()}")
        self.assertLess(time.monotonic() - start, 1.0)
        if gpu_powered:
            self.assertEqual(self.qt.readl(self.gpu), C.DMS_GPU_ID_MAGIC)

    def gpu_present(self) -> bool:
        """QEMU still has the GPU (query-pci walks the bus tree)."""
        def walk(devices):
            for d in devices:
                if d["id"]["device"] == GPU[1]:
                    return True
                if walk(d.get("pci_bridge", {}).get("devices", [])):
                    return True
            return False
        return any(walk(bus["devices"]) for bus in self.qt.qmp("query-pci"))

    def qw(self, off, val):
        self.qt.writel(self.nic + Q0 + off, val)

    def rx_queue(self, hbuf_size=256, pbuf_size=4096, pdata=PDATA):
        """RX queue 0 with eight header and payload buffers posted."""
        self.qw(C.DMS_NIC_RXQ_RING_LOG2, 4)
        for reg, base in ((C.DMS_NIC_RXQ_HBUF_BASE_LO, HBUF), (C.DMS_NIC_RXQ_PBUF_BASE_LO, PBUF),
                          (C.DMS_NIC_RXQ_CMPL_BASE_LO, RCMPL)):
            self.qw(reg, base & 0xFFFFFFFF)
            self.qw(reg + 4, base >> 32)
        self.qw(C.DMS_NIC_RXQ_HBUF_SIZE, hbuf_size)
        self.qw(C.DMS_NIC_RXQ_PBUF_SIZE, pbuf_size)
        self.qt.memwrite(RCMPL, bytes(16 * 32))
        self.qt.memwrite(HDATA, bytes([CANARY]) * (8 * HBUF_STRIDE))
        self.qw(C.DMS_NIC_RXQ_CTRL, C.DMS_NIC_Q_ENABLE)
        for i in range(8):
            self.qt.memwrite(HBUF + 16 * i, struct.pack("<QH6x", HDATA + HBUF_STRIDE * i, 100 + i))
            self.qt.memwrite(PBUF + 16 * i, struct.pack("<QH6x", pdata + pbuf_size * i, 200 + i))
        self.qw(C.DMS_NIC_RXQ_HBUF_TAIL, 8)
        self.qw(C.DMS_NIC_RXQ_PBUF_TAIL, 8)

    def inject(self, f: bytes):
        self.wire.sendall(struct.pack("!I", len(f)) + f)
        for _ in range(20):
            self.qt.clock_step(100000)

    def test_1_payload_buffer_size_zero_after_enable(self):
        self.rx_queue()
        self.qt.writel(self.nic + C.DMS_NIC_REG_RX_CTRL, C.DMS_NIC_RX_HDR_SPLIT)
        self.qw(C.DMS_NIC_RXQ_PBUF_SIZE, 0)
        self.inject(frame(b"z" * 1000))
        self.assert_responsive()

    def test_2_gpu_msi_at_its_own_doorbell(self):
        # A zero-length copy fails at once; its error MSI rings the doorbell.
        self.pci.enable_msix(GPU, 0, self.gpu + C.DMS_GPU_REG_COPY_DOORBELL, 1)
        self.qt.writel(self.gpu + C.DMS_GPU_REG_IRQ_MASK, 0x7)
        self.qt.writeq(self.gpu + C.DMS_GPU_REG_COPY_LEN_LO, 0)
        self.qt.writel(self.gpu + C.DMS_GPU_REG_COPY_DOORBELL, 1)
        for _ in range(10):
            self.qt.clock_step(100000)
        self.assert_responsive()
        # Refused by QEMU's re-entrancy guard, or at most one job per 1 us.
        stats = self.qt.qmp("qom-get", path="/objects/dms", property="stats")
        jobs = int(stats.split('"copy_jobs": ')[1].split(",")[0])
        self.assertLessEqual(jobs, 1001)

    def test_3_nic_interrupt_storm_at_its_own_arm_register(self):
        self.pci.enable_msix(NIC, 1, self.nic + Q0 + C.DMS_NIC_Q_IRQ_ARM, 1)
        self.qt.writel(self.nic + C.DMS_NIC_REG_ITR_NS, 1)
        self.qw(C.DMS_NIC_TXQ_RING_LOG2, 4)
        for reg, base in ((C.DMS_NIC_TXQ_DESC_BASE_LO, TDESC), (C.DMS_NIC_TXQ_CMPL_BASE_LO, TCMPL)):
            self.qw(reg, base)
            self.qw(reg + 4, 0)
        self.qw(C.DMS_NIC_TXQ_CTRL, C.DMS_NIC_Q_ENABLE)
        f = frame(b"storm" * 20)
        self.qt.memwrite(TDATA, f)
        self.qt.memwrite(TDESC, struct.pack("<QIHH", TDATA, len(f), C.DMS_TX_F_SOP | C.DMS_TX_F_EOP, 1))
        self.qw(C.DMS_NIC_TXQ_TAIL, 1)
        self.qw(C.DMS_NIC_Q_IRQ_ARM, 1)
        start = time.monotonic()
        self.qt.clock_step(5_000_000)  # 5 ms of guest time
        self.assertLess(time.monotonic() - start, 5.0)
        self.assert_responsive()

    def gpu_window_rx(self):
        """The NIC's payload buffers point into the GPU's BAR2 (P2P)."""
        self.rx_queue(pdata=self.pci.bar(GPU, 2)[0])
        self.qt.writel(self.nic + C.DMS_NIC_REG_RX_CTRL, C.DMS_NIC_RX_HDR_SPLIT)

    def test_4_acpi_eject_then_dma_to_the_old_window(self):
        bsel = self.qt.qmp("qom-get", path="/machine/peripheral/dn1/dn1", property="acpi-pcihp-bsel")
        self.qt.cmd(f"outl 0x{ACPI_PCIHP_SEL:x} 0x{bsel:x}")
        self.qt.cmd(f"outl 0x{ACPI_PCIHP_EJ:x} 0x1")  # slot 0
        self.qt.clock_step(1000)
        # The GPU refuses hot-unplug: still there, still working.
        self.assertTrue(self.gpu_present())
        self.assertEqual(self.qt.cfg_read(self.pci.devices[GPU], 0) & 0xFFFF, C.DMS_PCI_VENDOR_ID)
        self.gpu_window_rx()
        self.inject(frame(b"p2p" * 300))
        self.assert_responsive()
        mem = self.pci.bar(GPU, 2)[0]
        self.assertEqual(self.qt.memread(mem, 900), b"p2p" * 300)

    def test_4b_slot_power_off_then_dma_to_the_old_window(self):
        port = self.pci.parent[self.pci.devices[GPU]]
        cap = self.pci.capability(port, 0x10)  # PCI Express
        ctl = self.qt.cfg_read(port, cap + 0x18)  # Slot Control | Slot Status << 16
        self.qt.cfg_write(port, cap + 0x18, (ctl & 0xFFFF) | 1 << 10)  # power off
        self.qt.clock_step(1000)
        # The GPU refuses hot-unplug here too (qemu-hooks.patch); were it
        # removed, its exit detaches it from the model first. Unpowered, it
        # is reset (its BARs unmapped): DMA to the old window faults.
        self.assertTrue(self.gpu_present())
        self.gpu_window_rx()
        self.inject(frame(b"p2p" * 300))
        self.assert_responsive(gpu_powered=False)
        self.assertGreater(self.qt.readl(self.nic + C.DMS_NIC_REG_STAT_RX_DMA_ERR), 0)

    def test_5_header_longer_than_the_header_buffer(self):
        self.rx_queue(hbuf_size=64)
        self.qt.writel(self.nic + C.DMS_NIC_REG_RX_CTRL, C.DMS_NIC_RX_HDR_SPLIT)
        f = deep_header_frame(b"q" * 500)
        self.inject(f)
        self.assert_responsive()
        data = self.qt.memread(HDATA, HBUF_STRIDE)
        self.assertEqual(data[64:], bytes([CANARY]) * (HBUF_STRIDE - 64),
                         "the NIC wrote past the 64-byte header buffer")


if __name__ == "__main__":
    unittest.main(verbosity=2)
