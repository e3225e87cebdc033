// SPDX-License-Identifier: MIT
// Fault injection at the node's boundaries: frames on the wire (drop,
// corruption), host DMA (an access fails as if its address were bad), the
// NIC's link (down for a while, once or periodically), MSI delivery (lost
// or late) and the GPU's engines (a job ends with an error). Configured by
// the [faults] table of the node configuration, and replaced at run time
// through dms_node_set_faults(). Every decision comes from a pseudo-random
// stream per fault kind seeded by faults.seed, so the same seed and the
// same inputs give the same faults; every injected fault is counted.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

namespace devmemsim
{

// The devices whose DMA and MSIs can fail (indices as enum dms_dev).
enum FaultDev : unsigned { kFaultNic = 0, kFaultGpu = 1, kFaultDevs = 2 };

// The lies a NIC's RX completions can tell (datasheet, "A device that
// lies"); the order of Nic::RxLie.
enum NicLie : unsigned { kLieLen, kLieId, kLieDup, kLieGro, kLiePack, kNicLies };

// What a GPU job's status says: the truth, success for a copy job the
// engine did not run (COPY_DONE_BYTES says 0), or an undefined error code.
enum class GpuLie { Truth, Skip, Code };

struct FaultConfig {
	uint64_t seed = 1; // faults.seed
	// Wire: fraction of frames lost, and of frames with one bit flipped
	// where an IPv4/TCP/UDP checksum detects it.
	double rx_drop_rate = 0, rx_corrupt_rate = 0;
	double tx_drop_rate = 0, tx_corrupt_rate = 0;
	// Host DMA of each device: fraction of accesses that fail, and the
	// one access (counted from 1 when the settings take effect) that fails;
	// 0 = none.
	double dma_error_rate[kFaultDevs] = {0, 0};
	uint64_t dma_error_nth[kFaultDevs] = {0, 0};
	// false: NIC accesses to its descriptor and completion rings never fail
	// (only frame data does), a fault every driver can survive.
	bool nic_dma_error_rings = true;
	// Link: down link_down_ns after link_down_after_ns, then again every
	// link_flap_period_ns (0: once). link_down_ns = 0: no link faults.
	uint64_t link_down_after_ns = 0, link_down_ns = 0, link_flap_period_ns = 0;
	// MSIs of each device: fraction lost, fraction delivered msi_delay_ns late.
	double msi_drop_rate[kFaultDevs] = {0, 0};
	double msi_delay_rate[kFaultDevs] = {0, 0};
	uint64_t msi_delay_ns = 0;
	// Fraction of GPU copy and CRC jobs that end with DMS_GPU_ERR_ENGINE.
	double gpu_engine_error_rate = 0;
	// A device that lies: fraction of received frames whose completions
	// tell lie kind k (faults.nic_lie_{len,id,dup,gro,pack}_rate, in the
	// order of NicLie), and of GPU jobs whose status lies.
	double nic_lie_rate[kNicLies] = {0, 0, 0, 0, 0};
	double gpu_lie_status_rate = 0;
};

// Settings that contradict each other: a one-line message naming the key,
// or nullptr if cfg is consistent.
const char *check(const FaultConfig &cfg);

struct FaultCounters {
	uint64_t rx_dropped = 0, rx_corrupted = 0;
	uint64_t tx_dropped = 0, tx_corrupted = 0;
	uint64_t dma_errors[kFaultDevs] = {0, 0};
	uint64_t link_downs = 0;
	uint64_t rx_link_down = 0; // frames from the wire lost while the fault held the link down
	uint64_t msi_dropped = 0, msi_delayed = 0;
	uint64_t gpu_engine_errors = 0;
	uint64_t nic_lies[kNicLies] = {0, 0, 0, 0, 0}; // frames whose completions lied, per kind
	uint64_t gpu_status_lies = 0;
};

class Faults : public sc_core::sc_module
{
public:
	Faults(sc_core::sc_module_name name, const FaultConfig &cfg);

