"""A small client of QEMU's qtest protocol, and a PCI enumerator over it.

QEMU runs with '-accel qtest -qtest unix:SOCK': no guest CPU runs; the test
reads and writes guest memory and I/O ports itself. Since no firmware runs
either, PCIe bridges and BARs are programmed here, as a BIOS would."""

import base64
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from devmemsim import topology  # noqa: E402
from devmemsim.paths import qemu_binary, qemu_env  # noqa: E402

QEMU = qemu_binary()
# The PCIe switch the CLI gives a default node: the NIC goes on NIC_PORT, the
# GPU on GPU_PORT. Other nodes: topology.load(CONFIG) or topology.from_table().
SWITCH = list(topology.DEFAULT.ports)
NIC_PORT, GPU_PORT = topology.DEFAULT.nics[0].bus, topology.DEFAULT.gpus[0].bus


class QTest:
    """QEMU under the qtest accelerator; with qmp=True also a QMP socket."""

    def __init__(self, *args, config: str = "", qmp: bool = False):
        if not QEMU.is_file():
            raise RuntimeError(f"{QEMU} missing: run ./devmemsim build first")
        self.dir = tempfile.mkdtemp(prefix="dms-qtest-")
        path = os.path.join(self.dir, "qtest.sock")
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(1)
        node = f"devmemsim-node,id=dms{',config=' + config if config else ''}"
        self.log = open(os.path.join(self.dir, "qemu.log"), "w+")
        self.proc = subprocess.Popen(
            [str(QEMU), "-M", "q35", "-accel", "qtest", "-qtest", f"unix:{path}",
             "-display", "none", "-nodefaults", "-no-user-config",
             "-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
             "-object", node,
             *(["-qmp", f"unix:{os.path.join(self.dir, 'qmp.sock')},server=on,wait=off"] if qmp else []),
             *args],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT, env=qemu_env())
        srv.settimeout(0.2)
        deadline = time.monotonic() + 60
        try:
            while True:
                try:
                    self.sock, _ = srv.accept()
                    break
                except socket.timeout:
                    if self.proc.poll() is not None or time.monotonic() > deadline:
                        self.proc.kill()
                        self.proc.wait()
                        raise RuntimeError(f"QEMU did not start: {self.output()}") from None
        finally:
            srv.close()
        self.buf = b""
        # QEMU connects before it creates devices; the first answer comes
        # once the machine is up (or never, if a device failed).
        try:
            self.cmd("endianness")
        except (RuntimeError, OSError):
            self.proc.wait(30)
            raise RuntimeError(f"QEMU did not start: {self.output()}") from None

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def cmd(self, line: str) -> str:
        self.sock.sendall(line.encode() + b"\n")
        while True:
            while b"\n" not in self.buf:
                data = self.sock.recv(4096)
                if not data:
                    raise RuntimeError(f"QEMU closed qtest during {line!r}: {self.output()}")
                self.buf += data
            reply, self.buf = self.buf.split(b"\n", 1)
            reply = reply.decode()
            if reply.startswith("IRQ"):
                continue
            if not reply.startswith("OK"):
                raise RuntimeError(f"qtest {line!r}: {reply}")
            return reply[3:]

    def clock_step(self, ns: int = 1000):
        self.cmd(f"clock_step {ns}")

    def memwrite(self, addr: int, data: bytes):
        self.cmd(f"b64write 0x{addr:x} 0x{len(data):x} {base64.b64encode(data).decode()}")

    def memread(self, addr: int, size: int) -> bytes:
        return base64.b64decode(self.cmd(f"b64read 0x{addr:x} 0x{size:x}"))

    def qmp(self, command: str, **arguments):
        """Run one QMP command (connecting on first use)."""
        if not hasattr(self, "_qmp"):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(os.path.join(self.dir, "qmp.sock"))
            self._qmp_sock, self._qmp = s, s.makefile("rw")
            json.loads(self._qmp.readline())  # greeting
            self._qmp_call("qmp_capabilities", {})
        return self._qmp_call(command, arguments)

    def _qmp_call(self, command, arguments):
        self._qmp.write(json.dumps({"execute": command, "arguments": arguments}) + "\n")
        self._qmp.flush()
        while True:
            msg = json.loads(self._qmp.readline())
            if "return" in msg:
                return msg["return"]
            if "error" in msg:
                raise RuntimeError(f"QMP {command}: {msg['error']['desc']}")

    def readl(self, addr: int) -> int:
        return int(self.cmd(f"readl 0x{addr:x}"), 16)

    def readq(self, addr: int) -> int:
        return int(self.cmd(f"readq 0x{addr:x}"), 16)

    def writel(self, addr: int, val: int):
        self.cmd(f"writel 0x{addr:x} 0x{val:x}")

    def writeq(self, addr: int, val: int):
        self.cmd(f"writeq 0x{addr:x} 0x{val:x}")

    def writeb(self, addr: int, val: int):
        self.cmd(f"writeb 0x{addr:x} 0x{val:x}")

    def writew(self, addr: int, val: int):
        self.cmd(f"writew 0x{addr:x} 0x{val:x}")

    def readb(self, addr: int) -> int:
        return int(self.cmd(f"readb 0x{addr:x}"), 16)

    def readw(self, addr: int) -> int:
        return int(self.cmd(f"readw 0x{addr:x}"), 16)

    def close(self):
        for f in (self.sock, getattr(self, "_qmp", None), getattr(self, "_qmp_sock", None)):
            try:
                if f:
                    f.close()
            except OSError:
                pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()

    # --- PCI configuration space through ports 0xcf8/0xcfc ---------------

    def _cf8(self, bus, dev, fn, off):
        self.cmd(f"outl 0xcf8 0x{0x80000000 | bus << 16 | dev << 11 | fn << 8 | (off & 0xfc):x}")

    def cfg_read(self, bdf, off) -> int:
        self._cf8(*bdf, off)
        return int(self.cmd("inl 0xcfc"), 16)

    def cfg_write(self, bdf, off, val):
        self._cf8(*bdf, off)
        self.cmd(f"outl 0xcfc 0x{val:x}")


