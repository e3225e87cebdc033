// SPDX-License-Identifier: GPL-2.0
/* dmsnic ethtool operations. */
#include <linux/ethtool.h>
#include <linux/netdevice.h>

#include "dmsnic.h"

static void dmsnic_get_drvinfo(struct net_device *netdev,
			       struct ethtool_drvinfo *info)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	strscpy(info->driver, "dmsnic", sizeof(info->driver));
	strscpy(info->bus_info, pci_name(priv->pdev), sizeof(info->bus_info));
}

/* ---- Statistics (ethtool -S) ---- */

struct dmsnic_stat {
	char name[ETH_GSTRING_LEN];
	size_t offset;		/* of the u64 counter in struct dmsnic_qp */
};

#define DMSNIC_STAT(name, field) { name, offsetof(struct dmsnic_qp, field) }

/*
 * Per-queue counters as ethtool -S shows them (rx<q>_<name>, tx<q>_<name>,
 * q<q>_<name> for the pair as a whole), each read from its field of the
 * queue pair. Each u64_stats block is read under its own syncp.
 */
static const struct dmsnic_stat dmsnic_rxq_stats[] = {
	DMSNIC_STAT("packets", rx_stats.packets),
	DMSNIC_STAT("bytes", rx_stats.bytes),
	DMSNIC_STAT("split", rx_stats.split),
	DMSNIC_STAT("drops", rx_stats.drops),
	DMSNIC_STAT("csum_bad", rx_stats.csum_bad),
	DMSNIC_STAT("alloc_fail", rx_stats.alloc_fail),
	DMSNIC_STAT("hdr_unreadable", rx_stats.hdr_unreadable),
	DMSNIC_STAT("csum_unreadable", rx_stats.csum_unreadable),
	DMSNIC_STAT("bad_cmpl", rx_stats.bad_cmpl),
	DMSNIC_STAT("hw_gro_bad", rx_stats.hw_gro_bad),
	DMSNIC_STAT("hw_gro_packets", rx_stats.hw_gro_packets),
	DMSNIC_STAT("hw_gro_bytes", rx_stats.hw_gro_bytes),
	DMSNIC_STAT("hw_gro_wire_packets", rx_stats.hw_gro_wire_packets),
	DMSNIC_STAT("hw_gro_wire_bytes", rx_stats.hw_gro_wire_bytes),
};

/* The device's counters of the queue (NIC v1.10). */
static const struct dmsnic_stat dmsnic_rxq_hw_stats[] = {
	DMSNIC_STAT("hw_no_buf_drop", hw_stats.rx_no_buf_drop),
};

static const struct dmsnic_stat dmsnic_txc_stats[] = {
	DMSNIC_STAT("packets", txc_stats.packets),
	DMSNIC_STAT("bytes", txc_stats.bytes),
	DMSNIC_STAT("errors", txc_stats.errors),
	DMSNIC_STAT("gso_packets", txc_stats.gso_packets),
	DMSNIC_STAT("gso_bytes", txc_stats.gso_bytes),
	DMSNIC_STAT("gso_wire_packets", txc_stats.gso_wire_packets),
	DMSNIC_STAT("gso_wire_bytes", txc_stats.gso_wire_bytes),
};

static const struct dmsnic_stat dmsnic_txq_stats[] = {
	DMSNIC_STAT("drops", tx_stats.drops),
	DMSNIC_STAT("stops", tx_stats.stops),
	DMSNIC_STAT("xdp_xmit", tx_stats.xdp_xmit),
	DMSNIC_STAT("xdp_xmit_errors", tx_stats.xdp_xmit_errors),
};

static const struct dmsnic_stat dmsnic_xdp_stats[] = {
	DMSNIC_STAT("xdp_pass", xdp_stats.pass),
	DMSNIC_STAT("xdp_drop", xdp_stats.drop),
	DMSNIC_STAT("xdp_tx", xdp_stats.tx),
	DMSNIC_STAT("xdp_tx_errors", xdp_stats.tx_errors),
	DMSNIC_STAT("xdp_redirect", xdp_stats.redirect),
	DMSNIC_STAT("xdp_redirect_errors", xdp_stats.redirect_errors),
	DMSNIC_STAT("xdp_aborted", xdp_stats.aborted),
};

static const struct dmsnic_stat dmsnic_txw_stats[] = {
	DMSNIC_STAT("wakes", txc_stats.wakes),
	DMSNIC_STAT("bad_cmpl", txc_stats.bad_cmpl),
};

