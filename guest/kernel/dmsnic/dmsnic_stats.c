// SPDX-License-Identifier: GPL-2.0
/*
 * dmsnic: device totals (ndo_get_stats64) and per-queue statistics
 * (netdev qstats), both read from the queue pairs' software counters.
 */
#include <linux/netdevice.h>
#include <net/netdev_queues.h>

#include "dmsnic.h"

/* One consistent read of a queue pair's counters. */
struct dmsnic_qp_snapshot {
	u64 rx_packets;
	u64 rx_bytes;
	u64 rx_drops;
	u64 rx_alloc_fail;
	u64 rx_csum_bad;
	u64 rx_hw_gro_packets;
	u64 rx_hw_gro_bytes;
	u64 rx_hw_gro_wire_packets;
	u64 rx_hw_gro_wire_bytes;
	u64 rx_hw_no_buf_drop;
	u64 tx_packets;
	u64 tx_bytes;
	u64 tx_errors;
	u64 tx_gso_packets;
	u64 tx_gso_bytes;
	u64 tx_gso_wire_packets;
	u64 tx_gso_wire_bytes;
	u64 tx_drops;
	u64 tx_stops;
	u64 tx_wakes;
};

static void dmsnic_qp_snapshot(const struct dmsnic_qp *qp,
			       struct dmsnic_qp_snapshot *s)
{
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&qp->rx_stats.syncp);
		s->rx_packets = qp->rx_stats.packets;
		s->rx_bytes = qp->rx_stats.bytes;
		s->rx_drops = qp->rx_stats.drops;
		s->rx_alloc_fail = qp->rx_stats.alloc_fail;
		s->rx_csum_bad = qp->rx_stats.csum_bad;
		s->rx_hw_gro_packets = qp->rx_stats.hw_gro_packets;
		s->rx_hw_gro_bytes = qp->rx_stats.hw_gro_bytes;
		s->rx_hw_gro_wire_packets = qp->rx_stats.hw_gro_wire_packets;
		s->rx_hw_gro_wire_bytes = qp->rx_stats.hw_gro_wire_bytes;
	} while (u64_stats_fetch_retry(&qp->rx_stats.syncp, start));

	do {
		start = u64_stats_fetch_begin(&qp->txc_stats.syncp);
		s->tx_packets = qp->txc_stats.packets;
		s->tx_bytes = qp->txc_stats.bytes;
		s->tx_errors = qp->txc_stats.errors;
		s->tx_gso_packets = qp->txc_stats.gso_packets;
		s->tx_gso_bytes = qp->txc_stats.gso_bytes;
		s->tx_gso_wire_packets = qp->txc_stats.gso_wire_packets;
		s->tx_gso_wire_bytes = qp->txc_stats.gso_wire_bytes;
		s->tx_wakes = qp->txc_stats.wakes;
	} while (u64_stats_fetch_retry(&qp->txc_stats.syncp, start));

	do {
		start = u64_stats_fetch_begin(&qp->tx_stats.syncp);
		s->tx_drops = qp->tx_stats.drops;
		s->tx_stops = qp->tx_stats.stops;
	} while (u64_stats_fetch_retry(&qp->tx_stats.syncp, start));

	do {
		start = u64_stats_fetch_begin(&qp->hw_stats.syncp);
		s->rx_hw_no_buf_drop = qp->hw_stats.rx_no_buf_drop;
	} while (u64_stats_fetch_retry(&qp->hw_stats.syncp, start));
}

void dmsnic_get_stats64(struct net_device *netdev,
			struct rtnl_link_stats64 *s)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	struct dmsnic_qp_snapshot q;
	u64 hw[DMSNIC_HW_NUM_STATS];
	u32 i;

	/* Every pair, in use or not: their counters survive ethtool -L. */
	for (i = 0; i < priv->max_queues; i++) {
		dmsnic_qp_snapshot(&priv->qps[i], &q);
		s->rx_packets += q.rx_packets;
		s->rx_bytes += q.rx_bytes;
		s->rx_dropped += q.rx_drops;
		s->tx_packets += q.tx_packets;
		s->tx_bytes += q.tx_bytes;
		s->tx_errors += q.tx_errors;
		s->tx_dropped += q.tx_drops;
	}

	dmsnic_read_hw_stats(priv, hw);
	s->rx_dropped += hw[DMSNIC_HW_RX_DROP];
	s->rx_errors += hw[DMSNIC_HW_RX_DMA_ERR];
	/* No buffer on a DROP_EN queue: missed, as if_link.h defines it. */
	s->rx_missed_errors += hw[DMSNIC_HW_RX_NO_BUF_DROP];
}

