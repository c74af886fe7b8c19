// SPDX-License-Identifier: GPL-2.0
/* The job transaction: submit, end, recover (see job.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <inagg/maps.h>

#include "job.h"

static const char *const state_names[] = {
	[IA_JOB_ADMITTING] = "admitting", [IA_JOB_CONFIGURING] = "configuring",
	[IA_JOB_ACTIVE] = "active",	  [IA_JOB_ENDING] = "ending",
};

const char *ia_job_state_name(enum ia_job_state s)
{
	return s < sizeof(state_names) / sizeof(state_names[0]) ? state_names[s] : "?";
}

static void __attribute__((format(printf, 3, 4))) note(struct ia_jobs *js, int level,
							const char *fmt, ...)
{
	char msg[2 * IA_ERRLEN];
	va_list ap;

	if (!js->ops->note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	js->ops->note(js->ctx, level, msg);
}

int ia_jobs_init(struct ia_jobs *js, const struct ia_topo *t, const struct ia_job_ops *ops,
		 void *ctx)
{
	*js = (struct ia_jobs){ .t = t, .ops = ops, .ctx = ctx };
	js->jobs = calloc(IA_MAX_JOBS, sizeof(*js->jobs));
	return js->jobs ? 0 : -ENOMEM;
}

static void job_free(struct ia_job *j)
{
	free(j->load);
	free(j->blue);
	ia_placement_free(&j->model);
	ia_plan_free(&j->plan);
	memset(j, 0, sizeof(*j));
}

static int job_alloc(struct ia_job *j, int n)
{
	j->load = calloc(n, sizeof(*j->load));
	j->blue = calloc(n, sizeof(*j->blue));
	if (!j->load || !j->blue || ia_placement_init(&j->model, n))
		return -ENOMEM;
	return 0;
}

void ia_jobs_free(struct ia_jobs *js)
{
	for (int i = 0; i < js->njobs; i++)
		job_free(&js->jobs[i]);
	free(js->jobs);
	js->jobs = NULL;
	js->njobs = 0;
}

struct ia_job *ia_jobs_find(struct ia_jobs *js, uint32_t id)
{
	for (int i = 0; i < js->njobs; i++)
		if (js->jobs[i].id == id)
			return &js->jobs[i];
	return NULL;
}

/* Removes a job from the table. */
static void drop(struct ia_jobs *js, struct ia_job *j)
{
	int i = j - js->jobs;

	job_free(j);
	memmove(&js->jobs[i], &js->jobs[i + 1], (js->njobs - i - 1) * sizeof(*j));
	js->njobs--;
	memset(&js->jobs[js->njobs], 0, sizeof(*j));
}

/* Removes the job from every switch it may have reached; what is not there is fine. */
static void teardown(struct ia_jobs *js, struct ia_job *j)
{
	const struct ia_topo *t = js->t;
	char why[IA_ERRLEN];
	int ret;

	for (int v = 0; v < t->n; v++) {
		if (j->plan.sw && j->plan.sw[v].on_path) {
			ret = js->ops->unpush(js->ctx, v, j->id);
			if (ret && ret != -ENOENT)
				note(js, 4, "job %u: removing from %s: %s", j->id, t->sw[v].name,
				     strerror(-ret));
		}
		if (!j->blue[v])
			continue;
		why[0] = '\0';
		ret = js->ops->release(js->ctx, v, j->id, why, sizeof(why));
		if (ret && ret != -ENOENT)
			note(js, 4, "job %u: release on %s: %s", j->id, t->sw[v].name,
			     *why ? why : strerror(-ret));
	}
}

static int save(struct ia_jobs *js)
{
	return js->ops->save(js->ctx, js);
}

/* Admits j on every blue switch; on a refusal releases the others and returns the switch. */
static int admit_all(struct ia_jobs *js, struct ia_job *j, struct ia_job_refusal *r)
{
	for (int v = 0; v < js->t->n; v++) {
		if (!j->blue[v])
			continue;
		r->why[0] = '\0';
		if (!js->ops->admit(js->ctx, v, j->id, j->window, r->why, sizeof(r->why)))
			continue;
		r->sw = v;
		for (int u = 0; u < v; u++)
			if (j->blue[u])
				js->ops->release(js->ctx, u, j->id, NULL, 0);
		return v;
	}
	return -1;
}

