// SPDX-License-Identifier: GPL-2.0
/*
 * dmsnic: what the MAC reports (NIC v1.6): PAUSE settings and counters
 * (the MAC does no flow control: settings off, received PAUSE frames
 * counted and dropped) and its RS(528,514) FEC with a codeword histogram.
 */
#include <linux/ethtool.h>
#include <linux/netdevice.h>

#include "dmsnic.h"

/* Codewords by symbol errors corrected: none, and 1..7 (RS(528,514)'s t). */
static const struct ethtool_fec_hist_range dmsnic_fec_ranges[] = {
	{ 0, 0 },
	{ 1, 7 },
	{ 0, 0 },
};

static bool dmsnic_has_mac_stats(struct dmsnic_priv *priv)
{
	return priv->caps & DMS_NIC_CAP_MAC_STATS;
}

void dmsnic_get_pauseparam(struct net_device *netdev,
			   struct ethtool_pauseparam *pause)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	u32 p = dmsnic_has_mac_stats(priv) ?
		dmsnic_rd32(priv, DMS_NIC_REG_MAC_PAUSE) : 0;

	pause->autoneg = !!(p & DMS_NIC_PAUSE_AUTONEG);
	pause->rx_pause = !!(p & DMS_NIC_PAUSE_RX);
	pause->tx_pause = !!(p & DMS_NIC_PAUSE_TX);
}

/* The MAC has no flow control to turn on. */
int dmsnic_set_pauseparam(struct net_device *netdev,
			  struct ethtool_pauseparam *pause)
{
	if (pause->autoneg || pause->rx_pause || pause->tx_pause)
		return -EOPNOTSUPP;
	return 0;
}

/*
 * The device's PAUSE counters are 32 bits and wrap; at most one PAUSE
 * frame per 512 bit times (802.3 annex 31B) they cannot wrap between two
 * reads a stats query apart, so they are reported as they are read.
 */
void dmsnic_get_pause_stats(struct net_device *netdev,
			    struct ethtool_pause_stats *stats)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	if (!dmsnic_has_mac_stats(priv))
		return;
	stats->tx_pause_frames = dmsnic_rd32(priv, DMS_NIC_REG_PAUSE_TX_FRAMES);
	stats->rx_pause_frames = dmsnic_rd32(priv, DMS_NIC_REG_PAUSE_RX_FRAMES);
}

int dmsnic_get_fecparam(struct net_device *netdev,
			struct ethtool_fecparam *fec)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	if (!dmsnic_has_mac_stats(priv))
		return -EOPNOTSUPP;
	if (dmsnic_rd32(priv, DMS_NIC_REG_FEC_MODE) == DMS_NIC_FEC_RS)
		fec->active_fec = ETHTOOL_FEC_RS;
	else
		fec->active_fec = ETHTOOL_FEC_OFF;
	fec->fec = fec->active_fec;
	return 0;
}

void dmsnic_get_fec_stats(struct net_device *netdev,
			  struct ethtool_fec_stats *stats,
			  struct ethtool_fec_hist *hist)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	u32 lo, hi;

	if (!dmsnic_has_mac_stats(priv))
		return;
	stats->corrected_blocks.total = dmsnic_rd32(priv, DMS_NIC_REG_FEC_CORRECTED);
	stats->uncorrectable_blocks.total = dmsnic_rd32(priv, DMS_NIC_REG_FEC_UNCORR);
	hist->ranges = dmsnic_fec_ranges;
	lo = dmsnic_rd32(priv, DMS_NIC_REG_FEC_CW_LO);	/* latches HI */
	hi = dmsnic_rd32(priv, DMS_NIC_REG_FEC_CW_HI);
	hist->values[0].sum = (u64)hi << 32 | lo;
	hist->values[1].sum = stats->corrected_blocks.total;
}
