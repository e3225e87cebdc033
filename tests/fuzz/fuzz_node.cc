// SPDX-License-Identifier: MIT
// libFuzzer target over the whole node (NIC, GPU, fabric, SystemC kernel)
// through libdevmemsim's C ABI, under ASan/UBSan: the input is a sequence
// of guest, wire and host actions (fuzz_ops.h) played against the fake
// host of fuzz_host.h; after every action the node must hold together
// (docs/fuzzing.md lists the invariants). One node per process: DMS_FUZZ_MODE=functional|timed
// picks the simulation mode; each input starts from reset devices and a clean machine, and
// simulated time only moves forward. docs/fuzzing.md.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "devmemsim/devmemsim.h"
#include "devmemsim/gpu_regs.h"
#include "devmemsim/nic_desc.h"
#include "devmemsim/nic_regs.h"
#include "frames.h"
#include "fuzz_host.h"
#include "fuzz_ops.h"
#include "fuzz_seeds.h"

using namespace fuzz;

namespace
{

Host *g_host;
unsigned g_queues, g_pairs;
bool g_trace; // DMS_FUZZ_TRACE=1: the operations of an input on stderr
// In this input: the link went down, or faults may drop sent frames (the NIC
// completes and counts them, the wire never sees them).
bool g_tx_may_vanish;

const char *const kOpNames[kOpCount] = {
	"reg-write", "reg-read",   "ram-write", "queue-setup", "rx-post",     "tx-post",
	"wire-raw",  "wire-frame", "msix",	"step",	       "link",	      "nic-reset",
	"stats",     "gpu-job",	   "crc-list",	"bars",	       "peer",	      "bus-master",
	"replug",    "gpu-reset",  "faults",	"foreign-id",  "tx-seg-post", "wire-segment",
	"rss-setup", "timing",	   "nic-reg",	"wire-tiny",   "mac-stats"};

// A device id from one input byte: DMS_NIC(i) or DMS_GPU(i) of the node's
// pairs (0 and 1 name pair 0's, as with one pair).
dms_dev dev_of(uint8_t b)
{
	return dms_dev(b % (2 * g_pairs));
}
// A NIC and one of its queues from one byte (0..3: NIC 0's).
struct QSel {
	unsigned nic, q;
};
QSel qsel(uint8_t b)
{
	const unsigned i = b % (g_queues * g_pairs);
	return {i / g_queues, i % g_queues};
}

// Queue q's rings and buffers in RAM (RxPost/TxPost/QueueSetup): one MiB
// each (four per NIC), rings of up to 256 entries.
struct Layout {
	uint64_t hring, pring, rcmpl, tdesc, tcmpl, hdata, pdata, tdata;
};
Layout layout(unsigned nic, unsigned q)
{
	const uint64_t b = kRamBase + nic * kRamPerPair + (q % 4) * 0x100000ull;
	return {b,	    b + 0x1000, b + 0x2000,  b + 0x4000,
		b + 0x5000, b + 0x8000, b + 0x20000, b + 0xc0000};
}
struct QueueState {
	unsigned log2 = 4, hbuf = 256, pbuf = 4096, htail = 0, ptail = 0, ttail = 0;
	// Set up by kQueueSetup, and its buffer rings hold what kRxPost wrote
	// (rings): the harness knows every RX buffer it gave the queue.
	bool known = false;
	std::vector<uint8_t> rings;
};
QueueState g_q[kMaxPairs][4];
constexpr unsigned kHdrSlots = 64;
uint64_t payload_slots(unsigned nic, unsigned q)
{
	return (layout(nic, q).tdata - layout(nic, q).pdata) / g_q[nic][q].pbuf;
}

// No byte outside the buffer the guest gave: a NIC write into a known
// queue's header or payload buffer area stays inside one buffer.
void check_in_one_buffer(uint64_t addr, uint64_t len, uint64_t area, uint64_t size, uint64_t n)
{
	if (addr + len <= area || addr >= area + size * n)
		return;
	if (addr < area || (addr - area) / size != (addr + len - 1 - area) / size)
		fail("NIC wrote [%#llx, +%llu) across the end of an RX buffer", addr, len);
}
void check_nic_ram_write(unsigned nic, uint64_t addr, uint64_t len)
{
	for (unsigned q = 0; q < g_queues && q < 4; q++) {
		QueueState &s = g_q[nic][q];
		if (!s.known || !len)
			continue;
		const Layout l = layout(nic, q);
		// Anything else that wrote the rings (the input, a GPU job, an
		// MSI) may have given the NIC other buffers.
		if (std::memcmp(s.rings.data(), g_host->ram() + (l.hring - kRamBase),
				s.rings.size())) {
			s.known = false;
			continue;
		}
		check_in_one_buffer(addr, len, l.hdata, s.hbuf, kHdrSlots);
		check_in_one_buffer(addr, len, l.pdata, s.pbuf, payload_slots(nic, q));
	}
}
// Raw writes the harness cannot follow end what it knows of a queue.
void forget_queues(dms_dev dev, uint64_t off, unsigned size)
{
	for (unsigned q = 0; q < 4 && !DMS_DEV_IS_GPU(dev); q++)
		if (off + size > DMS_NIC_Q_BASE(q) + DMS_NIC_RXQ_CTRL &&
		    off < DMS_NIC_Q_BASE(q) + DMS_NIC_RXQ_CTRL + 4)
			g_q[DMS_DEV_INDEX(dev)][q].known = false;
}

// Targets in pair (off >> 24) % K past the first, so small offsets stay
// at pair 0's.
uint64_t address(Target t, uint64_t off, uint64_t raw)
{
	const unsigned p = unsigned(off >> 24) % g_pairs;
	switch (t % kTargetCount) {
	case kToRam:
		return kRamBase + off % g_host->ram_size();
	case kToGpuMem:
		return Host::gpu_bar(p) + (off & 0xffffff) % (kGpuMemSize + 64);
	case kToNicRegs:
		return Host::nic_regs(p) + (off & 0xffffff) % DMS_NIC_REGS_SIZE;
	case kToGpuRegs:
		return Host::gpu_regs(p) + (off & 0xffffff) % DMS_GPU_REGS_SIZE;
	case kToApic:
		return kMsiBase + (off & 0xff000);
	default:
		return raw;
	}
}

void nic_wr(QSel s, uint32_t off, uint32_t v)
{
	dms_reg_write(g_host->node(), DMS_NIC(s.nic), DMS_NIC_Q_BASE(s.q) + off, v, 4);
}

// A plausible frame from 5 spec bytes (frames::build).
std::vector<uint8_t> build_frame(Reader &r)
{
	frames::Spec s;
	const uint8_t a = r.u8(), b = r.u8();
	s.vlans = a % 3;
	s.ipv6 = a & 4;
	s.proto = (a & 0x18) == 0 ? 17 : (a & 0x18) == 8 ? uint8_t(r.u8()) : 6;
	s.ip_options = s.ipv6 ? 0 : 4 * ((a >> 5) * 10 / 7); // up to 40 bytes
	s.tcp_options = 4 * (b % 11);
	s.frag = (b & 0x80) ? uint16_t(0x2000 | b) : 0;
	s.payload = r.u16() % 9100;
	s.sport = uint16_t(1000 + (b & 7));
	s.dport = uint16_t(80 + (a & 3));
	return frames::build(s);
}

void op_reg_write(Reader &r)
{
	const dms_dev dev = dev_of(r.u8());
	const uint64_t off = r.u16();
	const unsigned size = 1u << (r.u8() % 4);
	const uint64_t val = r.u(8);
	if (g_trace)
		std::fprintf(stderr, "  %s +%#llx = %#llx (%u bytes)\n",
			     dms_dev_name(g_host->node(), dev), (unsigned long long)off,
			     (unsigned long long)val, size);
	forget_queues(dev, off, size); // RXQ_CTRL: the queue may latch other settings
	dms_reg_write(g_host->node(), dev, off, val, size);
}

void op_ram_write(Reader &r)
{
	const uint64_t off = r.u32() % g_host->ram_size();
	std::vector<uint8_t> b = r.bytes(r.u16() % 512);
	if (g_trace)
		std::fprintf(stderr, "  RAM +%#llx: %zu bytes\n", (unsigned long long)off,
			     b.size());
	std::copy_n(b.begin(), std::min<size_t>(b.size(), g_host->ram_size() - off),
		    g_host->ram() + off);
}

void op_queue_setup(Reader &r)
{
	const QSel q = qsel(r.u8());
	QueueState &s = g_q[q.nic][q.q];
	s = QueueState{};
	// bit 7: packed payload buffers (v1.9), bit 6: whole frames (v1.8)
	const uint8_t ring = r.u8();
	s.log2 = 4 + (ring & 0x3f) % 5;
	// bit 7: drop enable (v1.10)
	const uint8_t hsel = r.u8();
	s.hbuf = 64u << (hsel % 4);
	s.pbuf = 512u << (r.u8() % 4);
	const uint8_t en = r.u8();
	const Layout l = layout(q.nic, q.q);
	s.known = true;
	const uint8_t *rings = g_host->ram() + (l.hring - kRamBase);
	s.rings.assign(rings, rings + (l.rcmpl - l.hring));
	// Disable, write, enable: the setup is latched at enable.
	nic_wr(q, DMS_NIC_RXQ_CTRL, 0);
	nic_wr(q, DMS_NIC_TXQ_CTRL, 0);
	nic_wr(q, DMS_NIC_RXQ_RING_LOG2, s.log2);
	nic_wr(q, DMS_NIC_RXQ_HBUF_BASE_LO, uint32_t(l.hring));
	nic_wr(q, DMS_NIC_RXQ_PBUF_BASE_LO, uint32_t(l.pring));
	nic_wr(q, DMS_NIC_RXQ_CMPL_BASE_LO, uint32_t(l.rcmpl));
	nic_wr(q, DMS_NIC_RXQ_HBUF_SIZE, s.hbuf);
	nic_wr(q, DMS_NIC_RXQ_PBUF_SIZE, s.pbuf);
	nic_wr(q, DMS_NIC_RXQ_CTRL,
	       (en & 1) | (ring & 0x80 ? DMS_NIC_Q_PACK : 0) | (ring & 0x40 ? DMS_NIC_Q_WHOLE : 0) |
		       (hsel & 0x80 ? DMS_NIC_Q_DROP_EN : 0));
	nic_wr(q, DMS_NIC_TXQ_RING_LOG2, s.log2);
	nic_wr(q, DMS_NIC_TXQ_DESC_BASE_LO, uint32_t(l.tdesc));
	nic_wr(q, DMS_NIC_TXQ_CMPL_BASE_LO, uint32_t(l.tcmpl));
	nic_wr(q, DMS_NIC_TXQ_CTRL, (en >> 1) & 1);
	nic_wr(q, DMS_NIC_Q_IRQ_ARM, (en >> 2) & 1);
	if (en & 8) {
		// Hardware GRO whenever RX checksums are on; RSS picks its timeout.
		const uint32_t rx_ctrl = en >> 4;
		const dms_dev nic = DMS_NIC(q.nic);
		dms_reg_write(g_host->node(), nic, DMS_NIC_REG_RX_CTRL,
			      rx_ctrl | (rx_ctrl & DMS_NIC_RX_CSUM ? DMS_NIC_RX_GRO : 0), 4);
		dms_reg_write(g_host->node(), nic, DMS_NIC_REG_GRO_TIMEOUT_NS,
			      rx_ctrl & DMS_NIC_RX_RSS ? 50000 : 0, 4);
		dms_reg_write(g_host->node(), nic, DMS_NIC_REG_TX_CTRL, 1, 4);
	}
}

void op_rx_post(Reader &r)
{
	const QSel q = qsel(r.u8());
	QueueState &s = g_q[q.nic][q.q];
	const unsigned n = r.u8() % (1u << s.log2), mask = (1u << s.log2) - 1;
	const Layout l = layout(q.nic, q.q);
	for (unsigned i = 0; i < n; i++, s.htail++, s.ptail++) {
		const unsigned h = s.htail & mask, p = s.ptail & mask;
		dms_rx_buf hb{l.hdata + (h % kHdrSlots) * uint64_t(s.hbuf), uint16_t(h), {}};
		dms_rx_buf pb{l.pdata + (p % payload_slots(q.nic, q.q)) * uint64_t(s.pbuf),
			      uint16_t(p),
			      {}};
		std::memcpy(g_host->ram() + (l.hring + 16 * h - kRamBase), &hb, 16);
		std::memcpy(g_host->ram() + (l.pring + 16 * p - kRamBase), &pb, 16);
	}
	const uint8_t *rings = g_host->ram() + (l.hring - kRamBase);
	s.rings.assign(rings, rings + (l.rcmpl - l.hring));
	nic_wr(q, DMS_NIC_RXQ_HBUF_TAIL, s.htail & mask);
	nic_wr(q, DMS_NIC_RXQ_PBUF_TAIL, s.ptail & mask);
}

// Frame f cut into frags descriptors at the queue's TX tail (not rung);
// with gpu, every frag but the first reads GPU memory (devmem TX).
void post_chain(QSel q, const std::vector<uint8_t> &f, unsigned frags, unsigned flags, bool gpu)
{
	QueueState &s = g_q[q.nic][q.q];
	const unsigned mask = (1u << s.log2) - 1;
	const Layout l = layout(q.nic, q.q);
	const size_t n = std::min<size_t>(f.size(), kGpuMemSize / 4);
	const uint64_t gpu_off = q.q * (kGpuMemSize / 4);
	std::memcpy(g_host->ram() + (l.tdata - kRamBase), f.data(), n);
	uint8_t *mem = g_host->gpu_mem(q.nic); // NULL while unplugged
	if (gpu && mem)
		std::memcpy(mem + gpu_off, f.data(), n);
	for (unsigned i = 0; i < frags; i++, s.ttail++) {
		const size_t from = n * i / frags, to = n * (i + 1) / frags;
		dms_tx_desc d{};
		d.addr = (gpu && i ? Host::gpu_bar(q.nic) + gpu_off : l.tdata) + from;
		d.len = uint32_t(to - from);
		d.flags = uint16_t((i == 0 ? DMS_TX_F_SOP | (flags & DMS_TX_F_CSUM) |
						     (flags & 0x40 ? DMS_TX_F_TS : 0)
					   : 0) |
				   (i + 1 == frags ? DMS_TX_F_EOP : 0));
		if (flags & 0x80)
			d.flags = uint16_t(flags & 7);
		d.tag = uint16_t(s.ttail);
		std::memcpy(g_host->ram() + (l.tdesc + 16 * (s.ttail & mask) - kRamBase), &d, 16);
	}
}

// A v1.6 register (the PTP clock, the device's or a queue's rate limit)
// written with any value, after the host's time moved on by delta ns (the
// glue notes it before every access).
void op_timing(Reader &r)
{
	static const uint32_t kRegs[] = {
		DMS_NIC_REG_PTP_CTRL,  DMS_NIC_REG_PTP_SET_LO,	 DMS_NIC_REG_PTP_SET_HI,
		DMS_NIC_REG_PTP_CMD,   DMS_NIC_REG_PTP_ADJ_FINE, DMS_NIC_REG_TX_RATE_KBPS,
		DMS_NIC_REG_TX_BURST,  DMS_NIC_REG_PTP_TIME_LO,	 DMS_NIC_REG_FEC_CW_LO,
		DMS_NIC_TXQ_RATE_KBPS, DMS_NIC_TXQ_BURST};
	constexpr unsigned kGlobal = 9; // the rest are per queue
	const unsigned sel = r.u8() % (sizeof(kRegs) / sizeof(kRegs[0]));
	const QSel q = qsel(r.u8());
	const uint32_t val = r.u32();
	const uint64_t t = g_host->now() + r.u16();
	if (g_trace)
		std::fprintf(stderr, "  nic%u reg %#x (q%u) = %#x at host %llu ns\n", q.nic,
			     kRegs[sel], q.q, val, (unsigned long long)t);
	dms_node_set_time(g_host->node(), t);
	const dms_dev nic = DMS_NIC(q.nic);
	if (sel >= kGlobal)
		nic_wr(q, kRegs[sel], val);
	else if (kRegs[sel] == DMS_NIC_REG_PTP_TIME_LO || kRegs[sel] == DMS_NIC_REG_FEC_CW_LO)
		dms_reg_read(g_host->node(), nic, kRegs[sel], 8);
	else
		dms_reg_write(g_host->node(), nic, kRegs[sel], val, 4);
}

void op_tx_post(Reader &r)
{
	const QSel q = qsel(r.u8());
	const std::vector<uint8_t> f = build_frame(r);
	const unsigned frags = 1 + r.u8() % 20, flags = r.u8();
	post_chain(q, f, frags, flags, false);
	const QueueState &s = g_q[q.nic][q.q];
	nic_wr(q, DMS_NIC_TXQ_TAIL, s.ttail & ((1u << s.log2) - 1));
}

// A super-frame after a segmentation descriptor (TSO/USO): mss, the
// parsed header length moved by a signed byte, kind bits 0-2 (TCP4, TCP6,
// UDP; bit 7: the byte as raw flags), bit 3 payload frags in GPU memory,
// bit 6 the payload repeated up to ~64 KiB; then as kTxPost.
void op_tx_seg_post(Reader &r)
{
	const QSel q = qsel(r.u8());
	QueueState &s = g_q[q.nic][q.q];
	const unsigned mss = r.u16(), kind = r.u8();
	const int adj = int8_t(r.u8());
	std::vector<uint8_t> f = build_frame(r);
	const size_t hdr = devmemsim::parse_frame(f.data(), f.size()).split_off;
	if ((kind & 0x40) && f.size() > hdr)
		for (size_t i = f.size(); f.size() < 65000; i++)
			f.push_back(f[hdr + (i - hdr) % (f.size() - hdr)]);
	dms_tx_seg_desc sd{};
	sd.mss = uint16_t(mss);
	sd.hdr_len = uint16_t(int(hdr) + adj);
	sd.flags = uint16_t(kind & 0x80 ? kind : DMS_TX_F_SEG | (kind & 7) << 4);
	const unsigned mask = (1u << s.log2) - 1;
	std::memcpy(g_host->ram() + (layout(q.nic, q.q).tdesc + 16 * (s.ttail++ & mask) - kRamBase),
		    &sd, 16);
	const unsigned frags = 1 + r.u8() % 20, flags = r.u8();
	post_chain(q, f, frags, flags, kind & 8);
	nic_wr(q, DMS_NIC_TXQ_TAIL, s.ttail & mask);
}

// To NIC 0 unless length bits 15:14 (raw) or how bits 3:2 name another.
void op_wire(Reader &r, bool raw)
{
	std::vector<uint8_t> f;
	unsigned nic;
	if (raw) {
		const uint16_t len = r.u16();
		nic = (len >> 14) % g_pairs;
		f = r.bytes(len % 9200);
	} else {
		f = build_frame(r);
		const uint16_t at = r.u16();
		const uint8_t how = r.u8(), val = r.u8();
		nic = (how >> 2) % g_pairs;
		if (how & 1 && !f.empty())
			f[at % f.size()] ^= val;
		if (how & 2)
			f.resize(at % (f.size() + 1));
	}
	g_host->offer(nic, f.data(), f.size());
}

// An empty or tiny frame (runts, a bare or cut Ethernet header, 59/60
// bytes around the minimum frame), cut from a well-formed one or made of
// input bytes: what a broken or hostile peer sends.
void op_wire_tiny(Reader &r)
{
	const uint8_t how = r.u8();
	const size_t len = kTinyLens[r.u8() % sizeof(kTinyLens)];
	std::vector<uint8_t> f = how & 1 ? r.bytes(len) : build_frame(r);
	f.resize(len);
	g_host->offer((how >> 1) % g_pairs, f.data(), f.size());
}

// Next sequence number of each of the 16 flows op_wire_segment sends.
uint32_t g_seq[16];

// A TCP ACK segment of one of 16 flows, next in its sequence unless `how`
// asks for a hole, PSH, any flags, other TCP options or a bad checksum:
// what hardware GRO coalesces, and what ends an aggregate.
void op_wire_segment(Reader &r)
{
	const uint8_t flow = r.u8() % 16, how = r.u8();
	frames::Spec s;
	s.ipv6 = flow & 8;
	s.sport = uint16_t(1000 + (flow & 7));
	s.tcp_options = 4 * (how & 3);
	s.frag = 0x4000; // DF: the IPv4 ID (0) may stay fixed within an aggregate
	s.payload = r.u16() % 9000;
	std::vector<uint8_t> f = frames::build(s);
	const devmemsim::Parsed p = devmemsim::parse_frame(f.data(), f.size());
	uint32_t &seq = g_seq[flow];
	if (how & 0x40)
		seq += r.u16();
	for (int b = 0; b < 4; b++)
		f[p.l4_off + 4 + size_t(b)] = uint8_t(seq >> (24 - 8 * b));
	f[p.l4_off + 13] = (how & 0x80) ? r.u8() : uint8_t(0x10 | (how & 0x20 ? 0x08 : 0));
	seq += uint32_t(s.payload);
	devmemsim::l4_csum_fill(f.data(), p);
	if (how & 0x10)
		f.back() ^= 1;
	g_host->offer((how >> 2) % g_pairs, f.data(), f.size());
}

void op_msix(Reader &r)
{
	const dms_dev dev = dev_of(r.u8());
	const unsigned vector = r.u8() % 8;
	const Target t = Target(r.u8());
	const uint32_t off = r.u32();
	MsixEntry e;
	e.data = r.u32();
	e.addr = address(t, off, uint64_t(off) << 12);
	e.masked = r.u8() & 1;
	g_host->set_msix(dev, vector, e);
}

// Time: 0, a few ns, microseconds, or up to 10 ms at once.
void op_step(Reader &r)
{
	const uint8_t code = r.u8();
	const uint64_t unit[4] = {1, 100, 10000, 1000000};
	const uint64_t delta = (code & 0x3f) * unit[code >> 6];
	g_host->step(delta);
	g_host->run(8);
}

// On GPU (engine >> 2) % K.
void op_gpu_job(Reader &r)
{
	dms_node *n = g_host->node();
	const uint8_t engine = r.u8();
	const dms_dev gpu = DMS_GPU((engine >> 2) % g_pairs);
	const uint64_t dev = r.u32() % (kGpuMemSize + 4096);
	const Target t = Target(r.u8());
	const uint32_t off = r.u32();
	const uint64_t len = r.u32() % (2 * kGpuMemSize);
	if (engine & 1) {
		dms_reg_write(n, gpu, DMS_GPU_REG_CRC_DEV_LO, dev, 8);
		dms_reg_write(n, gpu, DMS_GPU_REG_CRC_LEN_LO, len, 8);
		dms_reg_write(n, gpu, DMS_GPU_REG_CRC_DOORBELL, 1, 4);
		return;
	}
	dms_reg_write(n, gpu, DMS_GPU_REG_COPY_DEV_LO, dev, 8);
	dms_reg_write(n, gpu, DMS_GPU_REG_COPY_HOST_LO, address(t, off, off), 8);
	dms_reg_write(n, gpu, DMS_GPU_REG_COPY_LEN_LO, len, 8);
	dms_reg_write(n, gpu, DMS_GPU_REG_COPY_CTRL, (engine >> 1) & 1, 4);
	dms_reg_write(n, gpu, DMS_GPU_REG_COPY_DOORBELL, 1, 4);
}

// A CRC gather list in RAM and the engine of GPU (count bit 15) started on it.
void op_crc_list(Reader &r)
{
	dms_node *n = g_host->node();
	const uint16_t raw = r.u16();
	const unsigned count = (raw & 0x7fff) % (DMS_GPU_CRC_LIST_MAX + 2);
	const dms_dev gpu = DMS_GPU((raw >> 15) % g_pairs);
	const uint64_t list = kRamBase + 0x3f0000;
	for (unsigned i = 0; i < count && !r.done() && i < 4096; i++) {
		dms_gpu_crc_range e{r.u32() % (kGpuMemSize + 64), r.u16() + 1u};
		std::memcpy(g_host->ram() + (list - kRamBase) + 16 * i, &e, 16);
	}
	dms_reg_write(n, gpu, DMS_GPU_REG_CRC_LIST_LO, list, 8);
	dms_reg_write(n, gpu, DMS_GPU_REG_CRC_LIST_COUNT, count, 4);
	dms_reg_write(n, gpu, DMS_GPU_REG_CRC_DOORBELL, 1, 4);
}

// Fault injection settings (dms_node_set_faults): the keys a mask selects,
// each with a value from one byte (rates v/255, the Nth access v, times in
// microseconds). Settings the model refuses leave the old ones.
void op_faults(Reader &r)
{
	static const struct {
		const char *key;
		char kind; // r: rate, n: count, t: time, b: bool
	} keys[] = {{"rx_drop_rate", 'r'},	    {"rx_corrupt_rate", 'r'},
		    {"tx_drop_rate", 'r'},	    {"tx_corrupt_rate", 'r'},
		    {"nic_dma_error_rate", 'r'},    {"nic_dma_error_nth", 'n'},
		    {"gpu_dma_error_rate", 'r'},    {"gpu_dma_error_nth", 'n'},
		    {"link_down_after_ns", 't'},    {"link_down_ns", 't'},
		    {"link_flap_period_ns", 't'},   {"nic_msi_drop_rate", 'r'},
		    {"gpu_msi_drop_rate", 'r'},	    {"nic_msi_delay_rate", 'r'},
		    {"gpu_msi_delay_rate", 'r'},    {"msi_delay_ns", 't'},
		    {"gpu_engine_error_rate", 'r'}, {"seed", 'n'},
		    {"nic_dma_error_rings", 'b'},   {"nic_lie_len_rate", 'r'},
		    {"nic_lie_id_rate", 'r'},	    {"nic_lie_dup_rate", 'r'},
		    {"nic_lie_gro_rate", 'r'},	    {"nic_lie_pack_rate", 'r'},
		    {"gpu_lie_status_rate", 'r'}};
	const uint32_t mask = r.u32();
	std::string settings;
	for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!(mask >> i & 1))
			continue;
		const unsigned v = r.u8();
		const std::string val = keys[i].kind == 'r'   ? std::to_string(v / 255.0)
					: keys[i].kind == 'n' ? std::to_string(v)
					: keys[i].kind == 'b' ? (v & 1 ? "true" : "false")
							      : std::to_string(v * 1000u);
		settings += std::string(settings.empty() ? "" : " ") + keys[i].key + "=" + val;
	}
	char err[256];
	if (dms_node_set_faults(g_host->node(), settings.c_str(), err, sizeof(err)) == 0)
		g_tx_may_vanish = true;
	else if (g_trace)
		std::fprintf(stderr, "  refused: %s\n", err);
}

