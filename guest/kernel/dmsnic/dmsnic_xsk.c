// SPDX-License-Identifier: GPL-2.0
/*
 * dmsnic AF_XDP zero-copy.
 *
 * Binding an XSK pool to queue pair q (XDP_SETUP_XSK_POOL) maps the pool
 * for the device and rebuilds the pair: its payload buffers are then the
 * pool's frames, and the queue runs WHOLE (NIC v1.8), so that the device
 * writes every frame into one payload buffer, never splitting headers
 * off. Frames run the attached XDP program (XDP_PASS without one): a
 * redirect to the socket hands the frame over as it is, XDP_PASS and
 * XDP_TX copy it out and give the frame back to the pool. A frame longer
 * than one XSK frame (the MTU keeps them from arriving) is dropped.
 *
 * The pair's TX ring sends for the socket too: NAPI takes descriptors
 * from the XSK TX ring under the TX queue's lock (the stack and XDP_TX
 * share the ring) and returns them with xsk_tx_completed() as the device
 * completes them, or when the ring is drained.
 *
 * Without XDP_USE_NEED_WAKEUP the refill timer polls a queue whose fill
 * ring ran dry; with it, the socket's sendto()/poll() wakes NAPI
 * (ndo_xsk_wakeup).
 *
 * The pool takes no lock: only one context may take frames from it or
 * give them back at a time. That is the NAPI of the ring that runs on it,
 * or process context while that NAPI is off. So a ring holds frames only
 * while it runs: they are posted when it starts and go back to the pool
 * when it stops (dmsnic_rx_hw_stop()), both with NAPI off, and building
 * or freeing a ring never touches the pool. A reconfiguration, a queue
 * restart or a pool change thus builds the new ring while the old one
 * runs, and swaps them inside one NAPI-off window.
 */
#include <linux/bpf_trace.h>
#include <linux/filter.h>
#include <net/xdp_sock_drv.h>

#include "dmsnic.h"

/* The frame size a pool gives the device (its headroom comes first). */
static u32 dmsnic_xsk_frame_len(struct xsk_buff_pool *pool)
{
	return xsk_pool_get_rx_frame_size(pool);
}

