// SPDX-License-Identifier: MIT
// The node through its C ABI: identity registers, access rules, stepping.
#include <gtest/gtest.h>

#include <random>

#include "devmemsim/devmemsim.h"
#include "devmemsim/gpu_regs.h"
#include "devmemsim/nic_regs.h"

namespace
{

// One node for the suite: the SystemC kernel cannot elaborate a node after
// it has run.
class Node : public ::testing::Test
{
protected:
	static void SetUpTestSuite()
	{
		char err[256] = "";
		node_ = dms_node_new(nullptr, err, sizeof(err));
		ASSERT_NE(node_, nullptr) << err;
		const uint8_t mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
		dms_nic_set_mac(node_, mac);
	}
	static dms_node *node_;
};
dms_node *Node::node_;

} // namespace

TEST_F(Node, IdentityRegisters)
{
	EXPECT_EQ(dms_reg_read(node_, DMS_DEV_NIC, DMS_NIC_REG_ID, 4), DMS_NIC_ID_MAGIC);
	EXPECT_EQ(dms_reg_read(node_, DMS_DEV_NIC, DMS_NIC_REG_VERSION, 4), DMS_NIC_VERSION);
	EXPECT_EQ(dms_reg_read(node_, DMS_DEV_NIC, DMS_NIC_REG_NUM_QUEUES, 4), 16u);
	EXPECT_EQ(dms_reg_read(node_, DMS_DEV_GPU, DMS_GPU_REG_ID, 4), DMS_GPU_ID_MAGIC);
	EXPECT_EQ(dms_reg_read(node_, DMS_DEV_GPU, DMS_GPU_REG_MEM_SIZE_LO, 8), 256ull << 20);
	EXPECT_EQ(dms_gpu_mem_size(node_), 256ull << 20);
	EXPECT_EQ(dms_nic_num_vectors(node_), 17u);
	EXPECT_STREQ(dms_node_mode(node_), "functional");
}

TEST_F(Node, MacAddressLayout)
{
	EXPECT_EQ(dms_reg_read(node_, DMS_DEV_NIC, DMS_NIC_REG_MAC_LO, 4), 0x12005452u);
	EXPECT_EQ(dms_reg_read(node_, DMS_DEV_NIC, DMS_NIC_REG_MAC_HI, 4), 0x5634u);
}

TEST_F(Node, UndefinedAndMisalignedAccesses)
{
	EXPECT_EQ(dms_reg_read(node_, DMS_DEV_NIC, 0x0ffc, 4), DMS_REG_UNDEFINED);
	EXPECT_EQ(dms_reg_read(node_, DMS_DEV_NIC, DMS_NIC_REG_ID + 1, 4), 0xffffffffu);
	EXPECT_EQ(dms_reg_read(node_, DMS_DEV_NIC, DMS_NIC_REG_ID, 2), 0xffffu);
	EXPECT_EQ(dms_reg_read(node_, DMS_DEV_NIC, DMS_NIC_REG_ID, 1), 0xffu);
	EXPECT_EQ(dms_reg_read(node_, DMS_DEV_NIC, 4, 8), UINT64_MAX);
	EXPECT_EQ(dms_reg_read(node_, DMS_DEV_GPU, UINT64_MAX - 3, 4), DMS_REG_UNDEFINED);
	EXPECT_EQ(dms_reg_read(node_, static_cast<dms_dev>(7), 0, 4), UINT64_MAX);
}

TEST_F(Node, RandomWritesLeaveIdentityIntact)
{
	std::mt19937_64 rng(1);
	for (int i = 0; i < 20000; i++) {
		auto dev = static_cast<dms_dev>(rng() % 2);
		unsigned size = 1u << (rng() % 4);
		dms_reg_write(node_, dev, rng() % 0x10010, rng(), size);
	}
	EXPECT_EQ(dms_reg_read(node_, DMS_DEV_NIC, DMS_NIC_REG_ID, 4), DMS_NIC_ID_MAGIC);
	EXPECT_EQ(dms_reg_read(node_, DMS_DEV_GPU, DMS_GPU_REG_MEM_SIZE_LO, 4), 256u << 20);
}

TEST_F(Node, SteppingIsMonotonicAndIdleModelHasNoDeadline)
{
	dms_node_step(node_, 1000);
	EXPECT_EQ(dms_node_deadline_ns(node_), DMS_NO_DEADLINE);
	dms_node_step(node_, 500); // earlier: ignored
	dms_node_step(node_, 5000);
	EXPECT_EQ(dms_node_deadline_ns(node_), DMS_NO_DEADLINE);
}

TEST_F(Node, NodeAfterTheFirstStepIsRefusedWithAMessage)
{
	dms_node_step(node_, 0);
	char err[256] = "";
	EXPECT_EQ(dms_node_new(nullptr, err, sizeof(err)), nullptr);
	EXPECT_NE(std::string(err).find("before the first step"), std::string::npos) << err;
}
