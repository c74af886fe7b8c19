// SPDX-License-Identifier: GPL-2.0
/*
 * A live run during which other work took too much of the host's CPU is
 * run again (eval_live.h): on this shared host a compile of someone else
 * slows whichever scheme runs meanwhile, and ia_live_res.cpu_other says
 * when. At most k->repeats runs more, after a pause that lets a short burst
 * of other work pass; the run kept is the one with the least other work. A
 * run that failed or is not exact is kept at once: a failure is never
 * repeated away.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval_live.h"

static void pause_ms(uint32_t ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000l };

	while (ms && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int ia_live_keep_check(const struct ia_live_keep *k)
{
	if (k->max_other < 0 || k->max_other > 1 || k->repeats > IA_LIVE_MAX_REPEATS)
		return -EINVAL;
	return 0;
}

int ia_live_run_kept(const struct ia_live_keep *k, ia_live_run_fn run, void *ctx,
		     enum ia_sim_scheme s, struct ia_live_res *r, uint32_t *repeated, char *err,
		     size_t errlen)
{
	struct ia_live_res *t;
	int ret;

	*repeated = 0;
	if (ia_live_keep_check(k))
		return -EINVAL;
	ret = run(ctx, s, r, err, errlen);
	if (ret || !r->exact || k->max_other <= 0 || r->cpu_other <= k->max_other)
		return ret;
	t = malloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	while (*repeated < k->repeats && r->cpu_other > k->max_other) {
		pause_ms(k->pause_ms);
		++*repeated;
		ret = run(ctx, s, t, err, errlen);
		if (ret || !t->exact) {
			*r = *t;
			break;
		}
		if (t->cpu_other < r->cpu_other)
			*r = *t;
	}
	free(t);
	return ret;
}
