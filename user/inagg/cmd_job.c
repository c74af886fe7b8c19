// SPDX-License-Identifier: GPL-2.0
/* inagg job submit | list | show | window | end: jobs, through inaggd. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cc.h"
#include "ctl.h"
#include "rpc.h"

#include "inagg/maps.h"

struct job_args {
	long k, window, job, head;
	int algo, jclass, cc;
	bool no_tail;
	json_object *workers;
	const char *sock;
};

static const struct job_args job_defaults = { .k = -1, .algo = -1, .jclass = -1, .cc = -1,
					       .sock = IA_CTL_SOCK };

/* As inaggd's request spells them (user/lib/job.h, docs/memory.md). */
static const char *const class_names[] = { "ina", "ps", "auto", NULL };

/* -W SWITCH=COUNT,...: the workers taking part, per switch. */
static int parse_workers(const char *opt, const char *arg, void *dst)
{
	json_object *w = json_object_new_object();
	char *list = strdup(arg), *save, *item;
	long v;

	if (!w || !list) {
		free(list);
		json_object_put(w);
		return out_err("out of memory");
	}
	if (list_items_ok(opt, arg)) {
		free(list);
		json_object_put(w);
		return 1;
	}
	for (item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');

		if (!eq || eq == item || parse_long(opt, eq + 1, 0, INT_MAX, &v)) {
			free(list);
			json_object_put(w);
			return eq && eq != item ? 1 : out_err("%s: need SWITCH=COUNT,...", opt);
		}
		*eq = '\0';
		/* A second count of a switch replaced the first, in silence. */
		if (json_object_object_get_ex(w, item, NULL)) {
			out_err("%s: switch '%s' given twice", opt, item);
			free(list);
			json_object_put(w);
			return 1;
		}
		json_object_object_add(w, item, json_object_new_int64(v));
	}
	free(list);
	json_object_put(*(json_object **)dst);
	*(json_object **)dst = w;
	return 0;
}

#define JOB_SOCKET OPT_STR('S', "socket", "PATH", struct job_args, sock, 0, "inaggd's socket")
#define JOB_ID(f) OPT_INT('J', "job", "ID", struct job_args, job, 1, UINT32_MAX - 1, \
			  (f) | OPT_NODEF, "job id")

/* What inaggd places jobs with: every algorithm but brute (exhaustive, small trees). */
static const enum ia_algo job_algos[] = {
	IA_ALGO_SMC, IA_ALGO_TOP, IA_ALGO_MAX, IA_ALGO_LEVEL, IA_ALGO_ALL_RED, IA_ALGO_ALL_BLUE,
	IA_ALGO_SMC_NAIVE,
};

static const char *job_algo_name(int i)
{
	return ia_algo_name(job_algos[i]);
}

static const struct opt submit_opts[] = {
	OPT_INT('k', "k", "K", struct job_args, k, 0, INT_MAX, OPT_REQUIRED,
		"blue switches at most"),
	OPT_ENUMF('a', "algo", "ALGO", struct job_args, algo, job_algo_name,
		  ARRAY_SIZE(job_algos), OPT_NODEF, "placement algorithm (default: inaggd's, smc)"),
	OPT_INT('w', "window", "W", struct job_args, window, 1, IA_MAX_WINDOW, OPT_NODEF,
		"chunks in flight x 2: workers keep half of it in flight (default: the "
		"head, else inaggd's, 128)"),
	OPT_ENUM(0, "class", "CLASS", struct job_args, jclass, class_names, OPT_NODEF,
		 "ina: a head on each blue switch, refused without memory; ps: no head, "
		 "the switches' tails; auto: ina if memory allows, else ps (default)"),
	OPT_INT(0, "head", "SLOTS", struct job_args, head, 1, IA_MAX_WINDOW, OPT_NODEF,
		"aggregator slots of an INA job on each blue switch (default: the window)"),
	OPT_ENUMF(0, "cc", "POLICY", struct job_args, cc, cli_cc_name, IA_CC__COUNT, OPT_NODEF,
		  "its workers' window policy (docs/cc.md; default: inaggd's, fixed)"),
	OPT_FLAG(0, "no-tail", struct job_args, no_tail, 0,
		 "a PS job without tails: it never uses switch memory (NetPack's selective INA)"),
	JOB_ID(0),
	OPT_FUNC('W', "workers", "LIST", struct job_args, workers, parse_workers, NULL, 0,
		 "SWITCH=COUNT,... workers taking part (default: all of the topology's)"),
	JOB_SOCKET,
	OPT_END
};