// A device id the node does not have (its devices are ids 0 to 2K-1):
// every call that takes an id refuses it (devmemsim.h) and touches
// nothing, which the checks after the operation and ASan see; so do the
// NIC-only calls given a GPU and the GPU-only ones given a NIC.
void op_foreign_id(Reader &r)
{
	dms_node *n = g_host->node();
	const uint32_t first = 2 * g_pairs;
	const auto id = dms_dev(first + r.u32() % (DMS_DEV_ID_MAX - first + 1u));
	const uint16_t off = r.u16();
	const uint64_t val = r.u(8);
	static const dms_dev_ops ops = {nullptr, nullptr, nullptr, nullptr};
	const uint8_t bytes[64] = {};
	dms_reg_write(n, id, off, val, 4);
	dms_set_bus_master(n, id, int(val & 1));
	dms_set_bar(n, id, DMS_GPU_BAR_MEM, val, kGpuMemSize);
	dms_dev_detach(n, id);
	const int refused[] = {dms_dev_attach(n, id, &ops, nullptr),
			       dms_dev_receive(n, id, bytes, sizeof(bytes)),
			       dms_dev_set_link(n, id, 0),
			       dms_dev_set_mac(n, id, bytes),
			       dms_dev_reset(n, id),
			       dms_dev_set_memory(n, id, nullptr)};
	for (int ret : refused)
		if (ret != -1)
			fail("device id %llu: a call took it (returned %llu)", id, uint64_t(ret));
	if (dms_reg_read(n, id, off, 4) != UINT64_MAX || dms_dev_name(n, id) ||
	    dms_dev_mem_size(n, id) || dms_dev_num_queues(n, id) || dms_dev_num_vectors(n, id))
		fail("device id %llu: a query answered for it", id);
	const unsigned p = off % g_pairs;
	const int wrong_kind[] = {dms_dev_receive(n, DMS_GPU(p), bytes, sizeof(bytes)),
				  dms_dev_set_link(n, DMS_GPU(p), 0),
				  dms_dev_set_mac(n, DMS_GPU(p), bytes),
				  dms_dev_set_memory(n, DMS_NIC(p), nullptr)};
	for (int ret : wrong_kind)
		if (ret != -1)
			fail("pair %llu: a call took a device of the wrong kind (returned %llu)", p,
			     uint64_t(ret));
	if (dms_dev_num_queues(n, DMS_GPU(p)) || dms_dev_mem_size(n, DMS_NIC(p)))
		fail("pair %llu: a query answered for a device of the wrong kind", p);
}

