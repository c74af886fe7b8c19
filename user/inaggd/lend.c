// SPDX-License-Identifier: GPL-2.0
/*
 * inaggd's half of lending (docs/memory.md, "Who decides the head/tail
 * boundary"): the policy is libinagg's (job_lend.h), fed by the memory
 * sampler (memory.c); here are its operations on the real ledgers and the
 * switches' tail directories, and what a start and a job's end need.
 */
#include <errno.h>
#include <string.h>

#include "inaggd.h"
#include "ledger.h"

/* Through the switch's agent (docs/remote.md): a namespace here and a router alike. */
static int ledger_call(struct daemon *d, int v, uint32_t id, uint32_t count, bool reclaim,
		       char *why, size_t whylen)
{
	int ret;

	if (reclaim && !count)
		return 0;	/* the agent's reclaim without a count takes back all */
	ret = reclaim ? ia_remote_reclaim(d->remote, v, id, count, why, whylen) :
			ia_remote_lend(d->remote, v, id, count, why, whylen);
	return ret < 0 ? ret : 0;
}

static int sw_lend(void *ctx, int v, uint32_t id, uint32_t count, char *why, size_t whylen)
{
	return ledger_call(ctx, v, id, count, false, why, whylen);
}

static int sw_reclaim(void *ctx, int v, uint32_t id, uint32_t count, char *why, size_t whylen)
{
	return ledger_call(ctx, v, id, count, true, why, whylen);
}

/*
 * Switch v's tail pool (every slot no head holds, as the ledger has it) and
 * its directory (the lends), published whole in one call.
 */
static int sw_publish(void *ctx, int v, const uint32_t *ids, const uint32_t *lent, int n,
		      char *why, size_t whylen)
{
	struct daemon *d = ctx;
	struct ia_xdp_lend ls[IA_TDIR_SEGS];
	struct ia_ledger_cap c;

	mem_ledger_figures(d, v, &c);
	for (int i = 0; i < n && i < IA_TDIR_SEGS; i++)
		ls[i] = (struct ia_xdp_lend){ .job = ids[i], .count = lent[i] };
	struct ia_xdp_tail tl = {
		.slots = c.tail_slots < IA_MAX_TAIL ? c.tail_slots : IA_MAX_TAIL,
		.nlend = n < IA_TDIR_SEGS ? n : IA_TDIR_SEGS,
		.lend = ls,
	};

	/* Through its agent, which publishes it in the switch's maps. */
	return ia_remote_tail(d->remote, v, &tl, why, whylen);
}

static const struct ia_lend_ops lend_ops = {
	.lend = sw_lend,
	.reclaim = sw_reclaim,
	.publish = sw_publish,
	.note = note,
};

int lend_init(struct daemon *d)
{
	struct ia_lend_policy pol = { .hold = d->lend_hold };

	return ia_lender_init(&d->lend, d->t, &lend_ops, d, &pol);
}

/*
 * A daemon starting knows of no lend: whatever a previous one left in the
 * ledgers is taken back (a reclaim never fails for lack of memory), so the
 * ledgers and the lender agree from the first sample on.
 */
void lend_reset(struct daemon *d)
{
	for (int i = 0; i < d->jobs.njobs; i++) {
		const struct ia_job *j = &d->jobs.jobs[i];

		for (int v = 0; j->class == IA_JOB_INA && v < d->t->n; v++) {
			char why[IA_ERRLEN];

			if (j->held[v] && ia_remote_reclaim(d->remote, v, j->id, 0, why,
							    sizeof(why)) < 0)
				log_msg(IA_LOG_WARN, "job %u: reclaiming lent head slots on %s: %s",
					j->id, d->t->sw[v].name, why);
		}
	}
	/* Every switch's tail and directory as this daemon sees them. */
	for (int v = 0; v < d->t->n; v++)
		ia_lender_touch(&d->lend, v);
	ia_lender_publish(&d->lend);
}

/* Before a job ends: its lends back and published, so no directory names its head. */
void lend_end(struct daemon *d, uint32_t id)
{
	ia_lender_reclaim_all(&d->lend, id);
	ia_lender_publish(&d->lend);
}

/* After a job ended (or failed): forgotten. */
void lend_forget(struct daemon *d, uint32_t id)
{
	ia_lender_forget(&d->lend, id);
	ia_lender_publish(&d->lend);
}
