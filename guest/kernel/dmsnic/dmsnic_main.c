// SPDX-License-Identifier: GPL-2.0
/*
 * dmsnic: PCI probe, device-wide configuration, link state and the netdev
 * operations of the devmemsim header-split NIC.
 */
#include <linux/debugfs.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/fault-inject.h>
#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <net/netdev_queues.h>

#include <devmemsim/pci_ids.h>

#include "dmsnic.h"

#define DMSNIC_RESET_TIMEOUT_US	100000

/*
 * Hardware GRO delivers a queue's aggregates when it has seen no TCP
 * segment for this long (a PSH segment ends its aggregate at once). A real
 * NIC waits tens of microseconds; under TCG a guest's back-to-back sends
 * reach the wire up to milliseconds apart, more on a loaded host. 10 ms
 * (the device's maximum) keeps the bursts of the kernel's gro.py and
 * gro_hw.py together and still ends one at gro.py's 100 ms gap; on two TCG
 * nodes, TCP request/response times did not change from 1 ms to 10 ms.
 */
static unsigned int gro_hw_usecs = 10000;
module_param(gro_hw_usecs, uint, 0444);
MODULE_PARM_DESC(gro_hw_usecs,
		 "hardware GRO flush timeout in microseconds (at most 10000)");

/*
 * How long an aggregate may stay open while other TCP traffic keeps its
 * queue busy; 0: 16 flush timeouts. gro_hw.py keeps up to 512 flows open
 * on one queue while a TCG guest sends their second segments, which takes
 * a few hundred milliseconds on a loaded host: 1 s lets them all coalesce.
 * Only a flow's tail without PSH on a busy queue waits that long.
 */
static unsigned int gro_hw_age_usecs = 1000000;
module_param(gro_hw_age_usecs, uint, 0444);
MODULE_PARM_DESC(gro_hw_age_usecs,
		 "hardware GRO: longest an aggregate stays open, in microseconds (at most 1000000; 0: 16 flush timeouts)");

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
/*
 * Failures the tests inject through debugfs (Documentation/fault-injection/
 * fault-injection.rst), to exercise the ways back of a reconfiguration:
 * dmsnic/fail_queue_mem_alloc fails building an RX queue's memory for the
 * queue-management ops as if memory ran out; dmsnic/fail_queue_enable
 * makes the device look as if it refused a queue's configuration.
 */
static DECLARE_FAULT_ATTR(dmsnic_fail_queue_mem_alloc_attr);
static DECLARE_FAULT_ATTR(dmsnic_fail_queue_enable_attr);
static struct dentry *dmsnic_debugfs;

bool dmsnic_fail_queue_mem_alloc(void)
{
	return should_fail(&dmsnic_fail_queue_mem_alloc_attr, 1);
}

bool dmsnic_fail_queue_enable(void)
{
	return should_fail(&dmsnic_fail_queue_enable_attr, 1);
}

static void dmsnic_debugfs_init(void)
{
	dmsnic_debugfs = debugfs_create_dir("dmsnic", NULL);
	fault_create_debugfs_attr("fail_queue_mem_alloc", dmsnic_debugfs,
				  &dmsnic_fail_queue_mem_alloc_attr);
	fault_create_debugfs_attr("fail_queue_enable", dmsnic_debugfs,
				  &dmsnic_fail_queue_enable_attr);
}

static void dmsnic_debugfs_exit(void)
{
	debugfs_remove_recursive(dmsnic_debugfs);
}
#else
static void dmsnic_debugfs_init(void) {}
static void dmsnic_debugfs_exit(void) {}
#endif

static const u32 dmsnic_hw_stat_regs[DMSNIC_HW_NUM_STATS] = {
	[DMSNIC_HW_RX_NO_BUF]	= DMS_NIC_REG_STAT_RX_NO_BUF,
	[DMSNIC_HW_RX_DROP]	= DMS_NIC_REG_STAT_RX_DROP,
	[DMSNIC_HW_RX_DMA_ERR]	= DMS_NIC_REG_STAT_RX_DMA_ERR,
	[DMSNIC_HW_TX_DESC_ERR]	= DMS_NIC_REG_STAT_TX_DESC_ERR,
	[DMSNIC_HW_TX_DMA_ERR]	= DMS_NIC_REG_STAT_TX_DMA_ERR,
	[DMSNIC_HW_RING_ERR]	= DMS_NIC_REG_STAT_RING_ERR,
	[DMSNIC_HW_RING_DMA_ERR] = DMS_NIC_REG_STAT_RING_DMA_ERR,
	[DMSNIC_HW_TSO_SUPER]	= DMS_NIC_REG_TSO_SUPER,
	[DMSNIC_HW_TSO_WIRE]	= DMS_NIC_REG_TSO_WIRE,
	[DMSNIC_HW_TSO_ERR]	= DMS_NIC_REG_TSO_ERR,
	[DMSNIC_HW_RX_NO_BUF_DROP] = DMS_NIC_REG_STAT_RX_NO_BUF_DROP,
};

