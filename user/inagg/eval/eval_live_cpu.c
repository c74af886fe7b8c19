// SPDX-License-Identifier: GPL-2.0
/*
 * How much of the host's CPU other work took during a live run (eval_live.h):
 * the experiment is CPU-bound on a shared host, so a compile of someone else
 * slows whichever scheme runs meanwhile. The host's busy time (/proc/stat,
 * stolen time included) less the experiment's own: this process and its
 * children (the PSs and workers, waited for by the end of a run), the daemon
 * and its agents, and the kernel's softirq threads, where the datapath runs
 * when the senders do not (other network tests are kept out by the lock
 * every live test takes). Without IRQ time accounting (this host) a softirq
 * run in a task's context is that task's time, so /proc/stat's softirq
 * column is not the datapath's alone and is not subtracted.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include "eval_live.h"

/* Nanoseconds all threads of process pid ran (schedstat); -1 if it is gone. */
static long long proc_ns(pid_t pid)
{
	char path[320];
	long long ns = 0, t;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		FILE *f;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", pid, e->d_name);
		f = fopen(path, "r");
		if (f && fscanf(f, "%lld", &t) == 1)
			ns += t;
		if (f)
			fclose(f);
	}
	closedir(d);
	return ns;
}

/* Process pid's parent and name (comm); -1 if it is gone. */
static int proc_info(pid_t pid, pid_t *ppid, char *comm, size_t len)
{
	char path[64], buf[512], *p, *q;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	q = strchr(buf, '(');
	/* "pid (comm) S ppid ...": the name may hold spaces and parentheses. */
	if (!p || !q || sscanf(p + 1, " %*c %d", ppid) != 1)
		return -1;
	snprintf(comm, len, "%.*s", (int)(p - q - 1), q + 1);
	return 0;
}

static long long tv_ns(const struct timeval *tv)
{
	return tv->tv_sec * 1000000000ll + tv->tv_usec * 1000ll;
}

void ia_live_cpu_snap(const struct ia_live *L, struct ia_live_cpu *c)
{
	long long v[8] = { 0 }, ours = 0;
	struct rusage self, kids;
	struct dirent *e;
	DIR *d;
	FILE *f = fopen("/proc/stat", "r");
	long hz = sysconf(_SC_CLK_TCK);

	memset(c, 0, sizeof(*c));
	/* cpu user nice system idle iowait irq softirq steal */
	if (!f || fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2],
			 &v[3], &v[4], &v[5], &v[6], &v[7]) != 8) {
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	hz = hz > 0 ? hz : 100;
	for (int i = 0; i < 8; i++)
		c->total_ns += v[i] * (1000000000ll / hz);
	/* Stolen by the hypervisor counts as taken: the experiment did not get it. */
	c->busy_ns = c->total_ns - (v[3] + v[4]) * (1000000000ll / hz);
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	ours = tv_ns(&self.ru_utime) + tv_ns(&self.ru_stime) + tv_ns(&kids.ru_utime) +
	       tv_ns(&kids.ru_stime);
	/*
	 * Alive: our children not waited for yet (the daemon among them), the
	 * daemon's children (its agents), the softirq threads.
	 */
	d = opendir("/proc");
	while (d && (e = readdir(d))) {
		pid_t pid, ppid = 0;
		char comm[32];
		long long ns;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = atoi(e->d_name);
		if (proc_info(pid, &ppid, comm, sizeof(comm)))
			continue;
		if (ppid != getpid() && (L->daemon <= 0 || ppid != L->daemon) &&
		    strncmp(comm, "ksoftirqd/", 10))
			continue;
		ns = proc_ns(pid);
		if (ns > 0)
			ours += ns;
	}
	if (d)
		closedir(d);
	c->ours_ns = ours;
	c->ok = true;
}

double ia_live_cpu_other(const struct ia_live_cpu *a, const struct ia_live_cpu *b)
{
	long long total = b->total_ns - a->total_ns;
	long long other = (b->busy_ns - a->busy_ns) - (b->ours_ns - a->ours_ns);

	if (!a->ok || !b->ok || total <= 0)
		return 0;
	return other > 0 ? (double)other / total : 0;
}
