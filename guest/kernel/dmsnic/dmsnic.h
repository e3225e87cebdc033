/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dmsnic: driver for the devmemsim header-split NIC (PCI 1af4:10f0).
 *
 * Each queue pair q has one NAPI context on MSI-X vector q + 1 serving:
 *
 *  - an RX header-buffer ring fed from a per-queue header page_pool (always
 *    host memory): DMSNIC_HDR_BUF_SIZE buffers carved from order-0 pages
 *    with page_pool frags; the driver copies the headers into the skb's
 *    linear part and gives the buffer straight back to the pool;
 *  - an RX payload-buffer ring fed from a per-queue payload page_pool: one
 *    order-0 page (netmem) per buffer, attached to the skb as a frag;
 *    created in the queue-management mem-alloc path with .netdev and
 *    .queue_idx so a memory provider can later back it;
 *  - an RX completion ring (GEN phase bit);
 *  - a TX descriptor ring (SOP..EOP gather, after a segmentation
 *    descriptor for a GSO skb: the device does TSO and USO) and a TX
 *    completion ring (one completion per frame, by tag).
 *
 * The device spaces each vector's interrupts by the moderation ethtool -C
 * sets (per kind: time since the pair's last interrupt, or a count of
 * pending completions); with adaptive-rx, net_dim picks each pair's RX
 * moderation from what its NAPI runs saw.
 *
 * Vector 0 is the admin interrupt: link changes, and rings the device
 * stopped on a DMA fault, which a work item restarts (dmsnic_fault_work()).
 */
#ifndef _DMSNIC_H_
#define _DMSNIC_H_

#include <linux/dim.h>
#include <linux/ethtool.h>
#include <linux/if_vlan.h>
#include <linux/interrupt.h>
#include <linux/netdevice.h>
#include <linux/net_tstamp.h>
#include <linux/pci.h>
#include <linux/ptp_clock_kernel.h>
#include <linux/u64_stats_sync.h>
#include <linux/workqueue.h>
#include <net/devlink.h>
#include <net/netdev_queues.h>
#include <net/netmem.h>
#include <net/xdp.h>

#include <devmemsim/nic_desc.h>
#include <devmemsim/nic_regs.h>

struct xsk_buff_pool;

#define DMSNIC_HDR_BUF_SIZE	512	/* bytes per header buffer */
/* Payloads up to this many bytes stay with their headers (no split), so
 * such a frame (at most 142 bytes of headers) always fits a header buffer.
 */
#define DMSNIC_HDS_THRESH_MAX	256
/* Headers copied out of a payload buffer when a frame was not split. */
#define DMSNIC_RX_COPY_MAX	256

/*
 * With an XDP program attached every RX buffer (header and payload) is a
 * page: XDP headroom, the bytes the device may write, and room for the
 * skb_shared_info that holds a multi-buffer frame's frags (or the skb's
 * when XDP_PASS builds one around the page).
 */
#define DMSNIC_XDP_BUF_LEN	(PAGE_SIZE - XDP_PACKET_HEADROOM - \
				 SKB_DATA_ALIGN(sizeof(struct skb_shared_info)))
/* A single-buffer XDP program sees whole frames: one payload buffer. */
#define DMSNIC_XDP_SB_MTU_MAX	(DMSNIC_XDP_BUF_LEN - VLAN_ETH_HLEN)

/*
 * Queue pairs in use after probe, whatever the device has (ethtool -L adds
 * the rest): enough for RSS to spread flows (the kernel's RSS selftests
 * want at least 3) without rings for every pair a large device offers.
 */
#define DMSNIC_DEFAULT_QUEUES	4U

#define DMSNIC_RING_DEFAULT	1024
#define DMSNIC_RING_MIN		64
#define DMSNIC_RING_MAX		BIT(DMS_NIC_RING_LOG2_MAX)

/*
 * Descriptors the worst-case skb needs: a segmentation descriptor, the
 * linear part and every frag.
 */
#define DMSNIC_TX_STOP_THRS	(MAX_SKB_FRAGS + 2)
#define DMSNIC_TX_START_THRS	(2 * DMSNIC_TX_STOP_THRS)

