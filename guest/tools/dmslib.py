"""dmslib: guest-side access to the devmemsim GPU and to devmem TCP bindings.

Shared by dms-gpu and dms-devmem (both import it from their own directory):
the dmsgpu ioctls (their ctypes structures mirror guest/include/uapi/dmsgpu.h;
tests/guest/test_gpu.py checks that they match), /dev/dmsgpuN and its
dma-bufs, CRC32C on the CPU, and binding a dma-buf to NIC queues over the
netdev generic netlink family. Python 3 standard library only.
"""

import argparse
import array
import ctypes
import errno
import fcntl
import functools
import mmap
import os
import random
import socket
import struct
import sys

DEFAULT_DEVICE = "/dev/dmsgpu0"

# --- UAPI (guest/include/uapi/dmsgpu.h) ------------------------------------

_IOC_WRITE, _IOC_READ = 1, 2
DMSGPU_IOCTL_MAGIC = 0xD5


class Info(ctypes.Structure):
    _fields_ = [("mem_size", ctypes.c_uint64), ("mem_used", ctypes.c_uint64),
                ("mem_free", ctypes.c_uint64), ("hw_version", ctypes.c_uint32),
                ("buffers", ctypes.c_uint32)]


class Alloc(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint64), ("align", ctypes.c_uint64),
                ("offset", ctypes.c_uint64), ("flags", ctypes.c_uint32),
                ("fd", ctypes.c_int32)]


class Copy(ctypes.Structure):
    _fields_ = [("fd", ctypes.c_int32), ("direction", ctypes.c_uint32),
                ("offset", ctypes.c_uint64), ("len", ctypes.c_uint64),
                ("user_ptr", ctypes.c_uint64)]


class Crc(ctypes.Structure):
    _fields_ = [("fd", ctypes.c_int32), ("seed", ctypes.c_uint32),
                ("offset", ctypes.c_uint64), ("len", ctypes.c_uint64),
                ("crc", ctypes.c_uint32), ("flags", ctypes.c_uint32)]


class Range(ctypes.Structure):
    _fields_ = [("offset", ctypes.c_uint64), ("len", ctypes.c_uint64)]


class CrcList(ctypes.Structure):
    _fields_ = [("fd", ctypes.c_int32), ("seed", ctypes.c_uint32),
                ("count", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("ranges", ctypes.c_uint64), ("crc", ctypes.c_uint32),
                ("reserved", ctypes.c_uint32)]


DMSGPU_CRC_LIST_MAX = 65536


def _ioc(direction, nr, struct):
    return (direction << 30) | (ctypes.sizeof(struct) << 16) | (DMSGPU_IOCTL_MAGIC << 8) | nr


DMSGPU_IOCTL_INFO = _ioc(_IOC_READ, 0x00, Info)
DMSGPU_IOCTL_ALLOC = _ioc(_IOC_READ | _IOC_WRITE, 0x01, Alloc)
DMSGPU_IOCTL_COPY = _ioc(_IOC_WRITE, 0x02, Copy)
DMSGPU_IOCTL_CRC = _ioc(_IOC_READ | _IOC_WRITE, 0x03, Crc)
DMSGPU_IOCTL_CRC_LIST = _ioc(_IOC_READ | _IOC_WRITE, 0x04, CrcList)
DMSGPU_COPY_TO_DEVICE = 0
DMSGPU_COPY_FROM_DEVICE = 1

# --- CRC32C on the CPU -------------------------------------------------------
#
# No CRC32C in Python's standard library and no compiler in the guest, and a
# byte loop is far too slow for 64 MiB under TCG. CRC arithmetic is
# polynomial arithmetic over GF(2), which Python's big integers do with
# shifts and XORs at C speed: the message becomes one integer M (bits in
# processing order, first bit most significant), and the CRC is
# (seed * x^n + M * x^32) mod P, folded down half by half.

_P = 0x11EDC6F41  # CRC32C (Castagnoli), normal form with the x^32 term
_REV8 = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))


def _rev32(v):
    return int.from_bytes(v.to_bytes(4, "little").translate(_REV8), "big")


def _mod_small(v):
    while v.bit_length() > 32:
        v ^= _P << (v.bit_length() - 33)
    return v


