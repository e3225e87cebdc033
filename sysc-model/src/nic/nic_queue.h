// SPDX-License-Identifier: MIT
// One queue pair of the NIC as the device holds it: the ring setup the
// driver wrote, the indexes of both sides, and the queue's interrupt;
// and a frame on its way into an RX queue.
// Internal to the NIC's source files.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <systemc>
#include <vector>

#include "nic/nic.h"

namespace devmemsim
{

// The plain (non-doorbell) per-queue registers, as the driver wrote them.
struct QueueSetup {
	uint32_t rx_log2 = 0, hbuf_size = 0, pbuf_size = 0;
	bool rx_whole = false;	 // RXQ_CTRL WHOLE (v1.8): never split, no header buffers
	bool rx_pack = false;	 // RXQ_CTRL PACK (v1.9): payload buffers packed
	bool rx_drop_en = false; // RXQ_CTRL DROP_EN (v1.10): no room, no wait
	uint64_t hbuf_base = 0, pbuf_base = 0, rcmpl_base = 0;
	uint32_t tx_log2 = 0;
	uint64_t tdesc_base = 0, tcmpl_base = 0;
};

struct Nic::Queue {
	QueueSetup regs;
	// Doorbells: the driver's producer and consumer indexes.
	uint32_t hbuf_tail = 0, pbuf_tail = 0, rcmpl_head = 0;
	uint32_t tx_tail = 0, tcmpl_head = 0;
	// Device side. The setup is latched from regs when a ring is enabled;
	// the datapath only uses the latched copy, so register writes while the
	// ring runs cannot change work in flight.
	bool rx_on = false, tx_on = false;
	bool rx_refused = false, tx_refused = false; // last enable was refused
	bool rx_fault = false, tx_fault = false;     // a ring DMA fault stopped it
	QueueSetup rx_cfg, tx_cfg;
	uint32_t rx_size = 0, tx_size = 0;
	uint32_t hbuf_head = 0, pbuf_head = 0, rcmpl_tail = 0;
	// PACK (v1.9): bytes of the buffer at pbuf_head already used, rounded
	// up to DMS_NIC_PACK_ALIGN; always below its size (0: untouched).
	uint32_t pbuf_fill = 0;
	// The ids of the last header and payload buffers the NIC was done
	// with (-1: none since the enable), for nic_lie_id's stale ids.
	int32_t rx_done_hbuf_id = -1, rx_done_pbuf_id = -1;
	uint32_t tx_head = 0, tcmpl_tail = 0;
	bool rx_phase = true, tx_phase = true;
	// Bumped whenever a ring is enabled, disabled or reset: work started
	// under an older epoch is abandoned after any host callback.
	uint64_t rx_epoch = 0, tx_epoch = 0;
	// Interrupt.
	bool armed = false;
	bool fired = false; // last_irq is valid
	sc_core::sc_time last_irq;
	sc_core::sc_event irq_ev, rx_doorbell;
	// Moderation registers, [0] RX, [1] TX: read live, not latched.
	std::array<uint32_t, 2> itr_ns{}, itr_frames{};
	// Per kind: completions pending while armed since wait_from.
	std::array<bool, 2> waiting{};
	std::array<sc_core::sc_time, 2> wait_from{};
	// TX arbitration (Nic::tx_serve): the tails the driver rang and not yet
	// served, in ring order, each with its place in the NIC-wide doorbell
	// order; frames served since the front one became the front.
	struct TxMark {
		uint32_t tail;
		uint64_t order;
	};
	std::deque<TxMark> tx_marks;
	uint32_t tx_burst = 0;
	// The chain at tx_head was read and is not all posted: the engine
	// passes the queue over until a TXQ_TAIL write moves the tail.
	bool tx_stalled = false;
	// Hardware GRO: the aggregates open on this RX queue.
	GroTable gro;
	// TX rate limit (v1.6): read live, kept across ring enables.
	TokenBucket tx_rate;
	// TX scheduler (v1.8): the queue's node (n + 1, 0 none) and weight;
	// bytes sent per unit of weight, in its group's virtual time.
	uint32_t txs_node = DMS_NIC_TXS_NONE, txs_weight = 0;
	uint64_t txs_service = 0;
	// Statistics.
	uint64_t rx_frames = 0, rx_split = 0, tx_frames = 0;
	uint64_t rx_no_buf_drop = 0; // v1.10: RXQ_NO_BUF_DROP