/* How soon NAPI tries again to post buffers to a ring it left empty. */
#define DMSNIC_REFILL_RETRY_MS	2

struct dmsnic_hbuf {
	struct page *page;	/* NULL: slot not posted */
	u32 offset;		/* where the device writes */
};

/*
 * What the RX metadata kfuncs get as their ctx: the frame and its SOP
 * completion (they read the hash from it). On a zero-copy queue this is
 * the XSK buffer, the pointer in its driver area (XSK_CHECK_PRIV_TYPE).
 */
struct dmsnic_xdp_ctx {
	struct xdp_buff xdp;
	const struct dms_rx_cmpl *sop;
};

/*
 * The frame an XDP program runs on (ctx.sop points at sop: a frame in
 * several buffers outlives its first completion).
 */
struct dmsnic_xdp_buff {
	struct dmsnic_xdp_ctx ctx;	/* first: the kfuncs' ctx */
	struct dms_rx_cmpl sop;
};

/*
 * Everything an RX queue owns. ndo_queue_mem_alloc builds one of these,
 * ndo_queue_start copies it into the queue pair and ndo_queue_stop copies
 * it out again, so one RX queue can be replaced while the others (and the
 * pair's TX queue) keep running.
 */
struct dmsnic_rx_ring {
	struct page_pool *hdr_pp;
	struct page_pool *pay_pp;

	struct dms_rx_buf *hbuf_ring;
	struct dms_rx_buf *pbuf_ring;
	struct dms_rx_cmpl *cmpl_ring;
	dma_addr_t hbuf_dma;
	dma_addr_t pbuf_dma;
	dma_addr_t cmpl_dma;

	/* Posted buffers by id; the id of a buffer is its ring slot. */
	struct dmsnic_hbuf *hbufs;
	netmem_ref *pbufs;
	/*
	 * Packed payload buffers (NIC v1.9 PACK, page-backed pools only):
	 * small payloads share a buffer. pbias[id] is what is left of the
	 * references a buffer was posted with, one per piece it can hold
	 * plus the ring's own; the device's current buffer is pack_id, with
	 * its next piece at pack_off (0: none started).
	 */
	bool pack;
	u32 *pbias;
	u32 pack_id;
	u32 pack_off;

	/* AF_XDP zero-copy: the payload buffers are this pool's frames,
	 * posted by id in xsk_bufs (pbufs stays empty).
	 */
	struct xsk_buff_pool *xsk_pool;
	struct xdp_buff **xsk_bufs;

	u32 size;		/* entries in each of the three rings */
	u32 buf_size;		/* bytes per payload buffer (rx-page-size) */
	/* Buffer layout: XDP's (DMSNIC_XDP_BUF_LEN) or the plain one. */
	bool xdp;
	u32 buf_off;		/* headroom before what the device writes */
	u32 hbuf_alloc;		/* bytes a header buffer takes from its page */
	u32 hbuf_len;		/* bytes the device may write to a buffer */
	u32 pbuf_len;
	u32 hbuf_tail;		/* next slot to post (free running) */
	u32 hbuf_posted;
	u32 pbuf_tail;
	u32 pbuf_posted;
	u32 cmpl_head;		/* next completion to read (free running) */

	/* Frame being assembled across completions: in_frame between SOP and
	 * EOP; skb is NULL while the rest of a dropped frame goes by.
	 */
	struct sk_buff *skb;
	u16 sop_flags;
	u16 sop_info;		/* DMS_RX_L3_* | DMS_RX_L4_* */
	u16 sop_gro_segs;	/* hardware GRO: segments coalesced, or 0 */
	u16 sop_gso_size;
	bool in_frame;
	/*
	 * A completion named a buffer the ring does not hold, or a piece
	 * its offsets cannot hold: the ring no longer knows what the device
	 * has. Every completion is dropped unread until the pair restarts.
	 */
	bool lost;

	/* XDP layout: the frame being assembled, if it has a first buffer. */
	struct xdp_rxq_info xdp_rxq;
	struct dmsnic_xdp_buff xb;
	bool xdp_building;
};

