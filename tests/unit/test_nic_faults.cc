// SPDX-License-Identifier: MIT
// A DMA fault on a NIC ring (RX buffer-descriptor fetch, RX or TX
// completion write, TX descriptor fetch) stops that queue: ENABLE clears,
// FAULT is set in its CTRL register and in Q_FAULT_LO, the admin vector
// fires with DMS_NIC_ADMIN_IRQ_Q_FAULT, and no completion is written for
// work that was not done. A fresh enable clears FAULT. Data DMA faults
// still complete with ERR and leave the queue running.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "devmemsim/devmemsim.h"
#include "devmemsim/nic_desc.h"
#include "devmemsim/nic_regs.h"
#include "fake_host.h"
#include "frames.h"

namespace
{

using fake_host::Host;
constexpr uint64_t kRam = fake_host::kRamBase;

constexpr uint64_t kHbufRing = kRam, kPbufRing = kRam + 0x1000, kRcmpl = kRam + 0x2000;
constexpr uint64_t kHdata = kRam + 0x10000, kPdata = kRam + 0x40000;
constexpr uint64_t kTdesc = kRam + 0x100000, kTcmpl = kRam + 0x200000;
constexpr uint64_t kTdata = kRam + 0x300000;
constexpr unsigned kHslot = 256, kPbuf = 4096, kRingLog2 = 6;

// The fake host with a DMA that fails in one address range, or at the Nth
// access from now, and the model's trace lines.
struct FaultyHost : Host {
	uint64_t fail_lo = 0, fail_hi = 0; // [lo, hi) fails
	uint64_t fail_nth = 0;		   // 1: the next access fails; 0: none
	uint64_t accesses = 0, failed_at = 0;
	std::vector<std::string> trace;

	void attach_faulty(dms_node *node)
	{
		static const dms_dev_ops ops = {dma_faulty, Host::irq, Host::send,
						Host::on_rx_ready};
		dms_dev_attach(node, DMS_DEV_NIC, &ops, this);
		dms_node_set_trace(node, on_trace, this);
	}
	void fail_range(uint64_t lo, uint64_t len)
	{
		fail_lo = lo;
		fail_hi = lo + len;
	}
	void heal() { fail_lo = fail_hi = fail_nth = 0; }
	static int dma_faulty(void *o, uint64_t addr, void *buf, uint64_t len, int w)
	{
		auto *h = static_cast<FaultyHost *>(o);
		h->accesses++;
		if ((h->fail_nth && --h->fail_nth == 0) ||
		    (addr < h->fail_hi && h->fail_lo < addr + len)) {
			h->failed_at = addr;
			return -1;
		}
		return Host::dma(o, addr, buf, len, w);
	}
	static void on_trace(void *o, dms_dev, const char *line)
	{
		static_cast<FaultyHost *>(o)->trace.emplace_back(line);
	}
	bool traced(const std::string &what) const
	{
		return std::any_of(trace.begin(), trace.end(), [&](const std::string &l) {
			return l.find(what) != std::string::npos;
		});
	}
	unsigned admin_irqs() const { return unsigned(std::count(irqs.begin(), irqs.end(), 0u)); }
};

class NicFaults : public ::testing::Test
{
protected:
	static void SetUpTestSuite()
	{
		char err[256] = "";
		node_ = dms_node_new(nullptr, err, sizeof(err));
		ASSERT_NE(node_, nullptr) << err;
		host_ = new FaultyHost;
		host_->attach_faulty(node_);
		dms_node_step(node_, 0);
	}
	void SetUp() override
	{
		host_->heal();
		wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
		run();
		dms_node_reset_stats(node_);
		host_->clear();
		host_->trace.clear();
		wr(DMS_NIC_REG_ADMIN_IRQ_MASK, DMS_NIC_ADMIN_IRQ_Q_FAULT);
	}
	static uint32_t rd(uint32_t off)
	{
		return uint32_t(dms_reg_read(node_, DMS_DEV_NIC, off, 4));
	}
	static void wr(uint32_t off, uint32_t v) { dms_reg_write(node_, DMS_DEV_NIC, off, v, 4); }
	static void qw(uint32_t off, uint32_t v) { wr(DMS_NIC_Q_BASE(0) + off, v); }
	static uint32_t qr(uint32_t off) { return rd(DMS_NIC_Q_BASE(0) + off); }
	static void run() { fake_host::run_until_idle(node_, 1000); }

