// SPDX-License-Identifier: GPL-2.0
/*
 * The switch agent's part of FlexINA (docs/memory.md, agent.h): lending
 * head slots to the tail and taking them back in the ledger, publishing the
 * tail pool and its directory in the maps, and what the memory statistics
 * read there (head occupancy, the tail's).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "err.h"
#include "ledger.h"
#include "xdp.h"
#include "xdp_mem.h"

#define TAIL_PROBES_MAX 4096	/* tail slots one memory request may read */

/*
 * lend {job, count} / reclaim {job, count?}: count head slots of an INA job
 * lent to the tail, or taken back (a reclaim without count: all it lent).
 */
static json_object *lend_or_reclaim(struct ia_agent *a, json_object *req, bool reclaim)
{
	uint64_t id = 0, count = 0;
	char why[IA_ERRLEN] = "";
	struct ia_ledger_job e;
	struct ia_ledger *l;
	json_object *r;
	int ret;

	if (ia_agent_num(req, "job", UINT32_MAX, &id, true) ||
	    ia_agent_num(req, "count", UINT32_MAX, &count, !reclaim))
		return ia_agent_err(EINVAL, "\"job\"%s: need integers",
				    reclaim ? " (and \"count\")" : ", \"count\"");
	if ((r = ia_agent_ledger(a, NULL, NULL, NULL, &l)))
		return r;
	if (reclaim && !json_object_object_get_ex(req, "count", NULL)) {
		ret = ia_ledger_job(l, id, &e, why, sizeof(why));
		count = ret ? 0 : e.lent;
		if (ret && ret != -ENOENT)
			goto fail;
		if (!count)
			goto done;
	}
	ret = reclaim ? ia_ledger_reclaim(l, id, count, why, sizeof(why)) :
			ia_ledger_lend(l, id, count, why, sizeof(why));
	if (ret)
		goto fail;
done:
	ia_ledger_close(l);
	return ia_agent_ok_with("count", json_object_new_int64(count));
fail:
	r = ia_agent_err(ret, "%s", *why ? why : strerror(-ret));
	ia_ledger_close(l);
	return r;
}

json_object *ia_agent_lend(struct ia_agent *a, json_object *req)
{
	return lend_or_reclaim(a, req, false);
}

json_object *ia_agent_reclaim(struct ia_agent *a, json_object *req)
{
	return lend_or_reclaim(a, req, true);
}

/* tail {slots, age_ns?, lend: [[job, count], ...]}: the pool and directory, published whole. */
json_object *ia_agent_tail(struct ia_agent *a, json_object *req)
{
	struct ia_xdp_lend ls[IA_TDIR_SEGS];
	struct ia_xdp_tail t = { .lend = ls };
	char why[IA_XDP_ERRLEN];
	uint64_t slots, age = 0;
	json_object *arr = NULL;
	struct ia_xdp *x;
	size_t n = 0;
	int ret;

	if (ia_agent_num(req, "slots", IA_MAX_TAIL, &slots, true) ||
	    ia_agent_num(req, "age_ns", UINT64_MAX >> 1, &age, false))
		return ia_agent_err(EINVAL, "\"slots\": need an integer in [0, %u]", IA_MAX_TAIL);
	if (json_object_object_get_ex(req, "lend", &arr) &&
	    (!json_object_is_type(arr, json_type_array) ||
	     (n = json_object_array_length(arr)) > IA_TDIR_SEGS))
		return ia_agent_err(EINVAL, "\"lend\": at most %d [job, count] pairs", IA_TDIR_SEGS);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i), *v[2];

		if (!json_object_is_type(e, json_type_array) || json_object_array_length(e) != 2)
			return ia_agent_err(EINVAL, "\"lend\" %zu: need [job, count]", i);
		v[0] = json_object_array_get_idx(e, 0);
		v[1] = json_object_array_get_idx(e, 1);
		if (!json_object_is_type(v[0], json_type_int) ||
		    !json_object_is_type(v[1], json_type_int) || json_object_get_int64(v[0]) < 0 ||
		    json_object_get_int64(v[0]) > UINT32_MAX || json_object_get_int64(v[1]) < 0 ||
		    json_object_get_int64(v[1]) > UINT32_MAX)
			return ia_agent_err(EINVAL, "\"lend\" %zu: need [job, count]", i);
		ls[i] = (struct ia_xdp_lend){ .job = json_object_get_int64(v[0]),
					      .count = json_object_get_int64(v[1]) };
	}
	t.slots = slots;
	t.age_ns = age;
	t.nlend = n;
	x = ia_agent_maps(a, false, &ret, why, sizeof(why));
	if (!x)
		return ia_agent_err(ret, "maps: %s", why);
	ret = ia_xdp_tail_set(x, &t, why, sizeof(why));
	if (ret) {
		json_object *r = ia_agent_err(ret, "%s", why);

		ia_agent_maps_drop(a);	/* set up again since? opened afresh next time */
		return r;
	}
	return ia_agent_ok();
}

