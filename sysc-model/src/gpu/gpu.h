// SPDX-License-Identifier: MIT
// The GPU-like device: registers, device memory (BAR2), a copy engine that
// moves data between device memory and host memory through the PCIe
// fabric, and a CRC32C engine over device memory.
#pragma once

#include <cstdint>
#include <functional>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "config.h"
#include "regfile.h"

namespace devmemsim
{

struct GpuCounters {
	uint64_t copy_jobs = 0;
	uint64_t copy_to_host_bytes = 0;
	uint64_t copy_to_dev_bytes = 0;
	uint64_t crc_jobs = 0;
	uint64_t crc_bytes = 0;
	uint64_t p2p_in_bytes = 0;  // peers' writes into device memory
	uint64_t p2p_out_bytes = 0; // peers' reads from device memory
	uint64_t errors = 0;
};

class Gpu : public sc_core::sc_module, public RegFile
{
public:
	Gpu(sc_core::sc_module_name name, const NodeConfig &cfg);

	tlm_utils::simple_initiator_socket<Gpu> dma;  // into the fabric
	tlm_utils::simple_target_socket<Gpu> bar_mem; // peers into BAR2

	uint64_t mem_size() const { return mem_size_; }
	unsigned num_vectors() const { return 1; }
	// Device memory: host RAM shared with QEMU (the BAR2 region).
	void set_memory(uint8_t *mem) { mem_ = mem; }
	void set_irq(std::function<void(unsigned)> fn) { irq_ = std::move(fn); }
	const GpuCounters &counters() const { return c_; }
	void reset_counters() { c_ = GpuCounters{}; }

protected:
	uint32_t read32(uint32_t off) override;
	void write32(uint32_t off, uint32_t val) override;

private:
	struct Engine {
		uint64_t dev = 0, host = 0, len = 0; // host: the CRC engine's gather list
		uint32_t ctrl = 0, status = 0, seed = 0, result = 0;
		uint32_t count = 0; // CRC gather-list entries; 0 = one range
		uint64_t done_bytes = 0;
		sc_core::sc_event go;
	};
	void copy_thread();
	void crc_thread();
	// One burst (at most kBurst bytes) to or from a host bus address through
	// the fabric; false if the address is not reachable.
	bool host_dma(tlm::tlm_command cmd, uint64_t addr, uint8_t *data, uint64_t n,
		      sc_core::sc_time &delay);
	// CRC over the gather list; returns the job's error code.
	unsigned crc_gather(Engine &e);
	// Accept a doorbell: false (and BUSY error) if the engine runs.
	bool ring(Engine &e);
	void finish(Engine &e, unsigned irq_bit, unsigned err);
	void update_irq();
	void mem_transport(tlm::tlm_generic_payload &gp, sc_core::sc_time &delay);
	bool dev_range_ok(uint64_t off, uint64_t len) const;

	uint64_t mem_size_;
	uint8_t *mem_ = nullptr;
	bool timed_;
	std::function<void(unsigned)> irq_;
	uint32_t irq_status_ = 0, irq_mask_ = 0;
	Engine copy_, crc_;
	GpuCounters c_;
};

} // namespace devmemsim
