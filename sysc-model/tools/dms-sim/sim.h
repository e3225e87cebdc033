// SPDX-License-Identifier: MIT
// One dms-sim run: two nodes of K NIC/GPU pairs each, one flow per pair
// (node0's pair i sends to node1's pair i over its own wire), and the
// loop that interleaves the model's steps with host events in time.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "nic_driver.h"
#include "sim_host.h"
#include "tcp_stream.h"
#include "wire.h"
#include "workload.h"

namespace dms_sim
{

// One stream and everything it runs on: both ends' pair (host memory,
// core, NIC and GPU), their drivers and the wire between them.
struct Flow {
	std::unique_ptr<SimNode> end[2];
	std::unique_ptr<NicDriver> drv[2];
	std::unique_ptr<Wire> wire;
	std::unique_ptr<TcpSender> tx;
	std::unique_ptr<TcpReceiver> rx;
	uint64_t delivered_at_warmup = 0, delivered_at_stop = 0;
	bool done() const { return tx->done() && rx->finished(); }
	bool verified() const;
};

class Simulation
{
public:
	// node_files: one node configuration per node (node0 sends to node1);
	// both have the same number of NIC/GPU pairs, one flow each.
	Simulation(const std::vector<std::string> &node_files, double line_rate_gbps,
		   const Workload &w);
	~Simulation();
	// Run the streams to their end; false if one stalled or did not verify.
	bool run();
	// The model's trace lines, with the simulated time and the device, to
	// out (nullptr: off).
	void set_trace(std::FILE *out);

	bool completed() const { return completed_; }
	bool verified() const;
	uint64_t sim_ps() const { return ev_.now_ps(); }
	uint64_t host_events() const { return ev_.count(); }
	uint64_t model_steps() const { return steps_; }
	// Payload bytes verified in GPU memory per second of the measured
	// window: of flow f, and of all flows together.
	double goodput_bps(unsigned f) const;
	double goodput_bps() const;
	uint64_t sent_bytes() const;
	const Workload &workload() const { return w_; }
	unsigned flows() const { return static_cast<unsigned>(flows_.size()); }
	const Flow &flow(unsigned f) const { return flows_[f]; }
	dms_node *model(unsigned node) const { return models_[node]; }

private:
	void build_flow(unsigned pair, double line_rate_gbps);
	void wire_up(Flow &f);
	static void trace_line(void *opaque, enum dms_dev dev, const char *line);
	void step_model_to(uint64_t ns);
	bool all_done() const;

	Workload w_;
	Events ev_;
	std::vector<dms_node *> models_;
	std::vector<Flow> flows_;
	struct TraceCtx {
		Simulation *sim;
		unsigned node;
	};
	std::FILE *trace_ = nullptr;
	TraceCtx trace_ctx_[2];
	uint64_t steps_ = 0;
	bool completed_ = false;
};

} // namespace dms_sim
