// SPDX-License-Identifier: GPL-2.0
/*
 * inaggd's requests: each command's fields are checked by one table
 * (ia_ctl_check) before its handler reads them. A job belongs to the uid
 * that submitted it: only that uid and root may show, change, or end it
 * (others get EPERM); the connection itself was allowed by server.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <inagg/wire.h>

#include "ctl.h"
#include "inaggd.h"

/* Whether uid may act on j: its owner, or root. */
static bool may_touch(const struct ia_job *j, uid_t uid)
{
	return uid == 0 || uid == j->owner;
}

/* The refusal of a request on another's job, with its errno for programs. */
static json_object *not_owner(const struct ia_job *j, uid_t uid, const char *verb)
{
	return ia_ctl_err(EPERM, "job %u belongs to uid %u: uid %u may not %s it "
			  "(only its owner or root): %s", j->id, j->owner, (unsigned int)uid, verb,
			  strerror(EPERM));
}

static json_object *ok_reply(void)
{
	return ia_ctl_ok();
}

/* A job's record, and with detail where its workers and destination are. */
static json_object *job_json(const struct daemon *d, const struct ia_job *j, bool detail)
{
	const struct ia_topo *t = d->t;
	json_object *o = ia_job_to_json(&d->jobs, j);
	const char *failed = ia_remote_failed(d->remote, j->id);
	char buf[64];

	/* A router lost the job's state (docs/remote.md): its results cannot be trusted. */
	if (failed)
		json_object_object_add(o, "failed", json_object_new_string(failed));
	else if (ia_remote_recovered(d->remote, j->id))
		json_object_object_add(o, "recovered", json_object_new_string(
							 ia_remote_recovered(d->remote, j->id)));
	if (!detail)
		return o;
	json_object_object_add(o, "routers", ia_remote_links_json(d->remote, j));
	ia_ratio_format(j->model.congestion, buf, sizeof(buf));
	json_object_object_add(o, "congestion", json_object_new_double_s(
							ia_ratio_double(j->model.congestion), buf));
	json_object_object_add(o, "nworkers", json_object_new_int64(j->plan.nworkers));
	inet_ntop(AF_INET, &(struct in_addr){ ia_net_dest_addr(t).s_addr }, buf, sizeof(buf));
	json_object *dest = json_object_new_object();

	json_object_object_add(dest, "netns", json_object_new_string(d->dest_ns));
	json_object_object_add(dest, "address", json_object_new_string(buf));
	inet_ntop(AF_INET, &(struct in_addr){ ia_net_uplink_addr(t->root, false).s_addr }, buf,
		  sizeof(buf));
	json_object_object_add(dest, "down", json_object_new_string(buf));
	json_object_object_add(dest, "senders", json_object_new_int64(j->plan.ndest));
	/* A PS job's PS merges by member set: who may send it what (job_tail.c). */
	if (j->class == IA_JOB_PS && j->plan.nworkers <= IA_MAX_RANKS) {
		struct ia_sender *m = calloc(j->plan.nworkers + t->n, sizeof(*m));
		uint64_t *sets = calloc(j->plan.nworkers + t->n, sizeof(*sets));
		json_object *arr = json_object_new_array();
		uint32_t n = 0;

		if (m && sets && !ia_job_tail_members(t, j, -1, m, sets, &n))
			for (uint32_t i = 0; i < n; i++) {
				json_object *mo = json_object_new_object();

				json_object_object_add(mo, "id", json_object_new_int64(m[i].id));
				json_object_object_add(mo, "nworkers",
						       json_object_new_int64(m[i].nworkers));
				json_object_object_add(mo, "set", json_object_new_uint64(sets[i]));
				json_object_array_add(arr, mo);
			}
		json_object_object_add(dest, "members", arr);
		free(m);
		free(sets);
	}
	json_object_object_add(o, "destination", dest);

	json_object *workers = json_object_new_array();

	for (int v = 0; v < t->n; v++) {
		for (uint32_t w = 0; w < j->load[v]; w++) {
			json_object *wo = json_object_new_object();
			int g = ia_net_worker_index(t, v, w);
			char ns[128];

			ia_net_worker_ns(d->tag, t->sw[v].name, w, ns, sizeof(ns));
			inet_ntop(AF_INET, &(struct in_addr){ ia_net_worker_addr(g).s_addr }, buf,
				  sizeof(buf));
			json_object_object_add(wo, "id", json_object_new_int64(ia_worker_id(g)));
			if (j->class == IA_JOB_PS && j->plan.nworkers <= IA_MAX_RANKS)
				json_object_object_add(wo, "rank", json_object_new_int64(
								   ia_job_rank(t, j, v, w)));
			json_object_object_add(wo, "switch", json_object_new_string(t->sw[v].name));
			json_object_object_add(wo, "netns", json_object_new_string(ns));
			json_object_object_add(wo, "address", json_object_new_string(buf));
			json_object_array_add(workers, wo);
		}
	}
	json_object_object_add(o, "workers", workers);

	json_object *links = json_object_new_array();

	for (int v = 0; v < t->n; v++) {
		json_object *l;

		if (!j->plan.sw[v].on_path)
			continue;
		l = json_object_new_object();
		json_object_object_add(l, "switch", json_object_new_string(t->sw[v].name));
		/* blue: the job's head; tail: a PS job may aggregate in the tail; red: it passes. */
		json_object_object_add(l, "role", json_object_new_string(
							  j->blue[v] ? "blue" :
							  j->held[v] ? "tail" : "red"));
		json_object_object_add(l, "members", json_object_new_int64(j->plan.sw[v].nmembers));
		if (j->blue[v]) {
			const struct ia_lend_state *ls = ia_lender_state(&d->lend, j->id, v);

			json_object_object_add(l, "lent", json_object_new_int64(ls ? ls->lent : 0));
		}
		json_object_object_add(l, "messages", json_object_new_int64(j->model.msgs[v]));
		json_object_array_add(links, l);
	}
	json_object_object_add(o, "links", links);
	return o;
}

