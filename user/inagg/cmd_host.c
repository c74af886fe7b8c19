// SPDX-License-Identifier: GPL-2.0
/* inagg worker and inagg ps: a job's worker and destination (see docs/hosts.md). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "cli.h"
#include "host.h"

const char help_worker[] =
	"Sends a vector for a job to its destination (PS) in chunks, with a window of\n"
	"chunks in flight and retransmission on timeout, and waits for the sum of every\n"
	"chunk. Results arrive on ADDR:9430 (the worker's own UDP port).\n"
	"  -J, --job ID          job id (required)\n"
	"  -i, --id ID           worker id: the sender id of its messages (required)\n"
	"  -p, --ps ADDR         the job's destination (required)\n"
	"  -a, --addr ADDR       own IPv4 address to bind (default: any)\n"
	"  -n, --elems N         send a random vector of N elements (see --seed)\n"
	"  -f, --file FILE       send the integers of FILE ('-': stdin), whitespace-separated\n"
	"  -F, --float FRAC      FILE holds real numbers, sent as round(x * 2^FRAC) (int32,\n"
	"                        saturating); the result is printed divided by 2^FRAC\n"
	"  -s, --seed S          seed of the random vector (default: the worker id)\n"
	"  -c, --chunk E         elements per chunk, 1..256 (default 256)\n"
	"  -b, --base SEQ        sequence number of the first chunk (default 0)\n"
	"  -w, --window W        chunks in flight (default 64)\n"
	"  -t, --timeout MS      retransmission timeout (default 200; backs off up to 8x)\n"
	"  -r, --retries N       retransmissions of one chunk before giving up (default 50)\n"
	"  -N, --nworkers N      accept only results that sum N workers\n"
	"  -o, --out FILE        write the result, one element per line ('-': stdout)\n"
	"  -j, --json            JSON: job, id, elements, chunks, sent, retransmitted,\n"
	"                        results, duplicates, early, ignored, marks, max_retx,\n"
	"                        elapsed, checksum (FNV-1a 64 of the result, hex)\n";

const char help_ps[] =
	"Destination (parameter server) of a job: adds the contributions (CONTRIB) and\n"
	"aggregates (AGG) that reach it, each sender once per chunk, and sends a\n"
	"chunk's result down once its senders sum the job's workers. A message for a\n"
	"completed chunk gets the stored result again. Prints \"ready\" on stderr (and\n"
	"writes --ready FILE) once bound; serves until every chunk is complete and\n"
	"--linger MS passed without a message, or until SIGINT/SIGTERM with --forever.\n"
	"  -J, --job ID          job id (required)\n"
	"  -W, --workers N       total workers of the job (required)\n"
	"  -n, --elems N         vector length (required)\n"
	"  -i, --id ID           sender id of results (default 0)\n"
	"  -a, --addr ADDR       own IPv4 address to bind (default: any)\n"
	"  -d, --down ADDR       send each result once to ADDR (the root switch, or a\n"
	"                        broadcast address); port 9430\n"
	"  -u, --unicast         instead, one copy to every worker address heard from\n"
	"  -m, --members LIST    accept only these senders: ID[:NWORKERS][,...] or\n"
	"                        FIRST-LAST ranges (NWORKERS 1), e.g. 0-3,100:4\n"
	"  -c, --chunk E         elements per chunk, 1..256 (default 256)\n"
	"  -b, --base SEQ        sequence number of the first chunk (default 0)\n"
	"  -l, --linger MS       idle time served after completion (default 1000)\n"
	"      --forever         serve until SIGINT/SIGTERM\n"
	"      --ready FILE      create FILE once the socket is bound\n"
	"  -F, --float FRAC      print the result divided by 2^FRAC\n"
	"  -o, --out FILE        write the result, one element per line ('-': stdout)\n"
	"      --expect SEEDS    check the result against the sum of the random vectors\n"
	"                        of these worker seeds (as --members), prints exact\n"
	"  -j, --json            JSON: job, workers, elements, chunks, complete, done,\n"
	"                        received, contributions, aggregates, duplicates, late,\n"
	"                        results_sent, marks, dropped {reason: count}, elapsed,\n"
	"                        checksum\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/* Without SA_RESTART, so that a blocked poll() returns at once. */
static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int parse_addr(const char *opt, const char *s, struct in_addr *a)
{
	if (inet_pton(AF_INET, s, a) != 1)
		return out_err("%s: invalid IPv4 address '%s'", opt, s);
	return 0;
}

