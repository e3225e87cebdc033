// SPDX-License-Identifier: GPL-2.0
/*
 * dmsnic: net-shaper operations. The device (NIC v1.6) limits the TX rate
 * of each queue and of the whole device with token buckets (TXQ_RATE_KBPS
 * and TXQ_BURST, TX_RATE_KBPS and TX_BURST): queue and netdev scope
 * shapers with a maximum rate in bits per second and a burst in bytes.
 * From v1.8 (DMS_NIC_CAP_TX_SCHED_NODES) its TX scheduler also has
 * DMS_NIC_TXS_NODES nodes, token buckets nested under one another that
 * queues attach to, and queue weights that share a node (or the device)
 * among its busy queues: node scope shapers, nesting, and queue weights,
 * set up by the group operation. A node shaper's id is the hardware
 * node's number: the core hands out the lowest free id.
 */
#include <linux/netdevice.h>
#include <net/net_shaper.h>

#include "dmsnic.h"

static struct dmsnic_priv *dmsnic_shaper_priv(struct net_shaper_binding *b)
{
	return netdev_priv(b->netdev);
}

static bool dmsnic_shaper_has_nodes(const struct dmsnic_priv *priv)
{
	return priv->caps & DMS_NIC_CAP_TX_SCHED_NODES;
}

/* bit/s to the device's 1000 bit/s units; 0 stays "no limit". */
static u32 dmsnic_shaper_kbps(u64 bps)
{
	return bps ? min_t(u64, DIV_ROUND_UP_ULL(bps, 1000), U32_MAX) : 0;
}

/* A parent as TXS_Q_NODE and TXS_NODE_PARENT say it: node n is n + 1. */
static u32 dmsnic_shaper_node_ref(const struct net_shaper_handle *parent)
{
	if (parent->scope == NET_SHAPER_SCOPE_NODE)
		return parent->id + 1;
	return DMS_NIC_TXS_NONE;
}

static void dmsnic_shaper_write_rate(struct dmsnic_priv *priv,
				     const struct net_shaper_handle *h,
				     u32 kbps, u32 burst)
{
	struct dmsnic_qp *qp;

	switch (h->scope) {
	case NET_SHAPER_SCOPE_QUEUE:
		qp = &priv->qps[h->id];
		dmsnic_q_wr32(qp, DMS_NIC_TXQ_BURST, burst);
		dmsnic_q_wr32(qp, DMS_NIC_TXQ_RATE_KBPS, kbps);
		break;
	case NET_SHAPER_SCOPE_NODE:
		dmsnic_wr32(priv, DMS_NIC_REG_TXS_NODE_BURST(h->id), burst);
		dmsnic_wr32(priv, DMS_NIC_REG_TXS_NODE_RATE_KBPS(h->id), kbps);
		break;
	default:
		dmsnic_wr32(priv, DMS_NIC_REG_TX_BURST, burst);
		dmsnic_wr32(priv, DMS_NIC_REG_TX_RATE_KBPS, kbps);
		break;
	}
}

/* A queue's place in the scheduler: the node it pays into, its weight. */
static void dmsnic_shaper_write_place(struct dmsnic_priv *priv, u32 queue,
				      u32 node, u32 weight)
{
	if (!dmsnic_shaper_has_nodes(priv))
		return;
	dmsnic_wr32(priv, DMS_NIC_REG_TXS_Q_SEL, queue);
	dmsnic_wr32(priv, DMS_NIC_REG_TXS_Q_NODE, node);
	dmsnic_wr32(priv, DMS_NIC_REG_TXS_Q_WEIGHT, weight);
}

/* All the device holds of a shaper; bursts below its minimum read back
 * as that minimum.
 */
static void dmsnic_shaper_write(struct dmsnic_priv *priv,
				const struct net_shaper *s)
{
	const struct net_shaper_handle *h = &s->handle;

	dmsnic_shaper_write_rate(priv, h, dmsnic_shaper_kbps(s->bw_max),
				 s->burst);
	if (h->scope == NET_SHAPER_SCOPE_QUEUE)
		dmsnic_shaper_write_place(priv, h->id,
					  dmsnic_shaper_node_ref(&s->parent),
					  s->weight);
	else if (h->scope == NET_SHAPER_SCOPE_NODE)
		dmsnic_wr32(priv, DMS_NIC_REG_TXS_NODE_PARENT(h->id),
			    dmsnic_shaper_node_ref(&s->parent));
}

/* Back to no limit, no node, no weight. */
static void dmsnic_shaper_clear(struct dmsnic_priv *priv,
				const struct net_shaper_handle *h)
{
	const struct net_shaper none = { .handle = *h };

	dmsnic_shaper_write(priv, &none);
}

static int dmsnic_shaper_check_handle(struct dmsnic_priv *priv,
				      const struct net_shaper_handle *h,
				      struct netlink_ext_ack *extack)
{
	switch (h->scope) {
	case NET_SHAPER_SCOPE_NETDEV:
		return 0;
	case NET_SHAPER_SCOPE_QUEUE:
		if (h->id < priv->max_queues)
			return 0;
		NL_SET_ERR_MSG_MOD(extack, "no such queue");
		return -ENOENT;
	case NET_SHAPER_SCOPE_NODE:
		if (!dmsnic_shaper_has_nodes(priv))
			break;
		if (h->id < DMS_NIC_TXS_NODES)
			return 0;
		NL_SET_ERR_MSG_MOD(extack, "all TX scheduler nodes are in use");
		return -ENOSPC;
	default:
		break;
	}
	NL_SET_ERR_MSG_MOD(extack, "no shapers of this scope");
	return -EOPNOTSUPP;
}

