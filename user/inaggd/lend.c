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

static int ledger_call(struct daemon *d, int v, uint32_t id, uint32_t count, bool reclaim,
		       char *why, size_t whylen)
{
	struct ia_ledger *l;
	int ret = ia_ledger_open(&l, IA_LEDGER_AUTO, d->sw[v].ns);

	if (ret)
		return ia_fail(why, whylen, ret, "ledger: %s", strerror(-ret));
	ret = reclaim ? ia_ledger_reclaim(l, id, count) : ia_ledger_lend(l, id, count);
	if (ret)
		ia_fail(why, whylen, ret, "%s", *ia_ledger_errmsg(l) ? ia_ledger_errmsg(l) :
								     strerror(-ret));
	ia_ledger_close(l);
	return ret;
}

static int sw_lend(void *ctx, int v, uint32_t id, uint32_t count, char *why, size_t whylen)
{
	return ledger_call(ctx, v, id, count, false, why, whylen);
}

static int sw_reclaim(void *ctx, int v, uint32_t id, uint32_t count, char *why, size_t whylen)
{
	return ledger_call(ctx, v, id, count, true, why, whylen);
}

static const struct ia_lend_ops lend_ops = {
	.lend = sw_lend,
	.reclaim = sw_reclaim,
	.publish = NULL,	/* the tail directory, with the loader's API for it */
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
			struct ia_ledger_job e;
			struct ia_ledger *l;

			if (!j->held[v] || ia_ledger_open(&l, IA_LEDGER_AUTO, d->sw[v].ns))
				continue;
			if (!ia_ledger_job(l, j->id, &e) && e.lent &&
			    ia_ledger_reclaim(l, j->id, e.lent))
				log_msg(LOG_WARN, "job %u: reclaiming %u head slots on %s: %s", j->id,
					e.lent, d->t->sw[v].name, ia_ledger_errmsg(l));
			ia_ledger_close(l);
		}
	}
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
