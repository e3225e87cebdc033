// SPDX-License-Identifier: MIT
// The node's PCIe fabric: a tree built from the node's topology (config.h,
// Topology): one or two root complexes (sockets) joined by an inter-socket
// link, switches on root ports, and NICs and GPUs on switches or directly
// on root ports. The default topology is
//
//   root complex ── "upstream" link ── switch ─┬─ "nic" link ── NIC
//                                              └─ "gpu" link ── GPU
//
// Endpoints issue DMA into the fabric's target socket for their port, one
// TLM generic payload per burst, tagged with a DmaExtension. Ports: NIC i
// is port i, GPU i is port K + i (K NICs). The fabric routes by address:
// into a BAR window of a device (P2P: turned around at the switch both
// devices are under, else at the root complex, crossing the inter-socket
// link when the devices are on different sockets; with acs_redirect always
// at the root complex), or to host memory through the root complex, then
// over the inter-socket link when the address is the other socket's
// memory. It counts TLPs, payload and wire bytes and busy time on every
// link it crosses, annotates the delay in timed mode, and moves the bytes
// through the target: host memory by the host's DMA callback, device
// memory by the owning endpoint's target.
//
// Timed mode is approximately timed (docs/architecture.md, "Timed
// fabric"). Switches and root complexes are crossbars: each port sends on
// its own link, so what competes is each link direction (a port's egress
// is the direction of its link that leaves the switch or root complex),
// every socket's host memory and the path a root complex has to it (one
// per direction), each direction of the inter-socket link, and a switch's
// core when pcie.switch_gbps gives it a limit (else it is non-blocking).
// Each resource serves one transfer at a time and keeps the times it is
// busy (a Timeline): a read books a link direction or a switch's core now
// for its requests and a round trip later for its completions, and the
// next read's requests take the idle time between. A transaction's TLPs
// reserve the resources on their path in order, pipelined (a stage starts
// when its first TLP has arrived and the resource is free), so flows that
// share a resource share its bandwidth and a saturated one delays
// everything behind it. The work per transaction is one reservation per
// resource on the path, whatever its length.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <vector>

#include "config.h"
#include "pcie/link.h"

namespace devmemsim::pcie
{

// The default topology's ports.
enum Port : unsigned { kNic = 0, kGpu = 1 };
enum Dir : unsigned { kUp = 0, kDown = 1 };

// Host memory behind the root complex. Returns false on a DMA fault (the
// address is not guest RAM). requester: the port the request came from.
using HostDma = std::function<bool(unsigned requester, uint64_t addr, void *buf, uint64_t len,
				   bool is_write)>;

struct SwitchCounters {
	uint64_t p2p_bytes = 0;	 // payload turned around here
	uint64_t tlps = 0;	 // TLPs forwarded, any port to any port
	uint64_t wire_bytes = 0; // their bytes
	uint64_t busy_ps = 0;	 // the core's time on them (0: non-blocking)
};

struct SocketCounters {
	uint64_t host_write_bytes = 0; // device -> this socket's host memory
	uint64_t host_read_bytes = 0;  // this socket's host memory -> device
	uint64_t p2p_bytes = 0;	       // P2P through this root complex
	uint64_t rc_busy_ps = 0;       // its path to host memory, both directions
	uint64_t host_mem_busy_ps = 0; // host memory moving device traffic
};

struct FabricCounters {
	std::vector<std::array<LinkCounters, 2>> endpoint; // [port][dir]
	std::vector<std::array<LinkCounters, 2>> uplink;   // [switch][dir]
	// [socket the TLPs leave]: inter_socket[0] carries socket 0 -> 1.
	std::array<LinkCounters, 2> inter_socket{};
	std::vector<SwitchCounters> switches;
	std::vector<SocketCounters> sockets;
	uint64_t iommu_translations = 0;
	uint64_t dma_faults = 0;
};

class Fabric : public sc_core::sc_module
{
public:
	// The tree is topology_of(cfg).
	Fabric(sc_core::sc_module_name name, const NodeConfig &cfg);