struct dmsnic_stat_group {
	const char *prefix;	/* "rx" or "tx" */
	const struct dmsnic_stat *stats;
	u32 n;
	size_t syncp;		/* offset of the block's u64_stats_sync */
};

#define DMSNIC_SYNCP(block) offsetof(struct dmsnic_qp, block.syncp)

/* The order of ethtool -S within one queue pair. */
static const struct dmsnic_stat dmsnic_qp_stats[] = {
	DMSNIC_STAT("fault_restarts", qp_stats.fault_restarts),
	DMSNIC_STAT("start_errors", qp_stats.start_errors),
};

static const struct dmsnic_stat_group dmsnic_stat_groups[] = {
	{ "rx", dmsnic_rxq_stats, ARRAY_SIZE(dmsnic_rxq_stats),
	  DMSNIC_SYNCP(rx_stats) },
	{ "rx", dmsnic_xdp_stats, ARRAY_SIZE(dmsnic_xdp_stats),
	  DMSNIC_SYNCP(xdp_stats) },
	{ "rx", dmsnic_rxq_hw_stats, ARRAY_SIZE(dmsnic_rxq_hw_stats),
	  DMSNIC_SYNCP(hw_stats) },
	{ "tx", dmsnic_txc_stats, ARRAY_SIZE(dmsnic_txc_stats),
	  DMSNIC_SYNCP(txc_stats) },
	{ "tx", dmsnic_txq_stats, ARRAY_SIZE(dmsnic_txq_stats),
	  DMSNIC_SYNCP(tx_stats) },
	{ "tx", dmsnic_txw_stats, ARRAY_SIZE(dmsnic_txw_stats),
	  DMSNIC_SYNCP(txc_stats) },
	{ "q", dmsnic_qp_stats, ARRAY_SIZE(dmsnic_qp_stats),
	  DMSNIC_SYNCP(qp_stats) },
};

static u32 dmsnic_qp_stat_count(void)
{
	u32 i, n = 0;

	for (i = 0; i < ARRAY_SIZE(dmsnic_stat_groups); i++)
		n += dmsnic_stat_groups[i].n;
	return n;
}

static int dmsnic_get_sset_count(struct net_device *netdev, int sset)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;
	return priv->num_queues * dmsnic_qp_stat_count() + DMSNIC_HW_NUM_STATS;
}

static void dmsnic_get_strings(struct net_device *netdev, u32 sset, u8 *data)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	const struct dmsnic_stat_group *g;
	u32 q, i;

	if (sset != ETH_SS_STATS)
		return;
	for (q = 0; q < priv->num_queues; q++)
		for (g = dmsnic_stat_groups;
		     g < dmsnic_stat_groups + ARRAY_SIZE(dmsnic_stat_groups); g++)
			for (i = 0; i < g->n; i++)
				ethtool_sprintf(&data, "%s%u_%s", g->prefix, q,
						g->stats[i].name);
	for (i = 0; i < DMSNIC_HW_NUM_STATS; i++)
		ethtool_puts(&data, dmsnic_hw_stat_names[i]);
}

/* Copy one group's counters of @qp to @data; returns how many. */
static u32 dmsnic_read_stat_group(const struct dmsnic_qp *qp,
				  const struct dmsnic_stat_group *g, u64 *data)
{
	const struct u64_stats_sync *syncp = (const void *)qp + g->syncp;
	unsigned int start;
	u32 i;

	do {
		start = u64_stats_fetch_begin(syncp);
		for (i = 0; i < g->n; i++)
			data[i] = *(const u64 *)((const void *)qp +
						 g->stats[i].offset);
	} while (u64_stats_fetch_retry(syncp, start));
	return g->n;
}

static void dmsnic_get_ethtool_stats(struct net_device *netdev,
				     struct ethtool_stats *stats, u64 *data)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	const struct dmsnic_stat_group *g;
	u64 hw[DMSNIC_HW_NUM_STATS];
	u32 q;

	/* The queues' device counters too, before they are copied. */
	dmsnic_read_hw_stats(priv, hw);
	for (q = 0; q < priv->num_queues; q++)
		for (g = dmsnic_stat_groups;
		     g < dmsnic_stat_groups + ARRAY_SIZE(dmsnic_stat_groups); g++)
			data += dmsnic_read_stat_group(&priv->qps[q], g, data);
	memcpy(data, hw, sizeof(hw));
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
	kring->tcp_data_split = dmsnic_hds_on(priv) ?
				ETHTOOL_TCP_DATA_SPLIT_ENABLED :
				ETHTOOL_TCP_DATA_SPLIT_DISABLED;
	kring->hds_thresh = priv->hds_thresh;
	kring->hds_thresh_max = DMSNIC_HDS_THRESH_MAX;
}

