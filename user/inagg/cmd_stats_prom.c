// SPDX-License-Identifier: GPL-2.0
/*
 * inagg stats show --prometheus: inaggd's statistics in Prometheus' text
 * exposition format (version 0.0.4), for a scraper or node exporter's textfile
 * collector. Each family gets its HELP and TYPE lines and its samples together,
 * as the format requires. Labels: switch, port (the uplink is the port a
 * switch's counters are kept for), job_id, and reason or counter where the
 * values are named by the datapath's counter table (so a counter added there
 * shows here without a change). "job" is not used as a label: Prometheus
 * gives that name to the scrape job, and would rename ours to exported_job.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_stats_prom.h"
#include "files.h"
#include "rpc.h"

/* Where the exposition goes: stdout, or a buffer written to the -o file at once. */
static FILE *pf;

/* A label value as the format escapes it: backslash, double quote, newline. */
static void label(const char *name, const char *v, bool first)
{
	fprintf(pf, "%s%s=\"", first ? "" : ",", name);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(pf, "\\%c", *v);
		else if (*v == '\n')
			fprintf(pf, "\\n");
		else
			fputc(*v, pf);
	}
	fputc('"', pf);
}

static void family(const char *name, const char *type, const char *help)
{
	fprintf(pf, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A JSON number as a sample value: integers exactly, reals with 17 digits. */
static void value(json_object *v)
{
	double d;

	if (json_object_is_type(v, json_type_int)) {
		fprintf(pf, " %lld\n", (long long)json_object_get_int64(v));
		return;
	}
	d = v ? json_object_get_double(v) : 0;
	if (isnan(d))
		fprintf(pf, " NaN\n");
	else if (isinf(d))
		fprintf(pf, " %sInf\n", d > 0 ? "+" : "-");
	else
		fprintf(pf, " %.17g\n", d);
}

static json_object *arr(json_object *o, const char *key)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) &&
	       json_object_is_type(v, json_type_array) ? v : NULL;
}

static json_object *obj(json_object *o, const char *key)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) &&
	       json_object_is_type(v, json_type_object) ? v : NULL;
}

/* One sample per uplink of the "links" of reply: key's value, labelled switch and port. */
static void uplinks(json_object *reply, const char *metric, const char *type, const char *key,
		    const char *help)
{
	json_object *links = arr(reply, "links");

	family(metric, type, help);
	for (size_t i = 0; links && i < json_object_array_length(links); i++) {
		json_object *l = json_object_array_get_idx(links, i);

		fprintf(pf, "%s{", metric);
		label("switch", rpc_str(l, "switch"), true);
		label("port", "uplink", false);
		fprintf(pf, "}");
		value(json_object_object_get(l, key));
	}
}

/* The samples of key's object in each uplink: one per member, its name as label lname. */
static void uplinks_by(json_object *reply, const char *metric, const char *type, const char *key,
		       const char *lname, const char *help)
{
	json_object *links = arr(reply, "links");

	family(metric, type, help);
	for (size_t i = 0; links && i < json_object_array_length(links); i++) {
		json_object *l = json_object_array_get_idx(links, i), *o = obj(l, key);

		if (!o)
			continue;
		json_object_object_foreach(o, name, v) {
			fprintf(pf, "%s{", metric);
			label("switch", rpc_str(l, "switch"), true);
			label("port", "uplink", false);
			label(lname, name, false);
			fprintf(pf, "}");
			value(v);
		}
	}
}

static void switches(json_object *reply, const char *metric, const char *key, const char *help)
{
	json_object *sw = arr(obj(reply, "memory"), "switches");

	family(metric, "gauge", help);
	for (size_t i = 0; sw && i < json_object_array_length(sw); i++) {
		json_object *s = json_object_array_get_idx(sw, i);

		fprintf(pf, "%s{", metric);
		label("switch", rpc_str(s, "switch"), true);
		fprintf(pf, "}");
		value(json_object_object_get(s, key));
	}
}

