/* SPDX-License-Identifier: MIT */
/*
 * devmemsim NIC descriptor and completion layouts (little endian, in the
 * rings set up through nic_regs.h). Shared by the model, the QEMU glue
 * and dmsnic; docs/datasheet.md explains the datapath.
 *
 * Ownership of completions: the device writes each completion with its GEN
 * bit equal to the ring's current phase, which starts at 1 and flips every
 * time the device wraps the ring. The driver owns an entry once its GEN
 * bit equals the phase the driver expects; it returns entries by writing
 * its consumer index to the CMPL_HEAD register.
 */
#ifndef DEVMEMSIM_NIC_DESC_H
#define DEVMEMSIM_NIC_DESC_H

#include "regs_common.h"

/*
 * RX buffer descriptor, in the header-buffer and payload-buffer rings: a
 * buffer of HBUF_SIZE or PBUF_SIZE bytes at addr (any DMA address: host
 * memory, or device memory through P2P for payloads). id comes back in the
 * completion that uses the buffer.
 */
struct dms_rx_buf {
	dms_le64 addr;
	dms_le16 id;
	dms_le16 rsvd[3];
};
DMS_STATIC_ASSERT(sizeof(struct dms_rx_buf) == 16, "dms_rx_buf is 16 bytes");

/*
 * RX completion: one per payload buffer a frame fills, or one for a frame
 * that fits in its header buffer. The first completion of a frame
 * (DMS_RX_F_SOP) carries the header buffer, if any, and the frame's
 * metadata; the last has DMS_RX_F_EOP.
 *
 * Placement: with header split on and a frame that splits (Ethernet,
 * optional 802.1Q tags, IPv4 with options or IPv6 without extension
 * headers, TCP with options or UDP, not a fragment, payload longer than
 * HDS_THRESH, headers no longer than HBUF_SIZE), the headers go to a
 * header buffer and the payload to payload buffers. A frame that does not split goes whole to a
 * header buffer if it fits there, else whole to payload buffers without DMS_RX_F_SPLIT. With header
 * split off, every frame goes to payload buffers.
 *
 * Hardware GRO (v1.5, DMS_NIC_RX_GRO): a frame may stand for several TCP
 * segments of one flow that the device coalesced. Its headers are the
 * first segment's with the IP lengths (and the IPv4 header checksum)
 * rewritten for the whole frame and PSH set if any segment had it; its
 * payload is the segments' payloads back to back, placed like the payload
 * of any frame of that length (each payload buffer filled from offset 0,
 * the last one partly). The SOP completion gives the segment count and the
 * first segment's payload length (every segment but the last has exactly
 * that many bytes); the TCP checksum field is the first segment's, stale,
 * and the frame always carries DMS_RX_F_CSUM_OK (every segment was checked).
 */
struct dms_rx_cmpl {
	dms_le16 flags;	    /* DMS_RX_F_* */
	dms_le16 hbuf_id;   /* valid with DMS_RX_F_HDR */
	dms_le16 pbuf_id;   /* valid with DMS_RX_F_PAY */
	dms_le16 hdr_len;   /* bytes in the header buffer */
	dms_le32 pay_len;   /* bytes in this payload buffer (from 0, or a PACK piece's offset) */
	dms_le32 rss_hash;  /* valid with DMS_RX_F_RSS */
	dms_le16 info;	    /* DMS_RX_L3_* | DMS_RX_L4_* (SOP only) */
	dms_le16 gro_segs;  /* v1.5, SOP: TCP segments coalesced (>= 2), else 0 */
	dms_le32 frame_len; /* whole frame, SOP only */
	dms_le16 gso_size;  /* v1.5, SOP with gro_segs: payload bytes per segment */
	dms_le16 ts_hi;	    /* v1.6, SOP: DMS_RX_TS_VALID | stamp bits 46:32 */
	dms_le32 ts_lo;	    /* v1.6, SOP with DMS_RX_TS_VALID: stamp bits 31:0 */
};
DMS_STATIC_ASSERT(sizeof(struct dms_rx_cmpl) == 32, "dms_rx_cmpl is 32 bytes");

#define DMS_RX_F_GEN (1U << 0)
#define DMS_RX_F_SOP (1U << 1)
#define DMS_RX_F_EOP (1U << 2)
#define DMS_RX_F_HDR (1U << 3)	    /* hbuf_id/hdr_len valid */
#define DMS_RX_F_PAY (1U << 4)	    /* pbuf_id/pay_len valid */
#define DMS_RX_F_SPLIT (1U << 5)    /* headers and payload were split */
#define DMS_RX_F_CSUM_OK (1U << 6)  /* L4 (and IPv4 header) checksum good */
#define DMS_RX_F_CSUM_BAD (1U << 7) /* checked and wrong */
#define DMS_RX_F_RSS (1U << 8)
/*
 * The frame was lost (a buffer address faulted): the completion only
 * returns its buffers. Always with SOP and EOP.
 */
#define DMS_RX_F_ERR (1U << 9)
/*
 * v1.9, on a DMS_NIC_Q_PACK queue: the device is done with this
 * completion's payload buffer and will not write it again.
 */
