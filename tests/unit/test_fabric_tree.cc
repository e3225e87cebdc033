// SPDX-License-Identifier: MIT
// The fabric as a tree built from the node's topology: where P2P turns
// (switch, root complex, across sockets), what shares a switch's uplink,
// host memory per socket, and the IOMMU's cost on root-complex paths only.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <unistd.h>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "config.h"
#include "gen4_x16.h"
#include "pcie/fabric.h"

using namespace devmemsim;
using namespace devmemsim::pcie;

namespace
{

constexpr uint64_t kBar0 = 0x800000000ull; // GPU i's BAR at kBar0 + i * kBarSize
constexpr uint64_t kBarSize = 256ull << 20;
constexpr uint64_t kSocket1Mem = 64ull << 30; // mem_base of the second socket
constexpr size_t kBurst = 64 << 10;
const sc_core::sc_time kRun(500, sc_core::SC_US);

using gen4_x16::kCplBps;
using gen4_x16::kLinkBps;

NodeConfig load(const std::string &text)
{
	char path[] = "/tmp/dms-tree-XXXXXX";
	int fd = mkstemp(path);
	EXPECT_GE(fd, 0);
	close(fd);
	std::ofstream(path) << text;
	NodeConfig c = load_config(path);
	std::remove(path);
	return c;
}

// A fabric with every port bound: GPUs accept any BAR access (no data),
// NICs refuse theirs; host memory accepts everything.
struct Tree : sc_core::sc_module {
	Fabric fabric;
	sc_core::sc_vector<tlm_utils::simple_initiator_socket<Tree>> dev;
	sc_core::sc_vector<tlm_utils::simple_target_socket<Tree>> mem;

