// SPDX-License-Identifier: GPL-2.0
/* dmsnic ethtool operations. */
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <net/netdev_rx_queue.h>

#include "dmsnic.h"

static void dmsnic_get_drvinfo(struct net_device *netdev,
			       struct ethtool_drvinfo *info)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	strscpy(info->driver, "dmsnic", sizeof(info->driver));
	strscpy(info->bus_info, pci_name(priv->pdev), sizeof(info->bus_info));
}

/* ---- Statistics (ethtool -S) ---- */

static const char * const dmsnic_rxq_stat_names[] = {
	"packets", "bytes", "split", "drops", "csum_bad", "alloc_fail",
	"hdr_unreadable",
};

static const char * const dmsnic_txq_stat_names[] = {
	"packets", "bytes", "errors", "drops", "stops", "wakes",
};

#define DMSNIC_RXQ_STATS	ARRAY_SIZE(dmsnic_rxq_stat_names)
#define DMSNIC_TXQ_STATS	ARRAY_SIZE(dmsnic_txq_stat_names)

static int dmsnic_get_sset_count(struct net_device *netdev, int sset)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;
	return priv->num_queues * (DMSNIC_RXQ_STATS + DMSNIC_TXQ_STATS) +
	       DMSNIC_HW_NUM_STATS;
}

static void dmsnic_get_strings(struct net_device *netdev, u32 sset, u8 *data)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	u32 q, i;

	if (sset != ETH_SS_STATS)
		return;
	for (q = 0; q < priv->num_queues; q++) {
		for (i = 0; i < DMSNIC_RXQ_STATS; i++)
			ethtool_sprintf(&data, "rx%u_%s", q,
					dmsnic_rxq_stat_names[i]);
		for (i = 0; i < DMSNIC_TXQ_STATS; i++)
			ethtool_sprintf(&data, "tx%u_%s", q,
					dmsnic_txq_stat_names[i]);
	}
	for (i = 0; i < DMSNIC_HW_NUM_STATS; i++)
		ethtool_puts(&data, dmsnic_hw_stat_names[i]);
}

static void dmsnic_get_ethtool_stats(struct net_device *netdev,
				     struct ethtool_stats *stats, u64 *data)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	unsigned int start;
	u32 q;

	for (q = 0; q < priv->num_queues; q++) {
		const struct dmsnic_qp *qp = &priv->qps[q];
		const struct dmsnic_rx_stats *rs = &qp->rx_stats;
		const struct dmsnic_txc_stats *cs = &qp->txc_stats;
		const struct dmsnic_tx_stats *ts = &qp->tx_stats;

		do {
			start = u64_stats_fetch_begin(&rs->syncp);
			data[0] = rs->packets;
			data[1] = rs->bytes;
			data[2] = rs->split;
			data[3] = rs->drops;
			data[4] = rs->csum_bad;
			data[5] = rs->alloc_fail;
			data[6] = rs->hdr_unreadable;
		} while (u64_stats_fetch_retry(&rs->syncp, start));
		data += DMSNIC_RXQ_STATS;

		do {
			start = u64_stats_fetch_begin(&cs->syncp);
			data[0] = cs->packets;
			data[1] = cs->bytes;
			data[2] = cs->errors;
			data[5] = cs->wakes;
		} while (u64_stats_fetch_retry(&cs->syncp, start));
		do {
			start = u64_stats_fetch_begin(&ts->syncp);
			data[3] = ts->drops;
			data[4] = ts->stops;
		} while (u64_stats_fetch_retry(&ts->syncp, start));
		data += DMSNIC_TXQ_STATS;
	}
	dmsnic_read_hw_stats(priv, data);
}

/* ---- Rings and header split (ethtool -g/-G) ---- */

static void dmsnic_get_ringparam(struct net_device *netdev,
				 struct ethtool_ringparam *ring,
				 struct kernel_ethtool_ringparam *kring,
				 struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	ring->rx_max_pending = DMSNIC_RING_MAX;
	ring->tx_max_pending = DMSNIC_RING_MAX;
	ring->rx_pending = priv->rx_ring_size;
	ring->tx_pending = priv->tx_ring_size;
	kring->tcp_data_split = priv->hds ? ETHTOOL_TCP_DATA_SPLIT_ENABLED :
					    ETHTOOL_TCP_DATA_SPLIT_DISABLED;
	kring->hds_thresh = priv->hds_thresh;
	kring->hds_thresh_max = DMSNIC_HDS_THRESH_MAX;
}

