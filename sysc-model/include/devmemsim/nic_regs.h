/* SPDX-License-Identifier: MIT */
/*
 * devmemsim NIC register map (BAR0). All registers are 32 bits wide,
 * little endian, accessed with aligned 32-bit reads and writes; see
 * docs/datasheet.md. Descriptor and completion layouts are in nic_desc.h.
 * Included by the model, the QEMU glue and dmsnic.
 */
#ifndef DEVMEMSIM_NIC_REGS_H
#define DEVMEMSIM_NIC_REGS_H

#include "regs_common.h"

#define DMS_NIC_ID_MAGIC 0x4e534d44 /* "DMSN" in memory order */
#define DMS_NIC_VERSION 0x0001000a  /* major 1, minor 10 */

/* The largest MTU (L3 bytes) the NIC sends and receives; MAX_MTU reads it. */
#define DMS_NIC_MAX_MTU 9000

/* Identity and capabilities (read only). */
#define DMS_NIC_REG_ID 0x0000		 /* DMS_NIC_ID_MAGIC */
#define DMS_NIC_REG_VERSION 0x0004	 /* major << 16 | minor */
#define DMS_NIC_REG_NUM_QUEUES 0x0008	 /* queue pairs */
#define DMS_NIC_REG_MAC_LO 0x000c	 /* MAC bytes 0..3, byte 0 in bits 7:0 */
#define DMS_NIC_REG_MAC_HI 0x0010	 /* MAC bytes 4..5 in bits 15:0 */
#define DMS_NIC_REG_NODE_INDEX 0x0014	 /* index of the node in its cluster */
#define DMS_NIC_REG_MAX_MTU 0x0018	 /* DMS_NIC_MAX_MTU */
#define DMS_NIC_REG_MAX_TX_FRAGS 0x001c	 /* descriptors per TX frame: 18 */
#define DMS_NIC_REG_NTUPLE_SIZE 0x0020	 /* flow steering table entries: 64 */
#define DMS_NIC_REG_CAPS 0x0024		 /* v1.5: DMS_NIC_CAP_* */
#define DMS_NIC_CAP_TSO (1U << 0)	 /* DMS_TX_SEG_TCP4, DMS_TX_SEG_TCP6 */
#define DMS_NIC_CAP_USO (1U << 1)	 /* DMS_TX_SEG_UDP */
#define DMS_NIC_CAP_PTP (1U << 8)	 /* v1.6: PTP clock, RX/TX timestamps */
#define DMS_NIC_CAP_TX_RATE (1U << 9)	 /* v1.6: TX rate limits (queue, device) */
#define DMS_NIC_CAP_MAC_STATS (1U << 10) /* v1.6: pause and FEC registers */
#define DMS_NIC_CAP_SERIAL (1U << 11)	 /* v1.6: SERIAL_LO/HI */

/* v1.6 CAPS bits: RSS contexts, hashed fields, symmetric hashing (below). */
#define DMS_NIC_CAP_RSS_CTX (1U << 3)
#define DMS_NIC_CAP_RSS_FIELDS (1U << 4)
#define DMS_NIC_CAP_RSS_SYM (1U << 5)
#define DMS_NIC_CAP_RSS_KEY52 (1U << 13)     /* v1.7: 52-byte RSS keys, RSS_CTX_KEY_EXT */
#define DMS_NIC_CAP_MAC_STD_STATS (1U << 14) /* v1.8: MSTAT_* (IEEE 802.3 counters) */
#define DMS_NIC_CAP_RXQ_WHOLE (1U << 16)     /* v1.8: DMS_NIC_Q_WHOLE */
#define DMS_NIC_CAP_RXQ_PACK (1U << 17)	     /* v1.9: DMS_NIC_Q_PACK */
/* v1.10: DMS_NIC_Q_DROP_EN, RXQ_NO_BUF_DROP, STAT_RX_NO_BUF_DROP */
#define DMS_NIC_CAP_RXQ_DROP (1U << 18)

/* v1.8: TX scheduler nodes and queue weights (TXS_*, below). */
#define DMS_NIC_CAP_TX_SCHED_NODES (1U << 15)

/*
 * Segmentation limits (v1.5, dms_tx_seg_desc): a super-frame's payload is
 * 1..DMS_NIC_TSO_MAX_PAYLOAD bytes in at most DMS_NIC_TSO_MAX_SEGS segments
 * of mss >= DMS_NIC_TSO_MIN_MSS bytes, hdr_len <= DMS_NIC_TSO_MAX_HDR and
 * hdr_len - (Ethernet header and tags) + mss <= MTU.
 */
#define DMS_NIC_TSO_MAX_PAYLOAD 65536
#define DMS_NIC_TSO_MAX_SEGS 64
#define DMS_NIC_TSO_MIN_MSS 64
#define DMS_NIC_TSO_MAX_HDR 256