const char * const dmsnic_hw_stat_names[DMSNIC_HW_NUM_STATS] = {
	[DMSNIC_HW_RX_NO_BUF]	= "hw_rx_no_buf",
	[DMSNIC_HW_RX_DROP]	= "hw_rx_drop",
	[DMSNIC_HW_RX_DMA_ERR]	= "hw_rx_dma_err",
	[DMSNIC_HW_TX_DESC_ERR]	= "hw_tx_desc_err",
	[DMSNIC_HW_TX_DMA_ERR]	= "hw_tx_dma_err",
	[DMSNIC_HW_RING_ERR]	= "hw_ring_err",
	[DMSNIC_HW_RING_DMA_ERR] = "hw_ring_dma_err",
	[DMSNIC_HW_TSO_SUPER]	= "hw_tso_super",
	[DMSNIC_HW_TSO_WIRE]	= "hw_tso_wire",
	[DMSNIC_HW_TSO_ERR]	= "hw_tso_err",
	[DMSNIC_HW_RX_NO_BUF_DROP] = "hw_rx_no_buf_drop",
};

static bool dmsnic_has_rx_drop(const struct dmsnic_priv *priv)
{
	return priv->caps & DMS_NIC_CAP_RXQ_DROP;
}

/* Pair @qp's RX drop counter (NIC v1.10), under priv->hw_stats_lock. */
static void dmsnic_read_qp_hw_stats(struct dmsnic_qp *qp)
{
	u32 val = readl(qp->regs + DMS_NIC_RXQ_NO_BUF_DROP);

	u64_stats_update_begin(&qp->hw_stats.syncp);
	qp->hw_stats.rx_no_buf_drop += (u32)(val - qp->hw_rx_no_buf_drop_last);
	u64_stats_update_end(&qp->hw_stats.syncp);
	qp->hw_rx_no_buf_drop_last = val;
}

/*
 * Extend the 32-bit wrapping device counters into 64-bit totals: the
 * device's (into @stats, if given) and every queue pair's. A counter the
 * device does not have stays 0.
 */
void dmsnic_read_hw_stats(struct dmsnic_priv *priv, u64 *stats)
{
	unsigned long flags;
	u32 val;
	int i;

	spin_lock_irqsave(&priv->hw_stats_lock, flags);
	for (i = 0; i < DMSNIC_HW_NUM_STATS; i++) {
		if (i != DMSNIC_HW_RX_NO_BUF_DROP || dmsnic_has_rx_drop(priv)) {
			val = dmsnic_rd32(priv, dmsnic_hw_stat_regs[i]);
			priv->hw_stats[i] += (u32)(val - priv->hw_stats_last[i]);
			priv->hw_stats_last[i] = val;
		}
		if (stats)
			stats[i] = priv->hw_stats[i];
	}
	for (i = 0; i < priv->max_queues && dmsnic_has_rx_drop(priv); i++)
		dmsnic_read_qp_hw_stats(&priv->qps[i]);
	spin_unlock_irqrestore(&priv->hw_stats_lock, flags);
}

/* Queue pair @q's device counters only (netdev qstats of one queue). */
void dmsnic_read_hw_qstats(struct dmsnic_priv *priv, u32 q)
{
	unsigned long flags;

	if (!dmsnic_has_rx_drop(priv))
		return;
	spin_lock_irqsave(&priv->hw_stats_lock, flags);
	dmsnic_read_qp_hw_stats(&priv->qps[q]);
	spin_unlock_irqrestore(&priv->hw_stats_lock, flags);
}

