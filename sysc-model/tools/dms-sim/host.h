// SPDX-License-Identifier: MIT
// dms-sim's host software for one NIC/GPU pair: the NIC's driver, the GPU
// copy engine's queue and the TCP-like connections, which the host finds
// by the destination port of each received segment (several streams may
// share a NIC: a ring node sends one and receives one).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "gpu_copy.h"
#include "network.h"
#include "nic_driver.h"
#include "segment.h"
#include "sim_host.h"

namespace dms_sim
{

// One end of a stream, as the host sees it.
class Conn
{
public:
	virtual ~Conn() = default;
	// false: leave received frames on the ring until the connection has
	// room again (it calls Host::resume()).
	virtual bool can_take() const { return true; }
	virtual void on_segment(const RxFrame &f, const Segment &s) = 0;
	virtual void on_tx_room() {}
	virtual void on_poll_done() {}
};

struct HostParams {
	DriverParams driver;
	uint64_t host_memory_bytes;
	bool gpu_payload; // receive payloads into GPU memory (devmem), else host memory
};

class Host
{
public:
	// index: the machine (model node); pair: its NIC/GPU pair.
	Host(dms_node *node, unsigned index, unsigned pair, Events &ev, const HostParams &p);
	Host(const Host &) = delete;
	Host &operator=(const Host &) = delete;

	// The NIC's cable: port of net.
	void connect(Network &net, unsigned port);
	// Register a connection for segments to its local port.
	void add(uint16_t port, Conn *c) { conns_[port] = c; }
	// Program the NIC and the GPU's interrupts; from here on frames flow.
	void start();
	void resume() { drv_->resume(); }

	SimNode &node() { return node_; }
	const SimNode &node() const { return node_; }
	NicDriver &driver() { return *drv_; }
	const NicDriver &driver() const { return *drv_; }
	GpuCopier &copier() { return copier_; }
	const GpuCopier &copier() const { return copier_; }
	// Frames for no registered port (dropped).
	uint64_t unknown() const { return unknown_; }

private:
	PayloadPool payload_pool(const HostParams &p);
	void on_rx(const RxFrame &f);

	SimNode node_;
	GpuCopier copier_;
	std::unique_ptr<NicDriver> drv_;
	std::map<uint16_t, Conn *> conns_;
	uint64_t unknown_ = 0;
};

} // namespace dms_sim
