"""Wire capture: two nodes booted with --pcap DIR (QEMU's filter-dump on
every data link) write DIR/NODE-NETWORK.pcap, one per node and network; a
devmem transfer's TCP stream is in both nodes' captures, with every byte of
its payload (about 1 min under TCG)."""

import shutil
import struct
import tempfile
import unittest
from collections import Counter
from pathlib import Path

from guestlib import TwoNodes
from devmemsim import addressing
from devmemsim.cluster import Cluster
from devmemsim.transfer import transfer

PCAP_DIR = Path(tempfile.mkdtemp(prefix="dms-pcap-"))
NBYTES = 2 << 20
PORT = 5201


def tcp_payloads(path: Path) -> Counter:
    """TCP payload bytes per (src, sport, dst, dport) of the IPv4 frames in
    a pcap file (libpcap format, Ethernet link type)."""
    data = path.read_bytes()
    magic, *_, linktype = struct.unpack_from("<IHHiIII", data)
    if magic != 0xA1B2C3D4 or linktype != 1:
        raise AssertionError(f"{path}: not a little-endian Ethernet pcap ({magic:#x}, link type {linktype})")
    streams = Counter()
    off = 24
    while off + 16 <= len(data):
        _, _, caplen, _ = struct.unpack_from("<IIII", data, off)
        frame = data[off + 16:off + 16 + caplen]
        off += 16 + caplen
        if len(frame) < 54 or frame[12:14] != b"\x08\x00" or frame[23] != 6:  # IPv4, TCP
            continue
        ihl = (frame[14] & 0x0F) * 4
        total = struct.unpack_from("!H", frame, 16)[0]
        src, dst = (".".join(map(str, frame[i:i + 4])) for i in (26, 30))
        sport, dport = struct.unpack_from("!HH", frame, 14 + ihl)
        tcp_len = (frame[14 + ihl + 12] >> 4) * 4
        streams[src, sport, dst, dport] += total - ihl - tcp_len
    return streams


class Pcap(TwoNodes):
    NAME = "pcap"
    BOOT_ARGS = ("--pcap", str(PCAP_DIR))

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            shutil.rmtree(PCAP_DIR, ignore_errors=True)

    def test_transfer_stream_in_both_captures(self):
        self.assertEqual(sorted(p.name for p in PCAP_DIR.iterdir()), ["node0-data.pcap", "node1-data.pcap"])
        tx, rx = transfer(Cluster(self.NAME), "devmem", NBYTES, port=PORT)
        self.assertTrue(tx["verified"] and rx["verified"], (tx, rx))
        client, server = addressing.data_addr(0), addressing.data_addr(1)
        for node in ("node0", "node1"):
            streams = tcp_payloads(PCAP_DIR / f"{node}-data.pcap")
            to_server = {k: v for k, v in streams.items() if k[0] == client and k[2:] == (server, PORT)}
            # One stream carried the transfer (retransmissions may add bytes).
            self.assertEqual(len([v for v in to_server.values() if v >= NBYTES]), 1, (node, streams))


if __name__ == "__main__":
    unittest.main(verbosity=2)
