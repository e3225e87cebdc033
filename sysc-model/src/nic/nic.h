// SPDX-License-Identifier: MIT
// The header-split NIC: registers, per-queue RX (header buffer, payload
// buffer and completion rings) and TX (descriptor and completion rings),
// header split, flow steering, RSS, checksums and a MAC. All DMA goes
// through the node's PCIe fabric. The contract is devmemsim/nic_regs.h
// and devmemsim/nic_desc.h. Sources by the hardware's seams: nic.cc
// (construction, reset, link, DMA, counters), nic_regs.cc (registers and
// queue setup), nic_rx.cc (receive), nic_rx_gro.cc (hardware GRO),
// nic_rss.cc (RSS contexts and ntuple rules), nic_tx.cc (transmit),
// nic_sched.cc (TX scheduler nodes), nic_rate.cc (TX rate limits),
// nic_irq.cc (interrupts and moderation), nic_ptp.cc (PTP clock and
// timestamps), nic_mac.cc (MAC counters, PAUSE, FEC, serial). The pure
// units they use: parser, steer, rss, csum, segment, gro_table, ptp,
// mac_stats, rtl_parser.
#pragma once

#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <utility>
#include <vector>

#include "config.h"
#include "devmemsim/devmemsim.h"
#include "devmemsim/nic_desc.h"
#include "devmemsim/nic_regs.h"
#include "nic/gro_table.h"
#include "nic/mac_stats.h"
#include "nic/parser.h"
#include "nic/ptp.h"
#include "nic/rss.h"
#include "nic/rtl_parser.h"
#include "nic/steer.h"
#include "regfile.h"
#include "trace.h"

namespace devmemsim
{

struct NicCounters {
	uint64_t rx_frames = 0, rx_bytes = 0, rx_split = 0;
	uint64_t rx_drop = 0, rx_no_buf = 0, rx_dma_err = 0;
	uint64_t tx_frames = 0, tx_bytes = 0, tx_desc_err = 0, tx_dma_err = 0;
	uint64_t ring_err = 0;
	uint64_t ring_dma_err = 0;    // ring accesses that faulted (each stopped its queue)
	uint64_t rx_hdr_overflow = 0; // headers longer than the header buffer: not split
	// Segmentation (segment.cc): super-frames cut, the frames they became,
	// segmentation requests refused.
	uint64_t tx_tso = 0, tx_tso_segs = 0, tx_tso_err = 0;
	uint64_t rx_gro_frames = 0, rx_gro_segs = 0; // coalesced frames, segments in them
	uint64_t rss_err = 0;			     // refused RSS register writes
	// v1.6: frames stamped with the PTP clock; times a queue with a frame
	// ready waited for a rate limit; PAUSE frames received; bits the MAC
	// received (FEC codewords are bits / DMS_NIC_FEC_CW_DATA_BITS).
	uint64_t ptp_rx_stamps = 0, ptp_tx_stamps = 0, tx_rate_waits = 0;
	uint64_t pause_rx = 0, mac_rx_bits = 0;
	uint64_t pause_tx = 0; // v1.8: PAUSE frames the host sent
	// v1.10: frames DROP_EN queues dropped for want of buffers or
	// completion slots (STAT_RX_NO_BUF_DROP).
	uint64_t rx_no_buf_drop = 0;
};

class Nic : public sc_core::sc_module, public RegFile
{
public:
	static constexpr unsigned kMaxMtu = DMS_NIC_MAX_MTU;
	static constexpr unsigned kMaxTxFrags = 18;
	static constexpr unsigned kNtupleSize = 64;
	static constexpr size_t kRxFifoFrames = 64;
	// Work the RX and TX engines each do at one simulated time before they
	// let kWorkYieldNs pass (devmemsim.h, "Work budget"): frames (every
	// segment of a super-frame counts as one) and units of the work meter,
	// whichever runs out first, so one model step stays bounded whatever
	// the rings hold.
	static constexpr unsigned kEngineFrames = DMS_ENGINE_FRAMES;
	static constexpr uint64_t kEngineWork = DMS_ENGINE_WORK;
	// TX arbitration: frames (segments count) one doorbell gets served in a
	// row before it queues behind the doorbells rung meanwhile.
	static constexpr unsigned kTxBurst = 64;
	static constexpr double kWorkYieldNs = DMS_WORK_YIELD_NS;
	// Timed mode: like a real NIC (descriptor prefetch, many outstanding
	// PCIe requests, posted writes), the DMA engine does not finish one
	// frame before it starts the next. RX keeps up to kRxDmaFrames
	// frames' DMA in flight behind the MAC; TX reads frames up to
	// kTxLeadNs ahead of their turn on the wire. Both are far more than
	// a frame's DMA takes (about 1 us at the default 150 ns per hop).
	static constexpr size_t kRxDmaFrames = 32;
	static constexpr double kTxLeadNs = 10000;

