// SPDX-License-Identifier: GPL-2.0
/*
 * User-space ledger: the fallback where inagg.ko is not loaded, with the
 * module's semantics (include/inagg/netlink.h).
 *
 * One ledger per network namespace, named by the namespace's cookie
 * (SO_NETNS_COOKIE, never reused while the machine is up), kept in
 * $INAGG_LEDGER_DIR (default /run/inagg, made 0700) as two files:
 *   ledger-<cookie>.lock   flock(2) exclusive to change; mode 0600, so that
 *                          only who may change the ledger can open it and
 *                          hold it (flock needs only a read descriptor);
 *   ledger-<cookie>        the state, replaced whole by rename(2).
 * A change takes the lock, reads the state, changes it and writes it back,
 * so concurrent threads and processes see one ledger and it outlives them;
 * a reader reads the state alone (a rename is atomic). The lock is waited
 * for at most IA_ULEDGER_LOCK_MS without a change being saved meanwhile,
 * then the call fails with -EWOULDBLOCK: nothing waits forever on a holder
 * that never lets go, and a queue of busy writers is not mistaken for one. The state records
 * the boot it belongs to: a file from an earlier boot is ignored. Mutations
 * need CAP_NET_ADMIN (in the caller's effective set: the fallback cannot
 * tell which user namespace owns the netns).
 *
 * State file (version 1 had no tail line and jobs as "job ID SLOTS": INA):
 *   inagg-ledger 2
 *   boot <boot id>
 *   max_jobs N
 *   max_slots N
 *   tail N
 *   job ID HEAD CLASS LENT   (one line per job, by increasing id)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>

#include "clock.h"
#include "err.h"
#include "files.h"
#include "ledger_int.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

#define ULEDGER_DIR IA_RUN_DIR

struct ustate {
	struct inagg_counts c;		/* kept by the rules of ledger_rules.h */
	struct ia_ledger_job *jobs;	/* by increasing id */
	size_t n;
	size_t cap;
};

/* Identifies the current network namespace for the life of the machine. */
static int netns_id(unsigned long long *id)
{
	socklen_t len = sizeof(*id);
	struct stat st;
	int fd, ret = 0;

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		if (!getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, id, &len)) {
			close(fd);
			return 0;
		}
		close(fd);
	}
	/* Kernels before 5.14: the inode, which a later namespace may reuse. */
	if (stat("/proc/thread-self/ns/net", &st))
		ret = -errno;
	else
		*id = 1ULL << 63 | st.st_ino;
	return ret;
}

static int user_open(struct ia_ledger *l)
{
	const char *dir = getenv("INAGG_LEDGER_DIR");
	unsigned long long id;
	int ret;

	if (!dir || !*dir)
		dir = ULEDGER_DIR;
	ret = netns_id(&id);
	if (ret)
		return ret;
	/* A reader without rights to create the folder sees the defaults. */
	ia_mkdir_p(dir, 0700);
	snprintf(l->state, sizeof(l->state), "%s/ledger-%llx", dir, id);
	snprintf(l->lock, sizeof(l->lock), "%s/ledger-%llx.lock", dir, id);
	return 0;
}

static bool has_net_admin(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[CAP_TO_INDEX(CAP_NET_ADMIN)].effective & CAP_TO_MASK(CAP_NET_ADMIN);
}

/* The state file's identity: it changes whenever a change is saved (rename). */
static void state_stamp(const struct ia_ledger *l, struct timespec *ts, ino_t *ino)
{
	struct stat st;

	if (stat(l->state, &st)) {
		memset(ts, 0, sizeof(*ts));
		*ino = 0;
		return;
	}
	*ts = st.st_mtim;
	*ino = st.st_ino;
}

/*
 * Takes the lock for a change: returns its fd in *fdp. It waits at most
 * IA_ULEDGER_LOCK_MS without progress: while other writers keep saving changes
 * (many admitters at once) the wait goes on, so only a holder that sits on the
 * lock makes it fail.
 */
