// SPDX-License-Identifier: GPL-2.0
/*
 * Window control policies (cc.h, docs/cc.md). One implementation of each,
 * used by the live worker and by the simulator alike.
 */
#include <errno.h>
#include <string.h>

#include "cc.h"
#include "names.h"

static const char *const names[IA_CC__COUNT] = {
	[IA_CC_FIXED] = "fixed",
	[IA_CC_ATP] = "atp",
	[IA_CC_A2TP] = "a2tp",
	[IA_CC_FLEXINA] = "flexina",
};

const char *ia_cc_policy_name(enum ia_cc_policy p)
{
	return ia_name_of(names, IA_CC__COUNT, p);
}

int ia_cc_policy_parse(const char *name, enum ia_cc_policy *p)
{
	int i = ia_name_find(names, IA_CC__COUNT, name);

	if (i < 0)
		return -EINVAL;
	*p = i;
	return 0;
}

static void round_start(struct ia_cc *cc)
{
	cc->rlen = cc->cwnd;
	cc->racked = cc->rmarked = cc->rcoll = 0;
	cc->rlast_mark = false;
}

static void set_cwnd(struct ia_cc *cc, uint32_t w, uint64_t now)
{
	if (w < cc->cfg.wmin)
		w = cc->cfg.wmin;
	if (w > cc->cfg.wmax)
		w = cc->cfg.wmax;
	if (w == cc->cwnd)
		return;
	if (w < cc->cwnd) {
		cc->t_cut = now;
		cc->cuts++;
	}
	cc->cwnd = w;
	cc->t_change = now;
}

int ia_cc_init(struct ia_cc *cc, const struct ia_cc_cfg *cfg, uint64_t now)
{
	struct ia_cc_cfg c = *cfg;

	if ((unsigned int)c.policy >= IA_CC__COUNT || !c.wmax)
		return -EINVAL;
	if (!c.wmin)
		c.wmin = 1;
	if (!c.init)
		c.init = c.wmax;
	if (c.wmin > c.wmax || c.init < c.wmin || c.init > c.wmax)
		return -EINVAL;
	memset(cc, 0, sizeof(*cc));
	cc->cfg = c;
	cc->cwnd = c.init;
	cc->awnd = c.wmax;
	/*
	 * DCTCP starts at alpha = 1: the first congestion is met with a full cut
	 * (flexina). A2TP's client starts alpha (and beta) at 0.
	 */
	cc->alpha = c.policy == IA_CC_A2TP ? 0 : IA_CC_ONE;
	cc->t_change = now;
	round_start(cc);
	return 0;
}

/* w - max(1, floor(w * num / den)): a signal always costs at least one chunk. */
static uint32_t cut(uint32_t w, uint64_t num, uint64_t den)
{
	uint64_t d = (uint64_t)w * num / den;

	d = d ? d : 1;
	return d >= w ? 0 : w - (uint32_t)d;
}

/* The aggregator window of flexina's PS jobs: cut by half the round's collision fraction. */
static void agg_round(struct ia_cc *cc)
{
	uint32_t w = cc->awnd;

	if (cc->rcoll) {
		w = cut(w, cc->rcoll, 2ull * cc->racked);
		cc->acuts++;
	} else {
		w++;
	}
	if (w < cc->cfg.wmin)
		w = cc->cfg.wmin;
	if (w > cc->cfg.wmax)
		w = cc->cfg.wmax;
	cc->awnd = w;
}

/*
 * DCTCP's estimator and cut: alpha <- alpha - alpha/8 + (marked/acked)/8;
 * on marks cwnd <- cwnd (1 - alpha/2), or cwnd (1 - alpha) for a flexina PS
 * job (it yields first); else +1.
 */
static void link_round(struct ia_cc *cc, bool hard, uint64_t now)
{
	cc->alpha = cc->alpha - (cc->alpha >> IA_CC_G_SHIFT) +
		    (uint32_t)(((uint64_t)cc->rmarked * (IA_CC_ONE >> IA_CC_G_SHIFT)) / cc->racked);
	if (cc->alpha > IA_CC_ONE)
		cc->alpha = IA_CC_ONE;
	if (cc->rmarked)
		set_cwnd(cc, cut(cc->cwnd, cc->alpha, hard ? IA_CC_ONE : 2 * IA_CC_ONE), now);
	else
		set_cwnd(cc, cc->cwnd + 1, now);
}

