// SPDX-License-Identifier: GPL-2.0
/*
 * dmsnic queue pairs: programming and starting the hardware queues, bringing
 * pairs up and down, reconfiguring a running device without losing it when
 * the new configuration cannot be built, and the netdev queue management
 * ops that restart one RX queue on its own.
 */
#include <linux/interrupt.h>
#include <linux/rtnetlink.h>
#include <net/netdev_lock.h>
#include <net/netdev_queues.h>
#include <net/page_pool/helpers.h>

#include "dmsnic.h"

/* ---- Hardware queue control ---- */

static void dmsnic_hbufs_reverse(struct dmsnic_hbuf *a, u32 lo, u32 hi)
{
	for (; lo + 1 < hi; lo++, hi--)
		swap(a[lo], a[hi - 1]);
}

static void dmsnic_pbufs_reverse(netmem_ref *a, u32 lo, u32 hi)
{
	for (; lo + 1 < hi; lo++, hi--)
		swap(a[lo], a[hi - 1]);
}

/*
 * The device starts a ring at index 0 when the queue is enabled. A ring
 * that ran before (restarted after a failed reconfiguration) holds its
 * posted buffers wherever its tail had got to: rotate them into age order
 * from slot 0 and close any gap, rewriting their descriptors (a buffer's
 * id is its slot).
 */
static void dmsnic_rx_rewind_hbufs(struct dmsnic_rx_ring *rx)
{
	u32 n = rx->size, r = rx->hbuf_tail & (n - 1), i, w = 0;

	dmsnic_hbufs_reverse(rx->hbufs, 0, r);
	dmsnic_hbufs_reverse(rx->hbufs, r, n);
	dmsnic_hbufs_reverse(rx->hbufs, 0, n);
	for (i = 0; i < n; i++) {
		struct dmsnic_hbuf hb = rx->hbufs[i];

		if (!hb.page)
			continue;
		rx->hbufs[i].page = NULL;
		rx->hbufs[w] = hb;
		rx->hbuf_ring[w].addr =
			cpu_to_le64(page_pool_get_dma_addr(hb.page) + hb.offset);
		rx->hbuf_ring[w].id = cpu_to_le16(w);
		w++;
	}
	rx->hbuf_tail = w;
	rx->hbuf_posted = w;
}

static void dmsnic_rx_rewind_pbufs(struct dmsnic_rx_ring *rx)
{
	u32 n = rx->size, r = rx->pbuf_tail & (n - 1), i, w = 0;

	dmsnic_rx_pack_rewind(rx);
	dmsnic_pbufs_reverse(rx->pbufs, 0, r);
	dmsnic_pbufs_reverse(rx->pbufs, r, n);
	dmsnic_pbufs_reverse(rx->pbufs, 0, n);
	for (i = 0; i < n; i++) {
		netmem_ref netmem = rx->pbufs[i];

		if (!netmem)
			continue;
		rx->pbufs[i] = 0;
		rx->pbufs[w] = netmem;
		/* Untouched: each still holds all it was posted with. */
		if (rx->pack)
			dmsnic_rx_pack_reset_bias(rx, w);
		rx->pbuf_ring[w].addr =
			cpu_to_le64(page_pool_get_dma_addr_netmem(netmem) +
				    rx->buf_off);
		rx->pbuf_ring[w].id = cpu_to_le16(w);
		w++;
	}
	rx->pbuf_tail = w;
	rx->pbuf_posted = w;
}

/*
 * Make a stopped RX ring look new to the device: buffers from slot 0, no
 * completion that could pass for a current one (GEN parity restarts with
 * the index), no frame half assembled.
 */
static void dmsnic_rx_rewind(struct dmsnic_qp *qp)
{
	struct dmsnic_rx_ring *rx = &qp->rx;

	if (rx->in_frame) {
		dev_kfree_skb_any(rx->skb);
		rx->skb = NULL;
		dmsnic_xdp_rx_abort(rx);
		rx->in_frame = false;
		dmsnic_rx_count_drop(qp);
	}
	dmsnic_rx_rewind_hbufs(rx);
	if (rx->xsk_pool)
		dmsnic_xsk_rx_rewind(rx);
	else
		dmsnic_rx_rewind_pbufs(rx);
	memset(rx->cmpl_ring, 0, rx->size * sizeof(*rx->cmpl_ring));
	rx->cmpl_head = 0;
	rx->lost = false;
}

/*
 * Enable a programmed queue (with the mode bits in @flags); the device
 * latches its configuration then and leaves the enable bit clear if it
 * refuses it. The tests make it look as if it had (debugfs
 * dmsnic/fail_queue_enable).
 */