/* Places and admits, each refusal taking its switch out; fills j->blue. */
static int place_and_admit(struct ia_jobs *js, struct ia_job *j, bool *avail,
			   struct ia_job_refusal *refused, int *nrefused, char *err,
			   size_t errlen)
{
	const struct ia_topo *t = js->t;
	int ret;

	for (int attempt = 0; attempt <= t->n; attempt++) {
		struct ia_problem pb = { .topo = t, .load = j->load, .avail = avail, .k = j->k };
		struct ia_job_refusal *r = &refused[*nrefused];

		ret = ia_place(&pb, j->algo, &j->model);
		if (ret)
			return ia_fail(err, errlen, ret, "placement: %s", strerror(-ret));
		memcpy(j->blue, j->model.blue, t->n * sizeof(*j->blue));
		/* Record the intent first: a crash mid-way is rolled back on restart. */
		ret = save(js);
		if (ret)
			return ia_fail(err, errlen, ret, "state: %s", strerror(-ret));
		if (admit_all(js, j, r) < 0)
			return 0;
		if (!*r->why)
			snprintf(r->why, sizeof(r->why), "refused");
		note(js, 4, "job %u: admission refused on %s: %s; placing again without it",
		     j->id, t->sw[r->sw].name, r->why);
		avail[r->sw] = false;
		(*nrefused)++;
	}
	/* Each attempt removes one switch: unreachable. */
	memset(j->blue, 0, t->n * sizeof(*j->blue));
	return ia_fail(err, errlen, -EAGAIN, "admission: refused everywhere");
}

/* Pushes the job to every switch on its paths. */
static int configure(struct ia_jobs *js, struct ia_job *j, char *err, size_t errlen)
{
	char why[IA_ERRLEN];
	int ret;

	for (int v = 0; v < js->t->n; v++) {
		if (!j->plan.sw[v].on_path)
			continue;
		why[0] = '\0';
		ret = js->ops->push(js->ctx, j, v, why, sizeof(why));
		if (ret)
			return ia_fail(err, errlen, ret, "switch %s: %s", js->t->sw[v].name,
				       *why ? why : strerror(-ret));
	}
	return 0;
}

static int check_request(struct ia_jobs *js, const struct ia_job_request *rq, uint32_t *id,
			 char *err, size_t errlen)
{
	const struct ia_topo *t = js->t;

	if (js->njobs >= IA_MAX_JOBS)
		return ia_fail(err, errlen, -ENOSPC, "%d jobs already: end one first", js->njobs);
	if (rq->k < 0)
		return ia_fail(err, errlen, -EINVAL, "k: need an integer >= 0");
	if (rq->window < 1 || rq->window > IA_MAX_WINDOW)
		return ia_fail(err, errlen, -ERANGE, "window must be in [1, %d]", IA_MAX_WINDOW);
	if ((int)rq->algo < 0 || rq->algo >= IA_ALGO__COUNT || rq->algo == IA_ALGO_BRUTE)
		return ia_fail(err, errlen, -EINVAL, "algorithm not for jobs");
	for (int v = 0; rq->load && v < t->n; v++)
		if (rq->load[v] > t->sw[v].load)
			return ia_fail(err, errlen, -ERANGE, "workers: switch '%s' has %u",
				       t->sw[v].name, t->sw[v].load);
	*id = rq->id;
	if (!*id)
		for (*id = 1; ia_jobs_find(js, *id); (*id)++)
			;
	if (*id == UINT32_MAX || ia_jobs_find(js, *id))
		return ia_fail(err, errlen, -EEXIST, "job %u exists", *id);
	return 0;
}

int ia_jobs_submit(struct ia_jobs *js, const struct ia_job_request *rq, struct ia_job **out,
		   struct ia_job_refusal *refused, int *nrefused, char *err, size_t errlen)
{
	const struct ia_topo *t = js->t;
	struct ia_job *j;
	bool *avail;
	uint32_t id = 0;
	int ret;