	// Endpoints bind their DMA initiator socket here; the socket index is
	// the port (bind the NICs first, then the GPUs).
	tlm_utils::multi_passthrough_target_socket<Fabric> dma;
	// To the endpoints' BAR memory (P2P targets), index = port.
	sc_core::sc_vector<tlm_utils::simple_initiator_socket_tagged<Fabric>> bar_mem;

	const Topology &topology() const { return topo_; }
	unsigned ports() const { return static_cast<unsigned>(attach_.size()); }
	unsigned nic_port(unsigned i) const { return i; }
	unsigned gpu_port(unsigned i) const { return static_cast<unsigned>(topo_.nics.size()) + i; }

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
	void reset_counters();
	const LinkParams &link() const { return link_; }
	// Counters as JSON (docs/stats.md describes the schema).
	std::string stats_json() const;

private:
	enum class Tlps { Write, ReadRequest, Completion };
	// A resource that serves one transfer at a time, in the order they are
	// due: its bookings as busy intervals, sorted. The fabric books a
	// transaction's path when the transaction starts, so a transfer can
	// be booked after one due later: a read's requests, where the
	// completions of the read before go the same way a round trip ahead.
	// It takes the first idle time from when it is due that holds it, as
	// the port would have sent it then; a transfer due after all the
	// others queues behind the last, as in a plain queue. Intervals that
	// touch merge; those over before the present are dropped (nothing is
	// due before it), and past kSlots the oldest.
	class Timeline
	{
	public:
		// Book work_ps from at_ps on (at_ps >= now_ps, the present);
		// when it starts.
		uint64_t book(uint64_t now_ps, uint64_t at_ps, uint64_t work_ps);

	private:
		static constexpr unsigned kSlots = 64; // a power of two
		struct Busy {
			uint64_t from_ps, to_ps;
		};
		Busy &busy(unsigned i) { return ring_[(head_ + i) & (kSlots - 1)]; }
		void insert(unsigned i, uint64_t start_ps, uint64_t end_ps);
		std::array<Busy, kSlots> ring_{};
		unsigned head_ = 0, n_ = 0; // the oldest interval, how many
		uint64_t last_to_ps_ = 0;   // when the latest ends
	};
	// One resource's share of a transaction: the time it is busy with all
	// of the transaction's TLPs, with one of them, and the latency before
	// the first arrives.
	struct Stage {
		Timeline *timeline;
		uint64_t total_ps, unit_ps, latency_ps;
	};
	// Most stages a path has: a read crosses nine resources each way,
	// plus the target.
	static constexpr unsigned kMaxStages = 20;
	// A link's cost for this transaction's TLPs of one kind; the links of
	// a route mostly have the same arithmetic, so the next one reuses it.
	struct LinkCost {
		uint32_t key = ~0u; // LinkTiming::key(), or none
		Tlps kind = Tlps::Write;
		Cost cost{0, 0};
		uint64_t dllp_bytes = 0, ps = 0, unit_ps = 0;
	};
	struct Path {
		std::array<Stage, kMaxStages> stage;
		unsigned n = 0;
		Cost last{0, 0};	 // the TLPs of the last link stage added
		uint64_t latency_ps = 0; // forwarding latency for the next stage
		bool translated = false; // the IOMMU has seen the transaction
		LinkCost link;		 // the last link's
		void add(Timeline *line, uint64_t total_ps, uint64_t unit_ps)
		{
			stage[n++] = {line, total_ps, unit_ps, latency_ps};
			latency_ps = 0;
		}
	};
	// A hop of a route: a link (crossed toward the target in direction
	// `toward`, with completions coming back the other way) or a switch
	// or root complex that forwards the TLPs. index: the port, switch or
	// socket; for the inter-socket link, `toward` is the socket the
	// request leaves.
	enum class Res { Endpoint, Uplink, InterSocket, Switch, RootComplex };
	struct Hop {
		Res kind;
		unsigned index;
		Dir toward;
	};
	// Most hops a route has: a peer on the other socket, both devices
	// under switches (link, switch, uplink, root complex, inter-socket,
	// root complex, uplink, switch, link).
	static constexpr unsigned kMaxHops = 9;
	struct Route {
		std::array<Hop, kMaxHops> hop;
		unsigned n = 0;
		void add(Res kind, unsigned index, Dir toward = kUp)
		{
			hop[n++] = {kind, index, toward};
		}
	};
	// Where a port's device is: under switch `sw` (-1: on a root port of
	// `socket`); socket is the one its traffic enters.
	struct Attach {
		int sw;
		unsigned socket;
	};

