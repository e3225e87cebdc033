// SPDX-License-Identifier: MIT
// dms-sim's request/response application (traffic.kind = "rr"): a client
// keeps rr.outstanding requests of rr.request_bytes in flight to a server,
// which answers each with rr.response_bytes once the whole request is in
// its GPU memory; rr.messages requests in all. Requests and responses are
// two streams (tcp_stream.h), one each way.
//
// A message's latency runs from the moment the client's application
// issues it (its payload ready in GPU memory, the client's core free to
// act) to the moment the client's host software sees the whole response
// in GPU memory: devmem, when the driver has handled the completion of its
// last segment; bounce, when the copy engine's job that moved its last
// bytes from host memory into GPU memory has completed and its interrupt
// been handled. Both ends' CPU work on the way (copies, per-frame costs,
// interrupts) is inside it, each timestamp taken where that work got to.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "tcp_stream.h"

namespace dms_sim
{

struct RrStreams {
	TcpSender &request_tx;	  // client
	TcpReceiver &request_rx;  // server
	TcpSender &response_tx;	  // server
	TcpReceiver &response_rx; // client
};

class RrApp
{
public:
	RrApp(SimNode &client, uint32_t request_bytes, uint32_t response_bytes,
	      unsigned outstanding, uint64_t messages, RrStreams s);
	// The first requests leave at time 0.
	void start();
	bool done() const { return completed_ == messages_; }
	// Each completed message's latency, in completion order.
	const std::vector<uint64_t> &latencies_ps() const { return lat_; }
	// From the first request's issue to the last response's arrival.
	uint64_t elapsed_ps() const { return last_ps_; }

private:
	void issue();
	void on_requests(uint64_t delivered);
	void on_responses(uint64_t delivered);

	SimNode &client_;
	uint32_t request_bytes_, response_bytes_;
	unsigned outstanding_;
	uint64_t messages_;
	RrStreams s_;
	std::deque<uint64_t> issued_at_;
	uint64_t issued_ = 0, served_ = 0, completed_ = 0, last_ps_ = 0;
	std::vector<uint64_t> lat_;
};

} // namespace dms_sim
