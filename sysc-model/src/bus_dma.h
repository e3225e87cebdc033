// SPDX-License-Identifier: MIT
// One bus-master transaction of a device's DMA engine into the node's
// PCIe fabric, shared by the NIC and the GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <systemc>
#include <tlm>

namespace devmemsim
{

// Move len bytes between buf and bus address addr through socket (a TLM
// initiator socket bound to the fabric). delay is the loosely-timed
// offset from the current simulated time: the transfer starts then, and
// in timed mode the fabric moves it to when the transfer is done (queued
// behind other traffic on its path); functional mode leaves it alone.
// Returns false if the fabric refused it (a DMA fault).
template <typename Socket>
bool bus_dma(Socket &socket, bool write, uint64_t addr, void *buf, size_t len,
	     sc_core::sc_time &delay)
{
	tlm::tlm_generic_payload gp;
	gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
	gp.set_address(addr);
	gp.set_data_ptr(static_cast<unsigned char *>(buf));
	gp.set_data_length(static_cast<unsigned>(len));
	gp.set_streaming_width(static_cast<unsigned>(len));
	gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
	socket->b_transport(gp, delay);
	return gp.is_response_ok();
}

} // namespace devmemsim
