// SPDX-License-Identifier: MIT
#include "nic/nic.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "devmemsim/nic_desc.h"
#include "devmemsim/nic_regs.h"
#include "nic/csum.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	      "descriptors are copied as little-endian structs");
static_assert(sizeof(dms_rx_buf) == 16 && sizeof(dms_rx_cmpl) == 32 && sizeof(dms_tx_desc) == 16 &&
		      sizeof(dms_tx_cmpl) == 8,
	      "descriptor layouts");

namespace devmemsim
{

namespace
{

// Ethernet framing on the wire around a frame: preamble and SFD (8),
// FCS (4), inter-frame gap (12) — IEEE 802.3 clause 4.
constexpr size_t kWireOverhead = 24;
// Frame bytes allowed beyond the MTU: Ethernet header and two VLAN tags.
constexpr size_t kL2Overhead = 14 + 8;

uint32_t lo32(uint64_t v)
{
	return static_cast<uint32_t>(v);
}
uint32_t hi32(uint64_t v)
{
	return static_cast<uint32_t>(v >> 32);
}
void set_lo(uint64_t &v, uint32_t x)
{
	v = (v & ~0xffffffffull) | x;
}
void set_hi(uint64_t &v, uint32_t x)
{
	v = (v & 0xffffffffull) | static_cast<uint64_t>(x) << 32;
}

} // namespace

struct Nic::Queue {
	// Registers as the driver wrote them.
	uint32_t rx_ctrl = 0, rx_log2 = 0, hbuf_size = 0, pbuf_size = 0;
	uint64_t hbuf_base = 0, pbuf_base = 0, rcmpl_base = 0;
	uint32_t hbuf_tail = 0, pbuf_tail = 0, rcmpl_head = 0;
	uint32_t tx_ctrl = 0, tx_log2 = 0;
	uint64_t tdesc_base = 0, tcmpl_base = 0;
	uint32_t tx_tail = 0, tcmpl_head = 0;
	// Device side, set when the ring is enabled.
	bool rx_on = false, tx_on = false;
	uint32_t rx_size = 0, tx_size = 0;
	uint32_t hbuf_head = 0, pbuf_head = 0, rcmpl_tail = 0;
	uint32_t tx_head = 0, tcmpl_tail = 0;
	bool rx_phase = true, tx_phase = true;
	// Interrupt.
	bool armed = false;
	sc_core::sc_time last_irq;
	sc_core::sc_event irq_ev, rx_doorbell;
	// Statistics.
	uint64_t rx_frames = 0, rx_split = 0, tx_frames = 0;

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
	// Back to power-on state; the events stay (processes wait on them).
	void clear()
	{
		rx_ctrl = rx_log2 = hbuf_size = pbuf_size = 0;
		hbuf_base = pbuf_base = rcmpl_base = 0;
		hbuf_tail = pbuf_tail = rcmpl_head = 0;
		tx_ctrl = tx_log2 = 0;
		tdesc_base = tcmpl_base = 0;
		tx_tail = tcmpl_head = 0;
		rx_on = tx_on = false;
		rx_size = tx_size = 0;
		hbuf_head = pbuf_head = rcmpl_tail = tx_head = tcmpl_tail = 0;
		rx_phase = tx_phase = true;
		armed = false;
		last_irq = sc_core::SC_ZERO_TIME;
	}
	bool completions_pending() const
	{
		return (rx_on && rcmpl_tail != rcmpl_head) || (tx_on && tcmpl_tail != tcmpl_head);
	}
};

Nic::Nic(sc_core::sc_module_name name, const NodeConfig &cfg)
    : sc_core::sc_module(name), dma("dma"), bar_mem("bar_mem"), nq_(cfg.nic_queues),
      node_index_(cfg.index), timed_(cfg.mode == Mode::Timed),
      line_rate_bps_(cfg.nic_line_rate_gbps * 1e9)
{
	bar_mem.register_b_transport(this, &Nic::no_memory);
	for (unsigned i = 0; i < nq_; i++) {
		q_.push_back(std::make_unique<Queue>());
		sc_core::sc_spawn_options opt;
		opt.spawn_method();
		opt.set_sensitivity(&q_[i]->irq_ev);
		opt.dont_initialize();
		sc_core::sc_spawn([this, i] { irq_method(i); }, ("irq" + std::to_string(i)).c_str(),
				  &opt);
	}
	// RX headers through the RTL parser; in timed mode its cycles take time.
	if (cfg.nic_parser == NicParser::Rtl)
		rtl_ = std::make_unique<RtlParser>(
			"rtl_parser",
			RtlParser::Options(
				sc_core::sc_time(1e3 / cfg.nic_parser_clock_mhz, sc_core::SC_NS),
				timed_));
	SC_HAS_PROCESS(Nic);
	SC_THREAD(rx_thread);
	SC_THREAD(tx_thread);
}

Nic::~Nic() = default;

void Nic::no_memory(tlm::tlm_generic_payload &gp, sc_core::sc_time &)
{
	gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

void Nic::set_mac(const uint8_t mac[6])
{
	std::copy(mac, mac + 6, mac_.begin());
}

void Nic::set_link(bool up)
{
	if (up == link_up_)
		return;
	link_up_ = up;
	admin_status_ |= DMS_NIC_ADMIN_IRQ_LINK;
	if ((admin_status_ & admin_mask_) && host_.irq)
		host_.irq(0);
}

void Nic::reset()
{
	mtu_ = 1500;
	rx_ctrl_ = hds_thresh_ = tx_ctrl_ = itr_ns_ = 0;
	admin_status_ = admin_mask_ = 0;
	rss_key_.fill(0);
	rss_indir_.fill(0);
	ntuple_.fill(NtupleRule{});
	nt_stage_ = NtupleRule{};
	for (auto &q : q_) {
		q->clear();
		q->rx_doorbell.notify(sc_core::SC_ZERO_TIME); // waiters see the queue off
	}
	rx_fifo_.clear();
	if (rx_refused_) {
		rx_refused_ = false;
		if (host_.rx_ready)
			host_.rx_ready();
	}
}

void Nic::reset_counters()
{
	c_ = NicCounters{};
	for (auto &q : q_)
		q->rx_frames = q->rx_split = q->tx_frames = 0;
}

sc_core::sc_time Nic::wire_time(size_t frame_len) const
{
	return sc_core::sc_time(static_cast<double>(frame_len + kWireOverhead) * 8.0 /
					line_rate_bps_,
				sc_core::SC_SEC);
}

// ------------------------------------------------------------ registers

uint32_t Nic::read32(uint32_t off)
{
	if (off >= DMS_NIC_Q_BASE(0) && off < DMS_NIC_Q_BASE(nq_))
		return queue_read(*q_[(off - DMS_NIC_Q_BASE(0)) / 0x100], off & 0xff);
	if (off >= DMS_NIC_REG_RSS_KEY(0) && off < DMS_NIC_REG_RSS_KEY(10)) {
		unsigned i = (off - DMS_NIC_REG_RSS_KEY(0)) / 4 * 4;
		return rss_key_[i] | rss_key_[i + 1] << 8 | rss_key_[i + 2] << 16 |
		       static_cast<uint32_t>(rss_key_[i + 3]) << 24;
	}
	if (off >= DMS_NIC_REG_RSS_INDIR(0) && off < DMS_NIC_REG_RSS_INDIR(128))
		return rss_indir_[(off - DMS_NIC_REG_RSS_INDIR(0)) / 4];
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
	case DMS_NIC_REG_CTRL:
		return 0;
	case DMS_NIC_REG_STATUS:
		return link_up_ ? DMS_NIC_STATUS_LINK_UP : 0;
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
	default:
		return DMS_REG_UNDEFINED;
	}
}

void Nic::write32(uint32_t off, uint32_t val)
{
	if (off >= DMS_NIC_Q_BASE(0) && off < DMS_NIC_Q_BASE(nq_)) {
		queue_write((off - DMS_NIC_Q_BASE(0)) / 0x100, off & 0xff, val);
		return;
	}
	if (off >= DMS_NIC_REG_RSS_KEY(0) && off < DMS_NIC_REG_RSS_KEY(10)) {
		unsigned i = (off - DMS_NIC_REG_RSS_KEY(0)) / 4 * 4;
		for (unsigned b = 0; b < 4; b++)
			rss_key_[i + b] = static_cast<uint8_t>(val >> (8 * b));
		return;
	}
	if (off >= DMS_NIC_REG_RSS_INDIR(0) && off < DMS_NIC_REG_RSS_INDIR(128)) {
		rss_indir_[(off - DMS_NIC_REG_RSS_INDIR(0)) / 4] = val;
		return;
	}
	auto addr_word = [&](std::array<uint8_t, 16> &a, uint32_t base) {
		unsigned i = (off - base) / 4 * 4;
		for (unsigned b = 0; b < 4; b++)
			a[i + b] = static_cast<uint8_t>(val >> (24 - 8 * b));
	};
	if (off >= DMS_NIC_REG_NT_SRC(0) && off < DMS_NIC_REG_NT_SRC(4))
		return addr_word(nt_stage_.src, DMS_NIC_REG_NT_SRC(0));
	if (off >= DMS_NIC_REG_NT_DST(0) && off < DMS_NIC_REG_NT_DST(4))
		return addr_word(nt_stage_.dst, DMS_NIC_REG_NT_DST(0));
	if (off >= DMS_NIC_REG_NT_SRC_MASK(0) && off < DMS_NIC_REG_NT_SRC_MASK(4))
		return addr_word(nt_stage_.src_mask, DMS_NIC_REG_NT_SRC_MASK(0));
	if (off >= DMS_NIC_REG_NT_DST_MASK(0) && off < DMS_NIC_REG_NT_DST_MASK(4))
		return addr_word(nt_stage_.dst_mask, DMS_NIC_REG_NT_DST_MASK(0));
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
				  DMS_NIC_RX_NTUPLE);
		break;
	case DMS_NIC_REG_HDS_THRESH:
		hds_thresh_ = val;
		break;
	case DMS_NIC_REG_TX_CTRL:
		tx_ctrl_ = val & DMS_NIC_TX_CSUM;
		break;
	case DMS_NIC_REG_ITR_NS:
		itr_ns_ = std::min<uint32_t>(val, 1000000);
		break;
	case DMS_NIC_REG_ADMIN_IRQ_STATUS:
		admin_status_ &= ~val;
		break;
	case DMS_NIC_REG_ADMIN_IRQ_MASK:
		admin_mask_ = val & DMS_NIC_ADMIN_IRQ_LINK;
		if ((admin_status_ & admin_mask_) && host_.irq)
			host_.irq(0);
		break;
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
		ntuple_commit(val);
		break;
	default:
		break;
	}
}

