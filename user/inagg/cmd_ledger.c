// SPDX-License-Identifier: GPL-2.0
/*
 * inagg ledger { show | set | admit | release }: the capacity ledger of a
 * switch (a network namespace), kept by inagg.ko or, where the module is
 * not loaded, by libinagg's user-space fallback.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "err.h"
#include "ledger.h"

struct ledger_args {
	const char *netns;
	int backend;		/* enum ia_ledger_backend */
	long long jobs;		/* set: max_jobs */
	long long slots;	/* set: max_slots; admit: the job's slots */
	long long job;		/* admit, release: the job id */
};

static const struct ledger_args ledger_defaults = {
	.jobs = IA_LEDGER_KEEP, .slots = IA_LEDGER_KEEP, .job = -1,
};

/* In the order of enum ia_ledger_backend. */
static const char *const backend_names[] = { "auto", "kernel", "user", NULL };

#define L struct ledger_args
#define LEDGER_COMMON								\
	OPT_STR(0, "netns", "NS", L, netns, 0,					\
		"the switch's namespace: a name under /run/netns or a path such as "	\
		"/proc/PID/ns/net (default: the current one)"),			\
	OPT_ENUM('B', "backend", "B", L, backend, backend_names, 0,		\
		 "auto (also $INAGG_LEDGER) takes inagg.ko when it is loaded, else the " \
		 "user-space ledger")
#define LEDGER_JOB OPT_INT('J', "job", "ID", L, job, INAGG_JOB_ID_MIN, UINT32_MAX, \
			   OPT_REQUIRED, "job id")
#define LEDGER_ABOUT \
	"The capacity ledger of a switch: how many jobs it may aggregate at once and\n" \
	"how many aggregator slots it has, and the jobs admitted against them.\n"
#define LEDGER_NOTES \
	"Changes need CAP_NET_ADMIN. JSON (-j): {backend, max_jobs, max_slots,\n" \
	"used_jobs, used_slots, jobs: [{id, slots}]}; changes add {job, slots}.\n"

static const struct opt show_opts[] = { LEDGER_COMMON, OPT_END };

const struct opt_cmd ledger_show_cmd = {
	.opts = show_opts,
	.defaults = &ledger_defaults,
	.size = sizeof(ledger_defaults),
	.about = LEDGER_ABOUT "Shows the backend, the capacity, its use and the admitted jobs.\n",
	.notes = LEDGER_NOTES,
};

static const struct opt set_opts[] = {
	OPT_INT(0, "jobs", "N", L, jobs, 0, INAGG_JOBS_LIMIT, OPT_NODEF,
		"jobs admitted at once at most"),
	OPT_INT(0, "slots", "N", L, slots, 0, INAGG_SLOTS_LIMIT, OPT_NODEF,
		"aggregator slots at most"),
	LEDGER_COMMON,
	OPT_END
};

const struct opt_cmd ledger_set_cmd = {
	.opts = set_opts,
	.defaults = &ledger_defaults,
	.size = sizeof(ledger_defaults),
	.about = LEDGER_ABOUT "Changes the capacity (give --jobs, --slots or both); refused (EBUSY)\n"
		 "below what is admitted.\n",
	.notes = LEDGER_NOTES,
};

static const struct opt admit_opts[] = {
	LEDGER_JOB,
	OPT_INT(0, "slots", "N", L, slots, 1, INAGG_SLOTS_LIMIT, OPT_REQUIRED,
		"aggregator slots of the job"),
	LEDGER_COMMON,
	OPT_END
};

const struct opt_cmd ledger_admit_cmd = {
	.opts = admit_opts,
	.defaults = &ledger_defaults,
	.size = sizeof(ledger_defaults),
	.about = LEDGER_ABOUT "Admits a job, all or nothing; refused (ENOSPC) when a limit would be\n"
		 "exceeded, EEXIST if admitted.\n",
	.notes = LEDGER_NOTES,
};

static const struct opt release_opts[] = { LEDGER_JOB, LEDGER_COMMON, OPT_END };

const struct opt_cmd ledger_release_cmd = {
	.opts = release_opts,
	.defaults = &ledger_defaults,
	.size = sizeof(ledger_defaults),
	.about = LEDGER_ABOUT "Releases a job and its slots.\n",
	.notes = LEDGER_NOTES,
};
#undef L

static int open_ledger(const char *cmd, const struct ledger_args *a, struct ia_ledger **l)
{
	int ret = ia_ledger_open(l, (enum ia_ledger_backend)a->backend, a->netns);

	if (ret == -ENOENT && a->backend == IA_LEDGER_KERNEL && !a->netns)
		return out_err("ledger %s: the inagg module is not loaded", cmd);
	if (ret)
		return out_err("ledger %s: cannot open the ledger%s%s: %s", cmd,
			       a->netns ? " of " : "", a->netns ? a->netns : "", strerror(-ret));
	return 0;
}

