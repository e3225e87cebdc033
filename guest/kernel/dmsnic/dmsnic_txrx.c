// SPDX-License-Identifier: GPL-2.0
/*
 * dmsnic datapath: RX and TX rings and their buffers, RX completions,
 * transmit, TX completions, NAPI.
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/interrupt.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/netdev_queues.h>
#include <net/page_pool/helpers.h>
#include <net/xdp_sock_drv.h>

#include "dmsnic.h"

struct device *dmsnic_dma_dev(const struct dmsnic_priv *priv)
{
	return &priv->pdev->dev;
}

/*
 * Completion ownership: the device writes GEN = 1 on its first pass over a
 * ring and flips it on every wrap. Indexes are free running and ring sizes
 * are powers of two, so (index & size) is the driver's wrap parity.
 */
static bool dmsnic_rx_cmpl_owned(const struct dmsnic_rx_ring *rx,
				 const struct dms_rx_cmpl *c)
{
	bool gen = le16_to_cpu(READ_ONCE(c->flags)) & DMS_RX_F_GEN;

	return gen == !(rx->cmpl_head & rx->size);
}

static bool dmsnic_tx_cmpl_owned(const struct dmsnic_tx_ring *tx,
				 const struct dms_tx_cmpl *c)
{
	bool gen = le16_to_cpu(READ_ONCE(c->flags)) & DMS_TX_C_GEN;

	return gen == !(tx->cmpl_head & tx->size);
}

static struct dms_rx_cmpl *dmsnic_rx_cmpl_next(const struct dmsnic_rx_ring *rx)
{
	return &rx->cmpl_ring[rx->cmpl_head & (rx->size - 1)];
}

static struct dms_tx_cmpl *dmsnic_tx_cmpl_next(const struct dmsnic_tx_ring *tx)
{
	return &tx->cmpl[tx->cmpl_head & (tx->size - 1)];
}

/* ---- RX buffers ---- */

/*
 * @unreadable lets a memory provider bound to the queue (devmem TCP's
 * dma-buf binding) supply the pool's buffers: the driver then never reads
 * them and the core skips the CPU syncs. Only the payload pool may set it,
 * and only with header split on, so that headers stay in host memory.
 * In the XDP layout XDP_TX sends the pages back out, and the device writes
 * a payload buffer after the XDP headroom.
 */
static struct page_pool *dmsnic_create_pp(struct dmsnic_priv *priv,
					  const struct dmsnic_rx_ring *rx,
					  u32 pool_size, int idx,
					  unsigned int order, bool payload,
					  bool unreadable)
{
	struct page_pool_params pp = {
		.order = order,
		.flags = PP_FLAG_DMA_MAP | PP_FLAG_DMA_SYNC_DEV |
			 (unreadable ? PP_FLAG_ALLOW_UNREADABLE_NETMEM : 0),
		.pool_size = pool_size,
		.nid = dev_to_node(dmsnic_dma_dev(priv)),
		.dev = dmsnic_dma_dev(priv),
		.dma_dir = rx->xdp ? DMA_BIDIRECTIONAL : DMA_FROM_DEVICE,
		.offset = payload ? rx->buf_off : 0,
		.max_len = payload ? rx->pbuf_len : PAGE_SIZE << order,
		.netdev = priv->netdev,
		.queue_idx = idx,
	};

	return page_pool_create(&pp);
}

/* Where the device writes RX buffers: XDP needs headroom and tailroom. */
static void dmsnic_rx_layout(struct dmsnic_priv *priv,
			     struct dmsnic_rx_ring *rx, u32 page_size)
{
	rx->xdp = !!priv->xdp_prog;
	if (rx->xsk_pool) {
		dmsnic_xsk_rx_layout(rx);
		return;
	}
	if (rx->xdp) {
		/* No memory provider is bound while XDP is attached. */
		rx->buf_size = PAGE_SIZE;
		rx->buf_off = XDP_PACKET_HEADROOM;
		rx->hbuf_alloc = PAGE_SIZE;
		rx->hbuf_len = DMSNIC_XDP_BUF_LEN;
		rx->pbuf_len = DMSNIC_XDP_BUF_LEN;
		return;
	}
	rx->buf_size = page_size;
	rx->buf_off = 0;
	rx->hbuf_alloc = DMSNIC_HDR_BUF_SIZE;
	rx->hbuf_len = DMSNIC_HDR_BUF_SIZE;
	rx->pbuf_len = page_size;
}

/* Post header buffers up to a full ring; false if the pool ran dry. */
static bool dmsnic_rx_post_hbufs(struct dmsnic_rx_ring *rx, gfp_t gfp)
{
	u32 mask = rx->size - 1;

	while (rx->hbuf_posted < rx->size - 1) {
		u32 slot = rx->hbuf_tail & mask;
		struct dmsnic_hbuf *hb = &rx->hbufs[slot];
		struct dms_rx_buf *d = &rx->hbuf_ring[slot];
		unsigned int offset;
		struct page *page;

		/* The device uses buffers in ring order, so the slot at the
		 * tail is free again unless it went out of order.
		 */
		if (hb->page)
			break;
		page = page_pool_alloc_frag(rx->hdr_pp, &offset,
					    rx->hbuf_alloc, gfp);
		if (!page)
			return false;
		hb->page = page;
		hb->offset = offset + rx->buf_off;
		d->addr = cpu_to_le64(page_pool_get_dma_addr(page) +
				      hb->offset);
		d->id = cpu_to_le16(slot);
		rx->hbuf_tail++;
		rx->hbuf_posted++;
	}
	return true;
}

/*
 * References a packed buffer is posted with: one for each piece it can
 * hold (every piece but a lost frame's moves the offset on by at least
 * DMS_NIC_PACK_ALIGN) and one the ring keeps until the device is done.
 */
static u32 dmsnic_pack_bias(const struct dmsnic_rx_ring *rx)
{
	return rx->buf_size / DMS_NIC_PACK_ALIGN + 1;
}

void dmsnic_rx_pack_reset_bias(struct dmsnic_rx_ring *rx, u32 id)
{
	page_pool_fragment_netmem(rx->pbufs[id], dmsnic_pack_bias(rx));
	rx->pbias[id] = dmsnic_pack_bias(rx);
}

static bool dmsnic_rx_post_pbufs(struct dmsnic_rx_ring *rx, gfp_t gfp)
{
	u32 mask = rx->size - 1;

	if (rx->xsk_pool)
		return dmsnic_xsk_rx_post(rx);

	while (rx->pbuf_posted < rx->size - 1) {
		u32 slot = rx->pbuf_tail & mask;
		struct dms_rx_buf *d = &rx->pbuf_ring[slot];
		netmem_ref netmem;

		if (rx->pbufs[slot])
			break;
		netmem = page_pool_alloc_netmems(rx->pay_pp, gfp);
		if (!netmem)
			return false;
		rx->pbufs[slot] = netmem;
		if (rx->pack)
			dmsnic_rx_pack_reset_bias(rx, slot);
		d->addr = cpu_to_le64(page_pool_get_dma_addr_netmem(netmem) +
				      rx->buf_off);
		d->id = cpu_to_le16(slot);
		rx->pbuf_tail++;
		rx->pbuf_posted++;
	}
	return true;
}

/*
 * Whether the device may be waiting on the ring for buffers. It writes
 * nothing for a frame, and so raises no interrupt, until every buffer the
 * frame needs is posted (datasheet, Receive): a header buffer and payload
 * buffers for the whole frame, up to MTU + 22 bytes (Ethernet and two VLAN
 * tags), from where a PACK queue's current buffer is filled. Completions
 * are all consumed here, so pack_off is where the device fills. A ring
 * short of that for the largest frame (a devmem or zcrx consumer holding
 * all but a few buffers of its binding, a PACK queue under memory
 * pressure) may never see a completion again: the refill timer has to
 * bring NAPI back until it holds enough.
 */
static bool dmsnic_rx_starved(const struct dmsnic_qp *qp)
{
	const struct dmsnic_rx_ring *rx = &qp->rx;
	u32 len = READ_ONCE(qp->priv->netdev->mtu) + ETH_HLEN + 2 * VLAN_HLEN;

	if (!rx->hbuf_posted)
		return true;
	/*
	 * A zero-copy queue's frames fit one XSK frame (its MTU check); a
	 * socket using need_wakeup wakes us when it fills its fill ring.
	 */
	if (rx->xsk_pool)
		return !rx->pbuf_posted && !xsk_uses_need_wakeup(rx->xsk_pool);
	return rx->pbuf_posted < DIV_ROUND_UP(rx->pack_off + len, rx->pbuf_len);
}

/*
 * Refill both buffer rings and ring the doorbells. Returns whether the
 * ring is left starved (dmsnic_rx_starved()) because a pool ran dry.
 */
