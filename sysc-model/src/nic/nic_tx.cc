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
	for (;;) {
		bool progress = false;
		for (unsigned i = 0; i < nq_; i++) {
			const Queue &q = *q_[i];
			if (q.tx_on && q.tdescs() && q.tcmpl_free() && tx_frame(i))
				progress = true;
			settle();
		}
		if (!progress)
			sc_core::wait(tx_ev_);
	}
}

// Read the descriptors from the ring head up to EOP into d. A chain that
// breaks the rules (or faults) is cut there: it is consumed and dropped.
Nic::TxChain Nic::tx_gather(const Queue &q, std::vector<dms_tx_desc> &d)
{
	const uint32_t avail = q.tdescs();
	for (uint32_t i = 0; i < avail; i++) {
		dms_tx_desc desc{};
		const uint64_t at =
			q.regs.tdesc_base + sizeof(dms_tx_desc) * ((q.tx_head + i) % q.tx_size);
		bool ok = dma_rw(at, &desc, sizeof(desc), false);
		d.push_back(desc);
		if (!ok) {
			c_.tx_dma_err++;
			return TxChain::Bad;
		}
		bool sop = desc.flags & DMS_TX_F_SOP;
		if ((i == 0) != sop || !desc.len || desc.len > 65535 || d.size() > kMaxTxFrags) {
			c_.tx_desc_err++;
			return TxChain::Bad;
		}
		if (desc.flags & DMS_TX_F_EOP)
			return TxChain::Complete;
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
		return false;
	}
	frame.resize(total);
	size_t off = 0;
	for (const auto &x : d) {
		if (!dma_rw(x.addr, frame.data() + off, x.len, false)) {
			c_.tx_dma_err++;
			return false;
		}
		off += x.len;
	}
	return true;
}

// Send or drop one frame of queue qi; false if it is not all posted.
bool Nic::tx_frame(unsigned qi)
{
	Queue &q = *q_[qi];
	std::vector<dms_tx_desc> d;
	const TxChain chain = tx_gather(q, d);
	if (chain == TxChain::Incomplete)
		return false; // the rest of the frame is not posted yet
	std::vector<uint8_t> frame;
	const bool bad = chain == TxChain::Bad || !tx_read_frame(d, frame);
	if (!bad) {
		if ((d[0].flags & DMS_TX_F_CSUM) && (tx_ctrl_ & DMS_NIC_TX_CSUM)) {
			Parsed p = parse_frame(frame.data(), frame.size());
			l4_csum_fill(frame.data(), p);
		}
		if (timed_)
			delay_ += wire_time(frame.size());
		if (link_up_ && host_.send)
			host_.send(frame.data(), frame.size());
		q.tx_frames++;
		c_.tx_frames++;
		c_.tx_bytes += frame.size();
	}
	tx_complete(q, d.back().tag, bad);
	q.tx_head = (q.tx_head + static_cast<uint32_t>(d.size())) % q.tx_size;
	signal(qi);
	return true;
}

void Nic::tx_complete(Queue &q, uint16_t tag, bool bad)
{
	dms_tx_cmpl c{};
	c.flags = static_cast<uint16_t>((q.tx_phase ? DMS_TX_C_GEN : 0) | (bad ? DMS_TX_C_ERR : 0));
	c.tag = tag;
	dma_rw(q.regs.tcmpl_base + sizeof(c) * q.tcmpl_tail, &c, sizeof(c), true);
	if (++q.tcmpl_tail == q.tx_size) {
		q.tcmpl_tail = 0;
		q.tx_phase = !q.tx_phase;
	}
}

} // namespace devmemsim