/* Device control. */
#define DMS_NIC_REG_CTRL 0x0040
#define DMS_NIC_CTRL_RESET (1U << 0) /* write 1: function reset; reads 0 */
#define DMS_NIC_REG_STATUS 0x0044    /* RO */
#define DMS_NIC_STATUS_LINK_UP (1U << 0)
#define DMS_NIC_REG_MTU 0x0048	       /* RW: L3 bytes; longer frames are dropped */
#define DMS_NIC_REG_RX_CTRL 0x004c     /* RW */
#define DMS_NIC_RX_HDR_SPLIT (1U << 0) /* split headers from payloads */
#define DMS_NIC_RX_CSUM (1U << 1)      /* verify TCP/UDP/IPv4 checksums */
#define DMS_NIC_RX_RSS (1U << 2)       /* spread flows with RSS */
#define DMS_NIC_RX_NTUPLE (1U << 3)    /* flow steering table (wins over RSS) */
#define DMS_NIC_RX_GRO (1U << 4)       /* v1.5: coalesce TCP segments (needs RX_CSUM) */
#define DMS_NIC_REG_HDS_THRESH 0x0050  /* RW: split only payloads > this */
#define DMS_NIC_REG_TX_CTRL 0x0054     /* RW */
#define DMS_NIC_TX_CSUM (1U << 0)      /* honour DMS_TX_F_CSUM */
/* Interrupt moderation: minimum gap between two MSI-X of one queue. */
#define DMS_NIC_REG_ITR_NS 0x0058  /* RW, nanoseconds */
#define DMS_NIC_ITR_MAX_NS 1000000 /* larger values read back as this */
/*
 * Whatever ITR_NS says, two interrupts of one queue are at least this far
 * apart (the moderation timer's granularity, as in Intel's ice/i40e).
 */
#define DMS_NIC_ITR_MIN_GAP_NS 2000

/* Admin interrupt (MSI-X vector 0): link changes, queue faults. RW1C / RW. */
#define DMS_NIC_REG_ADMIN_IRQ_STATUS 0x0060
#define DMS_NIC_REG_ADMIN_IRQ_MASK 0x0064
#define DMS_NIC_ADMIN_IRQ_LINK (1U << 0)
#define DMS_NIC_ADMIN_IRQ_Q_FAULT (1U << 1) /* a ring DMA fault stopped a queue */
/*
 * RO: bit q (LO: queues 0..31, HI: 32..63) is set while RXQ_CTRL or
 * TXQ_CTRL of queue pair q has DMS_NIC_Q_FAULT set.
 */
#define DMS_NIC_REG_Q_FAULT_LO 0x0068
#define DMS_NIC_REG_Q_FAULT_HI 0x006c

/* Device-wide error counters (RO, 32-bit, wrap). */
#define DMS_NIC_REG_STAT_RX_NO_BUF 0x0080    /* waited for buffers (stalls) */
#define DMS_NIC_REG_STAT_RX_DROP 0x0084	     /* dropped: queue off, too long */
#define DMS_NIC_REG_STAT_RX_DMA_ERR 0x0088   /* buffer address faulted */
#define DMS_NIC_REG_STAT_TX_DESC_ERR 0x008c  /* malformed TX descriptors */
#define DMS_NIC_REG_STAT_TX_DMA_ERR 0x0090   /* TX buffer address faulted */
#define DMS_NIC_REG_STAT_RING_ERR 0x0094     /* bad ring setup or index */
#define DMS_NIC_REG_STAT_RING_DMA_ERR 0x0098 /* ring access faulted: queue stopped */
/* v1.10: frames dropped for want of buffers on DROP_EN queues */
#define DMS_NIC_REG_STAT_RX_NO_BUF_DROP 0x009c
/* v1.5: segmentation (dms_tx_seg_desc); RO, 32-bit, wrap. */
#define DMS_NIC_REG_TSO_SUPER 0x00c0 /* super-frames segmented */
#define DMS_NIC_REG_TSO_WIRE 0x00c4  /* frames they became on the wire */
#define DMS_NIC_REG_TSO_ERR 0x00c8   /* refused: dropped with DMS_TX_C_ERR */

/*
 * Hardware GRO (v1.5): with DMS_NIC_RX_GRO and DMS_NIC_RX_CSUM set, each
 * RX queue coalesces in-order TCP segments of up to GRO_FLOWS flows at a
 * time into single frames (docs/datasheet.md has the rules). An aggregate
 * is delivered when it holds GRO_MAX_SEGS segments or the next one would
 * make its IP packet longer than GRO_MAX_BYTES or need more than
 * DMS_NIC_GRO_MAX_BUFS payload buffers; when its queue has seen no TCP frame
 * for GRO_TIMEOUT_NS; and at the latest GRO_MAX_AGE_NS (v1.6; 0, the
 * reset value: DMS_NIC_GRO_AGE_TIMEOUTS times GRO_TIMEOUT_NS) after it
 * opened. A queue's open aggregates hold at most
 * DMS_NIC_GRO_QUEUE_BYTES. Settings are read live; larger values read
 * back as the maxima. The counters count delivered coalesced frames and
 * the segments in them.
 */