static bool dmsnic_rx_refill(struct dmsnic_qp *qp)
{
	struct dmsnic_rx_ring *rx = &qp->rx;
	u32 htail = rx->hbuf_tail, ptail = rx->pbuf_tail;
	u32 mask = rx->size - 1;
	bool ok;

	ok = dmsnic_rx_post_hbufs(rx, GFP_ATOMIC | __GFP_NOWARN);
	ok &= dmsnic_rx_post_pbufs(rx, GFP_ATOMIC | __GFP_NOWARN);
	/* An XSK pool out of frames is the socket's, not an allocation failure. */
	if (!ok && !rx->xsk_pool) {
		u64_stats_update_begin(&qp->rx_stats.syncp);
		qp->rx_stats.alloc_fail++;
		u64_stats_update_end(&qp->rx_stats.syncp);
	}

	/* writel() orders the descriptor writes before the doorbell. */
	if (rx->hbuf_tail != htail)
		dmsnic_q_wr32(qp, DMS_NIC_RXQ_HBUF_TAIL, rx->hbuf_tail & mask);
	if (rx->pbuf_tail != ptail)
		dmsnic_q_wr32(qp, DMS_NIC_RXQ_PBUF_TAIL, rx->pbuf_tail & mask);

	return dmsnic_rx_starved(qp);
}

static int dmsnic_rx_alloc_rings(struct dmsnic_priv *priv,
				 struct dmsnic_rx_ring *rx, int idx, u32 size)
{
	struct device *dev = dmsnic_dma_dev(priv);

	rx->size = size;
	rx->hbuf_ring = dma_alloc_coherent(dev, size * sizeof(*rx->hbuf_ring),
					   &rx->hbuf_dma, GFP_KERNEL);
	rx->pbuf_ring = dma_alloc_coherent(dev, size * sizeof(*rx->pbuf_ring),
					   &rx->pbuf_dma, GFP_KERNEL);
	rx->cmpl_ring = dma_alloc_coherent(dev, size * sizeof(*rx->cmpl_ring),
					   &rx->cmpl_dma, GFP_KERNEL);
	rx->hbufs = kvcalloc(size, sizeof(*rx->hbufs), GFP_KERNEL);
	rx->pbufs = kvcalloc(size, sizeof(*rx->pbufs), GFP_KERNEL);
	if (rx->pack)
		rx->pbias = kvcalloc(size, sizeof(*rx->pbias), GFP_KERNEL);
	if (rx->xsk_pool)
		rx->xsk_bufs = kvcalloc(size, sizeof(*rx->xsk_bufs),
					GFP_KERNEL);
	if (!rx->hbuf_ring || !rx->pbuf_ring || !rx->cmpl_ring ||
	    !rx->hbufs || !rx->pbufs || (rx->xsk_pool && !rx->xsk_bufs) ||
	    (rx->pack && !rx->pbias))
		return -ENOMEM;

	if (!dmsnic_rx_post_hbufs(rx, GFP_KERNEL))
		return -ENOMEM;
	/*
	 * An XSK ring gets its frames when it starts: until then the queue's
	 * running ring and its NAPI use the pool (dmsnic_xsk.c).
	 */
	if (rx->xsk_pool)
		return 0;
	if (!dmsnic_rx_post_pbufs(rx, GFP_KERNEL)) {
		if (!page_pool_is_unreadable(rx->pay_pp))
			return -ENOMEM;
		/* The ring must fill up; a smaller dma-buf would starve it. */
		netdev_err(priv->netdev,
			   "rxq %d: the memory provider gave %u of %u payload buffers; bind a larger dma-buf or shrink the ring (ethtool -G rx)\n",
			   idx, rx->pbuf_posted,
			   size - 1);
		return -ENOBUFS;
	}
	return 0;
}

/*
 * A packed buffer leaves the ring: drop the references no piece took (a
 * piece's skb holds its own); the last one returns the buffer to its pool.
 */
static void dmsnic_rx_pack_end(struct dmsnic_rx_ring *rx, u32 id, bool napi)
{
	netmem_ref netmem = rx->pbufs[id];

	rx->pbufs[id] = 0;
	rx->pbuf_posted--;
	if (rx->pack_id == id)
		rx->pack_off = 0;
	if (!page_pool_unref_netmem(netmem, rx->pbias[id]))
		page_pool_put_unrefed_netmem(rx->pay_pp, netmem, -1, napi);
}

/* A posted payload buffer goes back to its pool (ring teardown). */
static void dmsnic_rx_pbuf_free(struct dmsnic_rx_ring *rx, u32 id)
{
	if (rx->pack) {
		dmsnic_rx_pack_end(rx, id, false);
		return;
	}
	page_pool_put_full_netmem(rx->pay_pp, rx->pbufs[id], false);
	rx->pbufs[id] = 0;
}

/*
 * A stopped ring about to restart from slot 0 (dmsnic_rx_rewind()): the
 * device forgets its current buffer, whose start skbs may still hold, so
 * it leaves the ring; every other posted buffer is untouched.
 */
void dmsnic_rx_pack_rewind(struct dmsnic_rx_ring *rx)
{
	if (rx->pack && rx->pack_off)
		dmsnic_rx_pack_end(rx, rx->pack_id, false);
}

/* Frees whatever part of @rx exists; the buffers go back to their pools. */
void dmsnic_rx_free_ring(struct dmsnic_priv *priv, struct dmsnic_rx_ring *rx)
{
	struct device *dev = dmsnic_dma_dev(priv);
	u32 i;

	dev_kfree_skb_any(rx->skb);
	dmsnic_xsk_rx_free(rx);
	dmsnic_xdp_rx_free(rx);
	for (i = 0; rx->hbufs && i < rx->size; i++)
		if (rx->hbufs[i].page)
			page_pool_put_page(rx->hdr_pp, rx->hbufs[i].page, -1,
					   false);
	for (i = 0; rx->pbufs && i < rx->size; i++)
		if (rx->pbufs[i])
			dmsnic_rx_pbuf_free(rx, i);
	kvfree(rx->hbufs);
	kvfree(rx->pbufs);
	kvfree(rx->pbias);
	if (rx->hbuf_ring)
		dma_free_coherent(dev, rx->size * sizeof(*rx->hbuf_ring),
				  rx->hbuf_ring, rx->hbuf_dma);
	if (rx->pbuf_ring)
		dma_free_coherent(dev, rx->size * sizeof(*rx->pbuf_ring),
				  rx->pbuf_ring, rx->pbuf_dma);
	if (rx->cmpl_ring)
		dma_free_coherent(dev, rx->size * sizeof(*rx->cmpl_ring),
				  rx->cmpl_ring, rx->cmpl_dma);
	page_pool_destroy(rx->hdr_pp);
	page_pool_destroy(rx->pay_pp);
	memset(rx, 0, sizeof(*rx));
}

/*
 * Build the memory of RX queue @idx. The payload pool is created here, in
 * the queue-management alloc path, with .netdev and .queue_idx set: this is
 * where a memory provider bound to the queue can take it over. While the
 * interface is down only the pools are created (the core may still call us
 * to validate a provider binding).
 */
int dmsnic_rx_alloc(struct dmsnic_priv *priv, struct dmsnic_rx_ring *rx,
		    int idx, const struct netdev_queue_config *qcfg,
		    u32 size, bool rings)
{
	struct page_pool *pp;
	int err;

	/* A zero-copy queue's payload buffers are its XSK pool's frames;
	 * its payload page pool stays empty.
	 */
	rx->xsk_pool = READ_ONCE(priv->qps[idx].xsk_pool);
	/* Payload buffers are rx-page-size (a devmem binding may ask for
	 * more than a page), one page-pool allocation each.
	 */
	dmsnic_rx_layout(priv, rx, qcfg->rx_page_size);
	pp = dmsnic_create_pp(priv, rx,
			      DIV_ROUND_UP(size, PAGE_SIZE / rx->hbuf_alloc),
			      idx, 0, false, false);
	if (IS_ERR(pp))
		return PTR_ERR(pp);
	rx->hdr_pp = pp;

	pp = dmsnic_create_pp(priv, rx, size, idx, get_order(rx->buf_size),
			      true, priv->hds &&
			      netif_rxq_has_unreadable_mp(priv->netdev, idx));
	if (IS_ERR(pp)) {
		err = PTR_ERR(pp);
		goto err_free;
	}
	rx->pay_pp = pp;
	/*
	 * Pack small payloads into shared buffers where the pages are ours.
	 * A memory provider (devmem, zcrx) sizes its buffers for bulk
	 * payloads, where packing saves nothing; XDP and AF_XDP want a frame
	 * per buffer.
	 */
	rx->pack = (priv->caps & DMS_NIC_CAP_RXQ_PACK) && !rx->xdp &&
		   !rx->xsk_pool && !pp->mp_ops;
	err = dmsnic_xdp_rx_reg(priv, rx, idx);
	if (err)
		goto err_free;

	if (!rings)
		return 0;
	err = dmsnic_rx_alloc_rings(priv, rx, idx, size);
	if (err)
		goto err_free;
	return 0;

err_free:
	dmsnic_rx_free_ring(priv, rx);
	return err;
}

/* ---- RX completions ---- */

static void dmsnic_rx_put_pbuf(struct dmsnic_rx_ring *rx, netmem_ref netmem)
{
	page_pool_put_full_netmem(rx->pay_pp, netmem, true);
}

/* Copy a header buffer into a new skb and recycle the buffer at once. */
static struct sk_buff *dmsnic_rx_skb_from_hdr(struct dmsnic_qp *qp,
					      struct dmsnic_hbuf hb, u32 len)
{
	struct dmsnic_rx_ring *rx = &qp->rx;
	struct sk_buff *skb = NULL;

