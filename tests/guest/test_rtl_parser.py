"""Two nodes with the NIC's RX parser in RTL (nic.parser = "rtl") carry TCP,
and the same traffic gives the same header-split statistics as with the
behavioural parser."""

import json
import os
import unittest

from guestlib import cli, data_addr, main

# 300 UDP datagrams that split (1000-byte payload) and 300 smaller ones, to
# a port nobody listens on: the frames still reach node1's NIC.
UDP_BURST = ("python3 -c \"import socket,time; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
             f"[(s.sendto(b'x'*n, ('{data_addr(1)}', 9)), time.sleep(0.002)) for n in [1000]*300+[100]*300]\"")


def devmemsim(*args, check=True):
    res = cli(*args, timeout=900)
    if check and res.returncode:
        raise AssertionError(f"devmemsim {' '.join(args)}: exit {res.returncode}\n{res.stdout}{res.stderr}")
    return res.stdout


def nic_stats(name, node):
    return json.loads(devmemsim("stats", node, "--name", name, "--json"))["nodes"][node]["nic"]


def run_with(parser):
    """iperf3 both ways, then the UDP burst; returns (iperf ok, split delta, frames delta)."""
    name = f"rtlcmp-{parser}-{os.getpid()}"
    devmemsim("boot", "--nodes", "2", "--name", name, "--set", f"nic.parser={parser}")
    try:
        devmemsim("exec", "node1", "--name", name, "--", "iperf3 -s -D >/dev/null 2>&1")
        out = devmemsim("exec", "node0", "--name", name, "--", f"sleep 1; iperf3 -c {data_addr(1)} -t 3 -J")
        iperf_ok = json.loads(out)["end"]["sum_received"]["bytes"] > 0
        devmemsim("exec", "node1", "--name", name, "--", "pkill iperf3; sleep 1")
        before = nic_stats(name, "node1")
        devmemsim("exec", "node0", "--name", name, "--", UDP_BURST)
        devmemsim("exec", "node0", "--name", name, "--", "sleep 2")
        after = nic_stats(name, "node1")
        return iperf_ok, after["rx_split"] - before["rx_split"], after["rx_frames"] - before["rx_frames"]
    finally:
        devmemsim("stop", "--name", name, check=False)


class RtlParserInTheLoop(unittest.TestCase):
    def test_rtl_matches_behavioural(self):
        rtl = run_with("rtl")
        behavioural = run_with("behavioural")
        self.assertTrue(rtl[0], "iperf3 over the RTL parser moved no data")
        self.assertTrue(behavioural[0])
        # Every UDP datagram splits (hds-thresh 0), with either parser.
        self.assertEqual(rtl[1], 600, rtl)
        self.assertEqual(rtl[1], behavioural[1], (rtl, behavioural))


if __name__ == "__main__":
    main()