	Nic(sc_core::sc_module_name name, const NodeConfig &cfg);
	~Nic() override;

	tlm_utils::simple_initiator_socket<Nic> dma;  // into the fabric
	tlm_utils::simple_target_socket<Nic> bar_mem; // peers: no memory BAR

	unsigned num_queues() const { return nq_; }
	unsigned num_vectors() const { return nq_ + 1; }
	void set_mac(const uint8_t mac[6]);
	// Whether [addr, addr+len) touches a descriptor or completion ring of
	// an enabled queue (fault injection can spare the rings).
	bool in_rings(uint64_t addr, uint64_t len) const;

	// Host side.
	struct Host {
		std::function<void(unsigned vector)> irq;
		std::function<void(const uint8_t *frame, size_t len)> send;
		std::function<void()> rx_ready; // room again after a refusal
	};
	void set_host(Host h) { host_ = std::move(h); }
	// Fault injection, a device that lies (node/faults.h, datasheet "A
	// device that lies"): asked for each frame where a lie applies; true,
	// with random bits in *bits that pick its form, makes the frame's
	// completions tell it. Only what the completions say changes.
	enum class RxLie : unsigned { Len, Id, Dup, Gro, Pack };
	void set_rx_lie(std::function<bool(RxLie, uint64_t *bits)> fn) { rx_lie_ = std::move(fn); }
	// Trace lines: doorbells, descriptors fetched, completions, drops.
	void set_trace(const TraceSink *sink) { trace_.attach(sink); }
	// A frame from the wire. false: no room now; rx_ready() will say when.
	bool receive(const uint8_t *frame, size_t len);
	void set_link(bool up);
	// Function-level reset: every queue off, tables and settings cleared.
	void reset();

	const NicCounters &counters() const { return c_; }
	void reset_counters();
	std::string stats_json() const;

protected:
	uint32_t read32(uint32_t off) override;
	void write32(uint32_t off, uint32_t val) override;

private:
	struct Queue;
	struct RxFrame;
	enum class TxChain { Incomplete, Complete, Bad, Fault };
	// A chain's segmentation descriptor, if it starts with one.
	struct TxSeg {
		bool on = false;
		dms_tx_seg_desc d{};
	};
	// Frame bytes allowed beyond the MTU: Ethernet header and two VLAN tags.
	static constexpr size_t kL2Overhead = 14 + 8;

	// Registers (nic_regs.cc).
	uint32_t settings_read(uint32_t off) const;
	uint32_t queue_read(const Queue &q, uint32_t off) const;
	void queue_write(unsigned qi, uint32_t off, uint32_t val);
	void ntuple_write(uint32_t off, uint32_t val);
	// RSS contexts (nic_rss.cc): false if off is not an RSS register.
	bool rss_read(uint32_t off, uint32_t *val) const;
	bool rss_write(uint32_t off, uint32_t val);
	void rss_refuse(uint32_t off, uint32_t val);
	bool rss_rule_ok(const NtupleRule &r);
	void rx_enable(unsigned qi, bool on);
	void tx_enable(unsigned qi, bool on);
	void doorbell(unsigned qi, uint32_t off, uint32_t val);
	uint32_t fault_bits(unsigned first) const;

	// Receive (nic_rx.cc).
	void rx_thread();
	bool rx_frame(const std::vector<uint8_t> &frame, uint64_t arrival);
	bool rx_deliver(RxFrame &f);
	// What rx_wait_for_room() found: room for the frame; no room ever (or
	// the queue off): dropped, the caller counts it; no room now on a
	// DROP_EN queue: dropped and counted there.
	enum class RxRoom { Ready, Drop, NoBufDrop };
	unsigned select_queue(const Parsed &p, const uint8_t *frame, uint32_t *hash, bool *hashed);
	void rx_classify(RxFrame &f);
	void rx_place(RxFrame &f);
	void rx_place_pay(RxFrame &f);
	RxRoom rx_wait_for_room(RxFrame &f);
	bool rx_alive(const RxFrame &f, const char *step);
	bool rx_fetch_buffers(RxFrame &f);
	bool rx_write_data(RxFrame &f);
	size_t rx_pay_bytes(const RxFrame &f, uint32_t i) const;
	bool rx_csum_ok(RxFrame &f) const;
	uint16_t rx_flags(RxFrame &f) const;
	bool rx_complete(Queue &q, RxFrame &f, bool ok);
	void rx_lies(const RxFrame &f, std::vector<dms_rx_cmpl> &cs, bool dup_room);
	void rx_ring_fault(unsigned qi, const char *what);

