// SPDX-License-Identifier: MIT
// dms-sim's Ethernet wire between two NICs, full duplex (network.h: the
// framing and timing every cable shares).
#pragma once

#include <array>
#include <string>

#include "network.h"

namespace dms_sim
{

class Wire : public Network
{
public:
	// name: the report's prefix for the two directions' names.
	Wire(Events &ev, double line_rate_gbps, uint64_t propagation_ps, std::string name);
	// The first NIC attached is end 0, the second end 1.
	unsigned attach(SimNode &n, const std::string &label) override;
	void send(unsigned from, const uint8_t *frame, size_t len) override;
	void rx_ready(unsigned to) override { into_[to].deliver(); }
	std::vector<Link> links() const override;

private:
	Events &ev_;
	double gbps_;
	uint64_t prop_ps_;
	std::string name_;
	unsigned ends_ = 0;
	std::array<std::string, 2> labels_;
	std::array<LineClock, 2> line_; // by sending end
	std::array<CableEnd, 2> into_;	// by receiving end
};

} // namespace dms_sim