	void b_transport(int port, tlm::tlm_generic_payload &gp, sc_core::sc_time &delay);
	int window_of(uint64_t addr, uint64_t len) const;
	unsigned socket_of(uint64_t host_addr) const;
	Route route(unsigned port, int target, unsigned mem_socket) const;
	void count_p2p(const Route &r, uint64_t len);
	// Count the transfer over the route and lay out its stages.
	Path path(const Route &r, bool is_write, int mem_socket, uint64_t addr, uint64_t len);
	void add_hop(Path &path, const Route &r, unsigned i, Tlps kind, uint64_t addr,
		     uint64_t len);
	void add_link(Path &path, const Hop &h, Tlps kind, uint64_t addr, uint64_t len);
	void add_inter_socket(Path &path, const Hop &h, Tlps kind, uint64_t len);
	void add_switch(Path &path, unsigned sw);
	void add_root_complex(Path &path, unsigned socket, bool to_memory, Tlps kind);
	void add_memory(Path &path, unsigned socket, uint64_t len);
	// Reserve the path's resources from start_ps on (now_ps: the
	// present); returns when the transaction is done (ps).
	static uint64_t reserve(const Path &path, uint64_t now_ps, uint64_t start_ps);
	std::string link_name(Res kind, unsigned index) const;
	static void put_socket(std::ostream &o, const SocketCounters &s);
	void put_totals(std::ostream &o) const;
	void put_links(std::ostream &o) const;
	void put_switches(std::ostream &o) const;

	Topology topo_;
	std::vector<Attach> attach_; // [port]
	LinkParams link_;	     // [pcie]: MPS, MRRS, RCB of every link
	LinkTiming target_link_;     // completions as the target sends them
	std::vector<LinkTiming> endpoint_link_, uplink_link_; // [port], [switch]
	bool acs_redirect_;
	bool timed_;
	bool iommu_;
	uint64_t hop_latency_ps_, iommu_ps_, inter_socket_ps_;
	uint64_t ticks_per_ps_; // of the SystemC kernel's time resolution
	// Capacities as the time one byte takes, ps; a switch's 0 is
	// non-blocking.
	std::vector<double> switch_ps_per_byte_, rc_ps_per_byte_, host_mem_ps_per_byte_;
	double inter_socket_ps_per_byte_;
	// When each resource is busy, in ps of simulated time.
	std::vector<std::array<Timeline, 2>> endpoint_free_, uplink_free_;
	std::array<Timeline, 2> inter_socket_free_{};
	// A root complex's path to its host memory: [kUp] toward it (writes,
	// read requests), [kDown] from it (completions).
	std::vector<std::array<Timeline, 2>> rc_free_;
	std::vector<Timeline> host_mem_free_;
	std::vector<Timeline> switch_core_; // [switch]
	HostDma host_dma_;
	struct Window {
		uint64_t base = 0, size = 0;
	};
	std::vector<Window> win_;
	std::vector<bool> bus_master_;
	FabricCounters c_;
	std::string mode_;
};

} // namespace devmemsim::pcie