	*nrefused = 0;
	*out = NULL;
	ret = check_request(js, rq, &id, err, errlen);
	if (ret)
		return ret;
	j = &js->jobs[js->njobs++];
	*j = (struct ia_job){ .id = id, .k = rq->k, .algo = rq->algo, .window = rq->window,
			      .state = IA_JOB_ADMITTING, .created = time(NULL) };
	avail = calloc(t->n, sizeof(*avail));
	if (!avail || job_alloc(j, t->n)) {
		ret = ia_fail(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	for (int v = 0; v < t->n; v++) {
		j->load[v] = rq->load ? rq->load[v] : t->sw[v].load;
		avail[v] = t->sw[v].available && js->ops->has_room(js->ctx, v, j->window);
	}
	ret = place_and_admit(js, j, avail, refused, nrefused, err, errlen);
	if (ret)
		goto rollback;
	ret = ia_plan_build(t, j->load, j->blue, &j->plan);
	if (ret) {
		ia_fail(err, errlen, ret, "plan: %s", strerror(-ret));
		goto rollback;
	}
	j->state = IA_JOB_CONFIGURING;
	ret = save(js);
	if (ret) {
		ia_fail(err, errlen, ret, "state: %s", strerror(-ret));
		goto rollback;
	}
	ret = configure(js, j, err, errlen);
	if (ret)
		goto rollback;
	j->state = IA_JOB_ACTIVE;
	ret = save(js);
	if (ret) {
		ia_fail(err, errlen, ret, "state: %s", strerror(-ret));
		goto rollback;
	}
	note(js, 6, "job %u: %s k=%d, %d blue, congestion %g, %u workers", j->id,
	     ia_algo_name(j->algo), j->k, j->model.nblue, ia_ratio_double(j->model.congestion),
	     j->plan.nworkers);
	free(avail);
	*out = j;
	return 0;
rollback:
	teardown(js, j);
out:
	drop(js, j);
	save(js);
	free(avail);
	return ret;
}

int ia_jobs_end(struct ia_jobs *js, uint32_t id, char *err, size_t errlen)
{
	struct ia_job *j = ia_jobs_find(js, id);
	int ret;

	if (!j)
		return ia_fail(err, errlen, -ENOENT, "no job %u", id);
	/* Recorded first: a crash during teardown finishes it on restart. */
	j->state = IA_JOB_ENDING;
	ret = save(js);
	if (ret)
		note(js, 4, "job %u: state: %s", id, strerror(-ret));
	teardown(js, j);
	drop(js, j);
	ret = save(js);
	if (ret)
		return ia_fail(err, errlen, ret, "state: %s", strerror(-ret));
	note(js, 6, "job %u ended", id);
	return 0;
}

json_object *ia_job_to_json(const struct ia_jobs *js, const struct ia_job *j)
{
	const struct ia_topo *t = js->t;
	json_object *o = json_object_new_object(), *blue = json_object_new_array();
	json_object *load = json_object_new_object();

	json_object_object_add(o, "job", json_object_new_int64(j->id));
	json_object_object_add(o, "state", json_object_new_string(ia_job_state_name(j->state)));
	json_object_object_add(o, "algorithm", json_object_new_string(ia_algo_name(j->algo)));
	json_object_object_add(o, "k", json_object_new_int(j->k));
	json_object_object_add(o, "window", json_object_new_int64(j->window));
	json_object_object_add(o, "worker_window",
			       json_object_new_int64(ia_job_worker_window(j->window)));
	json_object_object_add(o, "created", json_object_new_int64(j->created));
	for (int v = 0; v < t->n; v++) {
		if (j->blue[v])
			json_object_array_add(blue, json_object_new_string(t->sw[v].name));
		if (j->load[v])
			json_object_object_add(load, t->sw[v].name,
					       json_object_new_int64(j->load[v]));
	}
	json_object_object_add(o, "blue", blue);
	json_object_object_add(o, "workers_per_switch", load);
	return o;
}

json_object *ia_jobs_to_json(const struct ia_jobs *js)
{
	json_object *root = json_object_new_object(), *jobs = json_object_new_array();

	for (int i = 0; i < js->njobs; i++)
		json_object_array_add(jobs, ia_job_to_json(js, &js->jobs[i]));
	json_object_object_add(root, "jobs", jobs);
	return root;
}

static bool get_int(json_object *o, const char *key, long long min, long long max,
		    long long *out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_int64(v);
	return *out >= min && *out <= max;
}

/*
 * A saved record back into a job. -EINVAL without an id: unusable. Any other
 * failure leaves what is needed to roll it back (id, blue, load).
 */
static int job_from_json(const struct ia_topo *t, json_object *o, struct ia_job *j)
{
	long long id, k, window, created = 0;
	json_object *f;
	int algo, s;

	memset(j, 0, sizeof(*j));
	if (!json_object_is_type(o, json_type_object) ||
	    !get_int(o, "job", 1, UINT32_MAX - 1, &id))
		return -EINVAL;
	if (job_alloc(j, t->n))
		return -ENOMEM;
	j->id = id;
	if (json_object_object_get_ex(o, "blue", &f) && json_object_is_type(f, json_type_array)) {
		for (size_t b = 0; b < json_object_array_length(f); b++) {
			json_object *name = json_object_array_get_idx(f, b);

			s = json_object_is_type(name, json_type_string) ?
				    ia_topo_find(t, json_object_get_string(name)) : -1;
			if (s >= 0)
				j->blue[s] = true;
		}
	}
	if (json_object_object_get_ex(o, "workers_per_switch", &f) &&
	    json_object_is_type(f, json_type_object)) {
		json_object_object_foreach(f, name, cnt) {
			s = ia_topo_find(t, name);
			if (s >= 0 && json_object_is_type(cnt, json_type_int) &&
			    json_object_get_int64(cnt) >= 0 &&
			    json_object_get_int64(cnt) <= t->sw[s].load)
				j->load[s] = json_object_get_int64(cnt);
		}
	}
	if (ia_plan_build(t, j->load, j->blue, &j->plan))
		j->plan.sw = NULL;
	if (!get_int(o, "k", 0, INT32_MAX, &k) || !get_int(o, "window", 1, IA_MAX_WINDOW, &window))
		return -EBADMSG;
	get_int(o, "created", 0, INT64_MAX, &created);
	j->k = k;
	j->window = window;
	j->created = created;
	if (!json_object_object_get_ex(o, "algorithm", &f) ||
	    !json_object_is_type(f, json_type_string) ||
	    (algo = ia_algo_parse(json_object_get_string(f))) < 0)
		return -EBADMSG;
	j->algo = algo;
	if (!json_object_object_get_ex(o, "state", &f) || !json_object_is_type(f, json_type_string))
		return -EBADMSG;
	for (s = 0; s < (int)(sizeof(state_names) / sizeof(state_names[0])); s++)
		if (!strcmp(json_object_get_string(f), state_names[s]))
			break;
	if (s == sizeof(state_names) / sizeof(state_names[0]))
		return -EBADMSG;
	j->state = s;
	if (!j->plan.sw)
		return -EBADMSG;
	struct ia_problem pb = { .topo = t, .load = j->load };

	memcpy(j->model.blue, j->blue, t->n * sizeof(*j->blue));
	ia_model_eval(&pb, &j->model);
	return 0;
}

/* Brings ledgers and switches in line with an active job; what is there stays. */
static int repair(struct ia_jobs *js, struct ia_job *j)
{
	char why[IA_ERRLEN];
	int fixed = 0, ret;

	for (int v = 0; v < js->t->n; v++) {
		if (j->blue[v] && js->ops->admitted(js->ctx, v, j->id) == -ENOENT) {
			why[0] = '\0';
			ret = js->ops->admit(js->ctx, v, j->id, j->window, why, sizeof(why));
			if (ret)
				note(js, 4, "job %u: admission on %s: %s", j->id, js->t->sw[v].name,
				     *why ? why : strerror(-ret));
			else
				fixed++;
		}
		if (j->plan.sw[v].on_path && !js->ops->pushed(js->ctx, v, j->id)) {
			why[0] = '\0';
			ret = js->ops->push(js->ctx, j, v, why, sizeof(why));
			if (ret)
				note(js, 4, "job %u: configuring %s: %s", j->id, js->t->sw[v].name,
				     *why ? why : strerror(-ret));
			else
				fixed++;
		}
	}
	return fixed;
}

int ia_jobs_recover(struct ia_jobs *js, json_object *saved, int *repairs, char *err,
		    size_t errlen)
{
	json_object *jobs;
	size_t n;
	int ret;

	*repairs = 0;
	if (!json_object_object_get_ex(saved, "jobs", &jobs) ||
	    !json_object_is_type(jobs, json_type_array))
		return ia_fail(err, errlen, -EINVAL, "no \"jobs\" array");
	n = json_object_array_length(jobs);
	for (size_t i = 0; i < n && js->njobs < IA_MAX_JOBS; i++) {
		struct ia_job *j = &js->jobs[js->njobs];

		ret = job_from_json(js->t, json_object_array_get_idx(jobs, i), j);
		if (ret == -EINVAL || ret == -ENOMEM || (j->id && ia_jobs_find(js, j->id))) {
			/* Without an id, or another's: nothing that is surely its to undo. */
			note(js, 4, "saved job %zu unreadable or repeated: skipped", i);
			job_free(j);
			continue;
		}
		if (ret || j->state != IA_JOB_ACTIVE) {
			note(js, 4, "job %u was %s when the daemon stopped: rolled back", j->id,
			     ia_job_state_name(j->state));
			teardown(js, j);
			job_free(j);
			continue;
		}
		js->njobs++;
		ret = repair(js, j);
		note(js, 6, "job %u recovered (%d repairs)", j->id, ret);
		*repairs += ret;
	}
	ret = save(js);
	return ret ? ia_fail(err, errlen, ret, "state: %s", strerror(-ret)) : 0;
}
