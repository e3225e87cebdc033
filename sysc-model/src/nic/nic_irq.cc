// SPDX-License-Identifier: MIT
// The NIC's interrupts: the admin vector (link changes) and each queue's
// one-shot vector, spaced by ITR_NS.
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
	admin_mask_ = val & DMS_NIC_ADMIN_IRQ_LINK;
	if ((admin_status_ & admin_mask_) && host_.irq)
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

} // namespace devmemsim
