// SPDX-License-Identifier: MIT
// A PCIe fabric with two endpoints (NIC, GPU) for the fabric unit tests:
// the GPU's BAR memory is a vector, host memory a callback that records
// the calls.
#pragma once

#include <cstring>
#include <vector>

#include "pcie/fabric.h"

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

namespace fabric_test
{

using namespace devmemsim;
using namespace devmemsim::pcie;

constexpr uint64_t kGpuBar = 0x800000000ull; // BAR2 at 32 GiB
constexpr uint64_t kGpuBarSize = 256ull << 20;

// Two endpoints (NIC, GPU) on a fabric; the GPU's BAR memory is a vector.
struct Harness : sc_core::sc_module {
	Fabric fabric;
	tlm_utils::simple_initiator_socket<Harness> nic, gpu;
	tlm_utils::simple_target_socket<Harness> nic_mem, gpu_mem;
	std::vector<uint8_t> gpu_ram = std::vector<uint8_t>(1 << 20);
	struct HostCall {
		unsigned port;
		uint64_t addr, len;
		bool write;
	};
	std::vector<HostCall> host_calls;
	bool host_ok = true;

	Harness(sc_core::sc_module_name n, const NodeConfig &cfg)
	    : sc_module(n), fabric("fabric", cfg), nic("nic"), gpu("gpu"), nic_mem("nic_mem"),
	      gpu_mem("gpu_mem")
	{
		nic.bind(fabric.dma);
		gpu.bind(fabric.dma);
		fabric.bar_mem[kNic].bind(nic_mem);
		fabric.bar_mem[kGpu].bind(gpu_mem);
		nic_mem.register_b_transport(this, &Harness::reject);
		gpu_mem.register_b_transport(this, &Harness::memory);
		fabric.set_window(kGpu, kGpuBar, kGpuBarSize);
		fabric.set_host_dma(
			[this](unsigned port, uint64_t addr, void *, uint64_t len, bool w) {
				host_calls.push_back({port, addr, len, w});
				return host_ok;
			});
	}
	void reject(tlm::tlm_generic_payload &gp, sc_core::sc_time &)
	{
		gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
	}
	void memory(tlm::tlm_generic_payload &gp, sc_core::sc_time &)
	{
		uint64_t a = gp.get_address();
		if (a + gp.get_data_length() > gpu_ram.size()) {
			gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
			return;
		}
		if (gp.is_write())
			std::memcpy(&gpu_ram[a], gp.get_data_ptr(), gp.get_data_length());
		else
			std::memcpy(gp.get_data_ptr(), &gpu_ram[a], gp.get_data_length());
		gp.set_response_status(tlm::TLM_OK_RESPONSE);
	}
	bool dma(tlm_utils::simple_initiator_socket<Harness> &s, bool write, uint64_t addr,
		 std::vector<uint8_t> &buf, sc_core::sc_time *delay = nullptr)
	{
		tlm::tlm_generic_payload gp;
		gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
		gp.set_address(addr);
		gp.set_data_ptr(buf.data());
		gp.set_data_length(static_cast<unsigned>(buf.size()));
		gp.set_streaming_width(static_cast<unsigned>(buf.size()));
		// *delay in: the requester's time offset when it starts.
		sc_core::sc_time d = delay ? *delay : sc_core::SC_ZERO_TIME;
		s->b_transport(gp, d);
		if (delay)
			*delay = d;
		return gp.is_response_ok();
	}
};

} // namespace fabric_test