/*
 * Rings first, header split after: a resize that fails (no memory, or a
 * bound dma-buf too small for the new ring: -ENOBUFS) leaves the device
 * as it was, header split included.
 */
static int dmsnic_set_ringparam(struct net_device *netdev,
				struct ethtool_ringparam *ring,
				struct kernel_ethtool_ringparam *kring,
				struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	u32 rx, tx;
	int err = 0;

	if (ring->rx_pending < DMSNIC_RING_MIN ||
	    ring->tx_pending < DMSNIC_RING_MIN) {
		NL_SET_ERR_MSG_FMT_MOD(extack, "rings need at least %u entries",
				       DMSNIC_RING_MIN);
		return -EINVAL;
	}
	rx = roundup_pow_of_two(ring->rx_pending);
	tx = roundup_pow_of_two(ring->tx_pending);

	if (tx != priv->tx_ring_size && netif_running(netdev)) {
		/* TX rings only change with every queue pair restarted. */
		err = dmsnic_reconfigure(priv, priv->num_queues, rx, tx);
		if (err)
			NL_SET_ERR_MSG_MOD(extack, "cannot allocate the new rings");
	} else if (tx != priv->tx_ring_size) {
		priv->rx_ring_size = rx;
		priv->tx_ring_size = tx;
	} else if (rx != priv->rx_ring_size) {
		err = dmsnic_resize_rx(priv, rx);
		if (err)
			NL_SET_ERR_MSG_MOD(extack, "cannot resize the RX rings");
	}
	if (err)
		return err;

	/* Header split is device wide and takes effect on the next frame. */
	priv->hds = kring->tcp_data_split != ETHTOOL_TCP_DATA_SPLIT_DISABLED;
	priv->hds_thresh = kring->hds_thresh;
	dmsnic_wr32(priv, DMS_NIC_REG_HDS_THRESH, priv->hds_thresh);
	dmsnic_write_rx_ctrl(priv, netdev->features);
	return 0;
}

/* ---- Channels (ethtool -l/-L) ---- */

static void dmsnic_get_channels(struct net_device *netdev,
				struct ethtool_channels *ch)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	ch->max_combined = priv->max_queues;
	ch->combined_count = priv->num_queues;
}

static int dmsnic_set_channels(struct net_device *netdev,
			       struct ethtool_channels *ch)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	u32 old = priv->num_queues, n = ch->combined_count;
	int err;

	if (!n || ch->rx_count || ch->tx_count)
		return -EINVAL;
	if (n == priv->num_queues)
		return 0;
	err = dmsnic_rss_channels_check(priv, n);
	if (err)
		return err;

	if (netif_running(netdev)) {
		err = dmsnic_reconfigure(priv, n, priv->rx_ring_size,
					 priv->tx_ring_size);
	} else {
		err = netif_set_real_num_queues(netdev, n, n);
		if (!err)
			priv->num_queues = n;
	}
	if (err)
		return err;
	dmsnic_set_xps(priv);
	dmsnic_rss_channels_changed(priv);
	if (n < old)
		dmsnic_shaper_forget_queues(priv, n, old);
	return 0;
}

/* ---- Flow steering (ethtool -n/-N) ---- */

/* The flow type a rule matches, without the flags of how it steers. */
static u32 dmsnic_ntuple_flow(const struct ethtool_rx_flow_spec *fs)
{
	return fs->flow_type & ~(FLOW_EXT | FLOW_MAC_EXT | FLOW_RSS);
}

/*
 * A rule the device can hold. Its queue, plus the largest entry of the
 * table of the RSS context it names (FLOW_RSS), must be in use.
 */
