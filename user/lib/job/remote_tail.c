// SPDX-License-Identifier: GPL-2.0
/*
 * FlexINA's operations over the switch agents (remote.h): lending head
 * slots and taking them back in a switch's ledger, publishing its tail pool
 * and directory, reading what its memory holds. The same calls for a
 * namespace switch and a router.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "remote_int.h"

static json_object *job_count(const char *op, uint32_t id, uint32_t count, bool with_count)
{
	json_object *q = json_object_new_object();

	json_object_object_add(q, "op", json_object_new_string(op));
	json_object_object_add(q, "job", json_object_new_int64(id));
	if (with_count)
		json_object_object_add(q, "count", json_object_new_int64(count));
	return q;
}

static int64_t int_of(json_object *o, const char *key)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

int ia_remote_lend(struct ia_remote *r, int v, uint32_t id, uint32_t count, char *why,
		   size_t whylen)
{
	return ia_remote_call(r, v, job_count("lend", id, count, true), NULL, why, whylen);
}

int ia_remote_reclaim(struct ia_remote *r, int v, uint32_t id, uint32_t count, char *why,
		      size_t whylen)
{
	json_object *rep;
	int ret = ia_remote_call(r, v, job_count("reclaim", id, count, count != 0), &rep, why,
				 whylen);

	if (ret)
		return ret;
	ret = int_of(rep, "count");
	json_object_put(rep);
	return ret;
}

int ia_remote_tail(struct ia_remote *r, int v, const struct ia_xdp_tail *t, char *why,
		   size_t whylen)
{
	json_object *q = json_object_new_object(), *lend = json_object_new_array();

	json_object_object_add(q, "op", json_object_new_string("tail"));
	json_object_object_add(q, "slots", json_object_new_int64(t->slots));
	if (t->age_ns)
		json_object_object_add(q, "age_ns", json_object_new_int64(t->age_ns));
	for (uint32_t i = 0; i < t->nlend; i++) {
		json_object *e = json_object_new_array();

		json_object_array_add(e, json_object_new_int64(t->lend[i].job));
		json_object_array_add(e, json_object_new_int64(t->lend[i].count));
		json_object_array_add(lend, e);
	}
	json_object_object_add(q, "lend", lend);
	return ia_remote_call(r, v, q, NULL, why, whylen);
}

int ia_remote_memory(struct ia_remote *r, int v, const uint32_t *ids, int n, uint32_t probes,
		     struct ia_xdp_head_use *heads, struct ia_remote_tail *tail)
{
	json_object *q = json_object_new_object(), *arr = json_object_new_array(), *rep, *h, *t;
	int ret;

	json_object_object_add(q, "op", json_object_new_string("memory"));
	for (int i = 0; i < n; i++)
		json_object_array_add(arr, json_object_new_int64(ids[i]));
	json_object_object_add(q, "jobs", arr);
	json_object_object_add(q, "probes", json_object_new_int64(probes));
	if (n)
		memset(heads, 0, n * sizeof(*heads));
	memset(tail, 0, sizeof(*tail));
	ret = ia_remote_call(r, v, q, &rep, NULL, 0);
	if (ret)
		return ret;
	if (json_object_object_get_ex(rep, "heads", &h) && json_object_is_type(h, json_type_array))
		for (int i = 0; i < n && i < (int)json_object_array_length(h); i++) {
			json_object *o = json_object_array_get_idx(h, i);

			heads[i] = (struct ia_xdp_head_use){ .slots = int_of(o, "slots"),
							     .open = int_of(o, "open"),
							     .done = int_of(o, "done") };
		}
	if (json_object_object_get_ex(rep, "tail", &t)) {
		json_object *c;

		tail->info = (struct ia_xdp_tail_info){
			.slots = int_of(t, "slots"),	 .lent = int_of(t, "lent"),
			.nlend = int_of(t, "nlend"),	 .gen = int_of(t, "gen"),
			.age_ns = int_of(t, "age_ns"),	 .lends = int_of(t, "lends"),
			.reclaims = int_of(t, "reclaims"),
		};
		if (json_object_object_get_ex(t, "counters", &c) &&
		    json_object_is_type(c, json_type_array))
			for (int i = 0; i < IA_C__COUNT && i < (int)json_object_array_length(c); i++)
				tail->info.c.c[i] =
					json_object_get_int64(json_object_array_get_idx(c, i));
		tail->live = int_of(t, "live");
		tail->stale = int_of(t, "stale");
	}
	json_object_put(rep);
	return 0;
}
