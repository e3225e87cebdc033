// SPDX-License-Identifier: GPL-2.0
/*
 * dmsnic XDP: native XDP on the RX rings (single- and multi-buffer, with
 * header split the header buffer is the linear part and the payload
 * buffers are frags), XDP_TX and ndo_xdp_xmit on the queue pairs' TX
 * rings (shared with the stack under the TX queue's lock), redirect, and
 * the RX metadata kfuncs.
 *
 * An RX ring built while a program is attached has the XDP layout (every
 * buffer a page, written after XDP_PACKET_HEADROOM, room for the
 * skb_shared_info at its end) and takes all its frames through
 * dmsnic_xdp_rx_one(). Attaching the first program or detaching the last
 * rebuilds every queue pair; replacing one program by another does not.
 * A single-buffer program turns header split off (and needs the MTU to
 * fit one payload buffer): the device then writes every frame whole.
 * AF_XDP zero-copy queues are in dmsnic_xsk.c.
 */
#include <linux/bpf.h>
#include <linux/bpf_trace.h>
#include <linux/filter.h>
#include <net/netdev_lock.h>
#include <net/page_pool/helpers.h>
#include <net/xdp.h>

#include "dmsnic.h"

/* A program is attached that cannot take frames in several buffers. */
bool dmsnic_xdp_sb(const struct dmsnic_priv *priv)
{
	const struct bpf_prog *prog = priv->xdp_prog;

	return prog && !prog->aux->xdp_has_frags;
}

/* Header split as the device runs it: off under a single-buffer program. */
bool dmsnic_hds_on(const struct dmsnic_priv *priv)
{
	return priv->hds && !dmsnic_xdp_sb(priv);
}

/* ---- RX ---- */

/*
 * An RX ring in the XDP layout gets its xdp_rxq_info. Frags may grow into
 * the rest of their page (bpf_xdp_adjust_tail on a multi-buffer frame).
 */
int dmsnic_xdp_rx_reg(struct dmsnic_priv *priv, struct dmsnic_rx_ring *rx,
		      int idx)
{
	int err;

	if (rx->xsk_pool)
		return dmsnic_xsk_rx_reg(priv, rx, idx);
	if (!rx->xdp)
		return 0;
	err = __xdp_rxq_info_reg(&rx->xdp_rxq, priv->netdev, idx, 0,
				 PAGE_SIZE);
	if (err)
		return err;
	err = xdp_rxq_info_reg_mem_model(&rx->xdp_rxq, MEM_TYPE_PAGE_POOL,
					 rx->pay_pp);
	if (err)
		xdp_rxq_info_unreg(&rx->xdp_rxq);
	return err;
}

/* Give every buffer of @xdp back to its page pool. */
static void dmsnic_xdp_put_buff(struct xdp_buff *xdp, bool napi)
{
	netmem_ref netmem;
	u32 i;

	if (xdp_buff_has_frags(xdp)) {
		struct skb_shared_info *sinfo =
			xdp_get_shared_info_from_buff(xdp);

		for (i = 0; i < sinfo->nr_frags; i++) {
			netmem = skb_frag_netmem(&sinfo->frags[i]);
			page_pool_put_full_netmem(netmem_get_pp(netmem), netmem,
						  napi);
		}
	}
	netmem = virt_to_netmem(xdp->data_hard_start);
	page_pool_put_full_netmem(netmem_get_pp(netmem), netmem, napi);
}

/* Drop the frame being assembled, if any. */
void dmsnic_xdp_rx_abort(struct dmsnic_rx_ring *rx)
{
	if (!rx->xdp_building)
		return;
	dmsnic_xdp_put_buff(&rx->xb.ctx.xdp, false);
	rx->xdp_building = false;
}

/* Before the ring's pools are destroyed. */
void dmsnic_xdp_rx_free(struct dmsnic_rx_ring *rx)
{
	dmsnic_xdp_rx_abort(rx);
	if (xdp_rxq_info_is_reg(&rx->xdp_rxq))
		xdp_rxq_info_unreg(&rx->xdp_rxq);
}

