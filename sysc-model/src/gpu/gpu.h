// SPDX-License-Identifier: MIT
// The GPU-like device: register file (identity for now) and memory size.
#pragma once

#include <systemc>

#include "config.h"
#include "regfile.h"

namespace devmemsim {

class Gpu : public sc_core::sc_module, public RegFile {
  public:
	Gpu(sc_core::sc_module_name name, const NodeConfig &cfg);

	uint64_t mem_size() const { return mem_size_; }
	// MSI-X vectors: one, for engine completions and errors.
	unsigned num_vectors() const { return 1; }

  protected:
	uint32_t read32(uint32_t off) override;
	void write32(uint32_t off, uint32_t val) override;

  private:
	uint64_t mem_size_;
};

} // namespace devmemsim