	static uint32_t used(uint32_t tail, uint32_t head, uint32_t size)
	{
		return size ? (tail + size - head) % size : 0;
	}
	uint32_t hbufs() const { return used(hbuf_tail, hbuf_head, rx_size); }
	uint32_t pbufs() const { return used(pbuf_tail, pbuf_head, rx_size); }
	uint32_t rcmpl_free() const
	{
		return rx_size ? rx_size - 1 - used(rcmpl_tail, rcmpl_head, rx_size) : 0;
	}
	uint32_t tdescs() const { return used(tx_tail, tx_head, tx_size); }
	uint32_t tcmpl_free() const
	{
		return tx_size ? tx_size - 1 - used(tcmpl_tail, tcmpl_head, tx_size) : 0;
	}
	// A TXQ_TAIL doorbell (before tx_tail takes the new value). Marks at or
	// beyond the new tail (the driver moved it back) are forgotten, so the
	// marks stay in ring order, at most one per posted descriptor.
	void tx_mark(uint32_t tail, uint64_t order)
	{
		tx_prune();
		const uint32_t d = used(tail, tx_head, tx_size);
		while (!tx_marks.empty() && used(tx_marks.back().tail, tx_head, tx_size) >= d)
			tx_marks.pop_back();
		if (d)
			tx_marks.push_back({tail, order});
	}
	// Forget the marks the engine has consumed (reached or passed).
	void tx_prune()
	{
		const uint32_t pending = tdescs();
		while (!tx_marks.empty()) {
			const uint32_t d = used(tx_marks.front().tail, tx_head, tx_size);
			if (d && d <= pending)
				break;
			tx_marks.pop_front();
			tx_burst = 0;
		}
	}
	// Where the queue's next frame stands in doorbell order.
	uint64_t tx_order()
	{
		tx_prune();
		return tx_marks.empty() ? std::numeric_limits<uint64_t>::max()
					: tx_marks.front().order;
	}
	void rx_stop()
	{
		rx_on = false;
		rx_size = 0;
		rx_cfg = QueueSetup{};
		rx_epoch++;
		gro.clear(); // segments held in open aggregates are lost
	}
	void tx_stop()
	{
		tx_on = false;
		tx_size = 0;
		tx_cfg = QueueSetup{};
		tx_epoch++;
		tx_marks.clear();
		tx_burst = 0;
		tx_stalled = false;
	}
	// Back to power-on state; the events stay (processes wait on them).
	void clear()
	{
		regs = QueueSetup{};
		hbuf_tail = pbuf_tail = rcmpl_head = 0;
		tx_tail = tcmpl_head = 0;
		rx_stop();
		tx_stop();
		rx_refused = tx_refused = false;
		rx_fault = tx_fault = false;
		hbuf_head = pbuf_head = rcmpl_tail = tx_head = tcmpl_tail = 0;
		pbuf_fill = 0;
		rx_phase = tx_phase = true;
		armed = fired = false;
		last_irq = sc_core::SC_ZERO_TIME;
		irq_ev.cancel();
		itr_ns = itr_frames = {};
		waiting = {};
		tx_rate.reset();
		txs_node = DMS_NIC_TXS_NONE;
		txs_weight = 0;
		txs_service = 0;
	}
	bool completions_pending() const
	{
		return (rx_on && rcmpl_tail != rcmpl_head) || (tx_on && tcmpl_tail != tcmpl_head);
	}
	// Completions written and not yet consumed: [0] RX, [1] TX.
	std::array<uint32_t, 2> pending() const
	{
		return {rx_on ? used(rcmpl_tail, rcmpl_head, rx_size) : 0,
			tx_on ? used(tcmpl_tail, tcmpl_head, tx_size) : 0};
	}
};

// One frame on its way into a queue's buffers.
struct Nic::RxFrame {
	explicit RxFrame(const std::vector<uint8_t> &frame) : data(frame) {}

	const std::vector<uint8_t> &data;
	Parsed p;
	uint32_t hash = 0;
	bool hashed = false;
	int csum = -1; // TCP/UDP (and IPv4 header) checksums: -1 not checked yet
	uint16_t gro_segs = 0, gso_size = 0; // a coalesced frame (gro_table.h)
	PtpStamp stamp;			     // v1.6: when it crossed the MAC
	// When it arrived: the host's time then, which the model's lags while
	// it idles (GRO's timers run from it).
	sc_core::sc_time came;
	unsigned qi = 0;
	// The queue's setup and epoch when the frame got its room: every
	// length below is checked against this setup.
	QueueSetup cfg;
	uint32_t ring = 0;
	uint64_t epoch = 0;
	bool split = false;
	size_t hdr_len = 0, pay_len = 0;
	uint32_t nh = 0, np = 0; // header and payload buffers it takes (PACK: touches)
	// PACK (v1.9): where its payload starts in the first payload buffer;
	// the buffers it fills to the end (the first `done` of its np), and
	// the fill of the one after them when that is the last it touches.
	uint32_t pfill = 0, done = 0, fill_after = 0;
	dms_rx_buf hb{};
	std::vector<dms_rx_buf> pb;

	size_t len() const { return data.size(); }
	uint32_t completions() const { return std::max<uint32_t>(np, 1); }
	// Payload piece i (in payload buffer i of the np): where it starts in
	// its buffer (pfill for the first, else 0) and in the frame.
	size_t piece_off(uint32_t i) const { return i ? 0 : pfill; }
	size_t piece_at(uint32_t i) const
	{
		return hdr_len + (i ? size_t(i) * cfg.pbuf_size - pfill : 0);
	}
};

} // namespace devmemsim