void dmsnic_write_rx_ctrl(struct dmsnic_priv *priv, netdev_features_t features)
{
	u32 ctrl = DMS_NIC_RX_RSS;

	if (dmsnic_hds_on(priv))
		ctrl |= DMS_NIC_RX_HDR_SPLIT;
	if (features & NETIF_F_RXCSUM)
		ctrl |= DMS_NIC_RX_CSUM;
	if (features & NETIF_F_NTUPLE)
		ctrl |= DMS_NIC_RX_NTUPLE;
	if (features & NETIF_F_GRO_HW)
		ctrl |= DMS_NIC_RX_GRO;
	dmsnic_wr32(priv, DMS_NIC_REG_RX_CTRL, ctrl);
}

static void dmsnic_write_ntuple_addr(struct dmsnic_priv *priv, u32 reg,
				     const __be32 *addr, int words)
{
	int i;

	for (i = 0; i < 4; i++)
		dmsnic_wr32(priv, reg + 4 * i, i < words ? be32_to_cpu(addr[i]) : 0);
}

/*
 * Load flow steering entry @loc from priv->ntuple (or clear it when the
 * slot is unused) through the staging registers.
 */
void dmsnic_write_ntuple(struct dmsnic_priv *priv, u32 loc)
{
	const struct ethtool_rx_flow_spec *fs = &priv->ntuple[loc];
	static const __be32 zero[4];
	const __be32 *src = zero, *dst = zero, *smask = zero, *dmask = zero;
	u32 ctrl = 0, ports = 0, pmask = 0;
	int words = 4;

	if (test_bit(loc, priv->ntuple_used)) {
		u32 flow = fs->flow_type & ~(FLOW_EXT | FLOW_MAC_EXT | FLOW_RSS);
		u8 proto = (flow == TCP_V4_FLOW || flow == TCP_V6_FLOW) ?
			   IPPROTO_TCP : IPPROTO_UDP;
		const struct ethtool_tcpip4_spec *h4 = &fs->h_u.tcp_ip4_spec;
		const struct ethtool_tcpip4_spec *m4 = &fs->m_u.tcp_ip4_spec;
		const struct ethtool_tcpip6_spec *h6 = &fs->h_u.tcp_ip6_spec;
		const struct ethtool_tcpip6_spec *m6 = &fs->m_u.tcp_ip6_spec;

		ctrl = DMS_NIC_NT_VALID | proto << DMS_NIC_NT_PROTO_SHIFT |
		       (u32)ethtool_get_flow_spec_ring(fs->ring_cookie) <<
		       DMS_NIC_NT_QUEUE_SHIFT;
		if (flow == TCP_V6_FLOW || flow == UDP_V6_FLOW) {
			ctrl |= DMS_NIC_NT_IPV6;
			src = h6->ip6src;
			dst = h6->ip6dst;
			smask = m6->ip6src;
			dmask = m6->ip6dst;
			ports = be16_to_cpu(h6->psrc) << 16 | be16_to_cpu(h6->pdst);
			pmask = be16_to_cpu(m6->psrc) << 16 | be16_to_cpu(m6->pdst);
		} else {
			src = &h4->ip4src;
			dst = &h4->ip4dst;
			smask = &m4->ip4src;
			dmask = &m4->ip4dst;
			words = 1;
			ports = be16_to_cpu(h4->psrc) << 16 | be16_to_cpu(h4->pdst);
			pmask = be16_to_cpu(m4->psrc) << 16 | be16_to_cpu(m4->pdst);
		}
	}

	dmsnic_wr32(priv, DMS_NIC_REG_NT_CTRL, ctrl);
	dmsnic_wr32(priv, DMS_NIC_REG_NT_PORTS, ports & pmask);
	dmsnic_wr32(priv, DMS_NIC_REG_NT_PORT_MASK, pmask);
	dmsnic_write_ntuple_addr(priv, DMS_NIC_REG_NT_SRC(0), src, words);
	dmsnic_write_ntuple_addr(priv, DMS_NIC_REG_NT_DST(0), dst, words);
	dmsnic_write_ntuple_addr(priv, DMS_NIC_REG_NT_SRC_MASK(0), smask, words);
	dmsnic_write_ntuple_addr(priv, DMS_NIC_REG_NT_DST_MASK(0), dmask, words);
	if (priv->caps & DMS_NIC_CAP_RSS_CTX)
		dmsnic_wr32(priv, DMS_NIC_REG_RSS_NT_CTX,
			    ctrl && (fs->flow_type & FLOW_RSS) ?
			    DMS_NIC_RSS_NT_EN | priv->ntuple_ctx[loc] : 0);
	dmsnic_wr32(priv, DMS_NIC_REG_NT_COMMIT, loc);
}