// Every counter of the stats JSON: a plain non-negative integer below
// 2^53 (JSON-safe), and the NIC's frame counts within what crossed the
// host boundary since the last reset.
uint64_t counter(const std::string &js, const char *key)
{
	const size_t at = js.find(std::string("\"") + key + "\": ");
	return at == std::string::npos
		       ? 0
		       : std::strtoull(js.c_str() + at + std::strlen(key) + 4, nullptr, 10);
}
void check_nic_stats(const std::string &js, unsigned i);
void check_stats()
{
	const std::string js = dms_node_stats_json(g_host->node());
	for (size_t at = js.find(": "); at != std::string::npos; at = js.find(": ", at + 1)) {
		const char c = js[at + 2];
		if (c == '-' || (c >= '0' && c <= '9' &&
				 std::strtoull(js.c_str() + at + 2, nullptr, 10) >> 53)) {
			std::fprintf(stderr, "fuzz-node: ...%s...\n",
				     js.substr(at > 40 ? at - 40 : 0, 80).c_str());
			fail("negative or absurd counter at byte %llu of the stats JSON", at);
		}
	}
	for (unsigned i = 0; i < g_pairs; i++)
		check_nic_stats(js, i);
}

void check_nic_stats(const std::string &js, unsigned i)
{
	// After the PCIe section: its links are named as the devices are.
	size_t devs = js.find("\"pcie\": {") + 8;
	for (int depth = 0; devs < js.size(); devs++) {
		depth += js[devs] == '{' ? 1 : js[devs] == '}' ? -1 : 0;
		if (!depth)
			break;
	}
	const size_t nic = js.find(
		std::string("\"") + dms_dev_name(g_host->node(), DMS_NIC(i)) + "\": {", devs);
	if (nic == std::string::npos)
		fail("no counters of NIC %llu in the stats JSON", i);
	const std::string n = js.substr(nic);
	if (g_trace)
		std::fprintf(stderr, "  tx_frames %s, super-frames %s cut into %s, %s refused\n",
			     std::to_string(counter(n, "tx_frames")).c_str(),
			     std::to_string(counter(n, "tx_tso")).c_str(),
			     std::to_string(counter(n, "tx_tso_segs")).c_str(),
			     std::to_string(counter(n, "tx_tso_err")).c_str());
	if (counter(n, "rx_frames") > g_host->frames_taken(i))
		fail("NIC counted %llu frames received, %llu were given to it",
		     counter(n, "rx_frames"), g_host->frames_taken(i));
	if (counter(n, "rx_gro_segs") > g_host->frames_taken(i))
		fail("NIC counted %llu segments in coalesced frames, %llu frames were given to it",
		     counter(n, "rx_gro_segs"), g_host->frames_taken(i));
	if (counter(n, "rx_gro_segs") < 2 * counter(n, "rx_gro_frames"))
		fail("NIC counted %llu coalesced frames but only %llu segments in them",
		     counter(n, "rx_gro_frames"), counter(n, "rx_gro_segs"));
	// With the link down the NIC completes (and counts) frames it drops.
	if (counter(n, "tx_tso_segs") > counter(n, "tx_frames"))
		fail("NIC counted %llu segments, %llu frames sent", counter(n, "tx_tso_segs"),
		     counter(n, "tx_frames"));
	if (!g_tx_may_vanish && counter(n, "tx_frames") > g_host->frames_sent(i))
		fail("NIC counted %llu frames sent, %llu reached the wire", counter(n, "tx_frames"),
		     g_host->frames_sent(i));
}

