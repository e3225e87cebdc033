// SPDX-License-Identifier: MIT
// The GPU's engines through the C ABI, with a fake host: copy both ways,
// CRC32C, errors, interrupts and the counters they leave.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "devmemsim/devmemsim.h"
#include "devmemsim/gpu_regs.h"
#include "devmemsim/pci_ids.h"
#include "fake_host.h"
#include "gpu/crc32c.h"

namespace
{

constexpr uint64_t kHostBase = fake_host::kRamBase;

class Gpu : public ::testing::Test
{
protected:
	static void SetUpTestSuite()
	{
		char err[256] = "";
		node_ = dms_node_new(nullptr, err, sizeof(err));
		ASSERT_NE(node_, nullptr) << err;
		mem_ = new std::vector<uint8_t>(dms_gpu_mem_size(node_));
		host_ = new fake_host::Host(4 << 20);
		host_->attach(node_, DMS_DEV_GPU);
		dms_gpu_set_memory(node_, mem_->data());
		dms_node_step(node_, 0);
	}
	void SetUp() override
	{
		host_->irqs.clear();
		wr(DMS_GPU_REG_IRQ_STATUS, 0xffffffff);
		wr(DMS_GPU_REG_IRQ_MASK, 0x7);
		dms_node_reset_stats(node_);
	}
	static uint32_t rd(uint32_t off)
	{
		return uint32_t(dms_reg_read(node_, DMS_DEV_GPU, off, 4));
	}
	static void wr(uint32_t off, uint32_t v) { dms_reg_write(node_, DMS_DEV_GPU, off, v, 4); }
	static void wr64(uint32_t off, uint64_t v) { dms_reg_write(node_, DMS_DEV_GPU, off, v, 8); }
	// Run the model until it is idle (functional mode: no time passes).
	static void run() { fake_host::run_until_idle(node_, 100); }
	static void copy(uint64_t dev, uint64_t host, uint64_t len, uint32_t dir)
	{
		fake_host::gpu_start_copy(node_, dev, host, len, dir);
		run();
	}
	static uint32_t crc(uint64_t dev, uint64_t len, uint32_t seed)
	{
		fake_host::gpu_start_crc(node_, dev, len, seed);
		run();
		return rd(DMS_GPU_REG_CRC_RESULT);
	}
	static std::string stats() { return dms_node_stats_json(node_); }
	static dms_node *node_;
	static std::vector<uint8_t> *mem_;
	static fake_host::Host *host_;
};
dms_node *Gpu::node_;
std::vector<uint8_t> *Gpu::mem_;
fake_host::Host *Gpu::host_;

} // namespace

// RFC 3720 appendix B.4 test vectors (iSCSI CRC32C), standard form.
TEST(Crc32c, PublishedVectors)
{
	std::vector<uint8_t> zeros(32, 0), ones(32, 0xff), inc(32);
	for (int i = 0; i < 32; i++)
		inc[i] = uint8_t(i);
	auto std_crc = [](const std::vector<uint8_t> &v) {
		return ~devmemsim::crc32c_update(0xffffffff, v.data(), v.size());
	};
	EXPECT_EQ(std_crc(zeros), 0x8a9136aau);
	EXPECT_EQ(std_crc(ones), 0x62a8ab43u);
	EXPECT_EQ(std_crc(inc), 0x46dd794eu);
	const char *s = "123456789";
	EXPECT_EQ(~devmemsim::crc32c_update(0xffffffff, s, 9), 0xe3069283u);
}

// The fast path splits long buffers into interleaved blocks joined by shift
// tables: lengths around the block sizes (3 x 2048, 3 x 128 bytes), odd starts
// and tails, and any starting CRC must give the portable result.
TEST(Crc32c, FastPathMatchesPortable)
{
	std::mt19937 rng(13);
	std::vector<uint8_t> buf(40000);
	for (auto &b : buf)
		b = uint8_t(rng());
	const size_t edges[] = {0,    1,    7,	  8,	383,  384,  385,
				6143, 6144, 6145, 6528, 8192, 8199, 12288};
	for (size_t len : edges)
		for (size_t off = 0; off < 16; off++) {
			const uint32_t seed = uint32_t(rng());
			ASSERT_EQ(devmemsim::crc32c_update(seed, &buf[off], len),
				  devmemsim::crc32c_update_portable(seed, &buf[off], len))
				<< "len " << len << " offset " << off;
		}
	for (int i = 0; i < 2000; i++) {
		const size_t off = rng() % 64, len = rng() % (buf.size() - off);
		const uint32_t seed = uint32_t(rng());
		ASSERT_EQ(devmemsim::crc32c_update(seed, &buf[off], len),
			  devmemsim::crc32c_update_portable(seed, &buf[off], len))
			<< "len " << len << " offset " << off;
	}
	const char *s = "123456789";
	EXPECT_EQ(~devmemsim::crc32c_update_portable(0xffffffff, s, 9), 0xe3069283u);
}

