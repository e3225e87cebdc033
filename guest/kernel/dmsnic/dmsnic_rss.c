// SPDX-License-Identifier: GPL-2.0
/*
 * dmsnic RSS: the default context's key and indirection table, additional
 * RSS contexts (each with its own key, table, hashed fields and input
 * transform, all held by the device), the hashed fields per flow type and
 * the table size, which follows the channel count (ethtool -x/-X, -n/-N
 * rx-flow-hash, -L).
 */
#include <linux/ethtool.h>
#include <linux/log2.h>
#include <linux/netdevice.h>
#include <linux/unaligned.h>

#include "dmsnic.h"

/* Entries per queue in a table the driver sizes (scaling.rst: at least 4). */
#define DMSNIC_RSS_ENTRIES_PER_QUEUE	4

/* Device field bits of a flow class by RXH_* bit. */
static const struct {
	u32 rxh;
	u32 dev;
} dmsnic_rss_field_map[] = {
	{ RXH_IP_SRC, DMS_NIC_RSS_F_IP_SRC },
	{ RXH_IP_DST, DMS_NIC_RSS_F_IP_DST },
	{ RXH_L4_B_0_1, DMS_NIC_RSS_F_L4_SRC },
	{ RXH_L4_B_2_3, DMS_NIC_RSS_F_L4_DST },
	{ RXH_IP6_FL, DMS_NIC_RSS_F_FLOW_LABEL },
};

static bool dmsnic_rss_has(const struct dmsnic_priv *priv, u32 cap)
{
	return priv->caps & cap;
}

/* The device's flow class of an ethtool flow type, or -EOPNOTSUPP. */
static int dmsnic_rss_class(u32 flow_type)
{
	switch (flow_type) {
	case TCP_V4_FLOW:
		return DMS_NIC_RSS_CLASS_TCP4;
	case UDP_V4_FLOW:
		return DMS_NIC_RSS_CLASS_UDP4;
	case IPV4_FLOW:
		return DMS_NIC_RSS_CLASS_IP4;
	case TCP_V6_FLOW:
		return DMS_NIC_RSS_CLASS_TCP6;
	case UDP_V6_FLOW:
		return DMS_NIC_RSS_CLASS_UDP6;
	case IPV6_FLOW:
		return DMS_NIC_RSS_CLASS_IP6;
	default:
		return -EOPNOTSUPP;
	}
}

/* The fields a class can hash, as device bits. */
static u32 dmsnic_rss_class_fields(int cls)
{
	u32 f = DMS_NIC_RSS_F_IP_SRC | DMS_NIC_RSS_F_IP_DST;
	bool v6 = cls >= DMS_NIC_RSS_CLASS_TCP6;

	if (cls != DMS_NIC_RSS_CLASS_IP4 && cls != DMS_NIC_RSS_CLASS_IP6)
		f |= DMS_NIC_RSS_F_L4_SRC | DMS_NIC_RSS_F_L4_DST;
	if (v6)
		f |= DMS_NIC_RSS_F_FLOW_LABEL;
	return f;
}

/* The device's reset fields: all but the flow label. */
static void dmsnic_rss_default_hash(struct dmsnic_rss_hash *h)
{
	int cls;

	for (cls = 0; cls < DMS_NIC_RSS_CLASSES; cls++)
		h->fields[cls] = dmsnic_rss_class_fields(cls) &
				 ~DMS_NIC_RSS_F_FLOW_LABEL;
	h->xfrm = 0;
}

/* Key bytes: 52 on a v1.7 device (the flow label reaches the queue). */
static u32 dmsnic_rss_key_size(const struct dmsnic_priv *priv)
{
	return dmsnic_rss_has(priv, DMS_NIC_CAP_RSS_KEY52) ?
	       DMS_NIC_RSS_KEY52_SIZE : DMS_NIC_RSS_KEY_SIZE;
}

/* Table entries for @n queues: a power of two, 4 per queue, within the
 * device's table; a fixed full table on a device without table sizes.
 */
