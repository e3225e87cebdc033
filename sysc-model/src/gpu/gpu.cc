// SPDX-License-Identifier: MIT
#include "gpu/gpu.h"

#include "devmemsim/gpu_regs.h"

namespace devmemsim {

Gpu::Gpu(sc_core::sc_module_name name, const NodeConfig &cfg)
	: sc_core::sc_module(name), mem_size_(cfg.gpu_mem_size)
{
}

uint32_t Gpu::read32(uint32_t off)
{
	switch (off) {
	case DMS_GPU_REG_ID:
		return DMS_GPU_ID_MAGIC;
	case DMS_GPU_REG_VERSION:
		return DMS_GPU_VERSION;
	case DMS_GPU_REG_MEM_SIZE_LO:
		return static_cast<uint32_t>(mem_size_);
	case DMS_GPU_REG_MEM_SIZE_HI:
		return static_cast<uint32_t>(mem_size_ >> 32);
	default:
		return DMS_REG_UNDEFINED;
	}
}

void Gpu::write32(uint32_t, uint32_t)
{
	// Every register defined so far is read only.
}

} // namespace devmemsim
