"""QEMU level, no guest kernel: frames injected through a stream netdev land
in guest memory split into header and payload buffers with their
completions; frames the test posts for TX come out of the netdev; malformed
rings and descriptors are counted and dropped, and QEMU keeps running."""

import os
import socket
import struct
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from qtest import SWITCH, Pci, QTest  # noqa: E402
from devmemsim.contract import C  # noqa: E402

NIC = (C.DMS_PCI_VENDOR_ID, C.DMS_PCI_DEVICE_ID_NIC)
RX_CTRL, MTU, TX_CTRL = C.DMS_NIC_REG_RX_CTRL, C.DMS_NIC_REG_MTU, C.DMS_NIC_REG_TX_CTRL
STAT_RX_DROP, STAT_RX_DMA_ERR = C.DMS_NIC_REG_STAT_RX_DROP, C.DMS_NIC_REG_STAT_RX_DMA_ERR
STAT_TX_DESC_ERR, STAT_RING_ERR = C.DMS_NIC_REG_STAT_TX_DESC_ERR, C.DMS_NIC_REG_STAT_RING_ERR
RXQ_CTRL, RXQ_LOG2 = C.DMS_NIC_RXQ_CTRL, C.DMS_NIC_RXQ_RING_LOG2
HBUF_BASE, PBUF_BASE, RCMPL_BASE = C.DMS_NIC_RXQ_HBUF_BASE_LO, C.DMS_NIC_RXQ_PBUF_BASE_LO, C.DMS_NIC_RXQ_CMPL_BASE_LO
HBUF_TAIL, PBUF_TAIL = C.DMS_NIC_RXQ_HBUF_TAIL, C.DMS_NIC_RXQ_PBUF_TAIL
HBUF_SIZE, PBUF_SIZE = C.DMS_NIC_RXQ_HBUF_SIZE, C.DMS_NIC_RXQ_PBUF_SIZE
TXQ_CTRL, TXQ_LOG2, TX_TAIL = C.DMS_NIC_TXQ_CTRL, C.DMS_NIC_TXQ_RING_LOG2, C.DMS_NIC_TXQ_TAIL
TDESC_BASE, TCMPL_BASE = C.DMS_NIC_TXQ_DESC_BASE_LO, C.DMS_NIC_TXQ_CMPL_BASE_LO
F_GEN, F_SOP, F_EOP, F_HDR = C.DMS_RX_F_GEN, C.DMS_RX_F_SOP, C.DMS_RX_F_EOP, C.DMS_RX_F_HDR
F_PAY, F_SPLIT, F_CSUM_OK, F_ERR = C.DMS_RX_F_PAY, C.DMS_RX_F_SPLIT, C.DMS_RX_F_CSUM_OK, C.DMS_RX_F_ERR
TX_SOP, TX_EOP, TXC_GEN = C.DMS_TX_F_SOP, C.DMS_TX_F_EOP, C.DMS_TX_C_GEN

RAM = 0x1000000  # rings and buffers in guest RAM from 16 MiB
HBUF, PBUF, RCMPL, TDESC, TCMPL = RAM, RAM + 0x1000, RAM + 0x2000, RAM + 0x3000, RAM + 0x4000
HDATA, PDATA, TDATA = RAM + 0x10000, RAM + 0x100000, RAM + 0x200000


def frame(payload: bytes) -> bytes:
    """Ethernet + IPv4 + TCP (checksums right) carrying payload."""
    def csum(b):
        if len(b) % 2:
            b += b"\0"
        s = sum(struct.unpack(f"!{len(b) // 2}H", b))
        while s >> 16:
            s = (s & 0xFFFF) + (s >> 16)
        return ~s & 0xFFFF
    src, dst = bytes([10, 10, 0, 2]), bytes([10, 10, 0, 1])
    tcp = struct.pack("!HHIIBBHHH", 40000, 5201, 1, 0, 5 << 4, 0x18, 65535, 0, 0) + payload
    pseudo = src + dst + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", csum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0, 64, 6, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return bytes.fromhex("525400d50000525400d50001") + b"\x08\x00" + ip + tcp