/*
 * Carrier: the link is up and, on a running interface, so is the
 * datapath. A failed reconfiguration can leave every pair down: without
 * carrier the stack then sends nothing and its TX watchdog rests until a
 * restart (ifdown/ifup, a channel or ring change) brings the pairs back.
 */
void dmsnic_update_link(struct dmsnic_priv *priv)
{
	struct net_device *netdev = priv->netdev;

	if ((dmsnic_rd32(priv, DMS_NIC_REG_STATUS) & DMS_NIC_STATUS_LINK_UP) &&
	    (READ_ONCE(priv->datapath_up) || !netif_running(netdev)))
		netif_carrier_on(netdev);
	else
		netif_carrier_off(netdev);
}

/* A pair the device stopped: restarted by dmsnic_fault_work(). */
static void dmsnic_schedule_restart(struct dmsnic_priv *priv, u32 q)
{
	set_bit(q, priv->faulted);
	schedule_work(&priv->fault_work);
}

static irqreturn_t dmsnic_admin_irq(int irq, void *data)
{
	struct dmsnic_priv *priv = data;
	u64 faulted;
	u32 status, q;

	status = dmsnic_rd32(priv, DMS_NIC_REG_ADMIN_IRQ_STATUS);
	if (!status)
		return IRQ_NONE;
	dmsnic_wr32(priv, DMS_NIC_REG_ADMIN_IRQ_STATUS, status);
	if (status & DMS_NIC_ADMIN_IRQ_LINK)
		dmsnic_update_link(priv);
	if (status & DMS_NIC_ADMIN_IRQ_Q_FAULT) {
		faulted = dmsnic_rd32(priv, DMS_NIC_REG_Q_FAULT_LO);
		if (priv->max_queues > 32)
			faulted |= (u64)dmsnic_rd32(priv, DMS_NIC_REG_Q_FAULT_HI) << 32;
		for (q = 0; q < min(priv->max_queues, 64U); q++)
			if (faulted & BIT_ULL(q))
				dmsnic_schedule_restart(priv, q);
	}
	return IRQ_HANDLED;
}

static int dmsnic_reset(struct pci_dev *pdev, void __iomem *regs)
{
	u32 ctrl;
	int err;

	writel(DMS_NIC_CTRL_RESET, regs + DMS_NIC_REG_CTRL);
	err = readl_poll_timeout(regs + DMS_NIC_REG_CTRL, ctrl,
				 !(ctrl & DMS_NIC_CTRL_RESET), 10,
				 DMSNIC_RESET_TIMEOUT_US);
	if (err)
		dev_err(&pdev->dev, "reset did not complete (CTRL 0x%08x)\n",
			ctrl);
	return err;
}

/* Device-wide settings; the function reset cleared all of them. */
static void dmsnic_hw_init(struct dmsnic_priv *priv)
{
	struct net_device *netdev = priv->netdev;

	dmsnic_wr32(priv, DMS_NIC_REG_MTU, netdev->mtu);
	dmsnic_wr32(priv, DMS_NIC_REG_HDS_THRESH, priv->hds_thresh);
	dmsnic_wr32(priv, DMS_NIC_REG_TX_CTRL, DMS_NIC_TX_CSUM);
	dmsnic_wr32(priv, DMS_NIC_REG_GRO_TIMEOUT_NS,
		    min_t(u64, (u64)gro_hw_usecs * NSEC_PER_USEC,
			  DMS_NIC_GRO_TIMEOUT_MAX_NS));
	/* v1.6; an older device ignores the write (unknown offset). */
	dmsnic_wr32(priv, DMS_NIC_REG_GRO_MAX_AGE_NS,
		    min_t(u64, (u64)gro_hw_age_usecs * NSEC_PER_USEC,
			  DMS_NIC_GRO_AGE_MAX_NS));
	dmsnic_write_rss(priv);
	dmsnic_write_rx_ctrl(priv, netdev->features);
	dmsnic_read_hw_stats(priv, NULL);
	memset(priv->hw_stats, 0, sizeof(priv->hw_stats));
}

static int dmsnic_open(struct net_device *netdev)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	int err;

	err = dmsnic_up(priv);
	if (err)
		return err;
	dmsnic_update_link(priv);
	return 0;
}

