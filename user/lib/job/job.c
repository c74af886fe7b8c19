// SPDX-License-Identifier: GPL-2.0
/* The job transaction: submit, end, recover (see job.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <inagg/maps.h>

#include "job.h"


/* What happened, to the table's note (or the print hook). */
#define note(js, level, ...) ia_log_to((js)->ops->note, (js)->ctx, level, __VA_ARGS__)

int ia_jobs_init(struct ia_jobs *js, const struct ia_topo *t, const struct ia_job_ops *ops,
		 void *ctx)
{
	*js = (struct ia_jobs){ .t = t, .ops = ops, .ctx = ctx };
	js->jobs = calloc(IA_MAX_JOBS, sizeof(*js->jobs));
	return js->jobs ? 0 : -ENOMEM;
}


void ia_jobs_free(struct ia_jobs *js)
{
	for (int i = 0; i < js->njobs; i++)
		ia_job_free(&js->jobs[i]);
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

	ia_job_free(j);
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
				note(js, IA_LOG_WARN, "job %u: removing from %s: %s", j->id, t->sw[v].name,
				     strerror(-ret));
		}
		if (!j->held[v])
			continue;
		why[0] = '\0';
		ret = js->ops->release(js->ctx, v, j->id, why, sizeof(why));
		if (ret && ret != -ENOENT)
			note(js, IA_LOG_WARN, "job %u: release on %s: %s", j->id, t->sw[v].name,
			     *why ? why : strerror(-ret));
	}
}

/* Persists the table; a failure says so in err (which may be NULL). */
static int save(struct ia_jobs *js, char *err, size_t errlen)
{
	int ret = js->ops->save(js->ctx, js);

	return ret ? ia_fail(err, errlen, ret, "state: %s", strerror(-ret)) : 0;
}

/* Admits j's head on every blue switch; on a refusal releases the others and returns the switch. */
static int admit_all(struct ia_jobs *js, struct ia_job *j, struct ia_job_refusal *r)
{
	for (int v = 0; v < js->t->n; v++) {
		if (!j->blue[v])
			continue;
		r->why[0] = '\0';
		if (!js->ops->admit(js->ctx, v, j->id, IA_JOB_INA, j->head, r->why, sizeof(r->why)))
			continue;
		r->sw = v;
		for (int u = 0; u < v; u++)
			if (j->blue[u])
				js->ops->release(js->ctx, u, j->id, NULL, 0);
		return v;
	}
	return -1;
}

/*
 * A PS job on the switches of its paths with room for one more job: its
 * tails there. A refusal only leaves that switch's tail out (the job's
 * messages pass it unaggregated), recorded in refused.
 */