	Tree(sc_core::sc_module_name n, const NodeConfig &cfg)
	    : sc_module(n), fabric("fabric", cfg), dev("dev", fabric.ports()),
	      mem("mem", fabric.ports())
	{
		const unsigned k = static_cast<unsigned>(fabric.topology().nics.size());
		for (unsigned p = 0; p < fabric.ports(); p++) {
			dev[p].bind(fabric.dma);
			fabric.bar_mem[p].bind(mem[p]);
			mem[p].register_b_transport(this, &Tree::accept);
		}
		for (unsigned i = 0; i < k; i++)
			fabric.set_window(fabric.gpu_port(i), kBar0 + i * kBarSize, kBarSize);
		fabric.set_host_dma(
			[](unsigned, uint64_t, void *, uint64_t, bool) { return true; });
	}
	void accept(tlm::tlm_generic_payload &gp, sc_core::sc_time &)
	{
		gp.set_response_status(tlm::TLM_OK_RESPONSE);
	}
	// One DMA from port p, starting at *delay (in) and done at *delay (out).
	bool dma(unsigned p, bool write, uint64_t addr, size_t len, sc_core::sc_time &delay)
	{
		std::vector<uint8_t> buf(len);
		tlm::tlm_generic_payload gp;
		gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
		gp.set_address(addr);
		gp.set_data_ptr(buf.data());
		gp.set_data_length(static_cast<unsigned>(len));
		gp.set_streaming_width(static_cast<unsigned>(len));
		dev[p]->b_transport(gp, delay);
		return gp.is_response_ok();
	}
	bool dma(unsigned p, bool write, uint64_t addr, size_t len = 4096)
	{
		sc_core::sc_time d = sc_core::SC_ZERO_TIME;
		return dma(p, write, addr, len, d);
	}
};

const char *const kTwoSwitches = "[[topology.switch]]\n[[topology.switch]]\n"
				 "[[topology.nic]]\ncount = 2\non = \"sw0\"\n"
				 "[[topology.gpu]]\non = \"sw0\"\n[[topology.gpu]]\non = \"sw1\"\n";

const char *const kTwoSockets = "[[topology.socket]]\n"
				"[[topology.socket]]\nmem_base = \"64G\"\n"
				"[topology.inter_socket]\ngbps = 166\nlatency_ns = 60\n"
				"[[topology.switch]]\non = \"s0.rp0\"\n"
				"[[topology.switch]]\non = \"s1.rp0\"\n"
				"[[topology.nic]]\non = \"sw0\"\n"
				"[[topology.gpu]]\non = \"sw1\"\n";

NodeConfig timed(NodeConfig c, unsigned hop_latency_ns = 0)
{
	c.mode = Mode::Timed;
	c.hop_latency_ns = hop_latency_ns;
	return c;
}

// One elaboration per process: every fabric is built up front.
Tree &two_switches()
{
	static Tree t("two_switches", load(kTwoSwitches));
	return t;
}
Tree &two_sockets()
{
	static Tree t("two_sockets", load(kTwoSockets));
	return t;
}
Tree &slow_inter_socket() // 100 Gbit/s between the sockets, timed
{
	static Tree t("slow_inter_socket", [] {
		std::string text = kTwoSockets;
		text.replace(text.find("gbps = 166"), 10, "gbps = 100");
		return timed(load(text));
	}());
	return t;
}
Tree &two_sockets_timed()
{
	static Tree t("two_sockets_timed", timed(load(kTwoSockets), 150));
	return t;
}
Tree &default_tree()
{
	static Tree t("default_tree", NodeConfig{});
	return t;
}
Tree &pairs() // two NIC/GPU pairs under one switch, timed
{
	static Tree t("pairs", timed(load("[[topology.switch]]\n[[topology.nic]]\ncount = 2\n"
					  "[[topology.gpu]]\ncount = 2\n")));
	return t;
}
Tree &eight_pairs() // under one switch, timed, no hop latency
{
	static Tree t("eight_pairs", timed(load("[[topology.switch]]\n[[topology.nic]]\ncount = 8\n"
						"[[topology.gpu]]\ncount = 8\n")));
	return t;
}
Tree &core_400() // two pairs under a switch whose core forwards 400 Gbit/s
{
	static Tree t("core_400",
		      timed(load("[[topology.switch]]\ngbps = 400\n[[topology.nic]]\ncount = 2\n"
				 "[[topology.gpu]]\ncount = 2\n")));
	return t;
}
// One pair, 150 ns hops; the switch's core non-blocking or limited.
Tree &peer_reads(unsigned core_gbps)
{
	auto cfg = [](unsigned gbps) {
		NodeConfig c = timed(NodeConfig{}, 150);
		c.switch_gbps = gbps;
		return c;
	};
	static Tree open("peer_reads_open", cfg(0)), limited("peer_reads_1024", cfg(1024));
	return core_gbps ? limited : open;
}
Tree &iommu(bool on)
{
	auto cfg = [on] {
		NodeConfig c = timed(load(kTwoSwitches), 150);
		c.iommu = on;
		c.iommu_ns = 400;
		return c;
	};
	static Tree with("iommu_on", cfg()), without("iommu_off", [] {
		NodeConfig c = timed(load(kTwoSwitches), 150);
		return c;
	}());
	return on ? with : without;
}

// A DMA engine on a port that starts its next burst when the last is done.
struct Stream {
	unsigned port;
	uint64_t addr;
	bool write = true;
};

// Each stream's payload rate over kRun, run as SystemC would (the stream
// whose next burst starts first goes next), from where the tree's last
// run left off.
std::vector<double> rates(Tree &t, const std::vector<Stream> &streams)
{
	static std::map<const Tree *, sc_core::sc_time> idle;
	const sc_core::sc_time from = idle[&t];
	std::vector<sc_core::sc_time> at(streams.size(), from);
	std::vector<double> bytes(streams.size());
	for (;;) {
		const size_t i = std::min_element(at.begin(), at.end()) - at.begin();
		if (at[i] >= from + kRun)
			break;
		EXPECT_TRUE(
			t.dma(streams[i].port, streams[i].write, streams[i].addr, kBurst, at[i]));
		bytes[i] += kBurst;
	}
	std::vector<double> r;
	for (size_t i = 0; i < streams.size(); i++)
		r.push_back(bytes[i] / (at[i] - from).to_seconds());
	idle[&t] = *std::max_element(at.begin(), at.end()) + sc_core::sc_time(10, sc_core::SC_US);
	return r;
}

class FabricTree : public ::testing::Test
{
protected:
	static void SetUpTestSuite()
	{
		two_switches();
		two_sockets();
		pairs();
		slow_inter_socket();
		two_sockets_timed();
		default_tree();
		iommu(true);
		iommu(false);
		eight_pairs();
		core_400();
		peer_reads(0);
		peer_reads(1024);
		sc_core::sc_start(sc_core::SC_ZERO_TIME);
	}
	void SetUp() override
	{
		for (Tree *t :
		     {&two_switches(), &two_sockets(), &pairs(), &iommu(true), &iommu(false)})
			t->fabric.reset_counters();
	}
};

} // namespace

