// SPDX-License-Identifier: GPL-2.0
/*
 * Joining a job through inaggd (include/inagg/api.h): the daemon's "show"
 * answer says where the job's workers and destination are and how many
 * chunks a worker keeps in flight. Anything the daemon does not confirm as
 * an active job is a refusal (-ECONNREFUSED), with the daemon's words.
 * A worker also takes the job's window policy and class (docs/cc.md).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include <json-c/json.h>

#include "inagg/api.h"
#include "api_int.h"
#include "cc_job.h"
#include "ctl.h"
#include "err.h"

static json_object *member(json_object *o, const char *key, json_type type)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, type))
		return NULL;
	return v;
}

/* The daemon's record of an active job, or -ECONNREFUSED and why. */
static int ask_job(const char *sock, uint32_t job, json_object **resp, json_object **jo,
		   char *err, size_t errlen)
{
	json_object *req = json_object_new_object(), *o;
	const char *path = sock ? sock : IA_CTL_SOCK;
	char why[IA_ERRLEN] = "";
	int ret;

	if (!job)
		return ia_fail(err, errlen, -EINVAL, "job 0: job ids start at 1");
	if (!req)
		return ia_fail(err, errlen, -ENOMEM, "out of memory");
	json_object_object_add(req, "cmd", json_object_new_string("show"));
	json_object_object_add(req, "job", json_object_new_int64(job));
	ret = ia_ctl_call(path, req, resp, why, sizeof(why));
	json_object_put(req);
	if (ret)
		return ia_fail(err, errlen, -ECONNREFUSED, "job %u refused: %s", job, why);
	o = member(*resp, "ok", json_type_boolean);
	if (!o || !json_object_get_boolean(o)) {
		o = member(*resp, "error", json_type_string);
		return ia_fail(err, errlen, -ECONNREFUSED, "job %u refused by inaggd: %s", job,
			       o ? json_object_get_string(o) : "no reason given");
	}
	*jo = member(*resp, "job", json_type_object);
	o = member(*jo, "state", json_type_string);
	if (!o || strcmp(json_object_get_string(o), "active"))
		return ia_fail(err, errlen, -ECONNREFUSED, "job %u refused: it is %s, not active",
			       job, o ? json_object_get_string(o) : "in no known state");
	return 0;
}

static int get_addr(json_object *o, const char *key, struct in_addr *a)
{
	json_object *s = member(o, key, json_type_string);

	return s && inet_pton(AF_INET, json_object_get_string(s), a) == 1 ? 0 : -EPROTO;
}

static void get_netns(json_object *o, char *ns, size_t len)
{
	json_object *s = member(o, "netns", json_type_string);

	snprintf(ns, len, "%s", s ? json_object_get_string(s) : "");
}

/* The end of a join: the daemon's answer freed, the handle given or closed. */
static int join_done(json_object *resp, struct ia_api *h, int ret, struct ia_api **out)
{
	json_object_put(resp);
	if (ret) {
		ia_api_close(h);
		return ret;
	}
	*out = h;
	return 0;
}

int ia_api_worker_join(const char *sock, uint32_t job, uint32_t index, struct ia_api **out,
		       char *err, size_t errlen)
{
	json_object *resp = NULL, *jo = NULL, *workers, *w, *o;
	struct ia_api *h = NULL;
	size_t n;
	int ret;

	*out = NULL;
	ret = ask_job(sock, job, &resp, &jo, err, errlen);
	if (ret)
		goto out;
	workers = member(jo, "workers", json_type_array);
	n = workers ? json_object_array_length(workers) : 0;
	if (index >= n) {
		ret = ia_fail(err, errlen, -EINVAL, "worker %u: job %u has workers 0..%zd", index,
			      job, (ssize_t)n - 1);
		goto out;
	}
	h = ia_handle_alloc(job, n);
	if (!h) {
		ret = ia_fail(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	w = json_object_array_get_idx(workers, index);
	o = member(w, "id", json_type_int);
	if (!o || get_addr(w, "address", &h->addr) ||
	    get_addr(member(jo, "destination", json_type_object), "address", &h->ps)) {
		ret = ia_fail(err, errlen, -EPROTO, "job %u: inaggd's answer lacks addresses", job);
		goto out;
	}
	h->id = json_object_get_int64(o);
	h->index = index;
	get_netns(w, h->netns, sizeof(h->netns));
	o = member(jo, "worker_window", json_type_int);
	h->window = o ? json_object_get_int64(o) : 0;
	ret = ia_job_cc_of(jo, &h->cc, &h->ps_job);
	if (ret)
		ia_fail(err, errlen, ret, "job %u: inaggd's answer has an unknown window policy",
			job);
	/* Every worker of an INA job reports its window: the daemon lends by the largest. */
	if (!ret && !h->ps_job)
		snprintf(h->sock, sizeof(h->sock), "%s", sock ? sock : IA_CTL_SOCK);
out:
	return join_done(resp, h, ret, out);
}

int ia_api_ps_join(const char *sock, uint32_t job, struct ia_api **out, char *err,
		   size_t errlen)
{
	json_object *resp = NULL, *jo = NULL, *dest, *o;
	struct ia_api *h = NULL;
	int ret;

	*out = NULL;
	ret = ask_job(sock, job, &resp, &jo, err, errlen);
	if (ret)
		goto out;
	o = member(jo, "nworkers", json_type_int);
	dest = member(jo, "destination", json_type_object);
	h = ia_handle_alloc(job, o ? json_object_get_int64(o) : 0);
	if (!h) {
		ret = ia_fail(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	h->is_ps = true;
	if (!h->nworkers || get_addr(dest, "address", &h->addr) ||
	    get_addr(dest, "down", &h->down)) {
		ret = ia_fail(err, errlen, -EPROTO,
			      "job %u: inaggd's answer lacks its workers or addresses", job);
		goto out;
	}
	get_netns(dest, h->netns, sizeof(h->netns));
out:
	return join_done(resp, h, ret, out);
}