// A NIC's IEEE 802.3 counters (v1.7), every one read as 64 bits: frames
// received OK since the input began (from the value then, or from 0 after
// a reset in between) are frames the host gave.
uint64_t g_rx_ok_base[kMaxPairs];
// Counter i, its _HI latched by the read of _LO (datasheet, "MAC").
uint64_t mstat(unsigned nic, unsigned i)
{
	const uint64_t lo = dms_reg_read(g_host->node(), DMS_NIC(nic), DMS_NIC_REG_MSTAT_LO(i), 4);
	return lo | dms_reg_read(g_host->node(), DMS_NIC(nic), DMS_NIC_REG_MSTAT_HI(i), 4) << 32;
}
uint64_t rx_ok(unsigned nic)
{
	return mstat(nic, DMS_NIC_MSTAT_RX_OK);
}

// The node between inputs: devices reset, machine cleared, idle.
void reset_node()
{
	dms_node *n = g_host->node();
	g_host->clear();
	for (unsigned i = 0; i < g_pairs; i++) {
		dms_dev_reset(n, DMS_NIC(i));
		dms_dev_set_link(n, DMS_NIC(i), 1);
		dms_dev_reset(n, DMS_GPU(i));
	}
	char err[256];
	if (dms_node_set_faults(n, "", err, sizeof(err)))
		fail("dms_node_set_faults(\"\") refused");
	g_host->run(1000);
	g_host->clear();
	for (auto &nic : g_q)
		for (QueueState &s : nic)
			s = QueueState{};
	std::fill(std::begin(g_seq), std::end(g_seq), 0);
	dms_node_reset_stats(n);
	g_host->reset_counts();
	for (unsigned i = 0; i < g_pairs; i++)
		g_rx_ok_base[i] = rx_ok(i);
	g_tx_may_vanish = false;
}