static int dmsnic_stop(struct net_device *netdev)
{
	dmsnic_down(netdev_priv(netdev));
	return 0;
}

static int dmsnic_change_mtu(struct net_device *netdev, int new_mtu)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);

	if (dmsnic_xdp_sb(priv) && new_mtu > DMSNIC_XDP_SB_MTU_MAX) {
		netdev_err(netdev, "MTU %d is above %lu, the largest the attached single-buffer XDP program can see\n",
			   new_mtu, DMSNIC_XDP_SB_MTU_MAX);
		return -EINVAL;
	}
	if (dmsnic_xsk_mtu_check(priv, new_mtu))
		return -EINVAL;
	/* Payload buffers are pages; longer frames span several of them. */
	WRITE_ONCE(netdev->mtu, new_mtu);
	dmsnic_wr32(priv, DMS_NIC_REG_MTU, new_mtu);
	return 0;
}

/*
 * Devmem payload is unreadable: the stack cannot checksum it, so receive
 * checksum offload stays on while a memory provider is bound to a queue.
 * Hardware GRO needs it: the device coalesces only segments whose
 * checksums it verified.
 */
static netdev_features_t dmsnic_fix_features(struct net_device *netdev,
					     netdev_features_t features)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	u32 q;

	for (q = 0; q < priv->num_queues && !(features & NETIF_F_RXCSUM); q++) {
		if (netif_rxq_has_unreadable_mp(netdev, q)) {
			net_warn_ratelimited("%s: rx-checksumming stays on while RX queue %u has a memory provider\n",
					     netdev_name(netdev), q);
			features |= NETIF_F_RXCSUM;
		}
	}
	/* XDP sees wire frames: no coalescing under a program. */
	if (!(features & NETIF_F_RXCSUM) || priv->xdp_prog)
		features &= ~NETIF_F_GRO_HW;
	return features;
}

static int dmsnic_set_features(struct net_device *netdev,
			       netdev_features_t features)
{
	dmsnic_write_rx_ctrl(netdev_priv(netdev), features);
	return 0;
}

static void dmsnic_tx_timeout(struct net_device *netdev, unsigned int txq)
{
	struct dmsnic_priv *priv = netdev_priv(netdev);
	const struct dmsnic_tx_ring *tx = &priv->qps[txq].tx;

	netdev_err(netdev, "TX queue %u timed out: head %u tail %u completions %u\n",
		   txq, READ_ONCE(tx->head), READ_ONCE(tx->tail),
		   READ_ONCE(tx->cmpl_head));
	/* A ring fault whose admin interrupt was lost: restart the pair. */
	if (READ_ONCE(priv->qps[txq].hw_up) &&
	    dmsnic_qp_faulted(&priv->qps[txq])) {
		dmsnic_schedule_restart(priv, txq);
		return;
	}
	/*
	 * A lost interrupt leaves completions unreaped with the vector
	 * disarmed: poll the pair once (a no-op if its NAPI is off).
	 */
	if (READ_ONCE(priv->qps[txq].napi_on))
		napi_schedule(&priv->qps[txq].napi);
}

static const struct net_device_ops dmsnic_netdev_ops = {
	.ndo_open		= dmsnic_open,
	.ndo_stop		= dmsnic_stop,
	.ndo_start_xmit		= dmsnic_start_xmit,
	.ndo_features_check	= dmsnic_features_check,
	.ndo_change_mtu		= dmsnic_change_mtu,
	.ndo_fix_features	= dmsnic_fix_features,
	.ndo_set_features	= dmsnic_set_features,
	.ndo_get_stats64	= dmsnic_get_stats64,
	.ndo_tx_timeout		= dmsnic_tx_timeout,
	.ndo_hwtstamp_get	= dmsnic_hwtstamp_get,
	.ndo_hwtstamp_set	= dmsnic_hwtstamp_set,
#if IS_ENABLED(CONFIG_NET_SHAPER)
	.net_shaper_ops		= &dmsnic_shaper_ops,
#endif
	.ndo_validate_addr	= eth_validate_addr,
	.ndo_bpf		= dmsnic_bpf,
	.ndo_xdp_xmit		= dmsnic_xdp_xmit,
	.ndo_xsk_wakeup		= dmsnic_xsk_wakeup,
};

