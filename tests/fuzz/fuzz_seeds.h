// SPDX-License-Identifier: MIT
// Seed inputs for fuzz-node, written at build time (fuzz-node
// --write-seeds=DIR): a driver-like NIC and GPU session, and one input per
// hostile action the hardening review found (ring settings changed after
// enable, MSIs at the devices' own doorbells, an interrupt storm, the GPU BAR
// going away under P2P DMA, a header buffer smaller than the headers, a peer
// that resets the NIC while it sends), and the second pair's: frames across the
// pairs, device-to-device MSIs, runts, the v1.7-v1.9 registers. The fuzzer
// mutates from there.
#ifndef DEVMEMSIM_TESTS_FUZZ_SEEDS_H
#define DEVMEMSIM_TESTS_FUZZ_SEEDS_H

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "devmemsim/gpu_regs.h"
#include "devmemsim/nic_regs.h"
#include "fuzz_host.h"
#include "fuzz_ops.h"

namespace fuzz
{

// Register and engine helpers in the input encoding.
inline Writer &reg(Writer &w, unsigned dev, uint64_t off, uint64_t val)
{
	return w.op(kRegWrite).u8(dev).u16(off).u8(2).u64(val);
}
// Queue 0..3: RX and TX on, armed, header split + checksum + RSS.
inline Writer &queue(Writer &w, unsigned q, unsigned hbuf_sel = 2, uint8_t rx_ctrl = 0x7)
{
	w.op(kQueueSetup).u8(q).u8(2).u8(hbuf_sel).u8(3).u8(0xf | rx_ctrl << 4);
	return w.op(kRxPost).u8(q).u8(60);
}
inline Writer &msix(Writer &w, unsigned dev, unsigned vector, Target t, uint32_t off, uint32_t data)
{
	return w.op(kMsix).u8(dev).u8(vector).u8(t).u32(off).u32(data).u8(0);
}
// A frame: a = 0 UDP/IPv4, + 1|2 VLAN tags, + 4 IPv6, + 0x10 TCP, bits
// 7:5 IPv4 options (7: 40 bytes); b % 11: TCP option words; payload bytes.
inline Writer &frame(Writer &w, uint8_t a, uint8_t b, uint16_t payload)
{
	return w.op(kWireFrame).u8(a).u8(b).u16(payload).u16(0).u8(0).u8(0);
}
inline Writer &step(Writer &w, uint8_t code)
{
	return w.op(kStep).u8(code);
}

// What a driver does: rings, traffic both ways, GPU engines.
inline void driver_seeds(std::vector<std::vector<uint8_t>> &out)
{
	Writer nic; // a driver session: every vector to the APIC, traffic both ways
	for (unsigned v = 0; v < 5; v++)
		msix(nic, DMS_DEV_NIC, v, kToApic, 0, 0x4000 + v);
	queue(queue(nic, 0), 1);
	for (uint8_t a : {0x00, 0x04, 0x01, 0x06, 0x60, 0x10, 0x14, 0xf2})
		frame(nic, a, 3, uint16_t(100 + a * 20));
	reg(nic, DMS_DEV_NIC, DMS_NIC_REG_MTU, 9000);
	frame(nic, 0, 0, 8900);
	step(nic, 0x45);
	nic.op(kTxPost).u8(0).u8(0).u8(2).u16(1400).u8(3).u8(4);
	nic.op(kPeer).u8(1).op(kTxPost).u8(1).u8(4).u8(0).u16(200).u8(1).u8(4);
	// TSO IPv4 (~64 KiB, payload in GPU memory), TSO IPv6, USO, a bad header
	// length, each on its own queue (a queue's TX data area is shared)
	queue(queue(nic, 2), 3).op(kBars).u8(1);
	nic.op(kTxSegPost).u8(0).u16(1448).u8(0x49).u8(0).u8(0x10).u8(2).u16(8000).u8(5).u8(0);
	nic.op(kTxSegPost).u8(1).u16(1200).u8(0x02).u8(0).u8(0x14).u8(2).u16(5000).u8(3).u8(0);
	nic.op(kTxSegPost).u8(2).u16(1000).u8(0x04).u8(0).u8(0x00).u8(2).u16(4000).u8(2).u8(0);
	nic.op(kTxSegPost).u8(3).u16(1448).u8(0x01).u8(0xfc).u8(0x10).u8(2).u16(3000).u8(1).u8(0);
	step(nic, 0x8a).op(kStats);
	out.push_back(nic.out);

	Writer gro; // hardware GRO: flows interleaved, a hole, PSH, FIN, the timer
	queue(gro, 0, 2, 0x7);
	for (unsigned i = 0; i < 40; i++) {
		gro.op(kSegment).u8(i % 6).u8(i == 20 ? 0x40 : 0).u16(1448);
		if (i == 20)
			gro.u16(3000); // a hole in flow 0
	}
	gro.op(kSegment).u8(1).u8(0x20).u16(100);
	gro.op(kSegment).u8(2).u8(0x80).u16(0).u8(0x11);
	step(gro, 0x45);
	queue(gro, 1, 2, 0x7);
	for (unsigned i = 0; i < 8; i++)
		gro.op(kSegment).u8(8).u8(0).u16(1448);
	step(step(gro, 0x81), 0xc1).op(kStats);
	out.push_back(gro.out);

	Writer pack; // v1.9 PACK: 512-byte payload buffers shared, jumbo frames, GRO
	pack.op(kQueueSetup).u8(0).u8(0x82).u8(2).u8(0).u8(0xf | 0x7 << 4);
	pack.op(kRxPost).u8(0).u8(60);
	reg(pack, DMS_DEV_NIC, DMS_NIC_REG_MTU, 9000);
	for (unsigned i = 0; i < 12; i++)
		frame(pack, uint8_t(i & 1 ? 0x10 : 0x00), 1, uint16_t(60 + 170 * i));
	frame(pack, 0, 0, 8900);
	for (unsigned i = 0; i < 12; i++)
		pack.op(kSegment).u8(3).u8(0).u16(700);
	step(step(pack, 0x81), 0xc1).op(kStats);
	out.push_back(pack.out);

	Writer drop; // v1.10 DROP_EN: TCP to queue 1, which has no buffers; UDP to queue 0
	queue(drop, 0);
	drop.op(kQueueSetup).u8(1).u8(2).u8(0x82).u8(3).u8(0xf | 0x7 << 4);
	drop.op(kRssSetup).u8(0).u8(7).u8(0).u8(0x78).u8(0).u32(0x6d5a56da).u8(0);
	drop.u8(0x00).u8(1).u8(0); // rule 0: every TCP/IPv4 frame to queue 1
	for (unsigned i = 0; i < 16; i++)
		frame(drop, uint8_t(i & 1 ? 0x10 : 0x00), 2, uint16_t(100 + 90 * i));
	for (unsigned i = 0; i < 8; i++)
		drop.op(kSegment).u8(1).u8(0).u16(1448);
	step(drop, 0x81).op(kRxPost).u8(1).u8(60);
	frame(frame(drop, 0x10, 2, 500), 0x00, 2, 500);
	step(step(drop, 0x81), 0xc1).op(kStats);
	out.push_back(drop.out);

	Writer rss; // contexts with rules to them, symmetric hashing, flows both ways
	queue(queue(queue(rss, 0), 1), 2);
	rss.op(kRssSetup).u8(3).u8(1).u8(1).u8(0x7b).u8(0).u32(0x6d5a56da).u8(2).u8(0x20).u8(0x41);
	rss.u8(0x04).u8(1).u8(3);
	rss.op(kRssSetup).u8(0).u8(2).u8(2).u8(0xfc).u8(1).u32(0x255b0ec2).u8(1).u8(0x61);
	rss.u8(0x0d).u8(0).u8(0);
	rss.op(kRssSetup).u8(70).u8(0x83).u8(3).u8(0x05).u8(9).u32(0).u8(0).u8(0x12).u8(0).u8(200);
	for (uint8_t a : {0x10, 0x14, 0x00, 0x04, 0x60})
		frame(rss, a, 2, uint16_t(64 + a));
	step(rss, 0x45).op(kStats);
	out.push_back(rss.out);
	Writer timing; // v1.6: clock set and trimmed, RX/TX stamps, rate limits
	queue(queue(timing, 0), 1);
	timing.op(kTiming).u8(0).u8(0).u32(DMS_NIC_PTP_RX_ALL).u16(100);
	timing.op(kTiming).u8(2).u8(0).u32(0x10).u16(100);
	timing.op(kTiming).u8(3).u8(0).u32(DMS_NIC_PTP_CMD_SET).u16(100);
	timing.op(kTiming).u8(4).u8(0).u32(0x80000000u).u16(1000);
	timing.op(kTiming).u8(9).u8(0).u32(800).u16(0);	   // queue 0: 800 kbit/s
	timing.op(kTiming).u8(5).u8(0).u32(100000).u16(0); // device: 100 Mbit/s
	for (uint8_t i = 0; i < 6; i++) {
		timing.op(kTxPost).u8(i & 1).u8(0x10).u8(3).u16(1400).u8(1).u8(0x40);
		frame(timing, 0x10, 3, 200);
	}
	step(step(timing, 0x8a), 0xc1).op(kTiming).u8(7).u8(0).u32(0).u16(5000).op(kStats);
	out.push_back(timing.out);

	Writer gpu; // copies both ways, CRC, a gather list, interrupts on
	msix(gpu, DMS_DEV_GPU, 0, kToApic, 0, 0x4100);
	reg(gpu, DMS_DEV_GPU, DMS_GPU_REG_IRQ_MASK, 7);
	gpu.op(kRamWrite).u32(0x1000).u16(16).u64(0x0123456789abcdefull).u64(42);
	gpu.op(kGpuJob).u8(2).u32(0x100).u8(kToRam).u32(0x1000).u32(4096);
	step(gpu, 0x81);
	gpu.op(kGpuJob).u8(0).u32(0x100).u8(kToRam).u32(0x9000).u32(8192);
	gpu.op(kGpuJob).u8(1).u32(0).u8(0).u32(0).u32(65536);
	step(gpu, 0x81);
	gpu.op(kCrcList).u16(3).u32(0).u16(100).u32(0x800).u16(4000).u32(0xff000).u16(64);
	step(gpu, 0xc1).op(kStats);
	out.push_back(gpu.out);
}

// The hardening review's hostile actions, one input each.
inline void hostile_seeds(std::vector<std::vector<uint8_t>> &out)
{
	// 1: RXQ_PBUF_SIZE = 0 after enable, then a frame (no RSS: to queue 0)
	Writer pbuf0;
	queue(pbuf0, 0, 2, 1);
	reg(pbuf0, DMS_DEV_NIC, DMS_NIC_Q_BASE(0) + DMS_NIC_RXQ_PBUF_SIZE, 0);
	frame(pbuf0, 0, 0, 1000);
	step(pbuf0, 0x81);
	out.push_back(pbuf0.out);

	Writer gpu_self; // 2: the GPU's MSI at its own doorbell, zero-length jobs
	msix(gpu_self, DMS_DEV_GPU, 0, kToGpuRegs, DMS_GPU_REG_COPY_DOORBELL, 1);
	reg(gpu_self, DMS_DEV_GPU, DMS_GPU_REG_IRQ_MASK, 7);
	gpu_self.op(kGpuJob).u8(0).u32(0).u8(kToRam).u32(0).u32(0);
	step(step(gpu_self, 0x01), 0xc1);
	msix(gpu_self, DMS_DEV_GPU, 0, kToGpuRegs, DMS_GPU_REG_CRC_DOORBELL, 1);
	gpu_self.op(kGpuJob).u8(1).u32(0).u8(0).u32(0).u32(0);
	step(step(gpu_self, 0x01), 0xc1);
	out.push_back(gpu_self.out);

	Writer storm; // 3: ITR 1 ns, MSI at Q_IRQ_ARM, one unconsumed TX completion
	queue(storm, 0);
	reg(storm, DMS_DEV_NIC, DMS_NIC_REG_ITR_NS, 1);
	for (unsigned v = 0; v < 2; v++)
		msix(storm, DMS_DEV_NIC, v, kToNicRegs, DMS_NIC_Q_BASE(0) + DMS_NIC_Q_IRQ_ARM, 1);
	storm.op(kTxPost).u8(0).u8(0).u8(0).u16(64).u8(1).u8(0);
	step(step(storm, 0xc5), 0xc5);
	out.push_back(storm.out);
}

// The hardening review's hostile actions on the memory side: the GPU BAR or the whole
// GPU gone under traffic, bus mastering off, small header buffers, faults.
inline void hostile_memory_seeds(std::vector<std::vector<uint8_t>> &out)
{
	Writer unplug; // 4: GPU memory BAR unmapped, NIC buffers pointing into it
	queue(unplug, 0, 2, 1);
	for (unsigned i = 0; i < 8; i++)
		unplug.op(kRamWrite).u32(0x1000 + 16 * i).u16(16).u64(kGpuMemBar + 4096 * i).u64(i);
	unplug.op(kBars).u8(0);
	frame(frame(unplug, 0, 0, 1000), 0, 0, 2000);
	step(unplug, 0x81).op(kBars).u8(1);
	frame(unplug, 0, 0, 1000);
	step(unplug, 0x81);
	out.push_back(unplug.out);

	Writer replug; // 4 again: the GPU unplugged under a job and P2P traffic
	queue(replug, 0, 2, 1);
	for (unsigned i = 0; i < 8; i++)
		replug.op(kRamWrite).u32(0x1000 + 16 * i).u16(16).u64(kGpuMemBar + 4096 * i).u64(i);
	replug.op(kGpuJob).u8(1).u32(0).u8(0).u32(0).u32(kGpuMemSize);
	frame(frame(replug, 0, 0, 1000), 0, 0, 1000);
	replug.op(kReplug).u8(DMS_DEV_GPU);
	step(frame(replug, 0, 0, 1000), 0x81);
	replug.op(kBusMaster).u8(DMS_DEV_NIC); // bus mastering off, frames keep coming
	step(frame(replug, 0, 0, 1000), 0x81);
	replug.op(kReplug).u8(DMS_DEV_NIC);
	step(frame(replug, 0, 0, 1000), 0x81);
	out.push_back(replug.out);

	Writer hbuf; // 5: 64-byte header buffers, 142 bytes of headers
	queue(hbuf, 0, 0, 1);
	frame(frame(hbuf, 0xf2, 10, 500), 0xf1, 10, 500); // 142, 138 header bytes
	step(hbuf, 0x81);
	out.push_back(hbuf.out);

	Writer faults; // every fault injected at once under NIC and GPU traffic
	faults.op(kFaults).u32(0x3ffff);
	for (uint8_t v : {20, 20, 20, 20, 10, 7, 10, 3, 50, 20, 100, 20, 20, 40, 40, 5, 60, 9})
		faults.u8(v);
	msix(faults, DMS_DEV_NIC, 1, kToApic, 0, 1);
	msix(faults, DMS_DEV_GPU, 0, kToApic, 0, 2);
	reg(faults, DMS_DEV_GPU, DMS_GPU_REG_IRQ_MASK, 7);
	queue(faults, 0, 2, 3); // split + checksum
	faults.op(kPeer).u8(1);
	for (unsigned i = 0; i < 6; i++) {
		frame(faults, 0x10, uint8_t(i), uint16_t(200 * i + 100));
		faults.op(kTxPost).u8(0).u8(0x10).u8(1).u16(500).u8(2).u8(4);
		faults.op(kGpuJob).u8(uint8_t(i)).u32(0).u8(kToRam).u32(0x9000).u32(4096);
		step(faults, 0x45);
	}
	out.push_back(faults.out);

	Writer peer; // a synchronous peer resets the NIC while it sends
	queue(peer, 0, 2, 1);
	peer.op(kPeer).u8(2).op(kTxPost).u8(0).u8(0).u8(0).u16(300).u8(2).u8(0);
	peer.op(kTxPost).u8(0).u8(0).u8(0).u16(300).u8(2).u8(0);
	step(step(peer, 0x81), 0x81);
	out.push_back(peer.out);

	Writer wrap; // a payload buffer at the top of the address space
	queue(wrap, 0, 2, 1);
	wrap.op(kRxPost).u8(0).u8(1);
	wrap.op(kRamWrite).u32(0x1000).u16(16).u64(0xffffffffffffff00ull).u64(0);
	frame(wrap, 0x10, 0, 1000);
	step(wrap, 0x81).op(kStats);
	out.push_back(wrap.out);

	Writer foreign; // ids of devices the node does not have, at both ends
	for (uint32_t id : {0u, 1u, 0x7ffffffdu, 0x40000000u})
		foreign.op(kForeignId).u32(id).u16(0).u64(1);
	queue(foreign, 0, 2, 1);
	frame(foreign, 0x10, 0, 1000);
	step(foreign, 0x81).op(kStats);
	out.push_back(foreign.out);
}

// The second pair, device-to-device MSIs, runts and the v1.7-v1.9
// registers (fuzz_ops.h: kNicReg indexes fuzz_node.cc's register table).
inline void pair_seeds(std::vector<std::vector<uint8_t>> &out)
{
	Writer pairs; // NIC 1's queues, frames across the pairs, GPU 1's jobs
	queue(queue(pairs, 4), 0);
	pairs.op(kPeer).u8(3 | 1 << 2).op(kPeer).u8(3); // each NIC sends to the other
	for (uint8_t a : {0x00, 0x10, 0x14})
		pairs.op(kWireFrame).u8(a).u8(2).u16(700).u16(0).u8(1 << 2).u8(0);
	pairs.op(kTxPost).u8(4).u8(0x10).u8(2).u16(900).u8(2).u8(4);
	pairs.op(kTxPost).u8(0).u8(0x00).u8(2).u16(300).u8(1).u8(4);
	pairs.op(kGpuJob).u8(4 | 2).u32(0x100).u8(kToGpuMem).u32(0x1000).u32(4096);
	pairs.op(kGpuJob).u8(4).u32(0x100).u8(kToRam).u32(0x9000).u32(8192);
	step(step(pairs, 0x81), 0xc1).op(kMacStats).u8(1).op(kStats);
	out.push_back(pairs.out);

	Writer d2d; // GPU 1 rings NIC 0's queue arm, NIC 0's vector rings GPU 1's doorbell
	queue(d2d, 0);
	msix(d2d, DMS_GPU(1), 0, kToNicRegs, DMS_NIC_Q_BASE(0) + DMS_NIC_Q_IRQ_ARM, 1);
	msix(d2d, DMS_NIC(0), 0, kToGpuRegs, (1u << 24) | DMS_GPU_REG_COPY_DOORBELL, 1);
	msix(d2d, DMS_NIC(0), 1, kToGpuRegs, (1u << 24) | DMS_GPU_REG_IRQ_MASK, 7);
	reg(d2d, DMS_GPU(1), DMS_GPU_REG_IRQ_MASK, 7);
	d2d.op(kGpuJob).u8(4).u32(0).u8(kToRam).u32(0).u32(0);
	d2d.op(kTxPost).u8(0).u8(0).u8(0).u16(64).u8(1).u8(0);
	for (unsigned i = 0; i < 4; i++)
		step(step(d2d, 0x01), 0x45);
	out.push_back(d2d.out);

	Writer tiny; // empty and runt frames to both NICs, cut and raw
	queue(queue(tiny, 0, 2, 3), 4, 2, 3);
	for (uint8_t sel = 0; sel < sizeof(kTinyLens); sel++) {
		tiny.op(kWireTiny).u8(uint8_t((sel & 1) << 1)).u8(sel).u8(0x10).u8(0).u16(100);
		tiny.op(kWireTiny).u8(1).u8(sel); // raw: all ones, a broadcast
		for (unsigned i = 0; i < kTinyLens[sel]; i++)
			tiny.u8(0xff);
	}
	step(tiny, 0x45).op(kMacStats).u8(0).op(kMacStats).u8(1).op(kStats);
	out.push_back(tiny.out);

	Writer regs; // every named v1.7-v1.9 register written, then read, on both NICs
	queue(regs, 0);
	for (uint8_t sel = 0; sel < 49; sel++)
		for (uint8_t nic : {0, 4})
			regs.op(kNicReg).u8(nic).u8(sel).u8(sel).u8(2).u32(sel + 1u);
	for (unsigned i = 0; i < 4; i++)
		regs.op(kTxPost).u8(0).u8(0x10).u8(1).u16(1400).u8(1).u8(0x40);
	step(regs, 0x8a);
	for (uint8_t sel = 0; sel < 49; sel++)
		regs.op(kNicReg).u8(0).u8(sel).u8(1).u8(1).u32(0);
	step(regs, 0x45).op(kMacStats).u8(0).op(kStats);
	out.push_back(regs.out);
}

inline std::vector<std::vector<uint8_t>> seeds()
{
	std::vector<std::vector<uint8_t>> out;
	driver_seeds(out);
	hostile_seeds(out);
	hostile_memory_seeds(out);
	pair_seeds(out);
	return out;
}

// DIR/seed-N, and DIR/list: their absolute paths, comma-separated, for
// libFuzzer's -seed_inputs=@DIR/list (seeds that no run writes into).
inline bool write_seeds(const std::string &dir)
{
	mkdir(dir.c_str(), 0755);
	char *abs = realpath(dir.c_str(), nullptr);
	if (!abs)
		return false;
	std::string list;
	unsigned i = 0;
	for (const std::vector<uint8_t> &s : seeds()) {
		const std::string path = std::string(abs) + "/seed-" + std::to_string(i++);
		FILE *f = std::fopen(path.c_str(), "wb");
		if (!f || std::fwrite(s.data(), 1, s.size(), f) != s.size() || std::fclose(f))
			return false;
		list += (list.empty() ? "" : ",") + path;
	}
	std::free(abs);
	FILE *f = std::fopen((dir + "/list").c_str(), "w");
	return f && std::fputs(list.c_str(), f) >= 0 && std::fclose(f) == 0;
}

} // namespace fuzz

#endif
