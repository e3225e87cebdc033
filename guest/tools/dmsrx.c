// SPDX-License-Identifier: GPL-2.0
/*
 * libdmsrx: dms-devmem's devmem TCP receive loop (dms_rx_run), loaded by
 * dms-devmem with ctypes.
 *
 * A devmem stream at MTU 9000 is ~3 fragments per segment. Under TCG every
 * guest instruction is expensive, and an interpreter's work per fragment
 * (a control message object, unpacking it, merging ranges, packing its
 * token) cost as much as the kernel's own. Here a fragment is a few
 * compares and stores: recvmsg() takes as much as the socket holds, the
 * fragments' dma-buf ranges are merged where they continue each other and
 * their tokens where they are consecutive, and every batch is verified in
 * one CRC gather list of the GPU's engine (DMSGPU_IOCTL_CRC_LIST) before
 * its tokens go back in SO_DEVMEM_DONTNEED calls as full as the kernel takes.
 *
 * A batch is closed when it reaches batch_bytes, when its arrays would not
 * hold another recvmsg's worth, when host-memory (SCM_DEVMEM_LINEAR) bytes
 * arrive (the CRC is one stream in arrival order), and whenever the socket
 * has nothing more to read right now: fragments are never held while
 * waiting for the sender.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "dmsgpu.h"

/* Linux 7.3 uAPI, newer than the build host's headers:
 * include/uapi/asm-generic/socket.h, include/linux/socket.h and
 * include/uapi/linux/uio.h. */
#define DMS_SO_DEVMEM_LINEAR 78
#define DMS_SO_DEVMEM_DMABUF 79
#define DMS_SO_DEVMEM_DONTNEED 80
#define DMS_MSG_SOCK_DEVMEM 0x2000000

struct dms_dmabuf_cmsg {
	uint64_t frag_offset;
	uint32_t frag_size;
	uint32_t frag_token;
	uint32_t dmabuf_id;
	uint32_t flags;
};

struct dms_dmabuf_token {
	uint32_t token_start;
	uint32_t token_count;
};

/* MAX_DONTNEED_TOKENS and MAX_DONTNEED_FRAGS, net/core/sock.c */
#define DONTNEED_MAX_TOKENS 128
#define DONTNEED_MAX_FRAGS 1024

/* Control messages one recvmsg() can return; ranges and tokens a batch
 * holds; the longest range DMSGPU_IOCTL_CRC_LIST takes. */
#define CMSGS_PER_RECV 4096
#define BATCH_MAX DMSGPU_CRC_LIST_MAX
#define RANGE_MAX (64ULL << 20)

/* What dms-devmem passes in and reads back (its ctypes mirror: DmsRx). */
struct dms_rx {
	int32_t sock;	     /* in: the connected TCP socket */
	int32_t gpu_fd;	     /* in: /dev/dmsgpuN, or -1: CRC on the CPU */
	int32_t buf_fd;	     /* in: the dma-buf bound to the RX queue */
	uint32_t binding;    /* in: its bind-rx id */
	uint64_t buf_size;   /* in: its size */
	uint64_t recv_size;  /* in: the most one recvmsg() takes */
	uint64_t batch_size; /* in: verify and give back at least every this many bytes */
	uint32_t crc;	     /* in: seed; out: the CRC32C register after the stream */
	int32_t err;	     /* out: errno of a failed call, 0 if none */
	uint64_t devmem_bytes, linear_bytes, frags; /* out */
	uint64_t recv_calls, crc_jobs, ranges, dontneed_calls;
	char error[256]; /* out: what failed */
};

struct rx_state {
	struct dms_rx *rx;
	const unsigned char *cpu_map; /* gpu_fd < 0: the dma-buf, mapped */
	unsigned char *data;
	unsigned char *control;
	size_t control_size;
	struct dmsgpu_range ranges[BATCH_MAX];
	struct dms_dmabuf_token tokens[BATCH_MAX];
	uint32_t nranges, ntokens;
	uint64_t batch_bytes;
};

static uint32_t crc_table[8][256];

static void crc_table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78 : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^
					  crc_table[0][crc_table[t - 1][i] & 0xff];
}

/* Linux's crc32c(crc, p, len): the reflected register, no inversions;
 * slicing by 8 (little-endian). */
