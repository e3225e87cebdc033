// SPDX-License-Identifier: MIT
// The node's PCIe fabric: root complex, one switch (upstream port and a
// downstream port per endpoint) and the links between them.
//
//   root complex ── "upstream" link ── switch ─┬─ "nic" link ── NIC
//                                              └─ "gpu" link ── GPU
//
// Endpoints issue DMA into the fabric's target socket for their port, one
// TLM generic payload per burst, tagged with a DmaExtension. The fabric
// routes by address: into a BAR window of a device under the switch (P2P,
// turned around at the switch, or at the root complex with acs_redirect),
// or to host memory through the root complex. It counts TLPs, payload and
// wire bytes and busy time on every link it crosses, annotates the delay
// in timed mode, and moves the bytes through the target: host memory by
// the host's DMA callback, device memory by the owning endpoint's target.
//
// Timed mode is approximately timed (docs/architecture.md, "Timed
// fabric"): every link direction, the switch, the root complex and host
// memory are resources with a time they are next free. A transaction's
// TLPs reserve the resources on their path in order, pipelined (a stage
// starts when its first TLP has arrived and the resource is free), so
// flows that share a resource share its bandwidth and a saturated one
// delays everything behind it. The work per transaction is a constant:
// one reservation per resource on the path, whatever its length.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include "config.h"
#include "pcie/link.h"

namespace devmemsim::pcie
{

enum Port : unsigned { kNic = 0, kGpu = 1, kNumPorts = 2 };
enum Dir : unsigned { kUp = 0, kDown = 1 };

// Host memory behind the root complex. Returns false on a DMA fault (the
// address is not guest RAM). requester: the port the request came from.
using HostDma = std::function<bool(unsigned requester, uint64_t addr, void *buf, uint64_t len,
				   bool is_write)>;

struct FabricCounters {
	std::array<std::array<LinkCounters, 2>, kNumPorts> endpoint{}; // [port][dir]
	std::array<LinkCounters, 2> upstream{};			       // [dir]
	uint64_t switch_p2p_bytes = 0;
	uint64_t switch_busy_ps = 0;	  // time spent forwarding TLPs
	uint64_t rc_host_write_bytes = 0; // device -> host memory
	uint64_t rc_host_read_bytes = 0;  // host memory -> device
	uint64_t rc_p2p_bytes = 0;	  // P2P turned around at the root complex
	uint64_t rc_busy_ps = 0;
	uint64_t host_mem_busy_ps = 0; // host memory moving device traffic
	uint64_t dma_faults = 0;
};

class Fabric : public sc_core::sc_module
{
public:
	Fabric(sc_core::sc_module_name name, const NodeConfig &cfg);

	// Endpoints bind their DMA initiator socket here; the socket index is
	// the port (bind the NIC first, then the GPU).
	tlm_utils::multi_passthrough_target_socket<Fabric> dma;
	// To the endpoints' BAR memory (P2P targets), index = port.
	tlm_utils::simple_initiator_socket_tagged<Fabric> bar_mem[kNumPorts];

	void set_host_dma(HostDma fn) { host_dma_ = std::move(fn); }
	// A BAR window a device exposes to P2P: [addr, addr+size) routes to
	// that port's bar_mem socket at offset addr - base. size 0 unmaps.
	void set_window(unsigned port, uint64_t addr, uint64_t size);
	// The Bus Master Enable bit of a port's device (PCI command register).
	// A device without it issues no request: the fabric refuses its DMA,
	// P2P included, as a DMA fault. On until the host says otherwise.
	void set_bus_master(unsigned port, bool on);

	const FabricCounters &counters() const { return c_; }
	// Counters only: the resources stay reserved for the transfers in flight.
	void reset_counters() { c_ = FabricCounters{}; }
	const LinkParams &link() const { return link_; }
	// Counters as JSON (docs/stats.md describes the schema).
	std::string stats_json() const;

private:
	enum class Tlps { Write, ReadRequest, Completion };
	// One resource's share of a transaction: the time it is busy with all
	// of the transaction's TLPs, with one of them, and the latency before
	// the first arrives. free_ps: when the resource is next free (ps).
	struct Stage {
		uint64_t *free_ps;
		uint64_t total_ps, unit_ps, latency_ps;
	};
	// Most stages a path has: an ACS-redirected peer read crosses seven
	// resources each way, plus the target.
	static constexpr unsigned kMaxStages = 16;
	struct Path {
		std::array<Stage, kMaxStages> stage;
		unsigned n = 0;
		Cost last{0, 0}; // the TLPs of the last link stage added
	};
	// A hop of a route: a link (crossed toward the target in direction
	// `toward`, with completions coming back the other way) or a switch
	// or root complex that forwards the TLPs.
	struct Hop {
		std::array<LinkCounters, 2> *link; // nullptr: a switch or root complex
		std::array<uint64_t, 2> *link_free;
		Dir toward;
		bool root_complex;
	};
	static constexpr unsigned kMaxHops = 8;
	struct Route {
		std::array<Hop, kMaxHops> hop;
		unsigned n = 0;
	};

	void b_transport(int port, tlm::tlm_generic_payload &gp, sc_core::sc_time &delay);
	int window_of(uint64_t addr, uint64_t len) const;
	Route route(unsigned port, int target);
	// Count the transfer over the route and lay out its stages.
	Path path(const Route &r, bool is_write, bool to_host, uint64_t addr, uint64_t len);
	void add_link(Path &path, const Hop &h, Tlps kind, uint64_t addr, uint64_t len);
	void add_forward(Path &path, bool root_complex);
	void add_memory(Path &path, uint64_t len);
	// Reserve the path's resources from start_ps on; returns when the
	// transaction is done (ps).
	static uint64_t reserve(const Path &path, uint64_t start_ps);

	LinkParams link_;
	bool acs_redirect_;
	bool timed_;
	uint64_t hop_latency_ps_;
	// Capacities in bytes per picosecond.
	double switch_bpps_, rc_bpps_, host_mem_bpps_;
	// When each resource is next free, in ps of simulated time.
	std::array<std::array<uint64_t, 2>, kNumPorts> endpoint_free_{};
	std::array<uint64_t, 2> upstream_free_{};
	uint64_t switch_free_ = 0, rc_free_ = 0, host_mem_free_ = 0;
	HostDma host_dma_;
	struct Window {
		uint64_t base = 0, size = 0;
	};
	std::array<Window, kNumPorts> win_{};
	std::array<bool, kNumPorts> bus_master_{true, true};
	FabricCounters c_;
	std::string mode_;
};

} // namespace devmemsim::pcie
