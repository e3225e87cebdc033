"""Wire capture: two nodes booted with --pcap DIR (QEMU's filter-dump on
every data link) write DIR/NODE-NETWORK.pcap, one per node and network; a
devmem transfer's TCP stream is in both nodes' captures, with every byte of
its payload (about 1 min under TCG)."""

import shutil
import tempfile
from pathlib import Path

from guestlib import TwoNodes, main, tcp_payloads
from devmemsim import addressing
from devmemsim.cluster import Cluster
from devmemsim.transfer import transfer

PCAP_DIR = Path(tempfile.mkdtemp(prefix="dms-pcap-"))
NBYTES = 2 << 20
PORT = 5201


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
    main()