#define DMS_NIC_REG_GRO_MAX_SEGS 0x00a0	  /* RW: 2..DMS_NIC_GRO_SEGS_MAX */
#define DMS_NIC_REG_GRO_MAX_BYTES 0x00a4  /* RW: IP packet bytes, <= 65535 */
#define DMS_NIC_REG_GRO_TIMEOUT_NS 0x00a8 /* RW: ns, <= DMS_NIC_GRO_TIMEOUT_MAX_NS */
#define DMS_NIC_REG_GRO_FLOWS 0x00ac	  /* RW: contexts per RX queue, 1..DMS_NIC_GRO_FLOWS_MAX */
#define DMS_NIC_REG_RX_GRO_FRAMES 0x00b0  /* RO: coalesced frames delivered */
#define DMS_NIC_REG_RX_GRO_SEGS 0x00b4	  /* RO: segments in those frames */
#define DMS_NIC_REG_GRO_MAX_AGE_NS 0x00b8 /* RW v1.6: ns, <= DMS_NIC_GRO_AGE_MAX_NS */
#define DMS_NIC_GRO_FLOWS_MAX 512
#define DMS_NIC_GRO_SEGS_MAX 64
#define DMS_NIC_GRO_BYTES_MAX 65535
#define DMS_NIC_GRO_TIMEOUT_MAX_NS 10000000
#define DMS_NIC_GRO_AGE_TIMEOUTS 16
#define DMS_NIC_GRO_AGE_MAX_NS 1000000000
#define DMS_NIC_GRO_QUEUE_BYTES (1U << 20)
#define DMS_NIC_GRO_MAX_BUFS 17 /* payload buffers per frame (Linux MAX_SKB_FRAGS) */

/*
 * PTP hardware clock (v1.6, DMS_NIC_CAP_PTP): a 64-bit nanosecond counter
 * that runs with the device's time (the simulated time; under QEMU the
 * virtual clock, docs/datasheet.md) at a rate the host trims with
 * PTP_ADJ_FINE. Reading PTP_TIME_LO latches the whole counter: PTP_TIME_HI
 * then reads bits 63:32 of that same value (an 8-byte read at PTP_TIME_LO,
 * which is 8-byte aligned, does both). PTP_CMD applies PTP_SET_LO/HI: SET loads the counter, ADJ
 * adds the staged value as a signed 64-bit number (modulo 2^64). Timestamps
 * are the counter when the frame's first byte crossed the MAC; RX stamps
 * carry bits 46:0 (dms_rx_cmpl), TX stamps bits 31:0 (dms_tx_cmpl): the
 * host extends them with a counter value read within 2^30 ns (TX) or
 * 2^45 ns (RX) of the stamp.
 */
#define DMS_NIC_REG_PTP_CTRL 0x0800    /* RW */
#define DMS_NIC_PTP_RX_ALL (1U << 0)   /* stamp every received frame */
#define DMS_NIC_REG_PTP_TIME_LO 0x0808 /* RO: bits 31:0, latches bits 63:32 */
#define DMS_NIC_REG_PTP_TIME_HI 0x080c /* RO: latched bits 63:32 */
#define DMS_NIC_REG_PTP_SET_LO 0x0810  /* RW: staged value, bits 31:0 */
#define DMS_NIC_REG_PTP_SET_HI 0x0814  /* RW: staged value, bits 63:32 */
#define DMS_NIC_REG_PTP_CMD 0x0818     /* write: DMS_NIC_PTP_CMD_*; reads 0 */
#define DMS_NIC_PTP_CMD_SET 1	       /* counter = staged value */
#define DMS_NIC_PTP_CMD_ADJ 2	       /* counter += (s64)staged value */
/*
 * RW: the counter's rate offset, signed, in units of 2^-16 ppm (Linux's
 * scaled_ppm); writes are clamped to +-DMS_NIC_PTP_ADJ_FINE_MAX.
 */
#define DMS_NIC_REG_PTP_ADJ_FINE 0x081c
#define DMS_NIC_PTP_ADJ_FINE_MAX (1000 * 65536) /* +-1000 ppm */
#define DMS_NIC_REG_PTP_RX_STAMPS 0x0820	/* RO: RX frames stamped (wraps) */
#define DMS_NIC_REG_PTP_TX_STAMPS 0x0824	/* RO: TX frames stamped (wraps) */

/*
 * Device TX rate limit (v1.6, DMS_NIC_CAP_TX_RATE): every frame sent, of
 * any queue, also takes its bytes from this token bucket (see the queue's
 * TXQ_RATE_KBPS for the rules). RATE 0: unlimited.
 */
#define DMS_NIC_REG_TX_RATE_KBPS 0x0840 /* RW: 1000 bit/s units, 0 = off */
#define DMS_NIC_REG_TX_BURST 0x0844	/* RW: bucket bytes */
#define DMS_NIC_TX_BURST_MIN 1536	/* smaller BURST values read back as this */
#define DMS_NIC_TX_BURST_MAX (1U << 24)
#define DMS_NIC_REG_TX_RATE_WAITS 0x0848 /* RO: frames held back by a limit (wraps) */