static void dmsnic_qstats_rx_add(const struct dmsnic_qp_snapshot *q,
				 struct netdev_queue_stats_rx *rx)
{
	rx->packets += q->rx_packets;
	rx->bytes += q->rx_bytes;
	rx->alloc_fail += q->rx_alloc_fail;
	rx->csum_bad += q->rx_csum_bad;
	rx->hw_gro_packets += q->rx_hw_gro_packets;
	rx->hw_gro_bytes += q->rx_hw_gro_bytes;
	rx->hw_gro_wire_packets += q->rx_hw_gro_wire_packets;
	rx->hw_gro_wire_bytes += q->rx_hw_gro_wire_bytes;
	/* The device dropped them for want of buffers (DROP_EN). */
	rx->hw_drops += q->rx_hw_no_buf_drop;
	rx->hw_drop_overruns += q->rx_hw_no_buf_drop;
}

static void dmsnic_qstats_tx_add(const struct dmsnic_qp_snapshot *q,
				 struct netdev_queue_stats_tx *tx)
{
	tx->packets += q->tx_packets;
	tx->bytes += q->tx_bytes;
	tx->hw_drop_errors += q->tx_errors;
	tx->hw_gso_packets += q->tx_gso_packets;
	tx->hw_gso_bytes += q->tx_gso_bytes;
	tx->hw_gso_wire_packets += q->tx_gso_wire_packets;
	tx->hw_gso_wire_bytes += q->tx_gso_wire_bytes;
	tx->stop += q->tx_stops;
	tx->wake += q->tx_wakes;
}

/* The fields a queue reports, zeroed: the core hands them in undefined. */
static void dmsnic_qstats_rx_zero(struct netdev_queue_stats_rx *rx)
{
	rx->packets = 0;
	rx->bytes = 0;
	rx->alloc_fail = 0;
	rx->csum_bad = 0;
	rx->hw_gro_packets = 0;
	rx->hw_gro_bytes = 0;
	rx->hw_gro_wire_packets = 0;
	rx->hw_gro_wire_bytes = 0;
	rx->hw_drops = 0;
	rx->hw_drop_overruns = 0;
}

static void dmsnic_qstats_tx_zero(struct netdev_queue_stats_tx *tx)
{
	tx->packets = 0;
	tx->bytes = 0;
	tx->hw_drop_errors = 0;
	tx->hw_gso_packets = 0;
	tx->hw_gso_bytes = 0;
	tx->hw_gso_wire_packets = 0;
	tx->hw_gso_wire_bytes = 0;
	tx->stop = 0;
	tx->wake = 0;
}

static void dmsnic_get_queue_stats_rx(struct net_device *netdev, int idx,
				      struct netdev_queue_stats_rx *rx)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	struct dmsnic_qp_snapshot q;

	dmsnic_read_hw_qstats(priv, idx);
	dmsnic_qp_snapshot(&priv->qps[idx], &q);
	dmsnic_qstats_rx_zero(rx);
	dmsnic_qstats_rx_add(&q, rx);
}

static void dmsnic_get_queue_stats_tx(struct net_device *netdev, int idx,
				      struct netdev_queue_stats_tx *tx)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	struct dmsnic_qp_snapshot q;

	dmsnic_qp_snapshot(&priv->qps[idx], &q);
	dmsnic_qstats_tx_zero(tx);
	dmsnic_qstats_tx_add(&q, tx);
}

/*
 * What the live queues do not hold: the history of pairs ethtool -L took
 * out of use, and the frames the device dropped for the whole port (too
 * long, or their queue off), so that the device's qstats agree with
 * ndo_get_stats64.
 */
static void dmsnic_get_base_stats(struct net_device *netdev,
				  struct netdev_queue_stats_rx *rx,
				  struct netdev_queue_stats_tx *tx)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	struct dmsnic_qp_snapshot q;
	u64 hw[DMSNIC_HW_NUM_STATS];
	u32 i;

	dmsnic_read_hw_stats(priv, hw);
	dmsnic_qstats_rx_zero(rx);
	dmsnic_qstats_tx_zero(tx);
	for (i = 0; i < priv->max_queues; i++) {
		dmsnic_qp_snapshot(&priv->qps[i], &q);
		if (i >= netdev->real_num_rx_queues)
			dmsnic_qstats_rx_add(&q, rx);
		if (i >= netdev->real_num_tx_queues)
			dmsnic_qstats_tx_add(&q, tx);
	}

	rx->hw_drops += hw[DMSNIC_HW_RX_DROP];
}

const struct netdev_stat_ops dmsnic_stat_ops = {
	.get_queue_stats_rx	= dmsnic_get_queue_stats_rx,
	.get_queue_stats_tx	= dmsnic_get_queue_stats_tx,
	.get_base_stats		= dmsnic_get_base_stats,
};
