// SPDX-License-Identifier: MIT
// The fixture of the NIC unit suites that drive a default node's NIC from
// a fake host: one node per suite (SystemC elaborates a process's modules
// once), made and elaborated before the first test, and 32-bit access to
// the NIC's registers.
#ifndef DEVMEMSIM_TESTS_NIC_SUITE_H
#define DEVMEMSIM_TESTS_NIC_SUITE_H

#include <gtest/gtest.h>

#include <cstdint>

#include "devmemsim/devmemsim.h"
#include "fake_host.h"

class NicSuite : public ::testing::Test
{
protected:
	static void SetUpTestSuite()
	{
		char err[256] = "";
		node_ = dms_node_new(nullptr, err, sizeof(err));
		ASSERT_NE(node_, nullptr) << err;
		host_ = new fake_host::Host;
		host_->attach(node_, DMS_DEV_NIC);
		dms_node_step(node_, 0);
	}
	static uint32_t rd(uint32_t off)
	{
		return uint32_t(dms_reg_read(node_, DMS_DEV_NIC, off, 4));
	}
	static void wr(uint32_t off, uint32_t v) { dms_reg_write(node_, DMS_DEV_NIC, off, v, 4); }
	// A fresh device for each test: reset, run out (up to @steps), no
	// counts, no host memory written.
	static void reset_nic(unsigned steps)
	{
		wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
		fake_host::run_until_idle(node_, steps);
		dms_node_reset_stats(node_);
		host_->clear();
	}

	inline static dms_node *node_;
	inline static fake_host::Host *host_;
};

#endif
