// SPDX-License-Identifier: MIT
#include "rr_app.h"

#include <algorithm>

namespace dms_sim
{

RrApp::RrApp(SimNode &client, uint32_t request_bytes, uint32_t response_bytes, unsigned outstanding,
	     uint64_t messages, RrStreams s)
    : client_(client), request_bytes_(request_bytes), response_bytes_(response_bytes),
      outstanding_(outstanding), messages_(messages), s_(s)
{
	s_.request_rx.on_delivered([this](uint64_t d) { on_requests(d); });
	s_.response_rx.on_delivered([this](uint64_t d) { on_responses(d); });
	lat_.reserve(messages);
}

void RrApp::start()
{
	client_.cpu_job(0, [this] {
		const uint64_t first = std::min<uint64_t>(outstanding_, messages_);
		for (uint64_t i = 0; i < first; i++)
			issue();
	});
}

// Inside a client CPU job: one more request goes to the socket.
void RrApp::issue()
{
	issued_at_.push_back(client_.job_now_ps());
	issued_++;
	s_.request_tx.write_message(issued_ == messages_);
}

// Server: every request now whole in GPU memory gets its response.
void RrApp::on_requests(uint64_t delivered)
{
	while (served_ < delivered / request_bytes_) {
		served_++;
		s_.response_tx.write_message(served_ == messages_);
	}
}

// Client: every response now whole in GPU memory completes its message,
// and the next request takes its place.
void RrApp::on_responses(uint64_t delivered)
{
	while (completed_ < delivered / response_bytes_) {
		last_ps_ = client_.job_now_ps();
		lat_.push_back(last_ps_ - issued_at_.front());
		issued_at_.pop_front();
		completed_++;
		if (issued_ < messages_)
			issue();
	}
}

} // namespace dms_sim