static int admit_tails(struct ia_jobs *js, struct ia_job *j, struct ia_job_refusal *refused,
		       int *nrefused, char *err, size_t errlen)
{
	const struct ia_topo *t = js->t;
	int ret;

	for (int v = 0; v < t->n; v++)
		j->held[v] = j->plan.sw[v].on_path && js->ops->has_room(js->ctx, v, 0);
	/* Record the intent first: a crash mid-way is rolled back on restart. */
	ret = save(js, err, errlen);
	if (ret)
		return ret;
	for (int v = 0; v < t->n; v++) {
		struct ia_job_refusal *r = &refused[*nrefused];

		if (!j->held[v])
			continue;
		r->why[0] = '\0';
		if (!js->ops->admit(js->ctx, v, j->id, IA_JOB_PS, 0, r->why, sizeof(r->why)))
			continue;
		j->held[v] = false;
		r->sw = v;
		if (!*r->why)
			snprintf(r->why, sizeof(r->why), "refused");
		note(js, IA_LOG_WARN, "job %u: tail on %s refused: %s; its messages pass there", j->id,
		     t->sw[v].name, r->why);
		(*nrefused)++;
	}
	return 0;
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
		memcpy(j->held, j->blue, t->n * sizeof(*j->held));
		/* Record the intent first: a crash mid-way is rolled back on restart. */
		ret = save(js, err, errlen);
		if (ret)
			return ret;
		if (admit_all(js, j, r) < 0)
			return 0;
		if (!*r->why)
			snprintf(r->why, sizeof(r->why), "refused");
		note(js, IA_LOG_WARN, "job %u: admission refused on %s: %s; placing again without it",
		     j->id, t->sw[r->sw].name, r->why);
		avail[r->sw] = false;
		(*nrefused)++;
	}
	/* Each attempt removes one switch: unreachable. */
	memset(j->blue, 0, t->n * sizeof(*j->blue));
	memset(j->held, 0, t->n * sizeof(*j->held));
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
	uint64_t nworkers = 0;

	if (js->njobs >= IA_MAX_JOBS)
		return ia_fail(err, errlen, -ENOSPC, "%d jobs already: end one first", js->njobs);
	if (rq->k < 0)
		return ia_fail(err, errlen, -EINVAL, "k: need an integer >= 0");
	if (rq->window > IA_MAX_WINDOW || rq->head > IA_MAX_WINDOW)
		return ia_fail(err, errlen, -ERANGE, "window and head must be in [1, %d]",
			       IA_MAX_WINDOW);
	if (rq->class && (rq->class < IA_JOB_INA || rq->class > IA_JOB_AUTO))
		return ia_fail(err, errlen, -EINVAL, "class: ina, ps or auto");
	if (rq->class == IA_JOB_PS && rq->head)
		return ia_fail(err, errlen, -EINVAL, "a PS job holds no head");
	if (rq->class == IA_JOB_INA && !rq->k)
		return ia_fail(err, errlen, -EINVAL, "an INA job needs k >= 1 (its blue switches)");
	if (rq->class == IA_JOB_INA && rq->algo == IA_ALGO_ALL_RED)
		return ia_fail(err, errlen, -EINVAL,
			       "all-red aggregates nowhere: not an INA job (class ps or auto)");
	if (rq->head && rq->window > rq->head)
		return ia_fail(err, errlen, -EINVAL,
			       "window %u above the head (%u): chunks in flight would share slots",
			       rq->window, rq->head);
	if ((unsigned int)rq->cc >= IA_CC__COUNT)
		return ia_fail(err, errlen, -EINVAL, "cc: fixed, atp, a2tp or flexina");
	if ((int)rq->algo < 0 || rq->algo >= IA_ALGO__COUNT || rq->algo == IA_ALGO_BRUTE)
		return ia_fail(err, errlen, -EINVAL, "algorithm not for jobs");
	for (int v = 0; rq->load && v < t->n; v++)
		if (rq->load[v] > t->sw[v].load)
			return ia_fail(err, errlen, -ERANGE, "workers: switch '%s' has %u",
				       t->sw[v].name, t->sw[v].load);
	/* A job of nobody would be admitted, configured and listed, and never run. */
	for (int v = 0; v < t->n && !nworkers; v++)
		nworkers += rq->load ? rq->load[v] : t->sw[v].load;
	if (!nworkers)
		return ia_fail(err, errlen, -EINVAL, "workers: none takes part (%s)",
			       rq->load ? "every count is 0" : "the topology has no load");
	*id = rq->id;
	if (!*id)
		for (*id = 1; ia_jobs_find(js, *id); (*id)++)
			;
	if (*id == UINT32_MAX || ia_jobs_find(js, *id))
		return ia_fail(err, errlen, -EEXIST, "job %u exists", *id);
	return 0;
}

/*
 * After the INA placement (or none): the class is settled. An INA job that
 * got no head anywhere fails; an automatic one becomes PS. A PS job
 * aggregates at no blue switch: its model is all red.
 */
