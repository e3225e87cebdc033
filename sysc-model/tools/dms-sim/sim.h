// SPDX-License-Identifier: MIT
// One dms-sim run: two nodes, their drivers, the wire and the stream, and
// the loop that interleaves the model's steps with host events in time.
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

class Simulation
{
public:
	// node_files: one node configuration per node (node0 sends to node1).
	Simulation(const std::vector<std::string> &node_files, double line_rate_gbps,
		   const Workload &w);
	~Simulation();
	// Run the stream to its end; false if it stalled or did not verify.
	bool run();
	// The model's trace lines, with the simulated time and the node, to
	// out (nullptr: off).
	void set_trace(std::FILE *out);

	bool completed() const { return completed_; }
	bool verified() const;
	uint64_t sim_ps() const { return ev_.now_ps(); }
	uint64_t host_events() const { return ev_.count(); }
	uint64_t model_steps() const { return steps_; }
	// Payload bytes verified in GPU memory per second of the measured window.
	double goodput_bps() const;
	const Workload &workload() const { return w_; }
	const Wire &wire() const { return *wire_; }
	const TcpSender &sender() const { return *tx_; }
	const TcpReceiver &receiver() const { return *rx_; }
	const NicDriver &driver(unsigned i) const { return *drv_[i]; }
	SimNode &node(unsigned i) const { return *nodes_[i]; }

private:
	void wire_up(unsigned i);
	static void trace_line(void *opaque, enum dms_dev dev, const char *line);
	void step_model_to(uint64_t ns);

	Workload w_;
	Events ev_;
	std::vector<dms_node *> models_;
	std::vector<std::unique_ptr<SimNode>> nodes_;
	std::vector<std::unique_ptr<NicDriver>> drv_;
	std::unique_ptr<Wire> wire_;
	std::unique_ptr<TcpSender> tx_;
	std::unique_ptr<TcpReceiver> rx_;
	struct TraceCtx {
		Simulation *sim;
		unsigned node;
	};
	std::FILE *trace_ = nullptr;
	TraceCtx trace_ctx_[2];
	uint64_t steps_ = 0;
	uint64_t delivered_at_warmup_ = 0, delivered_at_stop_ = 0;
	bool completed_ = false;
};

} // namespace dms_sim