#define DMS_RX_F_PBUF_DONE (1U << 10)

/*
 * v1.6: ts_hi bit 15 says the SOP completion carries the frame's PTP clock
 * stamp (DMS_NIC_PTP_RX_ALL was set), bits 46:0 of it in ts_hi and ts_lo.
 */
#define DMS_RX_TS_VALID (1U << 15)
#define DMS_RX_TS_HI_MASK 0x7fff
#define DMS_RX_TS_BITS 47 /* stamp bits an RX completion carries */

#define DMS_RX_L3_MASK 0x3
#define DMS_RX_L3_NONE 0
#define DMS_RX_L3_IPV4 1
#define DMS_RX_L3_IPV6 2
#define DMS_RX_L4_SHIFT 2
#define DMS_RX_L4_MASK (0x3 << DMS_RX_L4_SHIFT)
#define DMS_RX_L4_NONE (0 << DMS_RX_L4_SHIFT)
#define DMS_RX_L4_TCP (1 << DMS_RX_L4_SHIFT)
#define DMS_RX_L4_UDP (2 << DMS_RX_L4_SHIFT)

/*
 * TX descriptor: one per buffer of a frame, SOP on the first, EOP on the
 * last, at most DMS_NIC_REG_MAX_TX_FRAGS per frame (v1.5: optionally after a
 * segmentation descriptor, below). Buffers may be in host
 * or device memory. The device completes frames, not descriptors: the EOP
 * descriptor's tag comes back in a TX completion.
 */
struct dms_tx_desc {
	dms_le64 addr;
	dms_le32 len;	/* 1..65535 */
	dms_le16 flags; /* DMS_TX_F_* */
	dms_le16 tag;
};
DMS_STATIC_ASSERT(sizeof(struct dms_tx_desc) == 16, "dms_tx_desc is 16 bytes");

#define DMS_TX_F_SOP (1U << 0)
#define DMS_TX_F_EOP (1U << 1)
#define DMS_TX_F_CSUM (1U << 2) /* SOP: fill in the TCP/UDP checksum */
#define DMS_TX_F_SEG (1U << 3)	/* a dms_tx_seg_desc, not a buffer */
/*
 * v1.6, SOP (DMS_NIC_CAP_PTP): stamp the frame; its completion's ts holds
 * bits 31:0 of the PTP clock when its first (segment's) first byte went
 * out. Never a dms_tx_seg_desc kind (those use bits 4-6 of its flags).
 */
#define DMS_TX_F_TS (1U << 8)

/*
 * Segmentation descriptor (v1.5, DMS_NIC_CAP_TSO/USO): put before the SOP
 * descriptor of a chain, it makes the device cut the chain (a super-frame:
 * hdr_len bytes of Ethernet + IP + TCP/UDP headers, then the payload) into
 * frames of hdr_len + mss bytes, the last one shorter, each with its own
 * rewritten headers and checksums (docs/datasheet.md, Segmentation). It
 * takes a ring slot but is not a buffer: it does not count towards
 * MAX_TX_FRAGS, and its flags sit where a buffer descriptor's do, so a
 * chain without it is read exactly as before. Exactly one DMS_TX_SEG_*
 * kind is set; the rsvd fields are 0.
 */
struct dms_tx_seg_desc {
	dms_le16 mss;	  /* payload bytes per segment */
	dms_le16 hdr_len; /* Ethernet + IP + TCP/UDP header bytes */
	dms_le32 rsvd0;
	dms_le32 rsvd1;
	dms_le16 flags; /* DMS_TX_F_SEG | one DMS_TX_SEG_* */
	dms_le16 rsvd2;
};
DMS_STATIC_ASSERT(sizeof(struct dms_tx_seg_desc) == 16, "dms_tx_seg_desc is 16 bytes");

#define DMS_TX_SEG_TCP4 (1U << 4) /* TCP over IPv4 (TSO) */
#define DMS_TX_SEG_TCP6 (1U << 5) /* TCP over IPv6 (TSO) */
#define DMS_TX_SEG_UDP (1U << 6)  /* UDP over IPv4 or IPv6 (USO: UDP GSO) */
#define DMS_TX_SEG_KINDS (DMS_TX_SEG_TCP4 | DMS_TX_SEG_TCP6 | DMS_TX_SEG_UDP)

struct dms_tx_cmpl {
	dms_le16 flags; /* DMS_TX_C_* */
	dms_le16 tag;
	dms_le32 ts; /* v1.6: PTP stamp bits 31:0 if the SOP had DMS_TX_F_TS, else 0 */
};
#define DMS_TX_TS_BITS 32 /* stamp bits a TX completion carries */
DMS_STATIC_ASSERT(sizeof(struct dms_tx_cmpl) == 8, "dms_tx_cmpl is 8 bytes");

#define DMS_TX_C_GEN (1U << 0)
#define DMS_TX_C_ERR (1U << 1) /* frame dropped: bad descriptors or DMA fault */

#endif /* DEVMEMSIM_NIC_DESC_H */
