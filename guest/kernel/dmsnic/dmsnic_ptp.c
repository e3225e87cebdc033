// SPDX-License-Identifier: GPL-2.0
/*
 * dmsnic: the device's PTP hardware clock (a 64-bit nanosecond counter,
 * NIC v1.6) as a PHC, and hardware timestamps of received and sent frames.
 *
 * The device stamps frames with the low 47 (RX) or 32 (TX) bits of its
 * clock; the driver extends a stamp with a full clock read taken close to
 * it: for RX the read the aux worker refreshes every second, for TX a read
 * when the completion is handled (the stamp is older by far less than the
 * 2^31 ns the 32 bits cover).
 */
#include <linux/net_tstamp.h>
#include <linux/ptp_clock_kernel.h>

#include "dmsnic.h"

/* DMS_NIC_PTP_ADJ_FINE_MAX is scaled ppm (2^-16 ppm); max_adj is ppb. */
#define DMSNIC_PTP_MAX_ADJ_PPB	(DMS_NIC_PTP_ADJ_FINE_MAX / 65536 * 1000)
#define DMSNIC_PTP_REFRESH	HZ

static struct dmsnic_priv *dmsnic_ptp_priv(struct ptp_clock_info *info)
{
	return container_of(info, struct dmsnic_priv, ptp.info);
}

/* A latched read of the whole counter; the caller holds ptp.lock. */
static u64 dmsnic_ptp_read_locked(struct dmsnic_priv *priv,
				  struct ptp_system_timestamp *sts)
{
	u32 lo, hi;

	ptp_read_system_prets(sts);
	lo = dmsnic_rd32(priv, DMS_NIC_REG_PTP_TIME_LO);
	ptp_read_system_postts(sts);
	hi = dmsnic_rd32(priv, DMS_NIC_REG_PTP_TIME_HI);
	return (u64)hi << 32 | lo;
}

static u64 dmsnic_ptp_read(struct dmsnic_priv *priv,
			   struct ptp_system_timestamp *sts)
{
	unsigned long flags;
	u64 ns;

	spin_lock_irqsave(&priv->ptp.lock, flags);
	ns = dmsnic_ptp_read_locked(priv, sts);
	WRITE_ONCE(priv->ptp.last_ns, ns);
	spin_unlock_irqrestore(&priv->ptp.lock, flags);
	return ns;
}

/* Stage a value and apply it with PTP_CMD (SET or ADJ). */
static void dmsnic_ptp_command(struct dmsnic_priv *priv, u64 val, u32 cmd)
{
	unsigned long flags;

	spin_lock_irqsave(&priv->ptp.lock, flags);
	dmsnic_wr32(priv, DMS_NIC_REG_PTP_SET_LO, lower_32_bits(val));
	dmsnic_wr32(priv, DMS_NIC_REG_PTP_SET_HI, upper_32_bits(val));
	dmsnic_wr32(priv, DMS_NIC_REG_PTP_CMD, cmd);
	WRITE_ONCE(priv->ptp.last_ns, dmsnic_ptp_read_locked(priv, NULL));
	spin_unlock_irqrestore(&priv->ptp.lock, flags);
}

static int dmsnic_ptp_gettimex64(struct ptp_clock_info *info,
				 struct timespec64 *ts,
				 struct ptp_system_timestamp *sts)
{
	*ts = ns_to_timespec64(dmsnic_ptp_read(dmsnic_ptp_priv(info), sts));
	return 0;
}

static int dmsnic_ptp_settime64(struct ptp_clock_info *info,
				const struct timespec64 *ts)
{
	dmsnic_ptp_command(dmsnic_ptp_priv(info), timespec64_to_ns(ts),
			   DMS_NIC_PTP_CMD_SET);
	return 0;
}

static int dmsnic_ptp_adjtime(struct ptp_clock_info *info, s64 delta)
{
	dmsnic_ptp_command(dmsnic_ptp_priv(info), (u64)delta,
			   DMS_NIC_PTP_CMD_ADJ);
	return 0;
}

/* The device takes Linux's scaled_ppm as it is (2^-16 ppm units). */
static int dmsnic_ptp_adjfine(struct ptp_clock_info *info, long scaled_ppm)
{
	struct dmsnic_priv *priv = dmsnic_ptp_priv(info);

	scaled_ppm = clamp_t(long, scaled_ppm, -DMS_NIC_PTP_ADJ_FINE_MAX,
			     DMS_NIC_PTP_ADJ_FINE_MAX);
	dmsnic_wr32(priv, DMS_NIC_REG_PTP_ADJ_FINE, (u32)(s32)scaled_ppm);
	return 0;
}

/* Keeps ptp.last_ns within a second of the clock for dmsnic_ptp_extend(). */
static long dmsnic_ptp_aux_work(struct ptp_clock_info *info)
{
	dmsnic_ptp_read(dmsnic_ptp_priv(info), NULL);
	return DMSNIC_PTP_REFRESH;
}

static const struct ptp_clock_info dmsnic_ptp_info = {
	.owner		= THIS_MODULE,
	.name		= "dmsnic",
	.max_adj	= DMSNIC_PTP_MAX_ADJ_PPB,
	.gettimex64	= dmsnic_ptp_gettimex64,
	.settime64	= dmsnic_ptp_settime64,
	.adjtime	= dmsnic_ptp_adjtime,
	.adjfine	= dmsnic_ptp_adjfine,
	.do_aux_work	= dmsnic_ptp_aux_work,
};

/* The full value nearest @ref whose low @bits bits are @stamp. */
static u64 dmsnic_ptp_extend(u64 ref, u64 stamp, unsigned int bits)
{
	u64 delta = (stamp - ref) & GENMASK_ULL(bits - 1, 0);

	return ref + sign_extend64(delta, bits - 1);
}