static uint32_t crc32c_cpu(uint32_t crc, const unsigned char *p, size_t len)
{
	while (len >= 8) {
		uint32_t lo = crc ^ (p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24);

		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][p[4]] ^ crc_table[2][p[5]] ^ crc_table[1][p[6]] ^
		      crc_table[0][p[7]];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

static int fail(struct dms_rx *rx, int err, const char *what)
{
	rx->err = err;
	if (err)
		snprintf(rx->error, sizeof(rx->error), "%s: %s", what, strerror(err));
	else
		snprintf(rx->error, sizeof(rx->error), "%s", what);
	return -1;
}

static int verify_ranges(struct rx_state *st)
{
	struct dms_rx *rx = st->rx;
	struct dmsgpu_crc_list job = {
		.fd = rx->buf_fd,
		.seed = rx->crc,
		.count = st->nranges,
		.ranges = (uintptr_t)st->ranges,
	};

	rx->ranges += st->nranges;
	if (st->cpu_map) {
		for (uint32_t i = 0; i < st->nranges; i++)
			rx->crc = crc32c_cpu(rx->crc, st->cpu_map + st->ranges[i].offset,
					     st->ranges[i].len);
		return 0;
	}
	rx->crc_jobs++;
	if (ioctl(rx->gpu_fd, DMSGPU_IOCTL_CRC_LIST, &job))
		return fail(rx, errno, "DMSGPU_IOCTL_CRC_LIST");
	rx->crc = job.crc;
	return 0;
}

/* One SO_DEVMEM_DONTNEED call; the kernel returns how many it freed. */
static int dontneed(struct rx_state *st, struct dms_dmabuf_token *tokens, uint32_t n,
		    uint32_t frags)
{
	struct dms_rx *rx = st->rx;
	int ret = setsockopt(rx->sock, SOL_SOCKET, DMS_SO_DEVMEM_DONTNEED, tokens,
			     n * sizeof(*tokens));

	rx->dontneed_calls++;
	if (ret < 0)
		return fail(rx, errno, "SO_DEVMEM_DONTNEED");
	if ((uint32_t)ret != frags) {
		snprintf(rx->error, sizeof(rx->error),
			 "SO_DEVMEM_DONTNEED freed %d of %u fragments (tokens lost)", ret, frags);
		return -1;
	}
	return 0;
}

/* Give the batch's tokens back, each call within the kernel's limits. */
static int give_back(struct rx_state *st)
{
	struct dms_dmabuf_token call[DONTNEED_MAX_TOKENS];
	uint32_t n = 0, frags = 0;

	for (uint32_t i = 0; i < st->ntokens; i++) {
		struct dms_dmabuf_token t = st->tokens[i];

		while (t.token_count) {
			uint32_t take = t.token_count;

			if (take > DONTNEED_MAX_FRAGS - frags)
				take = DONTNEED_MAX_FRAGS - frags;
			call[n].token_start = t.token_start;
			call[n++].token_count = take;
			frags += take;
			t.token_start += take;
			t.token_count -= take;
			if (n == DONTNEED_MAX_TOKENS || frags == DONTNEED_MAX_FRAGS) {
				if (dontneed(st, call, n, frags))
					return -1;
				n = frags = 0;
			}
		}
	}
	return n ? dontneed(st, call, n, frags) : 0;
}

/* Verify the batch in device memory, then return its fragments. */
static int close_batch(struct rx_state *st)
{
	if (st->nranges && verify_ranges(st))
		return -1;
	if (st->ntokens && give_back(st))
		return -1;
	st->nranges = st->ntokens = 0;
	st->batch_bytes = 0;
	return 0;
}

static int add_frag(struct rx_state *st, const struct dms_dmabuf_cmsg *c)
{
	struct dms_rx *rx = st->rx;
	struct dmsgpu_range *r = st->nranges ? &st->ranges[st->nranges - 1] : NULL;
	struct dms_dmabuf_token *t = st->ntokens ? &st->tokens[st->ntokens - 1] : NULL;

	if (c->dmabuf_id != rx->binding) {
		snprintf(rx->error, sizeof(rx->error), "fragment of dma-buf %u, bound %u",
			 c->dmabuf_id, rx->binding);
		return -1;
	}
	if (c->frag_offset > rx->buf_size || c->frag_size > rx->buf_size - c->frag_offset) {
		snprintf(rx->error, sizeof(rx->error),
			 "fragment %llu+%u outside the %llu-byte dma-buf",
			 (unsigned long long)c->frag_offset, c->frag_size,
			 (unsigned long long)rx->buf_size);
		return -1;
	}
	if (r && r->offset + r->len == c->frag_offset && r->len + c->frag_size <= RANGE_MAX)
		r->len += c->frag_size;
	else
		st->ranges[st->nranges++] =
			(struct dmsgpu_range){.offset = c->frag_offset, .len = c->frag_size};
	if (t && t->token_start + t->token_count == c->frag_token)
		t->token_count++;
	else
		st->tokens[st->ntokens++] =
			(struct dms_dmabuf_token){.token_start = c->frag_token, .token_count = 1};
	rx->frags++;
	rx->devmem_bytes += c->frag_size;
	st->batch_bytes += c->frag_size;
	return 0;
}

/* The control messages of one recvmsg() that returned n bytes. */
static int parse(struct rx_state *st, struct msghdr *msg, size_t n)
{
	struct dms_rx *rx = st->rx;
	size_t linear = 0, frag_bytes = 0;

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		struct dms_dmabuf_cmsg c;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_len < CMSG_LEN(sizeof(c)))
			continue;
		memcpy(&c, CMSG_DATA(cm), sizeof(c));
		if (cm->cmsg_type == DMS_SO_DEVMEM_DMABUF) {
			if (add_frag(st, &c))
				return -1;
			frag_bytes += c.frag_size;
		} else if (cm->cmsg_type == DMS_SO_DEVMEM_LINEAR) {
			/* Packed at the start of the buffer, in stream order. */
			if (c.frag_size > n - linear)
				return fail(rx, 0, "SCM_DEVMEM_LINEAR beyond the bytes received");
			if (close_batch(st))
				return -1;
			rx->crc = crc32c_cpu(rx->crc, st->data + linear, c.frag_size);
			rx->linear_bytes += c.frag_size;
			linear += c.frag_size;
		}
	}
	if (linear + frag_bytes != n) {
		snprintf(rx->error, sizeof(rx->error),
			 "recvmsg returned %zu bytes, control messages account for %zu", n,
			 linear + frag_bytes);
		return -1;
	}
	return 0;
}