u32 dmsnic_rss_indir_size(const struct dmsnic_priv *priv, u32 n)
{
	if (!dmsnic_rss_has(priv, DMS_NIC_CAP_RSS_CTX))
		return DMS_NIC_RSS_INDIR_SIZE;
	return min_t(u32, roundup_pow_of_two(DMSNIC_RSS_ENTRIES_PER_QUEUE * n),
		     DMS_NIC_RSS_INDIR_SIZE);
}

static u32 dmsnic_rss_xfrm_reg(u8 xfrm)
{
	if (xfrm & RXH_XFRM_SYM_OR_XOR)
		return DMS_NIC_RSS_XFRM_SYM_OR_XOR;
	if (xfrm & RXH_XFRM_SYM_XOR)
		return DMS_NIC_RSS_XFRM_SYM_XOR;
	return DMS_NIC_RSS_XFRM_NONE;
}

/*
 * Key and/or table (@size entries) of context @id into the device; a
 * device without contexts has context 0 only, with a full table.
 * Caller holds rss_hw_lock: RSS_CTX_SEL is one register for all contexts.
 */
static void dmsnic_rss_write_table(struct dmsnic_priv *priv, u32 id,
				   const u32 *indir, u32 size, const u8 *key)
{
	u32 i, ext;

	lockdep_assert_held(&priv->rss_hw_lock);
	if (!dmsnic_rss_has(priv, DMS_NIC_CAP_RSS_CTX)) {
		for (i = 0; key && i < DMS_NIC_RSS_KEY_WORDS; i++)
			dmsnic_wr32(priv, DMS_NIC_REG_RSS_KEY(i),
				    get_unaligned_le32(&key[4 * i]));
		for (i = 0; indir && i < DMS_NIC_RSS_INDIR_SIZE; i++)
			dmsnic_wr32(priv, DMS_NIC_REG_RSS_INDIR(i),
				    indir[i % size]);
		return;
	}
	dmsnic_wr32(priv, DMS_NIC_REG_RSS_CTX_SEL, id);
	for (i = 0; key && i < DMS_NIC_RSS_KEY_WORDS; i++)
		dmsnic_wr32(priv, DMS_NIC_REG_RSS_CTX_KEY(i),
			    get_unaligned_le32(&key[4 * i]));
	ext = dmsnic_rss_has(priv, DMS_NIC_CAP_RSS_KEY52) ?
	      DMS_NIC_RSS_KEY_EXT_WORDS : 0;
	for (i = 0; key && i < ext; i++)
		dmsnic_wr32(priv, DMS_NIC_REG_RSS_CTX_KEY_EXT(i),
			    get_unaligned_le32(&key[DMS_NIC_RSS_KEY_SIZE + 4 * i]));
	if (!indir)
		return;
	dmsnic_wr32(priv, DMS_NIC_REG_RSS_CTX_INDIR_SIZE, size);
	for (i = 0; i < size; i++)
		dmsnic_wr32(priv, DMS_NIC_REG_RSS_CTX_INDIR(i), indir[i]);
}

/* Hashed fields and input transform of context @id into the device. */
static void dmsnic_rss_write_hash(struct dmsnic_priv *priv, u32 id)
{
	const struct dmsnic_rss_hash *h = &priv->rss_hash[id];
	int cls;

	lockdep_assert_held(&priv->rss_hw_lock);
	if (!dmsnic_rss_has(priv, DMS_NIC_CAP_RSS_FIELDS))
		return;
	dmsnic_wr32(priv, DMS_NIC_REG_RSS_CTX_SEL, id);
	for (cls = 0; cls < DMS_NIC_RSS_CLASSES; cls++)
		dmsnic_wr32(priv, DMS_NIC_REG_RSS_CTX_FIELDS(cls),
			    h->fields[cls]);
	if (dmsnic_rss_has(priv, DMS_NIC_CAP_RSS_SYM))
		dmsnic_wr32(priv, DMS_NIC_REG_RSS_CTX_XFRM,
			    dmsnic_rss_xfrm_reg(h->xfrm));
}

/* The default context, whole, into the device (probe). */
void dmsnic_write_rss(struct dmsnic_priv *priv)
{
	mutex_lock(&priv->rss_hw_lock);
	dmsnic_rss_write_table(priv, 0, priv->rss_indir, priv->rss_indir_size,
			       priv->rss_key);
	dmsnic_rss_write_hash(priv, 0);
	mutex_unlock(&priv->rss_hw_lock);
}

