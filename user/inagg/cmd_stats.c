// SPDX-License-Identifier: GPL-2.0
/* inagg stats show: the switches' counters, per job or per uplink, through inaggd. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd_stats_prom.h"
#include "ctl.h"
#include "rpc.h"

struct stats_args {
	long job, chunks, history;
	const char *sock, *output;
	bool prometheus;
};

static const struct stats_args stats_defaults = { .sock = IA_CTL_SOCK };

static const struct opt stats_opts[] = {
	OPT_INT('J', "job", "ID", struct stats_args, job, 1, UINT32_MAX - 1, OPT_NODEF, "job id"),
	OPT_INT(0, "chunks", "N", struct stats_args, chunks, 1, LONG_MAX, OPT_NODEF,
		"chunks the job ran (default: as counted at the root)"),
	OPT_INT(0, "history", "N", struct stats_args, history, 1, 4096, OPT_NODEF,
		"also the last N memory samples: per switch head, head slots live, tail, lent"),
	OPT_STR('S', "socket", "PATH", struct stats_args, sock, 0, "inaggd's socket"),
	OPT_FLAG(0, "prometheus", struct stats_args, prometheus, 0,
		 "Prometheus' text format: uplinks, switches and every active job (-J: that job)"),
	OPT_STR('o', "output", "FILE", struct stats_args, output, 0,
		"--prometheus: into FILE, replaced whole (for a textfile collector)"),
	OPT_END
};

const struct opt_cmd stats_show_cmd = {
	.opts = stats_opts,
	.defaults = &stats_defaults,
	.size = sizeof(stats_defaults),
	.about = "Per link of a job: messages per chunk measured by the switches' counters beside\n"
		 "the congestion model's prediction, and the measured network congestion.\n"
		 "Without -J: per uplink, all jobs together, what was sent up, the results that\n"
		 "came down, foreign traffic passed to the kernel, and drops by reason.\n"
		 "Memory (docs/memory.md): per switch its slots, heads, head slots holding a\n"
		 "live aggregation, tail, lent slots and utilisation (slot-time live over\n"
		 "slot-time available); with -J, the job's head on each switch likewise.\n"
		 "Tail: per switch and per job link, claims, hits, collisions, completes,\n"
		 "flushes, evictions of PS partials from heads, lends and reclaims.\n"
		 "--prometheus: the same counters in Prometheus' text format (HELP and TYPE\n"
		 "lines; labels switch, port, job_id), for a scraper or node exporter's\n"
		 "textfile collector (docs/router-vm.md, \"Monitoring\").\n",
};

static void print_uplinks(json_object *reply)
{
	json_object *v;

	printf("  %-8s %10s %12s %8s  %s\n", "uplink", "sent up", "results down", "passed",
	       "dropped");
	json_object_object_get_ex(reply, "links", &v);
	for (size_t i = 0; v && i < json_object_array_length(v); i++) {
		json_object *l = json_object_array_get_idx(v, i);

		printf("  %-8s %10s %12s %8s  %s\n", rpc_str(l, "switch"), rpc_str(l, "sent_up"),
		       rpc_str(l, "results_down"), rpc_str(l, "passed"),
		       json_object_to_json_string_ext(json_object_object_get(l, "dropped"),
						      JSON_C_TO_STRING_PLAIN));
	}
}

/* A tail counter of object o ("" -> 0 when absent). */
static const char *tc(json_object *o, const char *k)
{
	json_object *v;

	return o && json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : "0";
}

#define TAIL_HDR "%9s %9s %9s %9s %9s %8s %6s %6s"
#define TAIL_ROW(o) tc(o, "tail_claims"), tc(o, "tail_hits"), tc(o, "tail_collisions"), \
		    tc(o, "tail_completes"), tc(o, "tail_flushes"), tc(o, "tail_evictions"), \
		    tc(o, "lends"), tc(o, "reclaims")
#define TAIL_COLS "claims", "hits", "colls", "completes", "flushes", "evicts", "lends", \
		  "reclaims"

