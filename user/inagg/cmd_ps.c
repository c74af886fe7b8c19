// SPDX-License-Identifier: GPL-2.0
/* inagg ps run: the destination (parameter server) of a job (see docs/hosts.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "host.h"
#include "hostio.h"

/* --members and --expect: sender ids, each with its nworkers. */
struct member_list {
	struct ia_sender *v;
	uint32_t n;
};

struct ps_args {
	struct ia_ps_cfg cfg;
	struct member_list members, expect;
	const char *ready, *out;
	bool unicast, forever, no_nack;
	int frac;
};

static const struct ps_args ps_defaults = {
	.cfg = { .chunk = IA_CHUNK_DEFAULT, .linger_ms = IA_HOST_LINGER_MS },
	.frac = -1,
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether m[0..n) has an id twice (*dup then), or -ENOMEM. */
static int dup_sender(const struct ia_sender *m, uint32_t n, uint32_t *dup)
{
	uint32_t *id = malloc(n * sizeof(*id));
	int found = 0;

	if (!id)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		id[i] = m[i].id;
	qsort(id, n, sizeof(*id), cmp_u32);
	for (uint32_t i = 1; i < n && !found; i++)
		if (id[i] == id[i - 1]) {
			*dup = id[i];
			found = 1;
		}
	free(id);
	return found;
}

/* Parses "0-3,7:2": ranges of workers (nworkers 1) or ID:NWORKERS. */
static int parse_members(const char *opt, const char *s, struct ia_sender **out,
			 uint32_t *count)
{
	struct ia_sender *m = NULL, *nm;
	unsigned long long a, b, k;
	uint32_t n = 0, cap = 0, dup;
	const char *p = s;
	char *end;
	int ret;

	while (*p) {
		errno = 0;
		a = strtoull(p, &end, 10);
		if (errno || end == p || a > UINT32_MAX || *p == '-')
			goto bad;
		b = a;
		k = 1;
		if (*end == '-') {
			p = end + 1;
			b = strtoull(p, &end, 10);
			if (errno || end == p || b > UINT32_MAX || b < a || b - a >= 1 << 20)
				goto bad;
		} else if (*end == ':') {
			p = end + 1;
			k = strtoull(p, &end, 10);
			if (errno || end == p || !k || k > UINT32_MAX)
				goto bad;
		}
		if (*end && *end != ',')
			goto bad;
		for (; a <= b; a++) {
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				nm = realloc(m, cap * sizeof(*m));
				if (!nm) {
					free(m);
					return out_err("out of memory");
				}
				m = nm;
			}
			m[n++] = (struct ia_sender){ (uint32_t)a, (uint32_t)k };
		}
		p = *end ? end + 1 : end;
	}
	if (!n)
		goto bad;
	ret = dup_sender(m, n, &dup);
	if (ret) {
		free(m);
		/* One id twice would count its workers twice, or expect its vector twice. */
		return ret < 0 ? out_err("out of memory") : out_err("%s: id %u given twice", opt, dup);
	}
	*out = m;
	*count = n;
	return 0;
bad:
	free(m);
	return out_err("%s: invalid list '%s': need ID[:NWORKERS] or FIRST-LAST, "
		       "comma-separated", opt, s);
}


static int parse_member_list(const char *opt, const char *arg, void *dst)
{
	struct member_list *l = dst;

	free(l->v);
	l->v = NULL;
	return parse_members(opt, arg, &l->v, &l->n);
}

