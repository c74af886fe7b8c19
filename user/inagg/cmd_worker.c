// SPDX-License-Identifier: GPL-2.0
/* inagg worker run: one worker of a job (see docs/hosts.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "cc_job.h"
#include "cli.h"
#include "ctl.h"
#include "host.h"
#include "hostio.h"

struct worker_args {
	struct ia_worker_cfg cfg;
	uint64_t elems, seed;
	const char *file, *out, *sock;
	int frac, cc, jclass;
};

static const struct worker_args worker_defaults = {
	.cfg = { .chunk = IA_CHUNK_DEFAULT, .window = IA_HOST_WINDOW,
		 .timeout_ms = IA_HOST_TIMEOUT_MS, .retries = IA_HOST_RETRIES },
	.frac = -1, .cc = -1, .jclass = -1, .sock = IA_CTL_SOCK,
};

static const char *const class_names[] = { "ina", "ps", NULL };

#define W struct worker_args
static const struct opt worker_opts[] = {
	HOST_OPT_JOB(W, cfg.job),
	OPT_INT('i', "id", "ID", W, cfg.id, 0, UINT32_MAX, OPT_REQUIRED,
		"worker id: the sender id of its messages"),
	OPT_ADDR('p', "ps", "ADDR", W, cfg.ps, OPT_REQUIRED, "the job's destination"),
	HOST_OPT_ADDR(W, cfg.addr),
	OPT_INT('e', "elems", "N", W, elems, 1, HOST_MAX_ELEMS,
		OPT_REQUIRED | OPT_NODEF | OPT_GROUP(1), "send a random vector of N elements"),
	OPT_STR('f', "file", "FILE", W, file, OPT_REQUIRED | OPT_GROUP(1),
		"send the decimal integers of FILE ('-': stdin), whitespace-separated"),
	OPT_INT('F', "float", "FRAC", W, frac, 0, 30, OPT_NODEF,
		"FILE holds real numbers, sent as round(x * 2^FRAC) (int32, saturating); the "
		"result is printed divided by 2^FRAC"),
	OPT_INT('s', "seed", "S", W, seed, 0, OPT_NOMAX, OPT_NODEF,
		"seed of the random vector (default: the worker id)"),
	HOST_OPT_CHUNK(W, cfg.chunk),
	HOST_OPT_BASE(W, cfg.base_seq),
	OPT_INT('w', "window", "W", W, cfg.window, 1, UINT32_MAX, 0, "chunks in flight"),
	OPT_INT(0, "timeout", "MS", W, cfg.timeout_ms, 1, UINT32_MAX, 0,
		"shortest wait for a result before the chunk the window waits for is resent "
		"(longer if the round trip says so: docs/hosts.md, Loss recovery)"),
	OPT_INT(0, "retries", "N", W, cfg.retries, 1, UINT32_MAX, 0,
		"timer resends of one chunk with no result at all in between before giving up: "
		"the default gives up after about 45 s of silence; a PS host that says "
		"nothing listens (ICMP unreachable) ends the run after 1 s"),
	OPT_INT(0, "nworkers", "N", W, cfg.nworkers, 0, UINT32_MAX, OPT_NODEF,
		"total workers of the job: accept only results that sum N workers"),
	OPT_ENUMF(0, "cc", "POLICY", W, cc, cli_cc_name, IA_CC__COUNT, OPT_NODEF,
		  "window policy (docs/cc.md; default: the job's, as inaggd says, else fixed)"),
	OPT_ENUM(0, "class", "CLASS", W, jclass, class_names, OPT_NODEF,
		 "the job's class, for flexina (default: the job's, as inaggd says, else ina)"),
	OPT_STR('S', "socket", "PATH", W, sock, 0,
		"inaggd's socket, asked for the job's policy and class unless --cc and --class "
		"give both; an INA job's workers report their windows there"),
	HOST_OPT_OUTPUT(W, out),
	OPT_END
};
#undef W

const struct opt_cmd worker_run_cmd = {
	.opts = worker_opts,
	.defaults = &worker_defaults,
	.size = sizeof(worker_defaults),
	.about = "Sends a vector for a job to its destination (PS) in chunks, with a window of\n"
		 "chunks in flight, resends of the chunks found lost (by later results, or by a\n"
		 "stall timer for the chunk the window waits for), and waits for the sum of every\n"
		 "chunk. Results arrive on ADDR:" OPT_STR_OF(IA_UDP_PORT)
		 " (the worker's own UDP port).\n",
	.notes = "JSON (-j): job, id, elements, chunks, cc, cc_from (option, job: inaggd's\n"
		 "record, default: no daemon), class, sent, retransmitted, bypassed (sent past\n"
		 "switch memory: beyond the aggregator window), results, duplicates,\n"
		 "timeouts (resends by timer), early, ignored, marks, ce (of the marks, results\n"
		 "that arrived IP CE), collisions (results saying part of the chunk collided in\n"
		 "a tail), max_retx, srtt_us, min_rtt_us, rto_us, cwnd, min_cwnd, awnd, min_awnd\n"
		 "(the policy's windows at the end and their smallest), cuts, acuts (their\n"
		 "decreases), elapsed, checksum (FNV-1a 64 of the result, hex). Every worker\n"
		 "of an INA job known to inaggd reports its window to it while it runs (the\n"
		 "head lends what the largest window leaves idle, docs/cc.md): reports\n"
		 "(accepted), report_error (why reporting stopped, if it did).\n",
};

/*
 * The window policy and class: the options', else the job's record at
 * inaggd, else fixed and ina. No daemon at sock is no error (a worker may run
 * without one, docs/hosts.md); a daemon that does not know the job is
 * warned about. Returns where the policy came from, or NULL after out_err().
 */
