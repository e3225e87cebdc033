// SPDX-License-Identifier: MIT
#include "gpu/gpu.h"

#include <cstring>
#include <vector>

#include "devmemsim/gpu_regs.h"
#include "gpu/crc32c.h"

namespace devmemsim
{

namespace
{

// The engines move data in bursts of this size; one fabric transaction each.
constexpr uint64_t kBurst = 64 * 1024;
// CRC engine throughput in timed mode: 32 bytes per 1 GHz cycle.
constexpr double kCrcBytesPerNs = 32.0;

void set_lo(uint64_t &v, uint32_t lo)
{
	v = (v & ~0xffffffffull) | lo;
}

void set_hi(uint64_t &v, uint32_t hi)
{
	v = (v & 0xffffffffull) | static_cast<uint64_t>(hi) << 32;
}

} // namespace

Gpu::Gpu(sc_core::sc_module_name name, const NodeConfig &cfg)
    : sc_core::sc_module(name), dma("dma"), bar_mem("bar_mem"), mem_size_(cfg.gpu_mem_size),
      timed_(cfg.mode == Mode::Timed)
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
	case DMS_GPU_REG_IRQ_STATUS:
		return irq_status_;
	case DMS_GPU_REG_IRQ_MASK:
		return irq_mask_;
	case DMS_GPU_REG_COPY_DEV_LO:
		return static_cast<uint32_t>(copy_.dev);
	case DMS_GPU_REG_COPY_DEV_HI:
		return static_cast<uint32_t>(copy_.dev >> 32);
	case DMS_GPU_REG_COPY_HOST_LO:
		return static_cast<uint32_t>(copy_.host);
	case DMS_GPU_REG_COPY_HOST_HI:
		return static_cast<uint32_t>(copy_.host >> 32);
	case DMS_GPU_REG_COPY_LEN_LO:
		return static_cast<uint32_t>(copy_.len);
	case DMS_GPU_REG_COPY_LEN_HI:
		return static_cast<uint32_t>(copy_.len >> 32);
	case DMS_GPU_REG_COPY_CTRL:
		return copy_.ctrl;
	case DMS_GPU_REG_COPY_STATUS:
		return copy_.status;
	case DMS_GPU_REG_COPY_DONE_BYTES_LO:
		return static_cast<uint32_t>(copy_.done_bytes);
	case DMS_GPU_REG_COPY_DONE_BYTES_HI:
		return static_cast<uint32_t>(copy_.done_bytes >> 32);
	case DMS_GPU_REG_CRC_DEV_LO:
		return static_cast<uint32_t>(crc_.dev);
	case DMS_GPU_REG_CRC_DEV_HI:
		return static_cast<uint32_t>(crc_.dev >> 32);
	case DMS_GPU_REG_CRC_LEN_LO:
		return static_cast<uint32_t>(crc_.len);
	case DMS_GPU_REG_CRC_LEN_HI:
		return static_cast<uint32_t>(crc_.len >> 32);
	case DMS_GPU_REG_CRC_SEED:
		return crc_.seed;
	case DMS_GPU_REG_CRC_STATUS:
		return crc_.status;
	case DMS_GPU_REG_CRC_RESULT:
		return crc_.result;
	case DMS_GPU_REG_CRC_LIST_LO:
		return static_cast<uint32_t>(crc_.host);
	case DMS_GPU_REG_CRC_LIST_HI:
		return static_cast<uint32_t>(crc_.host >> 32);
	case DMS_GPU_REG_CRC_LIST_COUNT:
		return crc_.count;
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
		irq_status_ &= ~val;
		update_irq();
		break;
	case DMS_GPU_REG_IRQ_MASK:
		irq_mask_ =
			val & (DMS_GPU_IRQ_COPY_DONE | DMS_GPU_IRQ_CRC_DONE | DMS_GPU_IRQ_ERROR);
		update_irq();
		break;
	case DMS_GPU_REG_COPY_DEV_LO:
		set_lo(copy_.dev, val);
		break;
	case DMS_GPU_REG_COPY_DEV_HI:
		set_hi(copy_.dev, val);
		break;
	case DMS_GPU_REG_COPY_HOST_LO:
		set_lo(copy_.host, val);
		break;
	case DMS_GPU_REG_COPY_HOST_HI:
		set_hi(copy_.host, val);
		break;
	case DMS_GPU_REG_COPY_LEN_LO:
		set_lo(copy_.len, val);
		break;
	case DMS_GPU_REG_COPY_LEN_HI:
		set_hi(copy_.len, val);
		break;
	case DMS_GPU_REG_COPY_CTRL:
		copy_.ctrl = val & 1;
		break;
	case DMS_GPU_REG_COPY_DOORBELL:
		if (ring(copy_))
			copy_.go.notify(sc_core::SC_ZERO_TIME);
		break;
	case DMS_GPU_REG_CRC_DEV_LO:
		set_lo(crc_.dev, val);
		break;
	case DMS_GPU_REG_CRC_DEV_HI:
		set_hi(crc_.dev, val);
		break;
	case DMS_GPU_REG_CRC_LEN_LO:
		set_lo(crc_.len, val);
		break;
	case DMS_GPU_REG_CRC_LEN_HI:
		set_hi(crc_.len, val);
		break;
	case DMS_GPU_REG_CRC_SEED:
		crc_.seed = val;
		break;
	case DMS_GPU_REG_CRC_LIST_LO:
		set_lo(crc_.host, val);
		break;
	case DMS_GPU_REG_CRC_LIST_HI:
		set_hi(crc_.host, val);
		break;
	case DMS_GPU_REG_CRC_LIST_COUNT:
		crc_.count = val;
		break;
	case DMS_GPU_REG_CRC_DOORBELL:
		if (ring(crc_))
			crc_.go.notify(sc_core::SC_ZERO_TIME);
		break;
	default:
		break;
	}
}

