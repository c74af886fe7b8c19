// SPDX-License-Identifier: GPL-2.0
/*
 * inaggd's statistics replies (the "stats" request, requests.c): every
 * uplink's counters, or one job's measured messages per link beside the
 * congestion model, its tail and the switches' memory.
 */
#include <stdlib.h>

#include "inaggd.h"

/* Every uplink, all jobs together: what its port sent up and received down. */
json_object *stats_links(struct daemon *d, json_object *req)
{
	json_object *reply = ia_ctl_ok(), *links = json_object_new_array();

	for (int v = 0; v < d->t->n; v++) {
		json_object *l = json_object_new_object(), *drops = json_object_new_object();
		struct ia_counters c;

		port_counters(d, v, d->sw[v].up.ifindex, &c);
		json_object_object_add(l, "switch", json_object_new_string(d->t->sw[v].name));
		/* First transmissions: what the model counts; recovery apart. */
		json_object_object_add(l, "sent_up", json_object_new_int64(c.c[IA_C_TX] -
									  c.c[IA_C_RECOVERY_TX]));
		json_object_object_add(l, "resent_up", json_object_new_int64(c.c[IA_C_RECOVERY_TX]));
		json_object_object_add(l, "results_down", json_object_new_int64(c.c[IA_C_RESULT]));
		json_object_object_add(l, "passed", json_object_new_int64(c.c[IA_C_PASS]));
		for (int i = IA_C_DROP_SHORT; i < IA_C__COUNT; i++)
			if (c.c[i])
				json_object_object_add(drops, ia_ctr_name(i),
						       json_object_new_int64(c.c[i]));
		json_object_object_add(l, "dropped", drops);
		json_object_array_add(links, l);
	}
	json_object_object_add(reply, "links", links);
	json_object_object_add(reply, "memory", mem_json(d, ia_ctl_int(req, "history", 0)));
	return reply;
}

/*
 * Measured messages per chunk on each uplink of a job, from the switches'
 * counters, beside the model. chunks: given by the caller (who ran the job),
 * else what the root switch saw: its receptions over its members.
 */
static bool job_has_tail(const struct ia_topo *t, const struct ia_job *j)
{
	for (int v = 0; v < t->n; v++)
		if (j->plan.sw[v].on_path && ia_job_tail_at(t, j, v))
			return true;
	return false;
}