void op_link(Reader &r)
{
	const uint8_t b = r.u8();
	const bool up = b & 1;
	g_tx_may_vanish |= !up; // frames queued for the wire may be lost
	dms_dev_set_link(g_host->node(), DMS_NIC((b >> 1) % g_pairs), up);
}

void op_bus_master(Reader &r)
{
	const uint8_t b = r.u8();
	g_host->set_bus_master(dev_of(uint8_t((b & 1) | (b >> 2) << 1)), b & 2);
}

// One RSS context programmed (any context number, table size, transform:
// the device refuses what is out of range) and a flow steering rule for
// all TCP or UDP of one IP version to a queue or to a context; on NIC
// (ctx byte >> 7) % K.
void op_rss_setup(Reader &r)
{
	dms_node *n = g_host->node();
	const uint8_t sel = r.u8();
	const dms_dev dev = DMS_NIC((sel >> 7) % g_pairs);
	auto nic = [n, dev](uint32_t off, uint32_t v) { dms_reg_write(n, dev, off, v, 4); };
	nic(DMS_NIC_REG_RSS_CTX_SEL, sel);
	const uint8_t size = r.u8();
	nic(DMS_NIC_REG_RSS_CTX_INDIR_SIZE, size & 0x80 ? size : 1u << (size % 8));
	nic(DMS_NIC_REG_RSS_CTX_XFRM, r.u8() % 4);
	const uint8_t cls = r.u8();
	nic(DMS_NIC_REG_RSS_CTX_FIELDS(cls % DMS_NIC_RSS_CLASSES), cls >> 3);
	const uint8_t word = r.u8();
	nic(DMS_NIC_REG_RSS_CTX_KEY(word % DMS_NIC_RSS_KEY_WORDS), r.u32());
	for (unsigned i = r.u8() % 8; i > 0; i--) {
		const uint8_t e = r.u8();
		nic(DMS_NIC_REG_RSS_CTX_INDIR(e % DMS_NIC_RSS_INDIR_SIZE), e >> 5);
	}
	const uint8_t rule = r.u8(), queue = r.u8(), ctx = r.u8();
	nic(DMS_NIC_REG_NT_CTRL, DMS_NIC_NT_VALID | (rule & 1 ? DMS_NIC_NT_IPV6 : 0) |
					 (rule & 2 ? 17u : 6u) << DMS_NIC_NT_PROTO_SHIFT |
					 uint32_t(queue % 8) << DMS_NIC_NT_QUEUE_SHIFT);
	nic(DMS_NIC_REG_NT_PORTS, 0);
	nic(DMS_NIC_REG_NT_PORT_MASK, 0);
	for (unsigned w = 0; w < DMS_NIC_NT_ADDR_WORDS; w++) {
		nic(DMS_NIC_REG_NT_SRC_MASK(w), 0);
		nic(DMS_NIC_REG_NT_DST_MASK(w), 0);
	}
	nic(DMS_NIC_REG_RSS_NT_CTX, (rule & 4 ? DMS_NIC_RSS_NT_EN : 0) | ctx);
	nic(DMS_NIC_REG_NT_COMMIT, rule >> 3);
	const uint64_t rx_ctrl = dms_reg_read(n, dev, DMS_NIC_REG_RX_CTRL, 4);
	nic(DMS_NIC_REG_RX_CTRL, uint32_t(rx_ctrl) | DMS_NIC_RX_RSS | DMS_NIC_RX_NTUPLE);
}

