/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal to the ledger client (ledger.h): the handle and its backend's
 * operations. ledger.c opens a handle in the ledger's namespace with the
 * kernel backend (ledger_nl.c) or the user-space one (ledger_user.c) and
 * calls the backend through its table; the backends call nothing of
 * ledger.c. Both apply the same rules: the module compiles
 * include/inagg/ledger_rules.h, the user-space backend too.
 */
#ifndef IA_LEDGER_INT_H
#define IA_LEDGER_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include <inagg/ledger_rules.h>

#include "err.h"
#include "ledger.h"

/* The client's own range check (the module's is its netlink policy's). */
#define IA_LEDGER_WHY_RANGE "integer out of range"

struct mnl_socket;

/* Every operation: 0 or a negative errno, the reason by ia_ledger_seterr(). */
struct ia_ledger_ops {
	enum ia_ledger_backend backend;
	/* In the ledger's namespace; -ENOENT: this backend has no ledger there. */
	int (*open)(struct ia_ledger *l);
	void (*close)(struct ia_ledger *l);
	int (*get)(struct ia_ledger *l, struct ia_ledger_cap *cap);
	/* Limits in range or IA_LEDGER_KEEP. */
	int (*set)(struct ia_ledger *l, long long max_jobs, long long max_slots);
	/* with_class false: an old client's request (INA, no class attribute). */
	int (*admit)(struct ia_ledger *l, __u32 job, __u32 class, __u32 slots, bool with_class);
	int (*release)(struct ia_ledger *l, __u32 job);
	int (*set_tail)(struct ia_ledger *l, __u32 slots);
	int (*lend)(struct ia_ledger *l, __u32 job, __u32 count, bool reclaim);
	int (*job)(struct ia_ledger *l, __u32 job, struct ia_ledger_job *out);
	int (*list)(struct ia_ledger *l, struct ia_ledger_job **jobs, size_t *n);
};

extern const struct ia_ledger_ops ia_ledger_kernel_ops;
extern const struct ia_ledger_ops ia_ledger_user_ops;

struct ia_ledger {
	const struct ia_ledger_ops *ops;
	/* The caller's error buffer, for the one call in progress (ledger.c). */
	char *err;
	size_t errlen;
	/* kernel */
	struct mnl_socket *nl;
	__u32 portid;
	__u32 seq;
	__u16 family;
	/* user */
	char state[PATH_MAX];
	char lock[PATH_MAX];
};

static inline void ia_ledger_seterr(struct ia_ledger *l, const char *msg)
{
	ia_fail(l->err, l->errlen, 0, "%s", msg ? msg : "");
}

#endif
