// SPDX-License-Identifier: MIT
// The NIC's transmit path: descriptor chains gathered into frames,
// checksum insertion, the wire, and TX completions.
#include "devmemsim/nic_desc.h"
#include "devmemsim/nic_regs.h"
#include "nic/csum.h"
#include "nic/nic.h"
#include "nic/nic_queue.h"

namespace devmemsim
{

void Nic::tx_thread()
{
	WorkBudget budget;
	for (;;) {
		unsigned frames = 0;
		for (unsigned i = 0; i < nq_; i++) {
			const Queue &q = *q_[i];
			if (q.tx_on && q.tdescs() && q.tcmpl_free() && tx_frame(i))
				frames++;
			tx_pace();
		}
		if (!frames)
			sc_core::wait(tx_ev_);
		else
			spend(budget, frames, kTxBudget);
	}
}

// Read the descriptors from the ring head up to EOP into d. A chain that
// breaks the rules is cut there: it is consumed and dropped. A descriptor
// read that faults stops the queue (Fault).
Nic::TxChain Nic::tx_gather(unsigned qi, std::vector<dms_tx_desc> &d)
{
	const Queue &q = *q_[qi];
	const uint32_t avail = q.tdescs();
	const uint32_t head = q.tx_head, ring = q.tx_size;
	const uint64_t base = q.tx_cfg.tdesc_base;
	for (uint32_t i = 0; i < avail && i <= kMaxTxFrags; i++) {
		dms_tx_desc desc{};
		bool ok = dma_rw(base + sizeof(desc) * ((head + i) % ring), &desc, sizeof(desc),
				 false, DmaStep::Prefetch);
		if (!ok)
			return TxChain::Fault;
		d.push_back(desc);
		bool sop = desc.flags & DMS_TX_F_SOP;
		if ((i == 0) != sop || !desc.len || desc.len > 65535 || d.size() > kMaxTxFrags) {
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

// Copy the chain's buffers into one frame; false if it is malformed or a
// buffer faults (counted).
bool Nic::tx_read_frame(const std::vector<dms_tx_desc> &d, std::vector<uint8_t> &frame)
{
	size_t total = 0;
	for (const auto &x : d)
		total += x.len;
	if (total < 14 || total > mtu_ + kL2Overhead) {
		c_.tx_desc_err++;
		trace_("tx drop: %zu-byte frame, MTU %u", total, mtu_);
		return false;
	}
	frame.resize(total);
	size_t off = 0;
	for (const auto &x : d) {
		if (!dma_rw(x.addr, frame.data() + off, x.len, false, DmaStep::Data)) {
			c_.tx_dma_err++;
			trace_("tx drop: buffer DMA fault");
			return false;
		}
		off += x.len;
	}
	return true;
}

// Send or drop one frame of queue qi; false if it is not all posted. The
// ring index moves on before any host callback that may reset the queue
// (a synchronous peer in send); after each, the queue's epoch says whether
// its state may still be touched.
bool Nic::tx_frame(unsigned qi)
{
	Queue &q = *q_[qi];
	const uint64_t epoch = q.tx_epoch;
	std::vector<dms_tx_desc> d;
	const TxChain chain = tx_gather(qi, d);
	if (q.tx_epoch != epoch)
		return true; // stopped under us: nothing of it is consumed
	if (chain == TxChain::Incomplete)
		return false; // the rest of the frame is not posted yet
	if (chain == TxChain::Fault) {
		tx_ring_fault(qi, "descriptor read");
		return true;
	}
	std::vector<uint8_t> frame;
	const bool bad = chain == TxChain::Bad || !tx_read_frame(d, frame);
	if (q.tx_epoch != epoch)
		return true;
	q.tx_head = (q.tx_head + static_cast<uint32_t>(d.size())) % q.tx_size;
	if (!bad && !tx_send(qi, frame, d[0].flags & DMS_TX_F_CSUM))
		return true;
	if (q.tx_epoch != epoch)
		return true;
	tx_complete(qi, d.back().tag, bad);
	if (q.tx_epoch == epoch)
		signal(qi);
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
	if (timed_) {
		// On the wire once its data is read and the previous frame is out.
		const sc_core::sc_time now = sc_core::sc_time_stamp();
		tx_wire_free_ = std::max(now + data_done_, tx_wire_free_) + wire_time(frame.size());
	}
	q.tx_frames++;
	c_.tx_frames++;
	c_.tx_bytes += frame.size();
	if (link_up_ && host_.send)
		host_.send(frame.data(), frame.size());
	return q.tx_epoch == epoch;
}

void Nic::tx_complete(unsigned qi, uint16_t tag, bool bad)
{
	Queue &q = *q_[qi];
	const uint64_t epoch = q.tx_epoch;
	dms_tx_cmpl c{};
	c.flags = static_cast<uint16_t>((q.tx_phase ? DMS_TX_C_GEN : 0) | (bad ? DMS_TX_C_ERR : 0));
	c.tag = tag;
	const uint32_t slot = q.tcmpl_tail;
	// Written once the NIC holds the frame's bytes, not after the wire.
	const bool written = dma_rw(q.tx_cfg.tcmpl_base + sizeof(c) * slot, &c, sizeof(c), true,
				    DmaStep::Completion);
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