static const char *worker_cc(struct worker_args *a)
{
	json_object *req, *resp = NULL, *jo, *ok;
	enum ia_cc_policy cc = IA_CC_FIXED;
	const char *from = "default";
	char err[IA_ERRLEN];
	bool ps = false;
	int ret;

	if (a->cc < 0 || a->jclass < 0) {
		req = json_object_new_object();
		json_object_object_add(req, "cmd", json_object_new_string("show"));
		json_object_object_add(req, "job", json_object_new_int64(a->cfg.job));
		ret = ia_ctl_call(a->sock, req, &resp, err, sizeof(err));
		json_object_put(req);
		if (!ret && json_object_object_get_ex(resp, "ok", &ok) &&
		    json_object_get_boolean(ok) && json_object_object_get_ex(resp, "job", &jo)) {
			if (ia_job_cc_of(jo, &cc, &ps)) {
				json_object_put(resp);
				out_err("job %u: inaggd names an unknown window policy", a->cfg.job);
				return NULL;
			}
			from = "job";
			/* An INA job's workers report their windows: its head lends by the largest. */
			if (!ps)
				a->cfg.report_sock = a->sock;
		} else if (!ret) {
			out_warn("job %u not known to inaggd (%s): window policy %s", a->cfg.job,
				 a->sock, a->cc < 0 ? "fixed" : ia_cc_policy_name(a->cc));
		} else if (ret != -ENOENT && ret != -ECONNREFUSED) {
			out_warn("inaggd at %s: %s", a->sock, err);
		}
		json_object_put(resp);
	}
	if (a->cc >= 0) {
		cc = a->cc;
		from = "option";
	}
	if (a->jclass >= 0)
		ps = a->jclass == 1;
	a->cfg.cc = cc;
	a->cfg.ps_job = ps;
	return from;
}