static json_object *do_submit(struct daemon *d, json_object *req, uid_t uid)
{
	const struct ia_topo *t = d->t;
	struct ia_job_request rq = {
		.id = ia_ctl_int(req, "job", 0),
		.k = ia_ctl_int(req, "k", 0),
		.window = ia_ctl_int(req, "window", 0),
		.head = ia_ctl_int(req, "head", 0),
		/* "tail": 0, a PS job that never uses switch memory (selective INA, NetPack) */
		.no_tail = !ia_ctl_int(req, "tail", 1),
		.algo = IA_ALGO_SMC,
		.owner = uid,
	};
	struct ia_job_refusal *refused = NULL;
	json_object *workers, *reply, *arr;
	char err[IA_ERRLEN];
	uint32_t *load = NULL;
	struct ia_job *j;
	int nrefused, a, ret;

	a = ia_algo_parse(ia_ctl_str(req, "algorithm", "smc"));
	if (a < 0 || a == IA_ALGO_BRUTE)
		return error_reply("algorithm: unknown or not for jobs: '%.32s'",
				   ia_ctl_str(req, "algorithm", ""));
	rq.algo = a;
	a = ia_job_class_parse(ia_ctl_str(req, "class", "auto"));
	if (a < 0)
		return error_reply("class: ina, ps or auto, not '%.32s'", ia_ctl_str(req, "class", ""));
	rq.class = a;
	if (ia_cc_policy_parse(ia_ctl_str(req, "cc", "fixed"), &rq.cc))
		return error_reply("cc: fixed, atp, a2tp or flexina, not '%.32s'",
				   ia_ctl_str(req, "cc", ""));
	load = calloc(t->n, sizeof(*load));
	refused = calloc(2 * t->n, sizeof(*refused));	/* heads, then tails: see job.h */
	if (!load || !refused) {
		reply = error_reply("out of memory");
		goto out;
	}
	/* Workers: all of the topology's, or {"switch": count, ...}. */
	if (json_object_object_get_ex(req, "workers", &workers)) {
		json_object_object_foreach(workers, name, cnt) {
			int s = ia_topo_find(t, name);

			if (s < 0 || json_object_get_int64(cnt) > t->sw[s].load) {
				reply = error_reply("workers: switch '%.32s': %s", name,
						    s < 0 ? "no such switch" :
							    "need a count in [0, its load]");
				goto out;
			}
			load[s] = json_object_get_int64(cnt);
		}
		rq.load = load;
	}
	ret = ia_jobs_submit(&d->jobs, &rq, &j, refused, &nrefused, err, sizeof(err));
	/* The tails that admissions and releases resized, published before the reply. */
	ia_lender_publish(&d->lend);
	if (ret) {
		reply = error_reply("%s", err);
		goto out;
	}
	reply = ok_reply();
	json_object_object_add(reply, "job", job_json(d, j, true));
	arr = json_object_new_array();
	for (int i = 0; i < nrefused; i++) {
		json_object *r = json_object_new_object();

		json_object_object_add(r, "switch",
				       json_object_new_string(t->sw[refused[i].sw].name));
		json_object_object_add(r, "reason", json_object_new_string(refused[i].why));
		json_object_array_add(arr, r);
	}
	json_object_object_add(reply, "refused", arr);
out:
	free(load);
	free(refused);
	return reply;
}

