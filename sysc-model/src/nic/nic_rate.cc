// SPDX-License-Identifier: MIT
// The NIC's TX rate limits (v1.6): the device's token bucket
// (TX_RATE_KBPS, TX_BURST, TX_RATE_WAITS) and each queue's
// (TXQ_RATE_KBPS, TXQ_BURST); with the scheduler nodes' buckets
// (nic_sched.cc) they decide when a frame may leave.
#include <algorithm>

#include "devmemsim/nic_regs.h"
#include "nic/nic.h"
#include "nic/nic_queue.h"

namespace devmemsim
{

namespace
{

// Token buckets count in picoseconds: SystemC's default resolution, so
// a time's value is exact.
uint64_t ps_of(const sc_core::sc_time &t)
{
	return t.value();
}

} // namespace

bool Nic::rate_read(uint32_t off, uint32_t *val) const
{
	switch (off) {
	case DMS_NIC_REG_TX_RATE_KBPS:
		*val = tx_rate_.rate();
		return true;
	case DMS_NIC_REG_TX_BURST:
		*val = tx_rate_.burst();
		return true;
	case DMS_NIC_REG_TX_RATE_WAITS:
		*val = static_cast<uint32_t>(c_.tx_rate_waits);
		return true;
	default:
		return false;
	}
}

bool Nic::rate_write(uint32_t off, uint32_t val)
{
	switch (off) {
	case DMS_NIC_REG_TX_RATE_KBPS:
		tx_rate_.set_rate(val, ps_of(sc_core::sc_time_stamp()));
		tx_ev_.notify(sc_core::SC_ZERO_TIME); // a queue may wait for it
		return true;
	case DMS_NIC_REG_TX_BURST:
		tx_rate_.set_burst(val);
		return true;
	default:
		return false;
	}
}

uint32_t Nic::queue_rate_read(const Queue &q, uint32_t off) const
{
	if (off == DMS_NIC_TXQ_RATE_KBPS)
		return q.tx_rate.rate();
	if (off == DMS_NIC_TXQ_BURST)
		return q.tx_rate.burst();
	return DMS_REG_UNDEFINED;
}

void Nic::queue_rate_write(Queue &q, uint32_t off, uint32_t val)
{
	if (off == DMS_NIC_TXQ_RATE_KBPS) {
		q.tx_rate.set_rate(val, ps_of(sc_core::sc_time_stamp()));
		tx_ev_.notify(sc_core::SC_ZERO_TIME);
	} else if (off == DMS_NIC_TXQ_BURST) {
		q.tx_rate.set_burst(val);
	}
}

// The queue's bucket, its scheduler nodes' (v1.8) and the device's.
bool Nic::tx_rate_ready(unsigned qi, sc_core::sc_time *due)
{
	const uint64_t now = ps_of(sc_core::sc_time_stamp());
	uint64_t latest = now;
	bool ok = true;
	auto check = [&](TokenBucket &b) {
		uint64_t at = now;
		if (!b.ready(now, &at)) {
			ok = false;
			latest = std::max(latest, at);
		}
	};
	check(q_[qi]->tx_rate);
	const TxsPath path = txs_path(qi);
	for (unsigned i = 0; i < path.len; i++)
		check(txs_nodes_[path.node[i]].rate);
	check(tx_rate_);
	if (!ok)
		*due = sc_core::sc_time::from_value(latest);
	return ok;
}

void Nic::tx_rate_take(unsigned qi, size_t bytes)
{
	const uint64_t now = ps_of(sc_core::sc_time_stamp());
	q_[qi]->tx_rate.take(now, bytes);
	const TxsPath path = txs_path(qi);
	for (unsigned i = 0; i < path.len; i++)
		txs_nodes_[path.node[i]].rate.take(now, bytes);
	tx_rate_.take(now, bytes);
	txs_charge(qi, bytes);
}

} // namespace devmemsim