void dmsnic_rss_default_indir(struct dmsnic_priv *priv)
{
	u32 i;

	for (i = 0; i < priv->rss_indir_size; i++)
		priv->rss_indir[i] = ethtool_rxfh_indir_default(i,
								priv->num_queues);
	mutex_lock(&priv->rss_hw_lock);
	dmsnic_rss_write_table(priv, 0, priv->rss_indir, priv->rss_indir_size,
			       NULL);
	mutex_unlock(&priv->rss_hw_lock);
}

/* Capabilities and the default context (probe, before the first write). */
void dmsnic_rss_init(struct dmsnic_priv *priv)
{
	u32 i;

	mutex_init(&priv->rss_hw_lock);
	netdev_rss_key_fill(priv->rss_key, dmsnic_rss_key_size(priv));
	priv->rss_indir_size = dmsnic_rss_indir_size(priv, priv->num_queues);
	for (i = 0; i < priv->rss_indir_size; i++)
		priv->rss_indir[i] = ethtool_rxfh_indir_default(i,
								priv->num_queues);
	for (i = 0; i < DMS_NIC_RSS_CONTEXTS; i++)
		dmsnic_rss_default_hash(&priv->rss_hash[i]);
}

/* ---- Rules into contexts ---- */

static u32 dmsnic_rss_table_max(const u32 *indir, u32 size)
{
	u32 i, max = 0;

	for (i = 0; i < size; i++)
		max = max(max, indir[i]);
	return max;
}

/*
 * A flow-steering rule into an RSS context sends a flow to its queue plus
 * the context's table entry (datasheet, RSS); the device drops what goes
 * to a queue that is not in use. Rules are checked when they are inserted,
 * and a table or channel change that would take one beyond the queues in
 * use is refused, as the ethtool core refuses -L below a queue a rule or a
 * table names: remapping would quietly move flows the user placed.
 * Returns the first rule into context @id whose queue plus @max is at or
 * beyond @n, or -1.
 */
static int dmsnic_rss_rule_beyond(struct dmsnic_priv *priv, u32 id, u32 max,
				  u32 n)
{
	const struct ethtool_rx_flow_spec *fs;
	u32 loc;

	for_each_set_bit(loc, priv->ntuple_used, priv->ntuple_size) {
		fs = &priv->ntuple[loc];
		if ((fs->flow_type & FLOW_RSS) && priv->ntuple_ctx[loc] == id &&
		    ethtool_get_flow_spec_ring(fs->ring_cookie) + max >= n)
			return loc;
	}
	return -1;
}

/* A new table for context @id (-X): 0, or -EINVAL if a rule would leave. */
static int dmsnic_rss_table_check(struct dmsnic_priv *priv, u32 id,
				  const u32 *indir, u32 size,
				  struct netlink_ext_ack *extack)
{
	u32 max = dmsnic_rss_table_max(indir, size);
	int loc = dmsnic_rss_rule_beyond(priv, id, max, priv->num_queues);

	if (loc < 0)
		return 0;
	NL_SET_ERR_MSG_FMT_MOD(extack,
			       "flow steering rule %d into RSS context %u would reach queue %llu of %u",
			       loc, id, max +
			       ethtool_get_flow_spec_ring(priv->ntuple[loc].ring_cookie),
			       priv->num_queues);
	return -EINVAL;
}

/*
 * Whether every rule into a context reaches a queue below @n after -L: the
 * other contexts' tables and a table set with -X keep their entries (they
 * are folded or unfolded), the default table is rebuilt over @n queues.
 */
static int dmsnic_rss_rules_check(struct dmsnic_priv *priv, u32 n)
{
	u64 queue;
	u32 loc, id, max;
	int err;

	for_each_set_bit(loc, priv->ntuple_used, priv->ntuple_size) {
		if (!(priv->ntuple[loc].flow_type & FLOW_RSS))
			continue;
		id = priv->ntuple_ctx[loc];
		max = n - 1;
		if (id || netif_is_rxfh_configured(priv->netdev)) {
			err = dmsnic_rss_ctx_max_queue(priv, id, &max);
			if (err)
				return err;
		}
		queue = ethtool_get_flow_spec_ring(priv->ntuple[loc].ring_cookie) +
			max;
		if (queue < n)
			continue;
		netdev_warn(priv->netdev,
			    "flow steering rule %u into RSS context %u would reach queue %llu of %u\n",
			    loc, id, queue, n);
		return -EINVAL;
	}
	return 0;
}