void Nic::ntuple_commit(uint32_t index)
{
	if (index >= kNtupleSize) {
		c_.ring_err++;
		return;
	}
	ntuple_[index] = nt_stage_;
}

uint32_t Nic::queue_read(Queue &q, uint32_t off)
{
	switch (off) {
	case DMS_NIC_RXQ_CTRL:
		return q.rx_ctrl;
	case DMS_NIC_RXQ_RING_LOG2:
		return q.rx_log2;
	case DMS_NIC_RXQ_HBUF_BASE_LO:
		return lo32(q.hbuf_base);
	case DMS_NIC_RXQ_HBUF_BASE_HI:
		return hi32(q.hbuf_base);
	case DMS_NIC_RXQ_PBUF_BASE_LO:
		return lo32(q.pbuf_base);
	case DMS_NIC_RXQ_PBUF_BASE_HI:
		return hi32(q.pbuf_base);
	case DMS_NIC_RXQ_CMPL_BASE_LO:
		return lo32(q.rcmpl_base);
	case DMS_NIC_RXQ_CMPL_BASE_HI:
		return hi32(q.rcmpl_base);
	case DMS_NIC_RXQ_HBUF_TAIL:
		return q.hbuf_tail;
	case DMS_NIC_RXQ_PBUF_TAIL:
		return q.pbuf_tail;
	case DMS_NIC_RXQ_CMPL_HEAD:
		return q.rcmpl_head;
	case DMS_NIC_RXQ_HBUF_SIZE:
		return q.hbuf_size;
	case DMS_NIC_RXQ_PBUF_SIZE:
		return q.pbuf_size;
	case DMS_NIC_TXQ_CTRL:
		return q.tx_ctrl;
	case DMS_NIC_TXQ_RING_LOG2:
		return q.tx_log2;
	case DMS_NIC_TXQ_DESC_BASE_LO:
		return lo32(q.tdesc_base);
	case DMS_NIC_TXQ_DESC_BASE_HI:
		return hi32(q.tdesc_base);
	case DMS_NIC_TXQ_CMPL_BASE_LO:
		return lo32(q.tcmpl_base);
	case DMS_NIC_TXQ_CMPL_BASE_HI:
		return hi32(q.tcmpl_base);
	case DMS_NIC_TXQ_TAIL:
		return q.tx_tail;
	case DMS_NIC_TXQ_CMPL_HEAD:
		return q.tcmpl_head;
	default:
		return DMS_REG_UNDEFINED;
	}
}

