"""dms-sim, the standalone timed simulator: one uncongested NIC/GPU pair per
node, several pairs under one switch, request/response latency and nodes on
an ideal Ethernet switch.

Run by meson with the dms-sim binary as the first argument; the rest
selects test classes (unittest names)."""

import json
import subprocess
import sys
import tempfile
import unittest

DMS_SIM = sys.argv.pop(1)

LINE_RATE_GBPS = 100
MTU = 9000


def simulate(*sets, config=None):
    """Run dms-sim with these --set overrides (and a node configuration
    file); its JSON report."""
    args = [DMS_SIM, "--json", "-", "--set", f"nic.line_rate_gbps={LINE_RATE_GBPS}",
            "--set", f"driver.mtu={MTU}"]
    if config:
        args += ["--config", config]
    for kv in sets:
        args += ["--set", kv]
    res = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if res.returncode not in (0, 1):
        raise AssertionError(f"dms-sim failed ({res.returncode}): {res.stderr}")
    return json.loads(res.stdout)


def root_complex_bytes(report, node):
    rc = report["nodes"][node]["root_complex"]
    return rc["host_write_bytes"] + rc["host_read_bytes"]


class Stream(unittest.TestCase):
    def test_devmem_stream_is_verified_and_stays_off_the_root_complex(self):
        r = simulate("traffic.mode=devmem")
        flow = r["flows"][0]
        self.assertTrue(flow["verified"], flow)
        # Only headers, descriptors and completions cross the root complex.
        self.assertLess(root_complex_bytes(r, "node1"), 0.05 * flow["bytes"])
        self.assertGreater(r["links"]["node1.nic"]["up"]["payload_bytes"], flow["bytes"])

    def test_bounce_payload_crosses_the_root_complex_twice(self):
        r = simulate("traffic.mode=bounce")
        flow = r["flows"][0]
        self.assertTrue(flow["verified"], flow)
        # Written into host memory by the NIC, read back by the copy engine.
        self.assertGreaterEqual(root_complex_bytes(r, "node1"), 2 * flow["bytes"])

    def test_bounce_sender_copies_out_of_its_gpu_through_its_root_complex(self):
        # The sender's copy engine writes host memory, its NIC reads it back.
        bounce = simulate("traffic.mode=bounce")
        flow = bounce["flows"][0]
        self.assertTrue(flow["verified"], flow)
        self.assertGreaterEqual(root_complex_bytes(bounce, "node0"), 2 * flow["bytes"])
        self.assertGreaterEqual(bounce["nodes"]["node0"]["root_complex"]["bytes_per_payload_byte"], 2)
        gpu0 = bounce["nodes"]["node0"]["stats"]["gpu"]
        self.assertGreaterEqual(gpu0["copy_to_host_bytes"], flow["bytes"])
        devmem = simulate("traffic.mode=devmem")
        self.assertLess(root_complex_bytes(devmem, "node0"), 0.05 * devmem["flows"][0]["bytes"])

    def test_same_seed_same_run(self):
        a, b = simulate("run.seed=7"), simulate("run.seed=7")
        for volatile in ("wall_time_s", "events_per_s", "sim_gbps_per_wall_s"):
            del a[volatile], b[volatile]
        self.assertEqual(a, b)


class LineRate(unittest.TestCase):
    def test_uncongested_devmem_goodput_is_within_1_percent_of_the_bound(self):
        # Per frame on the wire: MTU + Ethernet header 14 + preamble/SFD 8 +
        # FCS 4 + inter-frame gap 12; the payload is MSS = MTU - 52 (IPv4
        # 20, TCP 20 + 12 for timestamps).
        bound = LINE_RATE_GBPS * 1e9 * (MTU - 52) / (MTU + 14 + 8 + 4 + 12)
        flow = simulate("traffic.mode=devmem")["flows"][0]
        self.assertTrue(flow["verified"], flow)
        self.assertLess(abs(flow["goodput_bps"] - bound) / bound, 0.01,
                        f"goodput {flow['goodput_bps'] / 1e9:.3f} Gb/s, bound {bound / 1e9:.3f} Gb/s")


def without_wall_clock(report):
    for volatile in ("wall_time_s", "events_per_s", "sim_gbps_per_wall_s"):
        del report[volatile]
    return report


# Request/response: a 4 KiB request, a 4 KiB response, one in flight.
RR = ("traffic.kind=rr", "rr.request_bytes=4096", "rr.response_bytes=4096", "rr.messages=200",
      "driver.itr_ns=0")