/*
 * The stamp of an RX SOP completion, if it has one (HX: XDP RX metadata
 * can use it too).
 */
bool dmsnic_ptp_rx_ns(struct dmsnic_priv *priv, const struct dms_rx_cmpl *c,
		      u64 *ns)
{
	u16 hi = le16_to_cpu(c->ts_hi);

	if (!(hi & DMS_RX_TS_VALID))
		return false;
	*ns = dmsnic_ptp_extend(READ_ONCE(priv->ptp.last_ns),
				(u64)(hi & DMS_RX_TS_HI_MASK) << 32 |
				le32_to_cpu(c->ts_lo), DMS_RX_TS_BITS);
	return true;
}

void dmsnic_ptp_rx(struct dmsnic_priv *priv, struct sk_buff *skb,
		   const struct dms_rx_cmpl *c)
{
	u64 ns;

	if (priv->ptp.cfg.rx_filter == HWTSTAMP_FILTER_ALL &&
	    dmsnic_ptp_rx_ns(priv, c, &ns))
		skb_hwtstamps(skb)->hwtstamp = ns_to_ktime(ns);
}

/* SOP flags for an skb that asks for a hardware TX stamp. */
u16 dmsnic_ptp_tx_flags(struct dmsnic_priv *priv, struct sk_buff *skb)
{
	if (!(skb_shinfo(skb)->tx_flags & SKBTX_HW_TSTAMP) ||
	    priv->ptp.cfg.tx_type != HWTSTAMP_TX_ON)
		return 0;
	skb_shinfo(skb)->tx_flags |= SKBTX_IN_PROGRESS;
	return DMS_TX_F_TS;
}

/* A sent frame's completion: deliver its stamp if it asked for one. */
void dmsnic_ptp_tx_done(struct dmsnic_priv *priv, struct sk_buff *skb,
			u32 ts)
{
	struct skb_shared_hwtstamps hwts = {};

	if (!(skb_shinfo(skb)->tx_flags & SKBTX_IN_PROGRESS))
		return;
	hwts.hwtstamp = ns_to_ktime(dmsnic_ptp_extend(dmsnic_ptp_read(priv, NULL),
						      ts, DMS_TX_TS_BITS));
	skb_tstamp_tx(skb, &hwts);
}

int dmsnic_hwtstamp_get(struct net_device *netdev,
			struct kernel_hwtstamp_config *cfg)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	*cfg = priv->ptp.cfg;
	return 0;
}

/* TX: off or on; RX: none, or every frame (the device has no filters). */
int dmsnic_hwtstamp_set(struct net_device *netdev,
			struct kernel_hwtstamp_config *cfg,
			struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	if (!priv->ptp.supported) {
		NL_SET_ERR_MSG_MOD(extack, "the device has no PTP clock");
		return -EOPNOTSUPP;
	}
	if (cfg->tx_type != HWTSTAMP_TX_OFF && cfg->tx_type != HWTSTAMP_TX_ON) {
		NL_SET_ERR_MSG_MOD(extack, "TX timestamping is off or on");
		return -ERANGE;
	}
	if (cfg->rx_filter != HWTSTAMP_FILTER_NONE)
		cfg->rx_filter = HWTSTAMP_FILTER_ALL;
	dmsnic_wr32(priv, DMS_NIC_REG_PTP_CTRL,
		    cfg->rx_filter == HWTSTAMP_FILTER_ALL ? DMS_NIC_PTP_RX_ALL : 0);
	priv->ptp.cfg = *cfg;
	return 0;
}

int dmsnic_get_ts_info(struct net_device *netdev,
		       struct kernel_ethtool_ts_info *info)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	info->so_timestamping |= SOF_TIMESTAMPING_TX_SOFTWARE;
	if (!priv->ptp.supported)
		return 0;
	info->so_timestamping |= SOF_TIMESTAMPING_TX_HARDWARE |
				 SOF_TIMESTAMPING_RX_HARDWARE |
				 SOF_TIMESTAMPING_RAW_HARDWARE;
	if (priv->ptp.clock)
		info->phc_index = ptp_clock_index(priv->ptp.clock);
	info->tx_types = BIT(HWTSTAMP_TX_OFF) | BIT(HWTSTAMP_TX_ON);
	info->rx_filters = BIT(HWTSTAMP_FILTER_NONE) | BIT(HWTSTAMP_FILTER_ALL);
	return 0;
}

/*
 * Probe: register the PHC (none without PTP_1588_CLOCK: timestamps still
 * work, without a clock to read) and start it at the system's real time.
 */
void dmsnic_ptp_init(struct dmsnic_priv *priv)
{
	struct dmsnic_ptp *ptp = &priv->ptp;
	struct ptp_clock *clock;

	spin_lock_init(&ptp->lock);
	ptp->supported = priv->caps & DMS_NIC_CAP_PTP;
	if (!ptp->supported)
		return;
	dmsnic_ptp_command(priv, ktime_get_real_ns(), DMS_NIC_PTP_CMD_SET);
	ptp->info = dmsnic_ptp_info;
	clock = ptp_clock_register(&ptp->info, &priv->pdev->dev);
	if (IS_ERR(clock)) {
		dev_warn(&priv->pdev->dev, "no PTP clock: %pe\n", clock);
		clock = NULL;
	}
	ptp->clock = clock;
	if (clock)
		ptp_schedule_worker(clock, DMSNIC_PTP_REFRESH);
}

void dmsnic_ptp_remove(struct dmsnic_priv *priv)
{
	if (priv->ptp.clock)
		ptp_clock_unregister(priv->ptp.clock);
	priv->ptp.clock = NULL;
}
