// SPDX-License-Identifier: MIT
// The NIC's TX scheduler nodes (v1.8): token buckets that a group of
// queues (and the nodes nested below) pay into together, and weights that
// share a group's turns among its busy queues by bytes sent.
#include <algorithm>

#include "devmemsim/nic_regs.h"
#include "nic/nic.h"
#include "nic/nic_queue.h"

namespace devmemsim
{

namespace
{

// A queue's service grows by bytes * kServiceScale / weight per frame, so
// weights up to DMS_NIC_TXS_WEIGHT_MAX keep a byte's worth of resolution.
constexpr uint64_t kServiceScale = uint64_t{1} << 16;
// A node's registers: offsets in its block.
constexpr uint32_t kNodeBase = DMS_NIC_REG_TXS_NODE_RATE_KBPS(0);
constexpr uint32_t kNodeStride = DMS_NIC_REG_TXS_NODE_RATE_KBPS(1) - kNodeBase;
constexpr uint32_t kNodeRate = 0;
constexpr uint32_t kNodeBurst = DMS_NIC_REG_TXS_NODE_BURST(0) - kNodeBase;
constexpr uint32_t kNodeParent = DMS_NIC_REG_TXS_NODE_PARENT(0) - kNodeBase;
static_assert(DMS_NIC_REG_TXS_NODE_RATE_KBPS(DMS_NIC_TXS_NODES) == 0x0c00,
	      "the node blocks fill the scheduler's range up to its end");

uint32_t node_ref(uint32_t val)
{
	return val <= DMS_NIC_TXS_NODES ? val : DMS_NIC_TXS_NONE;
}

} // namespace

uint32_t Nic::txs_read(uint32_t off) const
{
	if (off >= kNodeBase) {
		const unsigned n = (off - kNodeBase) / kNodeStride;
		const TxNode &node = txs_nodes_[n];
		switch ((off - kNodeBase) % kNodeStride) {
		case kNodeRate:
			return node.rate.rate();
		case kNodeBurst:
			return node.rate.burst();
		case kNodeParent:
			return node.parent;
		default:
			return DMS_REG_UNDEFINED;
		}
	}
	const Queue &q = *q_[txs_qsel_];
	switch (off) {
	case DMS_NIC_REG_TXS_NUM_NODES:
		return DMS_NIC_TXS_NODES;
	case DMS_NIC_REG_TXS_Q_SEL:
		return txs_qsel_;
	case DMS_NIC_REG_TXS_Q_NODE:
		return q.txs_node;
	case DMS_NIC_REG_TXS_Q_WEIGHT:
		return q.txs_weight;
	default:
		return DMS_REG_UNDEFINED;
	}
}

void Nic::txs_write(uint32_t off, uint32_t val)
{
	if (off >= kNodeBase) {
		const unsigned n = (off - kNodeBase) / kNodeStride;
		txs_node_write(n, (off - kNodeBase) % kNodeStride, val);
		return;
	}
	Queue &q = *q_[txs_qsel_];
	switch (off) {
	case DMS_NIC_REG_TXS_Q_SEL:
		if (val < nq_)
			txs_qsel_ = val;
		break;
	case DMS_NIC_REG_TXS_Q_NODE:
		// A queue that joins a group starts level with it: no credit
		// for the time it spent elsewhere.
		if (node_ref(val) != q.txs_node) {
			q.txs_node = node_ref(val);
			q.txs_service = txs_vtime_[q.txs_node];
		}
		break;
	case DMS_NIC_REG_TXS_Q_WEIGHT:
		q.txs_weight = std::min<uint32_t>(val, DMS_NIC_TXS_WEIGHT_MAX);
		break;
	default:
		return;
	}
	tx_ev_.notify(sc_core::SC_ZERO_TIME);
}

// reg: the register's offset in node n's block.
void Nic::txs_node_write(unsigned n, uint32_t reg, uint32_t val)
{
	TxNode &node = txs_nodes_[n];
	switch (reg) {
	case kNodeRate:
		node.rate.set_rate(val, sc_core::sc_time_stamp().value()); // ps, as nic_ptp.cc
		break;
	case kNodeBurst:
		node.rate.set_burst(val);
		break;
	case kNodeParent:
		node.parent = node_ref(val);
		break;
	default:
		return;
	}
	tx_ev_.notify(sc_core::SC_ZERO_TIME);
}

void Nic::txs_reset()
{
	for (TxNode &node : txs_nodes_) {
		node.rate.reset();
		node.parent = DMS_NIC_TXS_NONE;
	}
	txs_vtime_.fill(0);
	txs_qsel_ = 0;
}

Nic::TxsPath Nic::txs_path(unsigned qi) const
{
	TxsPath path;
	for (uint32_t n = q_[qi]->txs_node; n != DMS_NIC_TXS_NONE && path.len < DMS_NIC_TXS_NODES;
	     n = txs_nodes_[n - 1].parent)
		path.node[path.len++] = static_cast<uint8_t>(n - 1);
	return path;
}

// In each group, the places in ready (sorted by doorbell order) of its
// weighted queues go to those queues least served first, ties in doorbell
// order. A queue that was idle counts as no less served than the one the
// group served last, so idle time earns no credit.
void Nic::txs_order(std::vector<std::pair<uint64_t, unsigned>> &ready)
{
	for (uint32_t g = 0; g <= DMS_NIC_TXS_NODES; g++) {
		txs_at_.clear();
		txs_group_.clear();
		for (unsigned i = 0; i < ready.size(); i++) {
			const Queue &q = *q_[ready[i].second];
			if (q.txs_weight && q.txs_node == g) {
				txs_at_.push_back(i);
				txs_group_.push_back(ready[i]);
			}
		}
		if (txs_at_.size() < 2)
			continue;
		auto served = [&](const std::pair<uint64_t, unsigned> &e) {
			return std::max(q_[e.second]->txs_service, txs_vtime_[g]);
		};
		std::stable_sort(
			txs_group_.begin(), txs_group_.end(),
			[&](const auto &a, const auto &b) { return served(a) < served(b); });
		for (unsigned i = 0; i < txs_at_.size(); i++)
			ready[txs_at_[i]] = txs_group_[i];
	}
}

// A frame of queue qi went: its group's time moves to the queue's, the
// queue's service grows by the frame's bytes over its weight.
void Nic::txs_charge(unsigned qi, size_t bytes)
{
	Queue &q = *q_[qi];
	if (!q.txs_weight)
		return;
	uint64_t &vtime = txs_vtime_[q.txs_node];
	q.txs_service = std::max(q.txs_service, vtime);
	vtime = q.txs_service;
	q.txs_service += bytes * kServiceScale / q.txs_weight;
}

} // namespace devmemsim