static int dmsnic_ntuple_check(struct dmsnic_priv *priv,
			       const struct ethtool_rx_flow_spec *fs, u32 ctx)
{
	u32 max = 0;
	int err;

	switch (dmsnic_ntuple_flow(fs)) {
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
	if (fs->flow_type & (FLOW_EXT | FLOW_MAC_EXT))
		return -EOPNOTSUPP;
	if (fs->ring_cookie == RX_CLS_FLOW_DISC ||
	    fs->ring_cookie == RX_CLS_FLOW_WAKE ||
	    ethtool_get_flow_spec_ring_vf(fs->ring_cookie))
		return -EOPNOTSUPP;
	if (fs->flow_type & FLOW_RSS) {
		if (!(priv->caps & DMS_NIC_CAP_RSS_CTX))
			return -EOPNOTSUPP;
		err = dmsnic_rss_ctx_max_queue(priv, ctx, &max);
		if (err)
			return err;
	}
	if (ethtool_get_flow_spec_ring(fs->ring_cookie) + max >=
	    priv->num_queues)
		return -EINVAL;
	return 0;
}

/* Keep only the bits the rule compares. */
static void dmsnic_ntuple_mask(struct ethtool_rx_flow_spec *rule)
{
	u32 flow = dmsnic_ntuple_flow(rule);
	int i;

	if (flow == TCP_V6_FLOW || flow == UDP_V6_FLOW) {
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
}

/* The slot of a rule that matches what @rule matches, or -ENOENT. */
static int dmsnic_ntuple_find(struct dmsnic_priv *priv,
			      const struct ethtool_rx_flow_spec *rule)
{
	const struct ethtool_rx_flow_spec *r;
	u32 loc;

	for_each_set_bit(loc, priv->ntuple_used, priv->ntuple_size) {
		r = &priv->ntuple[loc];
		if (dmsnic_ntuple_flow(r) == dmsnic_ntuple_flow(rule) &&
		    !memcmp(&r->h_u, &rule->h_u, sizeof(r->h_u)) &&
		    !memcmp(&r->m_u, &rule->m_u, sizeof(r->m_u)))
			return loc;
	}
	return -ENOENT;
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

/*
 * A rule at the slot asked for (replacing the rule there) or at a free one.
 * A rule matching the same flows as a rule in another slot is refused, as
 * bnxt (-EEXIST) and ice do: the device's first match wins, so one of the
 * two would never match, and a caller that meant to change a rule's action
 * names its slot.
 */
static int dmsnic_ntuple_add(struct dmsnic_priv *priv,
			     struct ethtool_rxnfc *cmd)
{
	struct ethtool_rx_flow_spec *fs = &cmd->fs, rule = *fs;
	u32 ctx = fs->flow_type & FLOW_RSS ? cmd->rss_context : 0;
	int loc, same, err;

	if (!(priv->netdev->features & NETIF_F_NTUPLE))
		return -EOPNOTSUPP;
	err = dmsnic_ntuple_check(priv, fs, ctx);
	if (err)
		return err;
	dmsnic_ntuple_mask(&rule);
	loc = dmsnic_ntuple_loc(priv, fs->location);
	if (loc < 0)
		return loc;
	same = dmsnic_ntuple_find(priv, &rule);
	if (same >= 0 && same != loc)
		return -EEXIST;
	fs->location = loc;
	rule.location = loc;
	priv->ntuple[loc] = rule;
	priv->ntuple_ctx[loc] = ctx;
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
		cmd->rss_context = priv->ntuple_ctx[loc];
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
		return dmsnic_ntuple_add(priv, cmd);
	case ETHTOOL_SRXCLSRLDEL:
		return dmsnic_ntuple_del(priv, cmd->fs.location);
	default:
		return -EOPNOTSUPP;
	}
}

/* ---- Interrupt moderation ---- */

#define DMSNIC_COAL_USECS_MAX	(DMS_NIC_ITR_MAX_NS / 1000)

static int dmsnic_get_coalesce(struct net_device *netdev,
			       struct ethtool_coalesce *ec,
			       struct kernel_ethtool_coalesce *kec,
			       struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	const struct dmsnic_coal *coal = &priv->coal;

	ec->rx_coalesce_usecs = coal->rx_usecs;
	ec->rx_max_coalesced_frames = coal->rx_frames;
	ec->tx_coalesce_usecs = coal->tx_usecs;
	ec->tx_max_coalesced_frames = coal->tx_frames;
	ec->use_adaptive_rx_coalesce = coal->adaptive_rx;
	return 0;
}

/*
 * Every running pair takes the new setting at once. Turning adaptive
 * moderation off waits for a net_dim run in flight, which would otherwise
 * write its profile over the static setting.
 */
static int dmsnic_set_coalesce(struct net_device *netdev,
			       struct ethtool_coalesce *ec,
			       struct kernel_ethtool_coalesce *kec,
			       struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	struct dmsnic_coal *coal = &priv->coal;
	u32 i;

	if (ec->rx_coalesce_usecs > DMSNIC_COAL_USECS_MAX ||
	    ec->tx_coalesce_usecs > DMSNIC_COAL_USECS_MAX) {
		NL_SET_ERR_MSG_FMT_MOD(extack, "at most %d usecs",
				       DMSNIC_COAL_USECS_MAX);
		return -EINVAL;
	}
	if (ec->rx_max_coalesced_frames > DMS_NIC_ITR_MAX_FRAMES ||
	    ec->tx_max_coalesced_frames > DMS_NIC_ITR_MAX_FRAMES) {
		NL_SET_ERR_MSG_FMT_MOD(extack, "at most %u frames",
				       DMS_NIC_ITR_MAX_FRAMES);
		return -EINVAL;
	}
	coal->rx_usecs = ec->rx_coalesce_usecs;
	coal->rx_frames = ec->rx_max_coalesced_frames;
	coal->tx_usecs = ec->tx_coalesce_usecs;
	coal->tx_frames = ec->tx_max_coalesced_frames;
	/* While it is off NAPI leaves net_dim alone: start it afresh. */
	if (ec->use_adaptive_rx_coalesce && !coal->adaptive_rx)
		for (i = 0; i < priv->max_queues; i++)
			priv->qps[i].rx_dim.state = DIM_START_MEASURE;
	WRITE_ONCE(coal->adaptive_rx, !!ec->use_adaptive_rx_coalesce);
	if (!priv->datapath_up)
		return 0;
	for (i = 0; i < priv->num_queues; i++) {
		struct dmsnic_qp *qp = &priv->qps[i];

		if (!qp->hw_up)
			continue;
		if (!coal->adaptive_rx)
			cancel_work_sync(&qp->rx_dim.work);
		dmsnic_qp_coal_apply(qp);
	}
	return 0;
}

const struct ethtool_ops dmsnic_ethtool_ops = {
	.supported_coalesce_params = ETHTOOL_COALESCE_USECS |
				     ETHTOOL_COALESCE_MAX_FRAMES |
				     ETHTOOL_COALESCE_USE_ADAPTIVE_RX,
	.supported_ring_params	= ETHTOOL_RING_USE_TCP_DATA_SPLIT |
				  ETHTOOL_RING_USE_HDS_THRS,
	/* netif_set_real_num_queues() needs RTNL */
	.op_needs_rtnl		= ETHTOOL_OP_NEEDS_RTNL_SCHANNELS,
	/* RSS contexts, each with its own key, table and hashed fields; a
	 * rule to a context adds its queue to the table's (dmsnic_rss.c).
	 */
	.rxfh_indir_space	= DMS_NIC_RSS_INDIR_SIZE,
	.rxfh_max_num_contexts	= DMS_NIC_RSS_CONTEXTS,
	.rxfh_per_ctx_fields	= true,
	.rxfh_per_ctx_key	= true,
	.cap_rss_rxnfc_adds	= true,
	.supported_input_xfrm	= RXH_XFRM_SYM_XOR | RXH_XFRM_SYM_OR_XOR,
	.get_drvinfo		= dmsnic_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_coalesce		= dmsnic_get_coalesce,
	.set_coalesce		= dmsnic_set_coalesce,
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
	.get_rxfh_fields	= dmsnic_get_rxfh_fields,
	.set_rxfh_fields	= dmsnic_set_rxfh_fields,
	.create_rxfh_context	= dmsnic_create_rxfh_context,
	.modify_rxfh_context	= dmsnic_modify_rxfh_context,
	.remove_rxfh_context	= dmsnic_remove_rxfh_context,
	.get_ts_info		= dmsnic_get_ts_info,
	.get_pauseparam		= dmsnic_get_pauseparam,
	.set_pauseparam		= dmsnic_set_pauseparam,
	.get_pause_stats	= dmsnic_get_pause_stats,
	.get_fecparam		= dmsnic_get_fecparam,
	.get_fec_stats		= dmsnic_get_fec_stats,
	.get_eth_mac_stats	= dmsnic_get_eth_mac_stats,
	.get_eth_ctrl_stats	= dmsnic_get_eth_ctrl_stats,
	.get_rmon_stats		= dmsnic_get_rmon_stats,
};