static int parse_u32(const char *opt, const char *s, uint32_t *out)
{
	uint64_t v;

	if (parse_u64(opt, s, &v))
		return 1;
	if (v > UINT32_MAX)
		return out_err("%s: invalid value '%s': need an integer in [0, %u]", opt, s,
			       UINT32_MAX);
	*out = v;
	return 0;
}

/*
 * Reads whitespace-separated numbers: int32 integers, or with frac >= 0 real
 * numbers encoded in fixed point. Returns the count, or -1 after an error.
 */
static long read_vector(const char *path, int frac, int32_t **out)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	size_t n = 0, cap = 0, sat = 0;
	int32_t *v = NULL, *nv;
	char tok[128], *end;
	long ret = -1;
	bool s;

	if (!f)
		return out_err("%s: %s", path, strerror(errno)), -1;
	while (fscanf(f, "%127s", tok) == 1) {
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				out_err("%s: out of memory", path);
				goto out;
			}
			v = nv;
		}
		errno = 0;
		if (frac >= 0) {
			double x = strtod(tok, &end);

			if (errno || end == tok || *end) {
				out_err("%s: element %zu: invalid number '%s'", path, n + 1, tok);
				goto out;
			}
			v[n++] = ia_fx_encode(x, frac, &s);
			sat += s;
		} else {
			long long x = strtoll(tok, &end, 0);

			if (errno || end == tok || *end || x < INT32_MIN || x > INT32_MAX) {
				out_err("%s: element %zu: invalid int32 '%s'", path, n + 1, tok);
				goto out;
			}
			v[n++] = x;
		}
	}
	if (ferror(f)) {
		out_err("%s: read error", path);
		goto out;
	}
	if (!n) {
		out_err("%s: no elements", path);
		goto out;
	}
	if (sat)
		out_warn("%s: %zu values saturated at the int32 range (lower --float)", path, sat);
	*out = v;
	v = NULL;
	ret = n;
out:
	free(v);
	if (f != stdin)
		fclose(f);
	return ret;
}

static int write_vector(const char *path, const int32_t *v, size_t n, int frac)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
	size_t i;
	int ret;

	if (!f)
		return out_err("%s: %s", path, strerror(errno));
	for (i = 0; i < n; i++) {
		if (frac >= 0)
			fprintf(f, "%.17g\n", ia_fx_decode(v[i], frac));
		else
			fprintf(f, "%d\n", v[i]);
	}
	ret = fflush(f) || ferror(f);
	if (f != stdout)
		ret |= fclose(f);
	return ret ? out_err("%s: write error", path) : 0;
}

static void print_checksum(const int32_t *v, size_t n)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)ia_host_checksum(v, n));
	out_str("checksum", "checksum %s\n", buf);
}

static int parse_frac(const char *s, int *frac)
{
	long v;

	if (parse_long("--float", s, 0, 30, &v))
		return 1;
	*frac = v;
	return 0;
}

enum { OPT_FOREVER = 256, OPT_READY, OPT_EXPECT };

static const struct option worker_opts[] = {
	{ "job", required_argument, NULL, 'J' },
	{ "id", required_argument, NULL, 'i' },
	{ "ps", required_argument, NULL, 'p' },
	{ "addr", required_argument, NULL, 'a' },
	{ "elems", required_argument, NULL, 'n' },
	{ "file", required_argument, NULL, 'f' },
	{ "float", required_argument, NULL, 'F' },
	{ "seed", required_argument, NULL, 's' },
	{ "chunk", required_argument, NULL, 'c' },
	{ "base", required_argument, NULL, 'b' },
	{ "window", required_argument, NULL, 'w' },
	{ "timeout", required_argument, NULL, 't' },
	{ "retries", required_argument, NULL, 'r' },
	{ "nworkers", required_argument, NULL, 'N' },
	{ "out", required_argument, NULL, 'o' },
	{ NULL }
};