/* Frames of @mtu fit the XSK frames of the pairs' pools; 0 if they do. */
int dmsnic_xsk_mtu_check(struct dmsnic_priv *priv, int mtu)
{
	u32 q;

	for (q = 0; q < priv->max_queues; q++) {
		struct xsk_buff_pool *pool = priv->qps[q].xsk_pool;

		if (pool && mtu + VLAN_ETH_HLEN > dmsnic_xsk_frame_len(pool)) {
			netdev_err(priv->netdev, "MTU %d does not fit the %u-byte frames of the AF_XDP zero-copy socket on queue %u\n",
				   mtu, dmsnic_xsk_frame_len(pool), q);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- RX ---- */

/* A zero-copy ring's payload buffers: one XSK frame each. */
void dmsnic_xsk_rx_layout(struct dmsnic_rx_ring *rx)
{
	rx->buf_size = dmsnic_xsk_frame_len(rx->xsk_pool);
	rx->buf_off = 0;
	rx->pbuf_len = rx->buf_size;
	/* Header buffers as without XDP; a WHOLE queue leaves them unused. */
	rx->hbuf_alloc = DMSNIC_HDR_BUF_SIZE;
	rx->hbuf_len = DMSNIC_HDR_BUF_SIZE;
}

int dmsnic_xsk_rx_reg(struct dmsnic_priv *priv, struct dmsnic_rx_ring *rx,
		      int idx)
{
	int err;

	err = __xdp_rxq_info_reg(&rx->xdp_rxq, priv->netdev, idx, 0,
				 xsk_pool_get_rx_frag_step(rx->xsk_pool));
	if (err)
		return err;
	err = xdp_rxq_info_reg_mem_model(&rx->xdp_rxq, MEM_TYPE_XSK_BUFF_POOL,
					 NULL);
	if (err)
		xdp_rxq_info_unreg(&rx->xdp_rxq);
	return err;
}

/*
 * Post frames from the fill ring up to a full payload ring; false if the
 * fill ring ran dry (the socket is then asked to wake us when it refills,
 * if it takes wakeups).
 */
bool dmsnic_xsk_rx_post(struct dmsnic_rx_ring *rx)
{
	struct xsk_buff_pool *pool = rx->xsk_pool;
	u32 mask = rx->size - 1;
	bool ok = true;

	while (rx->pbuf_posted < rx->size - 1) {
		u32 slot = rx->pbuf_tail & mask;
		struct dms_rx_buf *d = &rx->pbuf_ring[slot];
		struct xdp_buff *xdp;

		if (rx->xsk_bufs[slot])
			break;
		xdp = xsk_buff_alloc(pool);
		if (!xdp) {
			ok = false;
			break;
		}
		rx->xsk_bufs[slot] = xdp;
		d->addr = cpu_to_le64(xsk_buff_xdp_get_dma(xdp));
		d->id = cpu_to_le16(slot);
		rx->pbuf_tail++;
		rx->pbuf_posted++;
	}
	if (xsk_uses_need_wakeup(pool)) {
		if (ok)
			xsk_clear_rx_need_wakeup(pool);
		else
			xsk_set_rx_need_wakeup(pool);
	}
	return ok;
}

/*
 * The device stopped writing to the ring and its NAPI is off: the posted
 * frames go back to the pool (see the top of this file).
 */
void dmsnic_xsk_rx_release(struct dmsnic_rx_ring *rx)
{
	u32 i;

	for (i = 0; rx->xsk_bufs && i < rx->size; i++) {
		if (rx->xsk_bufs[i]) {
			xsk_buff_free(rx->xsk_bufs[i]);
			rx->xsk_bufs[i] = NULL;
		}
	}
	rx->pbuf_tail = 0;
	rx->pbuf_posted = 0;
}

/*
 * The ring is about to start, NAPI still off (it is the queue pair's now,
 * no longer the copy it was built in): the pool's frames name its
 * xdp_rxq_info, and the ring, empty since it stopped or was built, gets
 * frames from slot 0 (the socket may not have filled its fill ring yet).
 */
void dmsnic_xsk_rx_rewind(struct dmsnic_rx_ring *rx)
{
	xsk_pool_set_rxq_info(rx->xsk_pool, &rx->xdp_rxq);
	dmsnic_xsk_rx_post(rx);
}

/* The ring holds no frame: it never ran, or stopped. */
void dmsnic_xsk_rx_free(struct dmsnic_rx_ring *rx)
{
	kvfree(rx->xsk_bufs);
	rx->xsk_bufs = NULL;
}

/*
 * An skb holding a copy of the frame (and of its XDP metadata); the XSK
 * frame goes back to the pool. Not xdp_build_skb_from_zc(): it lays the
 * copy out in a buffer of the XSK frame's size with the XDP headroom
 * before it and skb_shared_info after it, which leaves a 2 KiB chunk
 * 1472 bytes; the 1514-byte frames of MTU 1500 that the device puts in
 * the chunk's 1792 were copied over the new skb's shared info (a KASAN
 * use-after-free in skb_copy_ubufs(), then a general protection fault,
 * on the debug kernel).
 */
static struct sk_buff *dmsnic_xsk_build_skb(struct dmsnic_qp *qp,
					    struct xdp_buff *xdp)
{
	u32 metalen = xdp->data - xdp->data_meta;
	u32 len = xdp->data_end - xdp->data_meta;
	struct sk_buff *skb;

	skb = napi_alloc_skb(&qp->napi, len);
	if (!skb)
		return NULL;
	skb_put_data(skb, xdp->data_meta, len);
	if (metalen) {
		skb_metadata_set(skb, metalen);
		__skb_pull(skb, metalen);
	}
	skb_record_rx_queue(skb, qp->idx);
	skb->protocol = eth_type_trans(skb, qp->priv->netdev);
	xsk_buff_free(xdp);
	return skb;
}

static void dmsnic_xsk_pass(struct dmsnic_qp *qp, struct xdp_buff *xdp)
{
	const struct dms_rx_cmpl *c = ((struct dmsnic_xdp_ctx *)xdp)->sop;
	struct sk_buff *skb = dmsnic_xsk_build_skb(qp, xdp);

	if (!skb) {
		xsk_buff_free(xdp);
		dmsnic_rx_count_drop(qp);
		return;
	}
	dmsnic_rx_meta(qp, skb, c, le16_to_cpu(c->flags));
	napi_gro_receive(&qp->napi, skb);
}

/* XDP_TX: a copy of the frame goes out, the XSK frame back to the pool. */
static bool dmsnic_xsk_tx(struct dmsnic_qp *qp, struct xdp_buff *xdp)
{
	struct xdp_frame *xdpf = xdp_convert_buff_to_frame(xdp);

	if (!xdpf) {
		xsk_buff_free(xdp);
		return false;
	}
	return dmsnic_xdp_tx_frame(qp, xdpf, false);
}

static const struct dmsnic_xdp_buf_ops dmsnic_xsk_buf_ops = {
	.pass = dmsnic_xsk_pass,
	.tx = dmsnic_xsk_tx,
	.free = xsk_buff_free,
};

/* Run the program on a frame in one XSK frame and act on its verdict. */
static void dmsnic_xsk_run(struct dmsnic_qp *qp, struct xdp_buff *xdp,
			   const struct dms_rx_cmpl *c, u32 len)
{
	struct bpf_prog *prog = READ_ONCE(qp->priv->xdp_prog);
	u32 act = XDP_PASS;

	XSK_CHECK_PRIV_TYPE(struct dmsnic_xdp_ctx);
	xsk_buff_set_size(xdp, len);
	xsk_buff_dma_sync_for_cpu(xdp);
	((struct dmsnic_xdp_ctx *)xdp)->sop = c;
	dmsnic_xdp_count_rx(qp, len, le16_to_cpu(c->flags));
	if (prog)
		act = bpf_prog_run_xdp(prog, xdp);
	dmsnic_xdp_act(qp, prog, xdp, act, &dmsnic_xsk_buf_ops);
}

static struct xdp_buff *dmsnic_xsk_take(struct dmsnic_rx_ring *rx, u16 id)
{
	struct xdp_buff *xdp;

	if (id != dmsnic_rx_pbuf_head(rx) || !rx->xsk_bufs[id])
		return NULL;
	xdp = rx->xsk_bufs[id];
	rx->xsk_bufs[id] = NULL;
	rx->pbuf_posted--;
	return xdp;
}

/*
 * dmsnic_rx_one() for a zero-copy ring. A frame is one completion naming
 * one payload buffer; the buffers of a longer frame, of a lost one, and
 * any header buffer (a WHOLE queue gets none) end the frame as a drop.
 */
int dmsnic_xsk_rx_one(struct dmsnic_qp *qp, const struct dms_rx_cmpl *c)
{
	struct dmsnic_rx_ring *rx = &qp->rx;
	u16 flags = le16_to_cpu(c->flags);
	u32 len = le32_to_cpu(c->pay_len);
	struct xdp_buff *xdp = NULL;
	bool whole;

	if (flags & DMS_RX_F_PAY)
		xdp = dmsnic_xsk_take(rx, le16_to_cpu(c->pbuf_id));
	if (unlikely((flags & DMS_RX_F_HDR) || ((flags & DMS_RX_F_PAY) && !xdp) ||
		     len > rx->buf_size)) {
		u64_stats_update_begin(&qp->rx_stats.syncp);
		qp->rx_stats.bad_cmpl++;
		u64_stats_update_end(&qp->rx_stats.syncp);
		net_warn_ratelimited("%s: rxq %u: bad zero-copy completion flags 0x%x hbuf %u pbuf %u len %u\n",
				     netdev_name(qp->priv->netdev), qp->idx,
				     flags, le16_to_cpu(c->hbuf_id),
				     le16_to_cpu(c->pbuf_id), len);
		/* A frame the ring does not hold: the one used is lost. */
		if ((flags & DMS_RX_F_PAY) && !xdp)
			dmsnic_qp_lost(qp);
	}
	if (flags & DMS_RX_F_SOP) {
		if (rx->in_frame)
			dmsnic_rx_count_drop(qp);	/* never saw its EOP */
		rx->in_frame = true;
	}
	whole = (flags & (DMS_RX_F_SOP | DMS_RX_F_EOP | DMS_RX_F_ERR |
			  DMS_RX_F_HDR)) == (DMS_RX_F_SOP | DMS_RX_F_EOP) &&
		xdp && len >= ETH_HLEN && len <= rx->buf_size;
	if (!whole && xdp)
		xsk_buff_free(xdp);
	if (!(flags & DMS_RX_F_EOP) || !rx->in_frame)
		return 0;
	rx->in_frame = false;
	if (whole)
		dmsnic_xsk_run(qp, xdp, c, len);
	else
		dmsnic_rx_count_drop(qp);
	return 1;
}

/* ---- TX ---- */

/*
 * Move up to @budget descriptors from the XSK TX ring to the pair's TX
 * ring (leaving room for one skb of the stack's). Returns false if the
 * socket may have more to send.
 */
bool dmsnic_xsk_xmit(struct dmsnic_qp *qp, u32 budget)
{
	struct xsk_buff_pool *pool = qp->tx.xsk_pool;
	struct dmsnic_tx_ring *tx = &qp->tx;
	struct netdev_queue *txq;
	u32 room, n, i, tail;

	if (!pool)
		return true;
	txq = netdev_get_tx_queue(qp->priv->netdev, qp->idx);
	__netif_tx_lock(txq, smp_processor_id());
	room = dmsnic_tx_unused(tx);
	room = room > DMSNIC_TX_STOP_THRS ? room - DMSNIC_TX_STOP_THRS : 0;
	n = xsk_tx_peek_release_desc_batch(pool, min(budget, room));
	tail = tx->tail;
	for (i = 0; i < n; i++, tail++) {
		const struct xdp_desc *desc = &pool->tx_descs[i];
		struct dmsnic_tx_buf *buf = &tx->bufs[tail & (tx->size - 1)];
		dma_addr_t dma = xsk_buff_raw_get_dma(pool, desc->addr);

		xsk_buff_raw_dma_sync_for_device(pool, dma, desc->len);
		dma_unmap_len_set(buf, len, 0);
		buf->xsk = true;
		buf->segs = 1;
		buf->wire_bytes = desc->len;
		dmsnic_tx_desc(tx, tail, dma, desc->len,
			       DMS_TX_F_SOP | DMS_TX_F_EOP);
	}
	if (n) {
		/* Pairs with smp_load_acquire() in dmsnic_tx_clean(). */
		smp_store_release(&tx->tail, tail);
		dmsnic_tx_doorbell(qp);
		txq_trans_cond_update(txq);
	}
	__netif_tx_unlock(txq);
	if (xsk_uses_need_wakeup(pool))
		xsk_set_tx_need_wakeup(pool);
	return n < budget;
}

/* ---- Binding pools, wakeups ---- */

/* ndo_xsk_wakeup: the socket filled its fill ring or queued frames. */
int dmsnic_xsk_wakeup(struct net_device *netdev, u32 qid, u32 flags)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	struct dmsnic_qp *qp;

	if (!READ_ONCE(priv->datapath_up))
		return -ENETDOWN;
	if (qid >= READ_ONCE(priv->num_queues))
		return -EINVAL;
	qp = &priv->qps[qid];
	if (!READ_ONCE(qp->xsk_pool))
		return -EINVAL;
	if (!READ_ONCE(qp->hw_up))
		return -ENETDOWN;
	local_bh_disable();
	if (!napi_if_scheduled_mark_missed(&qp->napi))
		napi_schedule(&qp->napi);
	local_bh_enable();
	return 0;
}

/* What a pool must be for queue @qid to run zero-copy on it. */
static int dmsnic_xsk_pool_check(struct dmsnic_priv *priv,
				 struct xsk_buff_pool *pool, u16 qid)
{
	struct net_device *netdev = priv->netdev;
	u32 len = dmsnic_xsk_frame_len(pool);

	if (!(priv->caps & DMS_NIC_CAP_RXQ_WHOLE))
		return -EOPNOTSUPP;
	if (qid >= priv->num_queues) {
		netdev_err(netdev, "AF_XDP zero-copy: no queue %u\n", qid);
		return -EINVAL;
	}
	if (priv->qps[qid].xsk_pool)
		return -EBUSY;
	if (netif_rxq_has_unreadable_mp(netdev, qid)) {
		netdev_err(netdev, "AF_XDP zero-copy: queue %u has a memory provider bound\n",
			   qid);
		return -EBUSY;
	}
	if (len < DMS_NIC_PBUF_SIZE_MIN || len > DMS_NIC_PBUF_SIZE_MAX ||
	    netdev->mtu + VLAN_ETH_HLEN > len) {
		netdev_err(netdev, "AF_XDP zero-copy: %u-byte frames cannot hold MTU %u frames (device buffers are %u..%u bytes)\n",
			   len, netdev->mtu, DMS_NIC_PBUF_SIZE_MIN,
			   DMS_NIC_PBUF_SIZE_MAX);
		return -EINVAL;
	}
	return 0;
}

static int dmsnic_xsk_enable(struct dmsnic_priv *priv,
			     struct xsk_buff_pool *pool, u16 qid)
{
	struct dmsnic_qp *qp;
	int err;

	err = dmsnic_xsk_pool_check(priv, pool, qid);
	if (err)
		return err;
	err = xsk_pool_dma_map(pool, dmsnic_dma_dev(priv), 0);
	if (err)
		return err;
	qp = &priv->qps[qid];
	WRITE_ONCE(qp->xsk_pool, pool);
	if (priv->datapath_up) {
		err = dmsnic_qp_rebuild(priv, qp, true);
		if (err) {
			WRITE_ONCE(qp->xsk_pool, NULL);
			xsk_pool_dma_unmap(pool, 0);
		}
	}
	return err;
}

/*
 * The pair goes back to page-pool buffers; the pool is unmapped once no
 * ring holds its frames. This cannot fail: the socket is going away, and
 * the core WARNs at an error. A pair that cannot start on its new rings
 * is left down, without the pool (dmsnic_qp_rebuild() says so and counts
 * it); ifdown/ifup or a channel, TX ring or XDP change starts it again.
 */
static int dmsnic_xsk_disable(struct dmsnic_priv *priv, u16 qid)
{
	struct xsk_buff_pool *pool;
	struct dmsnic_qp *qp;

	if (qid >= priv->max_queues || !priv->qps[qid].xsk_pool)
		return -EINVAL;
	qp = &priv->qps[qid];
	pool = qp->xsk_pool;
	WRITE_ONCE(qp->xsk_pool, NULL);
	if (priv->datapath_up && qid < priv->num_queues)
		dmsnic_qp_rebuild(priv, qp, false);
	xsk_pool_dma_unmap(pool, 0);
	return 0;
}

/* XDP_SETUP_XSK_POOL; called under RTNL and the netdev instance lock. */
int dmsnic_xsk_pool_setup(struct dmsnic_priv *priv,
			  struct xsk_buff_pool *pool, u16 qid)
{
	return pool ? dmsnic_xsk_enable(priv, pool, qid) :
		      dmsnic_xsk_disable(priv, qid);
}