/* ---- Table size and channel changes (ethtool -L) ---- */

/*
 * Whether every table can take the size @n queues need (folded or
 * unfolded, never rewritten) and every rule into a context stays within
 * @n queues: 0, or the error ethtool -L returns.
 */
int dmsnic_rss_channels_check(struct dmsnic_priv *priv, u32 n)
{
	struct net_device *netdev = priv->netdev;
	u32 size = dmsnic_rss_indir_size(priv, n);
	int err = dmsnic_rss_rules_check(priv, n);

	if (err || size == priv->rss_indir_size)
		return err;
	if (!ethtool_rxfh_indir_can_resize(netdev, priv->rss_indir,
					   priv->rss_indir_size, size)) {
		netdev_warn(netdev, "RSS table of %u entries cannot become %u\n",
			    priv->rss_indir_size, size);
		return -EINVAL;
	}
	return ethtool_rxfh_ctxs_can_resize(netdev, size);
}

/* After a channel change dmsnic_rss_channels_check() allowed. */
void dmsnic_rss_channels_changed(struct dmsnic_priv *priv)
{
	struct net_device *netdev = priv->netdev;
	u32 size = dmsnic_rss_indir_size(priv, priv->num_queues);
	struct ethtool_rxfh_context *ctx;
	unsigned long id;

	if (size != priv->rss_indir_size) {
		ethtool_rxfh_indir_resize(netdev, priv->rss_indir,
					  priv->rss_indir_size, size);
		ethtool_rxfh_ctxs_resize(netdev, size);
		priv->rss_indir_size = size;
		mutex_lock(&netdev->ethtool->rss_lock);
		mutex_lock(&priv->rss_hw_lock);
		dmsnic_rss_write_table(priv, 0, priv->rss_indir, size, NULL);
		xa_for_each(&netdev->ethtool->rss_ctx, id, ctx)
			dmsnic_rss_write_table(priv, id,
					       ethtool_rxfh_context_indir(ctx),
					       ctx->indir_size, NULL);
		mutex_unlock(&priv->rss_hw_lock);
		mutex_unlock(&netdev->ethtool->rss_lock);
	}
	/* The core refused the change if the table points beyond n. */
	if (!netif_is_rxfh_configured(netdev))
		dmsnic_rss_default_indir(priv);
}

/*
 * The largest queue a rule to context @id can reach: its table's largest
 * entry (context 0: the default table).
 */
int dmsnic_rss_ctx_max_queue(struct dmsnic_priv *priv, u32 id, u32 *max)
{
	struct net_device *netdev = priv->netdev;
	const u32 *indir = priv->rss_indir;
	u32 i, size = priv->rss_indir_size;
	struct ethtool_rxfh_context *ctx;
	int err = 0;

	*max = 0;
	mutex_lock(&netdev->ethtool->rss_lock);
	if (id) {
		ctx = xa_load(&netdev->ethtool->rss_ctx, id);
		if (!ctx) {
			err = -EINVAL;
			goto out;
		}
		indir = ethtool_rxfh_context_indir(ctx);
		size = ctx->indir_size;
	}
	for (i = 0; i < size; i++)
		*max = max(*max, indir[i]);
out:
	mutex_unlock(&netdev->ethtool->rss_lock);
	return err;
}

/* ---- Default context (ethtool -x/-X) ---- */

u32 dmsnic_get_rx_ring_count(struct net_device *netdev)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	return priv->num_queues;
}

u32 dmsnic_get_rxfh_key_size(struct net_device *netdev)
{
	return dmsnic_rss_key_size(netdev_priv(netdev));
}

u32 dmsnic_get_rxfh_indir_size(struct net_device *netdev)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	return priv->rss_indir_size;
}

