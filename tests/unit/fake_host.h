// SPDX-License-Identifier: MIT
// The unit tests' fake host: what a device's QEMU PCI function does for the
// model through struct dms_dev_ops (bus-master DMA into a guest RAM buffer,
// MSI-X vectors and sent frames recorded), plus a node made from TOML text
// and a step loop that runs the model until it is idle.
#ifndef DEVMEMSIM_TESTS_FAKE_HOST_H
#define DEVMEMSIM_TESTS_FAKE_HOST_H

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "devmemsim/devmemsim.h"
#include "devmemsim/gpu_regs.h"

namespace fake_host
{

// Guest RAM starts at 1 MiB: bus address 0 is never valid RAM, so a
// descriptor left zero faults instead of silently hitting the buffer.
constexpr uint64_t kRamBase = 0x100000;

struct Host {
	explicit Host(uint64_t ram_size = 16 << 20, uint64_t ram_base = kRamBase)
	    : base(ram_base), ram(ram_size)
	{
	}

	uint64_t base;
	std::vector<uint8_t> ram;
	std::vector<unsigned> irqs;
	std::vector<std::vector<uint8_t>> sent;
	int rx_ready = 0;

	uint8_t *at(uint64_t addr) { return &ram[addr - base]; }
	bool in_ram(uint64_t addr, uint64_t len) const
	{
		return addr >= base && len <= ram.size() && addr - base <= ram.size() - len;
	}
	// Forget what the devices did and zero guest RAM.
	void clear()
	{
		irqs.clear();
		sent.clear();
		rx_ready = 0;
		std::fill(ram.begin(), ram.end(), 0);
	}
	// The GPU has no wire: its send and rx_ready stay NULL, as in QEMU.
	void attach(dms_node *node, dms_dev dev)
	{
		static const dms_dev_ops nic_ops = {dma, irq, send, on_rx_ready};
		static const dms_dev_ops gpu_ops = {dma, irq, nullptr, nullptr};
		dms_dev_attach(node, dev, DMS_DEV_IS_GPU(dev) ? &gpu_ops : &nic_ops, this);
	}

	static int dma(void *opaque, uint64_t addr, void *buf, uint64_t len, int is_write)
	{
		auto *h = static_cast<Host *>(opaque);
		if (!h->in_ram(addr, len))
			return -1;
		if (is_write)
			std::memcpy(h->at(addr), buf, len);
		else
			std::memcpy(buf, h->at(addr), len);
		return 0;
	}
	static void irq(void *opaque, unsigned vector)
	{
		static_cast<Host *>(opaque)->irqs.push_back(vector);
	}
	static void send(void *opaque, const uint8_t *frame, size_t len)
	{
		static_cast<Host *>(opaque)->sent.emplace_back(frame, frame + len);
	}
	static void on_rx_ready(void *opaque) { static_cast<Host *>(opaque)->rx_ready++; }
};

// A node from a node configuration given as TOML text ("" takes every
// default). NULL on failure, with the model's message in *err. make:
// dms_node_new, or dms_node_new_topology for trees QEMU cannot lay out.
inline dms_node *new_node(const std::string &toml, std::string *err,
			  decltype(&dms_node_new) make = dms_node_new)
{
	char msg[256] = "";
	if (toml.empty()) {
		dms_node *node = make(nullptr, msg, sizeof(msg));
		*err = msg;
		return node;
	}
	char path[] = "/tmp/dms-unit-node-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0) {
		*err = "mkstemp failed";
		return nullptr;
	}
	close(fd);
	std::ofstream(path) << toml;
	dms_node *node = make(path, msg, sizeof(msg));
	std::remove(path);
	*err = msg;
	return node;
}

// Step the model to each deadline until it is idle or max_steps ran
// (functional mode: no simulated time passes).
inline void run_until_idle(dms_node *node, int max_steps)
{
	for (int i = 0; i < max_steps && dms_node_deadline_ns(node) != DMS_NO_DEADLINE; i++)
		dms_node_step(node, dms_node_deadline_ns(node));
}

// The GPU's copy and CRC jobs as dmsgpu programs them: the job's registers,
// then its doorbell. The job runs as the node steps. gpu: which GPU.
inline void gpu_start_copy(dms_node *node, uint64_t dev, uint64_t host, uint64_t len, uint32_t dir,
			   dms_dev gpu = DMS_DEV_GPU)
{
	dms_reg_write(node, gpu, DMS_GPU_REG_COPY_DEV_LO, dev, 8);
	dms_reg_write(node, gpu, DMS_GPU_REG_COPY_HOST_LO, host, 8);
	dms_reg_write(node, gpu, DMS_GPU_REG_COPY_LEN_LO, len, 8);
	dms_reg_write(node, gpu, DMS_GPU_REG_COPY_CTRL, dir, 4);
	dms_reg_write(node, gpu, DMS_GPU_REG_COPY_DOORBELL, 1, 4);
}

// A CRC job over [dev, dev + len), or over the gather list CRC_LIST_LO/HI
// and CRC_LIST_COUNT name if the count is not 0 (left as it is here).
inline void gpu_start_crc(dms_node *node, uint64_t dev, uint64_t len, uint32_t seed,
			  dms_dev gpu = DMS_DEV_GPU)
{
	dms_reg_write(node, gpu, DMS_GPU_REG_CRC_DEV_LO, dev, 8);
	dms_reg_write(node, gpu, DMS_GPU_REG_CRC_LEN_LO, len, 8);
	dms_reg_write(node, gpu, DMS_GPU_REG_CRC_SEED, seed, 4);
	dms_reg_write(node, gpu, DMS_GPU_REG_CRC_DOORBELL, 1, 4);
}

} // namespace fake_host

#endif