struct dmsnic_tx_buf {
	struct sk_buff *skb;	/* on the EOP slot of a frame */
	struct xdp_frame *xdpf;	/* or this: XDP_TX, ndo_xdp_xmit */
	bool xsk;		/* or a frame of the ring's XSK pool */
	DEFINE_DMA_UNMAP_ADDR(dma);
	DEFINE_DMA_UNMAP_LEN(len);
	bool single;		/* linear part: dma_map_single() */
	/* EOP slot: what the frame becomes on the wire (segs > 1: TSO/USO) */
	u16 segs;
	u32 wire_bytes;
};

struct dmsnic_tx_ring {
	struct dms_tx_desc *desc;
	struct dms_tx_cmpl *cmpl;
	dma_addr_t desc_dma;
	dma_addr_t cmpl_dma;
	struct dmsnic_tx_buf *bufs;
	u32 size;
	u32 head;		/* oldest in-flight descriptor (free running) */
	u32 tail;		/* next descriptor to fill (free running) */
	u32 db_tail;		/* tail last written to the doorbell */
	u32 cmpl_head;
	/* AF_XDP zero-copy: the pool whose TX ring this ring also sends. */
	struct xsk_buff_pool *xsk_pool;
};

struct dmsnic_rx_stats {
	u64 packets;
	u64 bytes;
	u64 split;		/* frames with DMS_RX_F_SPLIT */
	u64 drops;		/* dropped by the driver */
	u64 csum_bad;
	u64 alloc_fail;
	u64 hdr_unreadable;	/* dropped: headers in devmem payload buffer */
	u64 csum_unreadable;	/* dropped: devmem payload, checksum unverified */
	/* Completions naming a buffer not posted, or more than it holds */
	u64 bad_cmpl;
	u64 hw_gro_bad;		/* dropped: GSO metadata the frame belies */
	/* Hardware GRO: coalesced frames handed up and the wire frames in them */
	u64 hw_gro_packets;
	u64 hw_gro_bytes;
	u64 hw_gro_wire_packets;
	u64 hw_gro_wire_bytes;
	struct u64_stats_sync syncp;
};

/* Written under the TX queue's lock: ndo_start_xmit, ndo_xdp_xmit. */
struct dmsnic_tx_stats {
	u64 drops;
	u64 stops;
	u64 xdp_xmit;		/* frames redirected to this device */
	u64 xdp_xmit_errors;	/* ... that found no room (or the ring down) */
	struct u64_stats_sync syncp;
};

/* Written by NAPI when frames complete. */
struct dmsnic_txc_stats {
	u64 packets;		/* frames on the wire: segments of a GSO skb */
	u64 bytes;
	u64 gso_packets;	/* GSO skbs the device segmented */
	u64 gso_bytes;
	u64 gso_wire_packets;	/* the frames they became */
	u64 gso_wire_bytes;
	u64 errors;		/* DMS_TX_C_ERR: the device dropped the frame */
	u64 wakes;
	u64 bad_cmpl;		/* completions naming no frame in flight */
	struct u64_stats_sync syncp;
};

/* XDP verdicts of the frames an RX queue received; written by NAPI. */
struct dmsnic_xdp_stats {
	u64 pass;
	u64 drop;
	u64 tx;
	u64 tx_errors;		/* XDP_TX that could not be queued: dropped */
	u64 redirect;
	u64 redirect_errors;
	u64 aborted;		/* XDP_ABORTED and unknown verdicts */
	struct u64_stats_sync syncp;
};

/*
 * The device's counters of the pair's RX queue (NIC v1.10), extended to
 * 64 bits under priv->hw_stats_lock (dmsnic_read_hw_stats()).
 */
struct dmsnic_qp_hw_stats {
	u64 rx_no_buf_drop;	/* RXQ_NO_BUF_DROP: dropped, no buffer (DROP_EN) */
	struct u64_stats_sync syncp;
};

/* Written under the netdev instance lock, with the pair's NAPI off. */
struct dmsnic_qp_stats {
	u64 fault_restarts;	/* restarted after a ring DMA fault */
	u64 start_errors;	/* starts of its rings that failed */
	struct u64_stats_sync syncp;
};