void Nic::queue_write(unsigned qi, uint32_t off, uint32_t val)
{
	Queue &q = *q_[qi];
	// An index at or beyond the ring size is a driver bug: counted, ignored.
	auto index = [&](uint32_t size, uint32_t &reg) {
		if (!size || val >= size) {
			c_.ring_err++;
			return false;
		}
		reg = val;
		return true;
	};
	auto ring_ok = [](uint32_t log2, std::initializer_list<uint64_t> bases) {
		if (log2 < DMS_NIC_RING_LOG2_MIN || log2 > DMS_NIC_RING_LOG2_MAX)
			return false;
		for (uint64_t b : bases)
			if (!b || (b & 63))
				return false;
		return true;
	};
	switch (off) {
	case DMS_NIC_RXQ_CTRL: {
		bool on = val & DMS_NIC_Q_ENABLE;
		if (on && !q.rx_on) {
			if (!ring_ok(q.rx_log2, {q.hbuf_base, q.pbuf_base, q.rcmpl_base}) ||
			    q.hbuf_size < DMS_NIC_HBUF_SIZE_MIN ||
			    q.hbuf_size > DMS_NIC_HBUF_SIZE_MAX ||
			    q.pbuf_size < DMS_NIC_PBUF_SIZE_MIN ||
			    q.pbuf_size > DMS_NIC_PBUF_SIZE_MAX) {
				c_.ring_err++;
				return;
			}
			q.rx_size = 1u << q.rx_log2;
			q.hbuf_head = q.pbuf_head = q.rcmpl_tail = 0;
			q.hbuf_tail = q.pbuf_tail = q.rcmpl_head = 0;
			q.rx_phase = true;
		}
		q.rx_on = on;
		q.rx_ctrl = on ? DMS_NIC_Q_ENABLE : 0;
		q.rx_doorbell.notify(sc_core::SC_ZERO_TIME);
		break;
	}
	case DMS_NIC_RXQ_RING_LOG2:
		q.rx_log2 = val;
		break;
	case DMS_NIC_RXQ_HBUF_BASE_LO:
		set_lo(q.hbuf_base, val);
		break;
	case DMS_NIC_RXQ_HBUF_BASE_HI:
		set_hi(q.hbuf_base, val);
		break;
	case DMS_NIC_RXQ_PBUF_BASE_LO:
		set_lo(q.pbuf_base, val);
		break;
	case DMS_NIC_RXQ_PBUF_BASE_HI:
		set_hi(q.pbuf_base, val);
		break;
	case DMS_NIC_RXQ_CMPL_BASE_LO:
		set_lo(q.rcmpl_base, val);
		break;
	case DMS_NIC_RXQ_CMPL_BASE_HI:
		set_hi(q.rcmpl_base, val);
		break;
	case DMS_NIC_RXQ_HBUF_TAIL:
		if (q.rx_on && index(q.rx_size, q.hbuf_tail))
			q.rx_doorbell.notify(sc_core::SC_ZERO_TIME);
		break;
	case DMS_NIC_RXQ_PBUF_TAIL:
		if (q.rx_on && index(q.rx_size, q.pbuf_tail))
			q.rx_doorbell.notify(sc_core::SC_ZERO_TIME);
		break;
	case DMS_NIC_RXQ_CMPL_HEAD:
		if (q.rx_on && index(q.rx_size, q.rcmpl_head))
			q.rx_doorbell.notify(sc_core::SC_ZERO_TIME);
		break;
	case DMS_NIC_RXQ_HBUF_SIZE:
		q.hbuf_size = val;
		break;
	case DMS_NIC_RXQ_PBUF_SIZE:
		q.pbuf_size = val;
		break;
	case DMS_NIC_TXQ_CTRL: {
		bool on = val & DMS_NIC_Q_ENABLE;
		if (on && !q.tx_on) {
			if (!ring_ok(q.tx_log2, {q.tdesc_base, q.tcmpl_base})) {
				c_.ring_err++;
				return;
			}
			q.tx_size = 1u << q.tx_log2;
			q.tx_head = q.tx_tail = q.tcmpl_tail = q.tcmpl_head = 0;
			q.tx_phase = true;
		}
		q.tx_on = on;
		q.tx_ctrl = on ? DMS_NIC_Q_ENABLE : 0;
		break;
	}
	case DMS_NIC_TXQ_RING_LOG2:
		q.tx_log2 = val;
		break;
	case DMS_NIC_TXQ_DESC_BASE_LO:
		set_lo(q.tdesc_base, val);
		break;
	case DMS_NIC_TXQ_DESC_BASE_HI:
		set_hi(q.tdesc_base, val);
		break;
	case DMS_NIC_TXQ_CMPL_BASE_LO:
		set_lo(q.tcmpl_base, val);
		break;
	case DMS_NIC_TXQ_CMPL_BASE_HI:
		set_hi(q.tcmpl_base, val);
		break;
	case DMS_NIC_TXQ_TAIL:
		if (q.tx_on && index(q.tx_size, q.tx_tail))
			tx_ev_.notify(sc_core::SC_ZERO_TIME);
		break;
	case DMS_NIC_TXQ_CMPL_HEAD:
		if (q.tx_on && index(q.tx_size, q.tcmpl_head))
			tx_ev_.notify(sc_core::SC_ZERO_TIME);
		break;
	case DMS_NIC_Q_IRQ_ARM:
		if (val & 1) {
			q.armed = true;
			if (q.completions_pending())
				signal(qi);
		}
		break;
	default:
		break;
	}
}

