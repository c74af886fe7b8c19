// SPDX-License-Identifier: GPL-2.0
/* The switch agent's ledger requests: setup, admit, release, admitted, room (agent.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "err.h"
#include "ledger.h"

static int get_u32(json_object *req, const char *key, uint32_t *out)
{
	json_object *v;
	int64_t n;

	if (!json_object_object_get_ex(req, key, &v) || !json_object_is_type(v, json_type_int))
		return -EINVAL;
	n = json_object_get_int64(v);
	if (n < 0 || n > UINT32_MAX)
		return -ERANGE;
	*out = n;
	return 0;
}

#define NEED_U32(req, key, out)                                                   \
	do {                                                                       \
		if (get_u32(req, key, out))                                        \
			return ia_agent_err(EINVAL, "\"%s\": need an integer", key); \
	} while (0)

/* why: the failed call's error buffer ("" when the errno says it all). */
static json_object *ledger_fail(struct ia_ledger *l, int ret, const char *why)
{
	json_object *r = ia_agent_err(ret, "%s", *why ? why : strerror(-ret));

	ia_ledger_close(l);
	return r;
}

int ia_agent_ledger_open(struct ia_agent *a, struct ia_ledger **l)
{
	return ia_ledger_open(l, IA_LEDGER_AUTO, *a->netns ? a->netns : NULL);
}

/*
 * Every ledger request's start: its one integer field (key, NULL for none)
 * and the ledger opened. NULL then, else the error reply to return.
 */
json_object *ia_agent_ledger(struct ia_agent *a, json_object *req, const char *key,
			     uint32_t *val, struct ia_ledger **l)
{
	int ret;

	if (key && get_u32(req, key, val))
		return ia_agent_err(EINVAL, "\"%s\": need an integer", key);
	ret = ia_agent_ledger_open(a, l);
	return ret ? ia_agent_err(ret, "ledger: %s", strerror(-ret)) : NULL;
}

/*
 * The tail pool is all the memory no head holds (FlexINA: PS jobs use what
 * no job was given), so it follows every admission and release.
 */
static int tail_follow(struct ia_ledger *l, uint32_t more_heads, char *why, size_t whylen)
{
	struct ia_ledger_cap cap;
	int ret = ia_ledger_get(l, &cap, why, whylen);

	if (ret)
		return ret;
	if ((uint64_t)cap.head_slots + more_heads > cap.max_slots)
		return -ENOSPC;	/* why: "" from the get */
	return ia_ledger_set_tail(l, cap.max_slots - cap.head_slots - more_heads, why, whylen);
}

/*
 * The limits come from the controller's topology: the tail is emptied first
 * (it may always shrink) so only heads can keep the slots from being set.
 */
json_object *ia_agent_setup(struct ia_agent *a, json_object *req)
{
	char why[IA_ERRLEN] = "";
	uint32_t jobs, slots;
	struct ia_ledger *l;
	json_object *r;
	int ret;

	NEED_U32(req, "jobs", &jobs);
	if ((r = ia_agent_ledger(a, req, "slots", &slots, &l)))
		return r;
	if (jobs > INAGG_JOBS_LIMIT)
		jobs = INAGG_JOBS_LIMIT;
	ret = ia_ledger_set_tail(l, 0, why, sizeof(why));
	if (!ret)
		ret = ia_ledger_set(l, jobs, slots, why, sizeof(why));
	if (!ret)
		ret = tail_follow(l, 0, why, sizeof(why));
	if (ret)
		return ledger_fail(l, ret, why);
	ia_ledger_close(l);
	return ia_agent_ok();
}

