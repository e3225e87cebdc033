"""An AF_XDP socket in zero-copy mode, in Python (ctypes; the guest has no
libxdp), for tests/guest/test_xdp.py. Runs on a guest node:

    python3 dms_xsk.py IFNAME QUEUE XSKMAP RX_N TX_N SRC_IP DST_IP DST_MAC PORT SIZE
    python3 dms_xsk.py --stream IFNAME QUEUE XSKMAP PORT SIZE STOPFILE

binds an AF_XDP socket to IFNAME's QUEUE with XDP_ZEROCOPY and
XDP_USE_NEED_WAKEUP (bind fails if the driver cannot do zero-copy), puts
it in the pinned XSKMAP at QUEUE, prints "ready", and then:

- receives RX_N frames (IPv4 UDP, what the XDP program redirects) and
  prints "rx" and the sha256 of each one's UDP payload;
- sends TX_N IPv4 UDP datagrams of SIZE random bytes from SRC_IP to
  DST_IP:PORT (to DST_MAC, from IFNAME's MAC) through the socket's TX ring,
  waits for their completions, and prints "tx" and the payloads' sha256.

With --stream it binds the same way, prints "ready", and receives until
STOPFILE exists and then a second passes without a frame, checking every
frame: IPv4 UDP to PORT with a SIZE-byte payload that is a sequence number
and the bytes stream_payload() derives from it (as test_xdp.py's sender
makes them), a number not seen before, in a frame of the receive half of
the UMEM that the kernel had (given to it on the fill ring and not handed
back since: a frame the driver posted twice comes back while the socket
holds it). It prints one JSON line: frames, bad, dup, double, foreign,
the sequence numbers received, the first few problems, and the socket's
XDP_STATISTICS.

Frames come and go through the rings the kernel shares with the socket
(include/uapi/linux/if_xdp.h); x86 stores are ordered, so plain reads and
writes of the producer and consumer indexes do.
"""

import ctypes
import hashlib
import json
import mmap
import os
import select
import socket
import struct
import sys
import time

AF_XDP, SOL_XDP = 44, 283
XDP_MMAP_OFFSETS, XDP_RX_RING, XDP_TX_RING = 1, 2, 3
XDP_STATISTICS = 7
XDP_UMEM_REG, XDP_UMEM_FILL_RING, XDP_UMEM_COMPLETION_RING = 4, 5, 6
XDP_ZEROCOPY, XDP_USE_NEED_WAKEUP = 1 << 2, 1 << 3
XDP_RING_NEED_WAKEUP = 1
PGOFF_RX, PGOFF_TX = 0, 0x80000000
PGOFF_FILL, PGOFF_COMPLETION = 0x100000000, 0x180000000
MSG_DONTWAIT = 0x40
SYS_BPF = 321  # x86_64
BPF_MAP_UPDATE_ELEM, BPF_OBJ_GET = 2, 7

FRAME = 2048
FRAMES = 1024  # the first half receives, the second half sends
RING = 512

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def check(ret, what):
    if ret < 0:
        err = ctypes.get_errno()
        sys.exit(f"{what}: {os.strerror(err)}")
    return ret


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    return check(libc.syscall(SYS_BPF, cmd, buf, len(buf)), f"bpf({cmd})")


def setsockopt(fd, opt, value):
    buf = ctypes.create_string_buffer(value, len(value))
    check(libc.setsockopt(fd, SOL_XDP, opt, buf, len(value)), f"setsockopt({opt})")