static int dmsnic_q_enable(struct dmsnic_qp *qp, u32 ctrl_reg, u32 flags,
			   const char *dir)
{
	if (!dmsnic_fail_queue_enable()) {
		dmsnic_q_wr32(qp, ctrl_reg, DMS_NIC_Q_ENABLE | flags);
		if (readl(qp->regs + ctrl_reg) & DMS_NIC_Q_ENABLE)
			return 0;
	}
	netdev_err(qp->priv->netdev, "%sq %u: the device refused the queue configuration\n",
		   dir, qp->idx);
	return -EIO;
}

static int dmsnic_rx_hw_start(struct dmsnic_qp *qp)
{
	struct dmsnic_rx_ring *rx = &qp->rx;
	u32 mask = rx->size - 1, flags;
	int err;

	dmsnic_rx_rewind(qp);
	dmsnic_q_wr32(qp, DMS_NIC_RXQ_RING_LOG2, ilog2(rx->size));
	dmsnic_q_wr64(qp, DMS_NIC_RXQ_HBUF_BASE_LO, rx->hbuf_dma);
	dmsnic_q_wr64(qp, DMS_NIC_RXQ_PBUF_BASE_LO, rx->pbuf_dma);
	dmsnic_q_wr64(qp, DMS_NIC_RXQ_CMPL_BASE_LO, rx->cmpl_dma);
	dmsnic_q_wr32(qp, DMS_NIC_RXQ_HBUF_SIZE, rx->hbuf_len);
	dmsnic_q_wr32(qp, DMS_NIC_RXQ_PBUF_SIZE, rx->pbuf_len);
	/* An XSK frame is one buffer: no header split on that queue. */
	flags = rx->xsk_pool ? DMS_NIC_Q_WHOLE : rx->pack ? DMS_NIC_Q_PACK : 0;
	if (qp->priv->rx_drop_en)
		flags |= DMS_NIC_Q_DROP_EN;
	err = dmsnic_q_enable(qp, DMS_NIC_RXQ_CTRL, flags, "rx");
	if (err)
		return err;
	dmsnic_q_wr32(qp, DMS_NIC_RXQ_HBUF_TAIL, rx->hbuf_tail & mask);
	dmsnic_q_wr32(qp, DMS_NIC_RXQ_PBUF_TAIL, rx->pbuf_tail & mask);
	return 0;
}

/*
 * Once the read returns, the device no longer writes to the RX rings. The
 * pair's NAPI is off: a zero-copy ring's frames go back to its XSK pool
 * now, before any other ring can use the pool (dmsnic_xsk.c).
 */
static void dmsnic_rx_hw_stop(struct dmsnic_qp *qp)
{
	dmsnic_q_wr32(qp, DMS_NIC_RXQ_CTRL, 0);
	readl(qp->regs + DMS_NIC_RXQ_CTRL);
	if (qp->rx.xsk_pool)
		dmsnic_xsk_rx_release(&qp->rx);
}

/* The TX ring is new or drained (dmsnic_tx_drain()): all indexes 0. */
static int dmsnic_tx_hw_start(struct dmsnic_qp *qp)
{
	struct dmsnic_tx_ring *tx = &qp->tx;

	dmsnic_q_wr32(qp, DMS_NIC_TXQ_RING_LOG2, ilog2(tx->size));
	dmsnic_q_wr64(qp, DMS_NIC_TXQ_DESC_BASE_LO, tx->desc_dma);
	dmsnic_q_wr64(qp, DMS_NIC_TXQ_CMPL_BASE_LO, tx->cmpl_dma);
	return dmsnic_q_enable(qp, DMS_NIC_TXQ_CTRL, 0, "tx");
}

static void dmsnic_tx_hw_stop(struct dmsnic_qp *qp)
{
	dmsnic_q_wr32(qp, DMS_NIC_TXQ_CTRL, 0);
	readl(qp->regs + DMS_NIC_TXQ_CTRL);
}

/* NAPI of a pair whose rings run: direct recycling into its pools. */
static void dmsnic_napi_on(struct dmsnic_qp *qp)
{
	page_pool_enable_direct_recycling(qp->rx.hdr_pp, &qp->napi);
	page_pool_enable_direct_recycling(qp->rx.pay_pp, &qp->napi);
	napi_enable_locked(&qp->napi);
	qp->napi_on = true;
	dmsnic_napi_kick(qp);
}

/*
 * Quiesce the pair's NAPI (and its refill timer). A pair left stopped by
 * a failed restart has it off already: disabling twice would never end.
 */
static void dmsnic_napi_off(struct dmsnic_qp *qp)
{
	if (!qp->napi_on)
		return;
	napi_disable_locked(&qp->napi);
	timer_delete_sync(&qp->refill_timer);
	qp->napi_on = false;
	page_pool_disable_direct_recycling(qp->rx.hdr_pp);
	page_pool_disable_direct_recycling(qp->rx.pay_pp);
}

/* ---- Bringing queue pairs up and down ---- */

