/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ledger client: the per-switch capacity ledger of a network namespace.
 *
 * Two backends with the same semantics:
 *  - kernel: the inagg.ko module over generic netlink (include/inagg/netlink.h);
 *  - user: where the module is absent, a state file per network namespace
 *    under $INAGG_LEDGER_DIR (default /run/inagg), changed under flock(2)
 *    so that every process sees one ledger and survives restarts.
 * ia_ledger_open() picks the kernel backend when the "inagg" family
 * exists in the namespace, unless $INAGG_LEDGER (kernel|user) says otherwise,
 * and ia_ledger_backend() says which one is in use.
 *
 * Every call returns 0 or a negative errno, the same for both backends:
 * -ENOSPC a limit would be exceeded (jobs, or heads plus tail beyond the
 * slots), -EEXIST job already admitted, -ENOENT job not admitted, -EBUSY
 * capacity below what is admitted, -ERANGE a value out of range (or a lend
 * or reclaim beyond the job's slots), -EINVAL nothing to set (or a head for
 * a PS job, or a PS job lending), -EPERM no CAP_NET_ADMIN; the user-space
 * backend adds -EWOULDBLOCK: its lock was held by another process for
 * IA_ULEDGER_LOCK_MS without any change being saved meanwhile.
 * Each call but open and close takes the caller's error buffer (err.h):
 * emptied, then given the reason of a failure where there is one (the
 * kernel's extack message, or the user-space backend's same words); "" when
 * the errno says it all. A handle serves one thread at a time; open one per
 * thread.
 */
#ifndef IA_LEDGER_H
#define IA_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include <inagg/netlink.h>

enum ia_ledger_backend {
	IA_LEDGER_AUTO,
	IA_LEDGER_KERNEL,
	IA_LEDGER_USER,
};

struct ia_ledger;

struct ia_ledger_cap {
	__u32 max_jobs;
	__u32 max_slots;
	__u32 used_jobs;
	__u32 used_slots;	/* head_slots + tail_slots */
	__u32 head_slots;	/* the INA jobs' heads */
	__u32 tail_slots;	/* the tail pool */
	__u32 lent_slots;	/* head slots lent to the tail */
};

struct ia_ledger_job {
	__u32 id;
	__u32 slots;		/* head slots, 0 for a PS job */
	__u32 class;		/* enum inagg_job_class */
	__u32 lent;		/* head slots lent to the tail */
};

/* For ia_ledger_set(): leave this limit as it is. */
#define IA_LEDGER_KEEP (-1LL)
/* The user-space backend's longest wait for its lock without progress. */
#define IA_ULEDGER_LOCK_MS 2000

/*
 * Opens the ledger of a network namespace: netns NULL for the caller's, a
 * name ("ia-sw1", i.e. /run/netns/ia-sw1) or a path ("/proc/PID/ns/net").
 * want IA_LEDGER_AUTO chooses as described above; KERNEL fails with
 * -ENOENT where the module is not loaded.
 */
int ia_ledger_open(struct ia_ledger **lp, enum ia_ledger_backend want, const char *netns);
void ia_ledger_close(struct ia_ledger *l);

enum ia_ledger_backend ia_ledger_backend(const struct ia_ledger *l);
const char *ia_ledger_backend_name(enum ia_ledger_backend b);

int ia_ledger_get(struct ia_ledger *l, struct ia_ledger_cap *cap, char *err, size_t errlen);
/* Each limit is a value in range, or IA_LEDGER_KEEP. */
int ia_ledger_set(struct ia_ledger *l, long long max_jobs, long long max_slots, char *err,
		  size_t errlen);
int ia_ledger_admit(struct ia_ledger *l, __u32 job, __u32 slots, char *err, size_t errlen);
/* An INA job with a head of slots, or a PS job (slots 0: none). */
int ia_ledger_admit_class(struct ia_ledger *l, __u32 job, enum inagg_job_class class, __u32 slots,
			  char *err, size_t errlen);
int ia_ledger_release(struct ia_ledger *l, __u32 job, char *err, size_t errlen);
/* The tail pool's size; lend / reclaim count head slots of an INA job. */
int ia_ledger_set_tail(struct ia_ledger *l, __u32 slots, char *err, size_t errlen);
int ia_ledger_lend(struct ia_ledger *l, __u32 job, __u32 count, char *err, size_t errlen);
int ia_ledger_reclaim(struct ia_ledger *l, __u32 job, __u32 count, char *err, size_t errlen);
int ia_ledger_job(struct ia_ledger *l, __u32 job, struct ia_ledger_job *out, char *err,
		  size_t errlen);
/* The admitted jobs by increasing id, in *jobs (free() it), *n of them. */
int ia_ledger_list(struct ia_ledger *l, struct ia_ledger_job **jobs, size_t *n, char *err,
		   size_t errlen);

#endif /* IA_LEDGER_H */
