// SPDX-License-Identifier: GPL-2.0
/*
 * The destination's answers to late messages, with results down to an
 * address (the root switch copies each to every worker): a quiet time per
 * chunk that doubles with each answer, and one deferred answer for all the
 * late messages within it. See host_ps_int.h and docs/hosts.md ("Loss
 * recovery").
 *
 * Answering each one a millisecond or more after the previous answer (the
 * design before) made a storm at 10 % loss: resends whose timers fired
 * before a loaded path answered each cost a result to all 18 workers of
 * Fig. 1. Dropping the ones within the quiet time left a worker whose copy
 * of the previous answer was lost to wait for its next timer; a deferred
 * answer serves it at the quiet time's end.
 */
#include <errno.h>
#include <stdlib.h>

#include "host_ps_int.h"

uint64_t ia_ps_quiet_ns(uint32_t answers)
{
	return PS_QUIET_NS << (answers < PS_QUIET_DOUBLINGS ? answers : PS_QUIET_DOUBLINGS);
}

bool ia_ps_late_stale(uint64_t at, uint64_t sent_at, uint64_t answered, uint64_t done)
{
	return at < sent_at && done >= PS_STALE_AFTER && 2 * answered < done;
}

uint64_t ia_ps_late_due(const struct pchunk *c)
{
	return c->sent_at + ia_ps_quiet_ns(c->answers);
}

void ia_ps_late_sent(struct pchunk *c, uint64_t now)
{
	c->pending = 0;
	c->sent_at = now;
	if (c->answers < UINT8_MAX)
		c->answers++;
}

enum ia_ps_late ia_ps_late_at(struct pchunk *c, uint64_t now)
{
	if (c->pending)
		return IA_PS_LATE_HELD;
	if (now >= ia_ps_late_due(c)) {
		ia_ps_late_sent(c, now);
		return IA_PS_LATE_ANSWER;
	}
	c->pending = 1;
	return IA_PS_LATE_DEFER;
}

int ia_ps_late(struct ia_ps *ps, uint64_t idx, uint64_t now)
{
	switch (ia_ps_late_at(&ps->ch[idx], now)) {
	case IA_PS_LATE_ANSWER:
		return ia_ps_send_result(ps, idx, NULL);
	case IA_PS_LATE_HELD:
		ps->st.late_quiet++;
		return 0;
	case IA_PS_LATE_DEFER:
		break;
	}
	ps->st.late_quiet++;
	if (ps->npend == ps->cappend) {
		uint64_t *n = realloc(ps->pend, (ps->cappend * 2 + 16) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ps->pend = n;
		ps->cappend = ps->cappend * 2 + 16;
	}
	ps->pend[ps->npend++] = idx;
	return 0;
}

int ia_ps_late_flush(struct ia_ps *ps, uint64_t now, uint64_t *wake)
{
	uint32_t i = 0;
	int ret;

	*wake = UINT64_MAX;
	while (i < ps->npend) {
		uint64_t idx = ps->pend[i], due = ia_ps_late_due(&ps->ch[idx]);

		if (due > now) {
			*wake = due < *wake ? due : *wake;
			i++;
			continue;
		}
		ps->pend[i] = ps->pend[--ps->npend];
		ia_ps_late_sent(&ps->ch[idx], now);
		ps->st.late_deferred++;
		ret = ia_ps_send_result(ps, idx, NULL);
		if (ret)
			return ret;
	}
	return 0;
}