	// Replace the settings: the random streams restart from the seed, the
	// Nth-access counts and the link schedule from now. MSIs already held
	// back are still delivered.
	void configure(const FaultConfig &cfg);
	const FaultConfig &config() const { return cfg_; }

	// A frame from the wire, passed on to deliver (which returns false when
	// the NIC has no room) unless it is lost. Returns what deliver
	// returned, true for a lost frame. A refused frame keeps its verdict
	// for the host's next offer, so back-pressure does not change faults.
	using Deliver = std::function<bool(const uint8_t *frame, size_t len)>;
	bool rx_frame(const uint8_t *frame, size_t len, const Deliver &deliver);
	// A frame for the wire: the frame to send (frame itself or a corrupted
	// copy valid until the next call), or nullptr if it is lost.
	const uint8_t *tx_frame(const uint8_t *frame, size_t len);

	// One host DMA access of dev to [addr, addr+len): true if it is to fail.
	bool dma_error(unsigned dev, uint64_t addr, uint64_t len);
	// Tells whether an access touches the NIC's rings (Nic::in_rings).
	void set_ring_check(std::function<bool(uint64_t addr, uint64_t len)> fn)
	{
		ring_check_ = std::move(fn);
	}
	// A GPU engine job that would succeed: true if it is to fail instead.
	bool gpu_engine_error();

	// The NIC asks, for a frame where lie kind applies, whether its
	// completions are to tell it: true (counted) with random bits in *bits
	// that pick the lie's form.
	bool nic_lie(unsigned kind, uint64_t *bits);
	// A GPU job about to run: what its status is to say. can_skip: the
	// engine can report a job it did not run (the copy engine, whose
	// COPY_DONE_BYTES then says 0). *code: the undefined error code of
	// GpuLie::Code.
	GpuLie gpu_lie(bool can_skip, unsigned *code);

	// MSIs of dev go through irq() to the sink: now, later or never.
	void set_irq_sink(unsigned dev, std::function<void(unsigned vector)> sink);
	void irq(unsigned dev, unsigned vector);

	// The NIC's link is up when the host says so and no fault holds it down.
	void set_link_sink(std::function<void(bool up)> sink) { link_sink_ = std::move(sink); }
	void set_host_link(bool up);

	const FaultCounters &counters() const { return c_; }
	void reset_counters() { c_ = FaultCounters{}; }
	std::string stats_json() const;

private:
	// New kinds go last: the streams of the others keep their seeds.
	enum Stream : unsigned {
		kRx,
		kTx,
		kDmaNic,
		kDmaGpu,
		kMsi,
		kGpuEngine,
		kNicLie0, // kNicLies streams, one per NicLie
		kGpuLie = kNicLie0 + kNicLies,
		kStreams
	};
	struct Verdict {
		bool drop = false;
		bool corrupt = false;
		uint64_t where = 0; // picks the flipped bit
	};
	uint64_t next(Stream s);
	bool roll(Stream s, double rate);
	Verdict judge(Stream s, double drop_rate, double corrupt_rate);
	void events(); // link edges and late MSIs, in time order
	void apply_link(bool fault_down);
	void schedule_link(uint64_t from_ns);

	FaultConfig cfg_;
	FaultCounters c_;
	uint64_t state_[kStreams] = {};
	uint64_t dma_count_[kFaultDevs] = {0, 0};
	bool rx_held_ = false; // rx_verdict_ waits for the refused frame's next offer
	Verdict rx_verdict_;
	std::vector<uint8_t> rx_copy_, tx_copy_;

	std::function<void(unsigned)> irq_sink_[kFaultDevs];
	std::multimap<uint64_t, std::pair<unsigned, unsigned>> late_msi_; // due ns -> dev, vector

	std::function<bool(uint64_t, uint64_t)> ring_check_;
	std::function<void(bool)> link_sink_;
	bool host_link_ = true, fault_down_ = false;
	uint64_t link_edge_ns_ = UINT64_MAX; // next change of fault_down_
	sc_core::sc_event wake_;
};

} // namespace devmemsim