// Ports: NICs first, then GPUs; links named after the devices.
TEST_F(FabricTree, PortsAndLinkNames)
{
	Fabric &f = two_switches().fabric;
	EXPECT_EQ(f.ports(), 4u);
	EXPECT_EQ(f.gpu_port(1), 3u);
	const std::string json = f.stats_json();
	for (const char *key :
	     {"\"nic0\": {", "\"gpu1\": {", "\"sw0.upstream\": {", "\"sw1.upstream\": {",
	      "\"switches\": {\"sw0\": {", "\"sockets\": {\"s0\": {"})
		EXPECT_NE(json.find(key), std::string::npos) << key << " in " << json;
	EXPECT_EQ(json.find("inter_socket"), std::string::npos) << json;
}

TEST_F(FabricTree, PeersUnderOneSwitchTurnThere)
{
	Tree &t = two_switches();
	ASSERT_TRUE(t.dma(t.fabric.nic_port(0), true, kBar0));
	const FabricCounters &c = t.fabric.counters();
	EXPECT_EQ(c.switches[0].p2p_bytes, 4096u);
	EXPECT_EQ(c.sockets[0].p2p_bytes, 0u);
	EXPECT_EQ(c.uplink[0][kUp].payload_bytes, 0u);
	EXPECT_EQ(c.endpoint[t.fabric.gpu_port(0)][kDown].payload_bytes, 4096u);
}

TEST_F(FabricTree, PeersOnDifferentSwitchesTurnAtTheRootComplex)
{
	Tree &t = two_switches();
	ASSERT_TRUE(t.dma(t.fabric.nic_port(1), true, kBar0 + kBarSize + 0x1000));
	const FabricCounters &c = t.fabric.counters();
	EXPECT_EQ(c.switches[0].p2p_bytes + c.switches[1].p2p_bytes, 0u);
	EXPECT_EQ(c.sockets[0].p2p_bytes, 4096u);
	EXPECT_EQ(c.uplink[0][kUp].payload_bytes, 4096u);
	EXPECT_EQ(c.uplink[1][kDown].payload_bytes, 4096u);
	EXPECT_EQ(c.endpoint[t.fabric.gpu_port(1)][kDown].payload_bytes, 4096u);
	EXPECT_EQ(c.sockets[0].host_write_bytes, 0u);
	// A read: requests up sw0's uplink, completions down it.
	ASSERT_TRUE(t.dma(t.fabric.nic_port(0), false, kBar0 + kBarSize));
	EXPECT_EQ(c.uplink[0][kDown].payload_bytes, 4096u);
	EXPECT_EQ(c.uplink[1][kUp].payload_bytes, 4096u);
}