/*
 * TX scheduler nodes (v1.8, DMS_NIC_CAP_TX_SCHED_NODES): DMS_NIC_TXS_NODES
 * nodes, each a token bucket like a queue's (NODE_RATE_KBPS, NODE_BURST)
 * under a parent node. A queue attached to a node pays each frame's bytes
 * into that node's bucket and into every bucket up its chain of parents,
 * and waits while any of them is negative: a node's rate caps the sum of
 * the queues below it. Node numbers in TXS_Q_NODE and TXS_NODE_PARENT are
 * n + 1 for node n; DMS_NIC_TXS_NONE is the device itself. A chain of
 * parents is followed for at most DMS_NIC_TXS_NODES nodes (a loop is cut
 * there). Queues with a non-zero TXS_Q_WEIGHT and the same node (or none)
 * share the engine by weight: of those with a frame ready, the one that
 * has sent the fewest bytes per unit of weight goes first (see
 * docs/datasheet.md, TX scheduler nodes). Read live, kept across ring
 * enables, cleared by a reset.
 */
#define DMS_NIC_TXS_NODES 8
#define DMS_NIC_TXS_NONE 0
#define DMS_NIC_TXS_WEIGHT_MAX 65535	 /* larger weights read back as this */
#define DMS_NIC_REG_TXS_NUM_NODES 0x0b00 /* RO: DMS_NIC_TXS_NODES */
#define DMS_NIC_REG_TXS_Q_SEL 0x0b04	 /* RW: the queue TXS_Q_* reach */
#define DMS_NIC_REG_TXS_Q_NODE 0x0b08	 /* RW: its node, n + 1 or NONE */
#define DMS_NIC_REG_TXS_Q_WEIGHT 0x0b0c	 /* RW: 0 = doorbell order only */

#define DMS_NIC_REG_TXS_NODE_RATE_KBPS(n) (0x0b80 + 16 * (n)) /* RW: as TX_RATE_KBPS */
#define DMS_NIC_REG_TXS_NODE_BURST(n) (0x0b84 + 16 * (n))     /* RW: as TX_BURST */
#define DMS_NIC_REG_TXS_NODE_PARENT(n) (0x0b88 + 16 * (n))    /* RW: n + 1 or NONE */

/*
 * MAC: pause (IEEE 802.3 annex 31B) and FEC (v1.6, DMS_NIC_CAP_MAC_STATS).
 * The MAC does no flow control: it makes no PAUSE frames (v1.8: counts
 * those the host sends) and ignores received ones (counted, then dropped
 * as MAC control frames). The link runs RS(528,514) FEC (IEEE 802.3
 * clause 91); the model's wire has no bit errors, so every codeword
 * decodes with 0 symbol errors. 64-bit counters: reading _LO latches _HI.
 */
#define DMS_NIC_REG_MAC_PAUSE 0x0880	   /* RO: DMS_NIC_PAUSE_* in effect (0) */
#define DMS_NIC_PAUSE_RX (1U << 0)	   /* honours received PAUSE */
#define DMS_NIC_PAUSE_TX (1U << 1)	   /* sends PAUSE */
#define DMS_NIC_PAUSE_AUTONEG (1U << 2)	   /* negotiated */
#define DMS_NIC_REG_PAUSE_RX_FRAMES 0x0884 /* RO: PAUSE frames received (wraps) */
#define DMS_NIC_REG_PAUSE_TX_FRAMES 0x0888 /* RO: host's PAUSE frames sent (wraps) */
#define DMS_NIC_REG_FEC_MODE 0x088c	   /* RO: DMS_NIC_FEC_* */
#define DMS_NIC_FEC_NONE 0
#define DMS_NIC_FEC_RS 1	      /* RS(528,514) */
#define DMS_NIC_FEC_CW_DATA_BITS 5140 /* payload bits per codeword */
#define DMS_NIC_REG_FEC_CW_LO 0x0890  /* RO: codewords received, 0 errors */
#define DMS_NIC_REG_FEC_CW_HI 0x0894
#define DMS_NIC_REG_FEC_CORRECTED 0x0898 /* RO: codewords corrected (wraps) */
#define DMS_NIC_REG_FEC_UNCORR 0x089c	 /* RO: codewords not correctable (wraps) */

/*
 * MAC: IEEE 802.3 clause 30 counters (v1.8, DMS_NIC_CAP_MAC_STD_STATS).
 * Counter i is 64 bits at MSTAT_LO(i)/MSTAT_HI(i); reading _LO latches
 * that counter's _HI (one latch for all). A frame's length is counted as
 * on the wire, destination address through FCS, short frames padded:
 * max(len, 60) + 4. TX counters count frames the MAC sends (link up),
 * RX counters frames it receives, MAC control frames (type 0x8808,
 * PAUSE included) too. RX_MAC_ERR/TX_MAC_ERR: frames lost to a DMA fault
 * between the MAC and host memory. Histogram bin b counts frames of
 * BIN<b-1>_HI + 1 .. BIN<b>_HI bytes, bin 0 up to BIN0_HI.
 */