struct dmsnic_qp {
	struct napi_struct napi;
	struct dmsnic_priv *priv;
	void __iomem *regs;	/* this pair's register block */
	u16 idx;
	int irq;
	char irq_name[IFNAMSIZ + 8];

	struct dmsnic_rx_ring rx;
	struct dmsnic_tx_ring tx;
	/* Retries posting buffers when NAPI left a ring empty. */
	struct timer_list refill_timer;
	bool napi_on;		/* NAPI enabled (the pair's rings run) */
	/* IRQ and NAPI instance held: false after a failed fault restart. */
	bool hw_up;

	/* This NAPI run queued XDP_TX frames / redirected frames. */
	bool xdp_tx_pending;
	bool xdp_redirected;

	/* AF_XDP zero-copy pool bound to the pair (XDP_SETUP_XSK_POOL). */
	struct xsk_buff_pool *xsk_pool;

	/* Adaptive RX moderation: net_dim's state and its event counter. */
	struct dim rx_dim;
	u16 dim_events;

	/* Kept across queue restarts and channel changes. */
	struct dmsnic_rx_stats rx_stats;
	struct dmsnic_tx_stats tx_stats;
	struct dmsnic_txc_stats txc_stats;
	struct dmsnic_xdp_stats xdp_stats;
	struct dmsnic_qp_stats qp_stats;
	struct dmsnic_qp_hw_stats hw_stats;
	u32 hw_rx_no_buf_drop_last;	/* the register at the last read */
} ____cacheline_aligned_in_smp;

enum dmsnic_hw_stat {
	DMSNIC_HW_RX_NO_BUF,
	DMSNIC_HW_RX_DROP,
	DMSNIC_HW_RX_DMA_ERR,
	DMSNIC_HW_TX_DESC_ERR,
	DMSNIC_HW_TX_DMA_ERR,
	DMSNIC_HW_RING_ERR,
	DMSNIC_HW_RING_DMA_ERR,
	DMSNIC_HW_TSO_SUPER,
	DMSNIC_HW_TSO_WIRE,
	DMSNIC_HW_TSO_ERR,
	DMSNIC_HW_RX_NO_BUF_DROP,	/* NIC v1.10 */
	DMSNIC_HW_NUM_STATS,
};

/* What an RSS context hashes (device bits), by flow class. */
struct dmsnic_rss_hash {
	u32 fields[DMS_NIC_RSS_CLASSES];
	u8 xfrm;		/* RXH_XFRM_* */
};

/* Interrupt moderation as ethtool -C set it, for every queue pair. */
struct dmsnic_coal {
	u32 rx_usecs;
	u32 rx_frames;
	u32 tx_usecs;
	u32 tx_frames;
	bool adaptive_rx;	/* net_dim picks each pair's RX moderation */
};

/* The PTP hardware clock and the timestamping configuration (v1.6). */
struct dmsnic_ptp {
	bool supported;			/* CAPS: the device has the clock */
	struct ptp_clock *clock;	/* NULL: no PHC registered */
	struct ptp_clock_info info;
	spinlock_t lock;		/* latched clock reads, SET/ADJ */
	u64 last_ns;			/* a recent full read: extends RX stamps */
	struct kernel_hwtstamp_config cfg;
};

struct dmsnic_priv {
	struct net_device *netdev;
	struct pci_dev *pdev;
	void __iomem *regs;
	int admin_irq;
	char admin_irq_name[32];

	u32 caps;		/* DMS_NIC_CAP_* (0 before v1.5) */
	u32 max_queues;		/* queue pairs the device has */
	u32 num_queues;		/* queue pairs in use (ethtool -L) */
	u32 max_tx_frags;
	u32 ntuple_size;
	struct dmsnic_qp *qps;	/* max_queues entries */

