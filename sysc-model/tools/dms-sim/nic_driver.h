// SPDX-License-Identifier: MIT
// dms-sim's driver model of one NIC, written against the register and
// descriptor contract (devmemsim/nic_regs.h, nic_desc.h) the way dmsnic
// uses it: one queue pair with header-buffer, payload-buffer and
// completion rings and a TX ring, NAPI-style polling on the queue's MSI-X
// vector with the NIC's ITR moderation, buffers returned and reposted.
// Host CPU time: a per-interrupt and a per-frame cost (DriverParams).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "devmemsim/nic_desc.h"
#include "sim_host.h"

namespace dms_sim
{

struct DriverParams {
	unsigned rx_ring_log2 = 12; // entries of each RX ring
	unsigned tx_ring_log2 = 10;
	uint32_t hbuf_size = 256;  // header buffers (host memory)
	uint32_t pbuf_size = 4096; // payload buffers: page-sized, as devmem's net_iovs
	uint32_t mtu = 9000;
	uint32_t itr_ns = 8000;	       // ITR_NS register
	unsigned napi_budget = 64;     // frames per poll, as Linux's NAPI weight
	uint64_t irq_ps = 1000000;     // interrupt entry and NAPI scheduling
	uint64_t rx_frame_ps = 200000; // driver + stack work per received frame
	uint64_t tx_frame_ps = 200000; // per sent frame
};

// Payload buffer i is pbuf_size bytes at bus + i * pbuf_size (host memory,
// or the GPU's BAR for devmem); data is where the host sees it.
struct PayloadPool {
	uint64_t bus;
	uint8_t *data;
};

struct RxFrag {
	uint16_t id;
	uint32_t len;
	uint64_t bus;
	const uint8_t *data;
};

struct RxFrame {
	const uint8_t *hdr = nullptr; // headers (the whole frame if it did not split)
	size_t hdr_len = 0;
	bool csum_ok = false;
	std::vector<RxFrag> frags; // payload buffers, returned with return_pbuf()
};

struct DriverCounters {
	uint64_t irqs = 0, polls = 0, rx_frames = 0, tx_frames = 0;
	uint64_t rx_errors = 0, tx_errors = 0, csum_bad = 0, stalls = 0;
};

class NicDriver
{
public:
	struct Handlers {
		std::function<bool()> can_take; // false: leave frames on the ring until resume()
		std::function<void(const RxFrame &)> rx;
		std::function<void()> tx_room;	 // TX completions freed descriptors
		std::function<void()> poll_done; // end of a poll (delayed ACKs)
	};
	NicDriver(SimNode &node, const DriverParams &p, PayloadPool pool);

	void set_handlers(Handlers h) { h_ = std::move(h); }
	// Program the NIC, post every buffer, arm the queue's interrupt.
	void start();
	void on_irq(unsigned vector);
	// A consumer that refused frames (can_take) has room again.
	void resume();

	// Inside a CPU job (SimNode::cpu_job): frames that fit the TX ring
	// now, one post (header bytes, optional payload buffer), a buffer back.
	unsigned tx_room(unsigned descs_per_frame) const;
	void tx_post(const uint8_t *hdr, size_t hdr_len, uint64_t pay_bus, uint32_t pay_len);
	void return_pbuf(uint16_t id);

	const DriverCounters &counters() const { return c_; }
	const DriverParams &params() const { return p_; }

private:
	void setup_rx();
	void setup_tx();
	void poll();
	bool next_frame(RxFrame &f);
	void reap_tx();
	void post_hbuf(uint16_t id);
	void post_pbuf(uint16_t id);
	// Doorbells and indexes reach the NIC when the CPU job ends.
	void flush_at_job_end();
	void flush();
	dms_rx_cmpl *rx_cmpl(uint32_t i);

	SimNode &n_;
	DriverParams p_;
	PayloadPool pool_;
	Handlers h_;
	uint32_t rx_size_, tx_size_;
	uint64_t hring_, pring_, cring_, hbufs_;
	uint64_t tdesc_, tcmpl_, thdr_;
	uint32_t hbuf_tail_ = 0, pbuf_tail_ = 0, rx_head_ = 0;
	bool rx_phase_ = true;
	uint32_t tx_tail_ = 0, tx_head_ = 0, tx_cmpl_head_ = 0;
	bool tx_phase_ = true;
	std::deque<uint32_t> tx_inflight_; // descriptors of each frame in flight
	bool flush_pending_ = false, arm_ = false, stalled_ = false, polling_ = false;
	DriverCounters c_;
};

} // namespace dms_sim
