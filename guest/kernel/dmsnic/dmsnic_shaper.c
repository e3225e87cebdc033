// SPDX-License-Identifier: GPL-2.0
/*
 * dmsnic: net-shaper operations. The device (NIC v1.6) limits the TX rate
 * of each queue and of the whole device with token buckets (TXQ_RATE_KBPS
 * and TXQ_BURST, TX_RATE_KBPS and TX_BURST): queue and netdev scope
 * shapers with a maximum rate in bits per second and a burst in bytes. It
 * has no scheduling groups, so there is no group operation.
 */
#include <linux/netdevice.h>
#include <net/net_shaper.h>

#include "dmsnic.h"

static struct dmsnic_priv *dmsnic_shaper_priv(struct net_shaper_binding *b)
{
	return netdev_priv(b->netdev);
}

/* bit/s to the device's 1000 bit/s units; 0 stays "no limit". */
static u32 dmsnic_shaper_kbps(u64 bps)
{
	return bps ? min_t(u64, DIV_ROUND_UP_ULL(bps, 1000), U32_MAX) : 0;
}

static void dmsnic_shaper_write(struct dmsnic_priv *priv,
				const struct net_shaper_handle *h,
				u32 kbps, u32 burst)
{
	if (h->scope == NET_SHAPER_SCOPE_QUEUE) {
		struct dmsnic_qp *qp = &priv->qps[h->id];

		dmsnic_q_wr32(qp, DMS_NIC_TXQ_BURST, burst);
		dmsnic_q_wr32(qp, DMS_NIC_TXQ_RATE_KBPS, kbps);
	} else {
		dmsnic_wr32(priv, DMS_NIC_REG_TX_BURST, burst);
		dmsnic_wr32(priv, DMS_NIC_REG_TX_RATE_KBPS, kbps);
	}
}

static int dmsnic_shaper_check(struct dmsnic_priv *priv,
			       const struct net_shaper_handle *h,
			       struct netlink_ext_ack *extack)
{
	if (h->scope == NET_SHAPER_SCOPE_NETDEV)
		return 0;
	if (h->scope != NET_SHAPER_SCOPE_QUEUE) {
		NL_SET_ERR_MSG_MOD(extack, "only queue and netdev shapers");
		return -EOPNOTSUPP;
	}
	if (h->id >= priv->max_queues) {
		NL_SET_ERR_MSG_MOD(extack, "no such queue");
		return -ENOENT;
	}
	return 0;
}

static int dmsnic_shaper_set(struct net_shaper_binding *binding,
			     const struct net_shaper *shaper,
			     struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv = dmsnic_shaper_priv(binding);
	int err;

	err = dmsnic_shaper_check(priv, &shaper->handle, extack);
	if (err)
		return err;
	if (shaper->metric != NET_SHAPER_METRIC_BPS) {
		NL_SET_ERR_MSG_MOD(extack, "rates are in bits per second");
		return -EOPNOTSUPP;
	}
	if (shaper->burst > DMS_NIC_TX_BURST_MAX) {
		NL_SET_ERR_MSG_MOD(extack, "burst is at most 16 MiB");
		return -ERANGE;
	}
	/* Bursts below the device's minimum read back as that minimum. */
	dmsnic_shaper_write(priv, &shaper->handle,
			    dmsnic_shaper_kbps(shaper->bw_max), shaper->burst);
	return 0;
}

static int dmsnic_shaper_delete(struct net_shaper_binding *binding,
				const struct net_shaper_handle *handle,
				struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv = dmsnic_shaper_priv(binding);
	int err;

	err = dmsnic_shaper_check(priv, handle, extack);
	if (err)
		return err;
	dmsnic_shaper_write(priv, handle, 0, 0);
	return 0;
}

static void dmsnic_shaper_capabilities(struct net_shaper_binding *binding,
				       enum net_shaper_scope scope,
				       unsigned long *flags)
{
	struct dmsnic_priv *priv = dmsnic_shaper_priv(binding);

	if (!(priv->caps & DMS_NIC_CAP_TX_RATE) ||
	    (scope != NET_SHAPER_SCOPE_QUEUE &&
	     scope != NET_SHAPER_SCOPE_NETDEV))
		return;
	*flags = BIT(NET_SHAPER_A_CAPS_SUPPORT_METRIC_BPS) |
		 BIT(NET_SHAPER_A_CAPS_SUPPORT_BW_MAX) |
		 BIT(NET_SHAPER_A_CAPS_SUPPORT_BURST);
}

const struct net_shaper_ops dmsnic_shaper_ops = {
	.set		= dmsnic_shaper_set,
	.delete		= dmsnic_shaper_delete,
	.capabilities	= dmsnic_shaper_capabilities,
};