/* The request's job if uid may verb it, else NULL with *err the answer. */
static struct ia_job *req_job(struct daemon *d, json_object *req, uid_t uid, const char *verb,
			      json_object **err)
{
	uint32_t id = ia_ctl_int(req, "job", 0);
	struct ia_job *j = ia_jobs_find(&d->jobs, id);

	if (!j) {
		*err = error_reply("no job %u", id);
		return NULL;
	}
	if (!may_touch(j, uid)) {
		*err = not_owner(j, uid, verb);
		return NULL;
	}
	return j;
}

static json_object *do_end(struct daemon *d, json_object *req, uid_t uid)
{
	uint32_t id = ia_ctl_int(req, "job", 0);
	char err[IA_ERRLEN];
	json_object *reply;

	if (!req_job(d, req, uid, "end", &reply))
		return reply;
	lend_end(d, id);
	if (ia_jobs_end(&d->jobs, id, err, sizeof(err)))
		return error_reply("%s", err);
	lend_forget(d, id);
	return ok_reply();
}

/*
 * The window an INA job's senders use now (chunks in flight), as their
 * congestion control reports it: what its lends follow (docs/cc.md "Window
 * reports"). With "worker" (its sender id), that worker's: each worker's
 * latest counts for a while, 0 when its run ended. Without, the
 * job's own (an operator's; 0: none). The lender follows the largest.
 */
static json_object *do_window(struct daemon *d, json_object *req, uid_t uid)
{
	json_object *reply, *err;
	struct ia_job *j = req_job(d, req, uid, "change", &err);
	uint32_t w = ia_ctl_int(req, "window", 0), nrep;
	char why[IA_ERRLEN];

	if (!j)
		return err;
	if (json_object_object_get_ex(req, "worker", NULL)) {
		if (ia_lender_report(&d->lend, j, ia_ctl_int(req, "worker", 0), w, why,
				     sizeof(why)))
			return error_reply("%s", why);
	} else if (j->class != IA_JOB_INA) {
		return error_reply("job %u is %s: only an INA job has a head to lend", j->id,
				   ia_job_class_name(j->class));
	} else if (w > ia_job_worker_window(j->window)) {
		return error_reply("window %u above the job's worker window (%u)", w,
				   ia_job_worker_window(j->window));
	} else {
		j->live_window = w;
	}
	reply = ok_reply();
	json_object_object_add(reply, "job", json_object_new_int64(j->id));
	json_object_object_add(reply, "window", json_object_new_int64(w));
	/* What the lends follow now, and how many workers' reports it is the largest of. */
	json_object_object_add(reply, "senders",
			       json_object_new_int64(ia_lender_window(&d->lend, j, &nrep)));
	json_object_object_add(reply, "reports", json_object_new_int64(nrep));
	return reply;
}

static json_object *do_show(struct daemon *d, json_object *req, uid_t uid)
{
	json_object *reply, *err;
	struct ia_job *j = req_job(d, req, uid, "show", &err);

	if (!j)
		return err;
	/* Each router of the job asked now, within its bounds: who is slow, unreachable, rebooted. */
	ia_remote_probe(d->remote, j);
	reply = ok_reply();
	json_object_object_add(reply, "job", job_json(d, j, true));
	return reply;
}

/* The jobs uid may see: all for root, its own for another. */
static json_object *do_list(struct daemon *d, json_object *req, uid_t uid)
{
	json_object *reply = ok_reply(), *arr = json_object_new_array();

	for (int i = 0; i < d->jobs.njobs; i++)
		if (may_touch(&d->jobs.jobs[i], uid))
			json_object_array_add(arr, job_json(d, &d->jobs.jobs[i], false));
	json_object_object_add(reply, "jobs", arr);
	json_object_object_add(reply, "network", json_object_new_string(d->tag));
	return reply;
}

static json_object *do_stats(struct daemon *d, json_object *req, uid_t uid)
{
	json_object *err;
	struct ia_job *j;

	if (!json_object_object_get_ex(req, "job", NULL))
		return stats_links(d, req);
	j = req_job(d, req, uid, "read the statistics of", &err);
	return j ? stats_job(d, j, req) : err;
}

#define JOB_ID(req) { "job", IA_CTL_INT, req, 1, UINT32_MAX - 1 }