	/* dmsnic_rx_take_bufs() checked len against the buffer. */
	if (len >= ETH_HLEN) {
		void *va = page_address(hb.page) + hb.offset;

		page_pool_dma_sync_for_cpu(rx->hdr_pp, hb.page, hb.offset, len);
		skb = napi_alloc_skb(&qp->napi, len);
		if (skb) {
			/* Before any frag: every way out frees them properly. */
			skb_mark_for_recycle(skb);
			skb_put_data(skb, va, len);
		}
	}
	page_pool_put_page(rx->hdr_pp, hb.page, -1, true);
	return skb;
}

/*
 * A frame that did not split starts in a payload buffer: copy its headers
 * into the linear part and keep the rest of the page as a frag. Unreadable
 * (net_iov) payload memory cannot hold headers the stack must parse, so
 * such a frame is dropped.
 */
static struct sk_buff *dmsnic_rx_skb_from_pay(struct dmsnic_qp *qp,
					      netmem_ref netmem, u32 len,
					      const struct dmsnic_piece *pc)
{
	struct dmsnic_rx_ring *rx = &qp->rx;
	void *va = netmem_address(netmem);
	struct sk_buff *skb;
	u32 hlen;

	if (!va) {
		/* Headers in unreadable (devmem) memory: the stack cannot
		 * parse them, so the frame is lost.
		 */
		u64_stats_update_begin(&qp->rx_stats.syncp);
		qp->rx_stats.hdr_unreadable++;
		u64_stats_update_end(&qp->rx_stats.syncp);
		goto drop;
	}
	if (len < ETH_HLEN)
		goto drop;
	page_pool_dma_sync_netmem_for_cpu(rx->pay_pp, netmem, pc->off, len);
	va += pc->off;
	skb = napi_alloc_skb(&qp->napi, DMSNIC_RX_COPY_MAX);
	if (!skb)
		goto drop;
	skb_mark_for_recycle(skb);
	hlen = eth_get_headlen(qp->priv->netdev, va,
			       min(len, DMSNIC_RX_COPY_MAX));
	skb_put_data(skb, va, hlen);
	if (len > hlen)
		skb_add_rx_frag_netmem(skb, 0, netmem, pc->off + hlen,
				       len - hlen, pc->truesize);
	else
		dmsnic_rx_put_pbuf(rx, netmem);
	return skb;

drop:
	dmsnic_rx_put_pbuf(rx, netmem);
	return NULL;
}

static bool dmsnic_rx_add_frag(struct dmsnic_qp *qp, struct sk_buff *skb,
			       netmem_ref netmem, u32 len,
			       const struct dmsnic_piece *pc)
{
	struct dmsnic_rx_ring *rx = &qp->rx;
	int nr = skb_shinfo(skb)->nr_frags;

	if (!len || nr >= MAX_SKB_FRAGS) {
		dmsnic_rx_put_pbuf(rx, netmem);
		return !len;
	}
	page_pool_dma_sync_netmem_for_cpu(rx->pay_pp, netmem, pc->off, len);
	skb_add_rx_frag_netmem(skb, nr, netmem, pc->off, len, pc->truesize);
	return true;
}

void dmsnic_rx_meta(struct dmsnic_qp *qp, struct sk_buff *skb,
		    const struct dms_rx_cmpl *c, u16 flags)
{
	netdev_features_t features = qp->priv->netdev->features;
	u16 info = le16_to_cpu(c->info);

	if ((flags & DMS_RX_F_CSUM_OK) && (features & NETIF_F_RXCSUM))
		skb->ip_summed = CHECKSUM_UNNECESSARY;
	if ((flags & DMS_RX_F_RSS) && (features & NETIF_F_RXHASH))
		skb_set_hash(skb, le32_to_cpu(c->rss_hash),
			     (info & DMS_RX_L4_MASK) ? PKT_HASH_TYPE_L4 :
						       PKT_HASH_TYPE_L3);
	dmsnic_ptp_rx(qp->priv, skb, c);
}

void dmsnic_rx_count_drop(struct dmsnic_qp *qp)
{
	u64_stats_update_begin(&qp->rx_stats.syncp);
	qp->rx_stats.drops++;
	u64_stats_update_end(&qp->rx_stats.syncp);
}

/*
 * The stack checksums in software what the device did not verify, and it
 * cannot read devmem payload (skb_checksum() WARNs on unreadable frags):
 * such a frame (bad checksum, or rx-checksumming off) is dropped.
 */
static bool dmsnic_rx_csum_unreadable(struct dmsnic_qp *qp, struct sk_buff *skb)
{
	if (skb->ip_summed == CHECKSUM_UNNECESSARY || skb_frags_readable(skb))
		return false;
	u64_stats_update_begin(&qp->rx_stats.syncp);
	qp->rx_stats.csum_unreadable++;
	qp->rx_stats.drops++;
	u64_stats_update_end(&qp->rx_stats.syncp);
	dev_kfree_skb_any(skb);
	return true;
}

/* Where a coalesced frame's headers are, as offsets from its MAC header. */
struct dmsnic_gro_hdrs {
	u32 inner;		/* IP-in-IP: the inner IP header; else 0 */
	u32 l3;			/* the first IP header */
	u32 l4;			/* the TCP header */
	u32 end;		/* the first payload byte */
	bool outer_v6;
	bool v6;		/* the IP header TCP follows */
	bool cwr;
};

/* @len bytes from @off, pulled into the linear part; NULL if not there. */
static const void *dmsnic_rx_hdr(struct sk_buff *skb, u32 off, u32 len)
{
	return pskb_may_pull(skb, off + len) ? skb->data + off : NULL;
}

/*
 * The IP header at *off, whose length field must end with the frame:
 * moves *off past it (and an IPv6 header's hop-by-hop and destination
 * options, as many as the device takes) and returns the protocol after
 * it, or -1.
 */
static int dmsnic_rx_gro_ip(struct sk_buff *skb, u32 *off, bool v6)
{
	const struct ipv6_opt_hdr *opt;
	const struct ipv6hdr *ip6;
	const struct iphdr *ip4;
	int i, proto;

	if (!v6) {
		ip4 = dmsnic_rx_hdr(skb, *off, sizeof(*ip4));
		if (!ip4 || ip4->version != 4 || ip4->ihl < 5 ||
		    ntohs(ip4->tot_len) != skb->len - *off ||
		    ip_is_fragment(ip4))
			return -1;
		*off += ip4->ihl * 4;
		return ip4->protocol;
	}
	ip6 = dmsnic_rx_hdr(skb, *off, sizeof(*ip6));
	if (!ip6 || ip6->version != 6 ||
	    ntohs(ip6->payload_len) != skb->len - *off - sizeof(*ip6))
		return -1;
	proto = ip6->nexthdr;
	*off += sizeof(*ip6);
	for (i = 0; i < 4 && (proto == NEXTHDR_HOP || proto == NEXTHDR_DEST);
	     i++) {
		opt = dmsnic_rx_hdr(skb, *off, sizeof(*opt));
		if (!opt)
			return -1;
		proto = opt->nexthdr;
		*off += ipv6_optlen(opt);
	}
	return proto;
}

/*
 * Parse a coalesced frame's headers as the device did: Ethernet, up to two
 * VLAN tags, IPv4 or IPv6, possibly IPv4 or IPv6 inside it (IP-in-IP),
 * then TCP and some payload. False if they are not there.
 */
static bool dmsnic_rx_gro_parse(struct sk_buff *skb, struct dmsnic_gro_hdrs *h)
{
	const struct tcphdr *th;
	const struct ethhdr *eth;
	const struct vlan_hdr *vh;
	u32 off = ETH_HLEN;
	__be16 type;
	int proto, i;

	eth = dmsnic_rx_hdr(skb, 0, ETH_HLEN);
	if (!eth)
		return false;
	type = eth->h_proto;
	for (i = 0; i < 2 && eth_type_vlan(type); i++) {
		vh = dmsnic_rx_hdr(skb, off, VLAN_HLEN);
		if (!vh)
			return false;
		type = vh->h_vlan_encapsulated_proto;
		off += VLAN_HLEN;
	}
	if (type != htons(ETH_P_IP) && type != htons(ETH_P_IPV6))
		return false;
	h->l3 = off;
	h->outer_v6 = type == htons(ETH_P_IPV6);
	h->v6 = h->outer_v6;
	h->inner = 0;
	proto = dmsnic_rx_gro_ip(skb, &off, h->v6);
	if (proto == IPPROTO_IPIP || proto == IPPROTO_IPV6) {
		h->inner = off;
		h->v6 = proto == IPPROTO_IPV6;
		proto = dmsnic_rx_gro_ip(skb, &off, h->v6);
	}
	th = proto == IPPROTO_TCP ? dmsnic_rx_hdr(skb, off, sizeof(*th)) : NULL;
	if (!th || th->doff < 5)
		return false;
	h->cwr = th->cwr;
	h->l4 = off;
	h->end = off + th->doff * 4;
	return h->end < skb->len && dmsnic_rx_hdr(skb, off, th->doff * 4);
}

/*
 * A frame the device coalesced from several TCP segments: its headers
 * already have the whole frame's lengths, so it only needs the GSO
 * metadata the stack (TCP's segment accounting, GRO, forwarding's
 * resegmentation) reads, as the stack's own GRO completion would set it:
 * an IP-in-IP aggregate is encapsulated (SKB_GSO_IPXIP4/6, the inner
 * headers), so that a forwarded one is resegmented as a tunnel; CWR on
 * every segment is AccECN's. The TCP checksum field is the first
 * segment's: the device verified every segment, so the stack must not
 * check it (CHECKSUM_UNNECESSARY, csum_level 0: IP-in-IP adds no
 * checksum).
 *
 * What the device says is checked first: segments of gso_size bytes but
 * the last, which the payload must fill to more than segs - 1 of them,
 * each no longer than the MTU with its headers, in a TCP frame of the IP
 * version the completion gives. Returns the headers' length, or 0 for a
 * lie.
 */