static void dmsnic_read_mac(struct dmsnic_priv *priv)
{
	u32 lo = dmsnic_rd32(priv, DMS_NIC_REG_MAC_LO);
	u32 hi = dmsnic_rd32(priv, DMS_NIC_REG_MAC_HI);
	u8 mac[ETH_ALEN];

	put_unaligned_le32(lo, mac);
	put_unaligned_le16(hi, mac + 4);
	if (is_valid_ether_addr(mac)) {
		eth_hw_addr_set(priv->netdev, mac);
	} else {
		eth_hw_addr_random(priv->netdev);
		dev_warn(&priv->pdev->dev, "invalid MAC %pM, using %pM\n", mac,
			 priv->netdev->dev_addr);
	}
}

/*
 * Enable the device, map BAR0, check its identity and reset it. Returns
 * the number of queue pairs, or a negative error.
 */
static int dmsnic_map_device(struct pci_dev *pdev, void __iomem **regsp)
{
	struct device *dev = &pdev->dev;
	void __iomem *regs;
	u32 magic, version, nq;
	int err;

	err = pcim_enable_device(pdev);
	if (err)
		return dev_err_probe(dev, err, "cannot enable device\n");
	pci_set_master(pdev);
	err = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64));
	if (err)
		return dev_err_probe(dev, err, "no 64-bit DMA\n");
	/*
	 * The device has no segment limit: TX descriptors and payload
	 * buffers are built per fragment or net_iov, never from a whole
	 * segment, so a devmem binding's mapping (udmabuf: 128 KiB
	 * segments) may use segments of any length.
	 */
	dma_set_max_seg_size(dev, UINT_MAX);
	regs = pcim_iomap_region(pdev, DMS_NIC_BAR_REGS, "dmsnic");
	if (IS_ERR(regs))
		return dev_err_probe(dev, PTR_ERR(regs), "cannot map BAR%d\n",
				     DMS_NIC_BAR_REGS);

	magic = readl(regs + DMS_NIC_REG_ID);
	if (magic != DMS_NIC_ID_MAGIC)
		return dev_err_probe(dev, -ENODEV,
				     "bad identity 0x%08x (want 0x%08x)\n",
				     magic, DMS_NIC_ID_MAGIC);
	version = readl(regs + DMS_NIC_REG_VERSION);
	if (version >> 16 != DMS_NIC_VERSION >> 16)
		return dev_err_probe(dev, -ENODEV, "unsupported version %u.%u\n",
				     version >> 16, version & 0xffff);
	nq = readl(regs + DMS_NIC_REG_NUM_QUEUES);
	if (!nq || nq > DMS_NIC_RSS_INDIR_SIZE)
		return dev_err_probe(dev, -ENODEV, "bad queue count %u\n", nq);

	err = dmsnic_reset(pdev, regs);
	if (err)
		return err;
	*regsp = regs;
	return nq;
}

/* Read the capabilities and allocate the per-queue and ntuple state. */
static int dmsnic_init_priv(struct dmsnic_priv *priv)
{
	struct device *dev = &priv->pdev->dev;
	u32 nq = priv->max_queues, i;

	priv->num_queues = min(nq, DMSNIC_DEFAULT_QUEUES);
	if (dmsnic_rd32(priv, DMS_NIC_REG_VERSION) >= 0x00010005)
		priv->caps = dmsnic_rd32(priv, DMS_NIC_REG_CAPS);
	priv->max_tx_frags = dmsnic_rd32(priv, DMS_NIC_REG_MAX_TX_FRAGS);
	priv->ntuple_size = dmsnic_rd32(priv, DMS_NIC_REG_NTUPLE_SIZE);
	priv->rx_ring_size = DMSNIC_RING_DEFAULT;
	priv->tx_ring_size = DMSNIC_RING_DEFAULT;
	priv->hds = true;
	spin_lock_init(&priv->hw_stats_lock);
	if (!priv->max_tx_frags || priv->ntuple_size > 4096)
		return dev_err_probe(dev, -ENODEV,
				     "bad capabilities: %u TX frags, %u flow rules\n",
				     priv->max_tx_frags, priv->ntuple_size);

	priv->qps = devm_kcalloc(dev, nq, sizeof(*priv->qps), GFP_KERNEL);
	priv->ntuple = devm_kcalloc(dev, priv->ntuple_size,
				    sizeof(*priv->ntuple), GFP_KERNEL);
	priv->ntuple_ctx = devm_kcalloc(dev, priv->ntuple_size,
					sizeof(*priv->ntuple_ctx), GFP_KERNEL);
	priv->ntuple_used = devm_bitmap_zalloc(dev, priv->ntuple_size,
					       GFP_KERNEL);
	priv->faulted = devm_bitmap_zalloc(dev, nq, GFP_KERNEL);
	priv->lost = devm_bitmap_zalloc(dev, nq, GFP_KERNEL);
	if (!priv->qps || !priv->ntuple || !priv->ntuple_ctx ||
	    !priv->ntuple_used || !priv->faulted || !priv->lost)
		return -ENOMEM;
	INIT_WORK(&priv->fault_work, dmsnic_fault_work);
	for (i = 0; i < nq; i++) {
		struct dmsnic_qp *qp = &priv->qps[i];

		qp->priv = priv;
		qp->idx = i;
		qp->regs = priv->regs + DMS_NIC_Q_BASE(i);
		dmsnic_qp_init(qp);
	}
	return 0;
}