static void dmsnic_xdp_begin(struct dmsnic_rx_ring *rx, void *data, u32 len)
{
	struct xdp_buff *xdp = &rx->xb.ctx.xdp;

	xdp_init_buff(xdp, PAGE_SIZE, &rx->xdp_rxq);
	xdp_prepare_buff(xdp, data - rx->buf_off, rx->buf_off, len, true);
	rx->xdp_building = true;
}

/* Add a payload buffer to the frame as a frag; false if it cannot. */
static bool dmsnic_xdp_add_frag(struct dmsnic_rx_ring *rx, netmem_ref netmem,
				u32 len)
{
	if (len) {
		page_pool_dma_sync_netmem_for_cpu(rx->pay_pp, netmem, 0, len);
		if (xdp_buff_add_frag(&rx->xb.ctx.xdp, netmem, rx->buf_off, len,
				      rx->buf_size))
			return true;
	}
	page_pool_put_full_netmem(rx->pay_pp, netmem, true);
	return !len;
}

/*
 * SOP: the linear part is the header buffer, or the first payload buffer
 * of a frame that did not split. The buffers the frame takes are cleared
 * in *have_hb and *netmem; the caller recycles what is left. Their lengths
 * are at most what the device may write after the headroom
 * (DMSNIC_XDP_BUF_LEN, dmsnic_rx_take_bufs() dropped longer ones), so the
 * frame and its frags end before the skb_shared_info of their pages.
 */
static void dmsnic_xdp_start(struct dmsnic_qp *qp, const struct dms_rx_cmpl *c,
			     u16 flags, const struct dmsnic_hbuf *hb,
			     bool *have_hb, netmem_ref *netmem)
{
	struct dmsnic_rx_ring *rx = &qp->rx;
	u32 pay_len = le32_to_cpu(c->pay_len);
	u32 hdr_len = le16_to_cpu(c->hdr_len);

	if (rx->in_frame) {
		/* The previous frame never saw its EOP. */
		dmsnic_xdp_rx_abort(rx);
		dmsnic_rx_count_drop(qp);
	}
	rx->in_frame = true;
	rx->xb.sop = *c;
	rx->xb.ctx.sop = &rx->xb.sop;
	if (flags & DMS_RX_F_ERR)
		return;
	if (*have_hb && hdr_len >= ETH_HLEN) {
		page_pool_dma_sync_for_cpu(rx->hdr_pp, hb->page, hb->offset,
					   hdr_len);
		dmsnic_xdp_begin(rx, page_address(hb->page) + hb->offset,
				 hdr_len);
		*have_hb = false;
		if (*netmem && !dmsnic_xdp_add_frag(rx, *netmem, pay_len))
			dmsnic_xdp_rx_abort(rx);
		*netmem = 0;
	} else if (*netmem && !(flags & DMS_RX_F_HDR) && pay_len >= ETH_HLEN) {
		page_pool_dma_sync_netmem_for_cpu(rx->pay_pp, *netmem, 0,
						  pay_len);
		dmsnic_xdp_begin(rx, netmem_address(*netmem) + rx->buf_off,
				 pay_len);
		*netmem = 0;
	}
}

void dmsnic_xdp_count(struct dmsnic_qp *qp, u64 *counter)
{
	u64_stats_update_begin(&qp->xdp_stats.syncp);
	(*counter)++;
	u64_stats_update_end(&qp->xdp_stats.syncp);
}

/*
 * XDP is the first layer of the stack: every frame it sees counts as
 * received (netdev qstats' rx-packets), whatever the verdict.
 */
void dmsnic_xdp_count_rx(struct dmsnic_qp *qp, u32 len, u16 flags)
{
	struct dmsnic_rx_stats *st = &qp->rx_stats;

	u64_stats_update_begin(&st->syncp);
	st->packets++;
	st->bytes += len;
	if (flags & DMS_RX_F_SPLIT)
		st->split++;
	if (flags & DMS_RX_F_CSUM_BAD)
		st->csum_bad++;
	u64_stats_update_end(&st->syncp);
}

static void dmsnic_xdp_pass(struct dmsnic_qp *qp, struct xdp_buff *xdp)
{
	const struct dms_rx_cmpl *sop = &qp->rx.xb.sop;
	struct sk_buff *skb;

	skb = xdp_build_skb_from_buff(xdp);
	if (!skb) {
		dmsnic_xdp_put_buff(xdp, true);
		dmsnic_rx_count_drop(qp);
		return;
	}
	dmsnic_rx_meta(qp, skb, sop, le16_to_cpu(sop->flags));
	napi_gro_receive(&qp->napi, skb);
}