static u32 dmsnic_rx_gro_finish(struct dmsnic_qp *qp, struct sk_buff *skb)
{
	struct dmsnic_rx_ring *rx = &qp->rx;
	u32 size = rx->sop_gso_size, segs = rx->sop_gro_segs, payload;
	struct skb_shared_info *shinfo;
	struct dmsnic_gro_hdrs h;

	if ((rx->sop_info & DMS_RX_L4_MASK) != DMS_RX_L4_TCP ||
	    !dmsnic_rx_gro_parse(skb, &h) ||
	    h.v6 != ((rx->sop_info & DMS_RX_L3_MASK) == DMS_RX_L3_IPV6))
		return 0;
	payload = skb->len - h.end;
	if (segs > DMS_NIC_GRO_SEGS_MAX || !size ||
	    (segs - 1) * size >= payload || payload > segs * size ||
	    h.end - h.l3 + size > READ_ONCE(qp->priv->netdev->mtu))
		return 0;

	/* After the parse: pulling headers may have moved them. */
	shinfo = skb_shinfo(skb);
	shinfo->gso_size = size;
	shinfo->gso_segs = segs;
	shinfo->gso_type = h.v6 ? SKB_GSO_TCPV6 : SKB_GSO_TCPV4;
	if (h.cwr)
		shinfo->gso_type |= SKB_GSO_TCP_ACCECN;
	if (h.inner) {
		shinfo->gso_type |= h.outer_v6 ? SKB_GSO_IPXIP6 : SKB_GSO_IPXIP4;
		skb->encapsulation = 1;
		skb_set_inner_protocol(skb, h.v6 ? htons(ETH_P_IPV6) :
						   htons(ETH_P_IP));
		skb_set_inner_network_header(skb, h.inner);
		skb_set_inner_transport_header(skb, h.l4);
	}
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	return h.end;
}

/* A frame whose hardware GRO metadata lies: dropped, counted. */
static void dmsnic_rx_drop_gro_bad(struct dmsnic_qp *qp, struct sk_buff *skb)
{
	struct dmsnic_rx_stats *st = &qp->rx_stats;

	dev_kfree_skb_any(skb);
	u64_stats_update_begin(&st->syncp);
	st->hw_gro_bad++;
	st->drops++;
	u64_stats_update_end(&st->syncp);
}

/*
 * rx packets/bytes (netdev qstats' rx-packets) and split count wire
 * frames: a coalesced frame counts as its segments, each with the headers,
 * and once more as hw_gro_packets/bytes. One whose GSO metadata lies is
 * dropped and counted in hw_gro_bad.
 */
static void dmsnic_rx_deliver(struct dmsnic_qp *qp, struct sk_buff *skb)
{
	struct dmsnic_rx_ring *rx = &qp->rx;
	struct dmsnic_rx_stats *st = &qp->rx_stats;
	unsigned int len = skb->len;
	u64 wire_bytes = len;
	u32 segs = 1, hlen;

	if (rx->sop_gro_segs > 1) {
		hlen = dmsnic_rx_gro_finish(qp, skb);
		if (!hlen) {
			dmsnic_rx_drop_gro_bad(qp, skb);
			return;
		}
		segs = rx->sop_gro_segs;
		wire_bytes += (u64)(segs - 1) * hlen;
	} else if (len > READ_ONCE(qp->priv->netdev->mtu) + ETH_HLEN +
		   2 * VLAN_HLEN) {
		/* Longer than a wire frame and not coalesced: gro_segs lies. */
		dmsnic_rx_drop_gro_bad(qp, skb);
		return;
	}
	if (dmsnic_rx_csum_unreadable(qp, skb))
		return;
	skb->protocol = eth_type_trans(skb, qp->priv->netdev);
	skb_record_rx_queue(skb, qp->idx);

	u64_stats_update_begin(&st->syncp);
	st->packets += segs;
	st->bytes += wire_bytes;
	if (segs > 1) {
		st->hw_gro_packets++;
		st->hw_gro_bytes += len;
		st->hw_gro_wire_packets += segs;
		st->hw_gro_wire_bytes += wire_bytes;
	}
	if (rx->sop_flags & DMS_RX_F_SPLIT)
		st->split += segs;
	if (rx->sop_flags & DMS_RX_F_CSUM_BAD)
		st->csum_bad++;
	u64_stats_update_end(&st->syncp);

	napi_gro_receive(&qp->napi, skb);
}

/* Take the buffer a completion names out of its ring; none if bogus. */
static bool dmsnic_rx_take_hbuf(struct dmsnic_rx_ring *rx, u16 id,
				struct dmsnic_hbuf *hb)
{
	if (id != dmsnic_rx_hbuf_head(rx) || !rx->hbufs[id].page)
		return false;
	*hb = rx->hbufs[id];
	rx->hbufs[id].page = NULL;
	rx->hbuf_posted--;
	return true;
}

static netmem_ref dmsnic_rx_take_pbuf(struct dmsnic_rx_ring *rx, u16 id)
{
	netmem_ref netmem;

	if (id != dmsnic_rx_pbuf_head(rx) || !rx->pbufs[id])
		return 0;
	netmem = rx->pbufs[id];
	rx->pbufs[id] = 0;
	rx->pbuf_posted--;
	return netmem;
}

/*
 * SOP: start a new frame with the completion's buffers. The ones the new
 * skb takes (or that go back to their pools) are cleared in *have_hb and
 * *netmem; what is left belongs nowhere and is for the caller to recycle.
 */
static void dmsnic_rx_start_frame(struct dmsnic_qp *qp,
				  const struct dms_rx_cmpl *c, u16 flags,
				  const struct dmsnic_hbuf *hb, bool *have_hb,
				  netmem_ref *netmem,
				  const struct dmsnic_piece *pc)
{
	struct dmsnic_rx_ring *rx = &qp->rx;
	u32 pay_len = le32_to_cpu(c->pay_len);
	struct sk_buff *skb = NULL;

	if (rx->in_frame) {
		/* The previous frame never saw its EOP. */
		dev_kfree_skb_any(rx->skb);
		dmsnic_rx_count_drop(qp);
	}
	/* A lost frame (DMS_RX_F_ERR) only hands its buffers back. */
	if (*have_hb && !(flags & DMS_RX_F_ERR)) {
		skb = dmsnic_rx_skb_from_hdr(qp, *hb, le16_to_cpu(c->hdr_len));
		*have_hb = false;
	}
	if (*netmem && !(flags & DMS_RX_F_ERR)) {
		if (skb && !dmsnic_rx_add_frag(qp, skb, *netmem, pay_len, pc)) {
			dev_kfree_skb_any(skb);
			skb = NULL;
		} else if (!skb && !(flags & DMS_RX_F_HDR)) {
			skb = dmsnic_rx_skb_from_pay(qp, *netmem, pay_len, pc);
		} else if (!skb) {
			dmsnic_rx_put_pbuf(rx, *netmem);
		}
		*netmem = 0;
	}
	if (skb)
		dmsnic_rx_meta(qp, skb, c, flags);
	rx->skb = skb;
	rx->sop_flags = flags;
	rx->sop_info = le16_to_cpu(c->info);
	rx->sop_gro_segs = le16_to_cpu(c->gro_segs);
	rx->sop_gso_size = le16_to_cpu(c->gso_size);
	rx->in_frame = true;
}

/*
 * A piece of a packed buffer (NIC v1.9): it starts where the buffer's last
 * piece ended, rounded up to DMS_NIC_PACK_ALIGN, or at 0 in a new buffer,
 * and takes one of the buffer's references. The buffer leaves the ring
 * once the device says it is done with it (PBUF_DONE), or when a piece
 * names another buffer. A piece beyond the buffer, or more pieces than it
 * can hold, is the device's lie: none is taken, and the buffer stays in
 * the ring, as the device may still write it; the ring has lost track
 * (*lost) and waits for the pair's restart.
 *
 * A piece that reaches the buffer's end without PBUF_DONE does not end
 * it: either the device moved on without saying so (its next piece names
 * another buffer, which ends this one), or the ring's offsets ran ahead
 * of the device's (a duplicated completion taken as a piece) and the
 * device still fills this buffer. Ending it then would be fatal: refill
 * posts the freed slot's worth and the tail lands on the device's head
 * buffer, so the device sees an empty ring, writes nothing, and NIC
 * reception waits on this queue for good. Kept, the device's next piece
 * in it is caught as one beyond the buffer, and the pair restarts.
 */
static netmem_ref dmsnic_rx_take_piece(struct dmsnic_rx_ring *rx, u16 id,
				       u32 len, u16 flags,
				       struct dmsnic_piece *pc, bool *lost)
{
	netmem_ref netmem;
	u32 off = 0, end;

