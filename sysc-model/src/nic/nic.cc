// SPDX-License-Identifier: MIT
#include "nic/nic.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "bus_dma.h"
#include "devmemsim/nic_regs.h"
#include "nic/nic_queue.h"
#include "sim/kernel.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	      "descriptors are copied as little-endian structs");

namespace devmemsim
{

namespace
{

// Ethernet framing on the wire around a frame: preamble and SFD (8),
// FCS (4), inter-frame gap (12) — IEEE 802.3 clause 4.
constexpr size_t kWireOverhead = 24;

} // namespace

Nic::Nic(sc_core::sc_module_name name, const NodeConfig &cfg)
    : sc_core::sc_module(name), dma("dma"), bar_mem("bar_mem"), nq_(cfg.nic_queues),
      node_index_(cfg.index), timed_(cfg.mode == Mode::Timed),
      line_rate_bps_(cfg.nic_line_rate_gbps * 1e9)
{
	bar_mem.register_b_transport(this, &Nic::no_memory);
	for (unsigned i = 0; i < nq_; i++) {
		q_.push_back(std::make_unique<Queue>());
		sc_core::sc_spawn_options opt;
		opt.spawn_method();
		opt.set_sensitivity(&q_[i]->irq_ev);
		opt.dont_initialize();
		sc_core::sc_spawn([this, i] { irq_method(i); }, ("irq" + std::to_string(i)).c_str(),
				  &opt);
	}
	// RX headers through the RTL parser; in timed mode its cycles take time.
	if (cfg.nic_parser == NicParser::Rtl)
		rtl_ = std::make_unique<RtlParser>(
			"rtl_parser",
			RtlParser::Options(
				sc_core::sc_time(1e3 / cfg.nic_parser_clock_mhz, sc_core::SC_NS),
				timed_));
	SC_HAS_PROCESS(Nic);
	SC_THREAD(rx_thread);
	SC_THREAD(tx_thread);
}

Nic::~Nic() = default;

void Nic::no_memory(tlm::tlm_generic_payload &gp, sc_core::sc_time &)
{
	gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

void Nic::set_mac(const uint8_t mac[6])
{
	std::copy(mac, mac + 6, mac_.begin());
}

void Nic::set_link(bool up)
{
	if (up == link_up_)
		return;
	link_up_ = up;
	admin_event(DMS_NIC_ADMIN_IRQ_LINK);
}

// Everything the datasheet lists goes back to power-on state: settings,
// tables, queues (with their latched setup and interrupt state), the RX
// FIFO. Work in flight sees its queue's epoch change and is abandoned.
void Nic::reset()
{
	trace_("reset");
	mtu_ = 1500;
	rx_ctrl_ = hds_thresh_ = tx_ctrl_ = itr_ns_ = 0;
	gro_max_segs_ = DMS_NIC_GRO_SEGS_MAX;
	gro_max_bytes_ = DMS_NIC_GRO_BYTES_MAX;
	gro_timeout_ns_ = gro_max_age_ns_ = 0;
	gro_flows_ = DMS_NIC_GRO_FLOWS_MAX;
	admin_status_ = admin_mask_ = 0;
	rss_.fill(RssContext{});
	rss_sel_ = 0;
	ntuple_.fill(NtupleRule{});
	nt_stage_ = NtupleRule{};
	for (auto &q : q_) {
		q->clear();
		q->rx_doorbell.notify(sc_core::SC_ZERO_TIME); // waiters see the queue off
	}
	ptp_reset();
	tx_rate_.reset();
	txs_reset();
	rx_fifo_.clear();
	rx_arrival_.clear();
	data_done_ = frame_done_ = sc_core::SC_ZERO_TIME;
	rx_dma_done_.clear();
	if (rx_refused_) {
		rx_refused_ = false;
		if (host_.rx_ready)
			host_.rx_ready();
	}
}

void Nic::reset_counters()
{
	c_ = NicCounters{};
	mstat_ = MacStats{};
	for (auto &q : q_)
		q->rx_frames = q->rx_split = q->tx_frames = q->rx_no_buf_drop = 0;
}

sc_core::sc_time Nic::wire_time(size_t frame_len) const
{
	return sc_core::sc_time(static_cast<double>(frame_len + kWireOverhead) * 8.0 /
					line_rate_bps_,
				sc_core::SC_SEC);
}

bool Nic::dma_rw(WorkBudget &b, uint64_t addr, void *buf, size_t len, bool write, DmaStep step)
{
	if (!len)
		return true;
	b.units += 1 + len / DMS_WORK_UNIT_BYTES; // as the fabric charges it
	// Every transfer of the frame is issued now, in order, so the fabric's
	// resources see them in time order (each resource is one "next free"
	// time: a transfer reserved in the future would hold back everything
	// issued before it). The fabric moves done to when the transfer is
	// done, queued behind other traffic on its path; functional mode
	// leaves it alone. A completion is visible to the host when it is
	// written, as every DMA of this loosely-timed model; the frame is
	// done when its last transfer is.
	sc_core::sc_time done = sc_core::SC_ZERO_TIME;
	const bool ok = bus_dma(dma, write, addr, buf, len, done);
	if (step == DmaStep::Data)
		data_done_ = std::max(data_done_, done);
	if (step != DmaStep::Prefetch)
		frame_done_ = std::max(frame_done_, done);
	return ok;
}

// Count the frames and the engine's units since the last call at the
// current simulated time; past DMS_ENGINE_FRAMES or DMS_ENGINE_WORK, let
// kWorkYieldNs pass so the step that runs this returns. When time has moved
// since the last call (the engine waited), counting starts afresh with the
// work since that call. Only the engine's own work counts: what other
// engines do while it waits is theirs.
void Nic::spend(WorkBudget &b, unsigned frames)
{
	if (!b.counting || sc_core::sc_time_stamp() != b.at) {
		b.counting = true;
		b.at = sc_core::sc_time_stamp();
		b.frames = 0;
		b.from = b.checked;
	}
	b.checked = b.units;
	b.frames += frames;
	if (b.frames < kEngineFrames && b.units - b.from < kEngineWork)
		return;
	trace_("work budget spent (%u frames, %llu units): yield %.0f ns", b.frames,
	       static_cast<unsigned long long>(b.units - b.from), kWorkYieldNs);
	sc_core::wait(sc_core::sc_time(kWorkYieldNs, sc_core::SC_NS));
	b.at = sc_core::sc_time_stamp();
	b.frames = 0;
	b.from = b.checked = b.units;
}

void Nic::charge_frame(WorkBudget &b, size_t len)
{
	b.units += 1 + len / DMS_WORK_UNIT_BYTES;
	sim::charge_bytes(len);
}

// The frame's DMA ends at now + frame_done_; the next frame's starts now.
// With kRxDmaFrames frames in flight, wait for the oldest.
void Nic::rx_retire()
{
	const sc_core::sc_time now = sc_core::sc_time_stamp();
	if (timed_)
		rx_dma_done_.push_back(now + frame_done_);
	data_done_ = frame_done_ = sc_core::SC_ZERO_TIME;
	while (!rx_dma_done_.empty() && rx_dma_done_.front() <= now)
		rx_dma_done_.pop_front();
	if (rx_dma_done_.size() < kRxDmaFrames)
		return;
	sc_core::wait(rx_dma_done_.front() - now);
	rx_dma_done_.pop_front();
}

// The frame's reads, wire time and completion are reserved; go on to the
// next frame unless the wire is booked more than kTxLeadNs ahead.
void Nic::tx_pace()
{
	data_done_ = frame_done_ = sc_core::SC_ZERO_TIME;
	const sc_core::sc_time lead(kTxLeadNs, sc_core::SC_NS);
	const sc_core::sc_time now = sc_core::sc_time_stamp();
	if (timed_ && tx_wire_free_ > now + lead)
		sc_core::wait(tx_wire_free_ - now - lead);
}

std::string Nic::stats_json() const
{
	std::ostringstream o;
	o << "{\"rx_frames\": " << c_.rx_frames << ", \"rx_bytes\": " << c_.rx_bytes
	  << ", \"rx_split\": " << c_.rx_split << ", \"rx_drop\": " << c_.rx_drop
	  << ", \"rx_no_buf\": " << c_.rx_no_buf << ", \"rx_dma_err\": " << c_.rx_dma_err
	  << ", \"tx_frames\": " << c_.tx_frames << ", \"tx_bytes\": " << c_.tx_bytes
	  << ", \"tx_desc_err\": " << c_.tx_desc_err << ", \"tx_dma_err\": " << c_.tx_dma_err
	  << ", \"ring_err\": " << c_.ring_err << ", \"ring_dma_err\": " << c_.ring_dma_err
	  << ", \"rx_hdr_overflow\": " << c_.rx_hdr_overflow << ", \"tx_tso\": " << c_.tx_tso
	  << ", \"tx_tso_segs\": " << c_.tx_tso_segs << ", \"tx_tso_err\": " << c_.tx_tso_err
	  << ", \"rx_gro_frames\": " << c_.rx_gro_frames << ", \"rx_gro_segs\": " << c_.rx_gro_segs
	  << ", \"rx_no_buf_drop\": " << c_.rx_no_buf_drop << ", \"queues\": [";
	for (unsigned i = 0; i < nq_; i++)
		o << (i ? ", " : "") << "{\"rx_frames\": " << q_[i]->rx_frames
		  << ", \"rx_split\": " << q_[i]->rx_split
		  << ", \"rx_no_buf_drop\": " << q_[i]->rx_no_buf_drop
		  << ", \"tx_frames\": " << q_[i]->tx_frames << "}";
	o << "]}";
	return o.str();
}

} // namespace devmemsim