/*
 * Count PROG's verdict ACT on XDP and carry it out; OPS does what depends
 * on the buffer's kind (a page-pool frame here, an XSK frame in
 * dmsnic_xsk.c). ops->tx frees the buffer itself when it fails.
 */
void dmsnic_xdp_act(struct dmsnic_qp *qp, struct bpf_prog *prog,
		    struct xdp_buff *xdp, u32 act,
		    const struct dmsnic_xdp_buf_ops *ops)
{
	struct net_device *netdev = qp->priv->netdev;
	struct dmsnic_xdp_stats *st = &qp->xdp_stats;

	switch (act) {
	case XDP_PASS:
		dmsnic_xdp_count(qp, &st->pass);
		ops->pass(qp, xdp);
		return;
	case XDP_TX:
		if (ops->tx(qp, xdp)) {
			dmsnic_xdp_count(qp, &st->tx);
			return;
		}
		trace_xdp_exception(netdev, prog, act);
		dmsnic_xdp_count(qp, &st->tx_errors);
		return;
	case XDP_REDIRECT:
		if (!xdp_do_redirect(netdev, xdp, prog)) {
			qp->xdp_redirected = true;
			dmsnic_xdp_count(qp, &st->redirect);
			return;
		}
		trace_xdp_exception(netdev, prog, act);
		dmsnic_xdp_count(qp, &st->redirect_errors);
		ops->free(xdp);
		return;
	default:
		bpf_warn_invalid_xdp_action(netdev, prog, act);
		fallthrough;
	case XDP_ABORTED:
		trace_xdp_exception(netdev, prog, act);
		dmsnic_xdp_count(qp, &st->aborted);
		fallthrough;
	case XDP_DROP:
		dmsnic_xdp_count(qp, &st->drop);
		ops->free(xdp);
	}
}

static bool dmsnic_xdp_tx(struct dmsnic_qp *qp, struct xdp_buff *xdp);

static void dmsnic_xdp_free(struct xdp_buff *xdp)
{
	dmsnic_xdp_put_buff(xdp, true);
}

static const struct dmsnic_xdp_buf_ops dmsnic_xdp_page_ops = {
	.pass = dmsnic_xdp_pass,
	.tx = dmsnic_xdp_tx,
	.free = dmsnic_xdp_free,
};

/* Run the program on the frame assembled from SOP to EOP. */
static void dmsnic_xdp_run(struct dmsnic_qp *qp)
{
	struct bpf_prog *prog = READ_ONCE(qp->priv->xdp_prog);
	struct xdp_buff *xdp = &qp->rx.xb.ctx.xdp;
	u32 act = XDP_PASS;

	dmsnic_xdp_count_rx(qp, xdp_get_buff_len(xdp),
			    le16_to_cpu(qp->rx.xb.sop.flags));
	/* A frame in flight when a single-buffer program replaced one
	 * that takes frags; the MTU keeps any other from being split.
	 */
	if (prog && xdp_buff_has_frags(xdp) && !prog->aux->xdp_has_frags)
		act = XDP_DROP;
	else if (prog)
		act = bpf_prog_run_xdp(prog, xdp);
	dmsnic_xdp_act(qp, prog, xdp, act, &dmsnic_xdp_page_ops);
}

/* dmsnic_rx_one() for a ring in the XDP layout. */
int dmsnic_xdp_rx_one(struct dmsnic_qp *qp, const struct dms_rx_cmpl *c)
{
	struct dmsnic_rx_ring *rx = &qp->rx;
	u16 flags = le16_to_cpu(c->flags);
	struct dmsnic_hbuf hb = {};
	netmem_ref netmem;
	bool have_hb;

	dmsnic_rx_take_bufs(qp, c, flags, &hb, &have_hb, &netmem, NULL);
	if (flags & DMS_RX_F_SOP) {
		dmsnic_xdp_start(qp, c, flags, &hb, &have_hb, &netmem);
	} else if (netmem && rx->xdp_building) {
		if (!dmsnic_xdp_add_frag(rx, netmem, le32_to_cpu(c->pay_len))) {
			dmsnic_xdp_put_buff(&rx->xb.ctx.xdp, true);
			rx->xdp_building = false;
		}
		netmem = 0;
	}

	/* Buffers of a lost frame, or named where they do not belong. */
	if (have_hb)
		page_pool_put_page(rx->hdr_pp, hb.page, -1, true);
	if (netmem)
		page_pool_put_full_netmem(rx->pay_pp, netmem, true);

	if (!(flags & DMS_RX_F_EOP) || !rx->in_frame)
		return 0;
	rx->in_frame = false;
	if (rx->xdp_building) {
		rx->xdp_building = false;
		dmsnic_xdp_run(qp);
	} else {
		dmsnic_rx_count_drop(qp);
	}
	return 1;
}