static void switches_tail(json_object *reply)
{
	json_object *sw = arr(obj(reply, "memory"), "switches");
	const char *m = "inagg_switch_tail";

	family(m, "gauge", "Tail memory's counters at the switch, over its jobs now and lends "
	       "and reclaims by inaggd (docs/memory.md), by counter.");
	for (size_t i = 0; sw && i < json_object_array_length(sw); i++) {
		json_object *s = json_object_array_get_idx(sw, i), *o = obj(s, "tail");

		if (!o)
			continue;
		json_object_object_foreach(o, name, v) {
			if (!json_object_is_type(v, json_type_int))
				continue;
			fprintf(pf, "%s{", m);
			label("switch", rpc_str(s, "switch"), true);
			label("counter", name, false);
			fprintf(pf, "}");
			value(v);
		}
	}
}

/* One family over the jobs' replies: a sample per job (key of the reply) or per link. */
static void jobs(json_object **r, int n, const char *metric, const char *type, const char *key,
		 bool per_link, const char *help)
{
	family(metric, type, help);
	for (int k = 0; k < n; k++) {
		json_object *links = arr(r[k], "links");

		if (!per_link) {
			fprintf(pf, "%s{", metric);
			label("job_id", rpc_str(r[k], "job"), true);
			fprintf(pf, "}");
			value(json_object_object_get(r[k], key));
			continue;
		}
		for (size_t i = 0; links && i < json_object_array_length(links); i++) {
			json_object *l = json_object_array_get_idx(links, i);

			fprintf(pf, "%s{", metric);
			label("job_id", rpc_str(r[k], "job"), true);
			label("switch", rpc_str(l, "switch"), false);
			fprintf(pf, "}");
			value(json_object_object_get(l, key));
		}
	}
}

/* Every counter of each job at each switch of its path, by the datapath's name. */
static void jobs_counters(json_object **r, int n)
{
	const char *m = "inagg_job_frames_total";

	family(m, "counter", "The job's frames at the switch by outcome, as the datapath counts "
	       "them (counters that are 0 are left out).");
	for (int k = 0; k < n; k++) {
		json_object *links = arr(r[k], "links");

		for (size_t i = 0; links && i < json_object_array_length(links); i++) {
			json_object *l = json_object_array_get_idx(links, i), *o = obj(l, "counters");

			if (!o)
				continue;
			json_object_object_foreach(o, name, v) {
				fprintf(pf, "%s{", m);
				label("job_id", rpc_str(r[k], "job"), true);
				label("switch", rpc_str(l, "switch"), false);
				label("counter", name, false);
				fprintf(pf, "}");
				value(v);
			}
		}
	}
}

/* The stats of each active job (only job id's when id) into *out (malloc'd): how many. */
static int job_replies(const char *sock, long id, json_object ***out)
{
	json_object *req, *list = NULL, *a = NULL, **r;
	size_t max = 1;
	int n = 0;

	if (!id) {
		req = json_object_new_object();
		json_object_object_add(req, "cmd", json_object_new_string("list"));
		if (rpc_call(sock, req, &list))
			return -1;
		a = arr(list, "jobs");
		max = a ? json_object_array_length(a) : 0;
	}
	r = calloc(max ?: 1, sizeof(*r));
	if (!r) {
		json_object_put(list);
		out_err("out of memory");
		return -1;
	}
	for (size_t i = 0; i < max; i++) {
		json_object *j = a ? json_object_array_get_idx(a, i) : NULL;
		long long job = j ? json_object_get_int64(json_object_object_get(j, "job")) : id;

		if (j && strcmp(rpc_str(j, "state"), "active"))
			continue;
		req = json_object_new_object();
		json_object_object_add(req, "cmd", json_object_new_string("stats"));
		json_object_object_add(req, "job", json_object_new_int64(job));
		if (!rpc_call(sock, req, &r[n])) {
			n++;
		} else if (id) {
			n = -1;
			break;
		}
		/* A job of the list that ended since: said on stderr, left out. */
	}
	json_object_put(list);
	if (n < 0)
		free(r);
	else
		*out = r;
	return n;
}

static void exposition(json_object *reply, json_object **r, int n);

