/* SPDX-License-Identifier: GPL-2.0 */
/*
 * inagg wire format, shared by the XDP datapath, hosts and tests.
 *
 * Frame: Ethernet II / IPv4 without options / UDP to IA_UDP_PORT / struct
 * ia_hdr (22 bytes) / payload of nelem int32, little-endian. The header is
 * 22 bytes so that the payload starts at frame offset 64: 4-byte (indeed
 * 8-byte) aligned, which keeps the per-element adds plain aligned loads.
 * Header fields are big-endian (network order); payload elements are
 * little-endian two's complement int32.
 *
 * Sums wrap modulo 2^32 (see docs/datapath.md): wrapping addition is
 * associative and commutative, so every placement and arrival order gives
 * the same result, and that result is the exact sum whenever the exact sum
 * fits in int32, even if a partial sum overflowed on the way.
 */
#ifndef INAGG_WIRE_H
#define INAGG_WIRE_H

#include <linux/types.h>

#define IA_UDP_PORT	9430	/* destination port of every inagg message */
#define IA_VERSION	1
#define IA_MAX_ELEMS	256	/* int32 elements per message */

enum ia_msg_type {
	IA_MSG_CONTRIB	= 1,	/* a worker's vector for one chunk, going up */
	IA_MSG_AGG	= 2,	/* a blue switch's aggregate, going up */
	IA_MSG_RESULT	= 3,	/* the final vector, coming down from the destination */
};

/* ia_hdr.flags */
#define IA_F_MARK	0x01	/* congestion mark: set by anyone, ORed into aggregates */
#define IA_F_RETX	0x02	/* sender retransmission (after a timeout) */
#define IA_F_REEMIT	0x04	/* aggregate re-sent from a completed slot */
#define IA_F_RECOVERY	(IA_F_RETX | IA_F_REEMIT)	/* sent again to recover a loss */

/*
 * Starts at frame offset 42, so every 32-bit field (header offset 2 mod 4)
 * is 4-byte aligned in the frame.
 */
struct ia_hdr {
	__u8	ver;		/* IA_VERSION */
	__u8	type;		/* enum ia_msg_type */
	__be32	job;		/* job id, unique on the network */
	__be32	seq;		/* chunk sequence number */
	__be32	sender;		/* worker id (CONTRIB) or switch id (AGG); duplicate detection */
	__be32	nworkers;	/* workers whose contributions this message sums */
	__be16	nelem;		/* payload elements, 1..IA_MAX_ELEMS */
	__u8	flags;		/* IA_F_* */
	__u8	rsvd;		/* zero */
} __attribute__((packed));

#define IA_HDR_LEN	22
#define IA_L2L4_LEN	42	/* Ethernet 14 + IPv4 20 + UDP 8 */
#define IA_PAYLOAD_OFF	(IA_L2L4_LEN + IA_HDR_LEN)	/* 64 */
#define IA_FRAME_LEN(nelem)	(IA_PAYLOAD_OFF + 4 * (nelem))
#define IA_UDP_LEN(nelem)	(8 + IA_HDR_LEN + 4 * (nelem))

_Static_assert(sizeof(struct ia_hdr) == IA_HDR_LEN, "ia_hdr is 22 bytes");
_Static_assert(IA_PAYLOAD_OFF % 4 == 0, "payload 4-byte aligned");

#endif /* INAGG_WIRE_H */