TEST_F(FabricTree, CrossSocketPeersAndMemoryUseTheInterSocketLink)
{
	Tree &t = two_sockets();
	const FabricCounters &c = t.fabric.counters();
	ASSERT_TRUE(t.dma(t.fabric.nic_port(0), true, kBar0, 8192));
	EXPECT_EQ(c.inter_socket[0].payload_bytes, 8192u);
	EXPECT_EQ(c.inter_socket[0].tlps, 32u); // MPS 256
	EXPECT_EQ(c.inter_socket[1].payload_bytes, 0u);
	EXPECT_EQ(c.sockets[0].p2p_bytes, 8192u);
	EXPECT_EQ(c.sockets[1].p2p_bytes, 8192u);
	EXPECT_EQ(c.uplink[1][kDown].payload_bytes, 8192u);
	// The NIC's own socket's memory stays local; the other's crosses.
	ASSERT_TRUE(t.dma(t.fabric.nic_port(0), true, 0x100000));
	EXPECT_EQ(c.sockets[0].host_write_bytes, 4096u);
	EXPECT_EQ(c.inter_socket[0].payload_bytes, 8192u);
	ASSERT_TRUE(t.dma(t.fabric.nic_port(0), false, kSocket1Mem + 0x1000));
	EXPECT_EQ(c.sockets[1].host_read_bytes, 4096u);
	EXPECT_EQ(c.inter_socket[1].payload_bytes, 4096u); // completions come back
	const std::string json = t.fabric.stats_json();
	EXPECT_NE(json.find("\"inter_socket\": {\"gbps\": 166, \"latency_ns\": 60, "
			    "\"from_s0\": {\"tlps\": 40, \"payload_bytes\": 8192"),
		  std::string::npos)
		<< json;
}

// Two NIC -> GPU pairs under one switch never touch its uplink, so both
// run at link rate; two NIC -> host flows share the uplink and get half.
TEST_F(FabricTree, PairsShareTheSwitchUplinkOnlyForHostTraffic)
{
	Tree &t = pairs();
	Fabric &f = t.fabric;
	for (double r : rates(t, {{f.nic_port(0), kBar0}, {f.nic_port(1), kBar0 + kBarSize}}))
		EXPECT_NEAR(r, kLinkBps, 0.01 * kLinkBps);
	for (double r :
	     rates(t, {{f.nic_port(0), 1ull << 32}, {f.nic_port(1), (1ull << 32) + kBurst}}))
		EXPECT_NEAR(r, kLinkBps / 2, 0.03 * kLinkBps / 2);
}

// A switch is a crossbar: each port sends on its own link. Eight pairs
// writing peer to peer each get their GPU link's whole rate, and reading,
// their NIC link's, though together they move far more than any one link
// (or a switch with one resource per direction at 1024 Gbit/s) could.
TEST_F(FabricTree, PeerFlowsThroughTheirOwnPortsEachGetTheirLink)
{
	Tree &t = eight_pairs();
	Fabric &f = t.fabric;
	std::vector<Stream> writes, reads;
	for (unsigned i = 0; i < 8; i++) {
		writes.push_back({f.nic_port(i), kBar0 + i * kBarSize});
		reads.push_back({f.nic_port(i), kBar0 + i * kBarSize, false});
	}
	for (double r : rates(t, writes))
		EXPECT_NEAR(r, kLinkBps, 0.01 * kLinkBps);
	for (double r : rates(t, reads))
		EXPECT_NEAR(r, kCplBps, 0.01 * kCplBps);
	EXPECT_EQ(f.counters().uplink[0][kUp].tlps, 0u);
}

// Two NICs writing into one GPU share that GPU's port: half its link each.
TEST_F(FabricTree, PeerFlowsIntoOnePortShareIt)
{
	Tree &t = eight_pairs();
	Fabric &f = t.fabric;
	for (double r : rates(t, {{f.nic_port(0), kBar0}, {f.nic_port(1), kBar0 + kBurst}}))
		EXPECT_NEAR(r, kLinkBps / 2, 0.03 * kLinkBps / 2);
}

