// SPDX-License-Identifier: GPL-2.0
/*
 * A job's record (job.h): names of states and classes, the JSON the state
 * file keeps, and that JSON read back for recovery.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <inagg/maps.h>

#include "job.h"
#include "names.h"

static const char *const state_names[] = {
	[IA_JOB_ADMITTING] = "admitting", [IA_JOB_CONFIGURING] = "configuring",
	[IA_JOB_ACTIVE] = "active",	  [IA_JOB_ENDING] = "ending",
};

#define NAMES(a) a, sizeof(a) / sizeof(a[0])

const char *ia_job_state_name(enum ia_job_state s)
{
	return ia_name_of(NAMES(state_names), s);
}

static const char *const class_names[] = {
	[IA_JOB_INA] = "ina", [IA_JOB_PS] = "ps", [IA_JOB_AUTO] = "auto",
};

const char *ia_job_class_name(enum ia_job_class c)
{
	return ia_name_of(NAMES(class_names), c);
}

int ia_job_class_parse(const char *s)
{
	int c = ia_name_find(NAMES(class_names), s);

	return c < 0 ? -EINVAL : c;
}

void ia_job_free(struct ia_job *j)
{
	free(j->load);
	free(j->blue);
	free(j->held);
	ia_placement_free(&j->model);
	ia_plan_free(&j->plan);
	memset(j, 0, sizeof(*j));
}

int ia_job_alloc(struct ia_job *j, int n)
{
	j->load = calloc(n, sizeof(*j->load));
	j->blue = calloc(n, sizeof(*j->blue));
	j->held = calloc(n, sizeof(*j->held));
	if (!j->load || !j->blue || !j->held || ia_placement_init(&j->model, n))
		return -ENOMEM;
	return 0;
}

json_object *ia_job_to_json(const struct ia_jobs *js, const struct ia_job *j)
{
	const struct ia_topo *t = js->t;
	json_object *o = json_object_new_object(), *blue = json_object_new_array();
	json_object *load = json_object_new_object(), *tails = json_object_new_array();

	json_object_object_add(o, "job", json_object_new_int64(j->id));
	json_object_object_add(o, "state", json_object_new_string(ia_job_state_name(j->state)));
	json_object_object_add(o, "class", json_object_new_string(ia_job_class_name(j->class)));
	json_object_object_add(o, "head", json_object_new_int64(j->head));
	json_object_object_add(o, "algorithm", json_object_new_string(ia_algo_name(j->algo)));
	json_object_object_add(o, "k", json_object_new_int(j->k));
	json_object_object_add(o, "window", json_object_new_int64(j->window));
	json_object_object_add(o, "worker_window",
			       json_object_new_int64(ia_job_worker_window(j->window)));
	json_object_object_add(o, "cc", json_object_new_string(ia_cc_policy_name(j->cc)));
	json_object_object_add(o, "created", json_object_new_int64(j->created));
	json_object_object_add(o, "owner", json_object_new_int64(j->owner));
	for (int v = 0; v < t->n; v++) {
		if (j->blue[v])
			json_object_array_add(blue, json_object_new_string(t->sw[v].name));
		if (j->held[v] && j->class == IA_JOB_PS)
			json_object_array_add(tails, json_object_new_string(t->sw[v].name));
		if (j->load[v])
			json_object_object_add(load, t->sw[v].name,
					       json_object_new_int64(j->load[v]));
	}
	/* Where it aggregates: INA its heads (blue), PS the tails; the rest at the destination. */
	json_object_object_add(o, "blue", blue);
	json_object_object_add(o, "tails", tails);
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

/* Marks in set the switches a saved list (of names) names; unknown names are skipped. */
static void names_to_set(const struct ia_topo *t, json_object *o, const char *key, bool *set)
{
	json_object *f;

	if (!json_object_object_get_ex(o, key, &f) || !json_object_is_type(f, json_type_array))
		return;
	for (size_t b = 0; b < json_object_array_length(f); b++) {
		json_object *name = json_object_array_get_idx(f, b);
		int s = json_object_is_type(name, json_type_string) ?
				ia_topo_find(t, json_object_get_string(name)) : -1;

		if (s >= 0)
			set[s] = true;
	}
}

/*
 * A saved record back into a job. -EINVAL without an id: unusable. Any other
 * failure leaves what is needed to roll it back (id, what it held, load).
 * A record without a class is an INA job with a head of its window (before
 * issue 16); one without cc runs the fixed policy (before issue 12).
 */
int ia_job_from_json(const struct ia_topo *t, json_object *o, struct ia_job *j)
{
	long long id, k, window, created = 0, head, owner = 0;
	json_object *f;
	int algo, s, class = IA_JOB_INA;

	memset(j, 0, sizeof(*j));
	if (!json_object_is_type(o, json_type_object) ||
	    !get_int(o, "job", 1, UINT32_MAX - 1, &id))
		return -EINVAL;
	if (ia_job_alloc(j, t->n))
		return -ENOMEM;
	j->id = id;
	if (json_object_object_get_ex(o, "class", &f))
		class = json_object_is_type(f, json_type_string) ?
				ia_job_class_parse(json_object_get_string(f)) : -EINVAL;
	/* Whatever the rest says, what it may hold is released on a rollback. */
	names_to_set(t, o, "tails", j->held);
	if (class != IA_JOB_PS) {	/* INA, or auto while being admitted as INA */
		names_to_set(t, o, "blue", j->blue);
		names_to_set(t, o, "blue", j->held);
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
	/* A record without an owner (before issue 31) is root's: only root may end it. */
	if (json_object_object_get_ex(o, "owner", NULL) &&
	    !get_int(o, "owner", 0, UINT32_MAX - 1, &owner))
		return -EBADMSG;
	if (class != IA_JOB_INA && class != IA_JOB_PS)
		return -EBADMSG;
	if (!json_object_object_get_ex(o, "head", NULL))
		head = class == IA_JOB_INA ? window : 0;
	else if (!get_int(o, "head", class == IA_JOB_INA, class == IA_JOB_INA ? IA_MAX_WINDOW : 0,
			  &head))
		return -EBADMSG;
	j->class = class;
	j->head = head;
	j->k = k;
	j->window = window;
	j->created = created;
	j->owner = owner;
	if (!json_object_object_get_ex(o, "algorithm", &f) ||
	    !json_object_is_type(f, json_type_string) ||
	    (algo = ia_algo_parse(json_object_get_string(f))) < 0)
		return -EBADMSG;
	j->algo = algo;
	if (json_object_object_get_ex(o, "cc", &f) &&
	    (!json_object_is_type(f, json_type_string) ||
	     ia_cc_policy_parse(json_object_get_string(f), &j->cc)))
		return -EBADMSG;
	if (!json_object_object_get_ex(o, "state", &f) || !json_object_is_type(f, json_type_string))
		return -EBADMSG;
	s = ia_name_find(NAMES(state_names), json_object_get_string(f));
	if (s < 0)
		return -EBADMSG;
	j->state = s;
	if (!j->plan.sw)
		return -EBADMSG;
	struct ia_problem pb = { .topo = t, .load = j->load };

	memcpy(j->model.blue, j->blue, t->n * sizeof(*j->blue));
	ia_model_eval(&pb, &j->model);
	return 0;
}