/*
 * New RX ring sizes are applied one RX queue at a time through the queue
 * management ops; the other queues and all TX rings keep running.
 */
static int dmsnic_resize_rx(struct net_device *netdev, u32 size,
			    struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	u32 old = priv->rx_ring_size, q;
	int err = 0;

	priv->rx_ring_size = size;
	if (!netif_running(netdev))
		return 0;
	for (q = 0; q < priv->num_queues; q++) {
		err = netdev_rx_queue_restart(netdev, q);
		if (err)
			break;
	}
	if (!err)
		return 0;

	NL_SET_ERR_MSG_FMT_MOD(extack, "restarting RX queue %u failed", q);
	priv->rx_ring_size = old;
	while (q--)
		netdev_rx_queue_restart(netdev, q);
	return err;
}

static int dmsnic_set_ringparam(struct net_device *netdev,
				struct ethtool_ringparam *ring,
				struct kernel_ethtool_ringparam *kring,
				struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	u32 old_rx = priv->rx_ring_size, old_tx = priv->tx_ring_size;
	u32 rx, tx;
	int err;

	if (ring->rx_pending < DMSNIC_RING_MIN ||
	    ring->tx_pending < DMSNIC_RING_MIN) {
		NL_SET_ERR_MSG_FMT_MOD(extack, "rings need at least %u entries",
				       DMSNIC_RING_MIN);
		return -EINVAL;
	}
	rx = roundup_pow_of_two(ring->rx_pending);
	tx = roundup_pow_of_two(ring->tx_pending);

	/* Header split is device wide and takes effect on the next frame. */
	priv->hds = kring->tcp_data_split != ETHTOOL_TCP_DATA_SPLIT_DISABLED;
	priv->hds_thresh = kring->hds_thresh;
	dmsnic_wr32(priv, DMS_NIC_REG_HDS_THRESH, priv->hds_thresh);
	dmsnic_write_rx_ctrl(priv, netdev->features);

	if (tx == old_tx)
		return rx == old_rx ? 0 : dmsnic_resize_rx(netdev, rx, extack);

	/* TX rings only change with the whole datapath down. */
	priv->rx_ring_size = rx;
	priv->tx_ring_size = tx;
	if (!netif_running(netdev))
		return 0;
	dmsnic_down(priv);
	err = dmsnic_up(priv);
	if (!err)
		return 0;
	NL_SET_ERR_MSG_MOD(extack, "cannot allocate the new rings");
	priv->rx_ring_size = old_rx;
	priv->tx_ring_size = old_tx;
	if (dmsnic_up(priv))
		netdev_err(netdev, "datapath down after a failed resize\n");
	return err;
}

/* ---- Channels (ethtool -l/-L) ---- */

static void dmsnic_get_channels(struct net_device *netdev,
				struct ethtool_channels *ch)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	ch->max_combined = priv->max_queues;
	ch->combined_count = priv->num_queues;
}

static void dmsnic_default_indir(struct dmsnic_priv *priv)
{
	u32 n = priv->num_queues;
	int i;

	for (i = 0; i < DMS_NIC_RSS_INDIR_SIZE; i++)
		priv->rss_indir[i] = ethtool_rxfh_indir_default(i, n);
	dmsnic_write_rss(priv);
}

static int dmsnic_set_channels(struct net_device *netdev,
			       struct ethtool_channels *ch)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	bool running = netif_running(netdev);
	u32 old = priv->num_queues, n = ch->combined_count;
	int err;

	if (!n || ch->rx_count || ch->tx_count)
		return -EINVAL;
	if (n == old)
		return 0;

	if (running)
		dmsnic_down(priv);
	err = netif_set_real_num_queues(netdev, n, n);
	if (!err)
		priv->num_queues = n;
	/* The core refused the change if the table points beyond n. */
	if (!netif_is_rxfh_configured(netdev))
		dmsnic_default_indir(priv);
	if (running) {
		int up = dmsnic_up(priv);

		err = err ?: up;
	}
	return err;
}