bool Gpu::ring(Engine &e)
{
	if (e.status & DMS_GPU_STATUS_BUSY) {
		// The running job goes on; the refused doorbell is reported.
		e.status |= DMS_GPU_STATUS_ERROR | DMS_GPU_ERR_BUSY << DMS_GPU_STATUS_ERR_SHIFT;
		c_.errors++;
		irq_status_ |= DMS_GPU_IRQ_ERROR;
		update_irq();
		return false;
	}
	e.status = DMS_GPU_STATUS_BUSY;
	e.done_bytes = 0;
	return true;
}

void Gpu::finish(Engine &e, unsigned irq_bit, unsigned err)
{
	e.status = DMS_GPU_STATUS_DONE;
	irq_status_ |= irq_bit;
	if (err) {
		e.status |= DMS_GPU_STATUS_ERROR | err << DMS_GPU_STATUS_ERR_SHIFT;
		irq_status_ |= DMS_GPU_IRQ_ERROR;
		c_.errors++;
	}
	update_irq();
}

void Gpu::update_irq()
{
	if ((irq_status_ & irq_mask_) && irq_)
		irq_(0);
}

bool Gpu::host_dma(tlm::tlm_command cmd, uint64_t addr, uint8_t *data, uint64_t n,
		   sc_core::sc_time &delay)
{
	tlm::tlm_generic_payload gp;
	gp.set_command(cmd);
	gp.set_address(addr);
	gp.set_data_ptr(data);
	gp.set_data_length(static_cast<unsigned>(n));
	gp.set_streaming_width(static_cast<unsigned>(n));
	gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
	dma->b_transport(gp, delay);
	return gp.is_response_ok();
}