/* why: the failed call's error buffer ("" when the errno says it all). */
static int failed(const char *cmd, struct ia_ledger *l, int ret, const char *why)
{
	const char *msg = why;
	int status;

	if (ret == -EPERM)
		msg = "CAP_NET_ADMIN is needed";
	status = out_err("ledger %s: %s%s%s", cmd, strerror(-ret), *msg ? ": " : "", msg);
	ia_ledger_close(l);
	return status;
}

/* Prints the backend, the capacity and the jobs into the current document. */
static int print_ledger(const char *cmd, struct ia_ledger *l)
{
	char why[IA_ERRLEN] = "";
	struct ia_ledger_job *jobs;
	struct ia_ledger_cap cap;
	size_t i, n;
	int ret;

	ret = ia_ledger_get(l, &cap, why, sizeof(why));
	if (!ret)
		ret = ia_ledger_list(l, &jobs, &n, why, sizeof(why));
	if (ret)
		return failed(cmd, l, ret, why);
	out_str("backend", "backend  %s\n", ia_ledger_backend_name(ia_ledger_backend(l)));
	out_uint("used_jobs", "jobs     %llu", cap.used_jobs);
	out_uint("max_jobs", "/%llu\n", cap.max_jobs);
	out_uint("used_slots", "slots    %llu", cap.used_slots);
	out_uint("max_slots", "/%llu\n", cap.max_slots);
	out_arr_open("jobs");
	for (i = 0; i < n; i++) {
		out_obj_open(NULL);
		out_uint("id", "job %-10llu", jobs[i].id);
		out_uint("slots", " slots %llu\n", jobs[i].slots);
		out_obj_close();
	}
	out_arr_close();
	free(jobs);
	ia_ledger_close(l);
	return out_end();
}

/* A command's start: its options into *a, the ledger opened into *l; 1 when said why not. */
static int start(const struct opt_cmd *c, const char *cmd, int argc, char **argv,
		 struct ledger_args *a, struct ia_ledger **l)
{
	*a = ledger_defaults;
	if (opt_parse(c, argv[0], argc, argv, a, NULL, NULL) || open_ledger(cmd, a, l))
		return 1;
	return 0;
}

int cmd_ledger_show(int argc, char **argv)
{
	struct ia_ledger *l;
	struct ledger_args a;

	if (start(&ledger_show_cmd, "show", argc, argv, &a, &l))
		return 1;
	out_begin();
	return print_ledger("show", l);
}

int cmd_ledger_set(int argc, char **argv)
{
	char why[IA_ERRLEN] = "";
	struct ia_ledger *l;
	struct ledger_args a;
	int ret;

	a = ledger_defaults;
	if (opt_parse(&ledger_set_cmd, argv[0], argc, argv, &a, NULL, NULL))
		return 1;
	if (a.jobs == IA_LEDGER_KEEP && a.slots == IA_LEDGER_KEEP)
		return out_err("ledger set: give --jobs N, --slots N or both");
	if (open_ledger("set", &a, &l))
		return 1;
	ret = ia_ledger_set(l, a.jobs, a.slots, why, sizeof(why));
	if (ret)
		return failed("set", l, ret, why);
	out_begin();
	return print_ledger("set", l);
}

int cmd_ledger_admit(int argc, char **argv)
{
	char why[IA_ERRLEN] = "";
	struct ia_ledger *l;
	struct ledger_args a;
	int ret;

	if (start(&ledger_admit_cmd, "admit", argc, argv, &a, &l))
		return 1;
	ret = ia_ledger_admit(l, a.job, a.slots, why, sizeof(why));
	if (ret)
		return failed("admit", l, ret, why);
	out_begin();
	out_uint("job", "admitted job %llu", a.job);
	out_uint("slots", " with %llu slots\n", a.slots);
	return print_ledger("admit", l);
}

int cmd_ledger_release(int argc, char **argv)
{
	char why[IA_ERRLEN] = "";
	struct ia_ledger_job job;
	struct ia_ledger *l;
	struct ledger_args a;
	int ret;

	if (start(&ledger_release_cmd, "release", argc, argv, &a, &l))
		return 1;
	/* The slots it held, for the report; a race only loses that detail. */
	if (ia_ledger_job(l, a.job, &job, NULL, 0))
		job.slots = 0;
	ret = ia_ledger_release(l, a.job, why, sizeof(why));
	if (ret)
		return failed("release", l, ret, why);
	out_begin();
	out_uint("job", "released job %llu", a.job);
	out_uint("slots", " (%llu slots)\n", job.slots);
	return print_ledger("release", l);
}