	*lost = true;
	if (id >= rx->size || !rx->pbufs[id])
		return 0;
	if (rx->pack_off && rx->pack_id != id) {
		/*
		 * The device left its buffer (the ring's head) without saying
		 * so: the next in ring order is the only other it may name.
		 */
		if (id != ((rx->pack_id + 1) & (rx->size - 1)))
			return 0;
		dmsnic_rx_pack_end(rx, rx->pack_id, true);
	} else if (rx->pack_off) {
		off = rx->pack_off;
	} else if (id != dmsnic_rx_pbuf_head(rx)) {
		return 0;
	}
	netmem = rx->pbufs[id];
	if (len > rx->pbuf_len - off || rx->pbias[id] < 2)
		return 0;
	*lost = false;
	rx->pbias[id]--;
	end = off + ALIGN(len, DMS_NIC_PACK_ALIGN);
	pc->off = off;
	if (flags & DMS_RX_F_PBUF_DONE) {
		pc->truesize = rx->buf_size - off;
		dmsnic_rx_pack_end(rx, id, true);
	} else {
		pc->truesize = end - off;
		rx->pack_id = id;
		rx->pack_off = end;
	}
	return netmem;
}

/*
 * Take the buffers a completion names out of their rings: *have_hb and
 * *netmem say which ones it had, *pc where the payload is (@pc may be NULL
 * on rings that never pack: XDP's). A completion naming a buffer that is
 * not the next posted one in ring order, or more bytes than the device may write into the buffer as
 * it was posted (hbuf_len, pbuf_len: the XDP layout's buffers are pages
 * the device writes only 3520 bytes of), lies: the buffer goes back to
 * its pool unread, and the lie is counted (the frame is then dropped).
 * A buffer the ring does not hold (or a piece its buffer cannot) means the
 * ring has lost track of the device's buffers: the pair is restarted.
 */
void dmsnic_rx_take_bufs(struct dmsnic_qp *qp, const struct dms_rx_cmpl *c,
			 u16 flags, struct dmsnic_hbuf *hb, bool *have_hb,
			 netmem_ref *netmem, struct dmsnic_piece *pc)
{
	struct dmsnic_rx_ring *rx = &qp->rx;
	u32 pay_len = le32_to_cpu(c->pay_len);
	u16 id = le16_to_cpu(c->pbuf_id);
	bool lost = false, piece_lost;

	*have_hb = false;
	*netmem = 0;
	/*
	 * A completion that continues no frame (a frame's EOP completion
	 * written again, nic_lie_dup) names a buffer the frame already had:
	 * on a packed ring, the one the device still fills, and taking it as
	 * a piece would move the ring's offsets past the device's. Take
	 * nothing: the ring has lost track.
	 */
	if (unlikely(!(flags & DMS_RX_F_SOP) && !rx->in_frame)) {
		lost = true;
		goto bad;
	}
	if (flags & DMS_RX_F_HDR) {
		*have_hb = dmsnic_rx_take_hbuf(rx, le16_to_cpu(c->hbuf_id), hb);
		lost = !*have_hb;
	}
	if (*have_hb && le16_to_cpu(c->hdr_len) > rx->hbuf_len) {
		page_pool_put_page(rx->hdr_pp, hb->page, -1, true);
		*have_hb = false;
	}
	if ((flags & DMS_RX_F_PAY) && rx->pack) {
		*netmem = dmsnic_rx_take_piece(rx, id, pay_len, flags, pc,
					       &piece_lost);
		lost |= piece_lost;
	} else if (flags & DMS_RX_F_PAY) {
		*netmem = dmsnic_rx_take_pbuf(rx, id);
		lost |= !*netmem;
		if (pc)
			*pc = (struct dmsnic_piece){ 0, rx->buf_size };
	}
	if (*netmem && !rx->pack && pay_len > rx->pbuf_len) {
		dmsnic_rx_put_pbuf(rx, *netmem);
		*netmem = 0;
	}
	if (likely((!(flags & DMS_RX_F_HDR) || *have_hb) &&
		   (!(flags & DMS_RX_F_PAY) || *netmem)))
		return;
bad:
	u64_stats_update_begin(&qp->rx_stats.syncp);
	qp->rx_stats.bad_cmpl++;
	u64_stats_update_end(&qp->rx_stats.syncp);
	net_warn_ratelimited("%s: rxq %u: bad completion flags 0x%x hbuf %u len %u pbuf %u len %u\n",
			     netdev_name(qp->priv->netdev), qp->idx, flags,
			     le16_to_cpu(c->hbuf_id), le16_to_cpu(c->hdr_len),
			     id, pay_len);
	if (lost)
		dmsnic_qp_lost(qp);
}

/*
 * A ring that lost track of its buffers (dmsnic_qp_lost()) reads nothing
 * until its pair restarts: the buffers stay where they are (the restart
 * posts them again), each frame end counts a drop, and the restart drops
 * a frame left half assembled.
 */
static int dmsnic_rx_one_lost(struct dmsnic_qp *qp, u16 flags)
{
	if (!(flags & DMS_RX_F_EOP))
		return 0;
	dmsnic_rx_count_drop(qp);
	return 1;
}

/* Handle one completion; returns 1 when it ended a frame. */
static int dmsnic_rx_one(struct dmsnic_qp *qp, const struct dms_rx_cmpl *c)
{
	struct dmsnic_rx_ring *rx = &qp->rx;
	u16 flags = le16_to_cpu(c->flags);
	struct dmsnic_piece pc = {};
	struct dmsnic_hbuf hb = {};
	netmem_ref netmem;
	struct sk_buff *skb;
	bool have_hb;

	if (unlikely(rx->lost))
		return dmsnic_rx_one_lost(qp, flags);
	if (rx->xsk_pool)
		return dmsnic_xsk_rx_one(qp, c);
	if (rx->xdp)
		return dmsnic_xdp_rx_one(qp, c);
	dmsnic_rx_take_bufs(qp, c, flags, &hb, &have_hb, &netmem, &pc);
	if (flags & DMS_RX_F_SOP) {
		dmsnic_rx_start_frame(qp, c, flags, &hb, &have_hb, &netmem,
				      &pc);
	} else if (netmem && rx->skb) {
		if (!dmsnic_rx_add_frag(qp, rx->skb, netmem,
					le32_to_cpu(c->pay_len), &pc)) {
			dev_kfree_skb_any(rx->skb);
			rx->skb = NULL;
		}
		netmem = 0;
	}

	/* Buffers of a lost frame, or named where they do not belong. */
	if (have_hb)
		page_pool_put_page(rx->hdr_pp, hb.page, -1, true);
	if (netmem)
		dmsnic_rx_put_pbuf(rx, netmem);

	if (!(flags & DMS_RX_F_EOP) || !rx->in_frame)
		return 0;

	skb = rx->skb;
	rx->skb = NULL;
	rx->in_frame = false;
	if (skb)
		dmsnic_rx_deliver(qp, skb);
	else
		dmsnic_rx_count_drop(qp);
	return 1;
}

/*
 * Reap up to @budget frames and refill the buffer rings; *starved says the
 * rings were left short of what the next frame may need (nothing may
 * arrive until a refill).
 */
static int dmsnic_rx_clean(struct dmsnic_qp *qp, int budget, bool *starved)
{
	struct dmsnic_rx_ring *rx = &qp->rx;
	u32 start = rx->cmpl_head;
	int frames = 0;

	while (frames < budget) {
		struct dms_rx_cmpl *c = dmsnic_rx_cmpl_next(rx);

		if (!dmsnic_rx_cmpl_owned(rx, c))
			break;
		/* Read the rest of the entry only after its GEN bit. */
		dma_rmb();
		frames += dmsnic_rx_one(qp, c);
		rx->cmpl_head++;
	}
	if (rx->cmpl_head != start)
		dmsnic_q_wr32(qp, DMS_NIC_RXQ_CMPL_HEAD,
			      rx->cmpl_head & (rx->size - 1));
	dmsnic_xdp_flush(qp);

	*starved = dmsnic_rx_refill(qp);
	return frames;
}

/* ---- TX ---- */

/* Descriptors xmit may still fill (one slot stays empty). */
u32 dmsnic_tx_unused(const struct dmsnic_tx_ring *tx)
{
	return tx->size - 1 - (READ_ONCE(tx->tail) - READ_ONCE(tx->head));
}

void dmsnic_tx_unmap(struct device *dev, struct dmsnic_tx_buf *buf)
{
	dma_addr_t addr = dma_unmap_addr(buf, dma);
	u32 len = dma_unmap_len(buf, len);

	if (!len)
		return;
	if (buf->single)
		dma_unmap_single(dev, addr, len, DMA_TO_DEVICE);
	else
		/* Skips net_iov frags: they were never mapped here. */
		netmem_dma_unmap_page_attrs(dev, addr, len, DMA_TO_DEVICE, 0);
	dma_unmap_len_set(buf, len, 0);
}

/*
 * The L4 header the device finds by parsing the frame as it sends it
 * (datasheet, Transmit): Ethernet, up to two VLAN tags, IPv4 (not a
 * fragment) or IPv6 without extension headers, then TCP or UDP. Its offset,
 * or 0; *l3_end is where the IP packet ends, *proto the L4 protocol.
 */