const struct opt_cmd job_submit_cmd = {
	.opts = submit_opts,
	.defaults = &job_defaults,
	.size = sizeof(job_defaults),
	.about = "Submits a job to inaggd: placement, admission on every blue switch (an INA\n"
		 "job's head there; a PS job's tails on its path), map pushes. Without -J, the\n"
		 "job gets the smallest free id. docs/memory.md tells the classes apart.\n",
};

static const struct opt list_opts[] = {
	JOB_SOCKET,
	OPT_END
};

const struct opt_cmd job_list_cmd = {
	.opts = list_opts,
	.defaults = &job_defaults,
	.size = sizeof(job_defaults),
	.about = "Lists inaggd's jobs.\n",
};

static const struct opt one_opts[] = {
	JOB_ID(OPT_REQUIRED),
	JOB_SOCKET,
	OPT_END
};

const struct opt_cmd job_show_cmd = {
	.opts = one_opts,
	.defaults = &job_defaults,
	.size = sizeof(job_defaults),
	.about = "Shows one job: placement, workers, destination, per-link model.\n",
};

static const struct opt window_opts[] = {
	JOB_ID(OPT_REQUIRED),
	OPT_INT('w', "window", "W", struct job_args, window, 0, IA_MAX_WINDOW,
		OPT_REQUIRED | OPT_NODEF, "chunks its senders keep in flight now (0: the worker window)"),
	JOB_SOCKET,
	OPT_END
};

const struct opt_cmd job_window_cmd = {
	.opts = window_opts,
	.defaults = &job_defaults,
	.size = sizeof(job_defaults),
	.about = "Tells inaggd the window an INA job's senders use now (their congestion\n"
		 "control's): the head slots it has not needed for a while are lent to the\n"
		 "tail, and taken back as soon as the window grows (docs/memory.md).\n",
};

const struct opt_cmd job_end_cmd = {
	.opts = one_opts,
	.defaults = &job_defaults,
	.size = sizeof(job_defaults),
	.about = "Ends a job: configuration removed, admissions released.\n",
};

static void print_job(json_object *j)
{
	json_object *arr;

	printf("job %s: %s, %s head %s, %s k=%s window %s (workers %s in flight), cc %s, blue:",
	       rpc_str(j, "job"), rpc_str(j, "state"), rpc_str(j, "class"), rpc_str(j, "head"),
	       rpc_str(j, "algorithm"), rpc_str(j, "k"), rpc_str(j, "window"),
	       rpc_str(j, "worker_window"), rpc_str(j, "cc"));
	if (json_object_object_get_ex(j, "blue", &arr))
		for (size_t i = 0; i < json_object_array_length(arr); i++)
			printf(" %s", json_object_get_string(json_object_array_get_idx(arr, i)));
	/* Where a PS job may aggregate: the tails of these switches. */
	if (json_object_object_get_ex(j, "tails", &arr) && json_object_array_length(arr)) {
		printf(", tails:");
		for (size_t i = 0; i < json_object_array_length(arr); i++)
			printf(" %s", json_object_get_string(json_object_array_get_idx(arr, i)));
	}
	printf("\n");
	if (json_object_object_get_ex(j, "failed", &arr))
		printf("  FAILED: %s\n", json_object_get_string(arr));
	if (!json_object_object_get_ex(j, "congestion", &arr))
		return;
	printf("  model congestion %s, %s workers\n", rpc_str(j, "congestion"),
	       rpc_str(j, "nworkers"));
	if (json_object_object_get_ex(j, "destination", &arr))
		printf("  destination %s (%s), results down to %s, %s senders per chunk\n",
		       rpc_str(arr, "address"), rpc_str(arr, "netns"), rpc_str(arr, "down"),
		       rpc_str(arr, "senders"));
	if (json_object_object_get_ex(j, "links", &arr))
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			json_object *l = json_object_array_get_idx(arr, i), *lent;

			printf("  %-8s %-4s %4s senders in, %4s messages up per chunk",
			       rpc_str(l, "switch"), rpc_str(l, "role"), rpc_str(l, "members"),
			       rpc_str(l, "messages"));
			/* A blue link: how much of the head is lent to the tail now. */
			if (json_object_object_get_ex(l, "lent", &lent))
				printf(", %s head slots lent", json_object_get_string(lent));
			printf("\n");
		}
	/* The agents of its switches (docs/remote.md): which is slow or unreachable. */
	if (json_object_object_get_ex(j, "routers", &arr))
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			json_object *r = json_object_array_get_idx(arr, i), *why = NULL;

			printf("  router %-8s %-20s %-11s rtt %s ms, %s reboots%s%s\n",
			       rpc_str(r, "switch"), rpc_str(r, "where"), rpc_str(r, "health"),
			       rpc_str(r, "rtt_ms"), rpc_str(r, "reboots"),
			       json_object_object_get_ex(r, "why", &why) ? ": " : "",
			       why ? json_object_get_string(why) : "");
		}
	if (json_object_object_get_ex(j, "workers", &arr))
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			json_object *w = json_object_array_get_idx(arr, i);

			printf("  worker %-4s %-15s %s\n", rpc_str(w, "id"), rpc_str(w, "address"),
			       rpc_str(w, "netns"));
		}
}