#define P struct ps_args
static const struct opt ps_opts[] = {
	HOST_OPT_JOB(P, cfg.job),
	OPT_INT(0, "nworkers", "N", P, cfg.nworkers, 1, UINT32_MAX, OPT_REQUIRED,
		"total workers of the job"),
	OPT_INT('e', "elems", "N", P, cfg.nelem, 1, HOST_MAX_ELEMS, OPT_REQUIRED, "vector length"),
	OPT_INT('i', "id", "ID", P, cfg.id, 0, UINT32_MAX, 0, "sender id of results"),
	HOST_OPT_ADDR(P, cfg.addr),
	OPT_ADDR('D', "down", "ADDR", P, cfg.down, OPT_REQUIRED | OPT_GROUP(1),
		 "send each result once to ADDR (the root switch, or a broadcast address), "
		 "port " OPT_STR_OF(IA_UDP_PORT)),
	OPT_FLAG('u', "unicast", P, unicast, OPT_REQUIRED | OPT_GROUP(1),
		 "instead, one copy to every worker address heard from"),
	OPT_FUNC('M', "members", "LIST", P, members, parse_member_list, NULL, 0,
		 "accept only these senders: ID[:NWORKERS][,...] or FIRST-LAST ranges "
		 "(NWORKERS 1), e.g. 0-3,100:4"),
	HOST_OPT_CHUNK(P, cfg.chunk),
	HOST_OPT_BASE(P, cfg.base_seq),
	OPT_INT(0, "linger", "MS", P, cfg.linger_ms, 0, INT32_MAX, 0,
		"idle time served after completion"),
	OPT_FLAG(0, "no-nack", P, no_nack, 0,
		 "never ask the workers for pieces found lost (NACKs, docs/hosts.md): leave "
		 "them to the workers' own recovery"),
	OPT_FLAG(0, "forever", P, forever, 0, "serve until SIGINT/SIGTERM"),
	OPT_STR(0, "ready", "FILE", P, ready, 0, "create FILE once the socket is bound"),
	OPT_INT('F', "float", "FRAC", P, frac, 0, 30, OPT_NODEF,
		"print the result divided by 2^FRAC"),
	HOST_OPT_OUTPUT(P, out),
	OPT_FUNC(0, "expect", "SEEDS", P, expect, parse_member_list, NULL, 0,
		 "check the result against the sum of the random vectors of these worker "
		 "seeds (as --members), prints exact"),
	OPT_END
};
#undef P

const struct opt_cmd ps_run_cmd = {
	.opts = ps_opts,
	.defaults = &ps_defaults,
	.size = sizeof(ps_defaults),
	.about = "Destination (parameter server) of a job: adds the contributions (CONTRIB) and\n"
		 "aggregates (AGG) that reach it, each sender once per chunk, and sends a\n"
		 "chunk's result down once its senders sum the job's workers. A message for a\n"
		 "completed chunk gets the stored result again. Prints \"ready\" on stderr (and\n"
		 "writes --ready FILE) once bound; serves until every chunk is complete and\n"
		 "--linger MS passed without a message, or until SIGINT/SIGTERM with --forever.\n",
	.notes = "JSON (-j): job, workers, elements, chunks, complete, done, received,\n"
		 "contributions, aggregates, duplicates, late, late_quiet (of the late, not\n"
		 "answered at once: within the quiet time after their chunk's latest result,\n"
		 "1 ms doubling per answer up to 16 ms), late_deferred (results sent at a quiet\n"
		 "time's end for those), late_stale (of the quiet, dropped: queued before\n"
		 "their chunk's latest result went down, while results are rarely lost),\n"
		 "results_sent, marks, ce (of\n"
		 "the marks, messages that arrived IP CE), collisions (accepted messages that\n"
		 "collided in a tail), nacks (NACK messages sent), nacked (pieces they asked\n"
		 "for), addresses (--unicast: worker addresses results go to, at most one\n"
		 "per worker), unlearned (sources not learned: no room), dropped {reason:\n"
		 "count}, elapsed, checksum.\n",
};

/*
 * Whether v is the sum of the random vectors (ia_host_fill) of the seeds:
 * a check, independent of the network, that every contribution was added
 * exactly once.
 */
static bool sum_of_seeds(const int32_t *v, uint64_t n, const struct ia_sender *seeds,
			 uint32_t nseeds)
{
	int32_t *sum = calloc(n, sizeof(*sum)), *x = malloc(n * sizeof(*x));
	bool same;

	if (!sum || !x) {
		free(sum);
		free(x);
		return false;
	}
	for (uint32_t i = 0; i < nseeds; i++) {
		ia_host_fill(x, n, seeds[i].id);
		ia_host_add(sum, x, n);
	}
	same = !memcmp(sum, v, n * sizeof(*v));
	free(sum);
	free(x);
	return same;
}

