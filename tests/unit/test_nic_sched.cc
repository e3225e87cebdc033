// SPDX-License-Identifier: MIT
// The NIC's v1.8 TX scheduler nodes through the C ABI with a fake host: a
// node's rate caps the sum of its queues, weights share it, a queue moves
// between nodes, nested nodes, limits lifted, and the registers' rules.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <vector>

#include "devmemsim/devmemsim.h"
#include "devmemsim/nic_desc.h"
#include "devmemsim/nic_regs.h"
#include "fake_host.h"
#include "nic_suite.h"

namespace
{

constexpr uint64_t kRam = fake_host::kRamBase;
constexpr uint64_t kDesc = kRam, kTcmpl = kRam + 0x1000, kTxData = kRam + 0x10000;
constexpr uint64_t kQueueMem = 0x2000, kQueueData = 0x40000; // per queue
constexpr unsigned kLog2 = 6, kRing = 1u << kLog2, kFrame = 1000;
constexpr unsigned kQueues = 2;

class NicSched : public NicSuite
{
protected:
	void SetUp() override
	{
		wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
		run();
		host_->clear();
		for (unsigned qi = 0; qi < kQueues; qi++)
			enable_tx(qi);
		tail_ = {};
	}
	static void run() { fake_host::run_until_idle(node_, 100000); }
	static void advance(uint64_t ns)
	{
		time_ += ns;
		dms_node_set_time(node_, time_);
		dms_node_step(node_, time_);
	}
	static void qw(unsigned qi, uint32_t off, uint32_t v) { wr(DMS_NIC_Q_BASE(qi) + off, v); }
	static void enable_tx(unsigned qi)
	{
		qw(qi, DMS_NIC_TXQ_RING_LOG2, kLog2);
		qw(qi, DMS_NIC_TXQ_DESC_BASE_LO, uint32_t(kDesc + qi * kQueueMem));
		qw(qi, DMS_NIC_TXQ_CMPL_BASE_LO, uint32_t(kTcmpl + qi * kQueueMem));
		qw(qi, DMS_NIC_TXQ_CTRL, DMS_NIC_Q_ENABLE);
	}
	// Queue qi's node (n + 1, or DMS_NIC_TXS_NONE) and weight.
	static void attach(unsigned qi, uint32_t node, uint32_t weight)
	{
		wr(DMS_NIC_REG_TXS_Q_SEL, qi);
		wr(DMS_NIC_REG_TXS_Q_NODE, node);
		wr(DMS_NIC_REG_TXS_Q_WEIGHT, weight);
	}
	// n frames of kFrame bytes on queue qi, each filled with qi, rung.
	void post(unsigned qi, unsigned n)
	{
		for (unsigned i = 0; i < n; i++) {
			const uint32_t slot = tail_[qi] % kRing;
			const uint64_t data = kTxData + qi * kQueueData + slot * 2048ull;
			std::memset(host_->at(data), int(qi), kFrame);
			dms_tx_desc d{data, kFrame, uint16_t(DMS_TX_F_SOP | DMS_TX_F_EOP),
				      uint16_t(slot)};
			std::memcpy(host_->at(kDesc + qi * kQueueMem + 16 * slot), &d, 16);
			tail_[qi]++;
		}
		qw(qi, DMS_NIC_TXQ_TAIL, tail_[qi] % kRing);
	}
	// n frames on each queue, then ms of simulated time in 100 us steps.
	void send_for(unsigned n, unsigned ms)
	{
		for (unsigned qi = 0; qi < kQueues; qi++)
			post(qi, n);
		advance(0);
		for (unsigned i = 0; i < 10 * ms; i++)
			advance(100'000);
	}
	// Frames sent so far by queue qi.
	static unsigned sent_by(unsigned qi)
	{
		unsigned n = 0;
		for (const auto &f : host_->sent)
			n += f[0] == qi;
		return n;
	}

	inline static uint64_t time_ = 0;
	std::array<uint32_t, kQueues> tail_{};
};

// 2 MB/s on node 0 holds queues 0 and 1 together: after 10 ms the burst
// plus 20000 bytes went, give or take a frame; lifting the node's limit
// lets the rest go at once.
TEST_F(NicSched, NodeRateHoldsTheSumOfItsQueues)
{
	EXPECT_TRUE(rd(DMS_NIC_REG_CAPS) & DMS_NIC_CAP_TX_SCHED_NODES);
	wr(DMS_NIC_REG_TXS_NODE_RATE_KBPS(0), 16000);
	attach(0, 1, 1);
	attach(1, 1, 1);
	send_for(40, 10);
	const size_t n = host_->sent.size();
	EXPECT_GE(n, (DMS_NIC_TX_BURST_MIN + 20000) / kFrame);
	EXPECT_LE(n, (DMS_NIC_TX_BURST_MIN + 20000) / kFrame + 2);
	EXPECT_GT(rd(DMS_NIC_REG_TX_RATE_WAITS), 0u);
	// Equal weights: equal shares.
	EXPECT_LE(std::abs(int(sent_by(0)) - int(sent_by(1))), 1);
	wr(DMS_NIC_REG_TXS_NODE_RATE_KBPS(0), 0);
	run();
	EXPECT_EQ(host_->sent.size(), 80u);
}

// Weights 1 and 3 split a node's 4 MB/s about 1:3 while both are busy.
TEST_F(NicSched, WeightsShareANodesRate)
{
	wr(DMS_NIC_REG_TXS_NODE_RATE_KBPS(2), 32000);
	attach(0, 3, 1);
	attach(1, 3, 3);
	send_for(60, 10);
	const unsigned q0 = sent_by(0), q1 = sent_by(1);
	EXPECT_GE(q0 + q1, 40u);
	EXPECT_LE(q0 + q1, 43u);
	EXPECT_GE(q1, 3 * q0 - 2);
	EXPECT_LE(q1, 3 * q0 + 2);
}

// Queues on no node are one group too: weights 1 and 3 split the
// device's 4 MB/s about 1:3.
TEST_F(NicSched, WeightsShareTheDeviceRateOutsideNodes)
{
	wr(DMS_NIC_REG_TX_RATE_KBPS, 32000);
	attach(0, DMS_NIC_TXS_NONE, 1);
	attach(1, DMS_NIC_TXS_NONE, 3);
	send_for(60, 10);
	const unsigned q0 = sent_by(0), q1 = sent_by(1);
	EXPECT_GE(q0 + q1, 40u);
	EXPECT_GE(q1, 3 * q0 - 2);
	EXPECT_LE(q1, 3 * q0 + 2);
}

// Queue 1 leaves the 1 MB/s node for an unlimited one: it sends all its
// frames at once, queue 0 stays held.
TEST_F(NicSched, QueueMovedBetweenNodes)
{
	wr(DMS_NIC_REG_TXS_NODE_RATE_KBPS(0), 8000);
	attach(0, 1, 1);
	attach(1, 1, 1);
	attach(1, 2, 1);
	wr(DMS_NIC_REG_TXS_Q_SEL, 1);
	EXPECT_EQ(rd(DMS_NIC_REG_TXS_Q_NODE), 2u);
	send_for(40, 10);
	EXPECT_EQ(sent_by(1), 40u);
	EXPECT_GE(sent_by(0), (DMS_NIC_TX_BURST_MIN + 10000) / kFrame);
	EXPECT_LE(sent_by(0), (DMS_NIC_TX_BURST_MIN + 10000) / kFrame + 2);
}

// A node's parent's rate holds the queues of the nodes below it too; with
// every limit off nothing waits.
TEST_F(NicSched, ParentNodeHoldsNestedNodes)
{
	wr(DMS_NIC_REG_TXS_NODE_RATE_KBPS(0), 16000);
	wr(DMS_NIC_REG_TXS_NODE_PARENT(1), 1);
	attach(0, 2, 1);
	attach(1, 1, 0);
	send_for(40, 10);
	const size_t n = host_->sent.size();
	EXPECT_GE(n, (DMS_NIC_TX_BURST_MIN + 20000) / kFrame);
	EXPECT_LE(n, (DMS_NIC_TX_BURST_MIN + 20000) / kFrame + 2);
	wr(DMS_NIC_REG_TXS_NODE_RATE_KBPS(0), 0);
	run();
	EXPECT_EQ(host_->sent.size(), 80u);
}

// A loop of parents is cut: the queues in it still go.
TEST_F(NicSched, ParentLoopIsCut)
{
	wr(DMS_NIC_REG_TXS_NODE_PARENT(0), 2);
	wr(DMS_NIC_REG_TXS_NODE_PARENT(1), 1);
	attach(0, 1, 1);
	attach(1, 2, 1);
	send_for(40, 1);
	EXPECT_EQ(host_->sent.size(), 80u);
}

TEST_F(NicSched, RegistersClampAndResetClears)
{
	EXPECT_EQ(rd(DMS_NIC_REG_TXS_NUM_NODES), unsigned(DMS_NIC_TXS_NODES));
	wr(DMS_NIC_REG_TXS_Q_SEL, 1);
	wr(DMS_NIC_REG_TXS_Q_SEL, 999); // no such queue: ignored
	EXPECT_EQ(rd(DMS_NIC_REG_TXS_Q_SEL), 1u);
	wr(DMS_NIC_REG_TXS_Q_NODE, DMS_NIC_TXS_NODES + 1); // no such node
	EXPECT_EQ(rd(DMS_NIC_REG_TXS_Q_NODE), unsigned(DMS_NIC_TXS_NONE));
	wr(DMS_NIC_REG_TXS_Q_WEIGHT, 1u << 20);
	EXPECT_EQ(rd(DMS_NIC_REG_TXS_Q_WEIGHT), unsigned(DMS_NIC_TXS_WEIGHT_MAX));
	wr(DMS_NIC_REG_TXS_NODE_BURST(7), 100);
	EXPECT_EQ(rd(DMS_NIC_REG_TXS_NODE_BURST(7)), unsigned(DMS_NIC_TX_BURST_MIN));
	wr(DMS_NIC_REG_TXS_NODE_RATE_KBPS(7), 5000);
	wr(DMS_NIC_REG_TXS_NODE_PARENT(7), 3);
	EXPECT_EQ(rd(DMS_NIC_REG_TXS_NODE_PARENT(7)), 3u);
	wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
	run();
	EXPECT_EQ(rd(DMS_NIC_REG_TXS_Q_SEL), 0u);
	wr(DMS_NIC_REG_TXS_Q_SEL, 1);
	EXPECT_EQ(rd(DMS_NIC_REG_TXS_Q_WEIGHT), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_TXS_NODE_RATE_KBPS(7)), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_TXS_NODE_PARENT(7)), unsigned(DMS_NIC_TXS_NONE));
}

} // namespace