// ------------------------------------------------------------ interrupts

void Nic::signal(unsigned qi)
{
	Queue &q = *q_[qi];
	if (!q.armed)
		return; // NAPI is polling; it re-arms when it catches up
	sc_core::sc_time due = q.last_irq + sc_core::sc_time(itr_ns_, sc_core::SC_NS);
	sc_core::sc_time now = sc_core::sc_time_stamp();
	if (now >= due || q.last_irq == sc_core::SC_ZERO_TIME)
		irq_method(qi);
	else
		q.irq_ev.notify(due - now);
}

void Nic::irq_method(unsigned qi)
{
	Queue &q = *q_[qi];
	if (!q.armed)
		return;
	q.armed = false;
	q.last_irq = sc_core::sc_time_stamp();
	if (host_.irq)
		host_.irq(qi + 1);
}

// ------------------------------------------------------------ DMA

bool Nic::dma_rw(uint64_t addr, void *buf, size_t len, bool write)
{
	if (!len)
		return true;
	tlm::tlm_generic_payload gp;
	gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
	gp.set_address(addr);
	gp.set_data_ptr(static_cast<unsigned char *>(buf));
	gp.set_data_length(static_cast<unsigned>(len));
	gp.set_streaming_width(static_cast<unsigned>(len));
	gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
	sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
	dma->b_transport(gp, delay);
	// Waited for once the frame is done, so no state changes mid-frame.
	delay_ += delay;
	return gp.is_response_ok();
}

