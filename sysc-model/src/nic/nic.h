// SPDX-License-Identifier: MIT
// The header-split NIC: register file (identity for now) and its port on
// the PCIe fabric.
#pragma once

#include <array>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "config.h"
#include "regfile.h"

namespace devmemsim {

class Nic : public sc_core::sc_module, public RegFile {
  public:
	Nic(sc_core::sc_module_name name, const NodeConfig &cfg);

	tlm_utils::simple_initiator_socket<Nic> dma;  // into the fabric
	tlm_utils::simple_target_socket<Nic> bar_mem; // peers: no memory BAR

	unsigned num_queues() const { return queues_; }
	// One MSI-X vector per queue pair plus the admin vector.
	unsigned num_vectors() const { return queues_ + 1; }
	void set_mac(const uint8_t mac[6]);

  protected:
	uint32_t read32(uint32_t off) override;
	void write32(uint32_t off, uint32_t val) override;

  private:
	void no_memory(tlm::tlm_generic_payload &gp, sc_core::sc_time &delay);

	unsigned queues_;
	unsigned node_index_;
	std::array<uint8_t, 6> mac_{};
};

} // namespace devmemsim