/* A start of the pair's rings failed (the device refused them, no IRQ). */
static void dmsnic_qp_count_start_error(struct dmsnic_qp *qp)
{
	u64_stats_update_begin(&qp->qp_stats.syncp);
	qp->qp_stats.start_errors++;
	u64_stats_update_end(&qp->qp_stats.syncp);
}

/*
 * Stop a TX queue on purpose (its pair is being rebuilt): the TX watchdog
 * counts from now, not from the queue's last frame.
 */
static void dmsnic_txq_stop(struct netdev_queue *txq)
{
	__netif_tx_lock_bh(txq);
	netif_tx_stop_queue(txq);
	txq_trans_cond_update(txq);
	__netif_tx_unlock_bh(txq);
}

/*
 * A pair left down while the interface runs (the device refused its
 * rings): its TX queue is woken, not left stopped, and dmsnic_start_xmit()
 * drops and counts what the stack sends it until every pair restarts. A
 * queue left stopped would keep its qdisc's backlog for good and trip the
 * stack's TX watchdog, which reports a hang that is not one.
 */
static void dmsnic_txq_left_down(struct dmsnic_priv *priv, struct dmsnic_qp *qp)
{
	netif_tx_wake_queue(netdev_get_tx_queue(priv->netdev, qp->idx));
}

/*
 * The rings of one queue pair. A reconfiguration builds all of them before
 * it stops the running pairs, so that failing to get the memory (or a
 * bound dma-buf too small for a larger ring: -ENOBUFS) changes nothing.
 */
struct dmsnic_qp_mem {
	struct dmsnic_rx_ring rx;
	struct dmsnic_tx_ring tx;
};

static void dmsnic_qp_mems_free(struct dmsnic_priv *priv,
				struct dmsnic_qp_mem *mems, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		dmsnic_rx_free_ring(priv, &mems[i].rx);
		dmsnic_tx_free_ring(priv, &mems[i].tx);
	}
	kvfree(mems);
}

static struct dmsnic_qp_mem *dmsnic_qp_mems_alloc(struct dmsnic_priv *priv,
						  u32 n, u32 rx_size,
						  u32 tx_size)
{
	struct netdev_queue_config qcfg;
	struct dmsnic_qp_mem *mems;
	int err = 0;
	u32 i;

	mems = kvcalloc(n, sizeof(*mems), GFP_KERNEL);
	if (!mems)
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < n && !err; i++) {
		netdev_queue_config(priv->netdev, i, &qcfg);
		err = dmsnic_rx_alloc(priv, &mems[i].rx, i, &qcfg, rx_size,
				      true) ?:
		      dmsnic_tx_alloc(priv, &mems[i].tx, tx_size);
	}
	if (!err)
		return mems;
	dmsnic_qp_mems_free(priv, mems, n);
	return ERR_PTR(err);
}

/* Stop the hardware queues of a pair whose NAPI is off; free its IRQ. */
static void dmsnic_qp_hw_down(struct dmsnic_priv *priv, struct dmsnic_qp *qp)
{
	struct net_device *netdev = priv->netdev;

	dmsnic_rx_hw_stop(qp);
	dmsnic_tx_hw_stop(qp);
	qp->hw_up = false;
	/* The core's affinity notifier must be gone before free_irq(). */
	netif_napi_set_irq_locked(&qp->napi, -1);
	free_irq(qp->irq, qp);
	/* NAPI is off: no new net_dim sample comes after this. */
	dmsnic_rx_dim_stop(qp);
	netif_queue_set_napi(netdev, qp->idx, NETDEV_QUEUE_TYPE_RX, NULL);
	netif_queue_set_napi(netdev, qp->idx, NETDEV_QUEUE_TYPE_TX, NULL);
	netif_napi_del_locked(&qp->napi);
}

/*
 * Start pair @qp on the rings in @mem (which it takes). On failure the
 * rings are back in @mem and the pair is down.
 */
static int dmsnic_qp_start(struct dmsnic_priv *priv, struct dmsnic_qp *qp,
			   struct dmsnic_qp_mem *mem)
{
	struct net_device *netdev = priv->netdev;
	int err;

	swap(qp->rx, mem->rx);
	swap(qp->tx, mem->tx);
	/* The TX ring sends for the pool the RX ring was built with. */
	qp->tx.xsk_pool = qp->rx.xsk_pool;
	netif_napi_add_config_locked(netdev, &qp->napi, dmsnic_poll, qp->idx);
	snprintf(qp->irq_name, sizeof(qp->irq_name), "%s-q%u", netdev->name,
		 qp->idx);
	err = request_irq(qp->irq, dmsnic_qp_irq, 0, qp->irq_name, qp);
	if (err) {
		netif_napi_del_locked(&qp->napi);
		goto err_rings;
	}
	netif_napi_set_irq_locked(&qp->napi, qp->irq);
	netif_queue_set_napi(netdev, qp->idx, NETDEV_QUEUE_TYPE_RX, &qp->napi);
	netif_queue_set_napi(netdev, qp->idx, NETDEV_QUEUE_TYPE_TX, &qp->napi);