int cmd_worker_run(int argc, char **argv)
{
	struct worker_args a = worker_defaults;
	bool given[ARRAY_SIZE(worker_opts)];
	struct ia_worker_stats st;
	struct ia_worker *w = NULL;
	struct vec_out vo = { 0 };
	char err[IA_ERRLEN] = "";
	char ps[INET_ADDRSTRLEN];
	const char *cc_from;
	int32_t *v = NULL;
	double t0;
	int ret = 1;
	uint64_t n;
	long len;

	if (opt_parse(&worker_run_cmd, argv[0], argc, argv, &a, NULL, given))
		return 1;
	if (a.frac >= 0 && !a.file)
		return out_err("%s: --float needs --file", argv[0]);
	if (!opt_given(worker_opts, given, "seed"))
		a.seed = a.cfg.id;
	cc_from = worker_cc(&a);
	if (!cc_from)
		return 1;
	if (a.file) {
		len = read_vector(a.file, a.frac, &v);
		if (len < 0)
			return 1;
		n = len;
	} else {
		n = a.elems;
		v = malloc(n * sizeof(*v));
		if (!v)
			return out_err("out of memory");
		ia_host_fill(v, n, a.seed);
	}
	if (vec_out_open(&vo, a.out))
		goto out;
	a.cfg.stop = &host_stop;
	catch_signals();
	if (ia_worker_open(&a.cfg, &w, err, sizeof(err))) {
		ret = out_err("%s: %s", argv[0], err);
		goto out;
	}
	t0 = ia_now_seconds();
	ret = ia_worker_run(w, v, v, n, err, sizeof(err));
	ia_worker_stats(w, &st);
	if (ret == -ETIMEDOUT && !st.results) {
		/* Silence all along: most likely no PS there, which is what to check. */
		inet_ntop(AF_INET, &a.cfg.ps, ps, sizeof(ps));
		ret = out_err("worker %u: %s: no result at all from the PS at %s:%u in %.1f s "
			      "(is it running there?)", a.cfg.id, err, ps, IA_UDP_PORT,
			      ia_now_seconds() - t0);
		goto out;
	}
	if (ret) {
		ret = out_err("worker %u: %s (%llu of %llu chunks done)", a.cfg.id, err,
			      (unsigned long long)st.results,
			      (unsigned long long)ia_host_nchunks(n, a.cfg.chunk));
		goto out;
	}
	/* ret is the run's 0 here: a result not written is the command's failure. */
	ret = vec_out_write(&vo, v, n, a.frac);
	if (ret)
		goto out;

	out_begin();
	out_uint("job", "worker job %llu", a.cfg.job);
	out_uint("id", " id %llu:", a.cfg.id);
	out_uint("elements", " %llu elements", n);
	out_uint("chunks", " in %llu chunks\n", ia_host_nchunks(n, a.cfg.chunk));
	out_str("cc", "cc %s", ia_cc_policy_name(a.cfg.cc));
	out_str("cc_from", " (%s),", cc_from);
	out_str("class", " class %s\n", a.cfg.ps_job ? "ps" : "ina");
	out_uint("sent", "sent %llu", st.sent);
	out_uint("retransmitted", "  retransmitted %llu", st.retx);
	out_uint("bypassed", "  bypassed %llu", st.bypassed);
	out_uint("timeouts", "  timeouts %llu", st.timeouts);
	out_uint("results", "  results %llu", st.results);
	out_uint("duplicates", "  duplicates %llu", st.dup);
	out_uint("early", "  early %llu", st.early);
	out_uint("ignored", "  ignored %llu", st.bad);
	out_uint("marks", "  marks %llu", st.marks);
	out_uint("ce", " (ce %llu)", st.ce);
	out_uint("collisions", "  collisions %llu", st.colls);
	out_uint("max_retx", "  max_retx %llu\n", st.max_retx);
	out_uint("srtt_us", "srtt %llu us", st.srtt_us);
	out_uint("min_rtt_us", "  min_rtt %llu us", st.min_rtt_us);
	out_uint("rto_us", "  rto %llu us\n", st.rto_us);
	out_uint("cwnd", "window %llu", st.cwnd);
	out_uint("min_cwnd", " (min %llu),", st.min_cwnd);
	out_uint("awnd", " aggregator window %llu", st.awnd);
	out_uint("min_awnd", " (min %llu),", st.min_awnd);
	out_uint("cuts", " cuts %llu", st.cuts);
	out_uint("acuts", " (aggregator %llu)\n", st.acuts);
	if (a.cfg.report_sock) {
		out_uint("reports", "window reports to inaggd %llu", st.reports);
		if (st.report_err)
			out_str("report_error", " (stopped: %s)", strerror(-st.report_err));
		out_text("\n");
	}
	out_double("elapsed", "elapsed %.6f s\n", st.elapsed);
	print_checksum(v, n);
	ret = out_end();
out:
	vec_out_drop(&vo);
	ia_worker_close(w);
	free(v);
	return ret;
}