/* Per switch memory, and the history as a table (t_ms, then each switch's five figures). */
static void print_memory(json_object *reply)
{
	json_object *m, *v;

	if (!json_object_object_get_ex(reply, "memory", &m))
		return;
	printf("memory, sampled every %s ms (%s samples):\n", rpc_str(m, "sample_ms"),
	       rpc_str(m, "samples"));
	printf("  %-8s %8s %5s %8s %8s %8s %8s %8s %6s\n", "switch", "slots", "jobs", "heads",
	       "live", "tail", "live", "lent", "util");
	json_object_object_get_ex(m, "switches", &v);
	for (size_t i = 0; v && i < json_object_array_length(v); i++) {
		json_object *s = json_object_array_get_idx(v, i);

		printf("  %-8s %8s %5s %8s %8s %8s %8s %8s %6.3f\n", rpc_str(s, "switch"),
		       rpc_str(s, "slots"), rpc_str(s, "jobs"), rpc_str(s, "head_slots"),
		       rpc_str(s, "head_open"), rpc_str(s, "tail_slots"), rpc_str(s, "tail_live"),
		       rpc_str(s, "lent_slots"),
		       json_object_get_double(json_object_object_get(s, "utilisation")));
	}
	printf("tail, per switch (its jobs now; lends and reclaims by the daemon):\n");
	printf("  %-8s " TAIL_HDR "\n", "switch", TAIL_COLS);
	for (size_t i = 0; v && i < json_object_array_length(v); i++) {
		json_object *s = json_object_array_get_idx(v, i);

		printf("  %-8s " TAIL_HDR "\n", rpc_str(s, "switch"),
		       TAIL_ROW(json_object_object_get(s, "tail")));
	}
	if (!json_object_object_get_ex(m, "history", &v))
		return;
	printf("history: t_ms, then per switch head live tail lent tail-live tail-stale\n");
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		json_object *h = json_object_array_get_idx(v, i);

		printf("%s", rpc_str(h, "t_ms"));
		json_object_object_foreach(h, name, f) {
			if (!strcmp(name, "t_ms"))
				continue;
			for (size_t k = 0; k < json_object_array_length(f); k++)
				printf(" %s", json_object_get_string(json_object_array_get_idx(f, k)));
		}
		printf("\n");
	}
}

static void print_job_links(json_object *reply)
{
	json_object *v;

	printf("job %s over %s chunks: measured congestion %s (model %s)\n", rpc_str(reply, "job"),
	       rpc_str(reply, "chunks"), rpc_str(reply, "congestion"),
	       rpc_str(reply, "model_congestion"));
	printf("  %-8s %-4s %10s %10s %8s %8s %6s %6s %6s %6s\n", "switch", "role", "received",
	       "sent up", "per chunk", "model", "dups", "head", "live", "util");
	json_object_object_get_ex(reply, "links", &v);
	for (size_t i = 0; v && i < json_object_array_length(v); i++) {
		json_object *l = json_object_array_get_idx(v, i);

		printf("  %-8s %-4s %10s %10s %8.3f %8s %6s %6s %6s %6.3f\n", rpc_str(l, "switch"),
		       rpc_str(l, "role"), rpc_str(l, "received"), rpc_str(l, "sent_up"),
		       json_object_get_double(json_object_object_get(l, "messages_per_chunk")),
		       rpc_str(l, "model_messages"), rpc_str(l, "duplicates"), rpc_str(l, "head"),
		       rpc_str(l, "head_open"),
		       json_object_get_double(json_object_object_get(l, "utilisation")));
	}
	printf("  tail:    " TAIL_HDR "\n", TAIL_COLS);
	for (size_t i = 0; v && i < json_object_array_length(v); i++) {
		json_object *l = json_object_array_get_idx(v, i);

		printf("  %-8s " TAIL_HDR "\n", rpc_str(l, "switch"),
		       TAIL_ROW(json_object_object_get(l, "tail")));
	}
}

int cmd_stats_show(int argc, char **argv)
{
	struct stats_args a = stats_defaults;
	json_object *req, *reply;

	if (opt_parse(&stats_show_cmd, argv[0], argc, argv, &a, NULL, NULL))
		return 1;
	if (a.chunks && !a.job)
		return out_err("%s: --chunks needs -J ID", argv[0]);
	if (a.prometheus && (a.chunks || a.history || out_is_json()))
		return out_err("%s: --prometheus takes neither --chunks, --history nor -j", argv[0]);
	if (a.output && !a.prometheus)
		return out_err("%s: -o needs --prometheus", argv[0]);
	if (a.prometheus)
		return stats_prometheus(a.sock, a.job, a.output);
	req = json_object_new_object();
	json_object_object_add(req, "cmd", json_object_new_string("stats"));
	if (a.job)
		json_object_object_add(req, "job", json_object_new_int64(a.job));
	if (a.chunks)
		json_object_object_add(req, "chunks", json_object_new_int64(a.chunks));
	if (a.history)
		json_object_object_add(req, "history", json_object_new_int64(a.history));
	if (rpc_call(a.sock, req, &reply))
		return 1;
	if (out_is_json())
		return rpc_print_json(reply, NULL);
	if (json_object_object_get_ex(reply, "job", NULL))
		print_job_links(reply);
	else
		print_uplinks(reply);
	print_memory(reply);
	json_object_put(reply);
	return 0;
}