	bool datapath_up;	/* queue pairs started (open, reconfigured) */
	/* Pairs the device stopped on a ring DMA fault, to be restarted. */
	unsigned long *faulted;
	/* Of them, pairs whose RX ring lost track of the device's buffers. */
	unsigned long *lost;
	struct work_struct fault_work;
	u32 rx_ring_size;
	u32 tx_ring_size;
	bool hds;		/* header split on (unless single-buffer XDP) */
	/*
	 * RX queues drop a frame they have no buffers for instead of holding
	 * every queue's frames behind it (NIC v1.10 DROP_EN): decided for
	 * the pairs dmsnic_qps_start() starts, used by every RX queue start.
	 */
	bool rx_drop_en;
	u32 hds_thresh;
	/* Written under RTNL and the instance lock, read by NAPI. */
	struct bpf_prog *xdp_prog;
	struct dmsnic_coal coal;

	/* RSS (dmsnic_rss.c): the default context's table and key; the
	 * core holds the other contexts' tables and keys, the driver what
	 * every context hashes.
	 */
	u32 rss_indir_size;	/* entries of every table (follows -L) */
	u32 rss_indir[DMS_NIC_RSS_INDIR_SIZE];
	u8 rss_key[DMS_NIC_RSS_KEY52_SIZE];	/* dmsnic_rss_key_size() used */
	struct dmsnic_rss_hash rss_hash[DMS_NIC_RSS_CONTEXTS];
	struct mutex rss_hw_lock;	/* RSS_CTX_SEL and what it selects */

	/* Flow steering rules as ethtool gave them, by table index. */
	struct ethtool_rx_flow_spec *ntuple;
	u32 *ntuple_ctx;		/* RSS context of a FLOW_RSS rule */
	unsigned long *ntuple_used;

	/* Device error counters extended to 64 bits. */
	spinlock_t hw_stats_lock;	/* hw_stats, hw_stats_last */
	u64 hw_stats[DMSNIC_HW_NUM_STATS];
	u32 hw_stats_last[DMSNIC_HW_NUM_STATS];

	struct dmsnic_ptp ptp;
	struct devlink *devlink;
	struct devlink_port devlink_port;
};

static inline u32 dmsnic_rd32(struct dmsnic_priv *priv, u32 reg)
{
	return readl(priv->regs + reg);
}

static inline void dmsnic_wr32(struct dmsnic_priv *priv, u32 reg, u32 val)
{
	writel(val, priv->regs + reg);
}

/* Registers of one queue pair. */
static inline void dmsnic_q_wr32(struct dmsnic_qp *qp, u32 reg, u32 val)
{
	writel(val, qp->regs + reg);
}

static inline void dmsnic_q_wr64(struct dmsnic_qp *qp, u32 reg_lo,
				 dma_addr_t val)
{
	writel(lower_32_bits(val), qp->regs + reg_lo);
	writel(upper_32_bits(val), qp->regs + reg_lo + 4);
}

/* dmsnic_main.c */
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
bool dmsnic_fail_queue_mem_alloc(void);
bool dmsnic_fail_queue_enable(void);
#else
static inline bool dmsnic_fail_queue_mem_alloc(void)
{
	return false;
}

static inline bool dmsnic_fail_queue_enable(void)
{
	return false;
}
#endif
void dmsnic_update_link(struct dmsnic_priv *priv);
void dmsnic_write_rx_ctrl(struct dmsnic_priv *priv, netdev_features_t features);
void dmsnic_write_ntuple(struct dmsnic_priv *priv, u32 loc);
void dmsnic_read_hw_stats(struct dmsnic_priv *priv, u64 *stats);
void dmsnic_read_hw_qstats(struct dmsnic_priv *priv, u32 q);
extern const char * const dmsnic_hw_stat_names[DMSNIC_HW_NUM_STATS];

/* dmsnic_txrx.c */
struct device *dmsnic_dma_dev(const struct dmsnic_priv *priv);
void dmsnic_qp_init(struct dmsnic_qp *qp);
void dmsnic_qp_coal_apply(struct dmsnic_qp *qp);
void dmsnic_rx_dim_stop(struct dmsnic_qp *qp);
int dmsnic_rx_alloc(struct dmsnic_priv *priv, struct dmsnic_rx_ring *rx,
		    int idx, const struct netdev_queue_config *qcfg, u32 size,
		    bool rings);
void dmsnic_rx_free_ring(struct dmsnic_priv *priv, struct dmsnic_rx_ring *rx);
void dmsnic_rx_count_drop(struct dmsnic_qp *qp);
/* Where a completion's payload is in its buffer (a PACK piece, or all of it). */
struct dmsnic_piece {
	u32 off;
	u32 truesize;		/* what the piece charges its skb */
};