#define DMS_NIC_REG_MSTAT_LO(i) (0x0a00 + 8 * (i))
#define DMS_NIC_REG_MSTAT_HI(i) (0x0a04 + 8 * (i))
#define DMS_NIC_MSTAT_TX_OK 0		    /* FramesTransmittedOK */
#define DMS_NIC_MSTAT_TX_OCTETS 1	    /* OctetsTransmittedOK */
#define DMS_NIC_MSTAT_TX_MCAST 2	    /* MulticastFramesXmittedOK (not bcast) */
#define DMS_NIC_MSTAT_TX_BCAST 3	    /* BroadcastFramesXmittedOK */
#define DMS_NIC_MSTAT_TX_CTRL 4		    /* MACControlFramesTransmitted */
#define DMS_NIC_MSTAT_TX_MAC_ERR 5	    /* FramesLostDueToIntMACXmitError */
#define DMS_NIC_MSTAT_RX_OK 6		    /* FramesReceivedOK */
#define DMS_NIC_MSTAT_RX_OCTETS 7	    /* OctetsReceivedOK */
#define DMS_NIC_MSTAT_RX_MCAST 8	    /* MulticastFramesReceivedOK (not bcast) */
#define DMS_NIC_MSTAT_RX_BCAST 9	    /* BroadcastFramesReceivedOK */
#define DMS_NIC_MSTAT_RX_CTRL 10	    /* MACControlFramesReceived */
#define DMS_NIC_MSTAT_RX_MAC_ERR 11	    /* FramesLostDueToIntMACRcvError */
#define DMS_NIC_MSTAT_RX_LEN_ERR 12	    /* InRangeLengthErrors */
#define DMS_NIC_MSTAT_RX_LEN_RANGE 13	    /* OutOfRangeLengthField (1501..1535) */
#define DMS_NIC_MSTAT_RX_TOO_LONG 14	    /* FrameTooLongErrors (> MTU + 26), dropped */
#define DMS_NIC_MSTAT_RX_HIST(b) (16 + (b)) /* RMON etherStatsPkts, RX */
#define DMS_NIC_MSTAT_TX_HIST(b) (24 + (b)) /* the same, TX */
#define DMS_NIC_MSTAT_BINS 7
#define DMS_NIC_MSTAT_COUNT 31
/* Top of each bin (bytes with FCS); bin 0 starts at 0, bin b at the top of b - 1, + 1. */
#define DMS_NIC_MSTAT_BIN0_HI 64
#define DMS_NIC_MSTAT_BIN1_HI 127
#define DMS_NIC_MSTAT_BIN2_HI 255
#define DMS_NIC_MSTAT_BIN3_HI 511
#define DMS_NIC_MSTAT_BIN4_HI 1023
#define DMS_NIC_MSTAT_BIN5_HI 1518
#define DMS_NIC_MSTAT_BIN6_HI (DMS_NIC_MAX_MTU + 26) /* the longest frame */

/*
 * RO (v1.6, DMS_NIC_CAP_SERIAL): the device's 64-bit serial number, the
 * EUI-64 of its MAC address (FF:FE inserted after byte 2), byte 0 in bits
 * 63:56 of the value.
 */
#define DMS_NIC_REG_SERIAL_LO 0x08c0
#define DMS_NIC_REG_SERIAL_HI 0x08c4

/*
 * RSS: Toeplitz hash over the IPv4/IPv6 addresses and, for TCP/UDP, the
 * ports (source first), as in Microsoft's RSS specification. Key byte i
 * is bits 8*(i%4)+7:8*(i%4) of KEY word i/4. The queue is
 * INDIR[hash % INDIR_SIZE]. These are context 0's key and table; v1.6
 * adds contexts, the table size and the hashed fields (below).
 */
#define DMS_NIC_RSS_KEY_SIZE 40
#define DMS_NIC_RSS_INDIR_SIZE 128
#define DMS_NIC_RSS_KEY_WORDS (DMS_NIC_RSS_KEY_SIZE / 4)
#define DMS_NIC_REG_RSS_KEY(i) (0x0100 + 4 * (i))   /* i < DMS_NIC_RSS_KEY_WORDS */
#define DMS_NIC_REG_RSS_INDIR(i) (0x0200 + 4 * (i)) /* i < DMS_NIC_RSS_INDIR_SIZE */