/* ---- TX ---- */

/* The pair's TX ring runs and has room (caller holds the queue's lock). */
static bool dmsnic_xdp_txq_ready(const struct dmsnic_qp *qp,
				 struct netdev_queue *txq)
{
	return READ_ONCE(qp->hw_up) && qp->tx.size &&
	       !netif_tx_queue_stopped(txq);
}

/* DMA address of one buffer of a frame to send. */
static int dmsnic_xdp_map(struct device *dev, struct dmsnic_tx_buf *buf,
			  void *data, const skb_frag_t *frag, u32 len,
			  bool pool, dma_addr_t *dma)
{
	dma_unmap_len_set(buf, len, 0);
	if (pool && frag) {
		/* XDP_TX: our own page-pool pages, mapped both ways. */
		*dma = page_pool_get_dma_addr_netmem(skb_frag_netmem(frag)) +
		       skb_frag_off(frag);
		dma_sync_single_for_device(dev, *dma, len, DMA_BIDIRECTIONAL);
		return 0;
	}
	if (pool) {
		*dma = page_pool_get_dma_addr(virt_to_page(data)) +
		       offset_in_page(data);
		dma_sync_single_for_device(dev, *dma, len, DMA_BIDIRECTIONAL);
		return 0;
	}
	*dma = frag ? skb_frag_dma_map(dev, frag) :
		      dma_map_single(dev, data, len, DMA_TO_DEVICE);
	if (dma_mapping_error(dev, *dma))
		return -ENOMEM;
	dma_unmap_addr_set(buf, dma, *dma);
	dma_unmap_len_set(buf, len, len);
	buf->single = !frag;
	return 0;
}

/*
 * Put one frame on @qp's TX ring (caller holds the TX queue's lock): its
 * linear part, then its frags. @pool: the buffers are page-pool pages of
 * this device (XDP_TX); else they are mapped here (ndo_xdp_xmit). Leaves
 * room for one skb of the stack's so XDP cannot starve it.
 */
static int dmsnic_xdp_post(struct dmsnic_qp *qp, struct xdp_frame *xdpf,
			   bool pool)
{
	struct skb_shared_info *sinfo = xdp_get_shared_info_from_frame(xdpf);
	u32 nr = xdp_frame_has_frags(xdpf) ? sinfo->nr_frags : 0;
	struct device *dev = dmsnic_dma_dev(qp->priv);
	struct dmsnic_tx_ring *tx = &qp->tx;
	u32 mask = tx->size - 1, first = tx->tail, i, len;
	struct dmsnic_tx_buf *buf;
	dma_addr_t dma;

	if (nr + 1 > qp->priv->max_tx_frags ||
	    dmsnic_tx_unused(tx) < nr + 1 + DMSNIC_TX_STOP_THRS)
		return -ENOSPC;
	for (i = 0; i <= nr; i++) {
		const skb_frag_t *frag = i ? &sinfo->frags[i - 1] : NULL;

		buf = &tx->bufs[(first + i) & mask];
		len = frag ? skb_frag_size(frag) : xdpf->len;
		if (dmsnic_xdp_map(dev, buf, xdpf->data, frag, len, pool,
				   &dma))
			goto unmap;
		dmsnic_tx_desc(tx, first + i, dma, len,
			       (i ? 0 : DMS_TX_F_SOP) |
			       (i == nr ? DMS_TX_F_EOP : 0));
	}
	buf->xdpf = xdpf;
	buf->segs = 1;
	buf->wire_bytes = xdp_get_frame_len(xdpf);
	/* Pairs with smp_load_acquire() in dmsnic_tx_clean(). */
	smp_store_release(&tx->tail, first + nr + 1);
	return 0;

unmap:
	while (i--)
		dmsnic_tx_unmap(dev, &tx->bufs[(first + i) & mask]);
	return -ENOMEM;
}