	err = dmsnic_rx_hw_start(qp) ?: dmsnic_tx_hw_start(qp);
	if (err) {
		dmsnic_qp_hw_down(priv, qp);
		goto err_rings;
	}
	qp->hw_up = true;
	dmsnic_qp_coal_apply(qp);
	dmsnic_napi_on(qp);
	return 0;

err_rings:
	swap(qp->rx, mem->rx);
	swap(qp->tx, mem->tx);
	dmsnic_qp_count_start_error(qp);
	return err;
}

/*
 * Stop a pair whose NAPI is off (its hardware may be down already: a
 * failed fault restart). Its rings go to @mem (the TX ring drained of
 * frames in flight), or are freed if @mem is NULL. Nothing waits for the
 * device: a disabled ring completes nothing more. Returns the number of
 * TX frames dropped.
 */
static u32 dmsnic_qp_stop(struct dmsnic_priv *priv, struct dmsnic_qp *qp,
			  struct dmsnic_qp_mem *mem)
{
	u32 dropped;

	if (qp->hw_up)
		dmsnic_qp_hw_down(priv, qp);
	dropped = dmsnic_tx_drain(priv, &qp->tx);
	netdev_tx_reset_queue(netdev_get_tx_queue(priv->netdev, qp->idx));
	if (mem) {
		swap(qp->rx, mem->rx);
		swap(qp->tx, mem->tx);
	}
	dmsnic_rx_free_ring(priv, &qp->rx);
	dmsnic_tx_free_ring(priv, &qp->tx);
	return dropped;
}

/*
 * Whether the RX queues of @n running pairs drop a frame they have no
 * buffers for (NIC v1.10 DROP_EN). The device takes frames in wire order
 * for all queues: one that waits for buffers holds every other queue's
 * frames behind it, so a devmem or AF_XDP consumer that stops giving
 * buffers back would stop the whole port. This is ixgbe's policy
 * (ixgbe_set_rx_drop_en()): drop with more than one queue, unless the
 * MAC sends PAUSE, which needs the frame held so that the link partner
 * waits instead. With one queue nothing is blocked but that queue, and
 * the device's FIFO rides out a refill that comes late.
 */
static bool dmsnic_want_rx_drop(struct dmsnic_priv *priv, u32 n)
{
	return (priv->caps & DMS_NIC_CAP_RXQ_DROP) && n > 1 &&
	       !dmsnic_mac_sends_pause(priv);
}

/*
 * Start pairs 0..n-1 on @mems; on failure all of them are down again.
 * The caller opens the datapath once the stack's queue count is right.
 */
static int dmsnic_qps_start(struct dmsnic_priv *priv,
			    struct dmsnic_qp_mem *mems, u32 n)
{
	u32 i;
	int err;

	priv->rx_drop_en = dmsnic_want_rx_drop(priv, n);
	for (i = 0; i < n; i++) {
		err = dmsnic_qp_start(priv, &priv->qps[i], &mems[i]);
		if (err)
			goto err_stop;
	}
	return 0;

err_stop:
	while (i--) {
		dmsnic_napi_off(&priv->qps[i]);
		dmsnic_qp_stop(priv, &priv->qps[i], &mems[i]);
	}
	return err;
}

static void dmsnic_datapath_open(struct dmsnic_priv *priv)
{
	/*
	 * Wake, not start: after a reconfiguration the qdisc may hold a
	 * backlog for a queue that was stopped, and only a wake reschedules
	 * it (ring_reconfig.py reconfig_tx_stall).
	 */
	netif_tx_wake_all_queues(priv->netdev);
	priv->datapath_up = true;
}

/* Stop every running pair; their rings go to @mems (or are freed). */
static void dmsnic_qps_stop(struct dmsnic_priv *priv,
			    struct dmsnic_qp_mem *mems)
{
	struct net_device *netdev = priv->netdev;
	u32 i;

	if (!priv->datapath_up)
		return;
	/* NAPI first: a poll reaping TX completions may wake a queue. */
	for (i = 0; i < priv->num_queues; i++)
		dmsnic_napi_off(&priv->qps[i]);
	netif_tx_disable(netdev);
	/* As dmsnic_txq_stop(): the watchdog counts from the stop. */
	for (i = 0; i < netdev->num_tx_queues; i++)
		txq_trans_cond_update(netdev_get_tx_queue(netdev, i));
	for (i = 0; i < priv->num_queues; i++)
		dmsnic_qp_stop(priv, &priv->qps[i], mems ? &mems[i] : NULL);
	priv->datapath_up = false;
}