void dmsnic_rx_take_bufs(struct dmsnic_qp *qp, const struct dms_rx_cmpl *c,
			 u16 flags, struct dmsnic_hbuf *hb, bool *have_hb,
			 netmem_ref *netmem, struct dmsnic_piece *pc);
void dmsnic_rx_pack_rewind(struct dmsnic_rx_ring *rx);
/*
 * The slots of the next header and payload buffers the device takes: it
 * reads each ring's buffers in the order they were posted (datasheet,
 * Receive), so a completion naming any other slot lies about its buffer,
 * even one the ring holds (posted again after the device was done with
 * it, nic_lie_id): taking that one would leave its slot empty behind the
 * head, and the ring would never post past it again.
 */
static inline u32 dmsnic_rx_hbuf_head(const struct dmsnic_rx_ring *rx)
{
	return (rx->hbuf_tail - rx->hbuf_posted) & (rx->size - 1);
}

static inline u32 dmsnic_rx_pbuf_head(const struct dmsnic_rx_ring *rx)
{
	return (rx->pbuf_tail - rx->pbuf_posted) & (rx->size - 1);
}

void dmsnic_rx_pack_reset_bias(struct dmsnic_rx_ring *rx, u32 id);
void dmsnic_rx_meta(struct dmsnic_qp *qp, struct sk_buff *skb,
		    const struct dms_rx_cmpl *c, u16 flags);
u32 dmsnic_tx_unused(const struct dmsnic_tx_ring *tx);
void dmsnic_tx_desc(struct dmsnic_tx_ring *tx, u32 idx, dma_addr_t dma,
		    u32 len, u16 flags);
void dmsnic_tx_unmap(struct device *dev, struct dmsnic_tx_buf *buf);
void dmsnic_tx_doorbell(struct dmsnic_qp *qp);
int dmsnic_tx_alloc(struct dmsnic_priv *priv, struct dmsnic_tx_ring *tx,
		    u32 size);
u32 dmsnic_tx_drain(struct dmsnic_priv *priv, struct dmsnic_tx_ring *tx);
void dmsnic_tx_free_ring(struct dmsnic_priv *priv, struct dmsnic_tx_ring *tx);
netdev_tx_t dmsnic_start_xmit(struct sk_buff *skb, struct net_device *dev);
netdev_features_t dmsnic_features_check(struct sk_buff *skb,
					struct net_device *dev,
					netdev_features_t features);
int dmsnic_poll(struct napi_struct *napi, int budget);
irqreturn_t dmsnic_qp_irq(int irq, void *data);
void dmsnic_napi_kick(struct dmsnic_qp *qp);

/* dmsnic_queue.c */
void dmsnic_set_xps(struct dmsnic_priv *priv);
int dmsnic_up(struct dmsnic_priv *priv);
void dmsnic_down(struct dmsnic_priv *priv);
int dmsnic_reconfigure(struct dmsnic_priv *priv, u32 num_queues, u32 rx_size,
		       u32 tx_size);
int dmsnic_qp_rebuild(struct dmsnic_priv *priv, struct dmsnic_qp *qp,
		      bool restore);
int dmsnic_resize_rx(struct dmsnic_priv *priv, u32 size);
bool dmsnic_qp_faulted(struct dmsnic_qp *qp);
void dmsnic_qp_lost(struct dmsnic_qp *qp);
void dmsnic_fault_work(struct work_struct *work);
extern const struct netdev_queue_mgmt_ops dmsnic_queue_mgmt_ops;

/* dmsnic_ethtool.c */
extern const struct ethtool_ops dmsnic_ethtool_ops;

/* dmsnic_xdp.c */
bool dmsnic_hds_on(const struct dmsnic_priv *priv);
bool dmsnic_xdp_sb(const struct dmsnic_priv *priv);
int dmsnic_xdp_rx_reg(struct dmsnic_priv *priv, struct dmsnic_rx_ring *rx,
		      int idx);