static u32 dmsnic_tx_l4_off(const struct sk_buff *skb, u32 *l3_end, u8 *proto)
{
	union {
		struct iphdr v4;
		struct ipv6hdr v6;
		struct vlan_ethhdr eth;
	} buf;
	const struct vlan_ethhdr *eth;
	const struct ipv6hdr *ip6;
	const struct iphdr *ip4;
	u32 off = ETH_HLEN;
	__be16 type;

	eth = skb_header_pointer(skb, 0, sizeof(*eth), &buf);
	if (!eth)
		return 0;
	type = eth->h_vlan_proto;
	for (; eth_type_vlan(type) && off < ETH_HLEN + 2 * VLAN_HLEN;
	     off += VLAN_HLEN)
		if (skb_copy_bits(skb, off + 2, &type, sizeof(type)))
			return 0;
	if (type == htons(ETH_P_IP)) {
		ip4 = skb_header_pointer(skb, off, sizeof(*ip4), &buf);
		if (!ip4 || ip4->version != 4 || ip4->ihl < 5 ||
		    ip_is_fragment(ip4))
			return 0;
		*proto = ip4->protocol;
		*l3_end = off + ntohs(ip4->tot_len);
		return off + ip4->ihl * 4;
	}
	if (type != htons(ETH_P_IPV6))
		return 0;
	ip6 = skb_header_pointer(skb, off, sizeof(*ip6), &buf);
	if (!ip6 || ip6->version != 6)
		return 0;
	*proto = ip6->nexthdr;
	*l3_end = off + sizeof(*ip6) + ntohs(ip6->payload_len);
	return off + sizeof(*ip6);
}

/*
 * Whether the device's checksum is the one a CHECKSUM_PARTIAL skb asks
 * for. The device fills in the TCP or UDP checksum of the L4 header it
 * finds (dmsnic_tx_l4_off()), over the rest of the IP packet; the stack
 * wants the checksum from csum_start to the end of the skb at csum_start +
 * csum_offset. They are the same only when csum_start is that header,
 * csum_offset its checksum field and (unless the device segments the skb,
 * which rewrites the IP lengths) the IP packet ends with the skb. A
 * tunnel's inner header, or a csum_start from a packet socket's
 * virtio_net_hdr, is not: the checksum is then done in software.
 */
static bool dmsnic_tx_csum_offloadable(struct sk_buff *skb)
{
	const struct tcphdr *th;
	struct tcphdr buf;
	u32 l4, l3_end;
	u8 proto;

	l4 = dmsnic_tx_l4_off(skb, &l3_end, &proto);
	if (!l4 || skb_checksum_start_offset(skb) != l4 ||
	    (!skb_is_gso(skb) && l3_end != skb->len))
		return false;
	if (proto == IPPROTO_UDP)
		return skb->csum_offset == offsetof(struct udphdr, check) &&
		       l4 + sizeof(struct udphdr) <= skb->len;
	if (proto != IPPROTO_TCP ||
	    skb->csum_offset != offsetof(struct tcphdr, check))
		return false;
	/* A TCP header the device would not take gets no checksum. */
	th = skb_header_pointer(skb, l4, sizeof(buf), &buf);
	return th && th->doff >= 5 && l4 + th->doff * 4 <= skb->len;
}

/* Header bytes of a GSO skb, as the segmentation descriptor counts them. */
static u32 dmsnic_gso_hdr_len(struct sk_buff *skb)
{
	if (skb_shinfo(skb)->gso_type & SKB_GSO_UDP_L4)
		return skb_transport_offset(skb) + sizeof(struct udphdr);
	return skb_tcp_all_headers(skb);
}

/*
 * What the device cannot segment goes through software GSO: a tiny MSS,
 * long headers, tunnels, IPv6 extension headers (the device expects TCP
 * or UDP right after the IPv6 header), and a transport header that is not
 * where the device parses one (software GSO then checksums the segments
 * too). The checksum of an skb the device does not segment is checked in
 * dmsnic_tx_prepare().
 */
netdev_features_t dmsnic_features_check(struct sk_buff *skb,
					struct net_device *dev,
					netdev_features_t features)
{
	features = vlan_features_check(skb, features);
	if (!skb_is_gso(skb))
		return features;
	if (skb->encapsulation ||
	    skb_shinfo(skb)->gso_size < DMS_NIC_TSO_MIN_MSS ||
	    dmsnic_gso_hdr_len(skb) > DMS_NIC_TSO_MAX_HDR ||
	    (skb->protocol == htons(ETH_P_IPV6) &&
	     ipv6_hdr(skb)->nexthdr != IPPROTO_TCP &&
	     ipv6_hdr(skb)->nexthdr != IPPROTO_UDP))
		features &= ~NETIF_F_GSO_MASK;
	else if (!dmsnic_tx_csum_offloadable(skb))
		features &= ~(NETIF_F_GSO_MASK | NETIF_F_CSUM_MASK);
	return features;
}

/*
 * The segmentation descriptor of a GSO skb, in its own slot before the
 * SOP; it maps nothing. Returns the header length it gave the device.
 */
static u32 dmsnic_tx_seg_desc(struct dmsnic_tx_ring *tx, u32 idx,
			      struct sk_buff *skb)
{
	u32 slot = idx & (tx->size - 1);
	struct dms_tx_seg_desc *sd = (struct dms_tx_seg_desc *)&tx->desc[slot];
	const struct skb_shared_info *shinfo = skb_shinfo(skb);
	u32 hdr_len = dmsnic_gso_hdr_len(skb);
	u16 kind;

	if (shinfo->gso_type & SKB_GSO_UDP_L4)
		kind = DMS_TX_SEG_UDP;
	else if (shinfo->gso_type & SKB_GSO_TCPV6)
		kind = DMS_TX_SEG_TCP6;
	else
		kind = DMS_TX_SEG_TCP4;
	memset(sd, 0, sizeof(*sd));
	sd->mss = cpu_to_le16(shinfo->gso_size);
	sd->hdr_len = cpu_to_le16(hdr_len);
	sd->flags = cpu_to_le16(DMS_TX_F_SEG | kind);
	dma_unmap_len_set(&tx->bufs[slot], len, 0);
	tx->bufs[slot].skb = NULL;
	return hdr_len;
}

/* What the skb becomes on the wire: its segments and their bytes. */
static void dmsnic_tx_wire(struct dmsnic_tx_buf *eop, const struct sk_buff *skb,
			   u32 hdr_len)
{
	if (!skb_is_gso(skb)) {
		eop->segs = 1;
		eop->wire_bytes = skb->len;
		return;
	}
	eop->segs = DIV_ROUND_UP(skb->len - hdr_len, skb_shinfo(skb)->gso_size);
	eop->wire_bytes = skb->len + (eop->segs - 1) * hdr_len;
}

void dmsnic_tx_desc(struct dmsnic_tx_ring *tx, u32 idx, dma_addr_t dma,
		    u32 len, u16 flags)
{
	u32 slot = idx & (tx->size - 1);
	struct dms_tx_desc *d = &tx->desc[slot];

	d->addr = cpu_to_le64(dma);
	d->len = cpu_to_le32(len);
	d->flags = cpu_to_le16(flags);
	d->tag = cpu_to_le16(slot);
}

/*
 * Tell the device about descriptors filled since the last doorbell. xmit
 * defers it while the stack has more frames coming (xmit_more); every
 * path out of xmit that ends such a burst must ring it.
 */
void dmsnic_tx_doorbell(struct dmsnic_qp *qp)
{
	struct dmsnic_tx_ring *tx = &qp->tx;

	if (tx->db_tail == tx->tail)
		return;
	tx->db_tail = tx->tail;
	dmsnic_q_wr32(qp, DMS_NIC_TXQ_TAIL, tx->tail & (tx->size - 1));
}

/*
 * Map the skb and fill its descriptors from index first on, the EOP on the
 * last one, and set *next to the index after the last descriptor (tail
 * indexes run free, past INT_MAX). On error nothing is left mapped.
 */
static int dmsnic_tx_map(struct dmsnic_qp *qp, struct sk_buff *skb, u16 sop,
			 u32 first, u32 *next)
{
	struct device *dmadev = dmsnic_dma_dev(qp->priv);
	struct dmsnic_tx_ring *tx = &qp->tx;
	u32 headlen = skb_headlen(skb), nr_frags = skb_shinfo(skb)->nr_frags;
	u32 mask = tx->size - 1, idx = first;
	u32 last = first + nr_frags + !!headlen - 1;
	struct dmsnic_tx_buf *buf;
	dma_addr_t dma;
	u32 i;

	if (headlen) {
		buf = &tx->bufs[idx & mask];
		dma = dma_map_single(dmadev, skb->data, headlen, DMA_TO_DEVICE);
		if (dma_mapping_error(dmadev, dma))
			return -ENOMEM;
		dma_unmap_addr_set(buf, dma, dma);
		dma_unmap_len_set(buf, len, headlen);
		buf->single = true;
		dmsnic_tx_desc(tx, idx, dma, headlen,
			       sop | (idx == last ? DMS_TX_F_EOP : 0));
		sop = 0;
		idx++;
	}
	for (i = 0; i < nr_frags; i++, idx++) {
		const skb_frag_t *frag = &skb_shinfo(skb)->frags[i];
		u32 flen = skb_frag_size(frag);

		buf = &tx->bufs[idx & mask];
		dma = skb_frag_dma_map(dmadev, frag);
		if (dma_mapping_error(dmadev, dma))
			goto unmap;
		netmem_dma_unmap_addr_set(skb_frag_netmem(frag), buf, dma, dma);
		dma_unmap_len_set(buf, len, flen);
		buf->single = false;
		dmsnic_tx_desc(tx, idx, dma, flen,
			       sop | (idx == last ? DMS_TX_F_EOP : 0));
		sop = 0;
	}
	tx->bufs[last & mask].skb = skb;
	*next = idx;
	return 0;

unmap:
	while (idx != first)
		dmsnic_tx_unmap(dmadev, &tx->bufs[--idx & mask]);
	return -ENOMEM;
}