/* Called under the netdev instance lock (ndo_open, ethtool). */
int dmsnic_up(struct dmsnic_priv *priv)
{
	struct dmsnic_qp_mem *mems;
	int err;

	mems = dmsnic_qp_mems_alloc(priv, priv->num_queues, priv->rx_ring_size,
				    priv->tx_ring_size);
	if (IS_ERR(mems))
		return PTR_ERR(mems);
	err = dmsnic_qps_start(priv, mems, priv->num_queues);
	if (!err)
		dmsnic_datapath_open(priv);
	dmsnic_qp_mems_free(priv, mems, priv->num_queues);
	return err;
}

void dmsnic_down(struct dmsnic_priv *priv)
{
	dmsnic_qps_stop(priv, NULL);
}

/*
 * Transmit packet steering: each online CPU sends on one TX queue, the
 * i-th on queue i mod n (so with at least as many queues as CPUs, one CPU
 * a queue, as Documentation/networking/scaling.rst advises). Frames one
 * CPU sends thus leave in the order it sent them, whatever their flows,
 * as on NICs whose drivers set XPS maps (mlx5, ice, virtio-net). Without
 * maps the stack spreads a CPU's flows over every queue by hash, and a
 * queue that stops for a moment lets the others' frames overtake it.
 * Set at probe and after each channel change (as mlx5 does); the user
 * may change it in sysfs.
 */
void dmsnic_set_xps(struct dmsnic_priv *priv)
{
	u32 n = priv->num_queues, q, i;
	cpumask_var_t mask;
	unsigned int cpu;
	int err = 0;

	if (!zalloc_cpumask_var(&mask, GFP_KERNEL))
		return;
	for (q = 0; q < n && !err; q++) {
		cpumask_clear(mask);
		i = 0;
		for_each_online_cpu(cpu)
			if (i++ % n == q)
				cpumask_set_cpu(cpu, mask);
		err = netif_set_xps_queue(priv->netdev, mask, q);
	}
	free_cpumask_var(mask);
	if (err)
		netdev_warn(priv->netdev, "cannot set XPS maps: %d\n", err);
}

/*
 * Switch a running device to @n queue pairs with rings of @rx_size and
 * @tx_size entries. The new rings exist before the old pairs stop; if the
 * new pairs cannot start, the old ones start again on their old rings.
 * If the device refuses those too, the datapath stays down, without
 * carrier, until the next ifup or reconfiguration. Called under RTNL and
 * the netdev instance lock.
 */
int dmsnic_reconfigure(struct dmsnic_priv *priv, u32 n, u32 rx_size,
		       u32 tx_size)
{
	struct net_device *netdev = priv->netdev;
	bool was_up = priv->datapath_up, running = false;
	u32 old_n = priv->num_queues, count = old_n;
	u32 most = max(n, old_n);
	struct dmsnic_qp_mem *new, *old;
	int err;

	new = dmsnic_qp_mems_alloc(priv, n, rx_size, tx_size);
	if (IS_ERR(new))
		return PTR_ERR(new);
	old = kvcalloc(old_n, sizeof(*old), GFP_KERNEL);
	if (!old) {
		dmsnic_qp_mems_free(priv, new, n);
		return -ENOMEM;
	}

	dmsnic_qps_stop(priv, old);
	/*
	 * The stack's queue count covers both sets of pairs while either may
	 * start, and comes down to the set that runs (or to the old count)
	 * after: growing it can fail (each queue has sysfs objects), lowering
	 * it cannot, so no way back depends on a change that may fail.
	 */
	err = netif_set_real_num_queues(netdev, most, most);
	if (!err)
		err = dmsnic_qps_start(priv, new, n);
	if (!err) {
		count = n;
		running = true;
		priv->rx_ring_size = rx_size;
		priv->tx_ring_size = tx_size;
	} else if (was_up) {
		running = !dmsnic_qps_start(priv, old, old_n);
		if (!running)
			netdev_err(netdev, "datapath down after a failed reconfiguration\n");
	}
	WARN_ON_ONCE(netif_set_real_num_queues(netdev, count, count));
	priv->num_queues = count;
	if (running)
		dmsnic_datapath_open(priv);
	dmsnic_update_link(priv);
	dmsnic_qp_mems_free(priv, old, old_n);
	dmsnic_qp_mems_free(priv, new, n);
	return err;
}

static int dmsnic_qp_mem_alloc(struct dmsnic_priv *priv, struct dmsnic_qp *qp,
			       struct dmsnic_qp_mem *mem)
{
	struct netdev_queue_config qcfg;

	netdev_queue_config(priv->netdev, qp->idx, &qcfg);
	return dmsnic_rx_alloc(priv, &mem->rx, qp->idx, &qcfg,
			       priv->rx_ring_size, true) ?:
	       dmsnic_tx_alloc(priv, &mem->tx, priv->tx_ring_size);
}

