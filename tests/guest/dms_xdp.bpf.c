// SPDX-License-Identifier: GPL-2.0
/*
 * XDP programs for tests/guest/test_xdp.py, which compiles this file once
 * per program (clang -target bpf -DDMS_XDP_<NAME>) and attaches the object
 * with `ip link set DEV xdpdrv obj FILE sec SECTION`. Each program acts on
 * IPv4 UDP datagrams to DMS_XDP_PORT only and passes every other frame, so
 * the nodes' other traffic keeps flowing.
 *
 *   DROP       "xdp"        drop them
 *   TX         "xdp"        send them back (XDP_TX), addresses and ports swapped
 *   TX_MB      "xdp.frags"  the same, for frames in several buffers
 *   REDIRECT   "xdp.frags"  the same through bpf_redirect() to the ingress
 *                           device (ndo_xdp_xmit)
 *   PASS_MB    "xdp.frags"  pass them only if they arrived in several buffers
 *   XSK        "xdp.frags"  redirect them to the AF_XDP socket of their RX queue
 *                           (map dms_xsks), pass them if it has none
 *
 * Self-contained (no libbpf headers): the few uAPI definitions it needs are
 * below.
 */
typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;

#define DMS_XDP_PORT 9999

struct xdp_md {
	__u32 data;
	__u32 data_end;
	__u32 data_meta;
	__u32 ingress_ifindex;
	__u32 rx_queue_index;
	__u32 egress_ifindex;
};

enum xdp_action { XDP_ABORTED, XDP_DROP, XDP_PASS, XDP_TX, XDP_REDIRECT };

/* Ethernet, IPv4 without options, UDP. */
struct udp4_frame {
	__u8 dst[6];
	__u8 src[6];
	__u16 proto;
	__u8 ver_ihl;
	__u8 tos;
	__u16 tot_len;
	__u16 id;
	__u16 frag_off;
	__u8 ttl;
	__u8 ip_proto;
	__u16 ip_csum;
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
	__u16 len;
	__u16 udp_csum;
} __attribute__((packed));

#define SEC(name) __attribute__((section(name), used))

/* Helper ids of include/uapi/linux/bpf.h. */
static long (*bpf_redirect)(__u32 ifindex, __u64 flags) = (void *)23;
static long (*bpf_xdp_get_buff_len)(struct xdp_md *ctx) = (void *)188;

char _license[] SEC("license") = "GPL";

/* The frame's headers if it is a test datagram, else 0. */
static __attribute__((always_inline)) struct udp4_frame *test_datagram(struct xdp_md *ctx)
{
	struct udp4_frame *f = (void *)(long)ctx->data;

	if ((void *)(f + 1) > (void *)(long)ctx->data_end)
		return 0;
	if (f->proto != __builtin_bswap16(0x0800) || f->ver_ihl != 0x45 || f->ip_proto != 17 ||
	    f->dport != __builtin_bswap16(DMS_XDP_PORT))
		return 0;
	return f;
}

/* Address it back to its sender; the checksums do not change. */
static __attribute__((always_inline)) void reflect(struct udp4_frame *f)
{
	__u32 addr = f->saddr;
	__u16 port = f->sport;
	__u8 mac;
	int i;

	for (i = 0; i < 6; i++) {
		mac = f->src[i];
		f->src[i] = f->dst[i];
		f->dst[i] = mac;
	}
	f->saddr = f->daddr;
	f->daddr = addr;
	f->sport = f->dport;
	f->dport = port;
}

#if defined(DMS_XDP_DROP)
SEC("xdp") int dms_xdp_drop(struct xdp_md *ctx)
{
	return test_datagram(ctx) ? XDP_DROP : XDP_PASS;
}
#elif defined(DMS_XDP_TX)
SEC("xdp") int dms_xdp_tx(struct xdp_md *ctx)
{
	struct udp4_frame *f = test_datagram(ctx);

	if (!f)
		return XDP_PASS;
	reflect(f);
	return XDP_TX;
}
#elif defined(DMS_XDP_TX_MB)
SEC("xdp.frags") int dms_xdp_tx_mb(struct xdp_md *ctx)
{
	struct udp4_frame *f = test_datagram(ctx);

	if (!f)
		return XDP_PASS;
	reflect(f);
	return XDP_TX;
}
#elif defined(DMS_XDP_REDIRECT)
SEC("xdp.frags") int dms_xdp_redirect(struct xdp_md *ctx)
{
	struct udp4_frame *f = test_datagram(ctx);

	if (!f)
		return XDP_PASS;
	reflect(f);
	return bpf_redirect(ctx->ingress_ifindex, 0);
}
#elif defined(DMS_XDP_PASS_MB)
SEC("xdp.frags") int dms_xdp_pass_mb(struct xdp_md *ctx)
{
	long linear = (long)ctx->data_end - (long)ctx->data;

	if (!test_datagram(ctx))
		return XDP_PASS;
	return bpf_xdp_get_buff_len(ctx) > linear ? XDP_PASS : XDP_DROP;
}
#elif defined(DMS_XDP_XSK)
/* An XSKMAP (BPF_MAP_TYPE_XSKMAP, 17) as libbpf's BTF map macros spell it. */
struct {
	int (*type)[17];
	int (*max_entries)[64];
	__u32 *key;
	__u32 *value;
} dms_xsks SEC(".maps");

static long (*bpf_redirect_map)(void *map, __u64 key, __u64 flags) = (void *)51;

SEC("xdp.frags") int dms_xdp_xsk(struct xdp_md *ctx)
{
	if (!test_datagram(ctx))
		return XDP_PASS;
	/* The low bits of flags: the action when the queue has no socket. */
	return bpf_redirect_map(&dms_xsks, ctx->rx_queue_index, XDP_PASS);
}
#else
#error "define one of DMS_XDP_DROP, _TX, _TX_MB, _REDIRECT, _PASS_MB, _XSK"
#endif