/*
 * ATP's client (CC_manager::adjustWindow(), called for the result that closes
 * the window): only that result's mark counts; marked halves, else the window
 * grows by 1500 bytes rounded down to whole packets, one of our ~1.1 KB frames.
 */
static void atp_round(struct ia_cc *cc, uint64_t now)
{
	set_cwnd(cc, cc->rlast_mark ? cc->cwnd / 2 : cc->cwnd + 1, now);
}

/* floor(w * num / den): A2TP keeps windows in bytes and rounds down to packets. */
static uint32_t scale(uint32_t w, uint64_t num, uint64_t den)
{
	return (uint32_t)((uint64_t)w * num / den);
}

/*
 * A2TP's client, at the window-closing result: alpha and beta are EWMAs (g
 * 1/8) of the marked fraction of the window and the collided fraction of the
 * aggregator window; the aggregator window is cut by (beta - thr)^gamma /
 * (2 - thr) once beta exceeds thr, else +1; the link window as DCTCP's.
 * gamma is 1: its EWMA starts at 1 and moves only with the straggler degree,
 * which no worker here measures (docs/cc.md).
 */
static void a2tp_round(struct ia_cc *cc, uint64_t now)
{
	uint32_t aw = ia_cc_agg_window(cc), w = cc->cwnd;
	uint64_t b;

	cc->alpha = cc->alpha - (cc->alpha >> IA_CC_G_SHIFT) +
		    (uint32_t)(((uint64_t)cc->rmarked * (IA_CC_ONE >> IA_CC_G_SHIFT)) / cc->racked);
	if (cc->alpha > IA_CC_ONE)
		cc->alpha = IA_CC_ONE;
	b = cc->beta - (cc->beta >> IA_CC_G_SHIFT) +
	    ((uint64_t)cc->rcoll * (IA_CC_ONE >> IA_CC_G_SHIFT)) / aw;
	cc->beta = b > IA_CC_ONE ? IA_CC_ONE : (uint32_t)b;
	/* 1 - (beta - thr) / (2 - thr) = (2 - beta) / (2 - thr) */
	if (cc->rcoll && cc->beta > IA_CC_A2TP_THRESH) {
		aw = scale(aw, 2 * IA_CC_ONE - cc->beta, 2 * IA_CC_ONE - IA_CC_A2TP_THRESH);
		cc->acuts++;
	} else {
		aw++;
	}
	if (cc->rmarked)
		w = scale(w, 2 * IA_CC_ONE - cc->alpha, 2 * IA_CC_ONE);
	else
		w++;
	set_cwnd(cc, w, now);
	if (aw < cc->cfg.wmin)
		aw = cc->cfg.wmin;
	/* A2TP keeps the aggregator window within the link window. */
	cc->awnd = aw < cc->cwnd ? aw : cc->cwnd;
}

void ia_cc_result(struct ia_cc *cc, unsigned int flags, uint64_t now)
{
	const struct ia_cc_cfg *c = &cc->cfg;

	if (c->policy == IA_CC_FIXED) {
		set_cwnd(cc, cc->cwnd + 1, now);
		return;
	}
	cc->racked++;
	cc->rmarked += !!(flags & IA_CC_MARK);
	cc->rcoll += !!(flags & IA_CC_COLL);
	cc->rlast_mark = flags & IA_CC_MARK;
	if (cc->racked < cc->rlen)
		return;
	cc->rounds++;
	switch (c->policy) {
	case IA_CC_ATP:
		atp_round(cc, now);
		break;
	case IA_CC_A2TP:
		a2tp_round(cc, now);
		break;
	case IA_CC_FLEXINA:
		link_round(cc, c->ps, now);
		/* An INA job's head is its own: all its chunks aggregate. */
		if (c->ps)
			agg_round(cc);
		break;
	default:
		break;
	}
	round_start(cc);
}

void ia_cc_timeout(struct ia_cc *cc, uint64_t now)
{
	set_cwnd(cc, cc->cwnd / 2, now);
	round_start(cc);
}

void ia_cc_iteration(struct ia_cc *cc, uint64_t now)
{
	if (cc->cfg.policy != IA_CC_ATP)
		return;
	cc->cwnd = cc->cfg.init;
	cc->t_change = now;
	round_start(cc);
}
