// SPDX-License-Identifier: MIT
// The GPU-like device: registers, device memory (BAR2), a copy engine that
// moves data between device memory and host memory through the PCIe
// fabric, and a CRC32C engine over device memory.
//
// Each engine is a thread that takes one job per accepted doorbell. A job
// works in bursts of at most kBurst bytes and yields to the kernel after
// every burst (timed mode: for the burst's time; functional mode: for a
// delta cycle), so the host's step budget cuts even a job over all device
// memory into many steps. Every job, failed ones included, completes no
// earlier than kJobLatencyNs after its doorbell, so a completion interrupt
// that rings the doorbell again advances simulated time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "config.h"
#include "regfile.h"
#include "trace.h"

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
	uint64_t aborted_jobs = 0; // stopped by a reset or a detach
};

class Gpu : public sc_core::sc_module, public RegFile
{
public:
	// The engines' unit of work between yields: one CRC chunk, one copy
	// burst.
	static constexpr uint64_t kBurst = 64 * 1024;
	// Timed mode: the copy engine's DMA requests are kDmaChunk bytes with
	// at most kDmaWindow of them in flight (datasheet), so its traffic
	// interleaves with other masters' on shared links; a burst booked as
	// one transfer held a link direction for all of it.
	static constexpr uint64_t kDmaChunk = 4 * 1024;
	static constexpr unsigned kDmaWindow = 4;
	// Doorbell-to-completion time of the shortest job (datasheet).
	static constexpr uint64_t kJobLatencyNs = 1000;

	Gpu(sc_core::sc_module_name name, const NodeConfig &cfg);

	tlm_utils::simple_initiator_socket<Gpu> dma;  // into the fabric
	tlm_utils::simple_target_socket<Gpu> bar_mem; // peers into BAR2

	uint64_t mem_size() const { return mem_size_; }
	unsigned num_vectors() const { return 1; }
	// Device memory: host RAM shared with QEMU (the BAR2 region). NULL
	// detaches it: jobs and peers touching it then fail.
	void set_memory(uint8_t *mem) { mem_ = mem; }
	void set_irq(std::function<void(unsigned)> fn) { irq_ = std::move(fn); }
	// Fault injection: asked as a job would succeed; true fails it.
	void set_engine_fault(std::function<bool()> fn) { engine_fault_ = std::move(fn); }
	// Fault injection, a device that lies: asked as a job starts (can_skip:
	// it is a copy job), returns 0 to tell the truth, kLieSkip to report
	// success without running the job, or an undefined error code (above
	// DMS_GPU_ERR_ENGINE, below 256) to report instead of the job's end.
	static constexpr unsigned kLieSkip = 0x100;
	void set_status_lie(std::function<unsigned(bool can_skip)> fn)
	{
		status_lie_ = std::move(fn);
	}
	void set_trace(const TraceSink *sink) { trace_.attach(sink); }
	// Function-level reset: running and posted jobs stop without
	// completing, every register returns to its reset value.
	void reset();
	const GpuCounters &counters() const { return c_; }
	void reset_counters() { c_ = GpuCounters{}; }
	// Counters as one JSON object (the "gpu" member in docs/stats.md).
	std::string stats_json() const;

protected:
	uint32_t read32(uint32_t off) override;
	void write32(uint32_t off, uint32_t val) override;

private:
	// An engine's registers (their reset value is all zero).
	struct Regs {
		uint64_t dev = 0, host = 0, len = 0; // host: the CRC engine's gather list
		uint32_t ctrl = 0, status = 0, seed = 0, result = 0;
		uint32_t count = 0; // CRC gather-list entries; 0 = one range
		uint64_t done_bytes = 0;
	};
	// A job: the registers latched at its doorbell.
	struct Job {
		Regs r;
		uint64_t generation = 0;
	};
	struct Engine {
		explicit Engine(const char *n) : name(n) {}
		const char *name;
		Regs r;
		Job job;		 // posted by the doorbell
		bool posted = false;	 // job waits for the engine thread
		uint64_t generation = 0; // a reset bumps it: older jobs stop
		sc_core::sc_event go, abort;
	};

	void copy_thread();
	void crc_thread();
	// Wait for the engine's next posted job.
	Job next_job(Engine &e);
	// Yield for t (zero: a delta cycle); false if a reset aborted the job.
	bool pause(Engine &e, const Job &job, const sc_core::sc_time &t);
	// Job bodies: the job's error code, or kAborted.
	unsigned run_copy(Engine &e, const Job &job);
	unsigned copy_burst_timed(Engine &e, const Job &job, bool to_dev, uint64_t host,
				  uint8_t *buf, uint64_t len);
	unsigned run_crc(Engine &e, const Job &job);
	unsigned crc_gather(Engine &e, const Job &job);
	unsigned crc_range(Engine &e, const Job &job, uint64_t dev, uint64_t len, uint32_t &crc);
	// Accept a doorbell: false (and BUSY error) if the engine runs.
	bool ring(Engine &e);
	// End a job: after the minimum latency, set status and interrupt.
	// lie: what status_lie_ said when the job started.
	void complete(Engine &e, const Job &job, const sc_core::sc_time &start, unsigned irq_bit,
		      unsigned err, unsigned lie);
	unsigned ask_lie(bool can_skip) { return status_lie_ ? status_lie_(can_skip) : 0; }
	// Error err in the engine's status, counted; the caller raises.
	void engine_error(Engine &e, unsigned err);
	// IRQ_STATUS bits set by an event; IRQ_MASK written; the vector fired
	// if causes is not 0.
	void raise(uint32_t bits);
	void unmask(uint32_t mask);
	void fire(uint32_t causes);
	void mem_transport(tlm::tlm_generic_payload &gp, sc_core::sc_time &delay);
	bool dev_range_ok(uint64_t off, uint64_t len) const;

	uint64_t mem_size_;
	uint8_t *mem_ = nullptr;
	bool timed_;
	std::function<void(unsigned)> irq_;
	std::function<bool()> engine_fault_;
	std::function<unsigned(bool)> status_lie_;
	Tracer trace_;
	uint32_t irq_status_ = 0, irq_mask_ = 0;
	Engine copy_{"copy"}, crc_{"crc"};
	std::vector<uint8_t> copy_buf_;
	GpuCounters c_;
};

} // namespace devmemsim
