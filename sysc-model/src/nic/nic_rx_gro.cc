// SPDX-License-Identifier: MIT
// Hardware GRO in the NIC's receive path: a TCP segment joins its flow's
// open aggregate or opens one; everything else of that flow first flushes
// the flow's aggregate, so the host never sees a flow's bytes reordered.
// Frames of other flows pass open aggregates (as on real NICs), but an
// aggregate never overtakes a frame of its own flow. Flushes: the
// aggregate is full or the next segment would not fit (GRO_MAX_SEGS,
// GRO_MAX_BYTES, payload buffers: DMS_NIC_GRO_MAX_BUFS or as many as the
// host has posted), a segment with PSH or shorter than the first joined,
// no segment joined for GRO_TIMEOUT_NS, the table is full (the oldest
// goes), or GRO was turned off. A queue that stops drops its aggregates.
#include "devmemsim/nic_regs.h"
#include "nic/nic.h"
#include "nic/nic_gro.h"
#include "nic/nic_queue.h"

namespace devmemsim
{

// GRO needs the checksums verified: it coalesces only good segments.
bool Nic::rx_gro_on() const
{
	const uint32_t need = DMS_NIC_RX_GRO | DMS_NIC_RX_CSUM;
	return (rx_ctrl_ & need) == need;
}

bool Nic::rx_gro(RxFrame &f)
{
	Queue &q = *q_[f.qi];
	const GroSegment seg = gro_segment(f.data.data(), f.len(), f.p, rx_csum_ok(f));
	const GroLimits lim{gro_max_segs_, gro_max_bytes_,
			    std::min<uint32_t>(DMS_NIC_GRO_MAX_BUFS, q.pbufs()),
			    q.rx_cfg.pbuf_size};
	const sc_core::sc_time due =
		sc_core::sc_time_stamp() + sc_core::sc_time(gro_timeout_ns_, sc_core::SC_NS);
	const int i = q.gro.find(f.p);
	if (i >= 0) {
		GroAggregate &a = q.gro.open[size_t(i)];
		if (seg.coalescible && a.follows(seg) && a.room_for(seg.pay_len, lim)) {
			a.append(f.data.data(), seg);
			a.due = due;
			if (a.push || seg.pay_len < a.gso_size)
				rx_gro_flush(f.qi, i, "last segment");
			else if (!a.room_for(a.gso_size, lim))
				rx_gro_flush(f.qi, i, "full");
			return true;
		}
		rx_gro_flush(f.qi, i, "flow change");
	}
	GroAggregate first;
	first.p = f.p;
	if (!seg.opens || !q.rx_on || !first.room_for(seg.hdr_len + seg.pay_len, lim))
		return rx_deliver(f);
	if (q.gro.open.size() >= DMS_NIC_GRO_FLOWS) {
		rx_gro_flush(f.qi, q.gro.oldest(), "table full");
		if (!q.rx_on)
			return rx_deliver(f); // dropped there, and counted
	}
	first.hash = f.hash;
	first.hashed = f.hashed;
	first.serial = q.gro.serial++;
	first.due = due;
	first.append(f.data.data(), seg);
	q.gro.open.push_back(std::move(first));
	return true;
}

// Deliver aggregate i of queue qi as one frame (a single segment as it
// came, less any Ethernet padding).
void Nic::rx_gro_flush(unsigned qi, int i, const char *why)
{
	Queue &q = *q_[qi];
	GroAggregate a = q.gro.take(i);
	const std::vector<uint8_t> frame = a.finish();
	RxFrame f(frame);
	f.p = a.p;
	f.p.l3_end = frame.size();
	f.qi = qi;
	f.hash = a.hash;
	f.hashed = a.hashed;
	f.csum = 1; // every segment was checked
	if (a.segs > 1) {
		f.gro_segs = static_cast<uint16_t>(a.segs);
		f.gso_size = static_cast<uint16_t>(a.gso_size);
	}
	trace_("rxq%u gro flush (%s): %u segments, %zu bytes", qi, why, a.segs, frame.size());
	if (!rx_deliver(f))
		c_.rx_drop += a.segs;
}

// Flush what is due (everything once GRO is off), oldest first per queue.
// With GRO_TIMEOUT_NS 0, aggregates wait only while frames are queued.
void Nic::rx_gro_expire(WorkBudget &budget)
{
	if (rx_gro_on() && !gro_timeout_ns_ && !rx_fifo_.empty())
		return;
	for (unsigned qi = 0; qi < nq_; qi++) {
		for (;;) {
			const GroTable &t = q_[qi]->gro;
			const int i =
				rx_gro_on() ? t.oldest_due(sc_core::sc_time_stamp()) : t.oldest();
			if (i < 0)
				break;
			rx_gro_flush(qi, i, rx_gro_on() ? "timeout" : "gro off");
			rx_retire();
			spend(budget, 1, kRxBudget);
		}
	}
}

// When the next open aggregate is due; false if none is open.
bool Nic::rx_gro_next_due(sc_core::sc_time *due) const
{
	bool any = false;
	for (const auto &q : q_)
		for (const GroAggregate &a : q->gro.open) {
			if (!any || a.due < *due)
				*due = a.due;
			any = true;
		}
	return any;
}

} // namespace devmemsim
