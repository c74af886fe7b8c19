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
#include "ledger.h"

const char help_ledger[] =
	"The capacity ledger of a switch: how many jobs it may aggregate at once and\n"
	"how many aggregator slots it has, and the jobs admitted against them.\n"
	"  show                       backend, capacity, use and admitted jobs\n"
	"  set [jobs N] [slots N]     change the capacity; refused (EBUSY) below what\n"
	"                             is admitted\n"
	"  admit job ID slots N       admit a job, all or nothing; refused (ENOSPC)\n"
	"                             when a limit would be exceeded, EEXIST if admitted\n"
	"  release job ID             release a job and its slots\n"
	"Every command takes:\n"
	"  netns NAME|PATH            the switch's namespace (/run/netns/NAME or a path\n"
	"                             such as /proc/PID/ns/net); default: the current\n"
	"  backend auto|kernel|user   auto (default; also $INAGG_LEDGER) takes inagg.ko\n"
	"                             when it is loaded, else the user-space ledger\n"
	"Changes need CAP_NET_ADMIN. JSON (-j): {backend, max_jobs, max_slots,\n"
	"used_jobs, used_slots, jobs: [{id, slots}]}; changes add {job, slots}.\n";

struct ledger_args {
	const char *netns;
	enum ia_ledger_backend backend;
	long long jobs;		/* set: max_jobs */
	long long slots;	/* set: max_slots; admit: the job's slots */
	long long job;		/* admit, release: the job id */
};

/* Whether key is one of the space-separated words of list. */
static bool has_key(const char *list, const char *key)
{
	size_t len = strlen(key);
	const char *p;

	for (p = list; (p = strstr(p, key)); p += len)
		if ((p == list || p[-1] == ' ') && (p[len] == ' ' || !p[len]))
			return true;
	return false;
}

/*
 * Parses "KEY VALUE" pairs; allowed lists the keys beyond netns and backend.
 * Returns 0, or the exit status after reporting.
 */
static int parse_args(const char *cmd, int argc, char **argv, const char *allowed,
		      struct ledger_args *a)
{
	int i;

	*a = (struct ledger_args){ .jobs = IA_LEDGER_KEEP, .slots = IA_LEDGER_KEEP,
				   .job = -1 };
	for (i = 1; i < argc; i += 2) {
		const char *key = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t v;

		if (!has_key("netns backend", key) && !has_key(allowed, key))
			return out_err("ledger %s: unknown argument '%s'; try 'inagg ledger -h'",
				       cmd, key);
		if (!val)
			return out_err("ledger %s: '%s' needs a value", cmd, key);
		if (!strcmp(key, "netns")) {
			a->netns = val;
		} else if (!strcmp(key, "backend")) {
			if (!strcmp(val, "auto"))
				a->backend = IA_LEDGER_AUTO;
			else if (!strcmp(val, "kernel"))
				a->backend = IA_LEDGER_KERNEL;
			else if (!strcmp(val, "user"))
				a->backend = IA_LEDGER_USER;
			else
				return out_err("ledger %s: unknown backend '%s' (auto, kernel, user)",
					       cmd, val);
		} else {
			if (parse_u64(key, val, &v))
				return 1;
			if (v > UINT32_MAX)
				return out_err("%s: invalid value '%s': more than %u", key, val,
					       UINT32_MAX);
			if (!strcmp(key, "jobs"))
				a->jobs = v;
			else if (!strcmp(key, "slots"))
				a->slots = v;
			else
				a->job = v;
		}
	}
	return 0;
}

static int open_ledger(const char *cmd, const struct ledger_args *a, struct ia_ledger **l)
{
	int ret = ia_ledger_open(l, a->backend, a->netns);

	if (ret == -ENOENT && a->backend == IA_LEDGER_KERNEL && !a->netns)
		return out_err("ledger %s: the inagg module is not loaded", cmd);
	if (ret)
		return out_err("ledger %s: cannot open the ledger%s%s: %s", cmd,
			       a->netns ? " of " : "", a->netns ? a->netns : "", strerror(-ret));
	return 0;
}