/*
 * XDP_TX of @xdpf through the pair's own TX ring; @pool as for
 * dmsnic_xdp_post(). On failure the frame is returned.
 */
bool dmsnic_xdp_tx_frame(struct dmsnic_qp *qp, struct xdp_frame *xdpf,
			 bool pool)
{
	struct netdev_queue *txq = netdev_get_tx_queue(qp->priv->netdev,
						       qp->idx);
	bool ok;

	__netif_tx_lock(txq, smp_processor_id());
	ok = dmsnic_xdp_txq_ready(qp, txq) && !dmsnic_xdp_post(qp, xdpf, pool);
	__netif_tx_unlock(txq);
	if (!ok)
		xdp_return_frame_rx_napi(xdpf);
	qp->xdp_tx_pending |= ok;
	return ok;
}

/* XDP_TX: back out through the pair's own TX ring. */
static bool dmsnic_xdp_tx(struct dmsnic_qp *qp, struct xdp_buff *xdp)
{
	struct xdp_frame *xdpf = xdp_convert_buff_to_frame(xdp);

	if (!xdpf) {
		dmsnic_xdp_put_buff(xdp, true);
		return false;
	}
	return dmsnic_xdp_tx_frame(qp, xdpf, true);
}

/* End of an RX pass: ring the TX doorbell, flush the redirect maps. */
void dmsnic_xdp_flush(struct dmsnic_qp *qp)
{
	struct netdev_queue *txq;

	if (qp->xdp_redirected) {
		xdp_do_flush();
		qp->xdp_redirected = false;
	}
	if (!qp->xdp_tx_pending)
		return;
	txq = netdev_get_tx_queue(qp->priv->netdev, qp->idx);
	__netif_tx_lock(txq, smp_processor_id());
	dmsnic_tx_doorbell(qp);
	txq_trans_cond_update(txq);
	__netif_tx_unlock(txq);
	qp->xdp_tx_pending = false;
}

/* A TX slot's frame is done (sent, failed or dropped). */
void dmsnic_xdp_tx_free(struct dmsnic_tx_buf *buf)
{
	if (!buf->xdpf)
		return;
	xdp_return_frame(buf->xdpf);
	buf->xdpf = NULL;
}

/*
 * ndo_xdp_xmit: frames redirected to this device, on the TX ring of the
 * pair the CPU maps to. Returns how many were queued; the core frees the
 * others.
 */
int dmsnic_xdp_xmit(struct net_device *netdev, int n,
		    struct xdp_frame **frames, u32 flags)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	struct netdev_queue *txq;
	struct dmsnic_qp *qp;
	int cpu, sent = 0;

	if (unlikely(flags & ~XDP_XMIT_FLAGS_MASK))
		return -EINVAL;
	if (!READ_ONCE(priv->datapath_up))
		return -ENETDOWN;
	cpu = smp_processor_id();
	qp = &priv->qps[cpu % READ_ONCE(priv->num_queues)];
	txq = netdev_get_tx_queue(netdev, qp->idx);

	__netif_tx_lock(txq, cpu);
	if (dmsnic_xdp_txq_ready(qp, txq)) {
		while (sent < n && !dmsnic_xdp_post(qp, frames[sent], false))
			sent++;
		if (sent && (flags & XDP_XMIT_FLUSH))
			dmsnic_tx_doorbell(qp);
		txq_trans_cond_update(txq);
	}
	u64_stats_update_begin(&qp->tx_stats.syncp);
	qp->tx_stats.xdp_xmit += sent;
	qp->tx_stats.xdp_xmit_errors += n - sent;
	u64_stats_update_end(&qp->tx_stats.syncp);
	__netif_tx_unlock(txq);
	return sent;
}

/* ---- Attaching programs ---- */

static void dmsnic_xdp_apply_features(struct dmsnic_priv *priv)
{
	/* Hardware GRO off (it would merge frames XDP must see alone). */
	netdev_update_features(priv->netdev);
	/* Header split follows the program's kind. */
	dmsnic_write_rx_ctrl(priv, priv->netdev->features);
}