/* One recvmsg(); returns its byte count, 0 at the end of the stream, -1
 * on failure. Waits only with no batch open. */
static ssize_t receive_once(struct rx_state *st)
{
	struct dms_rx *rx = st->rx;
	struct iovec iov = {.iov_base = st->data, .iov_len = rx->recv_size};
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = st->control,
		.msg_controllen = st->control_size,
	};

	for (;;) {
		int wait = st->nranges || st->ntokens ? MSG_DONTWAIT : 0;
		ssize_t n = recvmsg(rx->sock, &msg, DMS_MSG_SOCK_DEVMEM | wait);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && wait && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (close_batch(st))
				return -1;
			continue;
		}
		if (n < 0)
			return fail(rx, errno, "recvmsg(MSG_SOCK_DEVMEM)");
		rx->recv_calls++;
		if (msg.msg_flags & MSG_CTRUNC)
			return fail(rx, 0, "devmem control messages truncated (tokens lost)");
		if (!n && !msg.msg_controllen)
			return 0;
		return parse(st, &msg, n) ? -1 : n;
	}
}

static int receive_loop(struct rx_state *st)
{
	struct dms_rx *rx = st->rx;

	for (;;) {
		ssize_t n;

		if (st->batch_bytes >= rx->batch_size || st->nranges > BATCH_MAX - CMSGS_PER_RECV ||
		    st->ntokens > BATCH_MAX - CMSGS_PER_RECV) {
			if (close_batch(st))
				return -1;
		}
		n = receive_once(st);
		if (n <= 0)
			return n < 0 ? -1 : close_batch(st);
	}
}

/* Receive the stream to its end: 0, or -1 with rx->error (and rx->err). */
int dms_rx_run(struct dms_rx *rx)
{
	struct rx_state *st = calloc(1, sizeof(*st));
	int ret = -1;

	rx->err = 0;
	rx->error[0] = 0;
	if (!st)
		return fail(rx, ENOMEM, "receive state");
	st->rx = rx;
	crc_table_init();
	st->control_size = CMSGS_PER_RECV * CMSG_SPACE(sizeof(struct dms_dmabuf_cmsg));
	st->control = malloc(st->control_size);
	/* Only host-memory bytes are written here: pages stay untouched otherwise. */
	st->data = mmap(NULL, rx->recv_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	if (rx->gpu_fd < 0) {
		st->cpu_map = mmap(NULL, rx->buf_size, PROT_READ, MAP_SHARED, rx->buf_fd, 0);
		if (st->cpu_map == MAP_FAILED) {
			st->cpu_map = NULL;
			fail(rx, errno, "mmap of the dma-buf");
			goto out;
		}
	}
	if (!st->control || st->data == MAP_FAILED) {
		fail(rx, ENOMEM, "receive buffers");
		goto out;
	}
	ret = receive_loop(st);
out:
	if (st->cpu_map)
		munmap((void *)st->cpu_map, rx->buf_size);
	if (st->data != MAP_FAILED && st->data)
		munmap(st->data, rx->recv_size);
	free(st->control);
	free(st);
	return ret;
}