/*
 * Rebuild pair @qp's rings from the current configuration (an XSK pool
 * bound or unbound). The new rings are built while the pair runs; it then
 * stops and starts on them. With @restore, a pair whose new rings cannot
 * be built keeps running as it was, and one whose new rings do not start
 * restarts on its old ones. Without, the pair stops whatever happens and
 * its old rings are freed (they belong to a pool that is going away, and
 * no ring may hold it after this call); a failure leaves the pair down.
 * TX frames in flight are dropped (an XSK socket gets its frames back).
 * Called under RTNL and the netdev instance lock.
 */
int dmsnic_qp_rebuild(struct dmsnic_priv *priv, struct dmsnic_qp *qp,
		      bool restore)
{
	struct netdev_queue *txq = netdev_get_tx_queue(priv->netdev, qp->idx);
	struct dmsnic_qp_mem *mem;
	int err;

	/* The rings of a pair that is down cannot be started again. */
	restore = restore && qp->hw_up;
	mem = kvcalloc(2, sizeof(*mem), GFP_KERNEL);
	err = mem ? dmsnic_qp_mem_alloc(priv, qp, &mem[0]) : -ENOMEM;
	if (err && restore)
		goto out;
	dmsnic_napi_off(qp);
	dmsnic_txq_stop(txq);
	dmsnic_qp_stop(priv, qp, restore ? &mem[1] : NULL);
	if (!err)
		err = dmsnic_qp_start(priv, qp, &mem[0]);
	if (!err || (restore && !dmsnic_qp_start(priv, qp, &mem[1]))) {
		netif_tx_wake_queue(txq);
	} else {
		netdev_err(priv->netdev, "queue pair %u stays down: %d\n",
			   qp->idx, err);
		dmsnic_txq_left_down(priv, qp);
	}
out:
	if (mem)
		dmsnic_qp_mems_free(priv, mem, 2);
	return err;
}

/* ---- Ring DMA faults ---- */

/* The device stopped one of the pair's rings on a DMA fault. */
bool dmsnic_qp_faulted(struct dmsnic_qp *qp)
{
	return (readl(qp->regs + DMS_NIC_RXQ_CTRL) |
		readl(qp->regs + DMS_NIC_TXQ_CTRL)) & DMS_NIC_Q_FAULT;
}

/*
 * A completion of the pair's RX ring named a buffer the ring does not
 * hold (an id beyond the ring, one already returned), or a packed piece
 * its buffer's offsets cannot hold: the device lies, and the ring no
 * longer knows which buffers it has. The buffer it really used is never
 * returned (refilling stops at its slot) or may still be written. From
 * NAPI: the ring drops everything until dmsnic_fault_work() restarts the
 * pair as after a ring DMA fault, which takes every buffer back from the
 * stopped device.
 */
void dmsnic_qp_lost(struct dmsnic_qp *qp)
{
	struct dmsnic_priv *priv = qp->priv;

	qp->rx.lost = true;
	set_bit(qp->idx, priv->lost);
	set_bit(qp->idx, priv->faulted);
	schedule_work(&priv->fault_work);
}

/*
 * Restart a running pair on its own rings after the device stopped one of
 * them, or after its RX ring lost track of its buffers (@why). The device
 * wrote no completion for the faulted work and drops what the other ring
 * had in flight when it is disabled, so nothing is waited for: the posted
 * RX buffers are posted again from slot 0 and the TX frames in flight are
 * dropped (counted as TX errors; TCP resends them).
 */
static void dmsnic_qp_restart(struct dmsnic_priv *priv, struct dmsnic_qp *qp,
			      const char *why)
{
	struct netdev_queue *txq = netdev_get_tx_queue(priv->netdev, qp->idx);
	struct dmsnic_qp_mem mem = {};
	u32 dropped;
	int err;

	dmsnic_napi_off(qp);
	dmsnic_txq_stop(txq);
	dropped = dmsnic_qp_stop(priv, qp, &mem);
	err = dmsnic_qp_start(priv, qp, &mem);
	if (err) {
		/* The pair keeps its rings, hardware down, until ifdown. */
		swap(qp->rx, mem.rx);
		swap(qp->tx, mem.tx);
		netdev_err(priv->netdev, "queue pair %u stays down after %s: %d\n",
			   qp->idx, why, err);
		dmsnic_txq_left_down(priv, qp);
	}
	u64_stats_update_begin(&qp->txc_stats.syncp);
	qp->txc_stats.errors += dropped;
	u64_stats_update_end(&qp->txc_stats.syncp);
	if (err)
		return;
	u64_stats_update_begin(&qp->qp_stats.syncp);
	qp->qp_stats.fault_restarts++;
	u64_stats_update_end(&qp->qp_stats.syncp);
	netif_tx_wake_queue(txq);
	net_info_ratelimited("%s: queue pair %u restarted after %s (%u TX frames dropped)\n",
			     netdev_name(priv->netdev), qp->idx, why, dropped);
}