int dmsnic_get_rxfh(struct net_device *netdev,
		    struct ethtool_rxfh_param *rxfh)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	rxfh->hfunc = ETH_RSS_HASH_TOP;
	rxfh->input_xfrm = priv->rss_hash[0].xfrm;
	if (rxfh->indir)
		memcpy(rxfh->indir, priv->rss_indir,
		       priv->rss_indir_size * sizeof(*rxfh->indir));
	if (rxfh->key)
		memcpy(rxfh->key, priv->rss_key, dmsnic_rss_key_size(priv));
	return 0;
}

/* What the device cannot do: another hash function, an unknown or a
 * double input transform.
 */
static int dmsnic_rss_check(struct dmsnic_priv *priv,
			    const struct ethtool_rxfh_param *rxfh,
			    struct netlink_ext_ack *extack)
{
	if (rxfh->hfunc != ETH_RSS_HASH_NO_CHANGE &&
	    rxfh->hfunc != ETH_RSS_HASH_TOP) {
		NL_SET_ERR_MSG_MOD(extack, "only the Toeplitz hash is supported");
		return -EOPNOTSUPP;
	}
	if (rxfh->input_xfrm == RXH_XFRM_NO_CHANGE || !rxfh->input_xfrm)
		return 0;
	if (!dmsnic_rss_has(priv, DMS_NIC_CAP_RSS_SYM) ||
	    hweight8(rxfh->input_xfrm) > 1) {
		NL_SET_ERR_MSG_MOD(extack, "one symmetric transform at a time");
		return -EOPNOTSUPP;
	}
	return 0;
}

int dmsnic_set_rxfh(struct net_device *netdev,
		    struct ethtool_rxfh_param *rxfh,
			   struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	int err = dmsnic_rss_check(priv, rxfh, extack);

	if (!err && rxfh->indir)
		err = dmsnic_rss_table_check(priv, 0, rxfh->indir,
					     priv->rss_indir_size, extack);
	if (err)
		return err;
	if (rxfh->indir)
		memcpy(priv->rss_indir, rxfh->indir,
		       priv->rss_indir_size * sizeof(*rxfh->indir));
	if (rxfh->key)
		memcpy(priv->rss_key, rxfh->key, dmsnic_rss_key_size(priv));
	if (rxfh->input_xfrm != RXH_XFRM_NO_CHANGE)
		priv->rss_hash[0].xfrm = rxfh->input_xfrm;
	mutex_lock(&priv->rss_hw_lock);
	dmsnic_rss_write_table(priv, 0, rxfh->indir ? priv->rss_indir : NULL,
			       priv->rss_indir_size,
			       rxfh->key ? priv->rss_key : NULL);
	dmsnic_rss_write_hash(priv, 0);
	mutex_unlock(&priv->rss_hw_lock);
	return 0;
}

/* ---- Hashed fields (ethtool -n/-N rx-flow-hash) ---- */

int dmsnic_get_rxfh_fields(struct net_device *netdev,
			   struct ethtool_rxfh_fields *f)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	int cls = dmsnic_rss_class(f->flow_type);
	u32 dev, i;

	if (cls < 0)
		return cls;
	if (f->rss_context >= DMS_NIC_RSS_CONTEXTS)
		return -EINVAL;
	dev = priv->rss_hash[f->rss_context].fields[cls];
	f->data = 0;
	for (i = 0; i < ARRAY_SIZE(dmsnic_rss_field_map); i++)
		if (dev & dmsnic_rss_field_map[i].dev)
			f->data |= dmsnic_rss_field_map[i].rxh;
	return 0;
}