int cmd_worker(int argc, char **argv)
{
	const char *file = NULL, *opath = NULL;
	struct ia_worker_cfg cfg = { 0 };
	bool have_job = false, have_id = false, have_seed = false;
	struct ia_worker_stats st;
	struct ia_worker *w = NULL;
	char err[IA_ERRLEN] = "";
	int32_t *v = NULL;
	uint64_t seed = 0, n = 0;
	int c, frac = -1, ret = 1;
	long len;

	while ((c = getopt_long(argc, argv, "+:J:i:p:a:n:f:F:s:c:b:w:t:r:N:o:h", worker_opts,
				NULL)) != -1) {
		switch (c) {
		case 'J':
			if (parse_u32("--job", optarg, &cfg.job))
				return 1;
			have_job = true;
			break;
		case 'i':
			if (parse_u32("--id", optarg, &cfg.id))
				return 1;
			have_id = true;
			break;
		case 'p':
			if (parse_addr("--ps", optarg, &cfg.ps))
				return 1;
			break;
		case 'a':
			if (parse_addr("--addr", optarg, &cfg.addr))
				return 1;
			break;
		case 'n':
			if (parse_u64("--elems", optarg, &n))
				return 1;
			if (!n || n > (uint64_t)IA_HOST_MAX_CHUNKS * IA_MAX_ELEMS)
				return out_err("--elems: invalid value '%s': need 1..%llu", optarg,
					       (unsigned long long)IA_HOST_MAX_CHUNKS *
						       IA_MAX_ELEMS);
			break;
		case 'f':
			file = optarg;
			break;
		case 'F':
			if (parse_frac(optarg, &frac))
				return 1;
			break;
		case 's':
			if (parse_u64("--seed", optarg, &seed))
				return 1;
			have_seed = true;
			break;
		case 'c':
			if (parse_u32("--chunk", optarg, &cfg.chunk))
				return 1;
			if (!cfg.chunk || cfg.chunk > IA_MAX_ELEMS)
				return out_err("--chunk: invalid value '%s': need 1..%u", optarg,
					       IA_MAX_ELEMS);
			break;
		case 'b':
			if (parse_u32("--base", optarg, &cfg.base_seq))
				return 1;
			break;
		case 'w':
			if (parse_u32("--window", optarg, &cfg.window))
				return 1;
			if (!cfg.window)
				return out_err("--window: invalid value '%s': need >= 1", optarg);
			break;
		case 't':
			if (parse_u32("--timeout", optarg, &cfg.timeout_ms))
				return 1;
			if (!cfg.timeout_ms)
				return out_err("--timeout: invalid value '%s': need >= 1", optarg);
			break;
		case 'r':
			if (parse_u32("--retries", optarg, &cfg.retries))
				return 1;
			if (!cfg.retries)
				return out_err("--retries: invalid value '%s': need >= 1", optarg);
			break;
		case 'N':
			if (parse_u32("--nworkers", optarg, &cfg.nworkers))
				return 1;
			break;
		case 'o':
			opath = optarg;
			break;
		case 'h':
			printf("Usage: inagg worker -J ID -i ID -p ADDR { -n N | -f FILE } [options]\n");
			fputs(help_worker, stdout);
			return 0;
		default:
			return bad_option(argv[0], c, optopt, argv);
		}
	}
	if (optind < argc)
		return out_err("worker: unexpected argument '%s'", argv[optind]);
	if (!have_job || !have_id || !cfg.ps.s_addr)
		return out_err("worker: --job, --id and --ps are required; try 'worker -h'");
	if (!!file == !!n)
		return out_err("worker: give one of --elems and --file");
	if (frac >= 0 && !file)
		return out_err("worker: --float needs --file");
	if (!have_seed)
		seed = cfg.id;

	if (file) {
		len = read_vector(file, frac, &v);
		if (len < 0)
			return 1;
		n = len;
	} else {
		v = malloc(n * sizeof(*v));
		if (!v)
			return out_err("out of memory");
		ia_host_fill(v, n, seed);
	}
	cfg.stop = &stop;
	catch_signals();
	if (ia_worker_open(&cfg, &w, err, sizeof(err))) {
		ret = out_err("worker: %s", err);
		goto out;
	}
	ret = ia_worker_run(w, v, v, n, err, sizeof(err));
	ia_worker_stats(w, &st);
	if (ret) {
		ret = out_err("worker %u: %s (%llu of %llu chunks done)", cfg.id, err,
			      (unsigned long long)st.results,
			      (unsigned long long)ia_host_nchunks(n, cfg.chunk ?: IA_MAX_ELEMS));
		goto out;
	}
	if (opath && write_vector(opath, v, n, frac))
		goto out;

	out_begin();
	out_uint("job", "worker job %llu", cfg.job);
	out_uint("id", " id %llu:", cfg.id);
	out_uint("elements", " %llu elements", n);
	out_uint("chunks", " in %llu chunks\n", ia_host_nchunks(n, cfg.chunk ?: IA_MAX_ELEMS));
	out_uint("sent", "sent %llu", st.sent);
	out_uint("retransmitted", "  retransmitted %llu", st.retx);
	out_uint("results", "  results %llu", st.results);
	out_uint("duplicates", "  duplicates %llu", st.dup);
	out_uint("early", "  early %llu", st.early);
	out_uint("ignored", "  ignored %llu", st.bad);
	out_uint("marks", "  marks %llu", st.marks);
	out_uint("max_retx", "  max_retx %llu\n", st.max_retx);
	out_double("elapsed", "elapsed %.6f s\n", st.elapsed);
	print_checksum(v, n);
	ret = out_end();
out:
	ia_worker_close(w);
	free(v);
	return ret;
}