/*
 * Restart the pairs the admin interrupt (or the TX watchdog) found
 * stopped. Process context: stopping a pair sleeps (NAPI, IRQ), and the
 * pairs change only under RTNL and the instance lock. ndo_stop does not
 * wait for this work (it could not while holding RTNL): a run after the
 * datapath went down finds nothing to do; remove disables the work.
 */
void dmsnic_fault_work(struct work_struct *work)
{
	struct dmsnic_priv *priv = container_of(work, struct dmsnic_priv,
						fault_work);
	struct net_device *netdev = priv->netdev;
	bool lost;
	u32 q;

	rtnl_lock();
	netdev_lock_ops(netdev);
	for (q = 0; q < priv->max_queues; q++) {
		struct dmsnic_qp *qp = &priv->qps[q];

		if (!test_and_clear_bit(q, priv->faulted))
			continue;
		lost = test_and_clear_bit(q, priv->lost);
		/* The bits may predate a restart of every pair (ifup). */
		if (!priv->datapath_up || q >= priv->num_queues || !qp->hw_up)
			continue;
		if (dmsnic_qp_faulted(qp))
			dmsnic_qp_restart(priv, qp, "a ring DMA fault");
		else if (lost && qp->rx.lost)
			dmsnic_qp_restart(priv, qp, "a bad RX completion");
	}
	netdev_unlock_ops(netdev);
	rtnl_unlock();
}

/* ---- Queue management ops (netdev_rx_queue_restart() and providers) ---- */

static int dmsnic_queue_mem_alloc(struct net_device *dev,
				  struct netdev_queue_config *qcfg,
				  void *qmem, int idx)
{
	struct dmsnic_priv *priv = netdev_priv(dev);

	/* Test hook: as if memory ran out (debugfs dmsnic/fail_queue_mem_alloc). */
	if (dmsnic_fail_queue_mem_alloc())
		return -ENOMEM;
	return dmsnic_rx_alloc(priv, qmem, idx, qcfg, priv->rx_ring_size,
			       netif_running(dev));
}

static void dmsnic_default_qcfg(struct net_device *dev,
				struct netdev_queue_config *qcfg)
{
	qcfg->rx_page_size = PAGE_SIZE;
}

/* rx-page-size (devmem bind-rx): whole pages, up to the device's limit. */
static int dmsnic_validate_qcfg(struct net_device *dev,
				struct netdev_queue_config *qcfg,
				struct netlink_ext_ack *extack)
{
	u32 size = qcfg->rx_page_size;

	if (!is_power_of_2(size) || size < PAGE_SIZE ||
	    size > DMS_NIC_PBUF_SIZE_MAX) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "rx-page-size %u: must be a power of two from %lu to %u",
				       size, PAGE_SIZE, DMS_NIC_PBUF_SIZE_MAX);
		return -ERANGE;
	}
	return 0;
}

static void dmsnic_queue_mem_free(struct net_device *dev, void *qmem)
{
	dmsnic_rx_free_ring(netdev_priv(dev), qmem);
}

/*
 * Only the RX side of the pair changes hands. The pair's TX ring keeps
 * its descriptors; its completions wait while NAPI is off and are reaped
 * by the poll dmsnic_napi_on() runs. The ring may be one that ran before
 * (the core restarts the old queue when the new one fails): the hardware
 * start rewinds it. On failure the ring stays in @qmem for the core.
 */
static int dmsnic_queue_start(struct net_device *dev,
			      struct netdev_queue_config *qcfg,
			      void *qmem, int idx)
{
	struct dmsnic_priv *priv = netdev_priv(dev);
	struct dmsnic_qp *qp = &priv->qps[idx];
	int err;

	if (!qp->hw_up)
		return -ENETDOWN;
	swap(qp->rx, *(struct dmsnic_rx_ring *)qmem);
	err = dmsnic_rx_hw_start(qp);
	if (err) {
		dmsnic_rx_hw_stop(qp);
		swap(qp->rx, *(struct dmsnic_rx_ring *)qmem);
		dmsnic_qp_count_start_error(qp);
		return err;
	}
	dmsnic_napi_on(qp);
	return 0;
}

/*
 * A pair that is down (a start failed: dmsnic_qp_start()) has no RX queue
 * to hand over, and dmsnic_queue_start() could start neither the new
 * queue nor the old one on it. Refuse before anything changes: the core
 * then keeps the queue as it is and frees the new memory (a memory
 * provider's unbind takes -ENETDOWN as done).
 */