/* ---- RSS (ethtool -x/-X) ---- */

static u32 dmsnic_get_rx_ring_count(struct net_device *netdev)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	return priv->num_queues;
}

static u32 dmsnic_get_rxfh_key_size(struct net_device *netdev)
{
	return DMS_NIC_RSS_KEY_SIZE;
}

static u32 dmsnic_get_rxfh_indir_size(struct net_device *netdev)
{
	return DMS_NIC_RSS_INDIR_SIZE;
}

static int dmsnic_get_rxfh(struct net_device *netdev,
			   struct ethtool_rxfh_param *rxfh)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	rxfh->hfunc = ETH_RSS_HASH_TOP;
	if (rxfh->indir)
		memcpy(rxfh->indir, priv->rss_indir, sizeof(priv->rss_indir));
	if (rxfh->key)
		memcpy(rxfh->key, priv->rss_key, sizeof(priv->rss_key));
	return 0;
}

static int dmsnic_set_rxfh(struct net_device *netdev,
			   struct ethtool_rxfh_param *rxfh,
			   struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	if (rxfh->hfunc != ETH_RSS_HASH_NO_CHANGE &&
	    rxfh->hfunc != ETH_RSS_HASH_TOP) {
		NL_SET_ERR_MSG_MOD(extack, "only the Toeplitz hash is supported");
		return -EOPNOTSUPP;
	}
	if (rxfh->indir)
		memcpy(priv->rss_indir, rxfh->indir, sizeof(priv->rss_indir));
	if (rxfh->key)
		memcpy(priv->rss_key, rxfh->key, sizeof(priv->rss_key));
	dmsnic_write_rss(priv);
	return 0;
}

/* ---- Flow steering (ethtool -n/-N) ---- */