/* Parses "0-3,7:2": ranges of workers (nworkers 1) or ID:NWORKERS. */
static int parse_members(const char *s, struct ia_ps_member **out, uint32_t *count)
{
	struct ia_ps_member *m = NULL, *nm;
	unsigned long long a, b, k;
	uint32_t n = 0, cap = 0;
	const char *p = s;
	char *end;

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
			m[n++] = (struct ia_ps_member){ (uint32_t)a, (uint32_t)k };
		}
		p = *end ? end + 1 : end;
	}
	if (!n)
		goto bad;
	*out = m;
	*count = n;
	return 0;
bad:
	free(m);
	return out_err("--members: invalid list '%s': need ID[:NWORKERS] or FIRST-LAST, "
		       "comma-separated",
		       s);
}

static const struct option ps_opts[] = {
	{ "job", required_argument, NULL, 'J' },
	{ "workers", required_argument, NULL, 'W' },
	{ "elems", required_argument, NULL, 'n' },
	{ "id", required_argument, NULL, 'i' },
	{ "addr", required_argument, NULL, 'a' },
	{ "down", required_argument, NULL, 'd' },
	{ "unicast", no_argument, NULL, 'u' },
	{ "members", required_argument, NULL, 'm' },
	{ "chunk", required_argument, NULL, 'c' },
	{ "base", required_argument, NULL, 'b' },
	{ "linger", required_argument, NULL, 'l' },
	{ "forever", no_argument, NULL, OPT_FOREVER },
	{ "ready", required_argument, NULL, OPT_READY },
	{ "float", required_argument, NULL, 'F' },
	{ "out", required_argument, NULL, 'o' },
	{ "expect", required_argument, NULL, OPT_EXPECT },
	{ NULL }
};

/*
 * Whether v is the sum of the random vectors (ia_host_fill) of the seeds:
 * a check, independent of the network, that every contribution was added
 * exactly once.
 */
static bool sum_of_seeds(const int32_t *v, uint64_t n, const struct ia_ps_member *seeds,
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
		ia_host_fill(x, n, seeds[i].sender);
		ia_host_add(sum, x, n);
	}
	same = !memcmp(sum, v, n * sizeof(*v));
	free(sum);
	free(x);
	return same;
}