	// Queue 0's RX rings from zero, 8 buffers of each kind posted.
	static void enable_rx()
	{
		std::fill(host_->at(kRcmpl), host_->at(kRcmpl) + (32u << kRingLog2), 0);
		qw(DMS_NIC_RXQ_RING_LOG2, kRingLog2);
		qw(DMS_NIC_RXQ_HBUF_BASE_LO, uint32_t(kHbufRing));
		qw(DMS_NIC_RXQ_PBUF_BASE_LO, uint32_t(kPbufRing));
		qw(DMS_NIC_RXQ_CMPL_BASE_LO, uint32_t(kRcmpl));
		qw(DMS_NIC_RXQ_HBUF_SIZE, kHslot);
		qw(DMS_NIC_RXQ_PBUF_SIZE, kPbuf);
		qw(DMS_NIC_RXQ_CTRL, DMS_NIC_Q_ENABLE);
		for (unsigned s = 0; s < 8; s++) {
			dms_rx_buf hb{kHdata + s * kHslot, uint16_t(100 + s), {}};
			dms_rx_buf pb{kPdata + s * uint64_t(kPbuf), uint16_t(200 + s), {}};
			std::memcpy(host_->at(kHbufRing + 16 * s), &hb, 16);
			std::memcpy(host_->at(kPbufRing + 16 * s), &pb, 16);
		}
		qw(DMS_NIC_RXQ_HBUF_TAIL, 8);
		qw(DMS_NIC_RXQ_PBUF_TAIL, 8);
	}
	// Queue 0's TX rings from zero.
	static void enable_tx()
	{
		std::fill(host_->at(kTcmpl), host_->at(kTcmpl) + (8u << kRingLog2), 0);
		qw(DMS_NIC_TXQ_RING_LOG2, kRingLog2);
		qw(DMS_NIC_TXQ_DESC_BASE_LO, uint32_t(kTdesc));
		qw(DMS_NIC_TXQ_CMPL_BASE_LO, uint32_t(kTcmpl));
		qw(DMS_NIC_TXQ_CTRL, DMS_NIC_Q_ENABLE);
	}
	// One single-descriptor 100-byte frame in TX slot 0, posted.
	static void send_one(uint16_t tag)
	{
		dms_tx_desc d{kTdata, 100, DMS_TX_F_SOP | DMS_TX_F_EOP, tag};
		std::memcpy(host_->at(kTdesc), &d, sizeof(d));
		qw(DMS_NIC_TXQ_TAIL, 1);
		run();
	}
	static void receive_one(size_t payload = 1000)
	{
		frames::Spec s;
		s.payload = payload;
		std::vector<uint8_t> f = frames::build(s);
		ASSERT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
		run();
	}
	static dms_rx_cmpl rx_cmpl(unsigned i)
	{
		dms_rx_cmpl c;
		std::memcpy(&c, host_->at(kRcmpl + sizeof(c) * i), sizeof(c));
		return c;
	}
	static dms_tx_cmpl tx_cmpl(unsigned i)
	{
		dms_tx_cmpl c;
		std::memcpy(&c, host_->at(kTcmpl + sizeof(c) * i), sizeof(c));
		return c;
	}
	// What the driver sees after a fault on queue 0's RX or TX ring.
	static void expect_stopped(uint32_t ctrl_off)
	{
		EXPECT_EQ(qr(ctrl_off), DMS_NIC_Q_FAULT);
		EXPECT_EQ(rd(DMS_NIC_REG_Q_FAULT_LO), 1u);
		EXPECT_EQ(rd(DMS_NIC_REG_Q_FAULT_HI), 0u);
		EXPECT_EQ(rd(DMS_NIC_REG_STAT_RING_DMA_ERR), 1u);
		EXPECT_EQ(rd(DMS_NIC_REG_ADMIN_IRQ_STATUS) & DMS_NIC_ADMIN_IRQ_Q_FAULT,
			  DMS_NIC_ADMIN_IRQ_Q_FAULT);
		EXPECT_EQ(host_->admin_irqs(), 1u);
		EXPECT_NE(std::string(dms_node_stats_json(node_)).find("\"ring_dma_err\": 1"),
			  std::string::npos);
	}
	// The driver's restart: acknowledge, re-post the rings, enable again.
	static void expect_cleared(uint32_t ctrl_off)
	{
		wr(DMS_NIC_REG_ADMIN_IRQ_STATUS, DMS_NIC_ADMIN_IRQ_Q_FAULT);
		EXPECT_EQ(rd(DMS_NIC_REG_ADMIN_IRQ_STATUS), 0u);
		EXPECT_EQ(qr(ctrl_off), DMS_NIC_Q_ENABLE);
		EXPECT_EQ(rd(DMS_NIC_REG_Q_FAULT_LO), 0u);
	}