class Pci:
    """Enumerate the switch topology and give every BAR an address."""

    MEM32 = 0xc0000000   # 32-bit window (q35 PCI hole)
    MEM64 = 0x800000000  # 64-bit window, above 32 GiB of RAM space

    def __init__(self, qt: QTest):
        self.qt = qt
        self.devices = {}  # (vendor, device) -> bdf (the last one found)
        self.parent = {}  # bdf -> bdf of the bridge above it (None on bus 0)
        self.ids = {}  # bdf -> (vendor, device)
        self.bars = {}  # (bdf, n) -> (address, size, is64, prefetchable)
        self.next32 = self.MEM32
        self.next64 = self.MEM64
        self._scan_bus(0, 1, None)

    def _scan_bus(self, bus, next_bus, parent) -> int:
        for dev in range(32):
            bdf = (bus, dev, 0)
            idw = self.qt.cfg_read(bdf, 0)
            if idw == 0xffffffff:
                continue
            vendor, device = idw & 0xffff, idw >> 16
            self.devices[(vendor, device)] = bdf
            self.ids[bdf] = (vendor, device)
            self.parent[bdf] = parent
            hdr = (self.qt.cfg_read(bdf, 0xc) >> 16) & 0x7f
            if hdr == 1:  # bridge: number its bus, scan behind it, open windows
                sec = next_bus
                self.qt.cfg_write(bdf, 0x18, 0xff << 16 | sec << 8 | bus)
                start32, start64 = self._align(self.next32, 1 << 20), self._align(self.next64, 1 << 20)
                self.next32, self.next64 = start32, start64
                next_bus = self._scan_bus(sec, sec + 1, bdf)
                self.qt.cfg_write(bdf, 0x18, (next_bus - 1) << 16 | sec << 8 | bus)
                self.next32 = self._align(self.next32, 1 << 20)
                self.next64 = self._align(self.next64, 1 << 20)
                self._window(bdf, start32, self.next32, start64, self.next64)
                self.qt.cfg_write(bdf, 0x4, 0x6)  # memory + bus master
            else:
                self._bars(bdf)
        return next_bus

    @staticmethod
    def _align(x, a):
        return (x + a - 1) & ~(a - 1)

    def _window(self, bdf, s32, e32, s64, e64):
        if e32 > s32:
            self.qt.cfg_write(bdf, 0x20, ((e32 - 1) >> 16 & 0xfff0) << 16 | (s32 >> 16 & 0xfff0))
        else:
            self.qt.cfg_write(bdf, 0x20, 0x0000fff0)
        if e64 > s64:
            self.qt.cfg_write(bdf, 0x24, ((e64 - 1) >> 16 & 0xfff0) << 16 | (s64 >> 16 & 0xfff0) | 0x00010001)
            self.qt.cfg_write(bdf, 0x28, s64 >> 32)
            self.qt.cfg_write(bdf, 0x2c, (e64 - 1) >> 32)
        else:
            self.qt.cfg_write(bdf, 0x24, 0x0000fff0)

    def bar_info(self, bdf, n):
        """(size, is64, prefetchable) of BAR n, or None if unimplemented."""
        off = 0x10 + 4 * n
        orig = self.qt.cfg_read(bdf, off)
        if orig & 1:
            return None
        is64 = (orig >> 1 & 3) == 2
        self.qt.cfg_write(bdf, off, 0xffffffff)
        lo = self.qt.cfg_read(bdf, off)
        self.qt.cfg_write(bdf, off, orig)
        hi = 0xffffffff
        if is64:
            orig_hi = self.qt.cfg_read(bdf, off + 4)
            self.qt.cfg_write(bdf, off + 4, 0xffffffff)
            hi = self.qt.cfg_read(bdf, off + 4)
            self.qt.cfg_write(bdf, off + 4, orig_hi)
        mask = (hi << 32 | (lo & ~0xf)) if is64 else (0xffffffff << 32 | (lo & ~0xf))
        if (lo & ~0xf) == 0 and (not is64 or hi == 0):
            return None
        size = ((~mask) & 0xffffffffffffffff) + 1
        return size, is64, bool(orig & 8)

    def _bars(self, bdf):
        n = 0
        while n < 6:
            info = self.bar_info(bdf, n)
            if info is None:
                n += 1
                continue
            size, is64, pref = info
            if pref and is64:
                addr = self.next64 = self._align(self.next64, size)
                self.next64 += size
            else:
                addr = self.next32 = self._align(self.next32, size)
                self.next32 += size
            self.qt.cfg_write(bdf, 0x10 + 4 * n, addr & 0xffffffff)
            if is64:
                self.qt.cfg_write(bdf, 0x14 + 4 * n, addr >> 32)
            self.bars[(bdf, n)] = (addr, size, is64, pref)
            n += 2 if is64 else 1
        self.qt.cfg_write(bdf, 0x4, 0x6)  # memory + bus master

    def capability(self, bdf, cap_id) -> int:
        """Config space offset of a capability, or 0."""
        off = self.qt.cfg_read(bdf, 0x34) & 0xFC
        while off:
            hdr = self.qt.cfg_read(bdf, off)
            if hdr & 0xFF == cap_id:
                return off
            off = (hdr >> 8) & 0xFC
        return 0

    def enable_msix(self, ids, vector: int, addr: int, data: int):
        """Enable MSI-X and point vector at guest RAM (addr), so a test can
        see the message land there instead of at an interrupt controller;
        or anywhere else. ids: (vendor, device), or the function's bdf."""
        bdf = ids if len(ids) == 3 else self.devices[ids]
        cap = self.capability(bdf, 0x11)
        assert cap, "no MSI-X capability"
        table = self.qt.cfg_read(bdf, cap + 4)
        base = self.bars[(bdf, table & 7)][0] + (table & ~7)
        entry = base + 16 * vector
        self.qt.writel(entry, addr & 0xFFFFFFFF)
        self.qt.writel(entry + 4, addr >> 32)
        self.qt.writel(entry + 8, data)
        self.qt.writel(entry + 12, 0)  # unmasked
        ctrl = self.qt.cfg_read(bdf, cap)
        self.qt.cfg_write(bdf, cap, (ctrl & 0xFFFF) | (1 << 31))  # enable

    def bar(self, ids, n):
        """(address, size, is64, prefetchable) of BAR n of device ids."""
        return self.bars[(self.devices[ids], n)]

    def functions(self, ids) -> list:
        """The bdfs of every function with these ids, in bus order."""
        return sorted(bdf for bdf, found in self.ids.items() if found == ids)