// A switch core limited to 400 Gbit/s (50e9 bytes/s of TLPs, any port to
// any port) caps two pairs that together would move more: writes at 280
// wire bytes per 256 of payload, reads at 84 per 64 of completions plus a
// 24-byte request per 512. The core is busy the whole run.
TEST_F(FabricTree, SwitchCoreLimitCapsTheSum)
{
	Tree &t = core_400();
	Fabric &f = t.fabric;
	constexpr double kCoreBps = 400e9 / 8;
	const double write_bps = kCoreBps * 256 / 280,
		     read_bps = kCoreBps / (84.0 / 64 + 24.0 / 512);
	ASSERT_LT(write_bps / 2, kLinkBps);
	ASSERT_LT(read_bps / 2, kCplBps);
	std::vector<Stream> writes = {{f.nic_port(0), kBar0}, {f.nic_port(1), kBar0 + kBarSize}};
	f.reset_counters();
	for (double r : rates(t, writes))
		EXPECT_NEAR(r, write_bps / 2, 0.03 * write_bps / 2);
	const SwitchCounters &c = f.counters().switches[0];
	EXPECT_EQ(c.busy_ps, static_cast<uint64_t>(c.wire_bytes / (kCoreBps / 1e12) + 0.5));
	EXPECT_NEAR(c.busy_ps / 1e12 / kRun.to_seconds(), 1.0, 0.03);
	std::vector<Stream> reads = {{f.nic_port(0), kBar0, false},
				     {f.nic_port(1), kBar0 + kBarSize, false}};
	for (double r : rates(t, reads))
		EXPECT_NEAR(r, read_bps / 2, 0.03 * read_bps / 2);
}

// Small reads issued together from a GPU's memory overlap: the requests
// leave the switch on the GPU's port, the completions on the NIC's, and
// a limited core, which carries both, lets the requests take its idle
// time before the completions booked a round trip ahead. The last is done
// the others' completions on the NIC link after the first, whether the
// core is non-blocking or limited to 1024 Gbit/s (far from full here).
TEST_F(FabricTree, PeerReadRequestsDoNotWaitForCompletions)
{
	constexpr unsigned kReads = 32, kRead = 512;
	for (unsigned core : {0u, 1024u}) {
		Tree &t = peer_reads(core);
		sc_core::sc_time first, last;
		for (unsigned i = 0; i < kReads; i++) {
			last = sc_core::SC_ZERO_TIME;
			ASSERT_TRUE(
				t.dma(t.fabric.nic_port(0), false, kBar0 + i * kRead, kRead, last));
			if (!i)
				first = last;
		}
		const double one_s = first.to_seconds();
		EXPECT_GT(one_s, 2 * 150e-9) << "two hops each way";
		EXPECT_NEAR(last.to_seconds(), one_s + (kReads - 1) * kRead / kCplBps, 0.03 * one_s)
			<< "core " << core << " Gbit/s";
	}
}

// The IOMMU translates what crosses a root complex, once per transaction;
// P2P at a switch never sees it.
TEST_F(FabricTree, IommuCostsOnlyOnRootComplexPaths)
{
	Tree &on = iommu(true), &off = iommu(false);
	auto time_of = [](Tree &t, unsigned port, uint64_t addr) {
		static sc_core::sc_time start = sc_core::SC_ZERO_TIME;
		start += sc_core::sc_time(1, sc_core::SC_MS);
		sc_core::sc_time d = start;
		EXPECT_TRUE(t.dma(port, true, addr, 4096, d));
		return (d - start).to_seconds() * 1e9;
	};
	const unsigned nic0 = on.fabric.nic_port(0), nic1 = on.fabric.nic_port(1);
	EXPECT_NEAR(time_of(on, nic0, kBar0) - time_of(off, nic0, kBar0), 0, 0.01);
	EXPECT_EQ(on.fabric.counters().iommu_translations, 0u);
	EXPECT_NEAR(time_of(on, nic0, 0x100000) - time_of(off, nic0, 0x100000), 400, 0.01);
	EXPECT_NEAR(time_of(on, nic1, kBar0 + kBarSize) - time_of(off, nic1, kBar0 + kBarSize), 400,
		    0.01);
	EXPECT_EQ(on.fabric.counters().iommu_translations, 2u);
	EXPECT_EQ(off.fabric.counters().iommu_translations, 0u);
}