static int ulock(struct ia_ledger *l, int *fdp)
{
	long long deadline = ia_now_ms() + IA_ULEDGER_LOCK_MS;
	struct timespec seen, cur;
	ino_t seen_ino, cur_ino;
	struct stat st;
	int fd;

	fd = open(l->lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	/* A lock file of an older version, readable by all: make it ours alone. */
	if (!fstat(fd, &st) && (st.st_mode & 077) && fchmod(fd, 0600)) {
		close(fd);
		return -errno;
	}
	state_stamp(l, &seen, &seen_ino);
	while (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			close(fd);
			return -errno;
		}
		state_stamp(l, &cur, &cur_ino);
		if (cur_ino != seen_ino || cur.tv_sec != seen.tv_sec ||
		    cur.tv_nsec != seen.tv_nsec) {
			seen = cur;
			seen_ino = cur_ino;
			deadline = ia_now_ms() + IA_ULEDGER_LOCK_MS;
		}
		if (ia_now_ms() >= deadline) {
			close(fd);
			ia_fail(l->err, l->errlen, 0,
				"ledger busy: %s held by another process for %d ms without a change", l->lock,
				IA_ULEDGER_LOCK_MS);
			return -EWOULDBLOCK;
		}
		usleep(5000);
	}
	*fdp = fd;
	return 0;
}

static void uunlock(int fd)
{
	if (fd >= 0)
		close(fd);	/* releases the flock */
}

static int ustate_add(struct ustate *s, const struct ia_ledger_job *job)
{
	struct ia_ledger_job *v;
	size_t i;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;

		v = realloc(s->jobs, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->jobs = v;
		s->cap = cap;
	}
	for (i = s->n; i > 0 && s->jobs[i - 1].id > job->id; i--)
		s->jobs[i] = s->jobs[i - 1];
	s->jobs[i] = *job;
	s->n++;
	s->c.used_jobs++;
	s->c.head_slots += job->slots;
	s->c.lent_slots += job->lent;
	return 0;
}

static struct ia_ledger_job *ustate_find(struct ustate *s, __u32 id)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->jobs[mid].id == id)
			return &s->jobs[mid];
		if (s->jobs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void ustate_free(struct ustate *s)
{
	free(s->jobs);
	memset(s, 0, sizeof(*s));
}

/* Reads the state; a missing file, or one of an earlier boot, is a new ledger. */
static int uload(struct ia_ledger *l, struct ustate *s)
{
	char boot[64], fboot[64], line[128];
	struct ia_ledger_job j;
	unsigned int ver, a;
	int ret = 0;
	FILE *f;

	memset(s, 0, sizeof(*s));
	s->c.max_jobs = INAGG_DEFAULT_MAX_JOBS;
	s->c.max_slots = INAGG_DEFAULT_MAX_SLOTS;
	ret = ia_read_boot_id(boot, sizeof(boot));
	if (ret)
		return ret;
	f = fopen(l->state, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	if (!fgets(line, sizeof(line), f) || sscanf(line, "inagg-ledger %u", &ver) != 1 ||
	    ver < 1 || ver > 2 || !fgets(line, sizeof(line), f) ||
	    sscanf(line, "boot %63s", fboot) != 1)
		goto corrupt;
	if (strcmp(fboot, boot))
		goto out;	/* an earlier boot's ledger */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "max_jobs %u", &a) == 1) {
			s->c.max_jobs = a;
		} else if (sscanf(line, "max_slots %u", &a) == 1) {
			s->c.max_slots = a;
		} else if (sscanf(line, "tail %u", &a) == 1) {
			s->c.tail_slots = a;
		} else if (sscanf(line, "job %u %u %u %u", &j.id, &j.slots, &j.class,
				  &j.lent) == 4 ||
			   (ver == 1 && sscanf(line, "job %u %u", &j.id, &j.slots) == 2 &&
			    (j.class = INAGG_CLASS_INA, j.lent = 0, true))) {
			ret = ustate_add(s, &j);
			if (ret)
				goto out;
		} else {
			goto corrupt;
		}
	}
	goto out;
corrupt:
	ia_ledger_seterr(l, "user-space ledger state file is corrupt");
	ret = -EUCLEAN;
out:
	fclose(f);
	if (ret)
		ustate_free(s);
	return ret;
}

