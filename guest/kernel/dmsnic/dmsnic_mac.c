// SPDX-License-Identifier: GPL-2.0
/*
 * dmsnic: what the MAC reports (NIC v1.6): PAUSE settings and counters
 * (the MAC does no flow control: settings off, received PAUSE frames
 * counted and dropped) and its RS(528,514) FEC with a codeword histogram;
 * (v1.8) its IEEE 802.3 MAC and MAC control counters and RMON length
 * histograms.
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

/* The MSTAT histogram bins (nic_regs.h), lengths with FCS. */
static const struct ethtool_rmon_hist_range dmsnic_rmon_ranges[] = {
	{ 0, DMS_NIC_MSTAT_BIN0_HI },
	{ DMS_NIC_MSTAT_BIN0_HI + 1, DMS_NIC_MSTAT_BIN1_HI },
	{ DMS_NIC_MSTAT_BIN1_HI + 1, DMS_NIC_MSTAT_BIN2_HI },
	{ DMS_NIC_MSTAT_BIN2_HI + 1, DMS_NIC_MSTAT_BIN3_HI },
	{ DMS_NIC_MSTAT_BIN3_HI + 1, DMS_NIC_MSTAT_BIN4_HI },
	{ DMS_NIC_MSTAT_BIN4_HI + 1, DMS_NIC_MSTAT_BIN5_HI },
	{ DMS_NIC_MSTAT_BIN5_HI + 1, DMS_NIC_MSTAT_BIN6_HI },
	{ 0, 0 },
};

static_assert(ARRAY_SIZE(dmsnic_rmon_ranges) == DMS_NIC_MSTAT_BINS + 1);

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

/*
 * The MAC has no flow control to turn on. One that could send PAUSE
 * would restart the queue pairs on a change here, so that the RX queues'
 * DROP_EN follows it (dmsnic_mac_sends_pause()), as ixgbe's
 * set_pauseparam resets the port.
 */
int dmsnic_set_pauseparam(struct net_device *netdev,
			  struct ethtool_pauseparam *pause)
{
	if (pause->autoneg || pause->rx_pause || pause->tx_pause)
		return -EOPNOTSUPP;
	return 0;
}

/*
 * Whether the MAC sends PAUSE frames when its receive side backs up:
 * then a frame an RX queue has no buffers for must wait, so that the
 * link partner is paused rather than frames lost (no DROP_EN). This MAC
 * never does (MAC_PAUSE reads 0).
 */
bool dmsnic_mac_sends_pause(struct dmsnic_priv *priv)
{
	return dmsnic_has_mac_stats(priv) &&
	       (dmsnic_rd32(priv, DMS_NIC_REG_MAC_PAUSE) & DMS_NIC_PAUSE_TX);
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

static bool dmsnic_has_std_stats(struct dmsnic_priv *priv)
{
	return priv->caps & DMS_NIC_CAP_MAC_STD_STATS;
}

/* MSTAT counter i: reading _LO latches _HI. */
static u64 dmsnic_mstat(struct dmsnic_priv *priv, unsigned int i)
{
	u32 lo = dmsnic_rd32(priv, DMS_NIC_REG_MSTAT_LO(i));

	return (u64)dmsnic_rd32(priv, DMS_NIC_REG_MSTAT_HI(i)) << 32 | lo;
}

/*
 * The link is full duplex: no collisions, deferrals or carrier sense, so
 * those counters stay unset; on a byte-wide wire no frame is misaligned.
 */
void dmsnic_get_eth_mac_stats(struct net_device *netdev,
			      struct ethtool_eth_mac_stats *s)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	if (!dmsnic_has_std_stats(priv))
		return;
	s->FramesTransmittedOK = dmsnic_mstat(priv, DMS_NIC_MSTAT_TX_OK);
	s->OctetsTransmittedOK = dmsnic_mstat(priv, DMS_NIC_MSTAT_TX_OCTETS);
	s->MulticastFramesXmittedOK = dmsnic_mstat(priv, DMS_NIC_MSTAT_TX_MCAST);
	s->BroadcastFramesXmittedOK = dmsnic_mstat(priv, DMS_NIC_MSTAT_TX_BCAST);
	s->FramesLostDueToIntMACXmitError =
		dmsnic_mstat(priv, DMS_NIC_MSTAT_TX_MAC_ERR);
	s->FramesReceivedOK = dmsnic_mstat(priv, DMS_NIC_MSTAT_RX_OK);
	s->OctetsReceivedOK = dmsnic_mstat(priv, DMS_NIC_MSTAT_RX_OCTETS);
	s->MulticastFramesReceivedOK = dmsnic_mstat(priv, DMS_NIC_MSTAT_RX_MCAST);
	s->BroadcastFramesReceivedOK = dmsnic_mstat(priv, DMS_NIC_MSTAT_RX_BCAST);
	s->FramesLostDueToIntMACRcvError =
		dmsnic_mstat(priv, DMS_NIC_MSTAT_RX_MAC_ERR);
	s->InRangeLengthErrors = dmsnic_mstat(priv, DMS_NIC_MSTAT_RX_LEN_ERR);
	s->OutOfRangeLengthField = dmsnic_mstat(priv, DMS_NIC_MSTAT_RX_LEN_RANGE);
	s->FrameTooLongErrors = dmsnic_mstat(priv, DMS_NIC_MSTAT_RX_TOO_LONG);
}

void dmsnic_get_eth_ctrl_stats(struct net_device *netdev,
			       struct ethtool_eth_ctrl_stats *s)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	if (!dmsnic_has_std_stats(priv))
		return;
	s->MACControlFramesTransmitted = dmsnic_mstat(priv, DMS_NIC_MSTAT_TX_CTRL);
	s->MACControlFramesReceived = dmsnic_mstat(priv, DMS_NIC_MSTAT_RX_CTRL);
}

void dmsnic_get_rmon_stats(struct net_device *netdev,
			   struct ethtool_rmon_stats *s,
			   const struct ethtool_rmon_hist_range **ranges)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	unsigned int b;

	if (!dmsnic_has_std_stats(priv))
		return;
	s->oversize_pkts = dmsnic_mstat(priv, DMS_NIC_MSTAT_RX_TOO_LONG);
	for (b = 0; b < DMS_NIC_MSTAT_BINS; b++) {
		s->hist[b] = dmsnic_mstat(priv, DMS_NIC_MSTAT_RX_HIST(b));
		s->hist_tx[b] = dmsnic_mstat(priv, DMS_NIC_MSTAT_TX_HIST(b));
	}
	*ranges = dmsnic_rmon_ranges;
}