/*
 * Vector q + 1 belongs to queue pair q: all of them are needed. The core
 * keeps their affinity (netif_set_affinity_auto()): pair q's NAPI config
 * starts with one CPU, spread over the online CPUs from the device's node,
 * is applied whenever the pair's NAPI is enabled, and follows what is
 * written to /proc/irq/N/smp_affinity, so a user's choice survives queue
 * reconfigurations that free and request the IRQ again.
 */
static int dmsnic_init_irqs(struct dmsnic_priv *priv)
{
	struct pci_dev *pdev = priv->pdev;
	u32 nq = priv->max_queues, i;
	int err;

	err = pci_alloc_irq_vectors(pdev, nq + 1, nq + 1, PCI_IRQ_MSIX);
	if (err < 0)
		return dev_err_probe(&pdev->dev, err,
				     "cannot get %u MSI-X vectors\n", nq + 1);
	for (i = 0; i < nq; i++)
		priv->qps[i].irq = pci_irq_vector(pdev, i + 1);
	netif_set_affinity_auto(priv->netdev);
	priv->admin_irq = pci_irq_vector(pdev, 0);
	snprintf(priv->admin_irq_name, sizeof(priv->admin_irq_name),
		 "dmsnic-%s", pci_name(pdev));
	return 0;
}

/* TSO and USO as far as the device says it segments (v1.5 CAPS). */
static void dmsnic_init_gso(struct dmsnic_priv *priv)
{
	struct net_device *netdev = priv->netdev;
	u32 caps = priv->caps;

	if (caps & DMS_NIC_CAP_TSO)
		netdev->hw_features |= NETIF_F_TSO | NETIF_F_TSO6;
	if (caps & DMS_NIC_CAP_USO)
		netdev->hw_features |= NETIF_F_GSO_UDP_L4;
	if (!(caps & (DMS_NIC_CAP_TSO | DMS_NIC_CAP_USO)))
		return;
	/* The device cuts at most this much payload into this many frames;
	 * the stack segments in software what goes beyond.
	 */
	netif_set_tso_max_size(netdev, DMS_NIC_TSO_MAX_PAYLOAD);
	netif_set_tso_max_segs(netdev, DMS_NIC_TSO_MAX_SEGS);
}

static void dmsnic_init_netdev(struct dmsnic_priv *priv)
{
	struct net_device *netdev = priv->netdev;

	dmsnic_read_mac(priv);
	netdev->netdev_ops = &dmsnic_netdev_ops;
	netdev->ethtool_ops = &dmsnic_ethtool_ops;
	netdev->queue_mgmt_ops = &dmsnic_queue_mgmt_ops;
	netdev->stat_ops = &dmsnic_stat_ops;
	/* TX descriptors take any bus address, devmem (GPU BAR) included. */
	netdev->netmem_tx = NETMEM_TX_DMA;
	netdev->hw_features = NETIF_F_SG | NETIF_F_IP_CSUM | NETIF_F_IPV6_CSUM |
			      NETIF_F_RXCSUM | NETIF_F_RXHASH | NETIF_F_NTUPLE |
			      NETIF_F_GRO_HW;
	dmsnic_init_gso(priv);
	dmsnic_xdp_init_netdev(netdev);
	netdev->features = netdev->hw_features;
	netdev->vlan_features = NETIF_F_SG;
	netdev->min_mtu = ETH_MIN_MTU;
	netdev->max_mtu = dmsnic_rd32(priv, DMS_NIC_REG_MAX_MTU);
	netdev->watchdog_timeo = 5 * HZ;
	dmsnic_rss_init(priv);
}

