// SPDX-License-Identifier: MIT
// The NIC's interrupts: the admin vector (link changes, queue faults) and each queue's
// one-shot vector, spaced by ITR_NS.
#include <algorithm>

#include "devmemsim/nic_regs.h"
#include "nic/nic.h"
#include "nic/nic_queue.h"

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

// An admin cause is pending; vector 0 fires if it is unmasked.
void Nic::admin_event(uint32_t cause)
{
	admin_status_ |= cause;
	if ((cause & admin_mask_) && host_.irq)
		host_.irq(0);
}

void Nic::arm(unsigned qi)
{
	Queue &q = *q_[qi];
	q.armed = true;
	if (q.completions_pending())
		signal(qi);
}

void Nic::signal(unsigned qi)
{
	Queue &q = *q_[qi];
	if (!q.armed)
		return; // NAPI is polling; it re-arms when it catches up
	// The gap is never below DMS_NIC_ITR_MIN_GAP_NS: an interrupt whose MSI
	// re-arms the queue cannot fire again at the same time (no storm).
	const uint32_t gap = std::max<uint32_t>(itr_ns_, DMS_NIC_ITR_MIN_GAP_NS);
	sc_core::sc_time due = q.last_irq + sc_core::sc_time(gap, sc_core::SC_NS);
	sc_core::sc_time now = sc_core::sc_time_stamp();
	if (!q.fired || now >= due)
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
	q.fired = true;
	q.last_irq = sc_core::sc_time_stamp();
	trace_("q%u interrupt", qi);
	if (host_.irq)
		host_.irq(qi + 1);
}

} // namespace devmemsim