/* Parses a job command's options into a request {"cmd": wire, ...}. */
static json_object *job_request(const struct opt_cmd *cmd, const char *wire, int argc,
				char **argv, struct job_args *a)
{
	json_object *req;

	*a = job_defaults;
	if (opt_parse(cmd, argv[0], argc, argv, a, NULL, NULL)) {
		json_object_put(a->workers);
		return NULL;
	}
	req = json_object_new_object();
	json_object_object_add(req, "cmd", json_object_new_string(wire));
	if (a->k >= 0)
		json_object_object_add(req, "k", json_object_new_int64(a->k));
	if (a->algo >= 0)
		json_object_object_add(req, "algorithm",
				       json_object_new_string(job_algo_name(a->algo)));
	if (a->window || !strcmp(wire, "window"))
		json_object_object_add(req, "window", json_object_new_int64(a->window));
	if (a->jclass >= 0)
		json_object_object_add(req, "class",
				       json_object_new_string(class_names[a->jclass]));
	if (a->head)
		json_object_object_add(req, "head", json_object_new_int64(a->head));
	if (a->cc >= 0)
		json_object_object_add(req, "cc", json_object_new_string(ia_cc_policy_name(a->cc)));
	if (a->no_tail)
		json_object_object_add(req, "tail", json_object_new_int64(0));
	if (a->job)
		json_object_object_add(req, "job", json_object_new_int64(a->job));
	if (a->workers)
		json_object_object_add(req, "workers", a->workers);
	return req;
}

/* Sends a job command; prints its reply's "job" member as print_job() does. */
static int job_call(const struct opt_cmd *cmd, const char *wire, int argc, char **argv)
{
	json_object *req, *reply, *v, *refused;
	struct job_args a;

	req = job_request(cmd, wire, argc, argv, &a);
	if (!req || rpc_call(a.sock, req, &reply))
		return 1;
	if (out_is_json()) {
		/* A submission's refusals belong with the job printed (it was placed without them). */
		if (!strcmp(wire, "submit") && json_object_object_get_ex(reply, "job", &v) &&
		    json_object_object_get_ex(reply, "refused", &refused))
			json_object_object_add(v, "refused", json_object_get(refused));
		return rpc_print_json(reply, !strcmp(wire, "list") || !strcmp(wire, "window") ?
						     NULL : "job");
	}
	if (!strcmp(wire, "list")) {
		json_object_object_get_ex(reply, "jobs", &v);
		printf("network %s: %zu jobs\n", rpc_str(reply, "network"),
		       v ? json_object_array_length(v) : 0);
		for (size_t i = 0; v && i < json_object_array_length(v); i++)
			print_job(json_object_array_get_idx(v, i));
	} else if (!strcmp(wire, "end")) {
		printf("job ended\n");
	} else if (!strcmp(wire, "window")) {
		/* What the lender follows may be a worker's larger report. */
		printf("job %s: senders' window %s; lends follow %s (the largest of it and %s"
		       " workers' reports)\n", rpc_str(reply, "job"), rpc_str(reply, "window"),
		       rpc_str(reply, "senders"), rpc_str(reply, "reports"));
	} else {
		json_object_object_get_ex(reply, "job", &v);
		print_job(v);
		if (json_object_object_get_ex(reply, "refused", &refused))
			for (size_t i = 0; i < json_object_array_length(refused); i++) {
				json_object *r = json_object_array_get_idx(refused, i);

				printf("  refused by %s: %s\n", rpc_str(r, "switch"),
				       rpc_str(r, "reason"));
			}
	}
	json_object_put(reply);
	return 0;
}

int cmd_job_submit(int argc, char **argv)
{
	return job_call(&job_submit_cmd, "submit", argc, argv);
}

int cmd_job_list(int argc, char **argv)
{
	return job_call(&job_list_cmd, "list", argc, argv);
}

int cmd_job_show(int argc, char **argv)
{
	return job_call(&job_show_cmd, "show", argc, argv);
}

int cmd_job_window(int argc, char **argv)
{
	return job_call(&job_window_cmd, "window", argc, argv);
}

int cmd_job_end(int argc, char **argv)
{
	return job_call(&job_end_cmd, "end", argc, argv);
}
