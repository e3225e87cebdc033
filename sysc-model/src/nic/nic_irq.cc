// SPDX-License-Identifier: MIT
// The NIC's interrupts: the admin vector (link changes, queue faults) and each queue's
// one-shot vector, spaced by ITR_NS and the queue's moderation registers. A
// vector fires for a new cause only (devmemsim.h, "Interrupts"): a status
// bit set while unmasked, a mask write that unmasks a pending bit, a
// completion or an arm that finds the queue armed with completions pending.
#include <algorithm>

#include "devmemsim/nic_regs.h"
#include "nic/nic.h"
#include "nic/nic_queue.h"
#include "sim/kernel.h"

namespace devmemsim
{

void Nic::admin_write(uint32_t off, uint32_t val)
{
	if (off == DMS_NIC_REG_ADMIN_IRQ_STATUS) {
		admin_status_ &= ~val;
		return;
	}
	// Only newly unmasked pending events fire: rewriting the same mask (an
	// MSI aimed at this register) does not fire again.
	const uint32_t causes = DMS_NIC_ADMIN_IRQ_LINK | DMS_NIC_ADMIN_IRQ_Q_FAULT;
	const uint32_t unmasked = val & causes & ~admin_mask_;
	admin_mask_ = val & causes;
	if ((admin_status_ & unmasked) && host_.irq)
		host_.irq(0);
}

// An admin cause is pending; vector 0 fires if that is new (its status bit
// was clear) and unmasked. Another event of a cause still pending adds
// nothing: the driver clears the bit, then reads the link and Q_FAULT.
void Nic::admin_event(uint32_t cause)
{
	const uint32_t fresh = cause & ~admin_status_;
	admin_status_ |= cause;
	if ((fresh & admin_mask_) && host_.irq)
		host_.irq(0);
}

void Nic::arm(unsigned qi)
{
	Queue &q = *q_[qi];
	q.armed = true;
	if (q.completions_pending())
		signal(qi);
}

// When the queue's armed vector may fire: for each kind of completion
// pending, its moderation time after the kind's first completion pending
// while armed (at once when its frame count is pending), the earliest kind
// wins; never before ITR_NS, nor DMS_NIC_ITR_MIN_GAP_NS, since the last
// interrupt (an interrupt whose MSI re-arms the queue cannot fire again at
// the same time). SC_ZERO_TIME if nothing is pending.
// The time interrupt decisions are made at: the model's, or in a register
// write the host's time of the write (the model's lags while it idles), so
// that an interrupt an arm raises keeps its minimum gap in the host's time
// too, where its posted message lands (devmemsim.h, "Interrupts").
sc_core::sc_time Nic::irq_now() const
{
	const sc_core::sc_time model = sc_core::sc_time_stamp();
	if (!in_write_)
		return model;
	return std::max(model,
			sc_core::sc_time(static_cast<double>(sim::device_ns()), sc_core::SC_NS));
}

sc_core::sc_time Nic::irq_due(Queue &q)
{
	const sc_core::sc_time now = irq_now();
	const sc_core::sc_time floor =
		q.last_irq + sc_core::sc_time(std::max<uint32_t>(itr_ns_, DMS_NIC_ITR_MIN_GAP_NS),
					      sc_core::SC_NS);
	const std::array<uint32_t, 2> pending = q.pending();
	sc_core::sc_time due = sc_core::SC_ZERO_TIME;
	for (unsigned k = 0; k < 2; k++) {
		if (!pending[k]) {
			q.waiting[k] = false;
			continue;
		}
		if (!q.waiting[k]) {
			q.waiting[k] = true;
			q.wait_from[k] = now;
		}
		sc_core::sc_time at = floor;
		if (!q.itr_frames[k] || pending[k] < q.itr_frames[k])
			at = std::max(at, q.wait_from[k] +
						  sc_core::sc_time(q.itr_ns[k], sc_core::SC_NS));
		if (due == sc_core::SC_ZERO_TIME || at < due)
			due = at;
	}
	return due;
}

void Nic::signal(unsigned qi)
{
	Queue &q = *q_[qi];
	if (!q.armed)
		return; // NAPI is polling; it re-arms when it catches up
	const sc_core::sc_time due = irq_due(q);
	if (!q.fired)
		return irq_method(qi);
	if (due == sc_core::SC_ZERO_TIME)
		return; // the driver already consumed what was written
	if (irq_now() >= due)
		irq_method(qi);
	else // an earlier pending notification wins
		q.irq_ev.notify(due - sc_core::sc_time_stamp());
}

void Nic::irq_method(unsigned qi)
{
	Queue &q = *q_[qi];
	if (!q.armed)
		return;
	q.armed = false;
	q.fired = true;
	q.waiting = {};
	q.last_irq = irq_now();
	trace_("q%u interrupt", qi);
	if (host_.irq)
		host_.irq(qi + 1);
}

} // namespace devmemsim