static int failed(const char *cmd, struct ia_ledger *l, int ret)
{
	const char *msg = ia_ledger_errmsg(l);
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
	struct ia_ledger_job *jobs;
	struct ia_ledger_cap cap;
	size_t i, n;
	int ret;

	ret = ia_ledger_get(l, &cap);
	if (!ret)
		ret = ia_ledger_list(l, &jobs, &n);
	if (ret)
		return failed(cmd, l, ret);
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

static int cmd_ledger_show(int argc, char **argv)
{
	struct ia_ledger *l;
	struct ledger_args a;

	if (parse_args("show", argc, argv, "", &a) || open_ledger("show", &a, &l))
		return 1;
	out_begin();
	return print_ledger("show", l);
}

static int cmd_ledger_set(int argc, char **argv)
{
	struct ia_ledger *l;
	struct ledger_args a;
	int ret;

	if (parse_args("set", argc, argv, "jobs slots", &a))
		return 1;
	if (a.jobs == IA_LEDGER_KEEP && a.slots == IA_LEDGER_KEEP)
		return out_err("ledger set: give jobs N and/or slots N");
	if (open_ledger("set", &a, &l))
		return 1;
	ret = ia_ledger_set(l, a.jobs, a.slots);
	if (ret)
		return failed("set", l, ret);
	out_begin();
	return print_ledger("set", l);
}

static int cmd_ledger_admit(int argc, char **argv)
{
	struct ia_ledger *l;
	struct ledger_args a;
	int ret;

	if (parse_args("admit", argc, argv, "job slots", &a))
		return 1;
	if (a.job < 0 || a.slots == IA_LEDGER_KEEP)
		return out_err("ledger admit: give job ID and slots N");
	if (open_ledger("admit", &a, &l))
		return 1;
	ret = ia_ledger_admit(l, a.job, a.slots);
	if (ret)
		return failed("admit", l, ret);
	out_begin();
	out_uint("job", "admitted job %llu", a.job);
	out_uint("slots", " with %llu slots\n", a.slots);
	return print_ledger("admit", l);
}

static int cmd_ledger_release(int argc, char **argv)
{
	struct ia_ledger_job job;
	struct ia_ledger *l;
	struct ledger_args a;
	int ret;

	if (parse_args("release", argc, argv, "job", &a))
		return 1;
	if (a.job < 0)
		return out_err("ledger release: give job ID");
	if (open_ledger("release", &a, &l))
		return 1;
	/* The slots it held, for the report; a race only loses that detail. */
	if (ia_ledger_job(l, a.job, &job))
		job.slots = 0;
	ret = ia_ledger_release(l, a.job);
	if (ret)
		return failed("release", l, ret);
	out_begin();
	out_uint("job", "released job %llu", a.job);
	out_uint("slots", " (%llu slots)\n", job.slots);
	return print_ledger("release", l);
}

static const struct cmd ledger_cmds[] = {
	{ "show", cmd_ledger_show, "ledger show [netns NAME] [backend B]", help_ledger },
	{ "set", cmd_ledger_set, "ledger set [jobs N] [slots N] [netns NAME] [backend B]",
	  help_ledger },
	{ "admit", cmd_ledger_admit, "ledger admit job ID slots N [netns NAME] [backend B]",
	  help_ledger },
	{ "release", cmd_ledger_release, "ledger release job ID [netns NAME] [backend B]",
	  help_ledger },
	{ NULL }
};

int cmd_ledger(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("Usage:\n");
			for (i = 0; ledger_cmds[i].name; i++)
				printf("       inagg [-j] %s\n", ledger_cmds[i].synopsis);
			fputs(help_ledger, stdout);
			return 0;
		}
	}
	return cmd_dispatch(ledger_cmds, "inagg ledger", argc - 1, argv + 1);
}