int dmsnic_set_rxfh_fields(struct net_device *netdev,
			   const struct ethtool_rxfh_fields *f,
				  struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	int cls = dmsnic_rss_class(f->flow_type);
	u64 rest = f->data;
	u32 dev = 0, i;

	if (cls < 0)
		return cls;
	if (f->rss_context >= DMS_NIC_RSS_CONTEXTS ||
	    !dmsnic_rss_has(priv, DMS_NIC_CAP_RSS_FIELDS))
		return -EOPNOTSUPP;
	for (i = 0; i < ARRAY_SIZE(dmsnic_rss_field_map); i++) {
		if (rest & dmsnic_rss_field_map[i].rxh)
			dev |= dmsnic_rss_field_map[i].dev;
		rest &= ~(u64)dmsnic_rss_field_map[i].rxh;
	}
	if (rest || (dev & ~dmsnic_rss_class_fields(cls))) {
		NL_SET_ERR_MSG_MOD(extack, "the device cannot hash these fields");
		return -EINVAL;
	}
	priv->rss_hash[f->rss_context].fields[cls] = dev;
	mutex_lock(&priv->rss_hw_lock);
	dmsnic_rss_write_hash(priv, f->rss_context);
	mutex_unlock(&priv->rss_hw_lock);
	return 0;
}

/* ---- Additional contexts (ethtool -X ... context new/N/delete) ---- */

int dmsnic_modify_rxfh_context(struct net_device *netdev,
			       struct ethtool_rxfh_context *ctx,
				      const struct ethtool_rxfh_param *rxfh,
				      struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	u32 id = rxfh->rss_context;
	int err = dmsnic_rss_check(priv, rxfh, extack);

	if (!err && rxfh->indir)
		err = dmsnic_rss_table_check(priv, id, rxfh->indir,
					     ctx->indir_size, extack);
	if (err)
		return err;
	if (rxfh->input_xfrm != RXH_XFRM_NO_CHANGE)
		priv->rss_hash[id].xfrm = rxfh->input_xfrm;
	mutex_lock(&priv->rss_hw_lock);
	dmsnic_rss_write_table(priv, id, rxfh->indir, ctx->indir_size,
			       rxfh->key);
	dmsnic_rss_write_hash(priv, id);
	mutex_unlock(&priv->rss_hw_lock);
	return 0;
}

/*
 * A new context starts with the default table over the queues in use, the
 * default context's key, default fields and no transform unless @rxfh says
 * otherwise; what it does not give is filled into @ctx for the core.
 */
int dmsnic_create_rxfh_context(struct net_device *netdev,
			       struct ethtool_rxfh_context *ctx,
				      const struct ethtool_rxfh_param *rxfh,
				      struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	u32 id = rxfh->rss_context, *indir, i;
	struct ethtool_rxfh_param full = *rxfh;
	int err = dmsnic_rss_check(priv, rxfh, extack);

	if (err)
		return err;
	if (!dmsnic_rss_has(priv, DMS_NIC_CAP_RSS_CTX) ||
	    id >= DMS_NIC_RSS_CONTEXTS) {
		NL_SET_ERR_MSG_MOD(extack, "the device has no such RSS context");
		return -EOPNOTSUPP;
	}
	dmsnic_rss_default_hash(&priv->rss_hash[id]);
	if (!full.indir) {
		indir = ethtool_rxfh_context_indir(ctx);
		for (i = 0; i < ctx->indir_size; i++)
			indir[i] = ethtool_rxfh_indir_default(i,
							      priv->num_queues);
		full.indir = indir;
	}
	if (!full.key) {
		memcpy(ethtool_rxfh_context_key(ctx), priv->rss_key,
		       dmsnic_rss_key_size(priv));
		full.key = ethtool_rxfh_context_key(ctx);
	}
	if (rxfh->hfunc == ETH_RSS_HASH_NO_CHANGE)
		ctx->hfunc = ETH_RSS_HASH_TOP;
	if (rxfh->input_xfrm == RXH_XFRM_NO_CHANGE) {
		ctx->input_xfrm = 0;
		full.input_xfrm = 0;
	}
	return dmsnic_modify_rxfh_context(netdev, ctx, &full, extack);
}

/* The core removed the rules to it first (it refuses while one exists). */
int dmsnic_remove_rxfh_context(struct net_device *netdev,
			       struct ethtool_rxfh_context *ctx,
				      u32 rss_context,
				      struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	dmsnic_rss_default_hash(&priv->rss_hash[rss_context]);
	mutex_lock(&priv->rss_hw_lock);
	dmsnic_rss_write_hash(priv, rss_context);
	mutex_unlock(&priv->rss_hw_lock);
	return 0;
}
