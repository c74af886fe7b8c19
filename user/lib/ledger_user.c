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
 * for at most IA_ULEDGER_LOCK_MS, then the call fails with -EWOULDBLOCK:
 * nothing waits forever on a holder that never lets go. The state records the boot it belongs to: a file from an earlier
 * boot is ignored. Mutations need CAP_NET_ADMIN (in the caller's effective
 * set: the fallback cannot tell which user namespace owns the netns).
 *
 * State file (version 1 had no tail line and jobs as "job ID SLOTS": INA):
 *   inagg-ledger 2
 *   boot <boot id>
 *   max_jobs N
 *   max_slots N
 *   tail N
 *   job ID HEAD CLASS LENT   (one line per job, by increasing id)
 */
#define IA_LEDGER_INTERNAL
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

#include "err.h"
#include "ledger.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

#define ULEDGER_DIR IA_RUN_DIR
#define IA_ULEDGER_LOCK_MS 2000

struct ustate {
	__u32 max_jobs;
	__u32 max_slots;
	__u32 used_jobs;
	__u32 head_slots;
	__u32 tail_slots;
	__u32 lent_slots;
	struct ia_ledger_job *jobs;	/* by increasing id */
	size_t n;
	size_t cap;
};

static int read_boot_id(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	if (!f)
		return -errno;
	if (!fgets(buf, len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

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

static int mkdir_p(const char *dir)
{
	char tmp[PATH_MAX], *p;

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	/* The ledger's own folder: nobody else may create or open files in it. */
	if (mkdir(tmp, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

int ia_uledger_init(struct ia_ledger *l)
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
	mkdir_p(dir);
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

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Takes the lock for a change: returns its fd in *fdp, waiting a bounded time. */
static int ulock(struct ia_ledger *l, int *fdp)
{
	long long deadline = now_ms() + IA_ULEDGER_LOCK_MS;
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
	while (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			close(fd);
			return -errno;
		}
		if (now_ms() >= deadline) {
			close(fd);
			ia_fail(l->err, sizeof(l->err), 0,
				"ledger busy: %s held by another process for %d ms", l->lock,
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
	s->used_jobs++;
	s->head_slots += job->slots;
	s->lent_slots += job->lent;
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

/* The admitted job id, or NULL with the ledger's reason set (-ENOENT). */
static struct ia_ledger_job *ustate_admitted(struct ia_ledger *l, struct ustate *s,
					     __u32 id)
{
	struct ia_ledger_job *j = ustate_find(s, id);

	if (!j)
		ia_ledger_seterr(l, "job not admitted");
	return j;
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
	s->max_jobs = INAGG_DEFAULT_MAX_JOBS;
	s->max_slots = INAGG_DEFAULT_MAX_SLOTS;
	ret = read_boot_id(boot, sizeof(boot));
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
			s->max_jobs = a;
		} else if (sscanf(line, "max_slots %u", &a) == 1) {
			s->max_slots = a;
		} else if (sscanf(line, "tail %u", &a) == 1) {
			s->tail_slots = a;
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

static int usave(struct ia_ledger *l, const struct ustate *s)
{
	char tmp[PATH_MAX + 8], boot[64];
	int ret;
	FILE *f;

	ret = read_boot_id(boot, sizeof(boot));
	if (ret)
		return ret;
	snprintf(tmp, sizeof(tmp), "%s.tmp", l->state);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "inagg-ledger 2\nboot %s\nmax_jobs %u\nmax_slots %u\ntail %u\n", boot,
		s->max_jobs, s->max_slots, s->tail_slots);
	for (size_t i = 0; i < s->n; i++)
		fprintf(f, "job %u %u %u %u\n", s->jobs[i].id, s->jobs[i].slots,
			s->jobs[i].class, s->jobs[i].lent);
	if (fflush(f) || ferror(f)) {
		ret = -errno ? -errno : -EIO;
		fclose(f);
		unlink(tmp);
		return ret;
	}
	if (fclose(f)) {
		ret = -errno;
		unlink(tmp);
		return ret;
	}
	if (rename(tmp, l->state)) {
		ret = -errno;
		unlink(tmp);
		return ret;
	}
	return 0;
}

/* Opens a transaction: checks rights, locks and loads. */
static int ubegin(struct ia_ledger *l, bool write, struct ustate *s, int *fd)
{
	int ret;

	*fd = -1;
	if (write && !has_net_admin())
		return -EPERM;
	if (write) {
		ret = ulock(l, fd);
		if (ret)
			return ret;
	}
	ret = uload(l, s);
	if (ret)
		uunlock(*fd);
	return ret;
}

static int uend(struct ia_ledger *l, struct ustate *s, int fd, int ret, bool save)
{
	if (!ret && save)
		ret = usave(l, s);
	uunlock(fd);
	ustate_free(s);
	return ret;
}

int ia_uledger_get(struct ia_ledger *l, struct ia_ledger_cap *cap)
{
	struct ustate s;
	int fd, ret;

	ret = ubegin(l, false, &s, &fd);
	if (ret)
		return ret;
	cap->max_jobs = s.max_jobs;
	cap->max_slots = s.max_slots;
	cap->used_jobs = s.used_jobs;
	cap->used_slots = s.head_slots + s.tail_slots;
	cap->head_slots = s.head_slots;
	cap->tail_slots = s.tail_slots;
	cap->lent_slots = s.lent_slots;
	return uend(l, &s, fd, 0, false);
}

static int out_of_range(struct ia_ledger *l)
{
	ia_ledger_seterr(l, "integer out of range");
	return -ERANGE;
}

int ia_uledger_set(struct ia_ledger *l, long long max_jobs, long long max_slots)
{
	struct ustate s;
	int fd, ret;

	if (!has_net_admin())
		return -EPERM;
	if (max_jobs > INAGG_JOBS_LIMIT || max_slots > INAGG_SLOTS_LIMIT)
		return out_of_range(l);
	if (max_jobs == IA_LEDGER_KEEP && max_slots == IA_LEDGER_KEEP) {
		ia_ledger_seterr(l, "set needs max_jobs or max_slots");
		return -EINVAL;
	}
	ret = ubegin(l, true, &s, &fd);
	if (ret)
		return ret;
	if (max_jobs != IA_LEDGER_KEEP && max_jobs < s.used_jobs) {
		ia_ledger_seterr(l, "max_jobs below the jobs admitted");
		ret = -EBUSY;
	} else if (max_slots != IA_LEDGER_KEEP && max_slots < s.head_slots + s.tail_slots) {
		ia_ledger_seterr(l, "max_slots below the slots admitted");
		ret = -EBUSY;
	} else {
		if (max_jobs != IA_LEDGER_KEEP)
			s.max_jobs = max_jobs;
		if (max_slots != IA_LEDGER_KEEP)
			s.max_slots = max_slots;
	}
	return uend(l, &s, fd, ret, true);
}

/* The module's policy, then its class checks (inagg_nl.c), in that order. */
int ia_uledger_admit(struct ia_ledger *l, __u32 job, __u32 class, __u32 slots)
{
	struct ia_ledger_job j = { .id = job, .slots = slots, .class = class };
	struct ustate s;
	int fd, ret;

	if (!has_net_admin())
		return -EPERM;
	if (job < INAGG_JOB_ID_MIN || slots > INAGG_SLOTS_LIMIT ||
	    class < INAGG_CLASS_INA || class > INAGG_CLASS_MAX ||
	    (class == INAGG_CLASS_INA && slots < 1))
		return out_of_range(l);
	if (class == INAGG_CLASS_PS && slots) {
		ia_ledger_seterr(l, "a PS job holds no head slots");
		return -EINVAL;
	}
	ret = ubegin(l, true, &s, &fd);
	if (ret)
		return ret;
	if (ustate_find(&s, job)) {
		ia_ledger_seterr(l, "job already admitted");
		ret = -EEXIST;
	} else if (s.used_jobs >= s.max_jobs) {
		ia_ledger_seterr(l, "job limit reached (max_jobs)");
		ret = -ENOSPC;
	} else if (slots > s.max_slots - s.head_slots - s.tail_slots) {
		ia_ledger_seterr(l, "slot limit reached (max_slots)");
		ret = -ENOSPC;
	} else {
		ret = ustate_add(&s, &j);
	}
	return uend(l, &s, fd, ret, true);
}

int ia_uledger_release(struct ia_ledger *l, __u32 job)
{
	struct ia_ledger_job *j;
	struct ustate s;
	int fd, ret = 0;

	if (!has_net_admin())
		return -EPERM;
	if (job < INAGG_JOB_ID_MIN)
		return out_of_range(l);
	ret = ubegin(l, true, &s, &fd);
	if (ret)
		return ret;
	j = ustate_admitted(l, &s, job);
	if (!j) {
		ret = -ENOENT;
	} else {
		s.used_jobs--;
		s.head_slots -= j->slots;
		s.lent_slots -= j->lent;
		memmove(j, j + 1, (s.jobs + s.n - (j + 1)) * sizeof(*j));
		s.n--;
	}
	return uend(l, &s, fd, ret, true);
}

int ia_uledger_job(struct ia_ledger *l, __u32 job, struct ia_ledger_job *out)
{
	struct ia_ledger_job *j;
	struct ustate s;
	int fd, ret = 0;

	if (job < INAGG_JOB_ID_MIN)
		return out_of_range(l);
	ret = ubegin(l, false, &s, &fd);
	if (ret)
		return ret;
	j = ustate_admitted(l, &s, job);
	if (!j)
		ret = -ENOENT;
	else
		*out = *j;
	return uend(l, &s, fd, ret, false);
}

int ia_uledger_list(struct ia_ledger *l, struct ia_ledger_job **jobs, size_t *n)
{
	struct ustate s;
	int fd, ret;

	ret = ubegin(l, false, &s, &fd);
	if (ret)
		return ret;
	*jobs = s.jobs;
	*n = s.n;
	s.jobs = NULL;
	return uend(l, &s, fd, 0, false);
}

/* The tail may shrink at any time: the datapath flushes what it held. */
int ia_uledger_set_tail(struct ia_ledger *l, __u32 slots)
{
	struct ustate s;
	int fd, ret = 0;

	if (!has_net_admin())
		return -EPERM;
	if (slots > INAGG_SLOTS_LIMIT)
		return out_of_range(l);
	ret = ubegin(l, true, &s, &fd);
	if (ret)
		return ret;
	if (slots > s.max_slots - s.head_slots) {
		ia_ledger_seterr(l, "tail beyond the slots the heads leave (max_slots)");
		ret = -ENOSPC;
	} else {
		s.tail_slots = slots;
	}
	return uend(l, &s, fd, ret, true);
}

int ia_uledger_lend(struct ia_ledger *l, __u32 job, __u32 count, bool reclaim)
{
	struct ia_ledger_job *j;
	struct ustate s;
	int fd, ret = 0;

	if (!has_net_admin())
		return -EPERM;
	if (job < INAGG_JOB_ID_MIN || count < 1 || count > INAGG_SLOTS_LIMIT)
		return out_of_range(l);
	ret = ubegin(l, true, &s, &fd);
	if (ret)
		return ret;
	j = ustate_admitted(l, &s, job);
	if (!j) {
		ret = -ENOENT;
	} else if (j->class != INAGG_CLASS_INA) {
		ia_ledger_seterr(l, "a PS job holds no head slots");
		ret = -EINVAL;
	} else if (!reclaim && count > j->slots - j->lent) {
		ia_ledger_seterr(l, "lend beyond the job's head slots not lent");
		ret = -ERANGE;
	} else if (reclaim && count > j->lent) {
		ia_ledger_seterr(l, "reclaim beyond the job's lent slots");
		ret = -ERANGE;
	} else {
		j->lent = reclaim ? j->lent - count : j->lent + count;
		s.lent_slots = reclaim ? s.lent_slots - count : s.lent_slots + count;
	}
	return uend(l, &s, fd, ret, true);
}
