// SPDX-License-Identifier: MIT
#include "nic/nic.h"

#include "devmemsim/nic_regs.h"

namespace devmemsim {

Nic::Nic(sc_core::sc_module_name name, const NodeConfig &cfg)
	: sc_core::sc_module(name), dma("dma"), bar_mem("bar_mem"),
	  queues_(cfg.nic_queues), node_index_(cfg.index)
{
	bar_mem.register_b_transport(this, &Nic::no_memory);
}

void Nic::no_memory(tlm::tlm_generic_payload &gp, sc_core::sc_time &)
{
	gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

void Nic::set_mac(const uint8_t mac[6])
{
	for (size_t i = 0; i < mac_.size(); i++)
		mac_[i] = mac[i];
}

uint32_t Nic::read32(uint32_t off)
{
	switch (off) {
	case DMS_NIC_REG_ID:
		return DMS_NIC_ID_MAGIC;
	case DMS_NIC_REG_VERSION:
		return DMS_NIC_VERSION;
	case DMS_NIC_REG_NUM_QUEUES:
		return queues_;
	case DMS_NIC_REG_MAC_LO:
		return mac_[0] | mac_[1] << 8 | mac_[2] << 16 |
		       static_cast<uint32_t>(mac_[3]) << 24;
	case DMS_NIC_REG_MAC_HI:
		return mac_[4] | mac_[5] << 8;
	case DMS_NIC_REG_NODE_INDEX:
		return node_index_;
	default:
		return DMS_REG_UNDEFINED;
	}
}

void Nic::write32(uint32_t, uint32_t)
{
	// Every register defined so far is read only.
}

} // namespace devmemsim
