// SPDX-License-Identifier: MIT
#include "nic_driver.h"

#include <cstring>
#include <stdexcept>

#include "devmemsim/nic_regs.h"

namespace dms_sim
{

namespace
{

constexpr uint32_t kTxHdrSlot = 128; // bytes of header per TX frame slot

uint32_t q0(uint32_t off)
{
	return DMS_NIC_Q_BASE(0) + off;
}

} // namespace

NicDriver::NicDriver(SimNode &node, const DriverParams &p, PayloadPool pool)
    : n_(node), p_(p), pool_(pool), rx_size_(1u << p.rx_ring_log2), tx_size_(1u << p.tx_ring_log2)
{
	HostMemory &m = n_.mem();
	hring_ = m.alloc(sizeof(dms_rx_buf) * rx_size_, 64);
	pring_ = m.alloc(sizeof(dms_rx_buf) * rx_size_, 64);
	cring_ = m.alloc(sizeof(dms_rx_cmpl) * rx_size_, 64);
	hbufs_ = m.alloc(uint64_t{p.hbuf_size} * rx_size_, 64);
	tdesc_ = m.alloc(sizeof(dms_tx_desc) * tx_size_, 64);
	tcmpl_ = m.alloc(sizeof(dms_tx_cmpl) * tx_size_, 64);
	thdr_ = m.alloc(uint64_t{kTxHdrSlot} * tx_size_, 64);
}

void NicDriver::setup_rx()
{
	n_.nic_write(q0(DMS_NIC_RXQ_RING_LOG2), p_.rx_ring_log2);
	n_.nic_write(q0(DMS_NIC_RXQ_HBUF_BASE_LO), hring_, 8);
	n_.nic_write(q0(DMS_NIC_RXQ_PBUF_BASE_LO), pring_, 8);
	n_.nic_write(q0(DMS_NIC_RXQ_CMPL_BASE_LO), cring_, 8);
	n_.nic_write(q0(DMS_NIC_RXQ_HBUF_SIZE), p_.hbuf_size);
	n_.nic_write(q0(DMS_NIC_RXQ_PBUF_SIZE), p_.pbuf_size);
	n_.nic_write(q0(DMS_NIC_RXQ_CTRL), DMS_NIC_Q_ENABLE);
	if (!(n_.nic_read(q0(DMS_NIC_RXQ_CTRL)) & DMS_NIC_Q_ENABLE))
		throw std::runtime_error("the NIC refused the RX ring setup");
	// One slot stays empty: a full ring would read as empty.
	for (uint16_t id = 0; id < rx_size_ - 1; id++) {
		post_hbuf(id);
		post_pbuf(id);
	}
}

void NicDriver::setup_tx()
{
	n_.nic_write(q0(DMS_NIC_TXQ_RING_LOG2), p_.tx_ring_log2);
	n_.nic_write(q0(DMS_NIC_TXQ_DESC_BASE_LO), tdesc_, 8);
	n_.nic_write(q0(DMS_NIC_TXQ_CMPL_BASE_LO), tcmpl_, 8);
	n_.nic_write(q0(DMS_NIC_TXQ_CTRL), DMS_NIC_Q_ENABLE);
	if (!(n_.nic_read(q0(DMS_NIC_TXQ_CTRL)) & DMS_NIC_Q_ENABLE))
		throw std::runtime_error("the NIC refused the TX ring setup");
}

void NicDriver::start()
{
	if (n_.nic_read(DMS_NIC_REG_ID) != DMS_NIC_ID_MAGIC)
		throw std::runtime_error("no devmemsim NIC");
	n_.nic_write(DMS_NIC_REG_MTU, p_.mtu);
	if (n_.nic_read(DMS_NIC_REG_MTU) != p_.mtu)
		throw std::runtime_error("the NIC refused the MTU");
	// Header split for every TCP payload, checksums both ways; one queue
	// pair, so no RSS or steering.
	n_.nic_write(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT | DMS_NIC_RX_CSUM);
	n_.nic_write(DMS_NIC_REG_HDS_THRESH, 0);
	n_.nic_write(DMS_NIC_REG_TX_CTRL, DMS_NIC_TX_CSUM);
	n_.nic_write(DMS_NIC_REG_ITR_NS, p_.itr_ns);
	setup_rx();
	setup_tx();
	flush();
	n_.nic_write(q0(DMS_NIC_Q_IRQ_ARM), 1);
}

void NicDriver::post_hbuf(uint16_t id)
{
	dms_rx_buf b{};
	b.addr = hbufs_ + uint64_t{id} * p_.hbuf_size;
	b.id = id;
	std::memcpy(n_.mem().at(hring_ + sizeof(b) * hbuf_tail_), &b, sizeof(b));
	hbuf_tail_ = (hbuf_tail_ + 1) % rx_size_;
}

void NicDriver::return_pbuf(uint16_t id)
{
	post_pbuf(id);
	flush_at_job_end();
}

void NicDriver::post_pbuf(uint16_t id)
{
	dms_rx_buf b{};
	b.addr = pool_.bus + uint64_t{id} * p_.pbuf_size;
	b.id = id;
	std::memcpy(n_.mem().at(pring_ + sizeof(b) * pbuf_tail_), &b, sizeof(b));
	pbuf_tail_ = (pbuf_tail_ + 1) % rx_size_;
}

void NicDriver::on_irq(unsigned vector)
{
	if (vector != 1)
		return; // the admin vector: link changes and faults are not modelled here
	c_.irqs++;
	if (polling_)
		return;
	polling_ = true;
	n_.cpu_job(n_.events().now_ps(), [this] {
		n_.charge(p_.irq_ps);
		poll();
	});
}

void NicDriver::resume()
{
	if (!stalled_ || polling_)
		return;
	stalled_ = false;
	polling_ = true;
	n_.cpu_job(n_.events().now_ps(), [this] { poll(); });
}

// One NAPI poll: up to the budget of received frames, every TX
// completion; then poll again at once if the budget ran out, else re-arm
// (the NIC fires again when completions are pending, ITR permitting).
void NicDriver::poll()
{
	c_.polls++;
	unsigned frames = 0;
	RxFrame f;
	while (frames < p_.napi_budget) {
		if (h_.can_take && !h_.can_take()) {
			stalled_ = true;
			c_.stalls++;
			break;
		}
		if (!next_frame(f))
			break;
		frames++;
		n_.charge(p_.rx_frame_ps);
		if (h_.rx)
			h_.rx(f);
	}
	reap_tx();
	if (h_.poll_done)
		h_.poll_done();
	flush_at_job_end();
	if (frames == p_.napi_budget) {
		n_.at_job_end([this] { n_.cpu_job(n_.events().now_ps(), [this] { poll(); }); });
		return;
	}
	n_.at_job_end([this] { polling_ = false; });
	if (!stalled_)
		arm_ = true;
}

dms_rx_cmpl *NicDriver::rx_cmpl(uint32_t i)
{
	return reinterpret_cast<dms_rx_cmpl *>(n_.mem().at(cring_ + sizeof(dms_rx_cmpl) * i));
}

// The next whole frame (SOP to EOP written) off the completion ring, its
// header buffer already reposted; false if none is complete yet.
bool NicDriver::next_frame(RxFrame &f)
{
	const bool want = rx_phase_;
	uint32_t n = 0;
	for (;; n++) {
		if (n >= rx_size_)
			return false;
		const dms_rx_cmpl *c = rx_cmpl((rx_head_ + n) % rx_size_);
		if (bool(c->flags & DMS_RX_F_GEN) != (want ^ ((rx_head_ + n) / rx_size_ != 0)))
			return false;
		if (c->flags & DMS_RX_F_EOP)
			break;
	}
	f = RxFrame{};
	for (uint32_t i = 0; i <= n; i++) {
		const dms_rx_cmpl c = *rx_cmpl(rx_head_);
		if (++rx_head_ == rx_size_) {
			rx_head_ = 0;
			rx_phase_ = !rx_phase_;
		}
		if (c.flags & DMS_RX_F_ERR)
			c_.rx_errors++;
		if (c.flags & DMS_RX_F_HDR) {
			f.hdr = n_.mem().at(hbufs_ + uint64_t{c.hbuf_id} * p_.hbuf_size);
			f.hdr_len = c.flags & DMS_RX_F_ERR ? 0 : c.hdr_len;
			post_hbuf(c.hbuf_id); // the headers are parsed before the ring wraps
		}
		if (c.flags & DMS_RX_F_SOP) {
			f.csum_ok = c.flags & DMS_RX_F_CSUM_OK;
			if (c.flags & DMS_RX_F_CSUM_BAD)
				c_.csum_bad++;
		}
		if (c.flags & DMS_RX_F_PAY) {
			const uint64_t off = uint64_t{c.pbuf_id} * p_.pbuf_size;
			f.frags.push_back({c.pbuf_id, c.flags & DMS_RX_F_ERR ? 0 : c.pay_len,
					   pool_.bus + off, pool_.data + off});
		}
	}
	c_.rx_frames++;
	return true;
}

unsigned NicDriver::tx_room(unsigned descs_per_frame) const
{
	const uint32_t used = (tx_tail_ - tx_head_ + tx_size_) % tx_size_;
	return (tx_size_ - 1 - used) / descs_per_frame;
}

void NicDriver::tx_post(const uint8_t *hdr, size_t hdr_len, uint64_t pay_bus, uint32_t pay_len)
{
	const uint32_t sop = tx_tail_;
	const uint64_t slot = thdr_ + uint64_t{kTxHdrSlot} * sop;
	std::memcpy(n_.mem().at(slot), hdr, hdr_len);
	dms_tx_desc d[2] = {};
	d[0] = {slot, uint32_t(hdr_len), uint16_t(DMS_TX_F_SOP | DMS_TX_F_CSUM), uint16_t(sop)};
	uint32_t nd = 1;
	if (pay_len)
		d[nd++] = {pay_bus, pay_len, 0, uint16_t(sop)};
	d[nd - 1].flags |= DMS_TX_F_EOP;
	for (uint32_t i = 0; i < nd; i++) {
		std::memcpy(n_.mem().at(tdesc_ + sizeof(dms_tx_desc) * tx_tail_), &d[i],
			    sizeof(d[i]));
		tx_tail_ = (tx_tail_ + 1) % tx_size_;
	}
	tx_inflight_.push_back(nd);
	c_.tx_frames++;
	n_.charge(p_.tx_frame_ps);
	flush_at_job_end();
}

void NicDriver::reap_tx()
{
	bool freed = false;
	for (;;) {
		const auto *c = reinterpret_cast<const dms_tx_cmpl *>(
			n_.mem().at(tcmpl_ + sizeof(dms_tx_cmpl) * tx_cmpl_head_));
		if (bool(c->flags & DMS_TX_C_GEN) != tx_phase_ || tx_inflight_.empty())
			break;
		if (c->flags & DMS_TX_C_ERR)
			c_.tx_errors++;
		tx_head_ = (tx_head_ + tx_inflight_.front()) % tx_size_;
		tx_inflight_.pop_front();
		if (++tx_cmpl_head_ == tx_size_) {
			tx_cmpl_head_ = 0;
			tx_phase_ = !tx_phase_;
		}
		freed = true;
	}
	if (freed && h_.tx_room)
		h_.tx_room();
}

void NicDriver::flush_at_job_end()
{
	if (flush_pending_)
		return;
	flush_pending_ = true;
	n_.at_job_end([this] { flush(); });
}

void NicDriver::flush()
{
	flush_pending_ = false;
	n_.nic_write(q0(DMS_NIC_RXQ_HBUF_TAIL), hbuf_tail_);
	n_.nic_write(q0(DMS_NIC_RXQ_PBUF_TAIL), pbuf_tail_);
	n_.nic_write(q0(DMS_NIC_RXQ_CMPL_HEAD), rx_head_);
	n_.nic_write(q0(DMS_NIC_TXQ_CMPL_HEAD), tx_cmpl_head_);
	n_.nic_write(q0(DMS_NIC_TXQ_TAIL), tx_tail_);
	if (arm_) {
		arm_ = false;
		n_.nic_write(q0(DMS_NIC_Q_IRQ_ARM), 1);
	}
}

} // namespace dms_sim