/*
 * RSS contexts (v1.6). The NIC has DMS_NIC_RSS_CONTEXTS of them; each has
 * its own key, indirection table, input transform and hashed fields per
 * flow class. Context 0 is the device's default: RSS_KEY and RSS_INDIR
 * above are its key and table. The RSS_CTX_* registers reach the context
 * RSS_CTX_SEL names. A flow steering rule committed with
 * DMS_NIC_RSS_NT_EN in RSS_NT_CTX steers to a context: the queue is the
 * rule's queue plus the context's table entry. A queue number at or beyond
 * NUM_QUEUES delivers to queue 0.
 *
 * Per context, the queue of a hashed frame is INDIR[hash % INDIR_SIZE]
 * (INDIR_SIZE: a power of two, 1..DMS_NIC_RSS_INDIR_SIZE, default
 * DMS_NIC_RSS_INDIR_SIZE). The Toeplitz input is the fields FIELDS[class]
 * selects, in this order: source address, destination address, source
 * port, destination port (16 bits each), IPv6 flow label (32 bits, label
 * in bits 19:0), all in network byte order. With a symmetric XFRM, a pair
 * whose both halves are selected enters as (src ^ dst, src ^ dst)
 * (SYM_XOR) or (src | dst, src ^ dst) (SYM_OR_XOR). A frame whose class
 * selects no field is not hashed and uses entry 0.
 *
 * Refused writes (a context or table size out of range, an unknown XFRM)
 * change nothing and count in RSS_ERR; FIELDS bits a class does not have
 * read back as 0.
 */
#define DMS_NIC_RSS_CONTEXTS 64
#define DMS_NIC_REG_RSS_CTX_SEL 0x0500	      /* RW: context the RSS_CTX_* registers reach */
#define DMS_NIC_REG_RSS_CTX_NUM 0x0504	      /* RO: DMS_NIC_RSS_CONTEXTS */
#define DMS_NIC_REG_RSS_ERR 0x0508	      /* RO: refused RSS writes (32-bit, wraps) */
#define DMS_NIC_REG_RSS_CTX_INDIR_SIZE 0x050c /* RW: table entries used */
#define DMS_NIC_REG_RSS_CTX_XFRM 0x0510	      /* RW: DMS_NIC_RSS_XFRM_* */
#define DMS_NIC_RSS_XFRM_NONE 0
#define DMS_NIC_RSS_XFRM_SYM_XOR 1
#define DMS_NIC_RSS_XFRM_SYM_OR_XOR 2
/*
 * RW, flow steering staging (committed by NT_COMMIT with the NT_* rule):
 * bit 31 steer to RSS context bits 7:0 (< DMS_NIC_RSS_CONTEXTS, else the
 * commit is refused and counted in RSS_ERR), the rule's queue is added to
 * the context's table entry.
 */
#define DMS_NIC_REG_RSS_NT_CTX 0x0514
#define DMS_NIC_RSS_NT_EN (1U << 31)
#define DMS_NIC_RSS_NT_CTX_MASK 0xffU
/* Flow classes (FIELDS index) and their fields. */
#define DMS_NIC_RSS_CLASS_TCP4 0
#define DMS_NIC_RSS_CLASS_UDP4 1
#define DMS_NIC_RSS_CLASS_IP4 2 /* other IPv4, and IPv4 fragments */
#define DMS_NIC_RSS_CLASS_TCP6 3
#define DMS_NIC_RSS_CLASS_UDP6 4
#define DMS_NIC_RSS_CLASS_IP6 5 /* other IPv6 */
#define DMS_NIC_RSS_CLASSES 6
#define DMS_NIC_RSS_F_IP_SRC (1U << 0)
#define DMS_NIC_RSS_F_IP_DST (1U << 1)
#define DMS_NIC_RSS_F_L4_SRC (1U << 2)	   /* TCP/UDP classes */
#define DMS_NIC_RSS_F_L4_DST (1U << 3)	   /* TCP/UDP classes */
#define DMS_NIC_RSS_F_FLOW_LABEL (1U << 4) /* IPv6 classes */
/* RW: reset value: IP_SRC | IP_DST, and L4_SRC | L4_DST for TCP/UDP. */
#define DMS_NIC_REG_RSS_CTX_FIELDS(c) (0x0520 + 4 * (c)) /* c < DMS_NIC_RSS_CLASSES */
#define DMS_NIC_REG_RSS_CTX_KEY(i) (0x0540 + 4 * (i))	 /* i < DMS_NIC_RSS_KEY_WORDS */
#define DMS_NIC_REG_RSS_CTX_INDIR(i) (0x0600 + 4 * (i))	 /* i < DMS_NIC_RSS_INDIR_SIZE */

/*
 * v1.7 (DMS_NIC_CAP_RSS_KEY52): a context's key is 52 bytes, bytes 40..51
 * in RSS_CTX_KEY_EXT (of the context RSS_CTX_SEL names; reset 0), same
 * byte order as RSS_CTX_KEY. Toeplitz XORs in, for input bit i, the 32 key
 * bits from bit i: the hash's low bits, the ones INDIR uses, see an input
 * byte only if the key runs 4 bytes past it. The longest input (an IPv6
 * 4-tuple and the flow label, 40 bytes) needs 44; with 40 (RSS_KEY, v1.6)
 * the label never changed the queue. Inputs up to 36 bytes hash the same
 * under both: their hash uses key bytes 0..39 only.
 */
#define DMS_NIC_RSS_KEY52_SIZE 52
#define DMS_NIC_RSS_KEY_EXT_WORDS ((DMS_NIC_RSS_KEY52_SIZE - DMS_NIC_RSS_KEY_SIZE) / 4)
#define DMS_NIC_REG_RSS_CTX_KEY_EXT(i) (0x0900 + 4 * (i)) /* i < DMS_NIC_RSS_KEY_EXT_WORDS */