void Nic::settle()
{
	if (timed_ && delay_ > sc_core::SC_ZERO_TIME)
		sc_core::wait(delay_);
	delay_ = sc_core::SC_ZERO_TIME;
}

// ------------------------------------------------------------ RX

bool Nic::receive(const uint8_t *frame, size_t len)
{
	if (rx_fifo_.size() >= kRxFifoFrames) {
		rx_refused_ = true;
		return false;
	}
	rx_fifo_.emplace_back(frame, frame + len);
	rx_ev_.notify(sc_core::SC_ZERO_TIME);
	return true;
}

unsigned Nic::select_queue(const Parsed &p, uint32_t *hash, bool *hashed)
{
	*hashed = false;
	if (rx_ctrl_ & DMS_NIC_RX_RSS)
		*hashed = rss_hash(p, rss_key_.data(), rss_key_.size(), hash);
	if (rx_ctrl_ & DMS_NIC_RX_NTUPLE) {
		for (const NtupleRule &r : ntuple_)
			if (ntuple_match(r, p))
				return r.queue < nq_ ? r.queue : 0;
	}
	if (*hashed) {
		uint32_t qi = rss_indir_[*hash % rss_indir_.size()];
		return qi < nq_ ? qi : 0;
	}
	return 0;
}

void Nic::rx_thread()
{
	for (;;) {
		while (rx_fifo_.empty())
			sc_core::wait(rx_ev_);
		std::vector<uint8_t> frame = std::move(rx_fifo_.front());
		rx_fifo_.pop_front();
		if (timed_)
			sc_core::wait(wire_time(frame.size()));
		if (!rx_frame(frame))
			c_.rx_drop++;
		settle();
		if (rx_refused_) {
			rx_refused_ = false;
			if (host_.rx_ready)
				host_.rx_ready();
		}
	}
}

