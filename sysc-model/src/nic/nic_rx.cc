// SPDX-License-Identifier: MIT
// The NIC's receive path: the FIFO from the wire, parsing and steering,
// header split, buffer placement and RX completions.
#include <algorithm>

#include "devmemsim/nic_desc.h"
#include "devmemsim/nic_regs.h"
#include "nic/csum.h"
#include "nic/gro_table.h"
#include "nic/nic.h"
#include "nic/nic_queue.h"
#include "sim/kernel.h"

namespace devmemsim
{

namespace
{

// The SOP completion's info field: L3 and L4 types.
uint16_t rx_info(const Parsed &p)
{
	uint16_t info = 0;
	if (p.l3 == L3::Ipv4)
		info |= DMS_RX_L3_IPV4;
	else if (p.l3 == L3::Ipv6)
		info |= DMS_RX_L3_IPV6;
	if (p.l4 == L4::Tcp)
		info |= DMS_RX_L4_TCP;
	else if (p.l4 == L4::Udp)
		info |= DMS_RX_L4_UDP;
	return info;
}

} // namespace

bool Nic::receive(const uint8_t *frame, size_t len)
{
	if (rx_fifo_.size() >= kRxFifoFrames) {
		rx_refused_ = true;
		return false;
	}
	rx_fifo_.emplace_back(frame, frame + len);
	rx_arrival_.push_back(sim::device_ns());
	rx_ev_.notify(sc_core::SC_ZERO_TIME);
	return true;
}

void Nic::rx_thread()
{
	for (;;) {
		rx_gro_expire();
		if (rx_fifo_.empty()) {
			sc_core::sc_time due;
			if (rx_gro_next_due(&due))
				sc_core::wait(due - sc_core::sc_time_stamp(), rx_ev_);
			else
				sc_core::wait(rx_ev_);
			continue;
		}
		spend(rx_budget_, 1);
		// spend() may yield, and a reset in the meantime empties the FIFO.
		if (rx_fifo_.empty())
			continue;
		std::vector<uint8_t> frame = std::move(rx_fifo_.front());
		rx_fifo_.pop_front();
		const uint64_t arrival = rx_arrival_.front();
		rx_arrival_.pop_front();
		charge_frame(rx_budget_, frame.size());
		if (timed_)
			sc_core::wait(wire_time(frame.size()));
		if (mac_receive(frame) && !rx_frame(frame, arrival))
			c_.rx_drop++;
		rx_retire();
		if (rx_refused_) {
			rx_refused_ = false;
			if (host_.rx_ready)
				host_.rx_ready();
		}
	}
}

// Place one frame; false if it was dropped (queue off or reset under it,
// too long, or it can never fit the ring).
bool Nic::rx_frame(const std::vector<uint8_t> &frame, uint64_t arrival)
{
	if (frame.size() < 14 || frame.size() > mtu_ + kL2Overhead) {
		trace_("rx drop: %zu-byte frame, MTU %u", frame.size(), mtu_);
		return false;
	}
	RxFrame f(frame);
	f.stamp = rx_stamp(frame.size(), arrival);
	f.came = std::max(sc_core::sc_time_stamp(),
			  sc_core::sc_time(double(arrival), sc_core::SC_NS));
	rx_classify(f);
	// TCP, or IP the parser left without L4: TCP may be further in (rx_gro).
	const bool tcp_maybe = f.p.l4 == L4::Tcp || (f.p.l3 != L3::None && f.p.l4 == L4::None);
	if (rx_gro_on() && tcp_maybe && q_[f.qi]->rx_on)
		return rx_gro(f);
	return rx_deliver(f);
}

// Place a frame (from the wire, or an aggregate GRO flushes) in its
// queue's buffers and complete it.
bool Nic::rx_deliver(RxFrame &f)
{
	const RxRoom room = rx_wait_for_room(f);
	if (room != RxRoom::Ready)
		return room == RxRoom::NoBufDrop; // counted as rx_no_buf_drop, not a drop
	Queue &q = *q_[f.qi];
	const bool fetched = rx_fetch_buffers(f);
	if (!rx_alive(f, "descriptor fetch"))
		return false;
	if (!fetched) {
		// Buffer ids that were never read must not reach a completion.
		rx_ring_fault(f.qi, "buffer descriptor read");
		return true; // counted as ring_dma_err, not a drop
	}
	q.hbuf_head = (q.hbuf_head + f.nh) % f.ring;
	q.pbuf_head = (q.pbuf_head + f.done) % f.ring;
	q.pbuf_fill = f.fill_after;
	const bool ok = rx_write_data(f);
	if (!rx_alive(f, "data write"))
		return false;
	if (!ok && f.np) {
		// PACK: a lost frame ends every payload buffer it touched.
		q.pbuf_head = (q.pbuf_head + f.np - f.done) % f.ring;
		q.pbuf_fill = 0;
	}
	if (!ok) {
		c_.rx_dma_err++;
		mstat_.rx_lost();
		trace_("rxq%u drop: buffer DMA fault", f.qi);
	}
	if (!rx_complete(q, f, ok))
		return q.rx_fault; // a completion write fault is not a drop
	signal(f.qi);
	if (!ok)
		return true; // lost to a DMA fault: counted as rx_dma_err, not a drop
	q.rx_frames++;
	c_.rx_frames++;
	c_.rx_bytes += f.len();
	if (f.stamp.valid)
		c_.ptp_rx_stamps++;
	if (f.gro_segs) {
		c_.rx_gro_frames++;
		c_.rx_gro_segs += f.gro_segs;
	}
	if (f.split) {
		q.rx_split++;
		c_.rx_split++;
	}
	return true;
}

// After a host callback (DMA): false, with a trace, if the frame's queue
// was disabled, re-enabled or reset meanwhile.
bool Nic::rx_alive(const RxFrame &f, const char *step)
{
	const Queue &q = *q_[f.qi];
	if (q.rx_on && q.rx_epoch == f.epoch)
		return true;
	trace_("rxq%u drop: queue stopped during %s", f.qi, step);
	return false;
}

// Parse and steer.
void Nic::rx_classify(RxFrame &f)
{
	f.p = rtl_ ? rtl_->parse(f.data.data(), f.len()) : parse_frame(f.data.data(), f.len());
	f.qi = select_queue(f.p, f.data.data(), &f.hash, &f.hashed);
}

// Where the frame goes with the queue's latched setup: split if it splits
// and its headers fit a header buffer; else whole to a header buffer if it
// fits there, else whole to payload buffers. A WHOLE queue (v1.8) takes
// every frame in payload buffers.
void Nic::rx_place(RxFrame &f)
{
	const bool hds = (rx_ctrl_ & DMS_NIC_RX_HDR_SPLIT) && !f.cfg.rx_whole;
	f.split = hds && f.p.split_off && f.len() - f.p.split_off > hds_thresh_;
	if (f.split && f.p.split_off > f.cfg.hbuf_size) {
		f.split = false; // like a header-buffer overflow on real NICs
		c_.rx_hdr_overflow++;
		trace_("rxq%u: %zu header bytes exceed the %u-byte header buffer, not split", f.qi,
		       size_t(f.p.split_off), f.cfg.hbuf_size);
	}
	if (f.split) {
		f.hdr_len = f.p.split_off;
		f.pay_len = f.len() - f.p.split_off;
	} else if (hds && f.len() <= f.cfg.hbuf_size) {
		f.hdr_len = f.len();
		f.pay_len = 0;
	} else {
		f.hdr_len = 0;
		f.pay_len = f.len();
	}
	f.nh = f.hdr_len ? 1 : 0;
	rx_place_pay(f);
}

// The payload buffers the frame touches, from offset pfill of the first
// (0 but on a PACK queue), and which of them it fills: all but a PACK
// queue's last one, which stays the head buffer while its rounded-up fill
// is below its size. Every piece is within its buffer: pfill < pbuf_size.
void Nic::rx_place_pay(RxFrame &f)
{
	const size_t size = f.cfg.pbuf_size;
	if (!f.cfg.rx_pack || f.pfill >= size)
		f.pfill = 0;
	if (!f.pay_len) { // header only: the payload stream is untouched
		f.np = f.done = 0;
		f.fill_after = f.pfill;
		return;
	}
	f.np = static_cast<uint32_t>((f.pfill + f.pay_len + size - 1) / size);
	f.done = f.np;
	f.fill_after = 0;
	if (!f.cfg.rx_pack)
		return;
	const size_t end = f.pfill + f.pay_len - size_t(f.np - 1) * size; // in the last
	const size_t fill =
		(end + DMS_NIC_PACK_ALIGN - 1) / DMS_NIC_PACK_ALIGN * DMS_NIC_PACK_ALIGN;
	if (fill < size) {
		f.done = f.np - 1;
		f.fill_after = static_cast<uint32_t>(fill);
	}
}

// Wait for buffers and completion slots; Drop if the queue goes away or
// the frame can never fit its ring. A DROP_EN queue (v1.10) does not wait:
// the frame is dropped and counted (all its segments, if GRO coalesced
// it), and the engine goes on with the frames behind it, other queues'
// included.
Nic::RxRoom Nic::rx_wait_for_room(RxFrame &f)
{
	Queue &q = *q_[f.qi];
	bool waited = false;
	for (;;) {
		if (!q.rx_on) {
			trace_("rxq%u drop: queue off", f.qi);
			return RxRoom::Drop;
		}
		// Latched at enable and validated there: sizes are never 0.
		f.cfg = q.rx_cfg;
		f.ring = q.rx_size;
		f.epoch = q.rx_epoch;
		f.pfill = q.pbuf_fill;
		rx_place(f);
		if (f.np >= f.ring || f.completions() >= f.ring) {
			trace_("rxq%u drop: %zu-byte frame needs %u buffers, ring of %u", f.qi,
			       f.len(), f.np, f.ring);
			return RxRoom::Drop;
		}
		if (q.hbufs() >= f.nh && q.pbufs() >= f.np && q.rcmpl_free() >= f.completions())
			return RxRoom::Ready;
		if (f.cfg.rx_drop_en) {
			const uint64_t frames = std::max<uint16_t>(f.gro_segs, 1);
			q.rx_no_buf_drop += frames;
			c_.rx_no_buf_drop += frames;
			trace_("rxq%u drop: no buffer or completion slot (DROP_EN)", f.qi);
			return RxRoom::NoBufDrop;
		}
		if (!waited) {
			c_.rx_no_buf++;
			trace_("rxq%u waits: no buffer or completion slot", f.qi);
		}
		waited = true;
		sc_core::wait(q.rx_doorbell);
	}
}

// Read the buffer descriptors the frame takes (the caller consumes them);
// false at the first one that faults.
bool Nic::rx_fetch_buffers(RxFrame &f)
{
	const Queue &q = *q_[f.qi];
	f.pb.resize(f.np);
	if (f.nh && !dma_rw(rx_budget_, f.cfg.hbuf_base + sizeof(dms_rx_buf) * q.hbuf_head, &f.hb,
			    sizeof(f.hb), false, DmaStep::Prefetch))
		return false;
	for (uint32_t i = 0; i < f.np; i++)
		if (!dma_rw(rx_budget_,
			    f.cfg.pbuf_base + sizeof(dms_rx_buf) * ((q.pbuf_head + i) % f.ring),
			    &f.pb[i], sizeof(f.pb[i]), false, DmaStep::Prefetch))
			return false;
	trace_("rxq%u fetched %u header and %u payload buffers", f.qi, f.nh, f.np);
	return true;
}

// Bytes of payload buffer i (from piece_off(i): 0 but for a PACK queue's
// first); never more than the buffer holds from there.
size_t Nic::rx_pay_bytes(const RxFrame &f, uint32_t i) const
{
	return std::min<size_t>(f.cfg.pbuf_size - f.piece_off(i), f.len() - f.piece_at(i));
}

bool Nic::rx_write_data(RxFrame &f)
{
	auto *bytes = const_cast<uint8_t *>(f.data.data());
	if (f.hdr_len > f.cfg.hbuf_size)
		return false; // rx_place never asks for this
	if (f.nh && !dma_rw(rx_budget_, f.hb.addr, bytes, f.hdr_len, true, DmaStep::Data))
		return false;
	for (uint32_t i = 0; i < f.np; i++) {
		const uint64_t addr = f.pb[i].addr + f.piece_off(i);
		if (addr < f.pb[i].addr) // wraps: no buffer is there
			return false;
		if (!dma_rw(rx_budget_, addr, bytes + f.piece_at(i), rx_pay_bytes(f, i), true,
			    DmaStep::Data))
			return false;
	}
	return true;
}

bool Nic::rx_csum_ok(RxFrame &f) const
{
	if (f.csum < 0)
		f.csum = l4_csum_ok(f.data.data(), f.p);
	return f.csum;
}

// The first completion's flags beyond SOP/EOP: split, RSS and checksum.
uint16_t Nic::rx_flags(RxFrame &f) const
{
	uint16_t flags = 0;
	if (f.split)
		flags |= DMS_RX_F_SPLIT;
	if (f.hashed)
		flags |= DMS_RX_F_RSS;
	if ((rx_ctrl_ & DMS_NIC_RX_CSUM) && f.p.l4 != L4::None)
		flags |= rx_csum_ok(f) ? DMS_RX_F_CSUM_OK : DMS_RX_F_CSUM_BAD;
	return flags;
}

// Completions: one per payload buffer, or one for a header-only frame. A
// frame lost to a DMA fault gets one SOP|EOP|ERR completion per buffer.
// PACK: PBUF_DONE on each buffer the frame fills, and on all of a lost one.
// Fault injection may make a delivered frame's completions lie (rx_lies).
bool Nic::rx_complete(Queue &q, RxFrame &f, bool ok)
{
	const uint16_t flags = ok ? rx_flags(f) : 0;
	const uint16_t info = ok ? rx_info(f.p) : 0;
	const uint32_t nc = f.completions();
	// A duplicate takes a slot beyond the frame's: only a free one.
	const bool dup_room = q.rcmpl_free() > nc;
	std::vector<dms_rx_cmpl> &cs = rx_cmpls_;
	cs.assign(nc, dms_rx_cmpl{});
	for (uint32_t i = 0; i < nc; i++) {
		dms_rx_cmpl &c = cs[i];
		uint16_t fl = 0;
		if (i == 0 || !ok) {
			fl |= DMS_RX_F_SOP | flags;
			c.info = info;
			c.frame_len = static_cast<uint32_t>(f.len());
			c.rss_hash = f.hashed ? f.hash : 0;
			c.gro_segs = ok ? f.gro_segs : 0;
			c.gso_size = ok ? f.gso_size : 0;
			if (ok && f.stamp.valid) {
				c.ts_hi = static_cast<uint16_t>(
					DMS_RX_TS_VALID | (hi32(f.stamp.ns) & DMS_RX_TS_HI_MASK));
				c.ts_lo = lo32(f.stamp.ns);
			}
		}
		if (i == nc - 1 || !ok)
			fl |= DMS_RX_F_EOP;
		if (!ok)
			fl |= DMS_RX_F_ERR;
		if (i == 0 && f.nh) {
			fl |= DMS_RX_F_HDR;
			c.hbuf_id = f.hb.id;
			c.hdr_len = ok ? static_cast<uint16_t>(f.hdr_len) : 0;
		}
		if (i < f.np) {
			fl |= DMS_RX_F_PAY;
			c.pbuf_id = f.pb[i].id;
			c.pay_len = ok ? static_cast<uint32_t>(rx_pay_bytes(f, i)) : 0;
			if (f.cfg.rx_pack && (i < f.done || !ok))
				fl |= DMS_RX_F_PBUF_DONE;
		}
		c.flags = fl;
	}
	if (ok && rx_lie_)
		rx_lies(f, cs, dup_room);
	if (f.nh)
		q.rx_done_hbuf_id = f.hb.id;
	if (f.done) // PACK: a buffer the stream goes on in is not done
		q.rx_done_pbuf_id = f.pb[f.done - 1].id;
	for (dms_rx_cmpl &c : cs) {
		c.flags = static_cast<uint16_t>(c.flags | (q.rx_phase ? DMS_RX_F_GEN : 0));
		const bool written = dma_rw(rx_budget_, f.cfg.rcmpl_base + sizeof(c) * q.rcmpl_tail,
					    &c, sizeof(c), true, DmaStep::Completion);
		if (!rx_alive(f, "completion write"))
			return false;
		if (!written) {
			rx_ring_fault(f.qi, "completion write");
			return false;
		}
		trace_("rxq%u completion %u flags 0x%x", f.qi, q.rcmpl_tail, unsigned(c.flags));
		if (++q.rcmpl_tail == f.ring) {
			q.rcmpl_tail = 0;
			q.rx_phase = !q.rx_phase;
		}
	}
	return true;
}

// Fault injection, a device that lies (datasheet, "A device that lies"):
// change what the completions cs of delivered frame f say, never where the
// frame went. Each kind is asked only where it applies; dup_room: a free
// completion slot beyond the frame's is there for a duplicate.
void Nic::rx_lies(const RxFrame &f, std::vector<dms_rx_cmpl> &cs, bool dup_room)
{
	dms_rx_cmpl &sop = cs.front();
	const bool hdr = sop.flags & DMS_RX_F_HDR, pay = sop.flags & DMS_RX_F_PAY;
	uint64_t r = 0;
	// More bytes than the payload buffer and/or the header buffer hold.
	if (rx_lie_(RxLie::Len, &r)) {
		const unsigned which = hdr && pay ? unsigned(r % 3) : pay ? 0 : 1; // 2: both
		const uint32_t hsize = f.cfg.hbuf_size, psize = f.cfg.pbuf_size;
		if (which != 1)
			sop.pay_len = psize + 1 + static_cast<uint32_t>((r >> 8) % psize);
		if (which != 0)
			sop.hdr_len =
				static_cast<uint16_t>(hsize + 1 + (r >> 32) % (0xffff - hsize));
		trace_("rxq%u lies: length", f.qi);
	}
	// A buffer id the driver has not posted: one at or beyond the ring's
	// size (ids 0..size-1 number the slots), or (every other lie, from
	// the second frame on) the id of a buffer the NIC was done with
	// earlier, which the driver may have posted again in another slot.
	if (rx_lie_(RxLie::Id, &r)) {
		const bool on_pay = pay && (!hdr || (r & 1));
		uint16_t &id = on_pay ? sop.pbuf_id : sop.hbuf_id;
		const Queue &q = *q_[f.qi];
		const int32_t done = on_pay ? q.rx_done_pbuf_id : q.rx_done_hbuf_id;
		if ((r & 2) && done >= 0 && uint16_t(done) != id)
			id = static_cast<uint16_t>(done);
		else
			id = static_cast<uint16_t>(f.ring + (r >> 2) % (0x10000 - f.ring));
		trace_("rxq%u lies: buffer id %u", f.qi, unsigned(id));
	}
	// Absurd HW-GRO metadata on a coalesced frame.
	if (f.gro_segs && rx_lie_(RxLie::Gro, &r)) {
		unsigned form = unsigned(r % 4);
		if (form == 1 && f.len() >= 0xffff)
			form = 0;
		if (form == 0)
			sop.gso_size = 0;
		else if (form == 1) // one segment longer than the whole frame
			sop.gso_size = static_cast<uint16_t>(
				std::min<size_t>(0xffff, f.len() + 1 + (r >> 8) % 1024));
		else if (form == 2)
			sop.gro_segs = 0;
		else
			sop.gro_segs = 0xffff;
		trace_("rxq%u lies: gro_segs %u gso_size %u", f.qi, unsigned(sop.gro_segs),
		       unsigned(sop.gso_size));
	}
	// PACK: the driver counts where a piece starts. A piece that ends its
	// buffer without PBUF_DONE, or a first piece at pfill > 0 whose pay_len
	// runs past its buffer's end from there (over where the next piece
	// goes, or beyond).
	const bool no_done = f.cfg.rx_pack && f.done > 0;
	const bool overrun = f.cfg.rx_pack && f.np > 0 && f.pfill > 0;
	if ((no_done || overrun) && rx_lie_(RxLie::Pack, &r)) {
		if (no_done && (!overrun || (r & 1))) {
			dms_rx_cmpl &c = cs[f.done - 1];
			c.flags = static_cast<uint16_t>(c.flags & ~DMS_RX_F_PBUF_DONE);
			trace_("rxq%u lies: piece %u ends its buffer, no PBUF_DONE", f.qi,
			       f.done - 1);
		} else {
			const uint32_t room = f.cfg.pbuf_size - f.pfill;
			cs[0].pay_len = room + 1 + static_cast<uint32_t>((r >> 1) % f.pfill);
			trace_("rxq%u lies: piece at %u of %u bytes", f.qi, f.pfill,
			       unsigned(cs[0].pay_len));
		}
	}
	// The last completion again, in the next free slot.
	if (dup_room && rx_lie_(RxLie::Dup, &r)) {
		cs.push_back(cs.back());
		trace_("rxq%u lies: completion written twice", f.qi);
	}
}

// A DMA fault on one of the queue's rings: the queue stops (as a real NIC's
// queue enters its error state), says so in RXQ_CTRL and Q_FAULT, and
// raises the admin cause. No completion is written for the frame.
void Nic::rx_ring_fault(unsigned qi, const char *what)
{
	Queue &q = *q_[qi];
	q.rx_stop();
	q.rx_fault = true;
	c_.ring_dma_err++;
	trace_("rxq%u stopped: %s DMA fault", qi, what);
	q.rx_doorbell.notify(sc_core::SC_ZERO_TIME);
	admin_event(DMS_NIC_ADMIN_IRQ_Q_FAULT);
}

} // namespace devmemsim