static int dmsnic_ntuple_check(struct dmsnic_priv *priv,
			       const struct ethtool_rx_flow_spec *fs)
{
	switch (fs->flow_type) {
	case TCP_V4_FLOW:
	case UDP_V4_FLOW:
		if (fs->m_u.tcp_ip4_spec.tos)
			return -EOPNOTSUPP;
		break;
	case TCP_V6_FLOW:
	case UDP_V6_FLOW:
		if (fs->m_u.tcp_ip6_spec.tclass)
			return -EOPNOTSUPP;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (fs->ring_cookie == RX_CLS_FLOW_DISC ||
	    fs->ring_cookie == RX_CLS_FLOW_WAKE ||
	    ethtool_get_flow_spec_ring_vf(fs->ring_cookie))
		return -EOPNOTSUPP;
	if (ethtool_get_flow_spec_ring(fs->ring_cookie) >= priv->num_queues)
		return -EINVAL;
	return 0;
}

/* Pick the slot for RX_CLS_LOC_*; lower slots win in the device. */
static int dmsnic_ntuple_loc(struct dmsnic_priv *priv, u32 loc)
{
	u32 i;

	switch (loc) {
	case RX_CLS_LOC_LAST:
		for (i = priv->ntuple_size; i-- > 0;)
			if (!test_bit(i, priv->ntuple_used))
				return i;
		return -ENOSPC;
	case RX_CLS_LOC_ANY:
	case RX_CLS_LOC_FIRST:
		i = find_first_zero_bit(priv->ntuple_used, priv->ntuple_size);
		return i < priv->ntuple_size ? i : -ENOSPC;
	default:
		return loc < priv->ntuple_size ? loc : -EINVAL;
	}
}

static int dmsnic_ntuple_add(struct dmsnic_priv *priv,
			     struct ethtool_rx_flow_spec *fs)
{
	struct ethtool_rx_flow_spec *rule;
	int loc, err, i;

	if (!(priv->netdev->features & NETIF_F_NTUPLE))
		return -EOPNOTSUPP;
	err = dmsnic_ntuple_check(priv, fs);
	if (err)
		return err;
	loc = dmsnic_ntuple_loc(priv, fs->location);
	if (loc < 0)
		return loc;
	fs->location = loc;

	rule = &priv->ntuple[loc];
	*rule = *fs;
	/* Keep only the bits the rule compares. */
	if (fs->flow_type == TCP_V6_FLOW || fs->flow_type == UDP_V6_FLOW) {
		struct ethtool_tcpip6_spec *h = &rule->h_u.tcp_ip6_spec;
		const struct ethtool_tcpip6_spec *m = &rule->m_u.tcp_ip6_spec;

		for (i = 0; i < 4; i++) {
			h->ip6src[i] &= m->ip6src[i];
			h->ip6dst[i] &= m->ip6dst[i];
		}
		h->psrc &= m->psrc;
		h->pdst &= m->pdst;
	} else {
		struct ethtool_tcpip4_spec *h = &rule->h_u.tcp_ip4_spec;
		const struct ethtool_tcpip4_spec *m = &rule->m_u.tcp_ip4_spec;

		h->ip4src &= m->ip4src;
		h->ip4dst &= m->ip4dst;
		h->psrc &= m->psrc;
		h->pdst &= m->pdst;
	}
	set_bit(loc, priv->ntuple_used);
	dmsnic_write_ntuple(priv, loc);
	return 0;
}

static int dmsnic_ntuple_del(struct dmsnic_priv *priv, u32 loc)
{
	if (loc >= priv->ntuple_size || !test_bit(loc, priv->ntuple_used))
		return -ENOENT;
	clear_bit(loc, priv->ntuple_used);
	memset(&priv->ntuple[loc], 0, sizeof(priv->ntuple[loc]));
	dmsnic_write_ntuple(priv, loc);
	return 0;
}

static int dmsnic_get_rxnfc(struct net_device *netdev,
			    struct ethtool_rxnfc *cmd, u32 *rule_locs)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	u32 loc, n = 0;

	switch (cmd->cmd) {
	case ETHTOOL_GRXCLSRLCNT:
		cmd->rule_cnt = bitmap_weight(priv->ntuple_used,
					      priv->ntuple_size);
		cmd->data = priv->ntuple_size | RX_CLS_LOC_SPECIAL;
		return 0;
	case ETHTOOL_GRXCLSRULE:
		loc = cmd->fs.location;
		if (loc >= priv->ntuple_size || !test_bit(loc, priv->ntuple_used))
			return -ENOENT;
		cmd->fs = priv->ntuple[loc];
		return 0;
	case ETHTOOL_GRXCLSRLALL:
		for_each_set_bit(loc, priv->ntuple_used, priv->ntuple_size) {
			if (n == cmd->rule_cnt)
				return -EMSGSIZE;
			rule_locs[n++] = loc;
		}
		cmd->rule_cnt = n;
		cmd->data = priv->ntuple_size;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static int dmsnic_set_rxnfc(struct net_device *netdev,
			    struct ethtool_rxnfc *cmd)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	switch (cmd->cmd) {
	case ETHTOOL_SRXCLSRLINS:
		return dmsnic_ntuple_add(priv, &cmd->fs);
	case ETHTOOL_SRXCLSRLDEL:
		return dmsnic_ntuple_del(priv, cmd->fs.location);
	default:
		return -EOPNOTSUPP;
	}
}

const struct ethtool_ops dmsnic_ethtool_ops = {
	.supported_ring_params	= ETHTOOL_RING_USE_TCP_DATA_SPLIT |
				  ETHTOOL_RING_USE_HDS_THRS,
	/* netif_set_real_num_queues() needs RTNL */
	.op_needs_rtnl		= ETHTOOL_OP_NEEDS_RTNL_SCHANNELS,
	.get_drvinfo		= dmsnic_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_ringparam		= dmsnic_get_ringparam,
	.set_ringparam		= dmsnic_set_ringparam,
	.get_strings		= dmsnic_get_strings,
	.get_sset_count		= dmsnic_get_sset_count,
	.get_ethtool_stats	= dmsnic_get_ethtool_stats,
	.get_channels		= dmsnic_get_channels,
	.set_channels		= dmsnic_set_channels,
	.get_rx_ring_count	= dmsnic_get_rx_ring_count,
	.get_rxnfc		= dmsnic_get_rxnfc,
	.set_rxnfc		= dmsnic_set_rxnfc,
	.get_rxfh_key_size	= dmsnic_get_rxfh_key_size,
	.get_rxfh_indir_size	= dmsnic_get_rxfh_indir_size,
	.get_rxfh		= dmsnic_get_rxfh,
	.set_rxfh		= dmsnic_set_rxfh,
};