	static dms_node *node_;
	static FaultyHost *host_;
};
dms_node *NicFaults::node_;
FaultyHost *NicFaults::host_;

} // namespace

// (c): the payload-buffer descriptor cannot be read. Before v1.3 the
// completion carried a buffer id that was never read; now no completion is
// written at all and the queue stops.
TEST_F(NicFaults, RxBufferDescriptorFaultStopsTheQueue)
{
	enable_rx();
	host_->fail_range(kPbufRing, 16);
	receive_one();
	EXPECT_FALSE(rx_cmpl(0).flags & DMS_RX_F_GEN); // nothing completed
	expect_stopped(DMS_NIC_RXQ_CTRL);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_DROP), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_DMA_ERR), 0u);
	EXPECT_TRUE(host_->traced("rxq0 stopped: buffer descriptor read DMA fault"));
	// Doorbells of a stopped queue are ignored; frames for it are dropped.
	qw(DMS_NIC_RXQ_PBUF_TAIL, 9);
	receive_one();
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_DROP), 1u);
	EXPECT_EQ(qr(DMS_NIC_RXQ_CTRL), DMS_NIC_Q_FAULT); // still reported
	// Restart.
	host_->heal();
	enable_rx();
	expect_cleared(DMS_NIC_RXQ_CTRL);
	receive_one();
	dms_rx_cmpl c = rx_cmpl(0);
	EXPECT_EQ(c.flags & (DMS_RX_F_GEN | DMS_RX_F_ERR | DMS_RX_F_PAY),
		  DMS_RX_F_GEN | DMS_RX_F_PAY);
	EXPECT_EQ(c.pbuf_id, 200u);
}

// Same with the header-buffer ring (header split on, a split frame).
TEST_F(NicFaults, RxHeaderBufferDescriptorFaultStopsTheQueue)
{
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT);
	enable_rx();
	host_->fail_range(kHbufRing, 16);
	receive_one();
	EXPECT_FALSE(rx_cmpl(0).flags & DMS_RX_F_GEN);
	expect_stopped(DMS_NIC_RXQ_CTRL);
}