/* The state replaced whole: a reader sees the old or the new (not synced, as ever). */
static int usave(struct ia_ledger *l, const struct ustate *s)
{
	char boot[64], *text = NULL;
	size_t len = 0;
	int ret;
	FILE *f;

	ret = ia_read_boot_id(boot, sizeof(boot));
	if (ret)
		return ret;
	f = open_memstream(&text, &len);
	if (!f)
		return -errno;
	fprintf(f, "inagg-ledger 2\nboot %s\nmax_jobs %u\nmax_slots %u\ntail %u\n", boot,
		s->c.max_jobs, s->c.max_slots, s->c.tail_slots);
	for (size_t i = 0; i < s->n; i++)
		fprintf(f, "job %u %u %u %u\n", s->jobs[i].id, s->jobs[i].slots,
			s->jobs[i].class, s->jobs[i].lent);
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	ret = ia_write_atomic(l->state, text, len, 0666, false);
	free(text);
	return ret;
}

/* A transaction on the state: one change or one read. */
struct utx {
	struct ustate s;
	int fd;				/* the lock held by a change, else -1 */
	struct ia_ledger_job *job;	/* the admitted job ubegin() was asked for */
};

/* Returns ret, leaving the rule's reason as the ledger's. */
static int ufail(struct ia_ledger *l, int ret, const struct inagg_why *why)
{
	if (ret)
		ia_ledger_seterr(l, why->msg);
	return ret;
}

/*
 * Opens a transaction, checking in the module's order: rights (a change),
 * the caller's range check, then locks (a change) and loads; given a job id,
 * finds that job admitted (-ENOENT). On success uend() closes it.
 */
static int ubegin(struct ia_ledger *l, struct utx *tx, bool write, bool in_range,
		  const __u32 *job)
{
	struct inagg_why why;
	int ret;

	tx->fd = -1;
	tx->job = NULL;
	if (write && !has_net_admin())
		return -EPERM;
	if (!in_range || (job && *job < INAGG_JOB_ID_MIN)) {
		ia_ledger_seterr(l, IA_LEDGER_WHY_RANGE);
		return -ERANGE;
	}
	if (write) {
		ret = ulock(l, &tx->fd);
		if (ret)
			return ret;
	}
	ret = uload(l, &tx->s);
	if (ret) {
		uunlock(tx->fd);
		return ret;
	}
	if (job) {
		tx->job = ustate_find(&tx->s, *job);
		if (!tx->job) {
			ret = ufail(l, inagg_rule_not_admitted(&why), &why);
			ustate_free(&tx->s);
			uunlock(tx->fd);
			return ret;
		}
	}
	return 0;
}

/* Closes a transaction: a change that succeeded is saved. */
static int uend(struct ia_ledger *l, struct utx *tx, int ret)
{
	if (!ret && tx->fd >= 0)
		ret = usave(l, &tx->s);
	uunlock(tx->fd);
	ustate_free(&tx->s);
	return ret;
}

static int user_get(struct ia_ledger *l, struct ia_ledger_cap *cap)
{
	struct utx tx;
	int ret;

	ret = ubegin(l, &tx, false, true, NULL);
	if (ret)
		return ret;
	cap->max_jobs = tx.s.c.max_jobs;
	cap->max_slots = tx.s.c.max_slots;
	cap->used_jobs = tx.s.c.used_jobs;
	cap->used_slots = inagg_counts_used(&tx.s.c);
	cap->head_slots = tx.s.c.head_slots;
	cap->tail_slots = tx.s.c.tail_slots;
	cap->lent_slots = tx.s.c.lent_slots;
	return uend(l, &tx, 0);
}

static int user_set(struct ia_ledger *l, long long max_jobs, long long max_slots)
{
	struct inagg_counts *c;
	struct inagg_why why;
	struct utx tx;
	int ret;

	ret = ubegin(l, &tx, true,
		     max_jobs <= INAGG_JOBS_LIMIT && max_slots <= INAGG_SLOTS_LIMIT, NULL);
	if (ret)
		return ret;
	c = &tx.s.c;
	/* As the module: a limit not given stays as it is. */
	ret = inagg_rule_set_some(max_jobs != IA_LEDGER_KEEP, max_slots != IA_LEDGER_KEEP, &why);
	if (!ret) {
		if (max_jobs == IA_LEDGER_KEEP)
			max_jobs = c->max_jobs;
		if (max_slots == IA_LEDGER_KEEP)
			max_slots = c->max_slots;
		ret = inagg_rule_set_cap(c, max_jobs, max_slots, &why);
	}
	if (!ret) {
		c->max_jobs = max_jobs;
		c->max_slots = max_slots;
	}
	return uend(l, &tx, ufail(l, ret, &why));
}