void Gpu::copy_thread()
{
	std::vector<uint8_t> buf(kBurst);
	for (;;) {
		sc_core::wait(copy_.go);
		Engine &e = copy_;
		const bool to_dev = e.ctrl & DMS_GPU_COPY_TO_DEV;
		const uint64_t dev = e.dev, host = e.host, len = e.len;
		c_.copy_jobs++;
		if (!len) {
			finish(e, DMS_GPU_IRQ_COPY_DONE, DMS_GPU_ERR_BAD_LEN);
			continue;
		}
		if (!dev_range_ok(dev, len)) {
			finish(e, DMS_GPU_IRQ_COPY_DONE, DMS_GPU_ERR_DEV_RANGE);
			continue;
		}
		unsigned err = DMS_GPU_ERR_NONE;
		for (uint64_t done = 0; done < len;) {
			const uint64_t n = std::min(kBurst, len - done);
			if (!to_dev)
				std::memcpy(buf.data(), mem_ + dev + done, n);
			sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
			if (!host_dma(to_dev ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND,
				      host + done, buf.data(), n, delay)) {
				err = DMS_GPU_ERR_HOST_DMA;
				break;
			}
			if (to_dev)
				std::memcpy(mem_ + dev + done, buf.data(), n);
			done += n;
			e.done_bytes = done;
			(to_dev ? c_.copy_to_dev_bytes : c_.copy_to_host_bytes) += n;
			if (timed_)
				sc_core::wait(delay);
		}
		finish(e, DMS_GPU_IRQ_COPY_DONE, err);
	}
}

void Gpu::crc_thread()
{
	for (;;) {
		sc_core::wait(crc_.go);
		Engine &e = crc_;
		c_.crc_jobs++;
		if (e.count) {
			finish(e, DMS_GPU_IRQ_CRC_DONE, crc_gather(e));
			continue;
		}
		if (!e.len) {
			finish(e, DMS_GPU_IRQ_CRC_DONE, DMS_GPU_ERR_BAD_LEN);
			continue;
		}
		if (!dev_range_ok(e.dev, e.len)) {
			finish(e, DMS_GPU_IRQ_CRC_DONE, DMS_GPU_ERR_DEV_RANGE);
			continue;
		}
		e.result = crc32c_update(e.seed, mem_ + e.dev, e.len);
		e.done_bytes = e.len;
		c_.crc_bytes += e.len;
		if (timed_)
			sc_core::wait(sc_core::sc_time(static_cast<double>(e.len) / kCrcBytesPerNs,
						       sc_core::SC_NS));
		finish(e, DMS_GPU_IRQ_CRC_DONE, DMS_GPU_ERR_NONE);
	}
}

unsigned Gpu::crc_gather(Engine &e)
{
	if (e.count > DMS_GPU_CRC_LIST_MAX)
		return DMS_GPU_ERR_BAD_LEN;
	std::vector<dms_gpu_crc_range> list(e.count);
	const uint64_t list_len = list.size() * sizeof(list[0]);
	sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
	for (uint64_t done = 0; done < list_len;) {
		const uint64_t n = std::min(kBurst, list_len - done);
		if (!host_dma(tlm::TLM_READ_COMMAND, e.host + done,
			      reinterpret_cast<uint8_t *>(list.data()) + done, n, delay))
			return DMS_GPU_ERR_HOST_DMA;
		done += n;
	}
	// Check the whole list first: one job covers at most the device
	// memory's size, so a guest cannot make one doorbell cost hours.
	uint64_t total = 0;
	for (const dms_gpu_crc_range &r : list) {
		if (!r.len)
			return DMS_GPU_ERR_BAD_LEN;
		if (!dev_range_ok(r.dev, r.len))
			return DMS_GPU_ERR_DEV_RANGE;
		if (r.len > mem_size_ - total)
			return DMS_GPU_ERR_BAD_LEN;
		total += r.len;
	}
	uint32_t crc = e.seed;
	for (const dms_gpu_crc_range &r : list)
		crc = crc32c_update(crc, mem_ + r.dev, r.len);
	e.result = crc;
	e.done_bytes = total;
	c_.crc_bytes += total;
	if (timed_)
		sc_core::wait(delay + sc_core::sc_time(static_cast<double>(total) / kCrcBytesPerNs,
						       sc_core::SC_NS));
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

} // namespace devmemsim