/*
 * Tail slots holding a PS partial (live) and of those the ones older than
 * the flush age (stale), from probes slots spread evenly over the pool and
 * scaled to its size. The datapath stamps a claim with bpf_ktime_get_ns():
 * this machine's CLOCK_MONOTONIC.
 */
static void tail_live(struct ia_xdp *x, const struct ia_xdp_tail_info *ti, uint32_t probes,
		      uint64_t *live, uint64_t *stale)
{
	struct ia_slot *s;
	struct timespec ts;
	uint64_t now, held = 0, old = 0;
	uint32_t n;

	*live = *stale = 0;
	if (!ti->slots || !probes || !(s = malloc(sizeof(*s))))
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	n = ti->slots < probes ? ti->slots : probes;
	for (uint32_t k = 0; k < n; k++) {
		if (ia_xdp_tail_slot_read(x, (uint64_t)k * ti->slots / n, s) ||
		    s->state != IA_SLOT_TAIL)
			continue;
		held++;
		old += now > s->t.born && now - s->t.born >= ti->age_ns;
	}
	free(s);
	*live = held * ti->slots / n;
	*stale = old * ti->slots / n;
}

static json_object *counters_json(const struct ia_counters *c)
{
	json_object *arr = json_object_new_array();

	for (int i = 0; i < IA_C__COUNT; i++)
		json_object_array_add(arr, json_object_new_int64(c->c[i]));
	return arr;
}

/*
 * memory {jobs: [ids], probes?} -> heads: [{job, slots, open, done} or
 * null (not a head here)], tail: {slots, lent, nlend, gen, age_ns, lends,
 * reclaims, counters, live, stale}.
 */
json_object *ia_agent_memory(struct ia_agent *a, json_object *req)
{
	json_object *ids = NULL, *heads, *tail, *r;
	struct ia_xdp_tail_info ti;
	char why[IA_XDP_ERRLEN];
	uint64_t probes = 0, live, stale;
	struct ia_xdp *x;
	size_t n = 0;
	int ret;

	if ((json_object_object_get_ex(req, "jobs", &ids) &&
	     !json_object_is_type(ids, json_type_array)) ||
	    ia_agent_num(req, "probes", TAIL_PROBES_MAX, &probes, false))
		return ia_agent_err(EINVAL, "\"jobs\": an array of ids; \"probes\": 0..%d",
				    TAIL_PROBES_MAX);
	x = ia_agent_maps(a, false, &ret, why, sizeof(why));
	if (!x)
		return ia_agent_err(ret, "maps: %s", why);
	heads = json_object_new_array();
	n = ids ? json_object_array_length(ids) : 0;
	for (size_t i = 0; i < n; i++) {
		int64_t id = json_object_get_int64(json_object_array_get_idx(ids, i));
		struct ia_xdp_head_use use;
		json_object *o;

		if (id < 0 || id > UINT32_MAX || ia_xdp_head_use(x, id, &use)) {
			json_object_array_add(heads, NULL);
			continue;
		}
		o = json_object_new_object();
		json_object_object_add(o, "job", json_object_new_int64(id));
		json_object_object_add(o, "slots", json_object_new_int64(use.slots));
		json_object_object_add(o, "open", json_object_new_int64(use.open));
		json_object_object_add(o, "done", json_object_new_int64(use.done));
		json_object_array_add(heads, o);
	}
	r = ia_agent_ok();
	json_object_object_add(r, "heads", heads);
	/* No tail here (maps of an older datapath?): the heads all the same. */
	if (ia_xdp_tail_info(x, &ti))
		return r;
	tail_live(x, &ti, probes, &live, &stale);
	tail = json_object_new_object();
	json_object_object_add(tail, "slots", json_object_new_int64(ti.slots));
	json_object_object_add(tail, "lent", json_object_new_int64(ti.lent));
	json_object_object_add(tail, "nlend", json_object_new_int64(ti.nlend));
	json_object_object_add(tail, "gen", json_object_new_int64(ti.gen));
	json_object_object_add(tail, "age_ns", json_object_new_int64(ti.age_ns));
	json_object_object_add(tail, "lends", json_object_new_int64(ti.lends));
	json_object_object_add(tail, "reclaims", json_object_new_int64(ti.reclaims));
	json_object_object_add(tail, "counters", counters_json(&ti.c));
	json_object_object_add(tail, "live", json_object_new_int64(live));
	json_object_object_add(tail, "stale", json_object_new_int64(stale));
	json_object_object_add(r, "tail", tail);
	return r;
}