/*
 * Flow steering (ntuple): write the rule into the staging registers, then
 * its index into NT_COMMIT. A rule matches when every field, masked,
 * equals the packet's; the first valid matching rule (lowest index) picks
 * the queue. Addresses are in network order: word 0 holds the first four
 * bytes, byte 0 in bits 31:24; IPv4 uses word 0 only.
 */
#define DMS_NIC_REG_NT_CTRL 0x0400
#define DMS_NIC_NT_VALID (1U << 0)
#define DMS_NIC_NT_IPV6 (1U << 1)
#define DMS_NIC_NT_PROTO_SHIFT 8		 /* bits 15:8: IPPROTO_TCP or IPPROTO_UDP */
#define DMS_NIC_NT_QUEUE_SHIFT 16		 /* bits 31:16: target queue */
#define DMS_NIC_REG_NT_PORTS 0x0404		 /* src port << 16 | dst port */
#define DMS_NIC_REG_NT_PORT_MASK 0x0408		 /* src mask << 16 | dst mask */
#define DMS_NIC_NT_ADDR_WORDS 4			 /* 32-bit words of an address register */
#define DMS_NIC_REG_NT_SRC(i) (0x0410 + 4 * (i)) /* i < DMS_NIC_NT_ADDR_WORDS */
#define DMS_NIC_REG_NT_DST(i) (0x0420 + 4 * (i))
#define DMS_NIC_REG_NT_SRC_MASK(i) (0x0430 + 4 * (i))
#define DMS_NIC_REG_NT_DST_MASK(i) (0x0440 + 4 * (i))
#define DMS_NIC_REG_NT_COMMIT 0x0450 /* write: table index */

/*
 * Per queue pair q: registers at DMS_NIC_Q_BASE(q) + offset. Rings hold
 * 1 << RING_LOG2 entries (DMS_NIC_RING_LOG2_MIN..MAX); bases are aligned
 * to 64 bytes. Ring setup is latched when ENABLE goes from 0 to 1: setup
 * registers written while the ring runs read back but only take effect at
 * the next enable.
 * Producer/consumer indexes count entries modulo the ring size.
 */
#define DMS_NIC_Q_STRIDE 0x100 /* bytes of registers per queue pair */
#define DMS_NIC_Q_BASE(q) (0x1000 + DMS_NIC_Q_STRIDE * (q))
#define DMS_NIC_RING_LOG2_MIN 4
#define DMS_NIC_RING_LOG2_MAX 15

#define DMS_NIC_RXQ_CTRL 0x00 /* RW */
#define DMS_NIC_Q_ENABLE (1U << 0)
/* RO: the last enable was refused (bad setup); cleared by an accepted one. */
#define DMS_NIC_Q_CFG_ERR (1U << 1)
/*
 * RO: a DMA fault on one of the ring's descriptor or completion accesses
 * stopped it (ENABLE reads 0); cleared by an accepted enable.
 */
#define DMS_NIC_Q_FAULT (1U << 2)
/*
 * RXQ_CTRL, RW (v1.8, DMS_NIC_CAP_RXQ_WHOLE), latched with ENABLE: the
 * queue never splits headers and never uses header buffers, whatever
 * RX_CTRL's HDR_SPLIT says; every frame goes whole to payload buffers
 * (AF_XDP zero-copy: a socket's frame is one buffer).
 */
#define DMS_NIC_Q_WHOLE (1U << 3)
/*
 * RXQ_CTRL, RW (v1.9, DMS_NIC_CAP_RXQ_PACK), latched with ENABLE: payload
 * buffers are packed. The posted payload buffers form one stream: a
 * frame's payload starts where the previous frame's ended in the buffer at
 * the ring's head, rounded up to DMS_NIC_PACK_ALIGN, and goes on into the
 * following buffers; each part in one buffer is a piece with its own
 * completion. The first piece of a buffer is at offset 0, every other at
 * the end of the piece before it in that buffer rounded up to
 * DMS_NIC_PACK_ALIGN: the host finds a piece's offset by counting, as the
 * completions come in ring order. The completion of the piece after which
 * the rounded-up offset reaches the buffer's end carries
 * DMS_RX_F_PBUF_DONE: the device will not write that buffer again. A
 * frame lost to a DMA fault ends every buffer it touched (each of its
 * SOP|EOP|ERR completions carries DMS_RX_F_PBUF_DONE) and the next frame
 * starts a new buffer. Small payloads thus share a buffer (the memory
 * mlx5's striding RQ and fbnic save), instead of one buffer each. An
 * enable with WHOLE and PACK both set is refused (CFG_ERR).
 */