// (d), RX: the frame's data is written, its completion cannot be: the
// queue stops instead of waiting forever at that slot.
TEST_F(NicFaults, RxCompletionWriteFaultStopsTheQueue)
{
	enable_rx();
	host_->fail_range(kRcmpl, 32);
	receive_one();
	expect_stopped(DMS_NIC_RXQ_CTRL);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_DROP), 0u);
	EXPECT_TRUE(host_->traced("rxq0 stopped: completion write DMA fault"));
	host_->heal();
	enable_rx();
	expect_cleared(DMS_NIC_RXQ_CTRL);
	receive_one();
	EXPECT_EQ(rx_cmpl(0).flags & (DMS_RX_F_GEN | DMS_RX_F_ERR), DMS_RX_F_GEN);
}

// (d), TX: the descriptor cannot be read: nothing is sent, consumed or
// completed, the queue stops. Before v1.3 an ERR completion went out.
TEST_F(NicFaults, TxDescriptorFaultStopsTheQueue)
{
	enable_tx();
	host_->fail_range(kTdesc, 16);
	send_one(7);
	EXPECT_TRUE(host_->sent.empty());
	EXPECT_FALSE(tx_cmpl(0).flags & DMS_TX_C_GEN);
	expect_stopped(DMS_NIC_TXQ_CTRL);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_TX_DMA_ERR), 0u);
	EXPECT_TRUE(host_->traced("txq0 stopped: descriptor read DMA fault"));
	host_->heal();
	enable_tx();
	expect_cleared(DMS_NIC_TXQ_CTRL);
	send_one(8);
	EXPECT_EQ(host_->sent.size(), 1u);
	EXPECT_EQ(tx_cmpl(0).flags, DMS_TX_C_GEN);
	EXPECT_EQ(tx_cmpl(0).tag, 8u);
}

// (d), TX: the frame went out but its completion cannot be written.
TEST_F(NicFaults, TxCompletionWriteFaultStopsTheQueue)
{
	enable_tx();
	host_->fail_range(kTcmpl, 8);
	send_one(7);
	EXPECT_EQ(host_->sent.size(), 1u);
	expect_stopped(DMS_NIC_TXQ_CTRL);
	EXPECT_TRUE(host_->traced("txq0 stopped: completion write DMA fault"));
	// The RX side of the pair is unaffected and reported apart.
	EXPECT_EQ(qr(DMS_NIC_RXQ_CTRL), 0u);
}

// Data faults keep their ERR completions and the queue runs on.
TEST_F(NicFaults, DataFaultsCompleteWithErrAndTheQueueRuns)
{
	enable_rx();
	enable_tx();
	host_->fail_range(kPdata, kPbuf);
	receive_one();
	dms_rx_cmpl c = rx_cmpl(0);
	EXPECT_EQ(c.flags & (DMS_RX_F_GEN | DMS_RX_F_ERR | DMS_RX_F_PAY),
		  DMS_RX_F_GEN | DMS_RX_F_ERR | DMS_RX_F_PAY);
	EXPECT_EQ(c.pbuf_id, 200u); // the id that was read
	host_->fail_range(kTdata, 100);
	send_one(5);
	EXPECT_EQ(tx_cmpl(0).flags, DMS_TX_C_GEN | DMS_TX_C_ERR);
	EXPECT_EQ(qr(DMS_NIC_RXQ_CTRL), DMS_NIC_Q_ENABLE);
	EXPECT_EQ(qr(DMS_NIC_TXQ_CTRL), DMS_NIC_Q_ENABLE);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RING_DMA_ERR), 0u);
	EXPECT_EQ(host_->admin_irqs(), 0u);
}

