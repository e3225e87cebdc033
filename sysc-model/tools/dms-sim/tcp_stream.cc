// SPDX-License-Identifier: MIT
#include "tcp_stream.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <stdexcept>

#include "devmemsim/gpu_regs.h"
#include "gpu/crc32c.h"

namespace dms_sim
{

namespace
{

constexpr uint8_t kTcpFin = 0x01, kTcpPsh = 0x08, kTcpAck = 0x10;
// Sender's source data: this many MSS-sized segments, repeated.
constexpr uint64_t kSourceSegments = 512;
constexpr uint32_t kTxBurstBytes = 64 * 1024;

void put16(uint8_t *p, uint16_t v)
{
	p[0] = uint8_t(v >> 8);
	p[1] = uint8_t(v);
}

void put32(uint8_t *p, uint32_t v)
{
	put16(p, uint16_t(v >> 16));
	put16(p + 2, uint16_t(v));
}

uint32_t get32(const uint8_t *p)
{
	return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

uint16_t ipv4_csum(const uint8_t *h)
{
	uint32_t sum = 0;
	for (int i = 0; i < 20; i += 2)
		sum += uint32_t(h[i]) << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return uint16_t(~sum);
}

// A parsed segment of our stream: sequence, ACK, flags and where the TCP
// payload starts in the header bytes (frames that did not split).
struct Segment {
	uint32_t seq = 0, ack = 0;
	uint8_t flags = 0;
	size_t payload_off = 0, payload_len = 0;
};

bool parse_segment(const RxFrame &f, Segment *s)
{
	if (f.hdr_len < kHdrBytes || f.hdr[12] != 0x08 || f.hdr[13] != 0x00 || f.hdr[23] != 6)
		return false;
	const uint8_t *tcp = f.hdr + 14 + 4 * (f.hdr[14] & 0xf);
	s->seq = get32(tcp + 4);
	s->ack = get32(tcp + 8);
	s->flags = tcp[13];
	s->payload_off = size_t(tcp - f.hdr) + 4 * (tcp[12] >> 4);
	s->payload_len = f.hdr_len > s->payload_off ? f.hdr_len - s->payload_off : 0;
	return true;
}

} // namespace

void build_headers(uint8_t *out, const Endpoint &src, const Endpoint &dst, uint32_t seq,
		   uint32_t ack, uint8_t flags, uint32_t payload_len)
{
	std::memset(out, 0, kHdrBytes);
	std::memcpy(out, dst.mac, 6);
	std::memcpy(out + 6, src.mac, 6);
	put16(out + 12, 0x0800);
	uint8_t *ip = out + 14;
	ip[0] = 0x45;
	put16(ip + 2, uint16_t(20 + 32 + payload_len));
	put16(ip + 6, 0x4000); // DF
	ip[8] = 64;
	ip[9] = 6;
	put32(ip + 12, src.ip);
	put32(ip + 16, dst.ip);
	put16(ip + 10, ipv4_csum(ip));
	uint8_t *tcp = ip + 20;
	put16(tcp, src.port);
	put16(tcp + 2, dst.port);
	put32(tcp + 4, seq);
	put32(tcp + 8, ack);
	tcp[12] = 8 << 4; // 32-byte header
	tcp[13] = flags;
	put16(tcp + 14, 0xffff);
	// Options: NOP, NOP, timestamps (kind 8, length 10; values not modelled).
	tcp[20] = 1;
	tcp[21] = 1;
	tcp[22] = 8;
	tcp[23] = 10;
}

TcpSender::TcpSender(SimNode &n, NicDriver &drv, const StreamParams &p, Endpoint self,
		     Endpoint peer)
    : n_(n), drv_(drv), p_(p), self_(self), peer_(peer), mss_(mss_of(p.mtu)),
      src_len_(kSourceSegments * mss_)
{
	uint8_t *src;
	if (p.mode == PayloadMode::Devmem) { // devmem TX: payloads from GPU memory
		if (src_len_ > n.gpu_mem_size())
			throw std::runtime_error("GPU memory too small for the sender's data");
		src = n.gpu_mem();
		src_bus_ = n.gpu_bar();
	} else {
		src_bus_ = n.mem().alloc(src_len_, 4096);
		src = n.mem().at(src_bus_);
	}
	std::mt19937_64 rng(p.seed);
	for (uint64_t i = 0; i < src_len_; i += 8) {
		const uint64_t r = rng();
		std::memcpy(src + i, &r, std::min<uint64_t>(8, src_len_ - i));
	}
	src_ = src;
	drv_.set_handlers({nullptr, [this](const RxFrame &f) { on_rx(f); }, [this] { send_more(); },
			   nullptr});
}

void TcpSender::start()
{
	n_.cpu_job(0, [this] { send_more(); });
}

// Fill the window and the TX ring, one 64 KiB burst (what one TSO/GSO
// send hands the driver, its doorbell rung at the end) per CPU job; the
// segment sent after stop_ps carries FIN and ends the stream.
void TcpSender::send_more()
{
	uint8_t hdr[kHdrBytes];
	unsigned room = drv_.tx_room(2);
	unsigned burst = std::max(1u, kTxBurstBytes / mss_);
	while (!fin_sent_ && room && snd_nxt_ - snd_una_ + mss_ <= p_.window) {
		if (!burst--) {
			continue_sending();
			return;
		}
		const uint64_t off = snd_nxt_ % src_len_;
		const bool fin = n_.events().now_ps() >= p_.stop_ps;
		build_headers(hdr, self_, peer_, uint32_t(snd_nxt_), 0,
			      kTcpAck | kTcpPsh | (fin ? kTcpFin : 0), mss_);
		drv_.tx_post(hdr, sizeof(hdr), src_bus_ + off, mss_);
		crc_ = devmemsim::crc32c_update(crc_, src_ + off, mss_);
		snd_nxt_ += mss_;
		fin_sent_ = fin;
		room--;
	}
}

// The next burst, in its own CPU job once this one's doorbell has rung.
void TcpSender::continue_sending()
{
	if (burst_queued_)
		return;
	burst_queued_ = true;
	n_.at_job_end([this] {
		n_.cpu_job(n_.events().now_ps(), [this] {
			burst_queued_ = false;
			send_more();
		});
	});
}

void TcpSender::on_rx(const RxFrame &f)
{
	for (const RxFrag &frag : f.frags)
		drv_.return_pbuf(frag.id); // ACKs carry no payload
	Segment s;
	if (!parse_segment(f, &s) || !(s.flags & kTcpAck))
		return;
	const uint32_t advance = s.ack - uint32_t(snd_una_);
	if (advance <= snd_nxt_ - snd_una_)
		snd_una_ += advance;
	if (fin_sent_ && snd_una_ == snd_nxt_)
		fin_acked_ = true;
	send_more();
}

TcpReceiver::TcpReceiver(SimNode &n, NicDriver &drv, const StreamParams &p, Endpoint self,
			 Endpoint peer)
    : n_(n), drv_(drv), p_(p), self_(self), peer_(peer), mss_(mss_of(p.mtu))
{
	if (p.mode == PayloadMode::Bounce) {
		if (p.chunk_bytes < mss_ || !p.chunks)
			throw std::runtime_error("bounce chunks must hold at least one segment");
		chunk_bus_ = n.mem().alloc(uint64_t{p.chunk_bytes} * p.chunks, 4096);
		for (unsigned i = p.chunks; i-- > 0;)
			free_chunks_.push_back(i);
	}
	drv_.set_handlers({[this] { return can_take(); }, [this](const RxFrame &f) { on_rx(f); },
			   nullptr,
			   [this] {
				   if (rcv_nxt_ != acked_)
					   send_ack();
			   }});
}

PayloadPool TcpReceiver::payload_pool(SimNode &n, const StreamParams &p, const DriverParams &d)
{
	const uint64_t bytes = uint64_t{d.pbuf_size} << d.rx_ring_log2;
	if (p.mode == PayloadMode::Devmem) {
		// The top of GPU memory: the bounce copies' area starts at 0.
		if (bytes > n.gpu_mem_size() / 2)
			throw std::runtime_error("GPU memory too small for the payload buffers");
		const uint64_t off = n.gpu_mem_size() - bytes;
		return {n.gpu_bar() + off, n.gpu_mem() + off};
	}
	const uint64_t bus = n.mem().alloc(bytes, 4096);
	return {bus, n.mem().at(bus)};
}

void TcpReceiver::start()
{
	n_.gpu_write(DMS_GPU_REG_IRQ_MASK, DMS_GPU_IRQ_COPY_DONE | DMS_GPU_IRQ_ERROR);
}

bool TcpReceiver::can_take() const
{
	return p_.mode == PayloadMode::Devmem || cur_ >= 0 || !free_chunks_.empty();
}

void TcpReceiver::on_rx(const RxFrame &f)
{
	Segment s;
	if (!parse_segment(f, &s) || uint32_t(rcv_nxt_) != s.seq || fin_) {
		c_.out_of_order++;
		for (const RxFrag &frag : f.frags)
			drv_.return_pbuf(frag.id);
		return;
	}
	if (!f.csum_ok)
		c_.csum_bad++;
	for (const RxFrag &frag : f.frags)
		take_payload(frag);
	// A chunk is handed to the copy engine between frames, so the frame
	// can_take() let in always fits the chunk it started in.
	if (cur_ >= 0 && cur_fill_ + mss_ > p_.chunk_bytes)
		submit_chunk();
	if (s.flags & kTcpFin) {
		fin_ = true;
		if (p_.mode == PayloadMode::Bounce && cur_ >= 0)
			submit_chunk();
	}
	if (++unacked_segs_ >= p_.ack_every || fin_)
		send_ack();
}

// devmem: the payload is in GPU memory already; the buffer (a devmem
// token) goes back at once. bounce: copied into the application buffer.
void TcpReceiver::take_payload(const RxFrag &frag)
{
	if (p_.mode == PayloadMode::Devmem) {
		crc_ = devmemsim::crc32c_update(crc_, frag.data, frag.len);
		c_.delivered += frag.len;
	} else {
		bounce_copy(frag);
	}
	rcv_nxt_ += frag.len;
	drv_.return_pbuf(frag.id);
}

void TcpReceiver::bounce_copy(const RxFrag &frag)
{
	if (cur_ < 0) {
		cur_ = int(free_chunks_.back());
		free_chunks_.pop_back();
		cur_fill_ = 0;
	}
	const uint64_t dst = chunk_bus_ + uint64_t(cur_) * p_.chunk_bytes + cur_fill_;
	std::memcpy(n_.mem().at(dst), frag.data, frag.len);
	n_.charge(p_.copy_byte_ps * frag.len);
	cur_fill_ += frag.len;
}

void TcpReceiver::submit_chunk()
{
	const uint64_t area = n_.gpu_mem_size() / 2;
	if (dev_cursor_ + cur_fill_ > area)
		dev_cursor_ = 0;
	copies_.push_back({unsigned(cur_), cur_fill_, dev_cursor_});
	dev_cursor_ += cur_fill_;
	cur_ = -1;
	if (!busy_)
		start_copy();
}

// Program the copy engine (host -> device memory) for the oldest chunk;
// the doorbell rings when the CPU work that queued it ends.
void TcpReceiver::start_copy()
{
	if (copies_.empty())
		return;
	busy_ = true;
	const Copy c = copies_.front();
	const uint64_t host = chunk_bus_ + uint64_t{c.chunk} * p_.chunk_bytes;
	n_.at_job_end([this, c, host] {
		n_.gpu_write(DMS_GPU_REG_COPY_DEV_LO, c.dev, 8);
		n_.gpu_write(DMS_GPU_REG_COPY_HOST_LO, host, 8);
		n_.gpu_write(DMS_GPU_REG_COPY_LEN_LO, c.len, 8);
		n_.gpu_write(DMS_GPU_REG_COPY_CTRL, DMS_GPU_COPY_TO_DEV);
		n_.gpu_write(DMS_GPU_REG_COPY_DOORBELL, 1);
	});
	c_.copy_jobs++;
}

void TcpReceiver::on_gpu_irq()
{
	n_.cpu_job(n_.events().now_ps(), [this] {
		const uint32_t st = n_.gpu_read(DMS_GPU_REG_COPY_STATUS);
		n_.gpu_write(DMS_GPU_REG_IRQ_STATUS, n_.gpu_read(DMS_GPU_REG_IRQ_STATUS));
		if (!busy_ || (st & DMS_GPU_STATUS_BUSY) || !(st & DMS_GPU_STATUS_DONE))
			return;
		if (st & DMS_GPU_STATUS_ERROR)
			c_.copy_errors++;
		const Copy c = copies_.front();
		copies_.pop_front();
		busy_ = false;
		crc_ = devmemsim::crc32c_update(crc_, n_.gpu_mem() + c.dev, c.len);
		c_.delivered += c.len;
		free_chunks_.push_back(c.chunk);
		start_copy();
		drv_.resume();
	});
}

void TcpReceiver::send_ack()
{
	if (!drv_.tx_room(1))
		return; // the next poll acknowledges
	uint8_t hdr[kHdrBytes];
	build_headers(hdr, self_, peer_, 0, uint32_t(rcv_nxt_), kTcpAck, 0);
	drv_.tx_post(hdr, sizeof(hdr), 0, 0);
	acked_ = rcv_nxt_;
	unacked_segs_ = 0;
	c_.acks++;
}

} // namespace dms_sim