int cmd_ps_run(int argc, char **argv)
{
	struct ps_args a = ps_defaults;
	char err[IA_ERRLEN] = "";
	struct ia_ps_stats st;
	struct vec_out vo = { 0 };
	struct ia_ps *ps = NULL;
	int i, ret = 1, rc;
	bool exact;
	FILE *f;

	if (opt_parse(&ps_run_cmd, argv[0], argc, argv, &a, NULL, NULL))
		goto out;
	if (a.unicast)
		a.cfg.down_mode = IA_PS_DOWN_UNICAST;
	if (a.forever)
		a.cfg.linger_ms = -1;
	a.cfg.nack = !a.no_nack;
	a.cfg.nmembers = a.members.n;
	a.cfg.members = a.members.v;
	a.cfg.stop = &host_stop;
	if (vec_out_open(&vo, a.out))
		goto out;
	catch_signals();
	if (ia_ps_open(&a.cfg, &ps, err, sizeof(err))) {
		out_err("%s: %s", argv[0], err);
		goto out;
	}
	if (a.ready) {
		bool bad;

		f = fopen(a.ready, "w");
		/* Closed whatever fputs() said: a failed write leaked the FILE. */
		bad = !f || fputs("ready\n", f) < 0;
		if ((f && fclose(f)) || bad) {
			out_err("%s: %s", a.ready, strerror(errno));
			goto out;
		}
	}
	out_warn("ps: ready, job %u, %llu chunks", a.cfg.job,
		 (unsigned long long)ia_host_nchunks(a.cfg.nelem, a.cfg.chunk));
	rc = ia_ps_run(ps, err, sizeof(err));
	ia_ps_stats(ps, &st);
	if (rc && rc != -EINTR) {
		out_err("%s: %s", argv[0], err);
		goto out;
	}
	if (st.done == st.chunks && vec_out_write(&vo, ia_ps_result(ps), a.cfg.nelem, a.frac))
		goto out;

	out_begin();
	out_uint("job", "ps job %llu:", a.cfg.job);
	out_uint("workers", " %llu workers", a.cfg.nworkers);
	out_uint("elements", " %llu elements", a.cfg.nelem);
	out_uint("chunks", " in %llu chunks\n", st.chunks);
	out_bool("complete", "complete %s", st.done == st.chunks);
	out_uint("done", "  done %llu\n", st.done);
	out_uint("received", "received %llu", st.rx);
	out_uint("contributions", "  contributions %llu", st.contrib);
	out_uint("aggregates", "  aggregates %llu", st.agg);
	out_uint("duplicates", "  duplicates %llu", st.dup);
	out_uint("late", "  late %llu", st.late);
	out_uint("late_quiet", "  late_quiet %llu", st.late_quiet);
	out_uint("late_deferred", "  late_deferred %llu", st.late_deferred);
	out_uint("late_stale", "  late_stale %llu", st.late_stale);
	out_uint("results_sent", "  results_sent %llu", st.results);
	out_uint("marks", "  marks %llu", st.marks);
	out_uint("ce", " (ce %llu)", st.ce);
	out_uint("collisions", "  collisions %llu", st.colls);
	out_uint("nacks", "  nacks %llu", st.nacks);
	out_uint("nacked", " (pieces %llu)\n", st.nacked);
	out_uint("addresses", "addresses %llu", st.addresses);
	out_uint("unlearned", "  unlearned %llu\n", st.unlearned);
	out_obj_open("dropped");
	out_text("dropped");
	for (i = 0; i < IA_PS_DROP__COUNT; i++) {
		out_text(" %s", ia_ps_drop_name(i));
		out_uint(ia_ps_drop_name(i), " %llu", st.drop[i]);
	}
	out_text("\n");
	out_obj_close();
	out_double("elapsed", "elapsed %.6f s\n", st.elapsed);
	if (st.done == st.chunks)
		print_checksum(ia_ps_result(ps), a.cfg.nelem);
	exact = st.done == st.chunks &&
		(!a.expect.v ||
		 sum_of_seeds(ia_ps_result(ps), a.cfg.nelem, a.expect.v, a.expect.n));

	if (a.expect.v)
		out_bool("exact", "exact %s\n", exact);
	out_end();
	/* Interrupted before completion, or not the expected sum: a failure. */
	ret = !exact;
	if (st.done != st.chunks) {
		out_warn("ps: interrupted with %u of %u chunks complete", st.done, st.chunks);
		ret = 1;
	}
out:
	vec_out_drop(&vo);
	ia_ps_close(ps);
	free(a.members.v);
	free(a.expect.v);
	return ret;
}
