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
/*
 * int32 elements per message. 768 makes a 3,136-byte frame (3,144 with a
 * member set), within the page an XDP program gets without multi-buffer on
 * veth and virtio-net (MTU up to 3,506 on 6.1). A job's chunk (elements
 * per message, the same for all its members) is IA_CHUNK_DEFAULT unless it
 * says otherwise: 1,088-byte frames that pass any 1,500-byte link.
 */
#define IA_MAX_ELEMS	768
#define IA_CHUNK_DEFAULT	256

enum ia_msg_type {
	IA_MSG_CONTRIB	= 1,	/* a worker's vector for one chunk, going up */
	IA_MSG_AGG	= 2,	/* a blue switch's aggregate, going up */
	IA_MSG_RESULT	= 3,	/* the final vector, coming down from the destination */
};

/* ia_hdr.flags */
#define IA_F_MARK	0x01	/* congestion mark: set by anyone, ORed into aggregates */
#define IA_F_RETX	0x02	/* sender retransmission (after a timeout); on a RESULT:
				 * not the chunk's first (an answer to a resend, from
				 * the destination or a blue switch holding it) */
#define IA_F_REEMIT	0x04	/* aggregate re-sent from a completed slot */
#define IA_F_RECOVERY	(IA_F_RETX | IA_F_REEMIT)	/* sent again to recover a loss */
/* PS jobs' tail aggregation (docs/memory.md, "Tail aggregation and exactly-once"): */
#define IA_F_SET	0x08	/* a member set trailer (struct ia_set) follows the payload */
#define IA_F_FLUSH	0x10	/* a tail slot's partial aggregate, flushed toward the PS */
#define IA_F_COLL	0x20	/* up: passed a tail switch unaggregated (a collision); on a
				 * RESULT: an accepted piece of the chunk had it (the PS
				 * sets it, workers' aggregator windows react, docs/cc.md) */
/*
 * On a RESULT: no result but the destination's request for pieces it lacks,
 * nelem / 2 pairs (chunk seq, sender id) in the payload; seq is the first
 * pair's, nworkers 0 (docs/hosts.md, "Loss recovery").
 */
#define IA_F_NACK	0x40
#define IA_F_BYPASS	0x80	/* up, a PS job's: beyond its sender's aggregator window,
				 * kept out of switch memory (tails pass it, docs/cc.md) */

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

/*
 * Member set of a PS job's message: bit r is the worker of rank r (0..63,
 * ranks given by the control plane). A message without IA_F_SET carries the
 * set of its sender: a worker its own bit, a tail switch's complete
 * aggregate every rank below that switch. With IA_F_SET (flushed partial
 * aggregates) the set follows the payload, big-endian, high word first,
 * and the UDP length counts it. nworkers is always the set's popcount.
 */
struct ia_set {
	__be32	hi;
	__be32	lo;
} __attribute__((packed));

#define IA_SET_LEN	8
/* The IP MTU a message of nelem elements needs: IPv4, UDP, header, payload, set. */
#define IA_MTU(nelem)	(20 + IA_UDP_LEN(nelem) + IA_SET_LEN)
#define IA_MAX_RANKS	64	/* workers of a PS job the tail can aggregate */

/* The same on every switch and host: murmur3's finaliser. */
static inline __u32 ia_mix32(__u32 h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/*
 * Where chunk seq of PS job job goes in a switch's tail directory (modulo
 * its size), the same on every switch and host. Chunks go in runs of
 * IA_TAIL_RUN: a hash of (job, seq / IA_TAIL_RUN) places the run, seq %
 * IA_TAIL_RUN is the slot in it, so a job's consecutive chunks take
 * consecutive slots (memory the CPU prefetches: hashed one by one over a
 * 4096-slot pool, each chunk's first slot access missed; docs/memory.md)
 * while jobs and runs spread over the directory as ATP's hash does.
 */
#define IA_TAIL_RUN	16u	/* a power of 2 */

static inline __u32 ia_tail_hash(__u32 job, __u32 seq)
{
	return (ia_mix32(job * 0x9e3779b1u ^ (seq / IA_TAIL_RUN)) & ~(IA_TAIL_RUN - 1)) |
	       (seq & (IA_TAIL_RUN - 1));
}

_Static_assert(sizeof(struct ia_hdr) == IA_HDR_LEN, "ia_hdr is 22 bytes");
_Static_assert(IA_F_SET == IA_SET_LEN, "the trailer's length is its flag (parse adds it)");
_Static_assert(IA_PAYLOAD_OFF % 4 == 0, "payload 4-byte aligned");

#endif /* INAGG_WIRE_H */