void dmsnic_xdp_rx_abort(struct dmsnic_rx_ring *rx);
void dmsnic_xdp_rx_free(struct dmsnic_rx_ring *rx);
int dmsnic_xdp_rx_one(struct dmsnic_qp *qp, const struct dms_rx_cmpl *c);
void dmsnic_xdp_flush(struct dmsnic_qp *qp);
void dmsnic_xdp_tx_free(struct dmsnic_tx_buf *buf);
int dmsnic_bpf(struct net_device *netdev, struct netdev_bpf *bpf);
int dmsnic_xdp_xmit(struct net_device *netdev, int n,
		    struct xdp_frame **frames, u32 flags);
void dmsnic_xdp_init_netdev(struct net_device *netdev);
void dmsnic_xdp_count(struct dmsnic_qp *qp, u64 *counter);
void dmsnic_xdp_count_rx(struct dmsnic_qp *qp, u32 len, u16 flags);

/* What an XDP verdict does with a frame, per kind of buffer. */
struct dmsnic_xdp_buf_ops {
	void (*pass)(struct dmsnic_qp *qp, struct xdp_buff *xdp);
	bool (*tx)(struct dmsnic_qp *qp, struct xdp_buff *xdp);
	void (*free)(struct xdp_buff *xdp);
};

void dmsnic_xdp_act(struct dmsnic_qp *qp, struct bpf_prog *prog,
		    struct xdp_buff *xdp, u32 act,
		    const struct dmsnic_xdp_buf_ops *ops);
bool dmsnic_xdp_tx_frame(struct dmsnic_qp *qp, struct xdp_frame *xdpf,
			 bool pool);

/* dmsnic_xsk.c: AF_XDP zero-copy */
int dmsnic_xsk_pool_setup(struct dmsnic_priv *priv,
			  struct xsk_buff_pool *pool, u16 qid);
int dmsnic_xsk_wakeup(struct net_device *netdev, u32 qid, u32 flags);
int dmsnic_xsk_mtu_check(struct dmsnic_priv *priv, int mtu);
void dmsnic_xsk_rx_layout(struct dmsnic_rx_ring *rx);
int dmsnic_xsk_rx_reg(struct dmsnic_priv *priv, struct dmsnic_rx_ring *rx,
		      int idx);
bool dmsnic_xsk_rx_post(struct dmsnic_rx_ring *rx);
void dmsnic_xsk_rx_release(struct dmsnic_rx_ring *rx);
void dmsnic_xsk_rx_rewind(struct dmsnic_rx_ring *rx);
void dmsnic_xsk_rx_free(struct dmsnic_rx_ring *rx);
int dmsnic_xsk_rx_one(struct dmsnic_qp *qp, const struct dms_rx_cmpl *c);
bool dmsnic_xsk_xmit(struct dmsnic_qp *qp, u32 budget);
/* dmsnic_rss.c */
void dmsnic_rss_init(struct dmsnic_priv *priv);
void dmsnic_write_rss(struct dmsnic_priv *priv);
void dmsnic_rss_default_indir(struct dmsnic_priv *priv);
u32 dmsnic_rss_indir_size(const struct dmsnic_priv *priv, u32 n);
int dmsnic_rss_channels_check(struct dmsnic_priv *priv, u32 n);
void dmsnic_rss_channels_changed(struct dmsnic_priv *priv);
int dmsnic_rss_ctx_max_queue(struct dmsnic_priv *priv, u32 id, u32 *max);
u32 dmsnic_get_rx_ring_count(struct net_device *netdev);
u32 dmsnic_get_rxfh_key_size(struct net_device *netdev);
u32 dmsnic_get_rxfh_indir_size(struct net_device *netdev);
int dmsnic_get_rxfh(struct net_device *netdev, struct ethtool_rxfh_param *rxfh);
int dmsnic_set_rxfh(struct net_device *netdev, struct ethtool_rxfh_param *rxfh,
		    struct netlink_ext_ack *extack);
int dmsnic_get_rxfh_fields(struct net_device *netdev,
			   struct ethtool_rxfh_fields *f);
int dmsnic_set_rxfh_fields(struct net_device *netdev,
			   const struct ethtool_rxfh_fields *f,
			   struct netlink_ext_ack *extack);