static int dmsnic_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	struct net_device *netdev;
	struct dmsnic_priv *priv;
	void __iomem *regs;
	int nq, err;

	nq = dmsnic_map_device(pdev, &regs);
	if (nq < 0)
		return nq;
	netdev = devm_alloc_etherdev_mqs(dev, sizeof(*priv), nq, nq);
	if (!netdev)
		return -ENOMEM;
	SET_NETDEV_DEV(netdev, dev);
	priv = netdev_priv(netdev);
	priv->netdev = netdev;
	priv->pdev = pdev;
	priv->regs = regs;
	priv->max_queues = nq;
	err = dmsnic_init_priv(priv) ?: dmsnic_init_irqs(priv) ?:
	      netif_set_real_num_queues(netdev, priv->num_queues,
					priv->num_queues);
	if (err)
		return err;
	dmsnic_init_netdev(priv);
	dmsnic_set_xps(priv);
	dmsnic_hw_init(priv);

	err = request_irq(priv->admin_irq, dmsnic_admin_irq, 0,
			  priv->admin_irq_name, priv);
	if (err)
		return dev_err_probe(dev, err, "cannot get the admin IRQ\n");

	netif_carrier_off(netdev);
	pci_set_drvdata(pdev, priv);
	dmsnic_ptp_init(priv);
	err = dmsnic_devlink_register(priv);
	if (!err) {
		err = register_netdev(netdev);
		if (err)
			dmsnic_devlink_unregister(priv);
	}
	if (err) {
		dmsnic_ptp_remove(priv);
		free_irq(priv->admin_irq, priv);
		return dev_err_probe(dev, err, "cannot register netdev\n");
	}
	dmsnic_wr32(priv, DMS_NIC_REG_ADMIN_IRQ_MASK,
		    DMS_NIC_ADMIN_IRQ_LINK | DMS_NIC_ADMIN_IRQ_Q_FAULT);
	dmsnic_update_link(priv);

	dev_info(dev, "devmemsim NIC v%u.%u: %u queue pairs, MAC %pM\n",
		 dmsnic_rd32(priv, DMS_NIC_REG_VERSION) >> 16,
		 dmsnic_rd32(priv, DMS_NIC_REG_VERSION) & 0xffff, nq,
		 netdev->dev_addr);
	return 0;
}

/*
 * The admin IRQ goes first: its handler reports link changes, and a report
 * racing with unregister_netdev() would leave linkwatch holding a netdev
 * that devres is about to free. The fault work, which the admin IRQ and
 * the TX watchdog schedule, goes next (outside RTNL, which it takes).
 */
static void dmsnic_remove(struct pci_dev *pdev)
{
	struct dmsnic_priv *priv = pci_get_drvdata(pdev);

	dmsnic_wr32(priv, DMS_NIC_REG_ADMIN_IRQ_MASK, 0);
	free_irq(priv->admin_irq, priv);
	disable_work_sync(&priv->fault_work);
	unregister_netdev(priv->netdev);
	dmsnic_devlink_unregister(priv);
	dmsnic_ptp_remove(priv);
	dmsnic_reset(pdev, priv->regs);
}

static const struct pci_device_id dmsnic_ids[] = {
	{ PCI_DEVICE(DMS_PCI_VENDOR_ID, DMS_PCI_DEVICE_ID_NIC) },
	{ }
};
MODULE_DEVICE_TABLE(pci, dmsnic_ids);

static struct pci_driver dmsnic_driver = {
	.name = "dmsnic",
	.id_table = dmsnic_ids,
	.probe = dmsnic_probe,
	.remove = dmsnic_remove,
};

static int __init dmsnic_init(void)
{
	int err;

	dmsnic_debugfs_init();
	err = pci_register_driver(&dmsnic_driver);
	if (err)
		dmsnic_debugfs_exit();
	return err;
}
module_init(dmsnic_init);

static void __exit dmsnic_exit(void)
{
	pci_unregister_driver(&dmsnic_driver);
	dmsnic_debugfs_exit();
}
module_exit(dmsnic_exit);

MODULE_DESCRIPTION("devmemsim header-split NIC");
MODULE_LICENSE("GPL");