def _clmul(a, b):
    """Carry-less product; b is small (its set bits are iterated)."""
    r = 0
    while b:
        low = b & -b
        r ^= a << (low.bit_length() - 1)
        b ^= low
    return r


def _x_pow_mod(n):
    """x^n mod P."""
    r, base = 1, 2
    while n:
        if n & 1:
            r = _mod_small(_clmul(r, base))
        base = _mod_small(_clmul(base, base))
        n >>= 1
    return r


def _mod(v):
    """v mod P: replace the top half H * x^s by H * (x^s mod P) until small."""
    while v.bit_length() > 256:
        s = v.bit_length() // 2
        best_s, best_r = s, _x_pow_mod(s)
        r = best_r
        for t in range(s + 1, s + 64):  # a sparse x^t mod P means fewer shifts
            r = _mod_small(r << 1)
            if r.bit_count() < best_r.bit_count():
                best_s, best_r = t, r
        v = _clmul(v >> best_s, best_r) ^ (v & ((1 << best_s) - 1))
    return _mod_small(v)


def crc32c(data, crc=0xFFFFFFFF):
    """Linux's crc32c(crc, data): the reflected CRC32C register after data,
    no final inversion. The standard CRC32C is crc32c(data) ^ 0xffffffff."""
    n = len(data) * 8
    m = int.from_bytes(bytes(data).translate(_REV8), "big")
    return _rev32(_mod((_rev32(crc) << n) ^ (m << 32)))


# --- helpers -----------------------------------------------------------------

class StepError(Exception):
    """A step failed; errno is set when the kernel refused something."""

    def __init__(self, message, err=None):
        super().__init__(message)
        self.errno = err