// A read's root complex forwards the requests up and the completions
// (the data) back: 8 requests of 12 + 8 bytes, 64 completions of 64 + 20,
// at 1024 Gbit/s (0.128 bytes per ps).
TEST_F(FabricTree, RootComplexForwardsReadCompletions)
{
	Tree &t = two_switches();
	ASSERT_TRUE(t.dma(t.fabric.nic_port(0), false, 0x200000));
	EXPECT_EQ(t.fabric.counters().sockets[0].rc_busy_ps, 160 / 0.128 + 64 * 84 / 0.128);
}

// The default topology keeps the counters' keys the QEMU tests and the
// CLI read (tests/qemu/test_gpu.py, tools/devmemsim/stats.py).
TEST_F(FabricTree, DefaultTopologyKeepsItsKeys)
{
	Fabric &f = default_tree().fabric;
	EXPECT_EQ(f.ports(), 2u);
	EXPECT_EQ(f.gpu_port(0), unsigned(kGpu));
	const std::string json = f.stats_json();
	for (const char *key : {"\"links\": {\"nic\": {\"gen\": 4", "\"gpu\": {\"gen\": 4",
				"\"upstream\": {\"gen\": 4", "\"switch\": {\"p2p_bytes\": 0",
				"\"root_complex\": {\"host_write_bytes\": 0",
				"\"host_memory\": {\"bytes\": 0", "\"dma_faults\": 0}"})
		EXPECT_NE(json.find(key), std::string::npos) << key << " in " << json;
}

// A NIC on socket 0 writing into a GPU on socket 1: the inter-socket link
// (100 Gbit/s = 12.5e9 B/s of TLP bytes, below the PCIe links' rate) sets
// the pace: 256 payload bytes per 280 (64-bit addressed TLPs). One burst
// at a time, each also waits the link's 60 ns latency and the pipeline's
// fill, so the flow stays a little under that rate.
TEST_F(FabricTree, SlowInterSocketLinkCapsCrossSocketPeerTraffic)
{
	Tree &t = slow_inter_socket();
	sc_core::sc_time at = sc_core::SC_ZERO_TIME;
	uint64_t bytes = 0, bursts = 0;
	while (at < kRun) {
		ASSERT_TRUE(t.dma(t.fabric.nic_port(0), true, kBar0, kBurst, at));
		bytes += kBurst;
		bursts++;
	}
	const double cap = 12.5e9 * 256 / 280;
	const double serialize_s = bytes / cap;
	EXPECT_LE(bytes / at.to_seconds(), cap);
	EXPECT_GE(bytes / at.to_seconds(), 0.97 * cap);
	EXPECT_GE(at.to_seconds() - serialize_s, bursts * 60e-9);
	const LinkCounters &c = t.fabric.counters().inter_socket[0];
	EXPECT_EQ(c.payload_bytes, bytes);
	EXPECT_NEAR(c.busy_ps / 1e12, serialize_s, 1e-12 * bursts);
}

// A device's reads of the other socket's memory overlap: each root complex
// forwards the requests toward memory (up) and the completions toward the
// device (down) on their own. Sixteen 512-byte reads issued together are
// done one read's time plus fifteen reads' completions on the slowest link
// after they start: the inter-socket link, 8 completions of 64 + 20 bytes
// each at 166 Gbit/s. (Were the directions one, each request would wait
// for the completions before it, and the reads would go one per hop.)
TEST_F(FabricTree, ReadsOfTheOtherSocketsMemoryOverlap)
{
	Tree &t = two_sockets_timed();
	constexpr unsigned kReads = 16;
	sc_core::sc_time first, last;
	for (unsigned i = 0; i < kReads; i++) {
		last = sc_core::SC_ZERO_TIME;
		ASSERT_TRUE(t.dma(t.fabric.nic_port(0), false, kSocket1Mem + i * 512, 512, last));
		if (!i)
			first = last;
	}
	const double one_s = first.to_seconds();
	EXPECT_GT(one_s, 6 * 150e-9) << "three forwarding hops each way";
	EXPECT_NEAR(last.to_seconds(), one_s + (kReads - 1) * 8 * 84 / (166e9 / 8), 0.02 * one_s);
}
