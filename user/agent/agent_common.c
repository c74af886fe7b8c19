// SPDX-License-Identifier: GPL-2.0
/*
 * What every request of the switch agent needs (agent.h), as bpftool's
 * common.c: the record of its jobs, integer fields, the switch's maps.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "files.h"
#include "xdp.h"

/* ---- the record ---- */

int ia_agent_save(struct ia_agent *a)
{
	json_object *root;
	const char *s;
	int ret;

	if (!*a->state_path)
		return 0;
	root = json_object_new_object();
	json_object_object_add(root, "switch", json_object_new_string(a->sw));
	json_object_object_add(root, "boot_id", json_object_new_string(a->boot_id));
	json_object_object_add(root, "epoch", json_object_new_int64(a->epoch));
	json_object_object_add(root, "jobs", json_object_get(a->jobs));
	s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
	/* A crash leaves the old record or the new, never half. */
	ret = ia_write_atomic(a->state_path, s, strlen(s), 0600, true);
	json_object_put(root);
	return ret;
}

json_object *ia_agent_job(struct ia_agent *a, uint32_t id, bool create)
{
	json_object *j;
	char key[16];

	snprintf(key, sizeof(key), "%u", id);
	if (json_object_object_get_ex(a->jobs, key, &j))
		return j;
	if (!create)
		return NULL;
	j = json_object_new_object();
	json_object_object_add(a->jobs, key, j);
	return j;
}

/* Forgets a job once it holds nothing here. */
void ia_agent_job_tidy(struct ia_agent *a, uint32_t id)
{
	json_object *j = ia_agent_job(a, id, false), *v;
	char key[16];

	if (!j)
		return;
	if (json_object_object_get_ex(j, "admitted", &v) && json_object_get_boolean(v))
		return;
	if (json_object_object_get_ex(j, "push", &v) && v)
		return;
	snprintf(key, sizeof(key), "%u", id);
	json_object_object_del(a->jobs, key);
}

/* ---- request fields ---- */

int ia_agent_num(json_object *o, const char *key, uint64_t max, uint64_t *out, bool need)
{
	json_object *v;
	int64_t n;

	if (!json_object_object_get_ex(o, key, &v))
		return need ? -EINVAL : 0;
	if (!json_object_is_type(v, json_type_int))
		return -EINVAL;
	n = json_object_get_int64(v);
	if (n < 0 || (uint64_t)n > max)
		return -ERANGE;
	*out = n;
	return 0;
}

/* ---- the maps ---- */

/* The switch's maps: opened once (opening parses the whole BPF object). */
struct ia_xdp *ia_agent_maps(struct ia_agent *a, bool create, int *err, char *why,
			     size_t whylen)
{
	*err = 0;
	/* Kept while its maps are the ones pinned: a switch attached again has others. */
	if (a->xdp && ia_xdp_current(a->xdp, a->sw))
		return a->xdp;
	ia_agent_maps_drop(a);
	*err = create ? ia_xdp_open(a->sw, &a->xdp, why, whylen) :
			ia_xdp_open_existing(a->sw, &a->xdp, why, whylen);
	if (*err)
		a->xdp = NULL;
	return a->xdp;
}

/* A kept handle that failed: the switch may have been set up again since. */
void ia_agent_maps_drop(struct ia_agent *a)
{
	ia_xdp_close(a->xdp);
	a->xdp = NULL;
}