class Latency(unittest.TestCase):
    def rr(self, mode, *sets):
        r = simulate(*RR, f"traffic.mode={mode}", *sets)
        flow = r["flows"][0]
        self.assertTrue(flow["verified"], flow)
        self.assertEqual(flow["kind"], "rr")
        # Both ways: 200 requests and 200 responses, all in GPU memory.
        self.assertEqual(flow["delivered_bytes"], 200 * (4096 + 4096))
        return flow["latency_ns"]

    def test_percentiles_are_ordered_and_above_the_wire_time(self):
        lat = self.rr("devmem")
        self.assertEqual(lat["count"], 200)
        # Floor: request and response each serialised once at 100 Gb/s (a
        # 4096-byte payload is one frame: + 66 header bytes + 24 of framing)
        # and two 10 ns cables.
        floor_ns = 2 * (4096 + 66 + 24) * 8 / LINE_RATE_GBPS + 2 * 10
        self.assertGreater(lat["min"], floor_ns)
        order = [lat[k] for k in ("min", "p50", "p90", "p99", "p999", "max")]
        self.assertEqual(order, sorted(order), lat)
        self.assertTrue(lat["min"] <= lat["mean"] <= lat["max"], lat)

    def test_devmem_is_faster_than_bounce(self):
        devmem, bounce = self.rr("devmem"), self.rr("bounce")
        # bounce adds a copy-engine job out of GPU memory at the sender and
        # one into it at the receiver, each way, and the CPU's copies.
        self.assertLess(devmem["p50"], bounce["p50"])
        self.assertLess(devmem["p99"], bounce["p99"])

    def test_more_outstanding_more_messages_per_second(self):
        one = simulate(*RR, "rr.outstanding=1")["flows"][0]
        four = simulate(*RR, "rr.outstanding=4")["flows"][0]
        self.assertTrue(four["verified"], four)
        self.assertGreater(four["messages_per_s"], 1.5 * one["messages_per_s"])
        self.assertGreaterEqual(four["latency_ns"]["p50"], one["latency_ns"]["p50"])

    def test_same_seed_same_run(self):
        sets = (*RR, "traffic.mode=bounce", "rr.outstanding=3", "run.seed=5")
        self.assertEqual(without_wall_clock(simulate(*sets)), without_wall_clock(simulate(*sets)))


def bound_bps():
    return LINE_RATE_GBPS * 1e9 * (MTU - 52) / (MTU + 14 + 8 + 4 + 12)


# An ideal switch; the measured window starts once the streams have filled
# their windows (each node's one core also receives).
SWITCH = ("network.kind=switch", "run.duration_us=1000", "run.warmup_us=500")


class Switch(unittest.TestCase):
    def test_ring_of_four_each_at_line_rate(self):
        r = simulate(*SWITCH, "network.nodes=4", "traffic.flows=ring")
        self.assertEqual(r["network"], {"kind": "switch", "nodes": 4, "pairs_per_node": 1})
        self.assertEqual(sorted(r["nodes"]), ["node0", "node1", "node2", "node3"])
        self.assertEqual([(f["src"], f["dst"]) for f in r["flows"]],
                         [(0, 1), (1, 2), (2, 3), (3, 0)])
        for flow in r["flows"]:
            self.assertTrue(flow["verified"], flow)
            self.assertLess(abs(flow["goodput_bps"] - bound_bps()) / bound_bps(), 0.02,
                            f"{flow['name']}: {flow['goodput_bps'] / 1e9:.3f} Gb/s")

    def test_incast_shares_the_egress_port(self):
        r = simulate(*SWITCH, "network.nodes=3", "traffic.flows=incast")
        self.assertEqual([(f["src"], f["dst"]) for f in r["flows"]], [(1, 0), (2, 0)])
        for flow in r["flows"]:
            self.assertTrue(flow["verified"], flow)
            self.assertLess(abs(flow["goodput_bps"] - bound_bps() / 2) / (bound_bps() / 2), 0.03,
                            f"{flow['name']}: {flow['goodput_bps'] / 1e9:.3f} Gb/s")
        # The port toward node0 is full; frames wait there, not on the way in.
        into = r["links"]["eth.switch-node0"]
        self.assertGreater(into["utilisation"], 0.9)
        self.assertGreater(into["max_queue_ns"], r["links"]["eth.node1-switch"]["max_queue_ns"])

    def test_same_seed_same_run(self):
        sets = (*SWITCH, "network.nodes=3", "traffic.flows=0->1, 2->1", "traffic.mode=bounce",
                "run.duration_us=200", "run.warmup_us=50")
        self.assertEqual(without_wall_clock(simulate(*sets)), without_wall_clock(simulate(*sets)))