// Place one frame; false if it was dropped (queue off, too long, or it can
// never fit the ring).
bool Nic::rx_frame(const std::vector<uint8_t> &frame)
{
	const size_t len = frame.size();
	if (len < 14 || len > mtu_ + kL2Overhead)
		return false;
	const Parsed p = rtl_ ? rtl_->parse(frame.data(), len) : parse_frame(frame.data(), len);
	uint32_t hash = 0;
	bool hashed = false;
	const unsigned qi = select_queue(p, &hash, &hashed);
	Queue &q = *q_[qi];

	const bool hds = rx_ctrl_ & DMS_NIC_RX_HDR_SPLIT;
	size_t hdr_len = 0, pay_len = len;
	bool split = false;
	if (hds && p.split_off && len - p.split_off > hds_thresh_) {
		split = true;
		hdr_len = p.split_off;
		pay_len = len - p.split_off;
	}

	// Wait for buffers and completion slots; the queue may go away.
	bool waited = false;
	uint32_t nh = 0, np = 0;
	for (;;) {
		if (!q.rx_on || !q.rx_size)
			return false;
		if (!split && hds && len <= q.hbuf_size) {
			hdr_len = len; // the whole frame fits in a header buffer
			pay_len = 0;
		}
		nh = hdr_len ? 1 : 0;
		np = static_cast<uint32_t>((pay_len + q.pbuf_size - 1) / q.pbuf_size);
		uint32_t nc = std::max<uint32_t>(np, 1);
		if (np >= q.rx_size || nc >= q.rx_size)
			return false; // can never fit this ring
		if (q.hbufs() >= nh && q.pbufs() >= np && q.rcmpl_free() >= nc)
			break;
		if (!waited)
			c_.rx_no_buf++;
		waited = true;
		sc_core::wait(q.rx_doorbell);
	}

	// Fetch the buffer descriptors.
	dms_rx_buf hb{};
	std::vector<dms_rx_buf> pb(np);
	bool ok = true;
	if (nh)
		ok &= dma_rw(q.hbuf_base + 16ull * q.hbuf_head, &hb, sizeof(hb), false);
	for (uint32_t i = 0; i < np; i++)
		ok &= dma_rw(q.pbuf_base + 16ull * ((q.pbuf_head + i) % q.rx_size), &pb[i],
			     sizeof(pb[i]), false);
	q.hbuf_head = (q.hbuf_head + nh) % q.rx_size;
	q.pbuf_head = (q.pbuf_head + np) % q.rx_size;

	// Move the data.
	if (ok && nh)
		ok = dma_rw(hb.addr, const_cast<uint8_t *>(frame.data()), hdr_len, true);
	for (uint32_t i = 0; ok && i < np; i++) {
		size_t off = hdr_len + size_t(i) * q.pbuf_size;
		size_t n = std::min<size_t>(q.pbuf_size, len - off);
		ok = dma_rw(pb[i].addr, const_cast<uint8_t *>(frame.data() + off), n, true);
	}
	if (!ok)
		c_.rx_dma_err++;

	// Checksums and metadata for the first completion.
	uint16_t flags = 0, info = 0;
	if (ok) {
		info = static_cast<uint16_t>((p.l3 == L3::Ipv4	 ? DMS_RX_L3_IPV4
					      : p.l3 == L3::Ipv6 ? DMS_RX_L3_IPV6
								 : 0) |
					     (p.l4 == L4::Tcp	? DMS_RX_L4_TCP
					      : p.l4 == L4::Udp ? DMS_RX_L4_UDP
								: 0));
		if (split)
			flags |= DMS_RX_F_SPLIT;
		if (hashed)
			flags |= DMS_RX_F_RSS;
		if ((rx_ctrl_ & DMS_NIC_RX_CSUM) && p.l4 != L4::None)
			flags |= l4_csum_ok(frame.data(), p) ? DMS_RX_F_CSUM_OK : DMS_RX_F_CSUM_BAD;
	}

	// Completions: one per payload buffer, or one for a header-only frame.
	const uint32_t nc = std::max<uint32_t>(np, 1);
	for (uint32_t i = 0; i < nc; i++) {
		dms_rx_cmpl c{};
		uint16_t f = q.rx_phase ? DMS_RX_F_GEN : 0;
		if (i == 0 || !ok) {
			f |= DMS_RX_F_SOP | flags;
			c.info = info;
			c.frame_len = static_cast<uint32_t>(len);
			c.rss_hash = hashed ? hash : 0;
		}
		if (i == nc - 1 || !ok)
			f |= DMS_RX_F_EOP;
		if (!ok)
			f |= DMS_RX_F_ERR;
		if (i == 0 && nh) {
			f |= DMS_RX_F_HDR;
			c.hbuf_id = hb.id;
			c.hdr_len = ok ? static_cast<uint16_t>(hdr_len) : 0;
		}
		if (i < np) {
			f |= DMS_RX_F_PAY;
			c.pbuf_id = pb[i].id;
			size_t off = hdr_len + size_t(i) * q.pbuf_size;
			c.pay_len =
				ok ? static_cast<uint32_t>(std::min<size_t>(q.pbuf_size, len - off))
				   : 0;
		}
		c.flags = f;
		dma_rw(q.rcmpl_base + sizeof(c) * q.rcmpl_tail, &c, sizeof(c), true);
		if (++q.rcmpl_tail == q.rx_size) {
			q.rcmpl_tail = 0;
			q.rx_phase = !q.rx_phase;
		}
	}
	signal(qi);
	if (!ok)
		return true; // lost to a DMA fault: counted as rx_dma_err, not a drop
	q.rx_frames++;
	c_.rx_frames++;
	c_.rx_bytes += len;
	if (split) {
		q.rx_split++;
		c_.rx_split++;
	}
	return true;
}

