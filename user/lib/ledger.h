/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ledger client: the per-switch capacity ledger of a network namespace.
 *
 * Two backends with the same semantics:
 *  - kernel: the inagg.ko module over generic netlink (include/inagg/netlink.h);
 *  - user: where the module is absent, a state file per network namespace
 *    under $INAGG_LEDGER_DIR (default /run/inagg), changed under flock(2)
 *    so that every process sees one ledger and survives restarts.
 * inagg_ledger_open() picks the kernel backend when the "inagg" family
 * exists in the namespace, unless $INAGG_LEDGER (kernel|user) says otherwise,
 * and inagg_ledger_backend() says which one is in use.
 *
 * Every call returns 0 or a negative errno, the same for both backends:
 * -ENOSPC a limit would be exceeded, -EEXIST job already admitted, -ENOENT
 * job not admitted, -EBUSY capacity below what is admitted, -ERANGE a value
 * out of range, -EINVAL nothing to set, -EPERM no CAP_NET_ADMIN.
 * inagg_ledger_errmsg() then gives the reason (the kernel's extack message).
 * A handle serves one thread at a time; open one per thread.
 */
#ifndef INAGG_LEDGER_H
#define INAGG_LEDGER_H

#include <stddef.h>
#include <linux/types.h>

#include <inagg/netlink.h>

enum inagg_ledger_backend {
	INAGG_LEDGER_AUTO,
	INAGG_LEDGER_KERNEL,
	INAGG_LEDGER_USER,
};

struct inagg_ledger;

struct inagg_ledger_cap {
	__u32 max_jobs;
	__u32 max_slots;
	__u32 used_jobs;
	__u32 used_slots;
};

struct inagg_ledger_job {
	__u32 id;
	__u32 slots;
};

/* For inagg_ledger_set(): leave this limit as it is. */
#define INAGG_LEDGER_KEEP (-1LL)

/*
 * Opens the ledger of a network namespace: netns NULL for the caller's, a
 * name ("ia-sw1", i.e. /run/netns/ia-sw1) or a path ("/proc/PID/ns/net").
 * want INAGG_LEDGER_AUTO chooses as described above; KERNEL fails with
 * -ENOENT where the module is not loaded.
 */
int inagg_ledger_open(struct inagg_ledger **lp, enum inagg_ledger_backend want,
		      const char *netns);
void inagg_ledger_close(struct inagg_ledger *l);

enum inagg_ledger_backend inagg_ledger_backend(const struct inagg_ledger *l);
const char *inagg_ledger_backend_name(enum inagg_ledger_backend b);
/* The reason of the last failure, "" if none was given. */
const char *inagg_ledger_errmsg(const struct inagg_ledger *l);

int inagg_ledger_get(struct inagg_ledger *l, struct inagg_ledger_cap *cap);
/* Each limit is a value in range, or INAGG_LEDGER_KEEP. */
int inagg_ledger_set(struct inagg_ledger *l, long long max_jobs, long long max_slots);
int inagg_ledger_admit(struct inagg_ledger *l, __u32 job, __u32 slots);
int inagg_ledger_release(struct inagg_ledger *l, __u32 job);
int inagg_ledger_job(struct inagg_ledger *l, __u32 job, struct inagg_ledger_job *out);
/* The admitted jobs by increasing id, in *jobs (free() it), *n of them. */
int inagg_ledger_list(struct inagg_ledger *l, struct inagg_ledger_job **jobs, size_t *n);

/*
 * Internal: shared by ledger.c (common part, kernel backend) and
 * ledger_user.c (user-space backend). Not for callers.
 */
#ifdef INAGG_LEDGER_INTERNAL
#include <limits.h>

struct mnl_socket;

struct inagg_ledger {
	enum inagg_ledger_backend backend;
	char err[256];
	/* kernel */
	struct mnl_socket *nl;
	__u32 portid;
	__u32 seq;
	__u16 family;
	/* user */
	char state[PATH_MAX];
	char lock[PATH_MAX];
};

void ledger_seterr(struct inagg_ledger *l, const char *msg);
/* Runs in the ledger's namespace: finds the state files. */
int uledger_init(struct inagg_ledger *l);
int uledger_get(struct inagg_ledger *l, struct inagg_ledger_cap *cap);
int uledger_set(struct inagg_ledger *l, long long max_jobs, long long max_slots);
int uledger_admit(struct inagg_ledger *l, __u32 job, __u32 slots);
int uledger_release(struct inagg_ledger *l, __u32 job);
int uledger_job(struct inagg_ledger *l, __u32 job, struct inagg_ledger_job *out);
int uledger_list(struct inagg_ledger *l, struct inagg_ledger_job **jobs, size_t *n);
#endif

#endif /* INAGG_LEDGER_H */
