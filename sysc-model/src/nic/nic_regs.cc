// SPDX-License-Identifier: MIT
// The NIC's BAR0 registers: device-wide settings, the flow steering table
// (RSS: nic_rss.cc), and each queue pair's ring setup, enables and doorbells.
#include <algorithm>

#include "devmemsim/nic_regs.h"
#include "nic/nic.h"
#include "nic/nic_queue.h"

namespace devmemsim
{

namespace
{

// A plain per-queue register: a 32-bit field, or one half of a 64-bit one.
struct QueueReg {
	uint32_t off;
	uint32_t QueueSetup::*u32;
	uint64_t QueueSetup::*u64;
	bool high; // bits 63:32 of u64
};

constexpr QueueReg kQueueRegs[] = {
	{DMS_NIC_RXQ_RING_LOG2, &QueueSetup::rx_log2, nullptr, false},
	{DMS_NIC_RXQ_HBUF_BASE_LO, nullptr, &QueueSetup::hbuf_base, false},
	{DMS_NIC_RXQ_HBUF_BASE_HI, nullptr, &QueueSetup::hbuf_base, true},
	{DMS_NIC_RXQ_PBUF_BASE_LO, nullptr, &QueueSetup::pbuf_base, false},
	{DMS_NIC_RXQ_PBUF_BASE_HI, nullptr, &QueueSetup::pbuf_base, true},
	{DMS_NIC_RXQ_CMPL_BASE_LO, nullptr, &QueueSetup::rcmpl_base, false},
	{DMS_NIC_RXQ_CMPL_BASE_HI, nullptr, &QueueSetup::rcmpl_base, true},
	{DMS_NIC_RXQ_HBUF_SIZE, &QueueSetup::hbuf_size, nullptr, false},
	{DMS_NIC_RXQ_PBUF_SIZE, &QueueSetup::pbuf_size, nullptr, false},
	{DMS_NIC_TXQ_RING_LOG2, &QueueSetup::tx_log2, nullptr, false},
	{DMS_NIC_TXQ_DESC_BASE_LO, nullptr, &QueueSetup::tdesc_base, false},
	{DMS_NIC_TXQ_DESC_BASE_HI, nullptr, &QueueSetup::tdesc_base, true},
	{DMS_NIC_TXQ_CMPL_BASE_LO, nullptr, &QueueSetup::tcmpl_base, false},
	{DMS_NIC_TXQ_CMPL_BASE_HI, nullptr, &QueueSetup::tcmpl_base, true},
};

const QueueReg *find_queue_reg(uint32_t off)
{
	for (const QueueReg &r : kQueueRegs)
		if (r.off == off)
			return &r;
	return nullptr;
}

uint32_t read_queue_reg(const QueueReg &r, const QueueSetup &s)
{
	if (r.u32)
		return s.*r.u32;
	return r.high ? hi32(s.*r.u64) : lo32(s.*r.u64);
}

void write_queue_reg(const QueueReg &r, QueueSetup &s, uint32_t val)
{
	if (r.u32)
		s.*r.u32 = val;
	else if (r.high)
		set_hi(s.*r.u64, val);
	else
		set_lo(s.*r.u64, val);
}

bool in_range(uint32_t off, uint32_t first, uint32_t end)
{
	return off >= first && off < end;
}

// A ring of 2^log2 entries whose bases are all set and 64-byte aligned.
bool ring_ok(uint32_t log2, std::initializer_list<uint64_t> bases)
{
	if (log2 < DMS_NIC_RING_LOG2_MIN || log2 > DMS_NIC_RING_LOG2_MAX)
		return false;
	for (uint64_t b : bases)
		if (!b || (b & 63))
			return false;
	return true;
}

} // namespace

// ------------------------------------------------------------ reads

uint32_t Nic::read32(uint32_t off)
{
	if (in_range(off, DMS_NIC_Q_BASE(0), DMS_NIC_Q_BASE(nq_)))
		return queue_read(*q_[(off - DMS_NIC_Q_BASE(0)) / DMS_NIC_Q_STRIDE],
				  off % DMS_NIC_Q_STRIDE);
	if (uint32_t val; rss_read(off, &val))
		return val;
	if (uint32_t val; mstat_.read(off, &val))
		return val;
	if (in_range(off, DMS_NIC_REG_TXS_NUM_NODES,
		     DMS_NIC_REG_TXS_NODE_RATE_KBPS(DMS_NIC_TXS_NODES)))
		return txs_read(off);
	if (uint32_t val; ptp_read(off, &val) || rate_read(off, &val) || mac_read(off, &val))
		return val;
	switch (off) {
	case DMS_NIC_REG_ID:
		return DMS_NIC_ID_MAGIC;
	case DMS_NIC_REG_VERSION:
		return DMS_NIC_VERSION;
	case DMS_NIC_REG_NUM_QUEUES:
		return nq_;
	case DMS_NIC_REG_MAC_LO:
		return mac_[0] | mac_[1] << 8 | mac_[2] << 16 |
		       static_cast<uint32_t>(mac_[3]) << 24;
	case DMS_NIC_REG_MAC_HI:
		return mac_[4] | mac_[5] << 8;
	case DMS_NIC_REG_NODE_INDEX:
		return node_index_;
	case DMS_NIC_REG_MAX_MTU:
		return kMaxMtu;
	case DMS_NIC_REG_MAX_TX_FRAGS:
		return kMaxTxFrags;
	case DMS_NIC_REG_NTUPLE_SIZE:
		return kNtupleSize;
	case DMS_NIC_REG_CAPS:
		return DMS_NIC_CAP_TSO | DMS_NIC_CAP_USO | DMS_NIC_CAP_RSS_CTX |
		       DMS_NIC_CAP_RSS_FIELDS | DMS_NIC_CAP_RSS_SYM | DMS_NIC_CAP_RSS_KEY52 |
		       DMS_NIC_CAP_PTP | DMS_NIC_CAP_TX_RATE | DMS_NIC_CAP_MAC_STATS |
		       DMS_NIC_CAP_SERIAL | DMS_NIC_CAP_MAC_STD_STATS | DMS_NIC_CAP_TX_SCHED_NODES |
		       DMS_NIC_CAP_RXQ_WHOLE | DMS_NIC_CAP_RXQ_PACK | DMS_NIC_CAP_RXQ_DROP;
	case DMS_NIC_REG_CTRL:
		return 0;
	case DMS_NIC_REG_STATUS:
		return link_up_ ? DMS_NIC_STATUS_LINK_UP : 0;
	default:
		return settings_read(off);
	}
}

// The read-write settings and the counters.
uint32_t Nic::settings_read(uint32_t off) const
{
	switch (off) {
	case DMS_NIC_REG_MTU:
		return mtu_;
	case DMS_NIC_REG_RX_CTRL:
		return rx_ctrl_;
	case DMS_NIC_REG_HDS_THRESH:
		return hds_thresh_;
	case DMS_NIC_REG_TX_CTRL:
		return tx_ctrl_;
	case DMS_NIC_REG_ITR_NS:
		return itr_ns_;
	case DMS_NIC_REG_GRO_MAX_SEGS:
		return gro_max_segs_;
	case DMS_NIC_REG_GRO_MAX_BYTES:
		return gro_max_bytes_;
	case DMS_NIC_REG_GRO_TIMEOUT_NS:
		return gro_timeout_ns_;
	case DMS_NIC_REG_GRO_FLOWS:
		return gro_flows_;
	case DMS_NIC_REG_GRO_MAX_AGE_NS:
		return gro_max_age_ns_;
	case DMS_NIC_REG_RX_GRO_FRAMES:
		return static_cast<uint32_t>(c_.rx_gro_frames);
	case DMS_NIC_REG_RX_GRO_SEGS:
		return static_cast<uint32_t>(c_.rx_gro_segs);
	case DMS_NIC_REG_ADMIN_IRQ_STATUS:
		return admin_status_;
	case DMS_NIC_REG_ADMIN_IRQ_MASK:
		return admin_mask_;
	case DMS_NIC_REG_STAT_RX_NO_BUF:
		return static_cast<uint32_t>(c_.rx_no_buf);
	case DMS_NIC_REG_STAT_RX_DROP:
		return static_cast<uint32_t>(c_.rx_drop);
	case DMS_NIC_REG_STAT_RX_DMA_ERR:
		return static_cast<uint32_t>(c_.rx_dma_err);
	case DMS_NIC_REG_STAT_TX_DESC_ERR:
		return static_cast<uint32_t>(c_.tx_desc_err);
	case DMS_NIC_REG_STAT_TX_DMA_ERR:
		return static_cast<uint32_t>(c_.tx_dma_err);
	case DMS_NIC_REG_STAT_RING_ERR:
		return static_cast<uint32_t>(c_.ring_err);
	case DMS_NIC_REG_STAT_RING_DMA_ERR:
		return static_cast<uint32_t>(c_.ring_dma_err);
	case DMS_NIC_REG_STAT_RX_NO_BUF_DROP:
		return static_cast<uint32_t>(c_.rx_no_buf_drop);
	case DMS_NIC_REG_TSO_SUPER:
		return static_cast<uint32_t>(c_.tx_tso);
	case DMS_NIC_REG_TSO_WIRE:
		return static_cast<uint32_t>(c_.tx_tso_segs);
	case DMS_NIC_REG_TSO_ERR:
		return static_cast<uint32_t>(c_.tx_tso_err);
	case DMS_NIC_REG_Q_FAULT_LO:
		return fault_bits(0);
	case DMS_NIC_REG_Q_FAULT_HI:
		return fault_bits(32);
	default:
		return DMS_REG_UNDEFINED;
	}
}

uint32_t Nic::queue_read(const Queue &q, uint32_t off) const
{
	if (const QueueReg *r = find_queue_reg(off))
		return read_queue_reg(*r, q.regs);
	switch (off) {
	case DMS_NIC_RXQ_CTRL:
		return (q.rx_on ? DMS_NIC_Q_ENABLE : 0) | (q.rx_refused ? DMS_NIC_Q_CFG_ERR : 0) |
		       (q.rx_fault ? DMS_NIC_Q_FAULT : 0) |
		       (q.regs.rx_whole ? DMS_NIC_Q_WHOLE : 0) |
		       (q.regs.rx_pack ? DMS_NIC_Q_PACK : 0) |
		       (q.regs.rx_drop_en ? DMS_NIC_Q_DROP_EN : 0);
	case DMS_NIC_RXQ_NO_BUF_DROP:
		return static_cast<uint32_t>(q.rx_no_buf_drop);
	case DMS_NIC_RXQ_HBUF_TAIL:
		return q.hbuf_tail;
	case DMS_NIC_RXQ_PBUF_TAIL:
		return q.pbuf_tail;
	case DMS_NIC_RXQ_CMPL_HEAD:
		return q.rcmpl_head;
	case DMS_NIC_TXQ_CTRL:
		return (q.tx_on ? DMS_NIC_Q_ENABLE : 0) | (q.tx_refused ? DMS_NIC_Q_CFG_ERR : 0) |
		       (q.tx_fault ? DMS_NIC_Q_FAULT : 0);
	case DMS_NIC_TXQ_TAIL:
		return q.tx_tail;
	case DMS_NIC_TXQ_CMPL_HEAD:
		return q.tcmpl_head;
	case DMS_NIC_Q_RX_ITR_NS:
	case DMS_NIC_Q_TX_ITR_NS:
		return q.itr_ns[off == DMS_NIC_Q_TX_ITR_NS];
	case DMS_NIC_Q_RX_ITR_FRAMES:
	case DMS_NIC_Q_TX_ITR_FRAMES:
		return q.itr_frames[off == DMS_NIC_Q_TX_ITR_FRAMES];
	case DMS_NIC_TXQ_RATE_KBPS:
	case DMS_NIC_TXQ_BURST:
		return queue_rate_read(q, off);
	default:
		return DMS_REG_UNDEFINED;
	}
}

// Q_FAULT_LO/HI: bit i for queue pair first + i with a faulted ring.
uint32_t Nic::fault_bits(unsigned first) const
{
	uint32_t bits = 0;
	for (unsigned i = first; i < nq_ && i < first + 32; i++)
		if (q_[i]->rx_fault || q_[i]->tx_fault)
			bits |= 1u << (i - first);
	return bits;
}

// ------------------------------------------------------------ writes

void Nic::write32(uint32_t off, uint32_t val)
{
	// Interrupts the write raises are timed at the host's time (irq_now()).
	struct InWrite {
		bool &flag, was;
		explicit InWrite(bool &f) : flag(f), was(f) { flag = true; }
		~InWrite() { flag = was; }
	} in_write(in_write_);
	if (in_range(off, DMS_NIC_Q_BASE(0), DMS_NIC_Q_BASE(nq_))) {
		queue_write((off - DMS_NIC_Q_BASE(0)) / DMS_NIC_Q_STRIDE, off % DMS_NIC_Q_STRIDE,
			    val);
		return;
	}
	if (rss_write(off, val))
		return;
	if (in_range(off, DMS_NIC_REG_NT_CTRL, DMS_NIC_REG_NT_COMMIT + 4)) {
		ntuple_write(off, val);
		return;
	}
	if (in_range(off, DMS_NIC_REG_TXS_NUM_NODES,
		     DMS_NIC_REG_TXS_NODE_RATE_KBPS(DMS_NIC_TXS_NODES))) {
		txs_write(off, val);
		return;
	}
	if (ptp_write(off, val) || rate_write(off, val))
		return;
	switch (off) {
	case DMS_NIC_REG_CTRL:
		if (val & DMS_NIC_CTRL_RESET)
			reset();
		break;
	case DMS_NIC_REG_MTU:
		mtu_ = std::clamp<uint32_t>(val, 68, kMaxMtu);
		break;
	case DMS_NIC_REG_RX_CTRL:
		rx_ctrl_ = val & (DMS_NIC_RX_HDR_SPLIT | DMS_NIC_RX_CSUM | DMS_NIC_RX_RSS |
				  DMS_NIC_RX_NTUPLE | DMS_NIC_RX_GRO);
		rx_ev_.notify(sc_core::SC_ZERO_TIME); // GRO off: flush what is open
		break;
	case DMS_NIC_REG_HDS_THRESH:
		hds_thresh_ = val;
		break;
	case DMS_NIC_REG_TX_CTRL:
		tx_ctrl_ = val & DMS_NIC_TX_CSUM;
		break;
	case DMS_NIC_REG_ITR_NS:
		itr_ns_ = std::min<uint32_t>(val, DMS_NIC_ITR_MAX_NS);
		break;
	case DMS_NIC_REG_GRO_MAX_SEGS:
		gro_max_segs_ = std::clamp<uint32_t>(val, 2, DMS_NIC_GRO_SEGS_MAX);
		break;
	case DMS_NIC_REG_GRO_MAX_BYTES:
		gro_max_bytes_ = std::min<uint32_t>(val, DMS_NIC_GRO_BYTES_MAX);
		break;
	case DMS_NIC_REG_GRO_TIMEOUT_NS:
		gro_timeout_ns_ = std::min<uint32_t>(val, DMS_NIC_GRO_TIMEOUT_MAX_NS);
		break;
	case DMS_NIC_REG_GRO_FLOWS:
		gro_flows_ = std::clamp<uint32_t>(val, 1, DMS_NIC_GRO_FLOWS_MAX);
		break;
	case DMS_NIC_REG_GRO_MAX_AGE_NS:
		gro_max_age_ns_ = std::min<uint32_t>(val, DMS_NIC_GRO_AGE_MAX_NS);
		rx_ev_.notify(sc_core::SC_ZERO_TIME); // aggregates may be due earlier
		break;
	case DMS_NIC_REG_ADMIN_IRQ_STATUS:
	case DMS_NIC_REG_ADMIN_IRQ_MASK:
		admin_write(off, val);
		break;
	default:
		break;
	}
}

// The flow steering staging registers and the commit into the table.
void Nic::ntuple_write(uint32_t off, uint32_t val)
{
	auto addr_word = [&](std::array<uint8_t, 16> &a, uint32_t base) {
		unsigned i = (off - base) / 4 * 4;
		for (unsigned b = 0; b < 4; b++)
			a[i + b] = static_cast<uint8_t>(val >> (24 - 8 * b));
	};
	if (in_range(off, DMS_NIC_REG_NT_SRC(0), DMS_NIC_REG_NT_SRC(DMS_NIC_NT_ADDR_WORDS)))
		return addr_word(nt_stage_.src, DMS_NIC_REG_NT_SRC(0));
	if (in_range(off, DMS_NIC_REG_NT_DST(0), DMS_NIC_REG_NT_DST(DMS_NIC_NT_ADDR_WORDS)))
		return addr_word(nt_stage_.dst, DMS_NIC_REG_NT_DST(0));
	if (in_range(off, DMS_NIC_REG_NT_SRC_MASK(0),
		     DMS_NIC_REG_NT_SRC_MASK(DMS_NIC_NT_ADDR_WORDS)))
		return addr_word(nt_stage_.src_mask, DMS_NIC_REG_NT_SRC_MASK(0));
	if (in_range(off, DMS_NIC_REG_NT_DST_MASK(0),
		     DMS_NIC_REG_NT_DST_MASK(DMS_NIC_NT_ADDR_WORDS)))
		return addr_word(nt_stage_.dst_mask, DMS_NIC_REG_NT_DST_MASK(0));
	switch (off) {
	case DMS_NIC_REG_NT_CTRL:
		nt_stage_.valid = val & DMS_NIC_NT_VALID;
		nt_stage_.ipv6 = val & DMS_NIC_NT_IPV6;
		nt_stage_.proto = static_cast<uint8_t>(val >> DMS_NIC_NT_PROTO_SHIFT);
		nt_stage_.queue = static_cast<uint16_t>(val >> DMS_NIC_NT_QUEUE_SHIFT);
		break;
	case DMS_NIC_REG_NT_PORTS:
		nt_stage_.sport = static_cast<uint16_t>(val >> 16);
		nt_stage_.dport = static_cast<uint16_t>(val);
		break;
	case DMS_NIC_REG_NT_PORT_MASK:
		nt_stage_.sport_mask = static_cast<uint16_t>(val >> 16);
		nt_stage_.dport_mask = static_cast<uint16_t>(val);
		break;
	case DMS_NIC_REG_NT_COMMIT:
		if (val >= kNtupleSize)
			c_.ring_err++;
		else if (rss_rule_ok(nt_stage_))
			ntuple_[val] = nt_stage_;
		break;
	default:
		break;
	}
}

// Only the enables and the doorbells are code; the rest is kQueueRegs.
void Nic::queue_write(unsigned qi, uint32_t off, uint32_t val)
{
	Queue &q = *q_[qi];
	if (const QueueReg *r = find_queue_reg(off))
		return write_queue_reg(*r, q.regs, val);
	switch (off) {
	case DMS_NIC_RXQ_CTRL:
		q.regs.rx_whole = val & DMS_NIC_Q_WHOLE;
		q.regs.rx_pack = val & DMS_NIC_Q_PACK;
		q.regs.rx_drop_en = val & DMS_NIC_Q_DROP_EN;
		rx_enable(qi, val & DMS_NIC_Q_ENABLE);
		break;
	case DMS_NIC_TXQ_CTRL:
		tx_enable(qi, val & DMS_NIC_Q_ENABLE);
		break;
	case DMS_NIC_RXQ_HBUF_TAIL:
	case DMS_NIC_RXQ_PBUF_TAIL:
	case DMS_NIC_RXQ_CMPL_HEAD:
	case DMS_NIC_TXQ_TAIL:
	case DMS_NIC_TXQ_CMPL_HEAD:
		doorbell(qi, off, val);
		break;
	case DMS_NIC_Q_IRQ_ARM:
		if (val & 1)
			arm(qi);
		break;
	case DMS_NIC_Q_RX_ITR_NS:
	case DMS_NIC_Q_TX_ITR_NS:
		q.itr_ns[off == DMS_NIC_Q_TX_ITR_NS] = std::min<uint32_t>(val, DMS_NIC_ITR_MAX_NS);
		break;
	case DMS_NIC_Q_RX_ITR_FRAMES:
	case DMS_NIC_Q_TX_ITR_FRAMES:
		q.itr_frames[off == DMS_NIC_Q_TX_ITR_FRAMES] =
			std::min<uint32_t>(val, DMS_NIC_ITR_MAX_FRAMES);
		break;
	case DMS_NIC_TXQ_RATE_KBPS:
	case DMS_NIC_TXQ_BURST:
		queue_rate_write(q, off, val);
		break;
	default:
		break;
	}
}

// RX ring setup the device accepts: ring size, bases, buffer sizes, not
// both WHOLE and PACK (v1.9).
static bool rx_setup_ok(const QueueSetup &s)
{
	const bool sizes_ok =
		s.hbuf_size >= DMS_NIC_HBUF_SIZE_MIN && s.hbuf_size <= DMS_NIC_HBUF_SIZE_MAX &&
		s.pbuf_size >= DMS_NIC_PBUF_SIZE_MIN && s.pbuf_size <= DMS_NIC_PBUF_SIZE_MAX;
	return ring_ok(s.rx_log2, {s.hbuf_base, s.pbuf_base, s.rcmpl_base}) && sizes_ok &&
	       !(s.rx_whole && s.rx_pack);
}

// Enable latches the setup (0 -> 1 only); a bad setup is refused, counted,
// and reported in RXQ_CTRL's CFG_ERR until the next accepted enable, which
// also clears FAULT.
void Nic::rx_enable(unsigned qi, bool on)
{
	Queue &q = *q_[qi];
	if (on == q.rx_on)
		return;
	if (!on) {
		q.rx_stop();
		trace_("rxq%u disabled", qi);
	} else if (!rx_setup_ok(q.regs)) {
		q.rx_refused = true;
		c_.ring_err++;
		trace_("rxq%u enable refused: bad ring or buffer size, or WHOLE|PACK", qi);
		return;
	} else {
		q.rx_cfg = q.regs;
		q.rx_size = 1u << q.rx_cfg.rx_log2;
		q.hbuf_head = q.pbuf_head = q.rcmpl_tail = 0;
		q.pbuf_fill = 0;
		q.rx_done_hbuf_id = q.rx_done_pbuf_id = -1;
		q.hbuf_tail = q.pbuf_tail = q.rcmpl_head = 0;
		q.rx_phase = true;
		q.rx_refused = q.rx_fault = false;
		q.rx_on = true;
		q.rx_epoch++;
		trace_("rxq%u enabled: %u entries, hbuf %u, pbuf %u%s%s", qi, q.rx_size,
		       q.rx_cfg.hbuf_size, q.rx_cfg.pbuf_size, q.rx_cfg.rx_pack ? ", packed" : "",
		       q.rx_cfg.rx_drop_en ? ", drop enable" : "");
	}
	q.rx_doorbell.notify(sc_core::SC_ZERO_TIME);
}

void Nic::tx_enable(unsigned qi, bool on)
{
	Queue &q = *q_[qi];
	if (on == q.tx_on)
		return;
	if (!on) {
		q.tx_stop();
		trace_("txq%u disabled", qi);
		return;
	}
	if (!ring_ok(q.regs.tx_log2, {q.regs.tdesc_base, q.regs.tcmpl_base})) {
		q.tx_refused = true;
		c_.ring_err++;
		trace_("txq%u enable refused: bad ring", qi);
		return;
	}
	q.tx_cfg = q.regs;
	q.tx_size = 1u << q.tx_cfg.tx_log2;
	q.tx_head = q.tx_tail = q.tcmpl_tail = q.tcmpl_head = 0;
	q.tx_phase = true;
	q.tx_refused = q.tx_fault = false;
	q.tx_stalled = false;
	q.tx_on = true;
	q.tx_epoch++;
	trace_("txq%u enabled: %u entries", qi, q.tx_size);
}

// A producer or consumer index of an enabled ring. One at or beyond the
// ring size is a driver bug: counted and ignored.
void Nic::doorbell(unsigned qi, uint32_t off, uint32_t val)
{
	Queue &q = *q_[qi];
	const bool rx = off < DMS_NIC_TXQ_CTRL;
	const uint32_t size = rx ? q.rx_size : q.tx_size;
	if (!(rx ? q.rx_on : q.tx_on))
		return;
	if (!size || val >= size) {
		c_.ring_err++;
		trace_("q%u doorbell 0x%02x = %u: beyond the ring, ignored", qi, off, val);
		return;
	}
	trace_("q%u doorbell 0x%02x = %u", qi, off, val);
	switch (off) {
	case DMS_NIC_RXQ_HBUF_TAIL:
		q.hbuf_tail = val;
		break;
	case DMS_NIC_RXQ_PBUF_TAIL:
		q.pbuf_tail = val;
		break;
	case DMS_NIC_RXQ_CMPL_HEAD:
		q.rcmpl_head = val;
		break;
	case DMS_NIC_TXQ_TAIL:
		if (val != q.tx_tail) {
			q.tx_mark(val, tx_doorbells_++);
			q.tx_stalled = false; // the chain may be whole now
		}
		q.tx_tail = val;
		break;
	default:
		q.tcmpl_head = val;
		break;
	}
	if (rx)
		q.rx_doorbell.notify(sc_core::SC_ZERO_TIME);
	else
		tx_ev_.notify(sc_core::SC_ZERO_TIME);
}

bool Nic::in_rings(uint64_t addr, uint64_t len) const
{
	auto hits = [addr, len](uint64_t base, uint64_t bytes) {
		return bytes && addr < base + bytes && base < addr + len;
	};
	for (const auto &qp : q_) {
		const Queue &q = *qp;
		const QueueSetup &r = q.rx_cfg, &t = q.tx_cfg;
		if (q.rx_on && (hits(r.hbuf_base, sizeof(dms_rx_buf) * q.rx_size) ||
				hits(r.pbuf_base, sizeof(dms_rx_buf) * q.rx_size) ||
				hits(r.rcmpl_base, sizeof(dms_rx_cmpl) * q.rx_size)))
			return true;
		if (q.tx_on && (hits(t.tdesc_base, sizeof(dms_tx_desc) * q.tx_size) ||
				hits(t.tcmpl_base, sizeof(dms_tx_cmpl) * q.tx_size)))
			return true;
	}
	return false;
}

} // namespace devmemsim