// The NIC registers of v1.7-v1.10 no other operation programs, by name so
// that the fuzzer reaches them at once: GRO limits, interrupt moderation,
// the TX scheduler nodes (v1.8), pause and FEC, MAC counters, the
// default RSS table and the extended keys, n-tuple addresses, the stamps
// and error counters; an indexed one with the index of the next byte.
struct NicReg {
	uint32_t off, stride, count;
	bool per_queue;
};
const NicReg kNicRegs[] = {
	{DMS_NIC_REG_CTRL, 0, 1, false},
	{DMS_NIC_REG_MTU, 0, 1, false},
	{DMS_NIC_REG_HDS_THRESH, 0, 1, false},
	{DMS_NIC_REG_ITR_NS, 0, 1, false},
	{DMS_NIC_REG_ADMIN_IRQ_STATUS, 0, 1, false},
	{DMS_NIC_REG_ADMIN_IRQ_MASK, 0, 1, false},
	{DMS_NIC_REG_Q_FAULT_LO, 4, 2, false},
	{DMS_NIC_REG_GRO_MAX_SEGS, 0, 1, false},
	{DMS_NIC_REG_GRO_MAX_BYTES, 0, 1, false},
	{DMS_NIC_REG_GRO_TIMEOUT_NS, 0, 1, false},
	{DMS_NIC_REG_GRO_FLOWS, 0, 1, false},
	{DMS_NIC_REG_GRO_MAX_AGE_NS, 0, 1, false},
	{DMS_NIC_REG_PTP_RX_STAMPS, 0, 1, false},
	{DMS_NIC_REG_PTP_TX_STAMPS, 0, 1, false},
	{DMS_NIC_REG_TX_RATE_WAITS, 0, 1, false},
	{DMS_NIC_REG_TXS_Q_SEL, 0, 1, false},
	{DMS_NIC_REG_TXS_Q_NODE, 0, 1, false},
	{DMS_NIC_REG_TXS_Q_WEIGHT, 0, 1, false},
	{DMS_NIC_REG_TXS_NODE_RATE_KBPS(0), 16, DMS_NIC_TXS_NODES + 1, false},
	{DMS_NIC_REG_TXS_NODE_BURST(0), 16, DMS_NIC_TXS_NODES + 1, false},
	{DMS_NIC_REG_TXS_NODE_PARENT(0), 16, DMS_NIC_TXS_NODES + 1, false},
	{DMS_NIC_REG_MAC_PAUSE, 0, 1, false},
	{DMS_NIC_REG_PAUSE_RX_FRAMES, 4, 2, false},
	{DMS_NIC_REG_FEC_MODE, 0, 1, false},
	{DMS_NIC_REG_FEC_CORRECTED, 4, 2, false},
	{DMS_NIC_REG_MSTAT_LO(0), 4, 2 * DMS_NIC_MSTAT_COUNT + 1, false},
	{DMS_NIC_REG_SERIAL_LO, 4, 2, false},
	{DMS_NIC_REG_RSS_KEY(0), 4, DMS_NIC_RSS_KEY_WORDS, false},
	{DMS_NIC_REG_RSS_INDIR(0), 4, DMS_NIC_RSS_INDIR_SIZE, false},
	{DMS_NIC_REG_RSS_CTX_NUM, 0, 1, false},
	{DMS_NIC_REG_RSS_ERR, 0, 1, false},
	{DMS_NIC_REG_RSS_CTX_KEY_EXT(0), 4, DMS_NIC_RSS_KEY_EXT_WORDS + 1, false},
	{DMS_NIC_REG_NT_SRC(0), 4, DMS_NIC_NT_ADDR_WORDS, false},
	{DMS_NIC_REG_NT_DST(0), 4, DMS_NIC_NT_ADDR_WORDS, false},
	{DMS_NIC_REG_NT_PORTS, 0, 1, false},
	{DMS_NIC_REG_STAT_RX_NO_BUF, 4, 8, false},
	{DMS_NIC_REG_TSO_SUPER, 4, 3, false},
	{DMS_NIC_REG_CAPS, 0, 1, false},
	{DMS_NIC_REG_NODE_INDEX, 0, 1, false},
	{DMS_NIC_RXQ_CTRL, 0, 1, true},
	{DMS_NIC_Q_RX_ITR_NS, 0, 1, true},
	{DMS_NIC_Q_TX_ITR_NS, 0, 1, true},
	{DMS_NIC_Q_RX_ITR_FRAMES, 0, 1, true},
	{DMS_NIC_Q_TX_ITR_FRAMES, 0, 1, true},
	{DMS_NIC_RXQ_CMPL_HEAD, 0, 1, true},
	{DMS_NIC_TXQ_CMPL_HEAD, 0, 1, true},
	{DMS_NIC_TXQ_CTRL, 0, 1, true},
	{DMS_NIC_TXQ_RATE_KBPS, 0, 1, true},
	{DMS_NIC_TXQ_BURST, 0, 1, true},
	{DMS_NIC_RXQ_NO_BUF_DROP, 0, 1, true},
};

