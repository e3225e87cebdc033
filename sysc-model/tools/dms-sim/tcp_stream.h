// SPDX-License-Identifier: MIT
// dms-sim's bulk TCP-like stream between two nodes: real Ethernet/IPv4/TCP
// headers (with the timestamp option Linux uses, so MSS = MTU - 52), a
// fixed window, delayed ACKs on the reverse path, no loss recovery (the
// wire and the NICs never drop: a NIC without room holds frames back).
// Modes: devmem (payloads straight between the NICs and the GPUs' memory)
// and bounce (payloads through host memory; the receiver copies them into
// an application buffer and the GPU's copy engine moves that to device
// memory). The receiver checks what landed in GPU memory against what the
// sender sent with a CRC32C over the stream: a measurement, not work, so
// it costs no simulated time.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "nic_driver.h"
#include "sim_host.h"

namespace dms_sim
{

enum class PayloadMode { Devmem, Bounce };

struct StreamParams {
	PayloadMode mode = PayloadMode::Devmem;
	uint32_t mtu = 9000;
	uint64_t window = 4u << 20;	   // bytes in flight
	unsigned ack_every = 2;		   // segments per ACK (Linux's delayed ACK)
	uint64_t stop_ps = 0;		   // the sender's last segment (FIN) goes out after this
	uint64_t copy_byte_ps = 100;	   // bounce: receiver CPU copy, ps per byte
	uint32_t chunk_bytes = 256u << 10; // bounce: application buffer per copy job
	unsigned chunks = 8;
	uint32_t seed = 1;
};

// Header bytes of a segment: Ethernet 14, IPv4 20, TCP 20 + 12 (timestamps).
constexpr uint32_t kHdrBytes = 14 + 20 + 32;
inline uint32_t mss_of(uint32_t mtu)
{
	return mtu - (kHdrBytes - 14);
}

struct Endpoint {
	const uint8_t *mac;
	uint32_t ip;
	uint16_t port;
};

// Build a segment's headers into out (kHdrBytes): the NIC fills the TCP
// checksum (DMS_TX_F_CSUM), the IPv4 header checksum is computed here.
void build_headers(uint8_t *out, const Endpoint &src, const Endpoint &dst, uint32_t seq,
		   uint32_t ack, uint8_t flags, uint32_t payload_len);

class TcpSender
{
public:
	TcpSender(SimNode &n, NicDriver &drv, const StreamParams &p, Endpoint self, Endpoint peer);
	void start();
	uint64_t sent() const { return snd_nxt_; }
	uint32_t crc() const { return crc_; }
	bool done() const { return fin_acked_; }

private:
	void send_more();
	void continue_sending();
	void on_rx(const RxFrame &f);

	SimNode &n_;
	NicDriver &drv_;
	StreamParams p_;
	Endpoint self_, peer_;
	uint32_t mss_;
	uint64_t src_len_, src_bus_;
	const uint8_t *src_;
	uint64_t snd_nxt_ = 0, snd_una_ = 0;
	uint32_t crc_ = 0xffffffffu;
	bool fin_sent_ = false, fin_acked_ = false, burst_queued_ = false;
};

struct ReceiverCounters {
	uint64_t delivered = 0; // bytes verified in GPU memory, in order
	uint64_t out_of_order = 0, csum_bad = 0, acks = 0, copy_jobs = 0, copy_errors = 0;
};

class TcpReceiver
{
public:
	TcpReceiver(SimNode &n, NicDriver &drv, const StreamParams &p, Endpoint self,
		    Endpoint peer);
	// Pool for the NIC's payload buffers: GPU memory (devmem) or host memory.
	static PayloadPool payload_pool(SimNode &n, const StreamParams &p, const DriverParams &d);
	void start();
	void on_gpu_irq();
	uint32_t crc() const { return crc_; }
	bool finished() const { return fin_ && copies_.empty() && !busy_; }
	const ReceiverCounters &counters() const { return c_; }

private:
	struct Copy {
		unsigned chunk;
		uint32_t len;
		uint64_t dev;
	};
	bool can_take() const;
	void on_rx(const RxFrame &f);
	void take_payload(const RxFrag &frag);
	void bounce_copy(const RxFrag &frag);
	void submit_chunk();
	void start_copy();
	void send_ack();

	SimNode &n_;
	NicDriver &drv_;
	StreamParams p_;
	Endpoint self_, peer_;
	uint32_t mss_;
	uint64_t rcv_nxt_ = 0, acked_ = 0;
	unsigned unacked_segs_ = 0;
	bool fin_ = false;
	uint32_t crc_ = 0xffffffffu;
	// bounce: application buffers (host memory) and copy jobs to the GPU
	uint64_t chunk_bus_ = 0;
	std::vector<unsigned> free_chunks_;
	int cur_ = -1;
	uint32_t cur_fill_ = 0;
	std::deque<Copy> copies_;
	bool busy_ = false;
	uint64_t dev_cursor_ = 0;
	ReceiverCounters c_;
};

} // namespace dms_sim