class Ring:
    """A producer/consumer ring of descriptors of desc_size bytes."""

    def __init__(self, fd, offsets, pgoff, desc_size):
        self.producer, self.consumer, self.desc, self.flags = offsets
        self.desc_size = desc_size
        self.map = mmap.mmap(fd, self.desc + RING * desc_size, mmap.MAP_SHARED,
                             mmap.PROT_READ | mmap.PROT_WRITE, offset=pgoff)
        # The indexes as 32-bit words: struct.pack_into() zeroes its target
        # before it writes the value (CPython's s_pack_internal()), and the
        # kernel may read an index in between (a fill-ring producer read as
        # 0 looks like 2^32 - consumer new frames: the kernel takes stale
        # addresses and posts frames twice). A memoryview item store is one
        # 32-bit write.
        self.words = memoryview(self.map).cast("I")

    def u32(self, off, value=None):
        if value is None:
            return self.words[off // 4]
        self.words[off // 4] = value & 0xffffffff
        return value

    def slot(self, idx):
        return self.desc + (idx % RING) * self.desc_size

    def need_wakeup(self):
        return self.u32(self.flags) & XDP_RING_NEED_WAKEUP


def stream_payload(seq, size):
    """The SIZE-byte payload of stream datagram SEQ."""
    head = struct.pack("!Q", seq)
    body = hashlib.sha256(head).digest()
    return head + (body * (size // len(body) + 1))[:size - len(head)]


def checksum(data):
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff


def udp_frame(src_mac, dst_mac, src_ip, dst_ip, port, payload):
    udp = struct.pack("!HHHH", port, port, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                     socket.inet_aton(src_ip), socket.inet_aton(dst_ip))
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return dst_mac + src_mac + b"\x08\x00" + ip + udp


class Xsk:
    def __init__(self, ifname, queue):
        self.fd = check(libc.socket(AF_XDP, socket.SOCK_RAW, 0), "socket(AF_XDP)")
        self.umem = mmap.mmap(-1, FRAME * FRAMES)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(self.umem))
        setsockopt(self.fd, XDP_UMEM_REG, struct.pack("QQIIII", addr, FRAME * FRAMES, FRAME, 0, 0, 0))
        for opt in (XDP_UMEM_FILL_RING, XDP_UMEM_COMPLETION_RING, XDP_RX_RING, XDP_TX_RING):
            setsockopt(self.fd, opt, struct.pack("i", RING))
        off = ctypes.create_string_buffer(128)
        size = ctypes.c_uint32(128)
        check(libc.getsockopt(self.fd, SOL_XDP, XDP_MMAP_OFFSETS, off, ctypes.byref(size)),
              "getsockopt(XDP_MMAP_OFFSETS)")
        rx, tx, fill, comp = (struct.unpack_from("QQQQ", off.raw, 32 * i) for i in range(4))
        self.rx = Ring(self.fd, rx, PGOFF_RX, 16)
        self.tx = Ring(self.fd, tx, PGOFF_TX, 16)
        self.fill = Ring(self.fd, fill, PGOFF_FILL, 8)
        self.comp = Ring(self.fd, comp, PGOFF_COMPLETION, 8)
        # The fill ring gets the receive half of the frames before the bind.
        for i in range(FRAMES // 2):
            struct.pack_into("Q", self.fill.map, self.fill.slot(i), i * FRAME)
        self.fill.u32(self.fill.producer, FRAMES // 2 if FRAMES // 2 < RING else RING)
        sxdp = struct.pack("HHIII", AF_XDP, XDP_ZEROCOPY | XDP_USE_NEED_WAKEUP,
                           socket.if_nametoindex(ifname), queue, 0)
        buf = ctypes.create_string_buffer(sxdp, len(sxdp))
        check(libc.bind(self.fd, buf, len(sxdp)), "bind(XDP_ZEROCOPY)")

    def join_map(self, path, queue):
        """Put the socket in the pinned XSKMAP at queue."""
        name = ctypes.create_string_buffer(path.encode())
        map_fd = bpf(BPF_OBJ_GET, struct.pack("QII", ctypes.addressof(name), 0, 0))
        key, value = ctypes.c_uint32(queue), ctypes.c_uint32(self.fd)
        bpf(BPF_MAP_UPDATE_ELEM, struct.pack("IIQQQ", map_fd, 0, ctypes.addressof(key),
                                             ctypes.addressof(value), 0))

    def wake_rx(self):
        """The driver ran out of fill-ring frames: poll() wakes its NAPI."""
        if self.fill.need_wakeup():
            p = select.poll()
            p.register(self.fd, select.POLLIN)
            p.poll(0)

    def receive(self, n, timeout=60):
        """The UDP payloads of n frames, as they come."""
        got, cons = [], self.rx.u32(self.rx.consumer)
        deadline = time.monotonic() + timeout
        while len(got) < n and time.monotonic() < deadline:
            prod = self.rx.u32(self.rx.producer)
            if prod == cons:
                self.wake_rx()
                time.sleep(0.001)
                continue
            fill = self.fill.u32(self.fill.producer)
            while cons != prod:
                addr, length, _ = struct.unpack_from("QII", self.rx.map, self.rx.slot(cons))
                got.append(bytes(self.umem[addr + 42:addr + length]))
                struct.pack_into("Q", self.fill.map, self.fill.slot(fill), addr & ~(FRAME - 1))
                cons += 1
                fill += 1
            self.rx.u32(self.rx.consumer, cons)
            self.fill.u32(self.fill.producer, fill)
        return got

    def statistics(self):
        """XDP_STATISTICS: struct xdp_statistics as a dict."""
        names = ("rx_dropped", "rx_invalid_descs", "tx_invalid_descs", "rx_ring_full",
                 "rx_fill_ring_empty_descs", "tx_ring_empty_descs")
        buf = ctypes.create_string_buffer(8 * len(names))
        size = ctypes.c_uint32(len(buf))
        check(libc.getsockopt(self.fd, SOL_XDP, XDP_STATISTICS, buf, ctypes.byref(size)),
              "getsockopt(XDP_STATISTICS)")
        return dict(zip(names, struct.unpack_from(f"{len(names)}Q", buf.raw)))

    def check_frame(self, addr, length, port, size, seen, report):
        """One frame of the stream: its problem, or None."""
        frame = bytes(self.umem[addr:addr + length])
        if length != 42 + size or frame[12:14] != b"\x08\x00" or frame[23] != 17:
            return f"frame at {addr:#x}: {length} bytes, not IPv4 UDP with {size} bytes of payload"
        if struct.unpack_from("!H", frame, 36)[0] != port:
            return f"frame at {addr:#x}: UDP port {struct.unpack_from('!H', frame, 36)[0]}"
        seq = struct.unpack_from("!Q", frame, 42)[0]
        if frame[42:] != stream_payload(seq, size):
            return f"frame at {addr:#x}: payload of datagram {seq} changed"
        n = report["frames"]
        if seq in seen:
            report["dup"] += 1
            return f"frame {n} at {addr:#x}: datagram {seq} again (frame {seen[seq][0]} at {seen[seq][1]:#x})"
        seen[seq] = (n, addr)
        return None

    def stream(self, port, size, stopfile):
        """Receive and check frames until stopfile exists and a second
        passes without one (see the top of this file)."""
        kernel = {i * FRAME for i in range(FRAMES // 2)}
        report = {"frames": 0, "bad": 0, "dup": 0, "double": 0, "foreign": 0, "problems": []}
        seen = {}
        cons, idle_since = self.rx.u32(self.rx.consumer), None
        while True:
            prod = self.rx.u32(self.rx.producer)
            if prod == cons:
                now = time.monotonic()
                if os.path.exists(stopfile):
                    idle_since = idle_since or now
                    if now - idle_since > 1:
                        break
                self.wake_rx()
                time.sleep(0.001)
                continue
            idle_since = None
            batch = []
            while cons != prod:
                addr, length, _ = struct.unpack_from("QII", self.rx.map, self.rx.slot(cons))
                cons += 1
                base = addr & ~(FRAME - 1)
                report["frames"] += 1
                problem = None
                if base >= FRAMES // 2 * FRAME:
                    report["foreign"] += 1
                    problem = f"frame at {addr:#x}: not a receive frame"
                elif base not in kernel:
                    report["double"] += 1
                    problem = f"frame at {addr:#x}: delivered again while the socket holds it"
                else:
                    kernel.discard(base)
                    batch.append(base)
                    problem = self.check_frame(addr, length, port, size, seen, report)
                if problem:
                    report["bad"] += 1
                    if len(report["problems"]) < 5:
                        report["problems"].append(problem)
            self.rx.u32(self.rx.consumer, cons)
            # The batch's frames go back only now: one the kernel hands out
            # twice within a batch is caught too.
            fill = self.fill.u32(self.fill.producer)
            for base in batch:
                struct.pack_into("Q", self.fill.map, self.fill.slot(fill), base)
                kernel.add(base)
                fill += 1
            self.fill.u32(self.fill.producer, fill)
        report["seqs"] = sorted(seen)
        report["statistics"] = self.statistics()
        return report

    def send(self, frames, timeout=60):
        """Queue frames on the TX ring, kick, wait for their completions."""
        prod = self.tx.u32(self.tx.producer)
        for i, frame in enumerate(frames):
            addr = (FRAMES // 2 + i) * FRAME
            self.umem[addr:addr + len(frame)] = frame
            struct.pack_into("QII", self.tx.map, self.tx.slot(prod + i), addr, len(frame), 0)
        self.tx.u32(self.tx.producer, prod + len(frames))
        done, cons = 0, self.comp.u32(self.comp.consumer)
        deadline = time.monotonic() + timeout
        while done < len(frames) and time.monotonic() < deadline:
            # The first frames always need a kick; later ones when the
            # driver asks for one.
            if done == 0 or self.tx.need_wakeup():
                libc.sendto(self.fd, None, 0, MSG_DONTWAIT, None, 0)
            prod_c = self.comp.u32(self.comp.producer)
            done += prod_c - cons
            cons = self.comp.u32(self.comp.consumer, prod_c)
            time.sleep(0.001)
        return done


def stream_main():
    ifname, queue, xskmap, port, size, stopfile = sys.argv[2:]
    queue = int(queue)
    xsk = Xsk(ifname, queue)
    xsk.join_map(xskmap, queue)
    print("ready", flush=True)
    print(json.dumps(xsk.stream(int(port), int(size), stopfile)), flush=True)


def main():
    if sys.argv[1] == "--stream":
        stream_main()
        return
    ifname, queue, xskmap, rx_n, tx_n, src_ip, dst_ip, dst_mac, port, size = sys.argv[1:]
    queue, rx_n, tx_n, port, size = int(queue), int(rx_n), int(tx_n), int(port), int(size)
    with open(f"/sys/class/net/{ifname}/address") as f:
        src_mac = bytes.fromhex(f.read().strip().replace(":", ""))
    xsk = Xsk(ifname, queue)
    xsk.join_map(xskmap, queue)
    print("ready", flush=True)
    got = xsk.receive(rx_n)
    print("rx", *(hashlib.sha256(p).hexdigest() for p in got), flush=True)
    payloads = [os.urandom(size) for _ in range(tx_n)]
    frames = [udp_frame(src_mac, bytes.fromhex(dst_mac.replace(":", "")), src_ip, dst_ip, port, p)
              for p in payloads]
    done = xsk.send(frames)
    print("tx", done, *(hashlib.sha256(p).hexdigest() for p in payloads), flush=True)


if __name__ == "__main__":
    main()
