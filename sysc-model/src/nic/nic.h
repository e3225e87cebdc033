// SPDX-License-Identifier: MIT
// The header-split NIC: register file (identity for now).
#pragma once

#include <array>
#include <systemc>

#include "config.h"
#include "regfile.h"

namespace devmemsim {

class Nic : public sc_core::sc_module, public RegFile {
  public:
	Nic(sc_core::sc_module_name name, const NodeConfig &cfg);

	unsigned num_queues() const { return queues_; }
	// One MSI-X vector per queue pair plus the admin vector.
	unsigned num_vectors() const { return queues_ + 1; }
	void set_mac(const uint8_t mac[6]);

  protected:
	uint32_t read32(uint32_t off) override;
	void write32(uint32_t off, uint32_t val) override;

  private:
	unsigned queues_;
	unsigned node_index_;
	std::array<uint8_t, 6> mac_{};
};

} // namespace devmemsim