// ------------------------------------------------------------ TX

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

bool Nic::tx_frame(unsigned qi)
{
	Queue &q = *q_[qi];
	const uint32_t avail = q.tdescs();
	std::vector<dms_tx_desc> d;
	bool bad = false;
	// Gather SOP..EOP; a chain that breaks the rules is consumed and dropped.
	for (uint32_t i = 0; i < avail; i++) {
		dms_tx_desc desc{};
		if (!dma_rw(q.tdesc_base + 16ull * ((q.tx_head + i) % q.tx_size), &desc,
			    sizeof(desc), false)) {
			bad = true;
			d.push_back(desc);
			c_.tx_dma_err++;
			break;
		}
		d.push_back(desc);
		bool sop = desc.flags & DMS_TX_F_SOP;
		if ((i == 0) != sop || !desc.len || desc.len > 65535 || d.size() > kMaxTxFrags) {
			bad = true;
			c_.tx_desc_err++;
			break;
		}
		if (desc.flags & DMS_TX_F_EOP)
			break;
	}
	if (!bad && !(d.back().flags & DMS_TX_F_EOP))
		return false; // the rest of the frame is not posted yet

	std::vector<uint8_t> frame;
	if (!bad) {
		size_t total = 0;
		for (const auto &x : d)
			total += x.len;
		if (total < 14 || total > mtu_ + kL2Overhead) {
			bad = true;
			c_.tx_desc_err++;
		} else {
			frame.resize(total);
			size_t off = 0;
			for (const auto &x : d) {
				if (!dma_rw(x.addr, frame.data() + off, x.len, false)) {
					bad = true;
					c_.tx_dma_err++;
					break;
				}
				off += x.len;
			}
		}
	}
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

	dms_tx_cmpl c{};
	c.flags = static_cast<uint16_t>((q.tx_phase ? DMS_TX_C_GEN : 0) | (bad ? DMS_TX_C_ERR : 0));
	c.tag = d.back().tag;
	dma_rw(q.tcmpl_base + sizeof(c) * q.tcmpl_tail, &c, sizeof(c), true);
	if (++q.tcmpl_tail == q.tx_size) {
		q.tcmpl_tail = 0;
		q.tx_phase = !q.tx_phase;
	}
	q.tx_head = (q.tx_head + static_cast<uint32_t>(d.size())) % q.tx_size;
	signal(qi);
	return true;
}

// ------------------------------------------------------------ stats

std::string Nic::stats_json() const
{
	std::ostringstream o;
	o << "{\"rx_frames\": " << c_.rx_frames << ", \"rx_bytes\": " << c_.rx_bytes
	  << ", \"rx_split\": " << c_.rx_split << ", \"rx_drop\": " << c_.rx_drop
	  << ", \"rx_no_buf\": " << c_.rx_no_buf << ", \"rx_dma_err\": " << c_.rx_dma_err
	  << ", \"tx_frames\": " << c_.tx_frames << ", \"tx_bytes\": " << c_.tx_bytes
	  << ", \"tx_desc_err\": " << c_.tx_desc_err << ", \"tx_dma_err\": " << c_.tx_dma_err
	  << ", \"ring_err\": " << c_.ring_err << ", \"queues\": [";
	for (unsigned i = 0; i < nq_; i++)
		o << (i ? ", " : "") << "{\"rx_frames\": " << q_[i]->rx_frames
		  << ", \"rx_split\": " << q_[i]->rx_split
		  << ", \"tx_frames\": " << q_[i]->tx_frames << "}";
	o << "]}";
	return o.str();
}

} // namespace devmemsim
