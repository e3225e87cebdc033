// SPDX-License-Identifier: MIT
#include "gpu/gpu.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "bus_dma.h"
#include "devmemsim/devmemsim.h"
#include "devmemsim/gpu_regs.h"
#include "gpu/crc32c.h"
#include "sim/kernel.h"

namespace devmemsim
{

namespace
{

// CRC engine throughput in timed mode: 32 bytes per 1 GHz cycle.
constexpr double kCrcBytesPerNs = 32.0;
// A job body's result when a reset stopped it: no completion at all.
constexpr unsigned kAborted = 0x100;

constexpr uint32_t kIrqBits = DMS_GPU_IRQ_COPY_DONE | DMS_GPU_IRQ_CRC_DONE | DMS_GPU_IRQ_ERROR;

} // namespace

Gpu::Gpu(sc_core::sc_module_name name, const NodeConfig &cfg)
    : sc_core::sc_module(name), dma("dma"), bar_mem("bar_mem"), mem_size_(cfg.gpu_mem_size),
      timed_(cfg.mode == Mode::Timed), trace_(DMS_DEV_GPU), copy_buf_(kBurst)
{
	bar_mem.register_b_transport(this, &Gpu::mem_transport);
	SC_HAS_PROCESS(Gpu);
	SC_THREAD(copy_thread);
	SC_THREAD(crc_thread);
}

bool Gpu::dev_range_ok(uint64_t off, uint64_t len) const
{
	return mem_ && off <= mem_size_ && len <= mem_size_ - off;
}

void Gpu::reset()
{
	for (Engine *e : {&copy_, &crc_}) {
		if (e->r.status & DMS_GPU_STATUS_BUSY)
			c_.aborted_jobs++;
		e->generation++;
		e->posted = false;
		e->r = Regs{};
		e->abort.notify(sc_core::SC_ZERO_TIME);
	}
	irq_status_ = 0;
	irq_mask_ = 0;
	trace_("reset: engines stopped, registers cleared");
}

uint32_t Gpu::read32(uint32_t off)
{
	switch (off) {
	case DMS_GPU_REG_ID:
		return DMS_GPU_ID_MAGIC;
	case DMS_GPU_REG_VERSION:
		return DMS_GPU_VERSION;
	case DMS_GPU_REG_MEM_SIZE_LO:
		return lo32(mem_size_);
	case DMS_GPU_REG_MEM_SIZE_HI:
		return hi32(mem_size_);
	case DMS_GPU_REG_IRQ_STATUS:
		return irq_status_;
	case DMS_GPU_REG_IRQ_MASK:
		return irq_mask_;
	case DMS_GPU_REG_COPY_DEV_LO:
		return lo32(copy_.r.dev);
	case DMS_GPU_REG_COPY_DEV_HI:
		return hi32(copy_.r.dev);
	case DMS_GPU_REG_COPY_HOST_LO:
		return lo32(copy_.r.host);
	case DMS_GPU_REG_COPY_HOST_HI:
		return hi32(copy_.r.host);
	case DMS_GPU_REG_COPY_LEN_LO:
		return lo32(copy_.r.len);
	case DMS_GPU_REG_COPY_LEN_HI:
		return hi32(copy_.r.len);
	case DMS_GPU_REG_COPY_CTRL:
		return copy_.r.ctrl;
	case DMS_GPU_REG_COPY_STATUS:
		return copy_.r.status;
	case DMS_GPU_REG_COPY_DONE_BYTES_LO:
		return lo32(copy_.r.done_bytes);
	case DMS_GPU_REG_COPY_DONE_BYTES_HI:
		return hi32(copy_.r.done_bytes);
	case DMS_GPU_REG_CRC_DEV_LO:
		return lo32(crc_.r.dev);
	case DMS_GPU_REG_CRC_DEV_HI:
		return hi32(crc_.r.dev);
	case DMS_GPU_REG_CRC_LEN_LO:
		return lo32(crc_.r.len);
	case DMS_GPU_REG_CRC_LEN_HI:
		return hi32(crc_.r.len);
	case DMS_GPU_REG_CRC_SEED:
		return crc_.r.seed;
	case DMS_GPU_REG_CRC_STATUS:
		return crc_.r.status;
	case DMS_GPU_REG_CRC_RESULT:
		return crc_.r.result;
	case DMS_GPU_REG_CRC_LIST_LO:
		return lo32(crc_.r.host);
	case DMS_GPU_REG_CRC_LIST_HI:
		return hi32(crc_.r.host);
	case DMS_GPU_REG_CRC_LIST_COUNT:
		return crc_.r.count;
	default:
		return DMS_REG_UNDEFINED;
	}
}

void Gpu::write32(uint32_t off, uint32_t val)
{
	// Job registers are latched at the doorbell; writing them while an
	// engine runs does not change the running job.
	switch (off) {
	case DMS_GPU_REG_IRQ_STATUS:
		irq_status_ &= ~val; // clearing raises nothing
		break;
	case DMS_GPU_REG_IRQ_MASK:
		unmask(val & kIrqBits);
		break;
	case DMS_GPU_REG_COPY_DEV_LO:
		set_lo(copy_.r.dev, val);
		break;
	case DMS_GPU_REG_COPY_DEV_HI:
		set_hi(copy_.r.dev, val);
		break;
	case DMS_GPU_REG_COPY_HOST_LO:
		set_lo(copy_.r.host, val);
		break;
	case DMS_GPU_REG_COPY_HOST_HI:
		set_hi(copy_.r.host, val);
		break;
	case DMS_GPU_REG_COPY_LEN_LO:
		set_lo(copy_.r.len, val);
		break;
	case DMS_GPU_REG_COPY_LEN_HI:
		set_hi(copy_.r.len, val);
		break;
	case DMS_GPU_REG_COPY_CTRL:
		copy_.r.ctrl = val & DMS_GPU_COPY_TO_DEV;
		break;
	case DMS_GPU_REG_COPY_DOORBELL:
		ring(copy_);
		break;
	case DMS_GPU_REG_CRC_DEV_LO:
		set_lo(crc_.r.dev, val);
		break;
	case DMS_GPU_REG_CRC_DEV_HI:
		set_hi(crc_.r.dev, val);
		break;
	case DMS_GPU_REG_CRC_LEN_LO:
		set_lo(crc_.r.len, val);
		break;
	case DMS_GPU_REG_CRC_LEN_HI:
		set_hi(crc_.r.len, val);
		break;
	case DMS_GPU_REG_CRC_SEED:
		crc_.r.seed = val;
		break;
	case DMS_GPU_REG_CRC_LIST_LO:
		set_lo(crc_.r.host, val);
		break;
	case DMS_GPU_REG_CRC_LIST_HI:
		set_hi(crc_.r.host, val);
		break;
	case DMS_GPU_REG_CRC_LIST_COUNT:
		crc_.r.count = val;
		break;
	case DMS_GPU_REG_CRC_DOORBELL:
		ring(crc_);
		break;
	default:
		break;
	}
}

bool Gpu::ring(Engine &e)
{
	if (e.r.status & DMS_GPU_STATUS_BUSY) {
		// The running job goes on; the refused doorbell is reported.
		trace_("%s doorbell refused: engine busy", e.name);
		engine_error(e, DMS_GPU_ERR_BUSY);
		raise(DMS_GPU_IRQ_ERROR);
		return false;
	}
	e.r.status = DMS_GPU_STATUS_BUSY;
	e.r.done_bytes = 0;
	e.job = Job{e.r, e.generation};
	e.posted = true;
	e.go.notify(sc_core::SC_ZERO_TIME);
	trace_("%s doorbell: dev 0x%llx host 0x%llx len 0x%llx ctrl 0x%x count %u", e.name,
	       static_cast<unsigned long long>(e.r.dev), static_cast<unsigned long long>(e.r.host),
	       static_cast<unsigned long long>(e.r.len), e.r.ctrl, e.r.count);
	return true;
}

void Gpu::engine_error(Engine &e, unsigned err)
{
	e.r.status |= DMS_GPU_STATUS_ERROR | err << DMS_GPU_STATUS_ERR_SHIFT;
	c_.errors++;
}

Gpu::Job Gpu::next_job(Engine &e)
{
	while (!e.posted)
		sc_core::wait(e.go);
	e.posted = false;
	return e.job;
}

bool Gpu::pause(Engine &e, const Job &job, const sc_core::sc_time &t)
{
	if (t == sc_core::SC_ZERO_TIME)
		sc_core::wait(sc_core::SC_ZERO_TIME);
	else
		sc_core::wait(t, e.abort);
	return job.generation == e.generation;
}

void Gpu::complete(Engine &e, const Job &job, const sc_core::sc_time &start, unsigned irq_bit,
		   unsigned err, unsigned lie)
{
	const sc_core::sc_time earliest =
		start + sc_core::sc_time(static_cast<double>(kJobLatencyNs), sc_core::SC_NS);
	if (err != kAborted && sc_core::sc_time_stamp() < earliest &&
	    !pause(e, job, earliest - sc_core::sc_time_stamp()))
		err = kAborted;
	if (err == kAborted) {
		trace_("%s job aborted by reset", e.name);
		return;
	}
	if (!err && !lie && engine_fault_ && engine_fault_())
		err = DMS_GPU_ERR_ENGINE; // fault injection (node/faults.h)
	if (lie && lie != kLieSkip) {
		// A device that lies: the job ran, its status names no real end.
		trace_("%s job status lies: error %u instead of %u", e.name, lie, err);
		err = lie;
	}
	e.r.status = DMS_GPU_STATUS_DONE;
	trace_("%s job done: %llu bytes, error %u", e.name,
	       static_cast<unsigned long long>(e.r.done_bytes), err);
	if (err)
		engine_error(e, err);
	raise(irq_bit | (err ? DMS_GPU_IRQ_ERROR : 0u));
}

// Interrupts fire on a new cause only (devmemsim.h, "Interrupts"): a bit
// that becomes pending while unmasked, or a mask write that unmasks a
// pending bit. A write that changes nothing (the same mask again, an MSI
// aimed at IRQ_MASK) raises nothing, nor does an event whose bit is still
// pending: the driver clears the bits it handles before it looks at the
// engines, so it sees that event too.
void Gpu::raise(uint32_t bits)
{
	const uint32_t fresh = bits & ~irq_status_;
	irq_status_ |= bits;
	fire(fresh & irq_mask_);
}

void Gpu::unmask(uint32_t mask)
{
	const uint32_t unmasked = mask & ~irq_mask_;
	irq_mask_ = mask;
	fire(unmasked & irq_status_);
}

void Gpu::fire(uint32_t causes)
{
	if (causes && irq_) {
		trace_("irq: status 0x%x mask 0x%x", irq_status_, irq_mask_);
		irq_(0);
	}
}

void Gpu::copy_thread()
{
	for (;;) {
		const Job job = next_job(copy_);
		const sc_core::sc_time start = sc_core::sc_time_stamp();
		c_.copy_jobs++;
		const unsigned lie = ask_lie(true);
		if (lie == kLieSkip)
			trace_("copy job status lies: done, not run");
		const unsigned err = lie == kLieSkip ? DMS_GPU_ERR_NONE : run_copy(copy_, job);
		complete(copy_, job, start, DMS_GPU_IRQ_COPY_DONE, err, lie);
	}
}

// Moves one burst of a copy job in kDmaChunk transfers, at most kDmaWindow
// in flight: a chunk is issued once the chunk kDmaWindow before it is done,
// and the burst ends when its last chunk is. DMA faults give the job's
// error; a reset or detach while waiting gives kAborted.
unsigned Gpu::copy_burst_timed(Engine &e, const Job &job, bool to_dev, uint64_t host, uint8_t *buf,
			       uint64_t len)
{
	sc_core::sc_time done_at[kDmaWindow];
	sc_core::sc_time last = sc_core::sc_time_stamp();
	for (uint64_t off = 0, i = 0; off < len; ++i) {
		const uint64_t n = std::min(kDmaChunk, len - off);
		sc_core::sc_time &slot = done_at[i % kDmaWindow];
		const sc_core::sc_time now = sc_core::sc_time_stamp();
		if (slot > now && !pause(e, job, slot - now))
			return kAborted;
		sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
		if (!bus_dma(dma, !to_dev, host + off, buf + off, n, delay)) {
			trace_("copy DMA fault at host 0x%llx",
			       static_cast<unsigned long long>(host + off));
			return DMS_GPU_ERR_HOST_DMA;
		}
		slot = sc_core::sc_time_stamp() + delay;
		last = std::max(last, slot);
		off += n;
	}
	const sc_core::sc_time now = sc_core::sc_time_stamp();
	return last > now && !pause(e, job, last - now) ? kAborted : DMS_GPU_ERR_NONE;
}

unsigned Gpu::run_copy(Engine &e, const Job &job)
{
	const Regs &r = job.r;
	const bool to_dev = r.ctrl & DMS_GPU_COPY_TO_DEV;
	if (!r.len)
		return DMS_GPU_ERR_BAD_LEN;
	if (!dev_range_ok(r.dev, r.len))
		return DMS_GPU_ERR_DEV_RANGE;
	if (r.host + r.len < r.host)
		return DMS_GPU_ERR_HOST_DMA;
	uint8_t *buf = copy_buf_.data();
	for (uint64_t done = 0; done < r.len;) {
		const uint64_t n = std::min(kBurst, r.len - done);
		// Checked per burst: a detach takes the memory away mid-job.
		if (!dev_range_ok(r.dev + done, n))
			return DMS_GPU_ERR_DEV_RANGE;
		if (!to_dev)
			std::memcpy(buf, mem_ + r.dev + done, n);
		if (timed_) {
			const unsigned err =
				copy_burst_timed(e, job, to_dev, r.host + done, buf, n);
			if (err)
				return err;
		} else {
			sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
			if (!bus_dma(dma, !to_dev, r.host + done, buf, n, delay)) {
				trace_("copy DMA fault at host 0x%llx",
				       static_cast<unsigned long long>(r.host + done));
				return DMS_GPU_ERR_HOST_DMA;
			}
		}
		// A detach may have come while the burst was in flight.
		if (to_dev) {
			if (!dev_range_ok(r.dev + done, n))
				return DMS_GPU_ERR_DEV_RANGE;
			std::memcpy(mem_ + r.dev + done, buf, n);
		}
		done += n;
		e.r.done_bytes = done;
		(to_dev ? c_.copy_to_dev_bytes : c_.copy_to_host_bytes) += n;
		// Functional mode: let the rest of the machine run between bursts.
		if (!timed_ && !pause(e, job, sc_core::SC_ZERO_TIME))
			return kAborted;
	}
	return DMS_GPU_ERR_NONE;
}

void Gpu::crc_thread()
{
	for (;;) {
		const Job job = next_job(crc_);
		const sc_core::sc_time start = sc_core::sc_time_stamp();
		c_.crc_jobs++;
		const unsigned lie = ask_lie(false);
		complete(crc_, job, start, DMS_GPU_IRQ_CRC_DONE, run_crc(crc_, job), lie);
	}
}

unsigned Gpu::run_crc(Engine &e, const Job &job)
{
	if (job.r.count)
		return crc_gather(e, job);
	if (!job.r.len)
		return DMS_GPU_ERR_BAD_LEN;
	if (!dev_range_ok(job.r.dev, job.r.len))
		return DMS_GPU_ERR_DEV_RANGE;
	uint32_t crc = job.r.seed;
	const unsigned err = crc_range(e, job, job.r.dev, job.r.len, crc);
	if (err == DMS_GPU_ERR_NONE)
		e.r.result = crc;
	return err;
}

unsigned Gpu::crc_range(Engine &e, const Job &job, uint64_t dev, uint64_t len, uint32_t &crc)
{
	for (uint64_t done = 0; done < len;) {
		const uint64_t n = std::min(kBurst, len - done);
		if (!dev_range_ok(dev + done, n))
			return DMS_GPU_ERR_DEV_RANGE;
		crc = crc32c_update(crc, mem_ + dev + done, n);
		sim::charge(n / DMS_WORK_UNIT_BYTES); // computation, no DMA
		done += n;
		e.r.done_bytes += n;
		c_.crc_bytes += n;
		const sc_core::sc_time t =
			timed_ ? sc_core::sc_time(static_cast<double>(n) / kCrcBytesPerNs,
						  sc_core::SC_NS)
			       : sc_core::SC_ZERO_TIME;
		if (!pause(e, job, t))
			return kAborted;
	}
	return DMS_GPU_ERR_NONE;
}

unsigned Gpu::crc_gather(Engine &e, const Job &job)
{
	const Regs &r = job.r;
	if (r.count > DMS_GPU_CRC_LIST_MAX)
		return DMS_GPU_ERR_BAD_LEN;
	std::vector<dms_gpu_crc_range> list(r.count);
	const uint64_t list_len = list.size() * sizeof(list[0]);
	if (r.host + list_len < r.host)
		return DMS_GPU_ERR_HOST_DMA;
	sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
	for (uint64_t done = 0; done < list_len;) {
		const uint64_t n = std::min(kBurst, list_len - done);
		if (!bus_dma(dma, false, r.host + done,
			     reinterpret_cast<uint8_t *>(list.data()) + done, n, delay))
			return DMS_GPU_ERR_HOST_DMA;
		done += n;
	}
	if (!pause(e, job, timed_ ? delay : sc_core::SC_ZERO_TIME))
		return kAborted;
	// Check the whole list first: one job covers at most the device
	// memory's size, so a guest cannot make one doorbell cost hours.
	uint64_t total = 0;
	for (const dms_gpu_crc_range &range : list) {
		if (!range.len)
			return DMS_GPU_ERR_BAD_LEN;
		if (!dev_range_ok(range.dev, range.len))
			return DMS_GPU_ERR_DEV_RANGE;
		if (range.len > mem_size_ - total)
			return DMS_GPU_ERR_BAD_LEN;
		total += range.len;
	}
	uint32_t crc = r.seed;
	for (const dms_gpu_crc_range &range : list) {
		const unsigned err = crc_range(e, job, range.dev, range.len, crc);
		if (err != DMS_GPU_ERR_NONE)
			return err;
	}
	e.r.result = crc;
	return DMS_GPU_ERR_NONE;
}

void Gpu::mem_transport(tlm::tlm_generic_payload &gp, sc_core::sc_time &)
{
	const uint64_t off = gp.get_address();
	const uint64_t len = gp.get_data_length();
	if (!dev_range_ok(off, len)) {
		gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
		return;
	}
	if (gp.is_write()) {
		std::memcpy(mem_ + off, gp.get_data_ptr(), len);
		c_.p2p_in_bytes += len;
	} else {
		std::memcpy(gp.get_data_ptr(), mem_ + off, len);
		c_.p2p_out_bytes += len;
	}
	gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

std::string Gpu::stats_json() const
{
	std::ostringstream o;
	o << "{\"copy_jobs\": " << c_.copy_jobs
	  << ", \"copy_to_host_bytes\": " << c_.copy_to_host_bytes
	  << ", \"copy_to_dev_bytes\": " << c_.copy_to_dev_bytes
	  << ", \"crc_jobs\": " << c_.crc_jobs << ", \"crc_bytes\": " << c_.crc_bytes
	  << ", \"p2p_in_bytes\": " << c_.p2p_in_bytes
	  << ", \"p2p_out_bytes\": " << c_.p2p_out_bytes << ", \"errors\": " << c_.errors
	  << ", \"aborted_jobs\": " << c_.aborted_jobs << "}";
	return o.str();
}

} // namespace devmemsim