/* The module's request checks (inagg_nl.c), then its rules, in that order. */
static int user_admit(struct ia_ledger *l, __u32 job, __u32 class, __u32 slots, bool with_class)
{
	struct ia_ledger_job j = { .id = job, .slots = slots, .class = class };
	struct inagg_why why;
	struct utx tx;
	int ret;

	ret = ubegin(l, &tx, true,
		     job >= INAGG_JOB_ID_MIN && slots <= INAGG_SLOTS_LIMIT &&
		     class >= INAGG_CLASS_INA && class <= INAGG_CLASS_MAX &&
		     (class != INAGG_CLASS_INA || slots >= 1), NULL);
	if (ret)
		return ret;
	ret = inagg_rule_ps_head(class, slots, &why);
	if (!ret)
		ret = inagg_rule_admit(&tx.s.c, slots, ustate_find(&tx.s, job), &why);
	if (!ret)
		return uend(l, &tx, ustate_add(&tx.s, &j));
	return uend(l, &tx, ufail(l, ret, &why));
}

static int user_release(struct ia_ledger *l, __u32 job)
{
	struct ia_ledger_job *j;
	struct utx tx;
	int ret;

	ret = ubegin(l, &tx, true, true, &job);
	if (ret)
		return ret;
	j = tx.job;
	inagg_counts_release(&tx.s.c, &(struct inagg_job_counts){ j->class, j->slots, j->lent });
	memmove(j, j + 1, (tx.s.jobs + tx.s.n - (j + 1)) * sizeof(*j));
	tx.s.n--;
	return uend(l, &tx, 0);
}

static int user_job(struct ia_ledger *l, __u32 job, struct ia_ledger_job *out)
{
	struct utx tx;
	int ret;

	ret = ubegin(l, &tx, false, true, &job);
	if (ret)
		return ret;
	*out = *tx.job;
	return uend(l, &tx, 0);
}

static int user_list(struct ia_ledger *l, struct ia_ledger_job **jobs, size_t *n)
{
	struct utx tx;
	int ret;

	ret = ubegin(l, &tx, false, true, NULL);
	if (ret)
		return ret;
	*jobs = tx.s.jobs;
	*n = tx.s.n;
	tx.s.jobs = NULL;
	return uend(l, &tx, 0);
}

static int user_set_tail(struct ia_ledger *l, __u32 slots)
{
	struct inagg_why why;
	struct utx tx;
	int ret;

	ret = ubegin(l, &tx, true, slots <= INAGG_SLOTS_LIMIT, NULL);
	if (ret)
		return ret;
	ret = inagg_rule_set_tail(&tx.s.c, slots, &why);
	if (!ret)
		tx.s.c.tail_slots = slots;
	return uend(l, &tx, ufail(l, ret, &why));
}

static int user_lend(struct ia_ledger *l, __u32 job, __u32 count, bool reclaim)
{
	struct inagg_job_counts jc;
	struct inagg_why why;
	struct utx tx;
	int ret;

	ret = ubegin(l, &tx, true, count >= 1 && count <= INAGG_SLOTS_LIMIT, &job);
	if (ret)
		return ret;
	jc = (struct inagg_job_counts){ tx.job->class, tx.job->slots, tx.job->lent };
	ret = inagg_rule_lend(&jc, count, reclaim, &why);
	if (!ret) {
		inagg_counts_lend(&tx.s.c, &jc, count, reclaim);
		tx.job->lent = jc.lent;
	}
	return uend(l, &tx, ufail(l, ret, &why));
}

static void user_close(struct ia_ledger *l)
{
}

const struct ia_ledger_ops ia_ledger_user_ops = {
	.backend = IA_LEDGER_USER,
	.open = user_open,
	.close = user_close,
	.get = user_get,
	.set = user_set,
	.admit = user_admit,
	.release = user_release,
	.set_tail = user_set_tail,
	.lend = user_lend,
	.job = user_job,
	.list = user_list,
};