// Queue byte (NIC and queue), register, index, how (bit 0 read, bit 1 a
// small value: the low byte), value.
void op_nic_reg(Reader &r)
{
	const QSel q = qsel(r.u8());
	const NicReg &reg = kNicRegs[r.u8() % (sizeof(kNicRegs) / sizeof(kNicRegs[0]))];
	const unsigned idx = r.u8() % reg.count;
	const uint8_t how = r.u8();
	const uint32_t raw = r.u32(), val = how & 2 ? raw & 0xff : raw;
	const uint64_t off = (reg.per_queue ? DMS_NIC_Q_BASE(q.q) : 0) + reg.off + idx * reg.stride;
	const dms_dev nic = DMS_NIC(q.nic);
	if (g_trace)
		std::fprintf(stderr, "  nic%u +%#llx %s %#x\n", q.nic, (unsigned long long)off,
			     how & 1 ? "read" : "=", val);
	if (how & 1) {
		dms_reg_read(g_host->node(), nic, off, 4);
		return;
	}
	forget_queues(nic, off, 4);
	dms_reg_write(g_host->node(), nic, off, val, 4);
}

void op_mac_stats(Reader &r)
{
	const unsigned nic = r.u8() % g_pairs;
	for (unsigned i = 0; i < DMS_NIC_MSTAT_COUNT; i++)
		mstat(nic, i);
	const uint64_t ok = rx_ok(nic), base = g_rx_ok_base[nic];
	const uint64_t since = ok >= base ? ok - base : ok;
	if (since > g_host->frames_taken(nic))
		fail("MAC counted %llu frames received OK, %llu were given to it", since,
		     g_host->frames_taken(nic));
}

