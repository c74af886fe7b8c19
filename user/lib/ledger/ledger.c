// SPDX-License-Identifier: GPL-2.0
/*
 * Ledger client: backend choice, namespaces, and each call through the
 * backend's table (ledger_int.h): the kernel's in ledger_nl.c, the
 * user-space one in ledger_user.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ledger_int.h"

enum ia_ledger_backend ia_ledger_backend(const struct ia_ledger *l)
{
	return l->ops->backend;
}

const char *ia_ledger_backend_name(enum ia_ledger_backend b)
{
	switch (b) {
	case IA_LEDGER_KERNEL:
		return "kernel";
	case IA_LEDGER_USER:
		return "user";
	default:
		return "auto";
	}
}

/* The caller's buffer, for the one call in progress (ia_ledger_seterr()). */
static void call_begin(struct ia_ledger *l, char *err, size_t errlen)
{
	l->err = err;
	l->errlen = err ? errlen : 0;
	if (l->errlen)
		err[0] = '\0';
}

static int call_end(struct ia_ledger *l, int ret)
{
	l->err = NULL;
	l->errlen = 0;
	return ret;
}

struct open_args {
	struct ia_ledger *l;
	enum ia_ledger_backend want;
};

/* The kernel's ledger where the module is loaded (unless the user backend is wanted). */
static int open_here(struct open_args *a)
{
	struct ia_ledger *l = a->l;
	int ret;

	if (a->want != IA_LEDGER_USER) {
		l->ops = &ia_ledger_kernel_ops;
		ret = l->ops->open(l);
		if (!ret || a->want == IA_LEDGER_KERNEL)
			return ret;
	}
	l->ops = &ia_ledger_user_ops;
	return l->ops->open(l);
}

int ia_ledger_open(struct ia_ledger **lp, enum ia_ledger_backend want, const char *netns)
{
	struct open_args a = { .want = want };
	int self = -1, target = -1, ret;
	const char *env = getenv("INAGG_LEDGER");
	char path[PATH_MAX];

	if (want == IA_LEDGER_AUTO && env) {
		if (!strcmp(env, "kernel"))
			a.want = IA_LEDGER_KERNEL;
		else if (!strcmp(env, "user"))
			a.want = IA_LEDGER_USER;
	}
	a.l = calloc(1, sizeof(*a.l));
	if (!a.l)
		return -ENOMEM;

	if (!netns || !*netns) {
		ret = open_here(&a);
		goto out;
	}
	if (strchr(netns, '/'))
		snprintf(path, sizeof(path), "%s", netns);
	else
		snprintf(path, sizeof(path), "/run/netns/%s", netns);
	target = open(path, O_RDONLY | O_CLOEXEC);
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (target < 0 || self < 0) {
		ret = -errno;
		goto out;
	}
	if (setns(target, CLONE_NEWNET)) {
		ret = -errno;
		goto out;
	}
	ret = open_here(&a);
	if (setns(self, CLONE_NEWNET) && !ret) {
		/* Cannot happen for a thread that could enter target. */
		ret = -errno;
	}
out:
	if (target >= 0)
		close(target);
	if (self >= 0)
		close(self);
	if (ret) {
		ia_ledger_close(a.l);
		return ret;
	}
	*lp = a.l;
	return 0;
}

void ia_ledger_close(struct ia_ledger *l)
{
	if (!l)
		return;
	if (l->ops)
		l->ops->close(l);
	free(l);
}

int ia_ledger_get(struct ia_ledger *l, struct ia_ledger_cap *cap, char *err, size_t errlen)
{
	call_begin(l, err, errlen);
	memset(cap, 0, sizeof(*cap));
	return call_end(l, l->ops->get(l, cap));
}

int ia_ledger_set(struct ia_ledger *l, long long max_jobs, long long max_slots, char *err,
		  size_t errlen)
{
	call_begin(l, err, errlen);
	if (max_jobs > UINT32_MAX || max_slots > UINT32_MAX ||
	    (max_jobs < 0 && max_jobs != IA_LEDGER_KEEP) ||
	    (max_slots < 0 && max_slots != IA_LEDGER_KEEP)) {
		ia_ledger_seterr(l, IA_LEDGER_WHY_RANGE);
		return call_end(l, -ERANGE);
	}
	return call_end(l, l->ops->set(l, max_jobs, max_slots));
}

int ia_ledger_admit(struct ia_ledger *l, __u32 job, __u32 slots, char *err, size_t errlen)
{
	call_begin(l, err, errlen);
	return call_end(l, l->ops->admit(l, job, INAGG_CLASS_INA, slots, false));
}

int ia_ledger_admit_class(struct ia_ledger *l, __u32 job, enum inagg_job_class class, __u32 slots,
			  char *err, size_t errlen)
{
	call_begin(l, err, errlen);
	return call_end(l, l->ops->admit(l, job, class, slots, true));
}

int ia_ledger_set_tail(struct ia_ledger *l, __u32 slots, char *err, size_t errlen)
{
	call_begin(l, err, errlen);
	return call_end(l, l->ops->set_tail(l, slots));
}

int ia_ledger_lend(struct ia_ledger *l, __u32 job, __u32 count, char *err, size_t errlen)
{
	call_begin(l, err, errlen);
	return call_end(l, l->ops->lend(l, job, count, false));
}

int ia_ledger_reclaim(struct ia_ledger *l, __u32 job, __u32 count, char *err, size_t errlen)
{
	call_begin(l, err, errlen);
	return call_end(l, l->ops->lend(l, job, count, true));
}

int ia_ledger_release(struct ia_ledger *l, __u32 job, char *err, size_t errlen)
{
	call_begin(l, err, errlen);
	return call_end(l, l->ops->release(l, job));
}

int ia_ledger_job(struct ia_ledger *l, __u32 job, struct ia_ledger_job *out, char *err,
		  size_t errlen)
{
	call_begin(l, err, errlen);
	return call_end(l, l->ops->job(l, job, out));
}

int ia_ledger_list(struct ia_ledger *l, struct ia_ledger_job **jobs, size_t *n, char *err,
		   size_t errlen)
{
	call_begin(l, err, errlen);
	*jobs = NULL;
	*n = 0;
	return call_end(l, l->ops->list(l, jobs, n));
}