// The Nth access faulting, whatever it is: every DMA of one split RX frame
// in turn. Ring accesses stop the queue; data accesses complete with ERR
// and the ids that were read.
TEST_F(NicFaults, EveryAccessOfAFrameFaultingInTurn)
{
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT);
	enable_rx();
	host_->accesses = 0;
	receive_one();
	const uint64_t n = host_->accesses;
	ASSERT_GE(n, 5u); // two descriptors, header, payload, completion
	for (uint64_t nth = 1; nth <= n; nth++) {
		SetUp();
		wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT);
		enable_rx();
		host_->fail_nth = nth;
		receive_one();
		const uint64_t at = host_->failed_at;
		ASSERT_NE(at, 0u) << nth;
		const bool ring = at < kRcmpl + (32u << kRingLog2);
		const dms_rx_cmpl c = rx_cmpl(0);
		if (ring) {
			EXPECT_EQ(qr(DMS_NIC_RXQ_CTRL), DMS_NIC_Q_FAULT) << nth;
			EXPECT_EQ(host_->admin_irqs(), 1u) << nth;
			if (at < kRcmpl) {
				EXPECT_FALSE(c.flags & DMS_RX_F_GEN) << nth;
			}
		} else {
			EXPECT_EQ(qr(DMS_NIC_RXQ_CTRL), DMS_NIC_Q_ENABLE) << nth;
			EXPECT_TRUE(c.flags & DMS_RX_F_ERR) << nth;
			EXPECT_EQ(c.hbuf_id, 100u) << nth;
			EXPECT_EQ(c.pbuf_id, 200u) << nth;
		}
	}
}

// Masked, the cause is still latched; unmasking fires vector 0 once. A
// reset clears FAULT like every other queue state.
TEST_F(NicFaults, MaskedCauseAndReset)
{
	wr(DMS_NIC_REG_ADMIN_IRQ_MASK, 0);
	enable_tx();
	host_->fail_range(kTdesc, 16);
	send_one(1);
	EXPECT_EQ(host_->admin_irqs(), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_ADMIN_IRQ_STATUS), DMS_NIC_ADMIN_IRQ_Q_FAULT);
	wr(DMS_NIC_REG_ADMIN_IRQ_MASK, DMS_NIC_ADMIN_IRQ_Q_FAULT);
	run(); // posted by the register write
	EXPECT_EQ(host_->admin_irqs(), 1u);
	wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
	EXPECT_EQ(qr(DMS_NIC_TXQ_CTRL), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_Q_FAULT_LO), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_ADMIN_IRQ_STATUS), 0u);
}

// The admin vector fires for a new cause only: a second queue fault while
// Q_FAULT is still pending, the same mask written again, or the status
// cleared raise nothing; a fault after the driver cleared the cause does.
TEST_F(NicFaults, AdminVectorFiresForNewCausesOnly)
{
	enable_tx();
	host_->fail_range(kTdesc, 0x1000);
	send_one(1);
	ASSERT_EQ(host_->admin_irqs(), 1u);
	// Queue 1 faults too, its descriptor ring beside queue 0's.
	const uint32_t q1 = DMS_NIC_Q_BASE(1);
	wr(q1 + DMS_NIC_TXQ_RING_LOG2, kRingLog2);
	wr(q1 + DMS_NIC_TXQ_DESC_BASE_LO, uint32_t(kTdesc + 0x800));
	wr(q1 + DMS_NIC_TXQ_CMPL_BASE_LO, uint32_t(kTcmpl + 0x800));
	wr(q1 + DMS_NIC_TXQ_CTRL, DMS_NIC_Q_ENABLE);
	wr(q1 + DMS_NIC_TXQ_TAIL, 1);
	run();
	EXPECT_EQ(rd(DMS_NIC_REG_Q_FAULT_LO), 3u);
	EXPECT_EQ(host_->admin_irqs(), 1u);
	wr(DMS_NIC_REG_ADMIN_IRQ_MASK, DMS_NIC_ADMIN_IRQ_Q_FAULT); // as it was
	run();
	EXPECT_EQ(host_->admin_irqs(), 1u);
	// The driver acknowledges, restarts queue 0, and it faults again.
	wr(DMS_NIC_REG_ADMIN_IRQ_STATUS, DMS_NIC_ADMIN_IRQ_Q_FAULT);
	run();
	EXPECT_EQ(host_->admin_irqs(), 1u);
	enable_tx();
	send_one(2);
	EXPECT_EQ(host_->admin_irqs(), 2u);
}