class Nic(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dms-nic-")
        path = os.path.join(cls.tmp, "wire.sock")
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(1)
        cls.qt = QTest(*SWITCH,
                       "-netdev", f"stream,id=wire,server=off,addr.type=unix,addr.path={path}",
                       "-device", "devmemsim-nic,node=dms,bus=dn0,netdev=wire",
                       "-device", "devmemsim-gpu,node=dms,bus=dn1", "-m", "256M", qmp=True)
        srv.settimeout(10)
        cls.wire, _ = srv.accept()
        srv.close()
        cls.pci = Pci(cls.qt)
        cls.regs = cls.pci.bar(NIC, 0)[0]

    @classmethod
    def tearDownClass(cls):
        cls.wire.close()
        cls.qt.close()

    def w(self, off, val):
        self.qt.writel(self.regs + off, val)

    def r(self, off):
        return self.qt.readl(self.regs + off)

    def qw(self, off, val):
        self.w(C.DMS_NIC_Q_BASE(0) + off, val)

    def setUp(self):
        self.w(C.DMS_NIC_REG_CTRL, C.DMS_NIC_CTRL_RESET)
        self.qt.clock_step(1000)
        self.qw(RXQ_LOG2, 4)  # 16 entries
        for reg, base in ((HBUF_BASE, HBUF), (PBUF_BASE, PBUF), (RCMPL_BASE, RCMPL)):
            self.qw(reg, base)
            self.qw(reg + 4, 0)
        self.qw(HBUF_SIZE, 256)
        self.qw(PBUF_SIZE, 4096)
        self.qt.memwrite(RCMPL, bytes(16 * 32))
        self.qw(RXQ_CTRL, 1)
        for i in range(8):
            self.qt.memwrite(HBUF + 16 * i, struct.pack("<QH6x", HDATA + 256 * i, 100 + i))
            self.qt.memwrite(PBUF + 16 * i, struct.pack("<QH6x", PDATA + 4096 * i, 200 + i))
        self.qw(HBUF_TAIL, 8)
        self.qw(PBUF_TAIL, 8)

    def inject(self, f: bytes):
        self.wire.sendall(struct.pack("!I", len(f)) + f)
        for _ in range(50):
            self.qt.clock_step(100000)

    def completion(self, i):
        return struct.unpack("<HHHHIIHHIQ", self.qt.memread(RCMPL + 32 * i, 32))

    def test_rx_header_split_into_guest_memory(self):
        self.w(RX_CTRL, C.DMS_NIC_RX_HDR_SPLIT | C.DMS_NIC_RX_CSUM)
        payload = bytes(range(256)) * 5
        f = frame(payload)
        self.inject(f)
        flags, hid, pid, hlen, plen, _, _, _, flen, _ = self.completion(0)
        self.assertEqual(flags & (F_GEN | F_SOP | F_EOP | F_HDR | F_PAY | F_SPLIT | F_CSUM_OK),
                         F_GEN | F_SOP | F_EOP | F_HDR | F_PAY | F_SPLIT | F_CSUM_OK)
        self.assertEqual((hid, pid, hlen, plen, flen), (100, 200, 54, len(payload), len(f)))
        self.assertEqual(self.qt.memread(HDATA, 54), f[:54])
        self.assertEqual(self.qt.memread(PDATA, len(payload)), payload)

    def test_tx_frame_reaches_the_wire(self):
        self.qw(TXQ_LOG2, 4)
        self.qw(TDESC_BASE, TDESC)
        self.qw(TDESC_BASE + 4, 0)
        self.qw(TCMPL_BASE, TCMPL)
        self.qw(TCMPL_BASE + 4, 0)
        self.qw(TXQ_CTRL, 1)
        f = frame(b"hello from the NIC" * 20)
        self.qt.memwrite(TDATA, f[:54])
        self.qt.memwrite(TDATA + 0x1000, f[54:])
        self.qt.memwrite(TDESC, struct.pack("<QIHH", TDATA, 54, TX_SOP, 0) +
                         struct.pack("<QIHH", TDATA + 0x1000, len(f) - 54, TX_EOP, 9))
        self.qw(TX_TAIL, 2)
        for _ in range(20):
            self.qt.clock_step(100000)
        self.wire.settimeout(10)
        hdr = self.wire.recv(4, socket.MSG_WAITALL)
        (n,) = struct.unpack("!I", hdr)
        self.assertEqual(self.wire.recv(n, socket.MSG_WAITALL), f)
        flags, tag, _ = struct.unpack("<HHI", self.qt.memread(TCMPL, 8))
        self.assertEqual((flags, tag), (TXC_GEN, 9))

    def test_ptp_clock_follows_the_virtual_clock(self):
        """v1.6: the PTP clock reads QEMU's virtual time at the access, even
        while the model is idle (nothing steps it), and an RX frame carries
        the time it arrived."""
        self.w(C.DMS_NIC_REG_PTP_SET_LO, 0)
        self.w(C.DMS_NIC_REG_PTP_SET_HI, 1)
        self.w(C.DMS_NIC_REG_PTP_CMD, C.DMS_NIC_PTP_CMD_SET)
        t0 = self.qt.readq(self.regs + C.DMS_NIC_REG_PTP_TIME_LO)
        self.qt.clock_step(123456789)
        t1 = self.qt.readq(self.regs + C.DMS_NIC_REG_PTP_TIME_LO)
        self.assertGreaterEqual(t0, 1 << 32)
        self.assertEqual(t1 - t0, 123456789)
        self.w(C.DMS_NIC_REG_PTP_CTRL, C.DMS_NIC_PTP_RX_ALL)
        self.qt.clock_step(1000000)
        self.inject(frame(b"stamp me" * 10))
        t2 = self.qt.readq(self.regs + C.DMS_NIC_REG_PTP_TIME_LO)
        ts_hi, ts_lo = struct.unpack("<HI", self.qt.memread(RCMPL + 26, 6))
        self.assertTrue(ts_hi & C.DMS_RX_TS_VALID)
        stamp = (ts_hi & C.DMS_RX_TS_HI_MASK) << 32 | ts_lo
        self.assertGreaterEqual(stamp, t1 + 1000000)
        self.assertLessEqual(stamp, t2)

    def test_malformed_input_is_counted_and_survived(self):
        # Ring index beyond the ring, and a payload buffer outside guest RAM.
        self.qw(PBUF_TAIL, 999)
        self.assertEqual(self.r(STAT_RING_ERR), 1)
        self.qt.memwrite(PBUF, struct.pack("<QH6x", 0xFEE00000, 200))  # interrupt controller
        self.w(RX_CTRL, 0)
        self.inject(frame(b"x" * 100))
        flags = self.completion(0)[0]
        self.assertTrue(flags & F_ERR)
        self.assertEqual(self.r(STAT_RX_DMA_ERR), 1)
        # TX: zero-length and too many fragments.
        self.qw(TXQ_LOG2, 5)
        self.qw(TDESC_BASE, TDESC)
        self.qw(TDESC_BASE + 4, 0)
        self.qw(TCMPL_BASE, TCMPL)
        self.qw(TCMPL_BASE + 4, 0)
        self.qw(TXQ_CTRL, 1)
        descs = struct.pack("<QIHH", TDATA, 0, TX_SOP | TX_EOP, 1)
        descs += b"".join(struct.pack("<QIHH", TDATA, 64, TX_SOP if i == 0 else 0, 0) for i in range(20))
        self.qt.memwrite(TDESC, descs)
        self.qw(TX_TAIL, 21)
        for _ in range(20):
            self.qt.clock_step(100000)
        # zero length; 19 descriptors without EOP; the orphan after them
        self.assertEqual(self.r(STAT_TX_DESC_ERR), 3)
        # An oversized frame is dropped.
        self.inject(frame(b"y" * 3000))
        self.assertEqual(self.r(STAT_RX_DROP), 1)
        self.assertTrue(self.qt.alive())
        self.assertEqual(self.r(C.DMS_NIC_REG_ID), C.DMS_NIC_ID_MAGIC)


class StalledPeer(unittest.TestCase):
    """QEMU listens on the wire, as a link's first node does, and its peer
    stops reading: the NIC's frames wait in QEMU's net queue while the main
    loop (qtest, QMP, the model's steps) goes on, and they all arrive, in
    order, once the peer reads again."""

    FRAMES = 1000  # 1.5 MB: far more than a UNIX socket buffers

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dms-nic-")
        path = os.path.join(self.tmp, "wire.sock")
        self.qt = QTest(*SWITCH,
                        "-netdev", f"stream,id=wire,server=on,addr.type=unix,addr.path={path}",
                        "-device", "devmemsim-nic,node=dms,bus=dn0,netdev=wire",
                        "-device", "devmemsim-gpu,node=dms,bus=dn1", "-m", "256M", qmp=True)
        # A hung main loop must fail the test, not hang it.
        self.qt.sock.settimeout(30)
        self.wire = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.wire.connect(path)
        self.qt.clock_step(1000)  # the main loop accepts the connection
        self.regs = Pci(self.qt).bar(NIC, 0)[0]

    def tearDown(self):
        self.wire.close()
        self.qt.close()

    def qw(self, off, val):
        self.qt.writel(self.regs + C.DMS_NIC_Q_BASE(0) + off, val)

    def test_main_loop_runs_while_the_peer_reads_nothing(self):
        self.qw(TXQ_LOG2, 10)
        for reg, base in ((TDESC_BASE, TDESC), (TCMPL_BASE, RAM + 0x8000)):
            self.qw(reg, base)
            self.qw(reg + 4, 0)
        self.qw(TXQ_CTRL, 1)
        f = frame(b"z" * 1460)
        self.qt.memwrite(TDATA, f)
        desc = struct.pack("<QIHH", TDATA, len(f), TX_SOP | TX_EOP, 0)
        self.qt.memwrite(TDESC, desc * self.FRAMES)
        self.qw(TX_TAIL, self.FRAMES)
        try:
            for _ in range(50):
                self.qt.clock_step(100000)
            self.assertEqual(self.qt.qmp("query-status")["status"], "running")
        except socket.timeout:
            self.fail("QEMU's main loop stopped while its peer read nothing")
        got = b""
        want = (4 + len(f)) * self.FRAMES
        self.wire.setblocking(False)
        for _ in range(2000):
            try:
                while True:
                    data = self.wire.recv(1 << 16)
                    if not data:
                        break
                    got += data
            except BlockingIOError:
                pass
            if len(got) >= want:
                break
            self.qt.clock_step(100000)
        self.assertEqual(got, (struct.pack("!I", len(f)) + f) * self.FRAMES)


if __name__ == "__main__":
    unittest.main(verbosity=2)