static int dmsnic_shaper_check(struct dmsnic_priv *priv,
			       const struct net_shaper *s,
			       struct netlink_ext_ack *extack)
{
	int err;

	err = dmsnic_shaper_check_handle(priv, &s->handle, extack);
	if (err)
		return err;
	if (s->metric != NET_SHAPER_METRIC_BPS) {
		NL_SET_ERR_MSG_MOD(extack, "rates are in bits per second");
		return -EOPNOTSUPP;
	}
	if (s->burst > DMS_NIC_TX_BURST_MAX) {
		NL_SET_ERR_MSG_MOD(extack, "burst is at most 16 MiB");
		return -ERANGE;
	}
	if (s->weight > DMS_NIC_TXS_WEIGHT_MAX) {
		NL_SET_ERR_MSG_MOD(extack, "weight is at most 65535");
		return -ERANGE;
	}
	return 0;
}

static int dmsnic_shaper_set(struct net_shaper_binding *binding,
			     const struct net_shaper *shaper,
			     struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv = dmsnic_shaper_priv(binding);
	int err;

	err = dmsnic_shaper_check(priv, shaper, extack);
	if (err)
		return err;
	dmsnic_shaper_write(priv, shaper);
	return 0;
}

/*
 * The core passes the node (new or existing, or the netdev) with its
 * parent, and the leaves with their parent set to the node: queues, or
 * nodes when it moves the children of a node being deleted up a level.
 * Everything is checked before the device sees any of it.
 */
static int dmsnic_shaper_group(struct net_shaper_binding *binding,
			       int leaves_count,
			       const struct net_shaper *leaves,
			       const struct net_shaper *node,
			       struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv = dmsnic_shaper_priv(binding);
	int i, err;

	err = dmsnic_shaper_check(priv, node, extack);
	for (i = 0; !err && i < leaves_count; i++)
		err = dmsnic_shaper_check(priv, &leaves[i], extack);
	if (err)
		return err;
	dmsnic_shaper_write(priv, node);
	for (i = 0; i < leaves_count; i++)
		dmsnic_shaper_write(priv, &leaves[i]);
	return 0;
}

/* The core moves a node's children to its parent (.group) first. */
static int dmsnic_shaper_delete(struct net_shaper_binding *binding,
				const struct net_shaper_handle *handle,
				struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv = dmsnic_shaper_priv(binding);
	int err;

	err = dmsnic_shaper_check_handle(priv, handle, extack);
	if (err)
		return err;
	dmsnic_shaper_clear(priv, handle);
	return 0;
}

/*
 * When the channel count shrinks, the core forgets the shapers of the
 * queues that went away without calling .delete (deleting the nodes that
 * it leaves empty), and leaves the queues' hardware state to the driver
 * (net_shaper_set_real_num_tx_queues()). Lift the limits of queues
 * @from..@to - 1 and take them out of their nodes, so that a queue that
 * comes back later is unlimited and on its own, as the core then reports.
 */
void dmsnic_shaper_forget_queues(struct dmsnic_priv *priv, u32 from, u32 to)
{
	struct net_shaper_handle h = { .scope = NET_SHAPER_SCOPE_QUEUE };

	if (!(priv->caps & DMS_NIC_CAP_TX_RATE))
		return;
	for (h.id = from; h.id < to; h.id++)
		dmsnic_shaper_clear(priv, &h);
}

static void dmsnic_shaper_capabilities(struct net_shaper_binding *binding,
				       enum net_shaper_scope scope,
				       unsigned long *flags)
{
	const unsigned long rate = BIT(NET_SHAPER_A_CAPS_SUPPORT_METRIC_BPS) |
				   BIT(NET_SHAPER_A_CAPS_SUPPORT_BW_MAX) |
				   BIT(NET_SHAPER_A_CAPS_SUPPORT_BURST);
	const unsigned long nest = BIT(NET_SHAPER_A_CAPS_SUPPORT_NESTING);
	struct dmsnic_priv *priv = dmsnic_shaper_priv(binding);
	bool nodes = dmsnic_shaper_has_nodes(priv);

	if (!(priv->caps & DMS_NIC_CAP_TX_RATE))
		return;
	switch (scope) {
	case NET_SHAPER_SCOPE_QUEUE:
		*flags = rate;
		if (nodes)
			*flags |= nest | BIT(NET_SHAPER_A_CAPS_SUPPORT_WEIGHT);
		break;
	case NET_SHAPER_SCOPE_NODE:
		if (nodes)
			*flags = rate | nest;
		break;
	case NET_SHAPER_SCOPE_NETDEV:
		*flags = rate;
		break;
	default:
		break;
	}
}

const struct net_shaper_ops dmsnic_shaper_ops = {
	.group		= dmsnic_shaper_group,
	.set		= dmsnic_shaper_set,
	.delete		= dmsnic_shaper_delete,
	.capabilities	= dmsnic_shaper_capabilities,
};