json_object *ia_agent_admit(struct ia_agent *a, json_object *req)
{
	uint32_t id, class, slots;
	char why[IA_ERRLEN] = "";
	struct ia_ledger_job e;
	struct ia_ledger *l;
	json_object *j;
	int ret;

	NEED_U32(req, "job", &id);
	NEED_U32(req, "class", &class);
	if (class != INAGG_CLASS_INA && class != INAGG_CLASS_PS)
		return ia_agent_err(EINVAL, "class: %u or %u", INAGG_CLASS_INA, INAGG_CLASS_PS);
	if ((j = ia_agent_ledger(a, req, "slots", &slots, &l)))
		return j;
	/* A retried request whose first try got through: the same admission is no error. */
	if (!ia_ledger_job(l, id, &e, NULL, 0) && e.class == class && e.slots == slots) {
		ia_ledger_close(l);
		goto record;
	}
	/* The tail gives the head its room first; it takes it back if admission fails. */
	ret = tail_follow(l, slots, why, sizeof(why));
	if (ret && ret != -ENOSPC)
		return ledger_fail(l, ret, why);
	ret = ia_ledger_admit_class(l, id, class, slots, why, sizeof(why));
	if (ret) {
		json_object *r = ia_agent_err(ret, "%s", *why ? why : strerror(-ret));

		tail_follow(l, 0, NULL, 0);
		ia_ledger_close(l);
		return r;
	}
	ret = tail_follow(l, 0, why, sizeof(why));
	if (ret)
		return ledger_fail(l, ret, why);
	ia_ledger_close(l);
record:
	j = ia_agent_job(a, id, true);
	json_object_object_add(j, "admitted", json_object_new_boolean(1));
	json_object_object_add(j, "class", json_object_new_int(class));
	json_object_object_add(j, "slots", json_object_new_int64(slots));
	ret = ia_agent_save(a);
	return ret ? ia_agent_err(ret, "record: %s", strerror(-ret)) : ia_agent_ok();
}

json_object *ia_agent_release(struct ia_agent *a, json_object *req)
{
	char why[IA_ERRLEN] = "";
	struct ia_ledger *l;
	json_object *j;
	uint32_t id;
	int ret;

	if ((j = ia_agent_ledger(a, req, "job", &id, &l)))
		return j;
	ret = ia_ledger_release(l, id, why, sizeof(why));
	if (!ret)
		ret = tail_follow(l, 0, why, sizeof(why));
	if (ret && ret != -ENOENT)
		return ledger_fail(l, ret, why);
	ia_ledger_close(l);
	j = ia_agent_job(a, id, false);
	if (j) {
		json_object_object_add(j, "admitted", json_object_new_boolean(0));
		ia_agent_job_tidy(a, id);
		if (ia_agent_save(a))
			return ia_agent_err(EIO, "record: %s", strerror(errno));
	}
	return ret ? ia_agent_err(ENOENT, "job %u not admitted", id) : ia_agent_ok();
}

json_object *ia_agent_admitted(struct ia_agent *a, json_object *req)
{
	char why[IA_ERRLEN] = "";
	struct ia_ledger_job e;
	struct ia_ledger *l;
	json_object *r;
	uint32_t id;
	int ret;

	if ((r = ia_agent_ledger(a, req, "job", &id, &l)))
		return r;
	ret = ia_ledger_job(l, id, &e, why, sizeof(why));
	if (ret && ret != -ENOENT)
		return ledger_fail(l, ret, why);
	ia_ledger_close(l);
	return ia_agent_ok_with("admitted", json_object_new_boolean(!ret));
}

/* Room for one more job with a head of slots (the tail yields). */
json_object *ia_agent_room(struct ia_agent *a, json_object *req)
{
	char why[IA_ERRLEN] = "";
	struct ia_ledger_cap cap;
	struct ia_ledger *l;
	json_object *r;
	uint32_t slots;
	int ret;

	if ((r = ia_agent_ledger(a, req, "slots", &slots, &l)))
		return r;
	ret = ia_ledger_get(l, &cap, why, sizeof(why));
	if (ret)
		return ledger_fail(l, ret, why);
	ia_ledger_close(l);
	return ia_agent_ok_with("room", json_object_new_boolean(
				  cap.used_jobs < cap.max_jobs &&
				  (uint64_t)cap.head_slots + slots <= cap.max_slots));
}