static int dmsnic_xdp_setup(struct dmsnic_priv *priv, struct bpf_prog *prog,
			    struct netlink_ext_ack *extack)
{
	struct net_device *netdev = priv->netdev;
	struct bpf_prog *old = priv->xdp_prog;
	int err = 0;

	if (prog && !prog->aux->xdp_has_frags &&
	    netdev->mtu > DMSNIC_XDP_SB_MTU_MAX) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "MTU %u over %lu: too big for single-buffer XDP",
				       netdev->mtu, DMSNIC_XDP_SB_MTU_MAX);
		return -EOPNOTSUPP;
	}
	WRITE_ONCE(priv->xdp_prog, prog);
	dmsnic_xdp_apply_features(priv);
	/* The first program or the last one away: the RX buffers change. */
	if (!old != !prog && netif_running(netdev))
		err = dmsnic_reconfigure(priv, priv->num_queues,
					 priv->rx_ring_size,
					 priv->tx_ring_size);
	if (err) {
		WRITE_ONCE(priv->xdp_prog, old);
		dmsnic_xdp_apply_features(priv);
		NL_SET_ERR_MSG_MOD(extack, "cannot rebuild the queues for XDP");
		return err;
	}
	if (old)
		bpf_prog_put(old);
	return 0;
}

int dmsnic_bpf(struct net_device *netdev, struct netdev_bpf *bpf)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	switch (bpf->command) {
	case XDP_SETUP_PROG:
		return dmsnic_xdp_setup(priv, bpf->prog, bpf->extack);
	case XDP_SETUP_XSK_POOL:
		return dmsnic_xsk_pool_setup(priv, bpf->xsk.pool,
					     bpf->xsk.queue_id);
	default:
		return -EOPNOTSUPP;
	}
}

/* ---- RX metadata kfuncs ---- */

static int dmsnic_xdp_rx_hash(const struct xdp_md *ctx, u32 *hash,
			      enum xdp_rss_hash_type *rss_type)
{
	const struct dms_rx_cmpl *sop = ((const struct dmsnic_xdp_ctx *)ctx)->sop;
	u16 info = le16_to_cpu(sop->info);
	bool v6 = (info & DMS_RX_L3_MASK) == DMS_RX_L3_IPV6;

	if (!(le16_to_cpu(sop->flags) & DMS_RX_F_RSS))
		return -ENODATA;
	*hash = le32_to_cpu(sop->rss_hash);
	switch (info & DMS_RX_L4_MASK) {
	case DMS_RX_L4_TCP:
		*rss_type = v6 ? XDP_RSS_TYPE_L4_IPV6_TCP :
				 XDP_RSS_TYPE_L4_IPV4_TCP;
		break;
	case DMS_RX_L4_UDP:
		*rss_type = v6 ? XDP_RSS_TYPE_L4_IPV6_UDP :
				 XDP_RSS_TYPE_L4_IPV4_UDP;
		break;
	default:
		*rss_type = (info & DMS_RX_L3_MASK) == DMS_RX_L3_NONE ?
			    XDP_RSS_TYPE_NONE :
			    v6 ? XDP_RSS_TYPE_L3_IPV6 : XDP_RSS_TYPE_L3_IPV4;
	}
	return 0;
}

static const struct xdp_metadata_ops dmsnic_xdp_metadata_ops = {
	.xmo_rx_hash	= dmsnic_xdp_rx_hash,
};

void dmsnic_xdp_init_netdev(struct net_device *netdev)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	netdev->xdp_features = NETDEV_XDP_ACT_BASIC | NETDEV_XDP_ACT_REDIRECT |
			       NETDEV_XDP_ACT_RX_SG | NETDEV_XDP_ACT_NDO_XMIT |
			       NETDEV_XDP_ACT_NDO_XMIT_SG;
	/* Zero-copy needs queues that take every frame in one buffer. */
	if (priv->caps & DMS_NIC_CAP_RXQ_WHOLE)
		netdev->xdp_features |= NETDEV_XDP_ACT_XSK_ZEROCOPY;
	netdev->xdp_metadata_ops = &dmsnic_xdp_metadata_ops;
}
