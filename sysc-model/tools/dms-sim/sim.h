// SPDX-License-Identifier: MIT
// One dms-sim run: N nodes of K NIC/GPU pairs each (a host per pair),
// joined by wires (two nodes, one wire per pair) or one ideal switch (a
// port per NIC); the flows of the workload's pattern, each between the
// same pair of two nodes; and the loop that interleaves the model's steps
// with host events in time.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "host.h"
#include "network.h"
#include "rr_app.h"
#include "tcp_stream.h"
#include "workload.h"

namespace dms_sim
{

// One flow: a bulk stream src -> dst, or (rr) requests src -> dst and
// responses dst -> src.
struct Flow {
	FlowSpec spec;
	unsigned pair;
	std::unique_ptr<TcpSender> tx;
	std::unique_ptr<TcpReceiver> rx;
	std::unique_ptr<TcpSender> back_tx; // rr: the responses
	std::unique_ptr<TcpReceiver> back_rx;
	std::unique_ptr<RrApp> rr;
	uint64_t delivered_at_warmup = 0, delivered_at_stop = 0;
	bool done() const;
	bool verified() const;
	// Payload bytes sent, and verified in GPU memory, both ways.
	uint64_t sent() const;
	uint64_t delivered() const;
};

class Simulation
{
public:
	// node_files: one node configuration per node (network.nodes of them),
	// all with the same number of NIC/GPU pairs.
	Simulation(const std::vector<std::string> &node_files, double line_rate_gbps,
		   const Workload &w);
	~Simulation();
	// Run the flows to their end; false if one stalled or did not verify.
	bool run();
	// The model's trace lines, with the simulated time and the device, to
	// out (nullptr: off).
	void set_trace(std::FILE *out);

	bool completed() const { return completed_; }
	bool verified() const;
	uint64_t sim_ps() const { return ev_.now_ps(); }
	uint64_t host_events() const { return ev_.count(); }
	uint64_t model_steps() const { return steps_; }
	// Payload bits verified in GPU memory per second: of flow f (a stream:
	// over the measured window; rr: both ways, from the first request to
	// the last response), and of all flows together.
	double goodput_bps(unsigned f) const;
	double goodput_bps() const;
	uint64_t sent_bytes() const;
	const Workload &workload() const { return w_; }
	double line_rate_gbps() const { return gbps_; }
	unsigned flows() const { return static_cast<unsigned>(flows_.size()); }
	const Flow &flow(unsigned f) const { return flows_[f]; }
	unsigned nodes() const { return static_cast<unsigned>(models_.size()); }
	unsigned pairs() const { return pairs_; }
	dms_node *model(unsigned node) const { return models_[node]; }
	const Host &host(unsigned node, unsigned pair) const
	{
		return *hosts_[node * pairs_ + pair];
	}
	const std::vector<std::unique_ptr<Network>> &networks() const { return nets_; }
	// Payload bytes the node's flows sent or received.
	uint64_t node_payload_bytes(unsigned node) const;

private:
	Host &host_of(unsigned node, unsigned pair) { return *hosts_[node * pairs_ + pair]; }
	void build_hosts(const std::vector<FlowSpec> &specs);
	void build_networks();
	// node i's NIC of pair p as the network's reports name it.
	std::string nic_label(unsigned node, unsigned pair) const;
	void build_flow(Flow &f, unsigned index);
	StreamParams stream_params(unsigned index, uint32_t message_bytes) const;
	static void trace_line(void *opaque, enum dms_dev dev, const char *line);
	void start();
	void step_model_to(uint64_t ns);
	bool all_done() const;

	Workload w_;
	double gbps_;
	Events ev_;
	std::vector<dms_node *> models_;
	unsigned pairs_ = 0;
	std::vector<std::unique_ptr<Host>> hosts_;
	std::vector<std::unique_ptr<Network>> nets_;
	std::vector<Flow> flows_;
	struct TraceCtx {
		Simulation *sim;
		unsigned node;
	};
	std::FILE *trace_ = nullptr;
	std::vector<TraceCtx> trace_ctx_;
	uint64_t steps_ = 0;
	bool completed_ = false;
};

} // namespace dms_sim