json_object *stats_job(struct daemon *d, const struct ia_job *j, json_object *req)
{
	const struct ia_topo *t = d->t;
	json_object *reply, *links;
	long long chunks = ia_ctl_int(req, "chunks", 0);
	struct ia_counters *c, total = { 0 };
	double worst = 0, worst_model = 0;
	json_object *tail;

	c = calloc(t->n, sizeof(*c));
	if (!c)
		return error_reply("out of memory");
	for (int v = 0; v < t->n; v++)
		if (j->plan.sw[v].on_path)
			job_counters(d, v, j->id, &c[v]);
	/*
	 * Received counts the results coming down and loss recovery too. A job
	 * that aggregates in tails has no fixed number of messages per chunk
	 * reaching the root: there, the first results the root passed down count
	 * the chunks (its receptions over its members gave 11 of 100).
	 */
	if (!chunks && job_has_tail(t, j))
		chunks = c[t->root].c[IA_C_RESULT] - c[t->root].c[IA_C_RESULT_EXTRA];
	else if (!chunks && j->plan.sw[t->root].nmembers)
		chunks = (c[t->root].c[IA_C_RX] - c[t->root].c[IA_C_RESULT] -
			  c[t->root].c[IA_C_RECOVERY_RX]) / j->plan.sw[t->root].nmembers;
	reply = ia_ctl_ok();
	links = json_object_new_array();
	for (int v = 0; v < t->n; v++) {
		const struct ia_plan_switch *ps = &j->plan.sw[v];
		json_object *l;
		uint64_t sent;
		double per, rate = ia_ratio_double(t->sw[v].rate), model;

		if (!ps->on_path)
			continue;
		bool is_tail = ia_job_tail_at(t, j, v);

		/*
		 * What left by the uplink, forwarded (red) or emitted (blue), less
		 * retransmissions and re-emissions: the model counts each message once.
		 * A tail sends up its complete aggregates, its flushed partials and what
		 * it passed on.
		 */
		sent = (ps->blue ? c[v].c[IA_C_EMIT] + c[v].c[IA_C_REEMIT] :
			is_tail ? c[v].c[IA_C_EMIT] + c[v].c[IA_C_TAIL_FLUSH] + c[v].c[IA_C_FWD] :
				  c[v].c[IA_C_FWD]) -
		       c[v].c[IA_C_RECOVERY_TX];
		per = chunks ? (double)sent / chunks : 0;
		model = (double)j->model.msgs[v];
		if (per / rate > worst)
			worst = per / rate;
		if (model / rate > worst_model)
			worst_model = model / rate;
		l = json_object_new_object();
		json_object_object_add(l, "switch", json_object_new_string(t->sw[v].name));
		json_object_object_add(l, "role", json_object_new_string(ps->blue ? "blue" :
									  is_tail ? "tail" : "red"));
		json_object_object_add(l, "received", json_object_new_int64(c[v].c[IA_C_RX]));
		json_object_object_add(l, "sent_up", json_object_new_int64(sent));
		json_object_object_add(l, "resent_up",
				       json_object_new_int64(c[v].c[IA_C_RECOVERY_TX]));
		json_object_object_add(l, "duplicates", json_object_new_int64(c[v].c[IA_C_DUP]));
		json_object_object_add(l, "messages_per_chunk", json_object_new_double(per));
		json_object_object_add(l, "model_messages", json_object_new_int64(j->model.msgs[v]));
		json_object_object_add(l, "rate", json_object_new_double(rate));
		json_object_object_add(l, "congestion", json_object_new_double(per / rate));
		json_object_object_add(l, "aggregated", json_object_new_int64(
								 c[v].c[IA_C_AGGREGATED]));
		json_object_object_add(l, "forwarded", json_object_new_int64(c[v].c[IA_C_FWD]));
		mem_job_link(d, j->id, v, l);
		tail = json_object_new_object();
		mem_tail_counters(&c[v], tail);
		if (ps->blue) {
			const struct ia_lend_state *ls = ia_lender_state(&d->lend, j->id, v);

			json_object_object_add(tail, "lent", json_object_new_int64(ls ? ls->lent : 0));
			json_object_object_add(tail, "lends", json_object_new_int64(ls ? ls->lends : 0));
			json_object_object_add(tail, "reclaims",
					       json_object_new_int64(ls ? ls->reclaims : 0));
		}
		json_object_object_add(l, "tail", tail);
		/* Every counter of the job here that is not 0, by name. */
		tail = json_object_new_object();
		for (int i = 0; i < IA_C__COUNT; i++) {
			total.c[i] += c[v].c[i];
			if (c[v].c[i])
				json_object_object_add(tail, ia_ctr_name(i),
						       json_object_new_int64(c[v].c[i]));
		}
		json_object_object_add(l, "counters", tail);
		json_object_array_add(links, l);
	}
	json_object_object_add(reply, "job", json_object_new_int64(j->id));
	json_object_object_add(reply, "chunks", json_object_new_int64(chunks));
	json_object_object_add(reply, "links", links);
	json_object_object_add(reply, "congestion", json_object_new_double(worst));
	json_object_object_add(reply, "model_congestion", json_object_new_double(worst_model));
	/* The job's tail counters over all its switches. */
	tail = json_object_new_object();
	mem_tail_counters(&total, tail);
	json_object_object_add(reply, "tail", tail);
	/* Its workers' window reports accepted so far (docs/cc.md "Window reports"). */
	json_object_object_add(reply, "window_reports",
			       json_object_new_int64(ia_lender_reports(&d->lend, j->id)));
	json_object_object_add(reply, "memory", mem_json(d, ia_ctl_int(req, "history", 0)));
	free(c);
	return reply;
}
