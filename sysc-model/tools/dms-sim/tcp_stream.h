// SPDX-License-Identifier: MIT
// dms-sim's TCP-like stream from one host to another (segment.h: the
// headers): a fixed window, delayed ACKs on the reverse path, no loss
// recovery (the network and the NICs never drop: a NIC without room holds
// frames back). The data is a bulk stream (the sender sends until
// stop_ps) or messages the application writes (a segment never spans two
// messages, as with TCP_NODELAY and one write per message).
//
// The payload always starts and ends in GPU memory. devmem: the sending
// NIC reads it from its GPU's memory, the receiving NIC writes it into its
// GPU's memory (peer to peer at the switch). bounce: the sender's GPU copy
// engine moves it into a host staging buffer, which the sender's CPU hands
// to the socket (cpu.copy_ps_per_byte) and its NIC reads; the receiving NIC
// writes host memory, the receiver's CPU copies it into an application
// buffer and its GPU's copy engine moves that into device memory. So in
// bounce mode each payload byte crosses each end's root complex twice.
//
// The receiver checks what landed in GPU memory against what the sender
// sent with a CRC32C over the stream: a measurement, not work, so it costs
// no simulated time.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "host.h"
#include "source_crc.h"

namespace dms_sim
{

enum class PayloadMode { Devmem, Bounce };

struct StreamParams {
	PayloadMode mode = PayloadMode::Devmem;
	uint32_t mtu = 9000;
	uint64_t window = 4u << 20;  // bytes in flight
	unsigned ack_every = 2;	     // segments per ACK (Linux's delayed ACK)
	uint64_t stop_ps = 0;	     // bulk: the sender stops writing then (FIN)
	uint64_t copy_byte_ps = 100; // bounce: CPU copy socket <-> application buffer, ps/byte
	uint32_t chunk_bytes = 256u << 10; // bounce: application buffer per copy-engine job
	unsigned chunks = 8;		   // bounce: application buffers at each end
	uint32_t seed = 1;
	uint32_t message_bytes = 0; // 0: a bulk stream; else the size of every message
};

class TcpSender : public Conn
{
public:
	TcpSender(Host &h, const StreamParams &p, Endpoint self, Endpoint peer);
	// A bulk stream starts sending; a message stream waits for writes.
	void start();
	// Inside a CPU job: the application hands the socket one message (its
	// payload ready in GPU memory); the last one closes the stream.
	void write_message(bool last);
	uint64_t sent() const { return snd_nxt_; }
	uint32_t crc() const { return crc_; }
	bool done() const { return fin_acked_; }
	// bounce: copy-engine jobs out of GPU memory, and those that failed.
	uint64_t copy_jobs() const { return copy_jobs_; }
	uint64_t copy_errors() const { return copy_errors_; }

	void on_segment(const RxFrame &f, const Segment &s) override;
	void on_tx_room() override { send_more(); }

private:
	bool bounce() const { return p_.mode == PayloadMode::Bounce; }
	uint32_t segment_len() const;
	void stop_if_due();
	void send_more();
	void continue_sending();
	void stage_more();
	uint64_t bus_of(uint64_t pos) const;

	Host &h_;
	SimNode &n_;
	StreamParams p_;
	Endpoint self_, peer_;
	uint32_t mss_;
	// The source: src_len_ bytes of GPU memory at src_off_, repeated.
	uint64_t src_len_, src_off_;
	SourceCrc src_crc_;
	// Stream bytes the application wrote (a bulk stream: all of them)
	// and, in bounce mode, those handed to the copy engine and those in
	// the host staging ring (ring_bytes_ at ring_bus_) already.
	uint64_t written_, stage_end_ = 0, staged_ = 0;
	uint64_t ring_bus_ = 0, ring_bytes_ = 0;
	uint64_t snd_nxt_ = 0, snd_una_ = 0;
	uint32_t crc_ = 0xffffffffu;
	uint64_t copy_jobs_ = 0, copy_errors_ = 0;
	bool closing_ = false, fin_sent_ = false, fin_acked_ = false, burst_queued_ = false;
};

struct ReceiverCounters {
	uint64_t delivered = 0; // bytes verified in GPU memory, in order
	uint64_t out_of_order = 0, csum_bad = 0, acks = 0, copy_jobs = 0, copy_errors = 0;
};

class TcpReceiver : public Conn
{
public:
	TcpReceiver(Host &h, const StreamParams &p, Endpoint self, Endpoint peer);
	// Called inside a CPU job whenever more bytes are in GPU memory, with
	// all bytes delivered so far.
	void on_delivered(std::function<void(uint64_t)> fn) { delivered_fn_ = std::move(fn); }
	uint32_t crc() const { return crc_; }
	bool finished() const { return fin_ && copies_ == 0 && cur_ < 0; }
	const ReceiverCounters &counters() const { return c_; }

	bool can_take() const override;
	void on_segment(const RxFrame &f, const Segment &s) override;
	void on_poll_done() override;

private:
	void take_payload(const RxFrag &frag);
	void bounce_copy(const RxFrag &frag);
	void submit_chunk();
	void copied(unsigned chunk, uint32_t len, bool ok);
	void delivered(uint64_t bytes, const uint8_t *data);
	void send_ack();

	Host &h_;
	SimNode &n_;
	NicDriver &drv_;
	StreamParams p_;
	Endpoint self_, peer_;
	uint32_t mss_;
	uint64_t rcv_nxt_ = 0, acked_ = 0;
	unsigned unacked_segs_ = 0;
	bool fin_ = false;
	uint32_t crc_ = 0xffffffffu;
	std::function<void(uint64_t)> delivered_fn_;
	// bounce: application buffers (host memory, chunk i at chunk_bus_ +
	// i * chunk_bytes) copied to their own place in GPU memory (dev_off_)
	uint64_t chunk_bus_ = 0, dev_off_ = 0;
	std::vector<unsigned> free_chunks_;
	int cur_ = -1;
	uint32_t cur_fill_ = 0;
	unsigned copies_ = 0;
	ReceiverCounters c_;
};

} // namespace dms_sim
