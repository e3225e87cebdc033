// SPDX-License-Identifier: MIT
#include "tcp_stream.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <stdexcept>

#include "gpu/crc32c.h"

namespace dms_sim
{

namespace
{

// Sender's source data: this many MSS-sized segments, repeated.
constexpr uint64_t kSourceSegments = 512;
// What one TSO/GSO send hands the driver, its doorbell rung at the end.
constexpr uint32_t kTxBurstBytes = 64 * 1024;

const uint8_t *fill_source(uint8_t *src, uint64_t len, uint32_t seed)
{
	std::mt19937_64 rng(seed);
	for (uint64_t i = 0; i < len; i += 8) {
		const uint64_t r = rng();
		std::memcpy(src + i, &r, std::min<uint64_t>(8, len - i));
	}
	return src;
}

void check_chunks(const StreamParams &p, uint32_t mss)
{
	if (p.chunk_bytes < mss || !p.chunks)
		throw std::runtime_error("bounce chunks must hold at least one segment");
}

} // namespace

TcpSender::TcpSender(Host &h, const StreamParams &p, Endpoint self, Endpoint peer)
    : h_(h), n_(h.node()), p_(p), self_(self), peer_(peer), mss_(mss_of(p.mtu)),
      src_len_(kSourceSegments * mss_), src_off_(n_.gpu_alloc(src_len_)),
      src_crc_(fill_source(n_.gpu_mem() + src_off_, src_len_, p.seed), src_len_, mss_),
      written_(p.message_bytes ? 0 : UINT64_MAX)
{
	if (bounce()) {
		check_chunks(p, mss_);
		// Whole segments, so that a bulk stream's never wrap.
		ring_bytes_ = uint64_t{p.chunk_bytes} * p.chunks / mss_ * mss_;
		ring_bus_ = n_.mem().alloc(ring_bytes_, 4096);
	}
	h.add(self.port, this);
}

void TcpSender::start()
{
	if (p_.message_bytes)
		return;
	n_.cpu_job(0, [this] {
		stage_more();
		send_more();
	});
}

void TcpSender::write_message(bool last)
{
	written_ += p_.message_bytes;
	closing_ = last;
	stage_more();
	send_more();
}

// Where the NIC reads stream byte pos: GPU memory (devmem) or the staging ring.
uint64_t TcpSender::bus_of(uint64_t pos) const
{
	return bounce() ? ring_bus_ + pos % ring_bytes_ : n_.gpu_bar() + src_off_ + pos % src_len_;
}

// The next segment: up to an MSS of what the NIC may read, never across a
// message's end or the end of the source or the staging ring; 0 when
// there is none, or a bulk stream would send less than an MSS (it waits
// for the copy engine).
uint32_t TcpSender::segment_len() const
{
	const uint64_t ready = bounce() ? staged_ : written_;
	uint64_t len = std::min<uint64_t>(mss_, ready - snd_nxt_);
	if (p_.message_bytes)
		len = std::min<uint64_t>(len, p_.message_bytes - snd_nxt_ % p_.message_bytes);
	len = std::min(len, src_len_ - snd_nxt_ % src_len_);
	if (bounce())
		len = std::min(len, ring_bytes_ - snd_nxt_ % ring_bytes_);
	return !closing_ && !p_.message_bytes && len < mss_ ? 0 : uint32_t(len);
}

// A bulk stream's application stops writing at stop_ps: what it has
// handed over by then goes out (devmem: one more segment; bounce: what the
// copy engine has or is staging), the last segment with FIN.
void TcpSender::stop_if_due()
{
	if (p_.message_bytes || closing_ || n_.events().now_ps() < p_.stop_ps)
		return;
	closing_ = true;
	written_ = std::max(bounce() ? stage_end_ : 0, snd_nxt_ + mss_);
}

// Fill the window and the TX ring, one 64 KiB burst per CPU job; the
// segment that ends the written bytes of a closed stream carries FIN.
void TcpSender::send_more()
{
	stop_if_due();
	uint8_t hdr[kHdrBytes];
	unsigned room = h_.driver().tx_room(2);
	uint32_t burst = 0, len;
	while (!fin_sent_ && room && (len = segment_len()) &&
	       snd_nxt_ - snd_una_ + len <= p_.window) {
		if (burst && burst + len > kTxBurstBytes) {
			continue_sending();
			return;
		}
		const bool fin = closing_ && snd_nxt_ + len == written_;
		build_headers(hdr, self_, peer_, uint32_t(snd_nxt_), 0,
			      kTcpAck | kTcpPsh | (fin ? kTcpFin : 0), len);
		h_.driver().tx_post(hdr, sizeof(hdr), bus_of(snd_nxt_), len);
		crc_ = src_crc_.update(crc_, snd_nxt_ % src_len_, len);
		if (bounce()) // send(): the application buffer into the socket
			n_.charge(p_.copy_byte_ps * len);
		snd_nxt_ += len;
		burst += len;
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

// bounce: copy-engine jobs (GPU memory -> host staging ring) for the
// written bytes, a chunk at a time, while the ring has room (bytes leave
// it when acknowledged).
void TcpSender::stage_more()
{
	stop_if_due();
	while (bounce() && !fin_sent_ && stage_end_ < written_) {
		const uint64_t pos = stage_end_;
		uint64_t len = std::min<uint64_t>(p_.chunk_bytes, written_ - pos);
		len = std::min(len, ring_bytes_ - pos % ring_bytes_);
		len = std::min(len, src_len_ - pos % src_len_);
		if (pos + len - snd_una_ > ring_bytes_)
			return;
		stage_end_ += len;
		copy_jobs_++;
		h_.copier().copy(false, src_off_ + pos % src_len_, bus_of(pos), len,
				 [this, end = pos + len](bool ok) {
					 copy_errors_ += !ok;
					 staged_ = end;
					 send_more();
				 });
	}
}

void TcpSender::on_segment(const RxFrame &f, const Segment &s)
{
	for (const RxFrag &frag : f.frags)
		h_.driver().return_pbuf(frag.id); // ACKs carry no payload
	if (!(s.flags & kTcpAck))
		return;
	const uint32_t advance = s.ack - uint32_t(snd_una_);
	if (advance <= snd_nxt_ - snd_una_)
		snd_una_ += advance;
	if (fin_sent_ && snd_una_ == snd_nxt_)
		fin_acked_ = true;
	stage_more();
	send_more();
}

TcpReceiver::TcpReceiver(Host &h, const StreamParams &p, Endpoint self, Endpoint peer)
    : h_(h), n_(h.node()), drv_(h.driver()), p_(p), self_(self), peer_(peer), mss_(mss_of(p.mtu))
{
	if (p.mode == PayloadMode::Bounce) {
		check_chunks(p, mss_);
		const uint64_t bytes = uint64_t{p.chunk_bytes} * p.chunks;
		chunk_bus_ = n_.mem().alloc(bytes, 4096);
		dev_off_ = n_.gpu_alloc(bytes);
		for (unsigned i = p.chunks; i-- > 0;)
			free_chunks_.push_back(i);
	}
	h.add(self.port, this);
}

bool TcpReceiver::can_take() const
{
	return p_.mode == PayloadMode::Devmem || cur_ >= 0 || !free_chunks_.empty();
}

void TcpReceiver::on_segment(const RxFrame &f, const Segment &s)
{
	if (uint32_t(rcv_nxt_) != s.seq || fin_) {
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
	// can_take() let in always fits the chunk it started in; a message's
	// end (segments never span two) goes to the GPU at once.
	const bool msg_end = p_.message_bytes && rcv_nxt_ % p_.message_bytes == 0;
	fin_ = s.flags & kTcpFin;
	if (cur_ >= 0 && (msg_end || fin_ || cur_fill_ + mss_ > p_.chunk_bytes))
		submit_chunk();
	if (++unacked_segs_ >= p_.ack_every || fin_)
		send_ack();
}

void TcpReceiver::on_poll_done()
{
	if (rcv_nxt_ != acked_)
		send_ack();
}

// devmem: the payload is in GPU memory already; the buffer (a devmem
// token) goes back at once. bounce: copied into the application buffer.
void TcpReceiver::take_payload(const RxFrag &frag)
{
	if (p_.mode == PayloadMode::Devmem)
		delivered(frag.len, frag.data);
	else
		bounce_copy(frag);
	rcv_nxt_ += frag.len;
	drv_.return_pbuf(frag.id);
}

void TcpReceiver::delivered(uint64_t bytes, const uint8_t *data)
{
	crc_ = devmemsim::crc32c_update(crc_, data, bytes);
	c_.delivered += bytes;
	if (delivered_fn_)
		delivered_fn_(c_.delivered);
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

// The copy engine moves the application buffer to its place in device
// memory; jobs finish in order, so the stream arrives in order.
void TcpReceiver::submit_chunk()
{
	const unsigned chunk = unsigned(cur_);
	const uint32_t len = cur_fill_;
	const uint64_t off = uint64_t{chunk} * p_.chunk_bytes;
	cur_ = -1;
	copies_++;
	c_.copy_jobs++;
	h_.copier().copy(true, dev_off_ + off, chunk_bus_ + off, len,
			 [this, chunk, len](bool ok) { copied(chunk, len, ok); });
}

void TcpReceiver::copied(unsigned chunk, uint32_t len, bool ok)
{
	copies_--;
	c_.copy_errors += !ok;
	delivered(len, n_.gpu_mem() + dev_off_ + uint64_t{chunk} * p_.chunk_bytes);
	free_chunks_.push_back(chunk);
	h_.resume();
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
