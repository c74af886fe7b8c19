/* SPDX-License-Identifier: GPL-2.0 */
/* The model's frame at work, shared by model.c and model_tail.c only. */
#ifndef INAGG_TESTS_MODEL_INT_H
#define INAGG_TESTS_MODEL_INT_H

#include "model.h"

/* Frame offsets (wire.h: Ethernet 14, IPv4 20, UDP 8, then the header). */
#define F_IP		14
#define F_IP_LEN	16
#define F_IP_FRAG	20
#define F_IP_CSUM	24
#define F_SADDR		26
#define F_DADDR		30
#define F_UDP_LEN	38
#define F_UDP_CSUM	40
#define F_VER		42
#define F_TYPE		43
#define F_JOB		44
#define F_SEQ		48
#define F_SENDER	52
#define F_NWORKERS	56
#define F_NELEM		60
#define F_FLAGS		62
#define F_PL		64

struct m_pkt {
	struct m_out	*o;	/* o->frame is the frame, changed in place */
	int		pi;	/* ingress port index, -1: not a port */
	int		ifindex;
	struct m_job	*j;
	__u32		nelem, seq;
};

static inline __u32 m_get32(const __u8 *p)
{
	return (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3];
}

static inline __u16 m_get16(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

static inline void m_put32(__u8 *p, __u32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static inline void m_put16(__u8 *p, __u16 v)
{
	p[0] = v >> 8;
	p[1] = v;
}

/* Payload element i (little-endian int32). */
static inline __u32 m_elem(const __u8 *f, __u32 i)
{
	const __u8 *p = f + F_PL + 4 * i;

	return (__u32)p[0] | (__u32)p[1] << 8 | (__u32)p[2] << 16 | (__u32)p[3] << 24;
}

static inline void m_set_elem(__u8 *f, __u32 i, __u32 v)
{
	__u8 *p = f + F_PL + 4 * i;

	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

/* A job counter (port counters: m_pcnt()). */
static inline void m_cnt(struct m_pkt *k, int c)
{
	if (k->j)
		k->j->c[c]++;
}

void m_pcnt(struct m_switch *sw, int pi, int c);
int m_drop(struct m_switch *sw, struct m_pkt *k, int c, int branch);
int m_forward_up(struct m_switch *sw, struct m_pkt *k);
int m_send_aggregate(struct m_switch *sw, struct m_pkt *k, __u32 nworkers, __u8 flags);
void m_touch(struct m_pkt *k, int job, int idx);
void m_slot_open(struct m_slot *s, __u32 seq, __u32 nelem);

#define M_BR(k, b)	((k)->o->branches |= 1ULL << (b))

#endif /* INAGG_TESTS_MODEL_INT_H */