static const struct command {
	const char *name;
	json_object *(*run)(struct daemon *d, json_object *req, uid_t uid);
	struct ia_ctl_field fields[10];
} commands[] = {
	{ "submit", do_submit, {
		{ "k", IA_CTL_INT, true, 0, INT32_MAX },
		{ "algorithm", IA_CTL_STRING, false, 1, 32 },
		{ "window", IA_CTL_INT, false, 1, IA_MAX_WINDOW },
		JOB_ID(false),
		{ "workers", IA_CTL_COUNTS, false, 0, UINT32_MAX },
		{ "class", IA_CTL_STRING, false, 1, 8 },
		{ "head", IA_CTL_INT, false, 1, IA_MAX_WINDOW },
		{ "cc", IA_CTL_STRING, false, 1, 16 },
		{ "tail", IA_CTL_INT, false, 0, 1 },
	} },
	{ "end", do_end, { JOB_ID(true) } },
	{ "list", do_list, { { NULL } } },
	{ "show", do_show, { JOB_ID(true) } },
	{ "window", do_window, { JOB_ID(true), { "window", IA_CTL_INT, true, 0, IA_MAX_WINDOW },
				 { "worker", IA_CTL_INT, false, 1, UINT32_MAX - 1 } } },
	{ "stats", do_stats, { JOB_ID(false), { "chunks", IA_CTL_INT, false, 1, INT64_MAX - 1 },
			       { "history", IA_CTL_INT, false, 0, 4096 } } },
};

static const struct ia_ctl_field cmd_field[] = { { "cmd", IA_CTL_STRING, true, 1, 32 }, { NULL } };

/* The command of a request whose fields are right, else NULL with err its answer's error. */
static const struct command *command_of(json_object *req, char *err, size_t errlen)
{
	char why[IA_ERRLEN];
	const char *c;

	if (ia_ctl_check(req, cmd_field, err, errlen))
		return NULL;
	c = ia_ctl_str(req, "cmd", "");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(c, commands[i].name))
			continue;
		if (!ia_ctl_check(req, commands[i].fields, why, sizeof(why)))
			return &commands[i];
		snprintf(err, errlen, "%s: %s", c, why);
		return NULL;
	}
	snprintf(err, errlen, "unknown command '%s'", c);
	return NULL;
}

json_object *handle(struct daemon *d, json_object *req, uid_t uid)
{
	char err[2 * IA_ERRLEN];
	const struct command *c = command_of(req, err, sizeof(err));

	return c ? c->run(d, req, uid) : error_reply("%s", err);
}

/* No switch v with in[v] (all if in is NULL) has a call of another request waiting. */
static bool links_free(struct daemon *d, const bool *in)
{
	for (int v = 0; v < d->t->n; v++)
		if ((!in || in[v]) && ia_link_busy(&d->remote->sw[v].link))
			return false;
	return true;
}

/* The switches a submission's workers reach the destination through: all its calls. */
static bool submit_free(struct daemon *d, json_object *req)
{
	const struct ia_topo *t = d->t;
	bool *path = calloc(t->n, sizeof(*path)), ok;
	json_object *workers;

	if (!path)
		return false;
	for (int v = 0; v < t->n; v++) {
		int64_t n = t->sw[v].load;

		if (json_object_object_get_ex(req, "workers", &workers)) {
			json_object *cnt;

			n = json_object_object_get_ex(workers, t->sw[v].name, &cnt) ?
				    json_object_get_int64(cnt) : 0;
		}
		for (int u = v; n > 0 && u >= 0 && !path[u]; u = t->sw[u].parent)
			path[u] = true;
	}
	ok = links_free(d, path);
	free(path);
	return ok;
}

bool meanwhile_ok(struct daemon *d, json_object *req)
{
	const struct command *c;
	char err[2 * IA_ERRLEN];
	struct ia_job *j;
	bool ok, *path;

	c = command_of(req, err, sizeof(err));
	if (!c || c->run == do_list || c->run == do_window)
		return true;	/* an error, a read, a figure set: no call */
	/* An end moves the job table under the waiting request's feet. */
	if (c->run == do_end)
		return false;
	if (c->run == do_submit)
		return submit_free(d, req);
	if (!json_object_object_get_ex(req, "job", NULL))
		return links_free(d, NULL);	/* stats of everything: every switch's */
	j = ia_jobs_find(&d->jobs, ia_ctl_int(req, "job", 0));
	if (!j)
		return true;	/* "no job" */
	/* A job being submitted or ended is the waiting request's. */
	if (j->state != IA_JOB_ACTIVE)
		return false;
	/* show says which router is busy; stats would read zeros for it. */
	if (c->run == do_show)
		return true;
	path = calloc(d->t->n, sizeof(*path));
	if (!path)
		return false;
	for (int v = 0; v < d->t->n; v++)
		path[v] = j->plan.sw[v].on_path;
	ok = links_free(d, path);
	free(path);
	return ok;
}