def errname(err):
    return errno.errorcode.get(err, str(err))


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = text.strip().upper()
    try:
        if t[-1:] in units:
            return int(t[:-1], 0) * units[t[-1]]
        return int(t, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad size {text!r}") from None


@functools.lru_cache(maxsize=2)  # steps often check what the previous one wrote
def pattern(name, size, seed=0):
    if name == "zero":
        return bytes(size)
    if name == "ones":
        return b"\xff" * size
    if name == "incr":
        return (bytes(range(256)) * (size // 256 + 1))[:size]
    if name == "offset":
        words = array.array("Q", range(seed, seed + size + 8, 8))
        if sys.byteorder != "little":
            words.byteswap()
        return words.tobytes()[:size]
    if name == "random":
        return random.Random(seed).randbytes(size)
    raise StepError(f"unknown pattern {name!r} (zero, ones, incr, offset, random)")


PATTERNS = ("zero", "ones", "incr", "offset", "random")


def first_difference(a, b):
    if len(a) != len(b):
        return min(len(a), len(b))
    if a == b:
        return None
    lo, hi = 0, len(a)  # bisect on slices: C-speed compares
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] != b[lo:mid]:
            hi = mid
        else:
            lo = mid
    return lo


class Gpu:
    """An open /dev/dmsgpuN."""

    def __init__(self, path):
        try:
            self.fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except OSError as e:
            raise StepError(f"cannot open {path}: {errname(e.errno)} ({e.strerror})", e.errno) from None
        self.path = path

    def ioctl(self, name, request, arg):
        try:
            fcntl.ioctl(self.fd, request, arg, True)
        except OSError as e:
            raise StepError(f"{name}: {errname(e.errno)} ({e.strerror})", e.errno) from None
        return arg

    def info(self):
        i = self.ioctl("DMSGPU_IOCTL_INFO", DMSGPU_IOCTL_INFO, Info())
        return {"device": self.path, "mem_size": i.mem_size, "mem_used": i.mem_used,
                "mem_free": i.mem_free, "buffers": i.buffers,
                "hw_version": f"{i.hw_version >> 16}.{i.hw_version & 0xffff}"}

    def alloc(self, size, align=0):
        a = self.ioctl("DMSGPU_IOCTL_ALLOC", DMSGPU_IOCTL_ALLOC, Alloc(size=size, align=align))
        return Buffer(self, a.fd, a.offset, a.size)


class Buffer:
    """A dma-buf of device memory and, lazily, its CPU mapping."""

    def __init__(self, gpu, fd, offset, size):
        self.gpu, self.fd, self.offset, self.size = gpu, fd, offset, size
        self._map = None

    def close(self):
        if self._map is not None:
            self._map.close()
        os.close(self.fd)

    @property
    def map(self):
        if self._map is None:
            try:
                self._map = mmap.mmap(self.fd, self.size, mmap.MAP_SHARED,
                                      mmap.PROT_READ | mmap.PROT_WRITE)
            except OSError as e:
                raise StepError(f"mmap: {errname(e.errno)} ({e.strerror})", e.errno) from None
        return self._map

    def span(self, offset, length):
        """The range [offset, offset+length); length None = to the end."""
        if length is None:
            length = max(self.size - offset, 0)
        return offset, length

    def cpu_write(self, offset, data):
        if offset + len(data) > self.size:
            raise StepError(f"range {offset}+{len(data)} beyond the {self.size}-byte buffer")
        self.map[offset:offset + len(data)] = data

    def cpu_read(self, offset, length):
        if offset + length > self.size:
            raise StepError(f"range {offset}+{length} beyond the {self.size}-byte buffer")
        return self.map[offset:offset + length]

    def copy(self, direction, offset, data):
        """Run the copy engine between the buffer and `data` (a bytearray)."""
        ptr = ctypes.addressof((ctypes.c_char * len(data)).from_buffer(data)) if data else 0
        c = Copy(fd=self.fd, direction=direction, offset=offset, len=len(data), user_ptr=ptr)
        self.gpu.ioctl("DMSGPU_IOCTL_COPY", DMSGPU_IOCTL_COPY, c)

    def crc(self, offset, length, seed=0xFFFFFFFF):
        c = Crc(fd=self.fd, seed=seed, offset=offset, len=length)
        return self.gpu.ioctl("DMSGPU_IOCTL_CRC", DMSGPU_IOCTL_CRC, c).crc

    def crc_list(self, ranges, seed=0xFFFFFFFF):
        """CRC over (offset, len) ranges in order, one engine job per
        gather list (DMSGPU_IOCTL_CRC_LIST)."""
        for i in range(0, len(ranges), DMSGPU_CRC_LIST_MAX):
            part = ranges[i:i + DMSGPU_CRC_LIST_MAX]
            arr = (Range * len(part))(*part)
            c = CrcList(fd=self.fd, seed=seed, count=len(part), ranges=ctypes.addressof(arr))
            seed = self.gpu.ioctl("DMSGPU_IOCTL_CRC_LIST", DMSGPU_IOCTL_CRC_LIST, c).crc
        return seed


# --- devmem TCP binding (netdev generic netlink) -------------------------------
#
# Binding a dma-buf to NIC queues makes the NIC's driver import it the way
# devmem TCP does (static dma_buf_attach + map), so the exporter can be
# checked against its real importer. The binding lasts while its netlink
# socket is open, i.e. until the process exits.

NETLINK_GENERIC, SOL_NETLINK, NETLINK_EXT_ACK = 16, 270, 11
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP, NLM_F_CAPPED, NLM_F_ACK_TLVS = 0x1, 0x4, 0x300, 0x100, 0x200
NLMSG_ERROR, NLMSG_DONE, NLMSGERR_ATTR_MSG = 2, 3, 1
GENL_ID_CTRL, CTRL_CMD_GETFAMILY = 16, 3
CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 1, 2
NLA_F_NESTED = 0x8000
# include/uapi/linux/netdev.h
NETDEV_CMD_BIND_RX, NETDEV_CMD_BIND_TX = 13, 15
NETDEV_A_DMABUF_IFINDEX, NETDEV_A_DMABUF_QUEUES, NETDEV_A_DMABUF_FD, NETDEV_A_DMABUF_ID = 1, 2, 3, 4
NETDEV_A_DMABUF_RX_PAGE_SIZE = 5
NETDEV_A_QUEUE_ID, NETDEV_A_QUEUE_TYPE = 1, 3
NETDEV_QUEUE_TYPE_RX = 0
NETDEV_CMD_PAGE_POOL_GET = 5
NETDEV_A_PAGE_POOL = {1: "id", 2: "ifindex", 3: "napi_id", 4: "inflight", 5: "inflight_mem",
                      6: "detach_time", 7: "dmabuf"}  # NETDEV_A_PAGE_POOL_* by number


def nla(kind, payload):
    hdr = struct.pack("=HH", 4 + len(payload), kind)
    return hdr + payload + bytes(-len(payload) % 4)


def nla_parse(data):
    attrs, off = {}, 0
    while off + 4 <= len(data):
        length, kind = struct.unpack_from("=HH", data, off)
        if length < 4:
            break
        attrs[kind & 0x3FFF] = data[off + 4:off + length]
        off += (length + 3) & ~3
    return attrs


class GenlSocket:
    """One generic netlink socket, for requests with one reply each."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        self.sock.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        self.sock.bind((0, 0))
        self.seq = 0

    def close(self):
        self.sock.close()

    def request(self, what, family, cmd, attrs, dump=False):
        """Send one request; return the attributes of its reply (a dump:
        the list of the attributes of every object)."""
        self.seq += 1
        body = struct.pack("=BBH", cmd, 1, 0) + attrs
        flags = NLM_F_REQUEST | (NLM_F_DUMP if dump else NLM_F_ACK)
        self.sock.send(struct.pack("=IHHII", 16 + len(body), family, flags, self.seq, 0) + body)
        reply, replies = {}, []
        while True:
            data = self.sock.recv(65536)
            off = 0
            while off + 16 <= len(data):
                length, kind, flags, seq, _ = struct.unpack_from("=IHHII", data, off)
                msg = data[off + 16:off + length]
                off += (length + 3) & ~3
                if seq != self.seq:
                    continue
                if kind not in (NLMSG_ERROR, NLMSG_DONE):
                    reply = nla_parse(msg[4:])
                    replies.append(reply)
                    continue
                err = -struct.unpack_from("=i", msg)[0]
                if not err:
                    return replies if dump else reply
                text = ""
                if flags & NLM_F_ACK_TLVS:
                    # The error, our request (its header only when capped),
                    # then the extended-ack TLVs.
                    echoed = 16 if flags & NLM_F_CAPPED else struct.unpack_from("=I", msg, 4)[0]
                    ext = nla_parse(msg[4 + ((echoed + 3) & ~3):])
                    text = ext.get(NLMSGERR_ATTR_MSG, b"").rstrip(b"\0").decode(errors="replace")
                raise StepError(f"{what}: {errname(err)} ({os.strerror(err)})"
                                + (f": {text}" if text else ""), err)

    def family(self, name):
        reply = self.request(f"netlink family {name}", GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                             nla(CTRL_ATTR_FAMILY_NAME, name.encode() + b"\0"))
        return struct.unpack("=H", reply[CTRL_ATTR_FAMILY_ID][:2])[0]


def bind_dmabuf(buf, ifname, rx_queues=None, rx_page_size=0):
    """Bind buf to ifname's RX queues (or for TX when rx_queues is None),
    RX in buffers of rx_page_size bytes (0: the kernel's, PAGE_SIZE).
    Returns (socket holding the binding, binding id)."""
    try:
        ifindex = socket.if_nametoindex(ifname)
    except OSError as e:
        raise StepError(f"no interface {ifname!r}: {errname(e.errno)}", e.errno) from None
    nl = GenlSocket()
    try:
        family = nl.family("netdev")
        attrs = nla(NETDEV_A_DMABUF_IFINDEX, struct.pack("=I", ifindex))
        attrs += nla(NETDEV_A_DMABUF_FD, struct.pack("=I", buf.fd))
        if rx_queues is None:
            what, cmd = "bind-tx", NETDEV_CMD_BIND_TX
        else:
            what, cmd = "bind-rx", NETDEV_CMD_BIND_RX
            for q in rx_queues:
                queue = nla(NETDEV_A_QUEUE_ID, struct.pack("=I", q))
                queue += nla(NETDEV_A_QUEUE_TYPE, struct.pack("=I", NETDEV_QUEUE_TYPE_RX))
                attrs += nla(NETDEV_A_DMABUF_QUEUES | NLA_F_NESTED, queue)
            if rx_page_size:
                attrs += nla(NETDEV_A_DMABUF_RX_PAGE_SIZE, struct.pack("=I", rx_page_size))
        reply = nl.request(what, family, cmd, attrs)
        return nl, struct.unpack("=I", reply[NETDEV_A_DMABUF_ID][:4])[0]
    except BaseException:
        nl.close()
        raise