TEST_F(Gpu, CopyToDeviceAndBack)
{
	const uint64_t len = 300 * 1024 + 7; // several bursts, odd tail
	for (uint64_t i = 0; i < len; i++)
		host_->ram[i] = uint8_t(i * 7 + 3);
	copy(0x10000, kHostBase, len, DMS_GPU_COPY_TO_DEV);
	EXPECT_EQ(rd(DMS_GPU_REG_COPY_STATUS), DMS_GPU_STATUS_DONE);
	EXPECT_EQ(std::memcmp(&(*mem_)[0x10000], host_->ram.data(), len), 0);
	copy(0x10000, kHostBase + (2 << 20), len, DMS_GPU_COPY_TO_HOST);
	EXPECT_EQ(rd(DMS_GPU_REG_COPY_STATUS), DMS_GPU_STATUS_DONE);
	EXPECT_EQ(dms_reg_read(node_, DMS_DEV_GPU, DMS_GPU_REG_COPY_DONE_BYTES_LO, 8), len);
	EXPECT_EQ(std::memcmp(&host_->ram[2 << 20], host_->ram.data(), len), 0);
	EXPECT_EQ(rd(DMS_GPU_REG_IRQ_STATUS), DMS_GPU_IRQ_COPY_DONE);
	EXPECT_FALSE(host_->irqs.empty());
	// Both directions crossed the GPU link and the root complex.
	std::string s = stats();
	EXPECT_NE(s.find("\"host_write_bytes\": " + std::to_string(len)), std::string::npos) << s;
	EXPECT_NE(s.find("\"host_read_bytes\": " + std::to_string(len)), std::string::npos) << s;
	EXPECT_NE(s.find("\"copy_to_dev_bytes\": " + std::to_string(len)), std::string::npos) << s;
}

TEST_F(Gpu, CrcMatchesSoftware)
{
	for (size_t i = 0; i < 1 << 20; i++)
		(*mem_)[0x200000 + i] = uint8_t(i ^ (i >> 8));
	uint32_t want = devmemsim::crc32c_update(0xffffffff, &(*mem_)[0x200000], 1 << 20);
	EXPECT_EQ(crc(0x200000, 1 << 20, 0xffffffff), want);
	EXPECT_EQ(rd(DMS_GPU_REG_CRC_STATUS), DMS_GPU_STATUS_DONE);
	EXPECT_EQ(rd(DMS_GPU_REG_IRQ_STATUS), DMS_GPU_IRQ_CRC_DONE);
	// The CRC engine reads device memory locally: nothing crosses PCIe.
	EXPECT_NE(stats().find("\"host_read_bytes\": 0"), std::string::npos);
}