/*
 * Make the skb fit the device: at most max_tx_frags buffers, checksum
 * offload only where the device can do it. Returns the SOP flags, or a
 * negative error when the skb has to be dropped.
 */
static int dmsnic_tx_prepare(struct dmsnic_priv *priv, struct sk_buff *skb)
{
	u16 sop = DMS_TX_F_SOP;

	if (skb_shinfo(skb)->nr_frags + 1 > priv->max_tx_frags &&
	    __skb_linearize(skb))
		return -ENOMEM;
	sop |= dmsnic_ptp_tx_flags(priv, skb);
	if (skb->ip_summed == CHECKSUM_PARTIAL) {
		/* A GSO skb the device could not checksum went to software
		 * GSO (dmsnic_features_check()).
		 */
		if (skb_is_gso(skb) || dmsnic_tx_csum_offloadable(skb))
			sop |= DMS_TX_F_CSUM;
		else if (skb_checksum_help(skb))
			return -EINVAL;
	}
	return sop;
}

static void dmsnic_tx_count_drop(struct dmsnic_qp *qp, struct sk_buff *skb)
{
	dev_kfree_skb_any(skb);
	u64_stats_update_begin(&qp->tx_stats.syncp);
	qp->tx_stats.drops++;
	u64_stats_update_end(&qp->tx_stats.syncp);
}

netdev_tx_t dmsnic_start_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct dmsnic_priv *priv = netdev_priv(dev);
	u16 q = skb_get_queue_mapping(skb);
	struct dmsnic_qp *qp = &priv->qps[q];
	struct netdev_queue *txq = netdev_get_tx_queue(dev, q);
	struct dmsnic_tx_ring *tx = &qp->tx;
	unsigned int len;
	u32 idx, hdr_len = 0;
	bool gso;
	int sop;

	if (unlikely(!READ_ONCE(qp->hw_up))) {
		/* A pair left down (dmsnic_txq_left_down()): no ring to use. */
		dmsnic_tx_count_drop(qp, skb);
		return NETDEV_TX_OK;
	}
	sop = dmsnic_tx_prepare(priv, skb);
	if (sop < 0)
		goto drop;
	gso = skb_is_gso(skb);
	if (unlikely(dmsnic_tx_unused(tx) <
		     gso + skb_shinfo(skb)->nr_frags + !!skb_headlen(skb))) {
		/* netif_txq_maybe_stop() below should make this impossible */
		netif_tx_stop_queue(txq);
		dmsnic_tx_doorbell(qp);
		return NETDEV_TX_BUSY;
	}
	len = skb->len;
	idx = tx->tail;
	if (gso)
		hdr_len = dmsnic_tx_seg_desc(tx, idx++, skb);
	if (dmsnic_tx_map(qp, skb, sop, idx, &idx))
		goto drop;
	dmsnic_tx_wire(&tx->bufs[(idx - 1) & (tx->size - 1)], skb, hdr_len);
	skb_tx_timestamp(skb);

	/* Publish the descriptors before the stop check reads free space. */
	smp_store_release(&tx->tail, idx);
	if (!netif_txq_maybe_stop(txq, dmsnic_tx_unused(tx), DMSNIC_TX_STOP_THRS,
				  DMSNIC_TX_START_THRS)) {
		u64_stats_update_begin(&qp->tx_stats.syncp);
		qp->tx_stats.stops++;
		u64_stats_update_end(&qp->tx_stats.syncp);
	}
	if (__netdev_tx_sent_queue(txq, len, netdev_xmit_more()))
		dmsnic_tx_doorbell(qp);
	return NETDEV_TX_OK;

drop:
	dmsnic_tx_count_drop(qp, skb);
	if (!netdev_xmit_more() || netif_xmit_stopped(txq))
		dmsnic_tx_doorbell(qp);
	return NETDEV_TX_OK;
}

/*
 * A completion's tag must name the EOP slot of a frame in flight, i.e. a
 * slot in [head, tail) that holds an skb; anything else would free
 * descriptors the device may still read.
 */
static bool dmsnic_tx_tag_valid(const struct dmsnic_tx_ring *tx, u32 head,
				u32 tail, u16 tag)
{
	return tag < tx->size && ((tag - head) & (tx->size - 1)) < tail - head &&
	       (tx->bufs[tag].skb || tx->bufs[tag].xdpf || tx->bufs[tag].xsk);
}

struct dmsnic_tx_done {
	u32 pkts, bytes;	/* every skb completed (BQL) */
	u32 ok_pkts, ok_bytes;	/* wire frames the device sent */
	u32 gso_pkts, gso_bytes;	/* GSO skbs it segmented */
	u32 gso_wire_pkts, gso_wire_bytes;
	u32 errors, bad;
	u32 xsk;		/* XSK frames: xsk_tx_completed() */
};

static void dmsnic_tx_count_sent(const struct dmsnic_tx_buf *buf,
				 struct dmsnic_tx_done *done)
{
	done->ok_pkts += buf->segs;
	done->ok_bytes += buf->wire_bytes;
	if (!skb_is_gso(buf->skb))
		return;
	done->gso_pkts++;
	done->gso_bytes += buf->skb->len;
	done->gso_wire_pkts += buf->segs;
	done->gso_wire_bytes += buf->wire_bytes;
}

/* Unmap and free the frame(s) from *head through the EOP at @tag. */
static void dmsnic_tx_complete(struct dmsnic_qp *qp, u32 *head, u16 tag,
			       bool err, int budget, struct dmsnic_tx_done *done)
{
	struct device *dmadev = dmsnic_dma_dev(qp->priv);
	struct dmsnic_tx_ring *tx = &qp->tx;
	u32 slot;

	do {
		struct dmsnic_tx_buf *buf;

		slot = *head & (tx->size - 1);
		buf = &tx->bufs[slot];
		dmsnic_tx_unmap(dmadev, buf);
		(*head)++;
		if ((buf->xdpf || buf->xsk) && !err) {
			done->ok_pkts++;
			done->ok_bytes += buf->wire_bytes;
		}
		done->xsk += buf->xsk;
		buf->xsk = false;
		dmsnic_xdp_tx_free(buf);
		if (!buf->skb)
			continue;
		done->pkts++;
		done->bytes += buf->skb->len;
		if (!err)
			dmsnic_tx_count_sent(buf, done);
		napi_consume_skb(buf->skb, budget);
		buf->skb = NULL;
	} while (slot != tag);
}

/*
 * Reap TX completions: each one ends the frame whose EOP carries its tag.
 * Every owned completion is consumed (at most one ring's worth per poll),
 * a bad one is counted and otherwise ignored.
 */
static void dmsnic_tx_clean(struct dmsnic_qp *qp, int budget)
{
	struct netdev_queue *txq = netdev_get_tx_queue(qp->priv->netdev,
						       qp->idx);
	struct dmsnic_tx_ring *tx = &qp->tx;
	u32 head = tx->head, start = tx->cmpl_head, tail, n;
	struct dmsnic_tx_done done = {};

	for (n = 0; n < tx->size; n++) {
		struct dms_tx_cmpl *c = dmsnic_tx_cmpl_next(tx);
		u16 tag;
		bool err;

		if (!dmsnic_tx_cmpl_owned(tx, c))
			break;
		dma_rmb();
		/*
		 * The tail after the completion: xmit publishes it before the
		 * doorbell the device completed the frame for. Pairs with
		 * smp_store_release() in dmsnic_start_xmit().
		 */
		tail = smp_load_acquire(&tx->tail);
		tx->cmpl_head++;
		tag = le16_to_cpu(c->tag);
		err = le16_to_cpu(c->flags) & DMS_TX_C_ERR;
		if (!dmsnic_tx_tag_valid(tx, head, tail, tag)) {
			net_warn_ratelimited("%s: txq %u: bad completion tag %u (in flight %u..%u)\n",
					     netdev_name(qp->priv->netdev),
					     qp->idx, tag, head, tail);
			done.bad++;
			continue;
		}
		done.errors += err;
		/* XDP frames (xdpf, no skb) are never stamped. */
		if (!err && tx->bufs[tag].skb)
			dmsnic_ptp_tx_done(qp->priv, tx->bufs[tag].skb,
					   le32_to_cpu(c->ts));
		dmsnic_tx_complete(qp, &head, tag, err, budget, &done);
	}
	if (tx->cmpl_head == start)
		return;

	dmsnic_q_wr32(qp, DMS_NIC_TXQ_CMPL_HEAD, tx->cmpl_head & (tx->size - 1));
	WRITE_ONCE(tx->head, head);
	if (done.xsk)
		xsk_tx_completed(tx->xsk_pool, done.xsk);

	u64_stats_update_begin(&qp->txc_stats.syncp);
	qp->txc_stats.packets += done.ok_pkts;
	qp->txc_stats.bytes += done.ok_bytes;
	qp->txc_stats.gso_packets += done.gso_pkts;
	qp->txc_stats.gso_bytes += done.gso_bytes;
	qp->txc_stats.gso_wire_packets += done.gso_wire_pkts;
	qp->txc_stats.gso_wire_bytes += done.gso_wire_bytes;
	qp->txc_stats.errors += done.errors;
	qp->txc_stats.bad_cmpl += done.bad;
	if (!netif_txq_completed_wake(txq, done.pkts, done.bytes,
				      dmsnic_tx_unused(tx), DMSNIC_TX_START_THRS))
		qp->txc_stats.wakes++;
	u64_stats_update_end(&qp->txc_stats.syncp);
}