static int classify(struct ia_jobs *js, struct ia_job *j, char *err, size_t errlen)
{
	const struct ia_topo *t = js->t;
	int nblue = 0;

	for (int v = 0; v < t->n; v++)
		nblue += j->blue[v];
	if (j->class != IA_JOB_PS && nblue) {
		j->class = IA_JOB_INA;
		return 0;
	}
	if (j->class == IA_JOB_INA)
		return ia_fail(err, errlen, -ENOSPC,
			       "class ina: no switch could admit a head of %u slots (class auto "
			       "would run it as PS)", j->head);
	j->class = IA_JOB_PS;
	j->head = 0;
	memset(j->blue, 0, t->n * sizeof(*j->blue));
	memset(j->held, 0, t->n * sizeof(*j->held));
	struct ia_problem pb = { .topo = t, .load = j->load };

	memset(j->model.blue, 0, t->n * sizeof(*j->model.blue));
	ia_model_eval(&pb, &j->model);
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
	*j = (struct ia_job){ .id = id, .k = rq->k, .algo = rq->algo,
			      .class = rq->class ? rq->class : IA_JOB_AUTO,
			      .window = rq->window ? rq->window :
				       rq->head ? rq->head : IA_JOB_WINDOW_DEFAULT,
			      .cc = rq->cc, .state = IA_JOB_ADMITTING, .created = time(NULL),
			      .owner = rq->owner };
	j->head = rq->head ? rq->head : j->window;
	if (j->class == IA_JOB_PS)
		j->head = 0;
	avail = calloc(t->n, sizeof(*avail));
	if (!avail || ia_job_alloc(j, t->n)) {
		ret = ia_fail(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	for (int v = 0; v < t->n; v++) {
		j->load[v] = rq->load ? rq->load[v] : t->sw[v].load;
		avail[v] = j->class != IA_JOB_PS && t->sw[v].available &&
			   js->ops->has_room(js->ctx, v, j->head);
	}
	if (j->class != IA_JOB_PS) {
		ret = place_and_admit(js, j, avail, refused, nrefused, err, errlen);
		if (ret)
			goto rollback;
	}
	ret = classify(js, j, err, errlen);
	if (ret)
		goto rollback;
	ret = ia_plan_build(t, j->load, j->blue, &j->plan);
	if (ret) {
		ia_fail(err, errlen, ret, "plan: %s", strerror(-ret));
		goto rollback;
	}
	/*
	 * All-red is the reference without in-network aggregation (the paper's
	 * baseline): no tails either, every message reaches the PS, like a PS job
	 * asked without tails. A job that is PS by its class or for want of
	 * memory aggregates in the tails.
	 */
	if (j->class == IA_JOB_PS && !rq->no_tail && j->algo != IA_ALGO_ALL_RED) {
		ret = admit_tails(js, j, refused, nrefused, err, errlen);
		if (ret)
			goto rollback;
	}
	j->state = IA_JOB_CONFIGURING;
	ret = save(js, err, errlen);
	if (ret)
		goto rollback;
	ret = configure(js, j, err, errlen);
	if (ret)
		goto rollback;
	j->state = IA_JOB_ACTIVE;
	ret = save(js, err, errlen);
	if (ret)
		goto rollback;
	note(js, IA_LOG_INFO, "job %u: %s, head %u, %s k=%d, %d blue, congestion %g, %u workers, cc %s",
	     j->id, ia_job_class_name(j->class), j->head, ia_algo_name(j->algo), j->k,
	     j->model.nblue, ia_ratio_double(j->model.congestion), j->plan.nworkers,
	     ia_cc_policy_name(j->cc));
	free(avail);
	*out = j;
	return 0;
rollback:
	teardown(js, j);
out:
	drop(js, j);
	save(js, NULL, 0);
	free(avail);
	return ret;
}

int ia_jobs_end(struct ia_jobs *js, uint32_t id, char *err, size_t errlen)
{
	struct ia_job *j = ia_jobs_find(js, id);
	char why[IA_ERRLEN];
	int ret;

	if (!j)
		return ia_fail(err, errlen, -ENOENT, "no job %u", id);
	/* Recorded first: a crash during teardown finishes it on restart. */
	j->state = IA_JOB_ENDING;
	if (save(js, why, sizeof(why)))
		note(js, IA_LOG_WARN, "job %u: %s", id, why);
	teardown(js, j);
	drop(js, j);
	ret = save(js, err, errlen);
	if (ret)
		return ret;
	note(js, IA_LOG_INFO, "job %u ended", id);
	return 0;
}


/* Brings ledgers and switches in line with an active job; what is there stays. */
static int repair(struct ia_jobs *js, struct ia_job *j)
{
	char why[IA_ERRLEN];
	int fixed = 0, ret;

	for (int v = 0; v < js->t->n; v++) {
		if (j->held[v] && js->ops->admitted(js->ctx, v, j->id) == -ENOENT) {
			why[0] = '\0';
			ret = js->ops->admit(js->ctx, v, j->id, j->class, j->head, why, sizeof(why));
			if (ret)
				note(js, IA_LOG_WARN, "job %u: admission on %s: %s", j->id, js->t->sw[v].name,
				     *why ? why : strerror(-ret));
			else
				fixed++;
		}
		if (j->plan.sw[v].on_path && !js->ops->pushed(js->ctx, v, j->id)) {
			why[0] = '\0';
			ret = js->ops->push(js->ctx, j, v, why, sizeof(why));
			if (ret)
				note(js, IA_LOG_WARN, "job %u: configuring %s: %s", j->id, js->t->sw[v].name,
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

		ret = ia_job_from_json(js->t, json_object_array_get_idx(jobs, i), j);
		if (ret == -EINVAL || ret == -ENOMEM || (j->id && ia_jobs_find(js, j->id))) {
			/* Without an id, or another's: nothing that is surely its to undo. */
			note(js, IA_LOG_WARN, "saved job %zu unreadable or repeated: skipped", i);
			ia_job_free(j);
			continue;
		}
		if (ret || j->state != IA_JOB_ACTIVE) {
			note(js, IA_LOG_WARN, "job %u was %s when the daemon stopped: rolled back", j->id,
			     ia_job_state_name(j->state));
			teardown(js, j);
			ia_job_free(j);
			continue;
		}
		js->njobs++;
		ret = repair(js, j);
		note(js, IA_LOG_INFO, "job %u recovered (%d repairs)", j->id, ret);
		*repairs += ret;
	}
	return save(js, err, errlen);
}