static int dmsnic_queue_stop(struct net_device *dev, void *qmem, int idx)
{
	struct dmsnic_priv *priv = netdev_priv(dev);
	struct dmsnic_qp *qp = &priv->qps[idx];

	if (!qp->hw_up)
		return -ENETDOWN;
	dmsnic_napi_off(qp);
	dmsnic_rx_hw_stop(qp);
	swap(qp->rx, *(struct dmsnic_rx_ring *)qmem);
	return 0;
}

/* ---- RX ring resize (ethtool -G rx) ---- */

/*
 * Move running RX queue @qp onto @ring, which gets the queue's old ring;
 * the pair's TX ring keeps running. If the device refuses the ring, the
 * old one starts again and @ring keeps what it had; if it refuses that
 * too, the pair is taken down (counted, logged) until the next restart
 * of every pair. Allocates nothing.
 */
static int dmsnic_rx_switch(struct dmsnic_priv *priv, struct dmsnic_qp *qp,
			    struct dmsnic_rx_ring *ring)
{
	int err;

	if (!qp->hw_up)
		return -ENETDOWN;
	dmsnic_napi_off(qp);
	dmsnic_rx_hw_stop(qp);
	swap(qp->rx, *ring);
	err = dmsnic_rx_hw_start(qp);
	if (err) {
		dmsnic_qp_count_start_error(qp);
		dmsnic_rx_hw_stop(qp);
		swap(qp->rx, *ring);
		if (dmsnic_rx_hw_start(qp)) {
			dmsnic_qp_count_start_error(qp);
			dmsnic_txq_stop(netdev_get_tx_queue(priv->netdev, qp->idx));
			dmsnic_qp_stop(priv, qp, NULL);
			netdev_err(priv->netdev, "queue pair %u stays down: %d\n",
				   qp->idx, err);
			dmsnic_txq_left_down(priv, qp);
			return err;
		}
	}
	dmsnic_napi_on(qp);
	return err;
}

/*
 * Give every running RX queue a ring of @size entries, one queue at a
 * time: the other queues and every TX ring keep running. All the new
 * rings are built first, so that running out of memory (or a bound
 * dma-buf too small for the larger ring: -ENOBUFS) changes nothing, and
 * going back needs none: if the device refuses a new ring, the queues
 * switched so far return to their old rings. The rings are built as
 * ndo_queue_mem_alloc builds them, so a memory provider backs its
 * queue's new ring. A pair that is down gets the new size when it starts
 * again. Called under the netdev instance lock.
 */
int dmsnic_resize_rx(struct dmsnic_priv *priv, u32 size)
{
	struct net_device *netdev = priv->netdev;
	u32 old = priv->rx_ring_size, n = priv->num_queues, q;
	struct netdev_queue_config qcfg;
	struct dmsnic_rx_ring *rings;
	int err = 0;

	priv->rx_ring_size = size;
	if (!priv->datapath_up)
		return 0;
	rings = kvcalloc(n, sizeof(*rings), GFP_KERNEL);
	if (!rings) {
		priv->rx_ring_size = old;
		return -ENOMEM;
	}
	for (q = 0; q < n && !err; q++) {
		if (!priv->qps[q].hw_up)
			continue;
		netdev_queue_config(netdev, q, &qcfg);
		err = dmsnic_queue_mem_alloc(netdev, &qcfg, &rings[q], q);
	}
	if (err)
		goto out;
	for (q = 0; q < n; q++) {
		if (!priv->qps[q].hw_up)
			continue;
		err = dmsnic_rx_switch(priv, &priv->qps[q], &rings[q]);
		if (err)
			break;
	}
	/* Queue q is back on its old ring (or down); so go the ones before. */
	while (err && q--) {
		if (priv->qps[q].hw_up &&
		    dmsnic_rx_switch(priv, &priv->qps[q], &rings[q]))
			netdev_err(netdev, "rxq %u keeps its %u-entry ring\n", q,
				   priv->qps[q].rx.size);
	}
out:
	if (err)
		priv->rx_ring_size = old;
	for (q = 0; q < n; q++)
		dmsnic_rx_free_ring(priv, &rings[q]);
	kvfree(rings);
	return err;
}

const struct netdev_queue_mgmt_ops dmsnic_queue_mgmt_ops = {
	.ndo_queue_mem_size	= sizeof(struct dmsnic_rx_ring),
	.ndo_queue_mem_alloc	= dmsnic_queue_mem_alloc,
	.ndo_queue_mem_free	= dmsnic_queue_mem_free,
	.ndo_queue_start	= dmsnic_queue_start,
	.ndo_queue_stop		= dmsnic_queue_stop,
	.ndo_default_qcfg	= dmsnic_default_qcfg,
	.ndo_validate_qcfg	= dmsnic_validate_qcfg,
	.supported_params	= QCFG_RX_PAGE_SIZE,
};