// Gather mode: the list comes from host memory by DMA; the CRC runs over the
// ranges in list order as one stream.
TEST_F(Gpu, CrcGatherListIsOneStreamInListOrder)
{
	for (size_t i = 0; i < 3 << 16; i++)
		(*mem_)[0x300000 + i] = uint8_t(i * 13 + 5);
	const dms_gpu_crc_range list[] = {{0x320000, 1448}, {0x300000, 4096}, {0x310123, 77}};
	std::memcpy(host_->ram.data(), list, sizeof(list));
	uint32_t want = 0x12345678;
	for (const auto &r : list)
		want = devmemsim::crc32c_update(want, &(*mem_)[r.dev], r.len);

	wr64(DMS_GPU_REG_CRC_LIST_LO, kHostBase);
	wr(DMS_GPU_REG_CRC_LIST_COUNT, 3);
	EXPECT_EQ(crc(0, 0, 0x12345678), want);
	EXPECT_EQ(rd(DMS_GPU_REG_CRC_STATUS), DMS_GPU_STATUS_DONE);
	const std::string s = stats();
	EXPECT_NE(s.find("\"crc_bytes\": 5621"), std::string::npos) << s;
	EXPECT_NE(s.find("\"host_read_bytes\": 48"), std::string::npos) << s; // the list itself

	auto err = [] { return rd(DMS_GPU_REG_CRC_STATUS) >> DMS_GPU_STATUS_ERR_SHIFT & 0xff; };
	wr(DMS_GPU_REG_CRC_LIST_COUNT, DMS_GPU_CRC_LIST_MAX + 1);
	crc(0, 0, 0);
	EXPECT_EQ(err(), unsigned(DMS_GPU_ERR_BAD_LEN));
	const dms_gpu_crc_range bad[] = {{0, 16}, {UINT64_MAX - 8, 64}};
	std::memcpy(host_->ram.data(), bad, sizeof(bad));
	wr(DMS_GPU_REG_CRC_LIST_COUNT, 2);
	crc(0, 0, 0);
	EXPECT_EQ(err(), unsigned(DMS_GPU_ERR_DEV_RANGE));
	// Every range in memory, but together more than all of it.
	const uint64_t size = dms_gpu_mem_size(node_);
	const dms_gpu_crc_range twice[] = {{0, size}, {0, 1}};
	std::memcpy(host_->ram.data(), twice, sizeof(twice));
	crc(0, 0, 0);
	EXPECT_EQ(err(), unsigned(DMS_GPU_ERR_BAD_LEN));
	const dms_gpu_crc_range empty[] = {{0, 0}};
	std::memcpy(host_->ram.data(), empty, sizeof(empty));
	wr(DMS_GPU_REG_CRC_LIST_COUNT, 1);
	crc(0, 0, 0);
	EXPECT_EQ(err(), unsigned(DMS_GPU_ERR_BAD_LEN));
	wr64(DMS_GPU_REG_CRC_LIST_LO, 0xfee00000); // not host RAM
	crc(0, 0, 0);
	EXPECT_EQ(err(), unsigned(DMS_GPU_ERR_HOST_DMA));
	wr(DMS_GPU_REG_CRC_LIST_COUNT, 0); // single-range jobs again
	EXPECT_EQ(crc(0x300000, 4096, 0), devmemsim::crc32c_update(0, &(*mem_)[0x300000], 4096));
}

TEST_F(Gpu, OutOfRangeAndFaultsSetErrorStatusAndInterrupt)
{
	const uint64_t size = dms_gpu_mem_size(node_);
	copy(size - 100, kHostBase, 4096, DMS_GPU_COPY_TO_HOST);
	EXPECT_EQ(rd(DMS_GPU_REG_COPY_STATUS),
		  DMS_GPU_STATUS_DONE | DMS_GPU_STATUS_ERROR |
			  DMS_GPU_ERR_DEV_RANGE << DMS_GPU_STATUS_ERR_SHIFT);
	EXPECT_TRUE(rd(DMS_GPU_REG_IRQ_STATUS) & DMS_GPU_IRQ_ERROR);
	EXPECT_FALSE(host_->irqs.empty());

	copy(0, 0xfee00000, 4096, DMS_GPU_COPY_TO_HOST); // not host RAM
	EXPECT_EQ(rd(DMS_GPU_REG_COPY_STATUS) >> DMS_GPU_STATUS_ERR_SHIFT & 0xff,
		  unsigned(DMS_GPU_ERR_HOST_DMA));
	copy(0, kHostBase, 0, DMS_GPU_COPY_TO_HOST);
	EXPECT_EQ(rd(DMS_GPU_REG_COPY_STATUS) >> DMS_GPU_STATUS_ERR_SHIFT & 0xff,
		  unsigned(DMS_GPU_ERR_BAD_LEN));
	crc(UINT64_MAX - 10, 100, 0); // wraps: out of range, no crash
	EXPECT_EQ(rd(DMS_GPU_REG_CRC_STATUS) >> DMS_GPU_STATUS_ERR_SHIFT & 0xff,
		  unsigned(DMS_GPU_ERR_DEV_RANGE));
	EXPECT_NE(stats().find("\"errors\": 4"), std::string::npos) << stats();
}

TEST_F(Gpu, MaskedInterruptsStayPending)
{
	wr(DMS_GPU_REG_IRQ_MASK, 0);
	copy(0, kHostBase, 64, DMS_GPU_COPY_TO_HOST);
	EXPECT_TRUE(host_->irqs.empty());
	EXPECT_EQ(rd(DMS_GPU_REG_IRQ_STATUS), DMS_GPU_IRQ_COPY_DONE);
	wr(DMS_GPU_REG_IRQ_MASK, DMS_GPU_IRQ_COPY_DONE); // unmasking delivers it
	run();						 // (posted by the register write)
	EXPECT_EQ(host_->irqs.size(), 1u);
	wr(DMS_GPU_REG_IRQ_STATUS, DMS_GPU_IRQ_COPY_DONE);
	EXPECT_EQ(rd(DMS_GPU_REG_IRQ_STATUS), 0u);
}