	// Transmit (nic_tx.cc).
	void tx_thread();
	unsigned tx_frame(unsigned qi);
	TxChain tx_gather(unsigned qi, std::vector<dms_tx_desc> &d, TxSeg &seg);
	bool tx_read_frame(const std::vector<dms_tx_desc> &d, std::vector<uint8_t> &frame,
			   bool seg);
	bool tx_send(unsigned qi, std::vector<uint8_t> &frame, bool csum);
	bool tx_segment(unsigned qi, const std::vector<uint8_t> &frame, const dms_tx_seg_desc &sd,
			unsigned &sent);
	void tx_complete(unsigned qi, uint16_t tag, bool bad, uint32_t ts);
	void tx_ring_fault(unsigned qi, const char *what);
	bool tx_serve(sc_core::sc_time *due, bool *waiting, unsigned *frames);
	bool tx_rate_allows(unsigned qi, sc_core::sc_time *due, bool *waiting);
	void tx_served(unsigned qi, unsigned frames);
	// The RX or TX engine's work: the units of its own DMA and frames as
	// they happen (devmemsim.h, "Work budget"; the kernel's meter counts
	// them too), and the frames and units it did at one simulated time.
	struct WorkBudget {
		uint64_t units = 0;    // all so far
		bool counting = false; // at is valid
		sc_core::sc_time at;   // the simulated time being counted
		unsigned frames = 0;   // frames at it
		uint64_t from = 0;     // units when it began
		uint64_t checked = 0;  // units at the last spend()
	};
	// Called by an engine between frames: count them, and the units since
	// the last call; past either budget, yield.
	void spend(WorkBudget &b, unsigned frames);
	// A frame the engine takes from the wire or hands to it.
	static void charge_frame(WorkBudget &b, size_t len);

	// Hardware GRO's part of receive (nic_rx_gro.cc).
	bool rx_gro_on() const;
	bool rx_gro(RxFrame &f);
	void rx_gro_flush(unsigned qi, int i, const char *why);
	bool rx_gro_due(const Queue &q, const sc_core::sc_time &now) const;
	void rx_gro_expire();
	bool rx_gro_next_due(sc_core::sc_time *due) const;
	sc_core::sc_time rx_gro_max_age() const;

	// PTP clock and timestamps (nic_ptp.cc); *_read/_write: false if off
	// is not one of its registers.
	bool ptp_read(uint32_t off, uint32_t *val);
	bool ptp_write(uint32_t off, uint32_t val);
	void ptp_reset();
	// The PTP clock offset_ns from now.
	uint64_t ptp_now(int64_t offset_ns = 0) const;
	// A received frame's stamp (if PTP_CTRL asks): when it reached the
	// MAC (arrival, device time), in timed mode when its first byte came
	// in, one wire time before now.
	PtpStamp rx_stamp(size_t frame_len, uint64_t arrival) const;

	// The MAC (nic_mac.cc): PAUSE, FEC and serial registers.
	bool mac_read(uint32_t off, uint32_t *val);
	// The MAC's view of a received frame: FEC codewords, MSTAT counters,
	// PAUSE frames (false: consumed by the MAC).
	bool mac_receive(const std::vector<uint8_t> &frame);
	// The MAC's view of a frame it sends: MSTAT counters, PAUSE frames.
	void mac_send(const std::vector<uint8_t> &frame);

	// TX rate limits (nic_rate.cc).
	bool rate_read(uint32_t off, uint32_t *val) const;
	bool rate_write(uint32_t off, uint32_t val);
	uint32_t queue_rate_read(const Queue &q, uint32_t off) const;
	void queue_rate_write(Queue &q, uint32_t off, uint32_t val);
	// Whether queue qi's and the device's rate limits let a frame go now;
	// if not, *due is when they may.
	bool tx_rate_ready(unsigned qi, sc_core::sc_time *due);
	void tx_rate_take(unsigned qi, size_t bytes);

	// TX scheduler nodes and weights (v1.8, nic_sched.cc).
	uint32_t txs_read(uint32_t off) const;
	void txs_write(uint32_t off, uint32_t val);
	void txs_node_write(unsigned n, uint32_t reg, uint32_t val);
	void txs_reset();
	// The nodes whose buckets queue qi's frames pay into, nearest first.
	struct TxsPath {
		std::array<uint8_t, DMS_NIC_TXS_NODES> node{};
		unsigned len = 0;
	};
	TxsPath txs_path(unsigned qi) const;
	// Weighted queues of one group take its places in doorbell order,
	// least served first.
	void txs_order(std::vector<std::pair<uint64_t, unsigned>> &ready);
	void txs_charge(unsigned qi, size_t bytes);