void play(Reader &r)
{
	dms_node *n = g_host->node();
	const uint8_t op = r.u8() % kOpCount;
	if (g_trace)
		std::fprintf(stderr, "fuzz-node: %s at %llu ns\n", kOpNames[op],
			     (unsigned long long)g_host->now());
	switch (op) {
	case kRegWrite:
		op_reg_write(r);
		break;
	case kRegRead: {
		const dms_dev dev = dev_of(r.u8());
		const uint16_t off = r.u16();
		dms_reg_read(n, dev, off, 1u << (r.u8() % 4));
		break;
	}
	case kRamWrite:
		op_ram_write(r);
		break;
	case kQueueSetup:
		op_queue_setup(r);
		break;
	case kRxPost:
		op_rx_post(r);
		break;
	case kTxPost:
	case kTxSegPost:
		(op == kTxPost ? op_tx_post : op_tx_seg_post)(r);
		break;
	case kWireRaw:
	case kWireFrame:
		op_wire(r, op == kWireRaw);
		break;
	case kMsix:
		op_msix(r);
		break;
	case kStep:
		op_step(r);
		break;
	case kLink:
		op_link(r);
		break;
	case kNicReset:
		dms_nic_reset(n);
		break;
	case kStats:
		check_stats();
		break;
	case kGpuJob:
		op_gpu_job(r);
		break;
	case kCrcList:
		op_crc_list(r);
		break;
	case kBars: {
		const uint8_t b = r.u8();
		g_host->place_bars((b >> 1) % g_pairs, b & 1);
		break;
	}
	case kPeer: {
		const uint8_t b = r.u8();
		g_host->set_peer((b >> 2) % g_pairs, Peer(b % unsigned(Peer::kCount)));
		break;
	}
	case kBusMaster:
		op_bus_master(r);
		break;
	case kReplug:
		g_host->replug(dev_of(r.u8()));
		break;
	case kGpuReset:
		dms_gpu_reset(n);
		break;
	case kFaults:
		op_faults(r);
		break;
	case kForeignId:
		op_foreign_id(r);
		break;
	case kSegment:
	case kRssSetup:
	case kTiming: // the v1.5/v1.6 register and wire ops
		(op == kSegment ? op_wire_segment : op == kRssSetup ? op_rss_setup : op_timing)(r);
		break;
	case kNicReg:
		op_nic_reg(r);
		break;
	case kWireTiny:
		op_wire_tiny(r);
		break;
	case kMacStats:
		op_mac_stats(r);
		break;
	}
}

std::string write_config(const char *mode, unsigned pairs)
{
	char path[] = "/tmp/dms-fuzz-node-XXXXXX";
	const int fd = mkstemp(path);
	if (fd < 0)
		fail("cannot create the node configuration file");
	close(fd);
	// Four queue pairs: the harness lays out (and follows) four queues'
	// rings per NIC. Pairs as configs/node/two-pairs.toml: one switch each.
	std::ofstream cfg(path);
	cfg << "[node]\nmode = \"" << mode << "\"\n[nic]\nqueues = 4\n[gpu]\nmem_size = \"1M\"\n";
	for (unsigned i = 0; i < pairs; i++)
		cfg << "[[topology.switch]]\nname = \"sw" << i << "\"\n";
	for (const char *dev : {"nic", "gpu"})
		for (unsigned i = 0; i < pairs; i++)
			cfg << "[[topology." << dev << "]]\non = \"sw" << i << "\"\n";
	return path;
}

} // namespace

// libFuzzer 14 leaks a flag string of its own driver: not the model's.
extern "C" const char *__lsan_default_suppressions()
{
	return "leak:fuzzer::FuzzerDriver\n";
}

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	for (int i = 1; i < *argc; i++)
		if (std::strncmp((*argv)[i], "--write-seeds=", 14) == 0)
			std::exit(write_seeds((*argv)[i] + 14) ? 0 : 1);
	g_trace = std::getenv("DMS_FUZZ_TRACE");
	const char *mode = std::getenv("DMS_FUZZ_MODE");
	// DMS_FUZZ_PAIRS: NIC/GPU pairs of the node (default 2, up to 4).
	const char *pairs = std::getenv("DMS_FUZZ_PAIRS");
	const unsigned k = pairs && *pairs ? unsigned(std::strtoul(pairs, nullptr, 10)) : 2;
	if (k < 1 || k > kMaxPairs)
		fail("DMS_FUZZ_PAIRS=%llu: 1 to %llu pairs", k, kMaxPairs);
	const std::string cfg = write_config(mode && *mode ? mode : "functional", k);
	char err[256] = "";
	dms_node *node = dms_node_new(cfg.c_str(), err, sizeof(err));
	std::remove(cfg.c_str());
	if (!node) {
		std::fprintf(stderr, "fuzz-node: %s\n", err);
		std::exit(1);
	}
	g_pairs = dms_node_num_pairs(node);
	if (g_pairs != k)
		fail("the node has %llu pairs, the harness asked for %llu", g_pairs, k);
	for (unsigned i = 0; i < g_pairs; i++)
		if (dms_dev_mem_size(node, DMS_GPU(i)) != kGpuMemSize ||
		    dms_dev_num_queues(node, DMS_NIC(i)) != 4)
			fail("pair %llu is not the configured 1 MiB GPU and 4-queue NIC", i);
	if (g_trace) // the model's own lines too: why a frame was dropped
		dms_node_set_trace(
			node,
			[](void *, dms_dev dev, const char *line) {
				std::fprintf(stderr, "  [%s] %s\n",
					     DMS_DEV_IS_GPU(dev) ? "gpu" : "nic", line);
			},
			nullptr);
	g_queues = dms_nic_num_queues(node);
	g_host = new Host(node, g_pairs);
	g_host->nic_ram_write = check_nic_ram_write;
	g_host->step(0);
	return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	reset_node();
	Reader r(d, n);
	while (!r.done()) {
		play(r);
		check_stats();
	}
	g_host->run(32);
	check_stats();
	return 0;
}