int stats_prometheus(const char *sock, long id, const char *path)
{
	json_object *req, *reply = NULL, **r;
	char *buf = NULL;
	size_t len = 0;
	int n, ret;

	if (!id) {
		req = json_object_new_object();
		json_object_object_add(req, "cmd", json_object_new_string("stats"));
		if (rpc_call(sock, req, &reply))
			return 1;
	}
	n = job_replies(sock, id, &r);
	if (n < 0) {
		json_object_put(reply);
		return 1;
	}
	/*
	 * A file is replaced whole (FILE.tmp renamed over it): node exporter's
	 * textfile collector must never read one half written.
	 */
	pf = path && strcmp(path, "-") ? open_memstream(&buf, &len) : stdout;
	if (pf) {
		exposition(reply, r, n);
		ret = pf == stdout ? fflush(stdout) : fclose(pf);
		ret = ret ? -errno : pf == stdout ? 0 :
		      ia_write_atomic(path, buf, len, 0644, false);
	} else {
		ret = -errno;
	}
	free(buf);
	json_object_put(reply);
	for (int k = 0; k < n; k++)
		json_object_put(r[k]);
	free(r);
	if (ret)
		return out_err("%s: %s", path && strcmp(path, "-") ? path : "stdout", strerror(-ret));
	return 0;
}

static void exposition(json_object *reply, json_object **r, int n)
{
	if (reply) {
		uplinks(reply, "inagg_port_sent_up_total", "counter", "sent_up",
			"inagg messages the switch sent up its uplink, first transmissions, "
			"all jobs, since the port was attached.");
		uplinks(reply, "inagg_port_resent_up_total", "counter", "resent_up",
			"inagg messages sent up again to recover a loss.");
		uplinks(reply, "inagg_port_results_down_total", "counter", "results_down",
			"Results that came down the uplink for replication.");
		uplinks(reply, "inagg_port_passed_total", "counter", "passed",
			"Frames that were not inagg's, passed to the kernel.");
		uplinks_by(reply, "inagg_port_dropped_total", "counter", "dropped", "reason",
			   "inagg frames the datapath dropped, by reason (reasons not seen "
			   "are left out).");
		switches(reply, "inagg_switch_slots", "slots",
			 "Aggregator slots of the switch (its ledger's capacity).");
		switches(reply, "inagg_switch_jobs", "jobs", "Jobs the switch's ledger admitted.");
		switches(reply, "inagg_switch_head_slots", "head_slots",
			 "Slots held as INA jobs' heads.");
		switches(reply, "inagg_switch_head_live_slots", "head_open",
			 "Head slots holding a live aggregation at the last sample.");
		switches(reply, "inagg_switch_tail_slots", "tail_slots",
			 "Slots of the shared tail.");
		switches(reply, "inagg_switch_tail_live_slots", "tail_live",
			 "Tail slots holding a live aggregation at the last sample.");
		switches(reply, "inagg_switch_lent_slots", "lent_slots",
			 "Head slots lent to the tail.");
		switches(reply, "inagg_switch_utilisation_ratio", "utilisation",
			 "Slot-time live over slot-time available (docs/memory.md).");
		switches_tail(reply);
	}
	jobs(r, n, "inagg_job_chunks", "gauge", "chunks", false,
	     "Chunks the job ran, as counted at the root.");
	jobs(r, n, "inagg_job_congestion", "gauge", "congestion", false,
	     "The job's network congestion measured: the largest messages per chunk over rate.");
	jobs(r, n, "inagg_job_model_congestion", "gauge", "model_congestion", false,
	     "The congestion model's network congestion for the job's placement.");
	jobs(r, n, "inagg_job_sent_up_total", "counter", "sent_up", true,
	     "The job's messages the switch sent up, first transmissions.");
	jobs(r, n, "inagg_job_received_total", "counter", "received", true,
	     "The job's messages the switch received.");
	jobs(r, n, "inagg_job_messages_per_chunk", "gauge", "messages_per_chunk", true,
	     "The job's messages per chunk on the switch's uplink, measured.");
	jobs(r, n, "inagg_job_model_messages_per_chunk", "gauge", "model_messages", true,
	     "The job's messages per chunk on the switch's uplink, as the model predicts.");
	jobs_counters(r, n);
}