	// Interrupts (nic_irq.cc).
	void admin_write(uint32_t off, uint32_t val);
	void arm(unsigned qi);
	void signal(unsigned qi);
	sc_core::sc_time irq_now() const;
	sc_core::sc_time irq_due(Queue &q);
	void irq_method(unsigned qi);
	void admin_event(uint32_t cause);

	// What a DMA of the frame in progress is to its timeline (timed mode):
	// descriptor reads were prefetched (the NIC reads descriptors ahead,
	// when the driver posts them), so they cost the frame no time; the
	// frame's data transfers are outstanding together (TX sends the frame
	// once they are done); the frame is done with its completions.
	enum class DmaStep { Prefetch, Data, Completion };
	bool dma_rw(WorkBudget &b, uint64_t addr, void *buf, size_t len, bool write, DmaStep step);
	// Timed mode, after each frame: its DMA runs on; the engine waits
	// only when it is too far ahead.
	void rx_retire();
	void tx_pace();
	sc_core::sc_time wire_time(size_t frame_len) const;

	unsigned nq_;
	unsigned node_index_;
	bool timed_;
	double line_rate_bps_;
	std::array<uint8_t, 6> mac_{};
	Host host_;
	std::function<bool(RxLie, uint64_t *)> rx_lie_;
	std::vector<dms_rx_cmpl> rx_cmpls_; // rx_complete(): the frame's completions

	bool in_write_ = false; // inside write32(): a register write of the host

	// Device registers.
	bool link_up_ = true;
	uint32_t mtu_ = 1500, rx_ctrl_ = 0, hds_thresh_ = 0, tx_ctrl_ = 0, itr_ns_ = 0;
	uint32_t gro_max_segs_ = DMS_NIC_GRO_SEGS_MAX, gro_max_bytes_ = DMS_NIC_GRO_BYTES_MAX;
	uint32_t gro_timeout_ns_ = 0, gro_flows_ = DMS_NIC_GRO_FLOWS_MAX, gro_max_age_ns_ = 0;
	uint32_t admin_status_ = 0, admin_mask_ = 0;
	std::array<RssContext, DMS_NIC_RSS_CONTEXTS> rss_{}; // context 0: RSS_KEY, RSS_INDIR
	uint32_t rss_sel_ = 0;				     // RSS_CTX_SEL
	std::array<NtupleRule, kNtupleSize> ntuple_{};
	NtupleRule nt_stage_;

	std::vector<std::unique_ptr<Queue>> q_;
	std::deque<std::vector<uint8_t>> rx_fifo_;
	std::deque<uint64_t> rx_arrival_; // device time each FIFO frame came (v1.6)
	bool rx_refused_ = false;
	sc_core::sc_event rx_ev_, tx_ev_;
	WorkBudget rx_budget_, tx_budget_;
	uint64_t tx_doorbells_ = 0; // TXQ_TAIL doorbells so far: their order
	std::vector<std::pair<uint64_t, unsigned>> tx_ready_; // tx_serve(): (order, queue)
	// The frame in progress, from now: when its data and all its DMA are done.
	sc_core::sc_time data_done_, frame_done_;
	std::deque<sc_core::sc_time> rx_dma_done_; // when each RX frame's DMA ends
	sc_core::sc_time tx_wire_free_;		   // end of the last TX frame's wire time
	// nic.parser = "rtl": the verilated parser
	std::unique_ptr<RtlParser> rtl_;
	// v1.6 (nic_ptp.cc): the clock and its registers; the device-wide
	// rate limit; the TX stamp of the chain being sent (its first frame's).
	PtpClock ptp_;
	uint32_t ptp_ctrl_ = 0, ptp_latch_hi_ = 0, fec_latch_hi_ = 0;
	uint64_t ptp_stage_ = 0;
	TokenBucket tx_rate_;
	// v1.8 (nic_sched.cc): scheduler nodes; per group (0: the device,
	// n + 1: node n) the service of the queue it served last; TXS_Q_SEL.
	struct TxNode {
		TokenBucket rate;
		uint32_t parent = DMS_NIC_TXS_NONE;
	};
	std::array<TxNode, DMS_NIC_TXS_NODES> txs_nodes_{};
	std::array<uint64_t, DMS_NIC_TXS_NODES + 1> txs_vtime_{};
	uint32_t txs_qsel_ = 0;
	std::vector<unsigned> txs_at_;			       // txs_order(): places
	std::vector<std::pair<uint64_t, unsigned>> txs_group_; // and their queues
	struct TxStamp {
		bool want = false;
		PtpStamp at;
	} tx_stamp_;
	NicCounters c_;
	MacStats mstat_; // v1.8: MSTAT registers; like c_, kept across reset()
	Tracer trace_{DMS_DEV_NIC};

	void no_memory(tlm::tlm_generic_payload &gp, sc_core::sc_time &delay);
};

} // namespace devmemsim