# K pairs under one switch, the default node otherwise: Gen4 x16 links (the
# uplink too), a non-blocking switch core unless switch_gbps sets one.
PAIRS_TOML = """[node]
mode = "timed"
[pcie]
switch_gbps = {core}
[[topology.switch]]
[[topology.nic]]
count = {k}
[[topology.gpu]]
count = {k}
"""
PAIRS = (1, 2, 4, 8)

# PCIe arithmetic (Gen4 x16, MPS 256, MRRS 512, RCB 64; BARs and host
# buffers above 4 GiB: 4-DW request headers). One direction's raw rate after
# 128b/130b, less the Ack/UpdateFC DLLPs (8 bytes each per 168) and SKPs (4
# per 1538) while TLPs stream.
LINK_TLP_GBPS = 16 * 16 * 128 / 130 * (1 - 16 / 168 - 4 / 1538)
# Link bytes of a read per payload byte: completions of 64 bytes with 12 bytes
# of header and 8 of framing; a 16 + 8 byte request per 512 bytes.
COMPLETION_BYTES = (64 + 20) / 64
READ_BYTES = COMPLETION_BYTES + 24 / 512


def simulate_pairs(k, mode, core_gbps=0, *sets):
    with tempfile.NamedTemporaryFile("w", suffix=".toml") as f:
        f.write(PAIRS_TOML.format(k=k, core=core_gbps))
        f.flush()
        r = simulate(f"traffic.mode={mode}", *sets, config=f.name)
    assert len(r["flows"]) == k, r["flows"]
    for flow in r["flows"]:
        assert flow["verified"], flow
    return r


def rc_bytes_per_payload_byte(r):
    return root_complex_bytes(r, "node1") / sum(f["bytes"] for f in r["flows"])


def gbps(r):
    return r["goodput_bps"] / 1e9


class PairScaling(unittest.TestCase):
    def test_devmem_grows_linearly_and_stays_off_the_root_complex(self):
        runs = {k: simulate_pairs(k, "devmem") for k in PAIRS}
        one = gbps(runs[1])
        for k in PAIRS[1:]:
            ratio = gbps(runs[k]) / (k * one)
            self.assertLess(abs(ratio - 1), 0.05, f"{k} pairs: {gbps(runs[k]):.1f} Gb/s, "
                            f"{ratio:.3f} x {k} times one pair's {one:.1f}")
            self.assertLess(rc_bytes_per_payload_byte(runs[k]), 0.05)

    def test_devmem_stops_at_a_switch_core_limit(self):
        # The sender's switch core forwards its NICs' payload reads (requests
        # and completions): at most core / READ_BYTES of payload, less the
        # frames' headers and descriptors. A 400 Gbit/s core holds 4 or 8
        # pairs there; one pair is far below it.
        core = 400
        limit = core / READ_BYTES
        one = gbps(simulate_pairs(1, "devmem", core))
        self.assertLess(4 * one, 1.5 * limit)
        for k in (4, 8):
            r = simulate_pairs(k, "devmem", core)
            self.assertLessEqual(gbps(r), limit, f"{k} pairs")
            self.assertGreater(gbps(r), 0.95 * limit, f"{k} pairs: {gbps(r):.1f} Gb/s, "
                               f"core limit {limit:.1f}")

    def test_bounce_flattens_where_the_uplink_saturates(self):
        # Each node's uplink carries the payload down as read completions
        # (node0's NICs read it from host memory, node1's copy engines): at
        # most LINK_TLP_GBPS / COMPLETION_BYTES of payload.
        limit = LINK_TLP_GBPS / COMPLETION_BYTES
        # Measured after the first millisecond: the receivers' copies take
        # that long to reach a steady rate.
        steady = ("run.duration_us=3000", "run.warmup_us=1000")
        four, eight = simulate_pairs(4, "bounce", 0, *steady), simulate_pairs(8, "bounce", 0, *steady)
        for r in (four, eight):
            self.assertLessEqual(gbps(r), limit)
            self.assertGreater(gbps(r), 0.9 * limit, f"{gbps(r):.1f} Gb/s, uplink limit {limit:.1f}")
            self.assertGreater(r["links"]["node1.upstream"]["down"]["utilisation"], 0.9)
            self.assertGreaterEqual(rc_bytes_per_payload_byte(r), 2)
        self.assertLess(gbps(eight), 1.02 * gbps(four))


if __name__ == "__main__":
    unittest.main()
