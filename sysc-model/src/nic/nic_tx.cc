// SPDX-License-Identifier: MIT
// The NIC's transmit path: descriptor chains gathered into frames,
// checksum insertion, segmentation (segment.cc), the wire, and TX
// completions.
#include <algorithm>
#include <cstring>

#include "devmemsim/nic_desc.h"
#include "devmemsim/nic_regs.h"
#include "nic/csum.h"
#include "nic/nic.h"
#include "nic/nic_queue.h"
#include "nic/segment.h"

namespace devmemsim
{

void Nic::tx_thread()
{
	for (;;) {
		bool waiting = false; // a queue with work waits for a rate limit
		sc_core::sc_time due;
		unsigned frames = 0;
		if (tx_serve(&due, &waiting, &frames))
			spend(tx_budget_, frames);
		else if (waiting)
			sc_core::wait(due - sc_core::sc_time_stamp(), tx_ev_);
		else
			sc_core::wait(tx_ev_);
	}
}

// Send one frame: from the queue whose oldest unserved doorbell rang
// first, passing over queues whose next frame is not all posted yet (a
// fast NIC puts frames on the wire in the order the host posted them,
// whatever the queue) and queues their rate limits hold back (then
// *waiting is set and *due is the earliest time one may go). Weighted
// queues of one scheduler group swap places by their share (v1.8,
// txs_order()). Returns whether it did work: *frames frames sent (segments
// count), or a chain read and found not all posted. Such a queue is
// stalled: passed over without reading its ring again until its TXQ_TAIL
// moves, so a chain left incomplete costs one scan per doorbell, not one
// per frame other queues send. The caller checks the budget after each
// piece of work.
bool Nic::tx_serve(sc_core::sc_time *due, bool *waiting, unsigned *frames)
{
	// A member, not a local: a SystemC thread's stack is never unwound.
	std::vector<std::pair<uint64_t, unsigned>> &ready = tx_ready_;
	auto has_work = [this](unsigned qi) {
		const Queue &q = *q_[qi];
		return q.tx_on && !q.tx_stalled && q.tdescs() && q.tcmpl_free();
	};
	ready.clear();
	for (unsigned i = 0; i < nq_; i++)
		if (has_work(i))
			ready.emplace_back(q_[i]->tx_order(), i);
	std::sort(ready.begin(), ready.end());
	txs_order(ready);
	for (const auto &[order, qi] : ready) {
		if (!has_work(qi))
			continue; // changed while the engine waited for the wire
		if (!tx_rate_allows(qi, due, waiting))
			continue;
		*frames = tx_frame(qi);
		tx_pace();
		if (*frames)
			tx_served(qi, *frames);
		return true;
	}
	return false;
}

// Fairness: a doorbell that posted many frames gets kTxBurst of them in a
// row, then its place moves behind the doorbells rung meanwhile.
void Nic::tx_served(unsigned qi, unsigned frames)
{
	Queue &q = *q_[qi];
	q.tx_prune();
	if (q.tx_marks.empty())
		return;
	q.tx_burst += frames;
	if (q.tx_burst >= kTxBurst) {
		q.tx_marks.front().order = tx_doorbells_++;
		q.tx_burst = 0;
	}
}

// Whether queue qi's and the device's rate limits let its frame go now;
// if not, *waiting is set and *due is the earliest time such a frame may.
bool Nic::tx_rate_allows(unsigned qi, sc_core::sc_time *due, bool *waiting)
{
	sc_core::sc_time at;
	if (tx_rate_ready(qi, &at))
		return true;
	c_.tx_rate_waits++;
	if (!*waiting || at < *due)
		*due = at;
	*waiting = true;
	return false;
}

// Read the descriptors from the ring head up to EOP into d, a leading
// segmentation descriptor into seg. A chain that breaks the rules is cut
// there: it is consumed and dropped. A descriptor read that faults stops
// the queue (Fault).
Nic::TxChain Nic::tx_gather(unsigned qi, std::vector<dms_tx_desc> &d, TxSeg &seg)
{
	const Queue &q = *q_[qi];
	const uint32_t avail = q.tdescs();
	const uint32_t head = q.tx_head, ring = q.tx_size;
	const uint64_t base = q.tx_cfg.tdesc_base;
	for (uint32_t i = 0; i < avail && d.size() <= kMaxTxFrags; i++) {
		dms_tx_desc desc{};
		bool ok = dma_rw(tx_budget_, base + sizeof(desc) * ((head + i) % ring), &desc,
				 sizeof(desc), false, DmaStep::Prefetch);
		if (!ok)
			return TxChain::Fault;
		if (i == 0 && (desc.flags & DMS_TX_F_SEG)) {
			static_assert(sizeof(seg.d) == sizeof(desc), "one ring slot");
			std::memcpy(&seg.d, &desc, sizeof(desc));
			seg.on = true;
			continue;
		}
		d.push_back(desc);
		bool sop = desc.flags & DMS_TX_F_SOP;
		if ((d.size() == 1) != sop || (desc.flags & DMS_TX_F_SEG) || !desc.len ||
		    desc.len > 65535 || d.size() > kMaxTxFrags) {
			c_.tx_desc_err++;
			trace_("txq%u drop: malformed descriptor %u (flags 0x%x, len %u)", qi,
			       (head + i) % ring, unsigned(desc.flags), unsigned(desc.len));
			return TxChain::Bad;
		}
		if (desc.flags & DMS_TX_F_EOP) {
			trace_("txq%u fetched %zu descriptors", qi, d.size());
			return TxChain::Complete;
		}
	}
	return TxChain::Incomplete;
}

// Copy the chain's buffers into one frame (a super-frame if seg); false
// if it is malformed or a buffer faults (counted).
bool Nic::tx_read_frame(const std::vector<dms_tx_desc> &d, std::vector<uint8_t> &frame, bool seg)
{
	size_t total = 0;
	for (const auto &x : d)
		total += x.len;
	const size_t max = seg ? DMS_NIC_TSO_MAX_HDR + DMS_NIC_TSO_MAX_PAYLOAD : mtu_ + kL2Overhead;
	if (total < 14 || total > max) {
		c_.tx_desc_err++;
		trace_("tx drop: %zu-byte frame, MTU %u", total, mtu_);
		return false;
	}
	frame.resize(total);
	size_t off = 0;
	for (const auto &x : d) {
		if (!dma_rw(tx_budget_, x.addr, frame.data() + off, x.len, false, DmaStep::Data)) {
			c_.tx_dma_err++;
			mstat_.tx_lost();
			trace_("tx drop: buffer DMA fault");
			return false;
		}
		off += x.len;
	}
	return true;
}

// Send or drop one frame (or super-frame) of queue qi. Returns the work
// done, in frames: 0 if it is not all posted, its segments if it was cut.
// The ring index moves on before any host callback that may reset the
// queue (a synchronous peer in send); after each, the queue's epoch says
// whether its state may still be touched.
unsigned Nic::tx_frame(unsigned qi)
{
	Queue &q = *q_[qi];
	const uint64_t epoch = q.tx_epoch;
	std::vector<dms_tx_desc> d;
	TxSeg seg;
	const TxChain chain = tx_gather(qi, d, seg);
	if (q.tx_epoch != epoch)
		return 1; // stopped under us: nothing of it is consumed
	if (chain == TxChain::Incomplete) {
		q.tx_stalled = true; // the rest of the frame is not posted yet
		trace_("txq%u waits: chain of %zu descriptors not all posted", qi,
		       d.size() + seg.on);
		return 0;
	}
	if (chain == TxChain::Fault) {
		tx_ring_fault(qi, "descriptor read");
		return 1;
	}
	std::vector<uint8_t> frame;
	bool bad = chain == TxChain::Bad || !tx_read_frame(d, frame, seg.on);
	if (q.tx_epoch != epoch)
		return 1;
	q.tx_head = (q.tx_head + static_cast<uint32_t>(d.size() + seg.on)) % q.tx_size;
	tx_stamp_ = TxStamp{};
	tx_stamp_.want = !bad && (d[0].flags & DMS_TX_F_TS);
	unsigned sent = 1;
	if (!bad && seg.on) {
		if (!tx_segment(qi, frame, seg.d, sent))
			return sent;
		bad = !sent;
	} else if (!bad && !tx_send(qi, frame, d[0].flags & DMS_TX_F_CSUM)) {
		return sent;
	}
	if (q.tx_epoch != epoch)
		return std::max(sent, 1u);
	const PtpStamp ts = tx_stamp_.at;
	if (ts.valid)
		c_.ptp_tx_stamps++;
	tx_complete(qi, d.back().tag, bad, ts.valid ? lo32(ts.ns) : 0);
	if (q.tx_epoch == epoch)
		signal(qi);
	return std::max(sent, 1u);
}

// Cut a super-frame into segments and send them; sent says how many went
// out (0: the request was refused, counted). false if the queue stopped
// during a send.
bool Nic::tx_segment(unsigned qi, const std::vector<uint8_t> &frame, const dms_tx_seg_desc &sd,
		     unsigned &sent)
{
	const uint64_t epoch = q_[qi]->tx_epoch;
	const SegRequest req{sd.mss, sd.hdr_len, sd.flags & ~DMS_TX_F_SEG & 0xffffu};
	Segmenter seg;
	sent = 0;
	if (const char *why = seg.plan(frame.data(), frame.size(), req, mtu_)) {
		c_.tx_tso_err++;
		trace_("txq%u drop: segmentation (mss %u, hdr_len %u, flags 0x%x): %s", qi, req.mss,
		       req.hdr_len, unsigned(sd.flags), why);
		return true;
	}
	c_.tx_tso++;
	trace_("txq%u segmenting %zu bytes into %zu frames", qi, frame.size(), seg.segments());
	std::vector<uint8_t> out;
	for (size_t i = 0; i < seg.segments(); i++) {
		seg.build(i, out);
		c_.tx_tso_segs++;
		sent++;
		if (!tx_send(qi, out, false) || q_[qi]->tx_epoch != epoch)
			return false;
	}
	return true;
}

// Checksum, wire time, the wire; false if the queue stopped during send.
bool Nic::tx_send(unsigned qi, std::vector<uint8_t> &frame, bool csum)
{
	Queue &q = *q_[qi];
	const uint64_t epoch = q.tx_epoch;
	if (csum && (tx_ctrl_ & DMS_NIC_TX_CSUM)) {
		Parsed p = parse_frame(frame.data(), frame.size());
		l4_csum_fill(frame.data(), p);
	}
	sc_core::sc_time start = sc_core::sc_time_stamp();
	if (timed_) {
		// On the wire once its data is read and the previous frame is out.
		start = std::max(start + data_done_, tx_wire_free_);
		tx_wire_free_ = start + wire_time(frame.size());
	}
	if (tx_stamp_.want && !tx_stamp_.at.valid) {
		const sc_core::sc_time ahead = start - sc_core::sc_time_stamp();
		tx_stamp_.at = {true, ptp_now(static_cast<int64_t>(ahead.value() / 1000))};
	}
	tx_rate_take(qi, frame.size());
	charge_frame(tx_budget_, frame.size());
	q.tx_frames++;
	c_.tx_frames++;
	c_.tx_bytes += frame.size();
	if (link_up_) {
		mac_send(frame);
		if (host_.send)
			host_.send(frame.data(), frame.size());
	}
	return q.tx_epoch == epoch;
}

void Nic::tx_complete(unsigned qi, uint16_t tag, bool bad, uint32_t ts)
{
	Queue &q = *q_[qi];
	const uint64_t epoch = q.tx_epoch;
	dms_tx_cmpl c{};
	c.flags = static_cast<uint16_t>((q.tx_phase ? DMS_TX_C_GEN : 0) | (bad ? DMS_TX_C_ERR : 0));
	c.tag = tag;
	c.ts = ts;
	const uint32_t slot = q.tcmpl_tail;
	// Written once the NIC holds the frame's bytes, not after the wire.
	const bool written = dma_rw(tx_budget_, q.tx_cfg.tcmpl_base + sizeof(c) * slot, &c,
				    sizeof(c), true, DmaStep::Completion);
	if (q.tx_epoch != epoch)
		return;
	if (!written) {
		tx_ring_fault(qi, "completion write");
		return;
	}
	trace_("txq%u completion %u tag %u%s", qi, slot, unsigned(tag), bad ? " ERR" : "");
	if (++q.tcmpl_tail == q.tx_size) {
		q.tcmpl_tail = 0;
		q.tx_phase = !q.tx_phase;
	}
}

// A DMA fault on a TX ring: the queue stops (nothing more is consumed or
// completed), says so in TXQ_CTRL and Q_FAULT, and raises the admin cause.
void Nic::tx_ring_fault(unsigned qi, const char *what)
{
	Queue &q = *q_[qi];
	q.tx_stop();
	q.tx_fault = true;
	c_.ring_dma_err++;
	trace_("txq%u stopped: %s DMA fault", qi, what);
	admin_event(DMS_NIC_ADMIN_IRQ_Q_FAULT);
}

} // namespace devmemsim