/*
 * Unmap and drop what the (stopped) device did not complete and rewind the
 * ring: the device starts a ring at index 0 when it is enabled again.
 * Returns the number of frames dropped.
 */
u32 dmsnic_tx_drain(struct dmsnic_priv *priv, struct dmsnic_tx_ring *tx)
{
	struct device *dev = dmsnic_dma_dev(priv);
	u32 frames = 0, xsk = 0;

	for (; tx->bufs && tx->head != tx->tail; tx->head++) {
		struct dmsnic_tx_buf *buf = &tx->bufs[tx->head & (tx->size - 1)];

		dmsnic_tx_unmap(dev, buf);
		if (buf->skb || buf->xdpf || buf->xsk)
			frames++;
		/* The socket gets its frames back, sent or not. */
		xsk += buf->xsk;
		buf->xsk = false;
		dev_kfree_skb_any(buf->skb);
		buf->skb = NULL;
		dmsnic_xdp_tx_free(buf);
	}
	if (xsk)
		xsk_tx_completed(tx->xsk_pool, xsk);
	tx->head = 0;
	tx->tail = 0;
	tx->db_tail = 0;
	tx->cmpl_head = 0;
	if (tx->cmpl)
		memset(tx->cmpl, 0, tx->size * sizeof(*tx->cmpl));
	return frames;
}

/* Frees whatever part of @tx exists, dropping frames still in flight. */
void dmsnic_tx_free_ring(struct dmsnic_priv *priv, struct dmsnic_tx_ring *tx)
{
	struct device *dev = dmsnic_dma_dev(priv);

	dmsnic_tx_drain(priv, tx);
	kvfree(tx->bufs);
	if (tx->desc)
		dma_free_coherent(dev, tx->size * sizeof(*tx->desc), tx->desc,
				  tx->desc_dma);
	if (tx->cmpl)
		dma_free_coherent(dev, tx->size * sizeof(*tx->cmpl), tx->cmpl,
				  tx->cmpl_dma);
	memset(tx, 0, sizeof(*tx));
}

int dmsnic_tx_alloc(struct dmsnic_priv *priv, struct dmsnic_tx_ring *tx,
		    u32 size)
{
	struct device *dev = dmsnic_dma_dev(priv);

	tx->size = size;
	tx->desc = dma_alloc_coherent(dev, size * sizeof(*tx->desc),
				      &tx->desc_dma, GFP_KERNEL);
	tx->cmpl = dma_alloc_coherent(dev, size * sizeof(*tx->cmpl),
				      &tx->cmpl_dma, GFP_KERNEL);
	tx->bufs = kvcalloc(size, sizeof(*tx->bufs), GFP_KERNEL);
	if (tx->desc && tx->cmpl && tx->bufs)
		return 0;
	dmsnic_tx_free_ring(priv, tx);
	return -ENOMEM;
}

/* ---- Interrupt moderation ---- */

static void dmsnic_q_set_rx_moder(struct dmsnic_qp *qp, u32 usecs, u32 frames)
{
	dmsnic_q_wr32(qp, DMS_NIC_Q_RX_ITR_NS, usecs * NSEC_PER_USEC);
	dmsnic_q_wr32(qp, DMS_NIC_Q_RX_ITR_FRAMES, frames);
}

/* Program a running pair's moderation registers from priv->coal. */
void dmsnic_qp_coal_apply(struct dmsnic_qp *qp)
{
	const struct dmsnic_coal *coal = &qp->priv->coal;
	struct dim_cq_moder moder;

	if (coal->adaptive_rx) {
		moder = net_dim_get_rx_moderation(qp->rx_dim.mode,
						  qp->rx_dim.profile_ix);
		dmsnic_q_set_rx_moder(qp, moder.usec, moder.pkts);
	} else {
		dmsnic_q_set_rx_moder(qp, coal->rx_usecs, coal->rx_frames);
	}
	dmsnic_q_wr32(qp, DMS_NIC_Q_TX_ITR_NS, coal->tx_usecs * NSEC_PER_USEC);
	dmsnic_q_wr32(qp, DMS_NIC_Q_TX_ITR_FRAMES, coal->tx_frames);
}

/*
 * net_dim chose a new RX profile for the pair. A run queued before ethtool
 * turned adaptive moderation off leaves the static setting alone (ethtool
 * waits for a run in flight before it writes that setting).
 */
static void dmsnic_rx_dim_work(struct work_struct *work)
{
	struct dim *dim = container_of(work, struct dim, work);
	struct dmsnic_qp *qp = container_of(dim, struct dmsnic_qp, rx_dim);
	struct dim_cq_moder moder;

	if (READ_ONCE(qp->priv->coal.adaptive_rx)) {
		moder = net_dim_get_rx_moderation(dim->mode, dim->profile_ix);
		dmsnic_q_set_rx_moder(qp, moder.usec, moder.pkts);
	}
	dim->state = DIM_START_MEASURE;
}

/*
 * With the pair's NAPI off: no net_dim decision runs or is queued after
 * this. A cancelled run would have restarted the measurement (net_dim
 * waits for that in DIM_APPLY_NEW_PROFILE): do it here, or adaptive-rx
 * would stay stuck on the pair.
 */
void dmsnic_rx_dim_stop(struct dmsnic_qp *qp)
{
	cancel_work_sync(&qp->rx_dim.work);
	qp->rx_dim.state = DIM_START_MEASURE;
}

/* One NAPI run ended: feed net_dim (NAPI is the stats' only writer). */
static void dmsnic_rx_dim_sample(struct dmsnic_qp *qp)
{
	struct dim_sample sample = {};

	dim_update_sample(qp->dim_events++, qp->rx_stats.packets,
			  qp->rx_stats.bytes, &sample);
	net_dim(&qp->rx_dim, &sample);
}

/* ---- NAPI and interrupts ---- */

int dmsnic_poll(struct napi_struct *napi, int budget)
{
	struct dmsnic_qp *qp = container_of(napi, struct dmsnic_qp, napi);
	bool starved = false;
	int work = 0;

	dmsnic_tx_clean(qp, budget);
	if (budget)
		work = dmsnic_rx_clean(qp, budget, &starved);
	/* Frames left on the XSK TX ring: poll again. */
	if (budget && !dmsnic_xsk_xmit(qp, budget))
		work = budget;
	if (work >= budget)
		return budget;

	if (napi_complete_done(napi, work)) {
		if (READ_ONCE(qp->priv->coal.adaptive_rx))
			dmsnic_rx_dim_sample(qp);
		/* An arm with completions still pending fires once the
		 * moderation allows: the device, not a second poll here,
		 * decides how soon NAPI runs again.
		 */
		dmsnic_q_wr32(qp, DMS_NIC_Q_IRQ_ARM, 1);
		if (starved)
			mod_timer(&qp->refill_timer,
				  jiffies + msecs_to_jiffies(DMSNIC_REFILL_RETRY_MS));
	}
	return work;
}

static void dmsnic_refill_timer(struct timer_list *t)
{
	struct dmsnic_qp *qp = timer_container_of(qp, t, refill_timer);

	napi_schedule(&qp->napi);
}

/*
 * Once, at probe: what a queue pair keeps across restarts.
 *
 * The refill timer is pinned to the CPU of the NAPI run that armed it.
 * skbs a socket consumes on another CPU are freed by the CPU that built
 * them (skb_attempt_defer_free()), at its next NET_RX softirq, and until
 * then their payload buffers stay out of the pool. A timer free to expire
 * elsewhere (timer migration runs an idle CPU's timers on a busy one)
 * moves NAPI off that CPU; with the ring empty nothing else raises NET_RX
 * there, so the buffers a devmem consumer gave back never return.
 */
void dmsnic_qp_init(struct dmsnic_qp *qp)
{
	timer_setup(&qp->refill_timer, dmsnic_refill_timer, TIMER_PINNED);
	INIT_WORK(&qp->rx_dim.work, dmsnic_rx_dim_work);
	qp->rx_dim.mode = DIM_CQ_PERIOD_MODE_START_FROM_EQE;
	qp->rx_dim.profile_ix = NET_DIM_DEF_PROFILE_EQE;
	u64_stats_init(&qp->rx_stats.syncp);
	u64_stats_init(&qp->tx_stats.syncp);
	u64_stats_init(&qp->txc_stats.syncp);
	u64_stats_init(&qp->xdp_stats.syncp);
	u64_stats_init(&qp->qp_stats.syncp);
	u64_stats_init(&qp->hw_stats.syncp);
}

irqreturn_t dmsnic_qp_irq(int irq, void *data)
{
	struct dmsnic_qp *qp = data;

	napi_schedule_irqoff(&qp->napi);
	return IRQ_HANDLED;
}

/* Poll once from process context: reaps what is pending and arms the IRQ. */
void dmsnic_napi_kick(struct dmsnic_qp *qp)
{
	local_bh_disable();
	napi_schedule(&qp->napi);
	local_bh_enable();
}