int dmsnic_create_rxfh_context(struct net_device *netdev,
			       struct ethtool_rxfh_context *ctx,
			       const struct ethtool_rxfh_param *rxfh,
			       struct netlink_ext_ack *extack);
int dmsnic_modify_rxfh_context(struct net_device *netdev,
			       struct ethtool_rxfh_context *ctx,
			       const struct ethtool_rxfh_param *rxfh,
			       struct netlink_ext_ack *extack);
int dmsnic_remove_rxfh_context(struct net_device *netdev,
			       struct ethtool_rxfh_context *ctx,
			       u32 rss_context, struct netlink_ext_ack *extack);
/* dmsnic_ptp.c */
void dmsnic_ptp_init(struct dmsnic_priv *priv);
void dmsnic_ptp_remove(struct dmsnic_priv *priv);
bool dmsnic_ptp_rx_ns(struct dmsnic_priv *priv, const struct dms_rx_cmpl *c,
		      u64 *ns);
void dmsnic_ptp_rx(struct dmsnic_priv *priv, struct sk_buff *skb,
		   const struct dms_rx_cmpl *c);
u16 dmsnic_ptp_tx_flags(struct dmsnic_priv *priv, struct sk_buff *skb);
void dmsnic_ptp_tx_done(struct dmsnic_priv *priv, struct sk_buff *skb, u32 ts);
int dmsnic_hwtstamp_get(struct net_device *netdev,
			struct kernel_hwtstamp_config *cfg);
int dmsnic_hwtstamp_set(struct net_device *netdev,
			struct kernel_hwtstamp_config *cfg,
			struct netlink_ext_ack *extack);
int dmsnic_get_ts_info(struct net_device *netdev,
		       struct kernel_ethtool_ts_info *info);

/* dmsnic_mac.c */
void dmsnic_get_pauseparam(struct net_device *netdev,
			   struct ethtool_pauseparam *pause);
int dmsnic_set_pauseparam(struct net_device *netdev,
			  struct ethtool_pauseparam *pause);
bool dmsnic_mac_sends_pause(struct dmsnic_priv *priv);
void dmsnic_get_pause_stats(struct net_device *netdev,
			    struct ethtool_pause_stats *stats);
int dmsnic_get_fecparam(struct net_device *netdev,
			struct ethtool_fecparam *fec);
void dmsnic_get_fec_stats(struct net_device *netdev,
			  struct ethtool_fec_stats *stats,
			  struct ethtool_fec_hist *hist);
void dmsnic_get_eth_mac_stats(struct net_device *netdev,
			      struct ethtool_eth_mac_stats *s);
void dmsnic_get_eth_ctrl_stats(struct net_device *netdev,
			       struct ethtool_eth_ctrl_stats *s);
void dmsnic_get_rmon_stats(struct net_device *netdev,
			   struct ethtool_rmon_stats *s,
			   const struct ethtool_rmon_hist_range **ranges);

/* dmsnic_shaper.c: built with the kernel's net-shaper API */
#if IS_ENABLED(CONFIG_NET_SHAPER)
extern const struct net_shaper_ops dmsnic_shaper_ops;
void dmsnic_shaper_forget_queues(struct dmsnic_priv *priv, u32 from, u32 to);
#else
static inline void dmsnic_shaper_forget_queues(struct dmsnic_priv *priv,
					       u32 from, u32 to) {}
#endif

/* dmsnic_devlink.c: built with devlink */
#if IS_ENABLED(CONFIG_NET_DEVLINK)
int dmsnic_devlink_register(struct dmsnic_priv *priv);
void dmsnic_devlink_unregister(struct dmsnic_priv *priv);
#else
static inline int dmsnic_devlink_register(struct dmsnic_priv *priv)
{
	return 0;
}

static inline void dmsnic_devlink_unregister(struct dmsnic_priv *priv) {}
#endif

/* dmsnic_stats.c */
void dmsnic_get_stats64(struct net_device *netdev,
			struct rtnl_link_stats64 *s);
extern const struct netdev_stat_ops dmsnic_stat_ops;

#endif /* _DMSNIC_H_ */