int cmd_ps(int argc, char **argv)
{
	struct ia_ps_cfg cfg = { .linger_ms = IA_HOST_LINGER_MS };
	const char *ready = NULL, *opath = NULL;
	struct ia_ps_member *members = NULL, *seeds = NULL;
	uint32_t nseeds = 0;
	bool have_job = false, have_down = false;
	char err[IA_ERRLEN] = "";
	struct ia_ps_stats st;
	struct ia_ps *ps = NULL;
	int c, i, frac = -1, ret = 1, rc;
	FILE *f;
	long v;

	while ((c = getopt_long(argc, argv, "+:J:W:n:i:a:d:um:c:b:l:F:o:h", ps_opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'J':
			if (parse_u32("--job", optarg, &cfg.job))
				goto out;
			have_job = true;
			break;
		case 'W':
			if (parse_u32("--workers", optarg, &cfg.nworkers))
				goto out;
			if (!cfg.nworkers) {
				out_err("--workers: invalid value '%s': need >= 1", optarg);
				goto out;
			}
			break;
		case 'n':
			if (parse_u64("--elems", optarg, &cfg.nelem))
				goto out;
			if (!cfg.nelem || cfg.nelem > (uint64_t)IA_HOST_MAX_CHUNKS * IA_MAX_ELEMS) {
				out_err("--elems: invalid value '%s': need 1..%llu", optarg,
					(unsigned long long)IA_HOST_MAX_CHUNKS * IA_MAX_ELEMS);
				goto out;
			}
			break;
		case 'i':
			if (parse_u32("--id", optarg, &cfg.id))
				goto out;
			break;
		case 'a':
			if (parse_addr("--addr", optarg, &cfg.addr))
				goto out;
			break;
		case 'd':
			if (parse_addr("--down", optarg, &cfg.down))
				goto out;
			have_down = true;
			break;
		case 'u':
			cfg.down_mode = IA_PS_DOWN_UNICAST;
			break;
		case OPT_EXPECT:
			free(seeds);
			seeds = NULL;
			if (parse_members(optarg, &seeds, &nseeds))
				goto out;
			break;
		case 'm':
			free(members);
			members = NULL;
			if (parse_members(optarg, &members, &cfg.nmembers))
				goto out;
			break;
		case 'c':
			if (parse_u32("--chunk", optarg, &cfg.chunk))
				goto out;
			if (!cfg.chunk || cfg.chunk > IA_MAX_ELEMS) {
				out_err("--chunk: invalid value '%s': need 1..%u", optarg,
					IA_MAX_ELEMS);
				goto out;
			}
			break;
		case 'b':
			if (parse_u32("--base", optarg, &cfg.base_seq))
				goto out;
			break;
		case 'l':
			if (parse_long("--linger", optarg, 0, INT_MAX, &v))
				goto out;
			cfg.linger_ms = v;
			break;
		case OPT_FOREVER:
			cfg.linger_ms = -1;
			break;
		case OPT_READY:
			ready = optarg;
			break;
		case 'F':
			if (parse_frac(optarg, &frac))
				goto out;
			break;
		case 'o':
			opath = optarg;
			break;
		case 'h':
			printf("Usage: inagg ps -J ID -W N -n N { -d ADDR | -u } [options]\n");
			fputs(help_ps, stdout);
			ret = 0;
			goto out;
		default:
			bad_option(argv[0], c, optopt, argv);
			goto out;
		}
	}
	if (optind < argc) {
		out_err("ps: unexpected argument '%s'", argv[optind]);
		goto out;
	}
	if (!have_job || !cfg.nworkers || !cfg.nelem) {
		out_err("ps: --job, --workers and --elems are required; try 'ps -h'");
		goto out;
	}
	if (have_down == (cfg.down_mode == IA_PS_DOWN_UNICAST)) {
		out_err("ps: give one of --down ADDR and --unicast");
		goto out;
	}
	cfg.members = members;
	cfg.stop = &stop;
	catch_signals();
	if (ia_ps_open(&cfg, &ps, err, sizeof(err))) {
		out_err("ps: %s", err);
		goto out;
	}
	if (ready) {
		f = fopen(ready, "w");
		if (!f || fputs("ready\n", f) < 0 || fclose(f)) {
			out_err("%s: %s", ready, strerror(errno));
			goto out;
		}
	}
	out_warn("ps: ready, job %u, %llu chunks", cfg.job,
		 (unsigned long long)ia_host_nchunks(cfg.nelem, cfg.chunk ?: IA_MAX_ELEMS));
	rc = ia_ps_run(ps, err, sizeof(err));
	ia_ps_stats(ps, &st);
	if (rc && rc != -EINTR) {
		out_err("ps: %s", err);
		goto out;
	}
	if (st.done == st.chunks && opath &&
	    write_vector(opath, ia_ps_result(ps), cfg.nelem, frac))
		goto out;

	out_begin();
	out_uint("job", "ps job %llu:", cfg.job);
	out_uint("workers", " %llu workers", cfg.nworkers);
	out_uint("elements", " %llu elements", cfg.nelem);
	out_uint("chunks", " in %llu chunks\n", st.chunks);
	out_bool("complete", "complete %s", st.done == st.chunks);
	out_uint("done", "  done %llu\n", st.done);
	out_uint("received", "received %llu", st.rx);
	out_uint("contributions", "  contributions %llu", st.contrib);
	out_uint("aggregates", "  aggregates %llu", st.agg);
	out_uint("duplicates", "  duplicates %llu", st.dup);
	out_uint("late", "  late %llu", st.late);
	out_uint("results_sent", "  results_sent %llu", st.results);
	out_uint("marks", "  marks %llu\n", st.marks);
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
		print_checksum(ia_ps_result(ps), cfg.nelem);
	bool exact = st.done == st.chunks &&
		     (!seeds || sum_of_seeds(ia_ps_result(ps), cfg.nelem, seeds, nseeds));

	if (seeds)
		out_bool("exact", "exact %s\n", exact);
	out_end();
	/* Interrupted before completion, or not the expected sum: a failure. */
	ret = !exact;
	if (st.done != st.chunks) {
		out_warn("ps: interrupted with %u of %u chunks complete", st.done, st.chunks);
		ret = 1;
	}
out:
	ia_ps_close(ps);
	free(members);
	free(seeds);
	return ret;
}