#define DMS_NIC_Q_PACK (1U << 4)
#define DMS_NIC_PACK_ALIGN 128
/*
 * RXQ_CTRL, RW (v1.10, DMS_NIC_CAP_RXQ_DROP), latched with ENABLE: drop
 * enable. One engine takes the frames from the wire in order for every
 * RX queue. A frame for a queue without DROP_EN that lacks the header
 * buffer, payload buffers or completion slots it needs waits for them in
 * the engine, and every frame behind it waits too, whatever its queue
 * (head-of-line blocking; counted once per frame in STAT_RX_NO_BUF).
 * On a DROP_EN queue such a frame is dropped at once and counted in the
 * queue's RXQ_NO_BUF_DROP and in STAT_RX_NO_BUF_DROP, and the engine
 * goes on with the next frame (Intel 82599 SRRCTL.DROP_EN).
 */
#define DMS_NIC_Q_DROP_EN (1U << 5)
#define DMS_NIC_RXQ_RING_LOG2 0x04    /* all three RX rings */
#define DMS_NIC_RXQ_HBUF_BASE_LO 0x08 /* header buffer ring (host memory) */
#define DMS_NIC_RXQ_HBUF_BASE_HI 0x0c
#define DMS_NIC_RXQ_PBUF_BASE_LO 0x10 /* payload buffer ring */
#define DMS_NIC_RXQ_PBUF_BASE_HI 0x14
#define DMS_NIC_RXQ_CMPL_BASE_LO 0x18 /* completion ring */
#define DMS_NIC_RXQ_CMPL_BASE_HI 0x1c
#define DMS_NIC_RXQ_HBUF_TAIL 0x20 /* doorbell: header buffers posted */
#define DMS_NIC_RXQ_PBUF_TAIL 0x24 /* doorbell: payload buffers posted */
#define DMS_NIC_RXQ_CMPL_HEAD 0x28 /* driver: completions consumed */
#define DMS_NIC_RXQ_HBUF_SIZE 0x2c /* bytes per header buffer */
#define DMS_NIC_RXQ_PBUF_SIZE 0x30 /* bytes per payload buffer */
#define DMS_NIC_HBUF_SIZE_MIN 64
#define DMS_NIC_HBUF_SIZE_MAX 4096
#define DMS_NIC_PBUF_SIZE_MIN 512
#define DMS_NIC_PBUF_SIZE_MAX 65536
/* RO (v1.10): frames dropped on this DROP_EN queue for want of buffers (wraps) */
#define DMS_NIC_RXQ_NO_BUF_DROP 0x34

#define DMS_NIC_TXQ_CTRL 0x40	   /* RW: DMS_NIC_Q_ENABLE */
#define DMS_NIC_TXQ_RING_LOG2 0x44 /* both TX rings */
#define DMS_NIC_TXQ_DESC_BASE_LO 0x48
#define DMS_NIC_TXQ_DESC_BASE_HI 0x4c
#define DMS_NIC_TXQ_CMPL_BASE_LO 0x50
#define DMS_NIC_TXQ_CMPL_BASE_HI 0x54
#define DMS_NIC_TXQ_TAIL 0x58	   /* doorbell: descriptors posted */
#define DMS_NIC_TXQ_CMPL_HEAD 0x5c /* driver: completions consumed */

/*
 * Queue interrupt (MSI-X vector q + 1): fires once when the queue has
 * written an RX or TX completion while armed, then disarms. NAPI re-arms
 * it when it has caught up.
 */
#define DMS_NIC_Q_IRQ_ARM 0x80 /* write 1: arm */

/*
 * Per-queue interrupt moderation (v1.4, RW, read live). While the vector
 * is armed, RX completions pending (written, not yet consumed) make it
 * fire Q_RX_ITR_NS after the first of them became pending while armed,
 * TX completions Q_TX_ITR_NS after theirs, whichever comes first. A
 * non-zero Q_*_ITR_FRAMES ends that wait as soon as that many completions
 * of its kind are pending. ITR_NS and DMS_NIC_ITR_MIN_GAP_NS since the
 * queue's last interrupt still hold. Larger values read back as the
 * maxima below.
 */
#define DMS_NIC_Q_RX_ITR_NS 0x84
#define DMS_NIC_Q_TX_ITR_NS 0x88
#define DMS_NIC_Q_RX_ITR_FRAMES 0x8c
#define DMS_NIC_Q_TX_ITR_FRAMES 0x90
#define DMS_NIC_ITR_MAX_FRAMES 65535

/*
 * Queue TX rate limit (v1.6, DMS_NIC_CAP_TX_RATE, RW, read live): a token
 * bucket of TXQ_BURST bytes filled at TXQ_RATE_KBPS * 1000 bit/s. The
 * queue sends its next frame (all segments of a super-frame) only while
 * the bucket is not negative, and each frame takes its bytes (Ethernet
 * header to the end of the payload) from it; the engine serves the other
 * queues meanwhile. RATE 0: unlimited. Writing RATE refills the bucket.
 */
#define DMS_NIC_TXQ_RATE_KBPS 0xa0
#define DMS_NIC_TXQ_BURST 0xa4 /* DMS_NIC_TX_BURST_MIN..MAX */

#endif /* DEVMEMSIM_NIC_REGS_H */
