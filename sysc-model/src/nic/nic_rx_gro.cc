// SPDX-License-Identifier: MIT
// Hardware GRO in the NIC's receive path: a TCP segment joins its flow's
// open aggregate or opens one; everything else of that flow first flushes
// the flow's aggregate, so the host never sees a flow's bytes reordered.
// Frames whose TCP header the parser does not find are looked at too:
// IPv6 hop-by-hop and destination options headers, and IP-in-IP
// tunnels, coalesce when equal, as in Linux.
// Frames of other flows pass open aggregates (as on real NICs), but an
// aggregate never overtakes a frame of its own flow. Flushes: the
// aggregate is full or the next segment would not fit (GRO_MAX_SEGS,
// GRO_MAX_BYTES, payload buffers: DMS_NIC_GRO_MAX_BUFS or as many as the
// host has posted, counted from where a PACK queue's fill may start), a
// segment with PSH or shorter than the first joined,
// the queue idle for GRO_TIMEOUT_NS or the aggregate too old, the table
// or the queue's aggregation memory full (the oldest goes), or GRO was
// turned off. A queue that stops drops its aggregates.
#include "devmemsim/nic_regs.h"
#include "nic/csum.h"
#include "nic/gro_table.h"
#include "nic/nic.h"
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
	Parsed p = f.p;
	GroOuter outer;
	const bool deeper = f.p.l4 != L4::Tcp;
	if (deeper && !gro_ipv6_ext_tcp(f.data.data(), f.p, p) &&
	    !gro_tunnel_tcp(f.data.data(), f.p, p, outer))
		return rx_deliver(f);
	const bool csum_ok = deeper ? l4_csum_ok(f.data.data(), p) : rx_csum_ok(f);
	const GroSegment seg = gro_segment(f.data.data(), f.len(), p, csum_ok, outer);
	const GroLimits lim{gro_max_segs_, gro_max_bytes_,
			    std::min<uint32_t>(DMS_NIC_GRO_MAX_BUFS, q.pbufs()), q.rx_cfg.pbuf_size,
			    q.rx_cfg.rx_pack};
	const uint32_t flow = gro_flow_hash(p);
	q.gro.last_seen = f.came;
	const int i = q.gro.find(p, flow);
	if (i >= 0) {
		GroAggregate &a = q.gro.open[size_t(i)];
		if (seg.coalescible && a.follows(seg) && a.room_for(seg.pay_len, lim) &&
		    q.gro.held + seg.pay_len <= DMS_NIC_GRO_QUEUE_BYTES) {
			a.append(f.data.data(), seg);
			q.gro.held += seg.pay_len;
			if (a.push || seg.pay_len < a.gso_size)
				rx_gro_flush(f.qi, i, "last segment");
			else if (a.segs >= lim.max_segs)
				rx_gro_flush(f.qi, i, "full");
			return true;
		}
		rx_gro_flush(f.qi, i, "flow change");
	}
	GroAggregate first;
	first.p = p;
	first.wire = f.p;
	first.outer = outer;
	first.deeper = deeper;
	const size_t bytes = seg.hdr_len + seg.pay_len;
	if (!seg.opens || !first.room_for(bytes, lim))
		return rx_deliver(f);
	// Room in the table and in the queue's aggregation memory, oldest out
	// first (GRO_FLOWS may have been lowered since they opened).
	// GRO_FLOWS lowered under many open aggregates flushes them all here:
	// each flush is a frame of the engine's budget.
	while (q.rx_on && !q.gro.open.empty() &&
	       (q.gro.open.size() >= gro_flows_ || q.gro.held + bytes > DMS_NIC_GRO_QUEUE_BYTES)) {
		rx_gro_flush(f.qi, q.gro.oldest(), "table full");
		spend(rx_budget_, 1);
	}
	if (!q.rx_on)
		return rx_deliver(f); // dropped there, and counted
	first.hash = f.hash;
	first.hashed = f.hashed;
	first.flow = flow;
	first.serial = q.gro.serial++;
	first.opened = f.came;
	first.stamp = f.stamp;
	first.append(f.data.data(), seg);
	q.gro.held += bytes;
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
	// Frames with IPv6 extension headers or IP-in-IP do not split (see
	// Receive); one such segment goes on as it came, without L4 type and
	// checksum. A coalesced one reports the (inner) IP version and TCP.
	f.p = a.deeper && a.segs == 1 ? a.wire : a.p;
	if (a.deeper)
		f.p.split_off = 0;
	f.p.l3_end = frame.size();
	f.qi = qi;
	f.hash = a.hash;
	f.hashed = a.hashed;
	f.csum = 1; // every segment was checked
	f.stamp = a.stamp;
	if (a.segs > 1) {
		f.gro_segs = static_cast<uint16_t>(a.segs);
		f.gso_size = static_cast<uint16_t>(a.gso_size);
	}
	trace_("rxq%u gro flush (%s): %u segments, %zu bytes", qi, why, a.segs, frame.size());
	if (!rx_deliver(f))
		c_.rx_drop += a.segs;
}

// How long an aggregate may stay open on a busy queue: GRO_MAX_AGE_NS,
// or DMS_NIC_GRO_AGE_TIMEOUTS timeouts while that is 0 (as in v1.5).
sc_core::sc_time Nic::rx_gro_max_age() const
{
	const uint64_t ns = gro_max_age_ns_ ? gro_max_age_ns_
					    : uint64_t(DMS_NIC_GRO_AGE_TIMEOUTS) * gro_timeout_ns_;
	return sc_core::sc_time(double(ns), sc_core::SC_NS);
}

// What is due in queue q at now: everything when GRO is off or the queue
// has seen no TCP frame for GRO_TIMEOUT_NS, else what is older than
// rx_gro_max_age(). Aggregates are in opening order, so only the oldest
// needs a look.
bool Nic::rx_gro_due(const Queue &q, const sc_core::sc_time &now) const
{
	if (q.gro.open.empty())
		return false;
	const sc_core::sc_time timeout(gro_timeout_ns_, sc_core::SC_NS);
	return !rx_gro_on() || now >= q.gro.last_seen + timeout ||
	       now >= q.gro.open.front().opened + rx_gro_max_age();
}

// Flush what is due, oldest first per queue. With GRO_TIMEOUT_NS 0,
// aggregates wait only while frames are queued.
void Nic::rx_gro_expire()
{
	if (rx_gro_on() && !gro_timeout_ns_ && !rx_fifo_.empty())
		return;
	for (unsigned qi = 0; qi < nq_; qi++) {
		while (rx_gro_due(*q_[qi], sc_core::sc_time_stamp())) {
			rx_gro_flush(qi, q_[qi]->gro.oldest(), rx_gro_on() ? "timeout" : "gro off");
			rx_retire();
			spend(rx_budget_, 1);
		}
	}
}

// When the next open aggregate is due; false if none is open.
bool Nic::rx_gro_next_due(sc_core::sc_time *due) const
{
	const sc_core::sc_time timeout(gro_timeout_ns_, sc_core::SC_NS);
	const sc_core::sc_time max_age = rx_gro_max_age();
	bool any = false;
	for (const auto &q : q_) {
		if (q->gro.open.empty())
			continue;
		const sc_core::sc_time t =
			std::min(q->gro.last_seen + timeout, q->gro.open.front().opened + max_age);
		if (!any || t < *due)
			*due = t;
		any = true;
	}
	return any;
}

} // namespace devmemsim
