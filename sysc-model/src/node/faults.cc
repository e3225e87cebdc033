// SPDX-License-Identifier: MIT
#include "node/faults.h"

#include <algorithm>
#include <sstream>

#include "devmemsim/gpu_regs.h"
#include "nic/csum.h"
#include "nic/parser.h"
#include "sim/kernel.h"

namespace devmemsim
{
namespace
{

uint16_t be16(const uint8_t *p)
{
	return static_cast<uint16_t>(p[0] << 8 | p[1]);
}

// The bytes of a frame where one flipped bit is sure to be caught by a
// checksum the receiver verifies: the TCP payload (or, for a segment
// without one, its sequence and acknowledgement numbers; the TCP checksum
// covers both), or the payload of a UDP datagram that carries a checksum.
// Empty (lo == hi) for every other frame: ARP, fragments, and IPv6 with
// extension headers are never corrupted, as nothing would notice.
std::pair<size_t, size_t> corruptible(const uint8_t *f, size_t len)
{
	size_t l3 = 14;
	if (len < l3)
		return {0, 0};
	uint16_t type = be16(f + 12);
	for (int tags = 0; tags < 2 && (type == 0x8100 || type == 0x88a8); tags++) {
		if (len < l3 + 4)
			return {0, 0};
		type = be16(f + l3 + 2);
		l3 += 4;
	}
	size_t l4, end;
	uint8_t proto;
	bool v4 = type == 0x0800;
	if (v4) {
		if (len < l3 + 20 || (f[l3] >> 4) != 4)
			return {0, 0};
		size_t ihl = size_t(f[l3] & 0xf) * 4;
		if (ihl < 20 || (be16(f + l3 + 6) & 0x3fff)) // options bound, fragments
			return {0, 0};
		l4 = l3 + ihl;
		end = l3 + be16(f + l3 + 2);
		proto = f[l3 + 9];
	} else if (type == 0x86dd) {
		if (len < l3 + 40)
			return {0, 0};
		l4 = l3 + 40;
		end = l4 + be16(f + l3 + 4);
		proto = f[l3 + 6];
	} else {
		return {0, 0};
	}
	end = std::min(end, len);
	if (proto == 6 && end >= l4 + 20) {
		size_t data = l4 + size_t(f[l4 + 12] >> 4) * 4;
		if (data < end && data >= l4 + 20)
			return {data, end};
		return {l4 + 4, l4 + 12};
	}
	if (proto == 17 && end > l4 + 8 && (!v4 || be16(f + l4 + 6) != 0))
		return {l4 + 8, end};
	return {0, 0};
}

// The splitmix64 finalizer: a bijective scramble of 64 bits.
uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

// True if the frame's TCP/UDP checksum (and IPv4 header checksum) verify.
bool csum_verifies(const std::vector<uint8_t> &frame)
{
	Parsed p = parse_frame(frame.data(), frame.size());
	return p.l4 != L4::None && l4_csum_ok(frame.data(), p);
}

// Flip one bit of the corruptible part of copy; false if it has none.
//
// One flip always changes the ones'-complement sum, but a frame may come
// corrupted already (the sender's tx_corrupt, then the receiver's
// rx_corrupt): flipping the same bit of a 16-bit word in the other
// direction cancels that and the frame passes its checksum with two wrong
// bits. Then the neighbouring bit of the same byte goes instead: two flips
// of different word bits change the sum by a nonzero amount.
bool flip_bit(std::vector<uint8_t> &copy, uint64_t where)
{
	auto [lo, hi] = corruptible(copy.data(), copy.size());
	if (lo >= hi)
		return false;
	uint64_t bit = where % (uint64_t(hi - lo) * 8);
	uint8_t &byte = copy[lo + bit / 8];
	const uint8_t mask = static_cast<uint8_t>(1u << (bit % 8));
	byte ^= mask;
	if (csum_verifies(copy))
		byte ^= static_cast<uint8_t>(mask | (1u << ((bit % 8) ^ 1)));
	return true;
}

} // namespace

const char *check(const FaultConfig &c)
{
	if ((c.msi_delay_rate[kFaultNic] > 0 || c.msi_delay_rate[kFaultGpu] > 0) &&
	    c.msi_delay_ns == 0)
		return "faults.nic_msi_delay_rate, faults.gpu_msi_delay_rate: need "
		       "faults.msi_delay_ns > 0";
	if (c.link_flap_period_ns && !c.link_down_ns)
		return "faults.link_flap_period_ns: needs faults.link_down_ns > 0";
	if (c.link_flap_period_ns && c.link_flap_period_ns <= c.link_down_ns)
		return "faults.link_flap_period_ns: must be longer than faults.link_down_ns";
	return nullptr;
}

Faults::Faults(sc_core::sc_module_name name, const FaultConfig &cfg) : sc_core::sc_module(name)
{
	SC_HAS_PROCESS(Faults);
	SC_METHOD(events);
	sensitive << wake_;
	dont_initialize();
	configure(cfg);
}

void Faults::configure(const FaultConfig &cfg)
{
	cfg_ = cfg;
	// splitmix64 streams, one per fault kind, so that one kind's rate does
	// not shift another kind's decisions.
	for (unsigned s = 0; s < kStreams; s++)
		state_[s] = mix64(cfg.seed ^ mix64(uint64_t(s) + 1));
	for (uint64_t &n : dma_count_)
		n = 0;
	rx_held_ = false;
	schedule_link(sim::now_ns());
}

uint64_t Faults::next(Stream s)
{
	return mix64(state_[s] += 0x9e3779b97f4a7c15ull);
}

// A rate of 0 draws nothing from the stream: turning one fault on leaves
// the decisions of the others as they were.
bool Faults::roll(Stream s, double rate)
{
	if (rate <= 0)
		return false;
	double u = static_cast<double>(next(s) >> 11) * 0x1.0p-53;
	return u < rate;
}

Faults::Verdict Faults::judge(Stream s, double drop_rate, double corrupt_rate)
{
	Verdict v;
	v.drop = roll(s, drop_rate);
	if (!v.drop && roll(s, corrupt_rate)) {
		v.corrupt = true;
		v.where = next(s);
	}
	return v;
}

bool Faults::rx_frame(const uint8_t *frame, size_t len, const Deliver &deliver)
{
	if (fault_down_) {
		// As with a pulled cable: nothing arrives while the link is down.
		rx_held_ = false;
		c_.rx_link_down++;
		return true;
	}
	Verdict v = rx_held_ ? rx_verdict_ : judge(kRx, cfg_.rx_drop_rate, cfg_.rx_corrupt_rate);
	rx_held_ = false;
	if (v.drop) {
		c_.rx_dropped++;
		return true;
	}
	bool corrupted = false;
	if (v.corrupt) {
		rx_copy_.assign(frame, frame + len);
		corrupted = flip_bit(rx_copy_, v.where);
	}
	if (!deliver(corrupted ? rx_copy_.data() : frame, len)) {
		rx_held_ = true;
		rx_verdict_ = v;
		return false;
	}
	if (corrupted)
		c_.rx_corrupted++;
	return true;
}

const uint8_t *Faults::tx_frame(const uint8_t *frame, size_t len)
{
	Verdict v = judge(kTx, cfg_.tx_drop_rate, cfg_.tx_corrupt_rate);
	if (v.drop) {
		c_.tx_dropped++;
		return nullptr;
	}
	if (!v.corrupt)
		return frame;
	tx_copy_.assign(frame, frame + len);
	if (!flip_bit(tx_copy_, v.where))
		return frame;
	c_.tx_corrupted++;
	return tx_copy_.data();
}

bool Faults::dma_error(unsigned dev, uint64_t addr, uint64_t len)
{
	if (dev >= kFaultDevs)
		return false;
	if (dev == kFaultNic && !cfg_.nic_dma_error_rings && ring_check_ && ring_check_(addr, len))
		return false; // spared, and not counted toward the Nth access
	bool nth = cfg_.dma_error_nth[dev] && ++dma_count_[dev] == cfg_.dma_error_nth[dev];
	bool hit = roll(dev == kFaultNic ? kDmaNic : kDmaGpu, cfg_.dma_error_rate[dev]);
	if (nth || hit)
		c_.dma_errors[dev]++;
	return nth || hit;
}

bool Faults::gpu_engine_error()
{
	if (!roll(kGpuEngine, cfg_.gpu_engine_error_rate))
		return false;
	c_.gpu_engine_errors++;
	return true;
}

bool Faults::nic_lie(unsigned kind, uint64_t *bits)
{
	if (kind >= kNicLies || !roll(Stream(kNicLie0 + kind), cfg_.nic_lie_rate[kind]))
		return false;
	*bits = next(Stream(kNicLie0 + kind));
	c_.nic_lies[kind]++;
	return true;
}

// Half of the copy jobs that lie claim success without running, the rest
// (and every CRC job) end DONE|ERROR with a code no version defines.
GpuLie Faults::gpu_lie(bool can_skip, unsigned *code)
{
	if (!roll(kGpuLie, cfg_.gpu_lie_status_rate))
		return GpuLie::Truth;
	const uint64_t r = next(kGpuLie);
	c_.gpu_status_lies++;
	if (can_skip && (r & 1))
		return GpuLie::Skip;
	constexpr unsigned kFirst = DMS_GPU_ERR_ENGINE + 1, kCodes = 256 - kFirst;
	*code = kFirst + unsigned((r >> 1) % kCodes);
	return GpuLie::Code;
}

void Faults::set_irq_sink(unsigned dev, std::function<void(unsigned)> sink)
{
	if (dev < kFaultDevs)
		irq_sink_[dev] = std::move(sink);
}

void Faults::irq(unsigned dev, unsigned vector)
{
	if (dev >= kFaultDevs || !irq_sink_[dev])
		return;
	if (roll(kMsi, cfg_.msi_drop_rate[dev])) {
		c_.msi_dropped++;
		return;
	}
	if (roll(kMsi, cfg_.msi_delay_rate[dev])) {
		c_.msi_delayed++;
		uint64_t due = sim::now_ns() + cfg_.msi_delay_ns;
		late_msi_.emplace(due, std::make_pair(dev, vector));
		wake_.notify(sc_core::SC_ZERO_TIME);
		return;
	}
	irq_sink_[dev](vector);
}

void Faults::set_host_link(bool up)
{
	host_link_ = up;
	if (link_sink_)
		link_sink_(host_link_ && !fault_down_);
}

void Faults::apply_link(bool fault_down)
{
	if (fault_down == fault_down_)
		return;
	bool was = host_link_ && !fault_down_;
	fault_down_ = fault_down;
	if (fault_down)
		c_.link_downs++;
	if (link_sink_ && was != (host_link_ && !fault_down_))
		link_sink_(host_link_ && !fault_down_);
}

// The link schedule restarts at from_ns: a link held down comes up now if
// the new settings have no link faults, else at the next edge.
void Faults::schedule_link(uint64_t from_ns)
{
	if (!cfg_.link_down_ns) {
		link_edge_ns_ = UINT64_MAX;
		apply_link(false);
	} else {
		link_edge_ns_ = from_ns + cfg_.link_down_after_ns;
		// Down at the first edge: an up link stays up until then.
		apply_link(false);
	}
	wake_.notify(sc_core::SC_ZERO_TIME);
}

void Faults::events()
{
	uint64_t now = sim::now_ns();
	while (link_edge_ns_ <= now) {
		bool down = !fault_down_;
		apply_link(down);
		if (down)
			link_edge_ns_ += cfg_.link_down_ns;
		else if (cfg_.link_flap_period_ns)
			link_edge_ns_ += cfg_.link_flap_period_ns - cfg_.link_down_ns;
		else
			link_edge_ns_ = UINT64_MAX;
	}
	while (!late_msi_.empty() && late_msi_.begin()->first <= now) {
		auto [dev, vector] = late_msi_.begin()->second;
		late_msi_.erase(late_msi_.begin());
		if (irq_sink_[dev])
			irq_sink_[dev](vector);
	}
	uint64_t due = link_edge_ns_;
	if (!late_msi_.empty())
		due = std::min(due, late_msi_.begin()->first);
	if (due != UINT64_MAX)
		next_trigger(sc_core::sc_time(static_cast<double>(due - now), sc_core::SC_NS),
			     wake_);
	else
		next_trigger(wake_);
}

std::string Faults::stats_json() const
{
	std::ostringstream o;
	o << "{\"rx_dropped\": " << c_.rx_dropped << ", \"rx_corrupted\": " << c_.rx_corrupted
	  << ", \"tx_dropped\": " << c_.tx_dropped << ", \"tx_corrupted\": " << c_.tx_corrupted
	  << ", \"nic_dma_errors\": " << c_.dma_errors[kFaultNic]
	  << ", \"gpu_dma_errors\": " << c_.dma_errors[kFaultGpu]
	  << ", \"link_downs\": " << c_.link_downs << ", \"rx_link_down\": " << c_.rx_link_down
	  << ", \"msi_dropped\": " << c_.msi_dropped << ", \"msi_delayed\": " << c_.msi_delayed
	  << ", \"gpu_engine_errors\": " << c_.gpu_engine_errors
	  << ", \"nic_lie_len\": " << c_.nic_lies[kLieLen]
	  << ", \"nic_lie_id\": " << c_.nic_lies[kLieId]
	  << ", \"nic_lie_dup\": " << c_.nic_lies[kLieDup]
	  << ", \"nic_lie_gro\": " << c_.nic_lies[kLieGro]
	  << ", \"nic_lie_pack\": " << c_.nic_lies[kLiePack]
	  << ", \"gpu_lie_status\": " << c_.gpu_status_lies << "}";
	return o.str();
}

} // namespace devmemsim
