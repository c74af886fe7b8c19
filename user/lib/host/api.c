// SPDX-License-Identifier: GPL-2.0
/*
 * The stable API of libinagg.so (include/inagg/api.h): handles, options,
 * and all-reduces as a stream of chunk sequence numbers over the host
 * endpoint of host.h. Joining through the daemon is in api_join.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "inagg/api.h"
#include "api_int.h"
#include "err.h"

/* The default stream: 2^28 elements, 1 GiB of PS memory at most (4 bytes each). */
#define API_CAPACITY_DEFAULT	(1ull << 28)
#define API_RETRIES_DEFAULT	IA_HOST_RETRIES

_Static_assert(IA_API_MAX_CHUNK == IA_MAX_ELEMS && IA_API_CHUNK == IA_CHUNK_DEFAULT,
	       "api.h restates wire.h's chunk sizes");

int ia_api_version(void)
{
	return IA_API_VERSION;
}

struct ia_api *ia_handle_alloc(uint32_t job, uint32_t nworkers)
{
	struct ia_api *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->job = job;
	h->nworkers = nworkers;
	h->index = -1;
	h->retries = API_RETRIES_DEFAULT;
	h->capacity = API_CAPACITY_DEFAULT;
	h->chunk = IA_API_CHUNK;
	return h;
}

static int parse_addr(const char *what, const char *s, struct in_addr *a, char *err,
		      size_t errlen)
{
	if (!s || inet_pton(AF_INET, s, a) != 1)
		return ia_fail(err, errlen, -EINVAL, "%s address \"%s\": not an IPv4 address",
			       what, s ? s : "(none)");
	return 0;
}

/* A handle for job (checked first), or why there is none. */
static int handle_new(uint32_t job, uint32_t nworkers, struct ia_api **h, char *err,
		      size_t errlen)
{
	if (!job)
		return ia_fail(err, errlen, -EINVAL, "job 0: job ids start at 1");
	if (!nworkers)
		return ia_fail(err, errlen, -EINVAL, "a job needs at least one worker");
	*h = ia_handle_alloc(job, nworkers);
	return *h ? 0 : ia_fail(err, errlen, -ENOMEM, "out of memory");
}

/* The end of an open: h handed out, or freed on failure. */
static int handle_done(struct ia_api *h, int ret, struct ia_api **out)
{
	if (ret)
		free(h);
	else
		*out = h;
	return ret;
}

int ia_api_worker_open(uint32_t job, uint32_t id, uint32_t nworkers, const char *addr,
		       const char *ps, uint16_t port, struct ia_api **out, char *err,
		       size_t errlen)
{
	struct ia_api *h;
	int ret;

	*out = NULL;
	ret = handle_new(job, nworkers, &h, err, errlen);
	if (ret)
		return ret;
	h->id = id;
	h->port = port;
	ret = parse_addr("worker", addr, &h->addr, err, errlen);
	if (!ret)
		ret = parse_addr("PS", ps, &h->ps, err, errlen);
	return handle_done(h, ret, out);
}

int ia_api_ps_open(uint32_t job, uint32_t nworkers, const char *addr, const char *down,
		   uint16_t port, struct ia_api **out, char *err, size_t errlen)
{
	struct ia_api *h;
	int ret;

	*out = NULL;
	ret = handle_new(job, nworkers, &h, err, errlen);
	if (ret)
		return ret;
	h->is_ps = true;
	h->port = port;
	h->unicast = !down;
	ret = parse_addr("PS", addr, &h->addr, err, errlen);
	if (!ret && down)
		ret = parse_addr("down", down, &h->down, err, errlen);
	return handle_done(h, ret, out);
}

/* The options' names and ranges. */
static const struct api_opt {
	const char *name, *unit;
	uint64_t min, max;
} api_opts[] = {
	[IA_API_OPT_RETRIES] = { "retries", "", 1, 100000 },
	[IA_API_OPT_TIMEOUT_MS] = { "timeout", " ms", 1, 60000 },
	[IA_API_OPT_WINDOW] = { "window", " chunks", 1, 4096 },
	/* The PS keeps the whole stream: IA_HOST_MAX_CHUNKS chunks at most. */
	[IA_API_OPT_CAPACITY] = { "capacity", " elements", IA_API_CHUNK,
				  (uint64_t)IA_HOST_MAX_CHUNKS * IA_API_CHUNK },
	[IA_API_OPT_CHUNK] = { "chunk", " elements", 1, IA_API_MAX_CHUNK },
};

int ia_api_set(struct ia_api *h, enum ia_api_opt opt, uint64_t value, char *err,
	       size_t errlen)
{
	const struct api_opt *o;

	if (!h)
		return ia_fail(err, errlen, -EINVAL, "no handle");
	if ((unsigned int)opt >= sizeof(api_opts) / sizeof(api_opts[0]) || !api_opts[opt].name)
		return ia_fail(err, errlen, -EINVAL, "unknown option %d", (int)opt);
	o = &api_opts[opt];
	if (value < o->min || value > o->max)
		return ia_fail(err, errlen, -EINVAL, "%s %llu%s: use %llu..%llu%s", o->name,
			       (unsigned long long)value, o->unit, (unsigned long long)o->min,
			       (unsigned long long)o->max, o->unit);
	if ((opt == IA_API_OPT_CAPACITY || opt == IA_API_OPT_CHUNK) && (h->next_seq || h->serving))
		return ia_fail(err, errlen, -EINVAL, "%s: set before the first use", o->name);
	switch (opt) {
	case IA_API_OPT_RETRIES:
		h->retries = value;
		break;
	case IA_API_OPT_TIMEOUT_MS:
		h->timeout_ms = value;
		break;
	case IA_API_OPT_WINDOW:
		h->window = value;
		break;
	case IA_API_OPT_CAPACITY:
		if (value / h->chunk > IA_HOST_MAX_CHUNKS)
			return ia_fail(err, errlen, -EINVAL,
				       "capacity %llu elements: more than %u chunks of %u",
				       (unsigned long long)value, IA_HOST_MAX_CHUNKS, h->chunk);
		h->capacity = value;
		h->capacity_set = true;
		break;
	case IA_API_OPT_CHUNK:
		if (h->capacity / value > IA_HOST_MAX_CHUNKS) {
			if (h->capacity_set)
				return ia_fail(err, errlen, -EINVAL,
					       "chunk %llu: the capacity of %llu elements would be "
					       "more than %u chunks", (unsigned long long)value,
					       (unsigned long long)h->capacity, IA_HOST_MAX_CHUNKS);
			h->capacity = (uint64_t)IA_HOST_MAX_CHUNKS * value;
		}
		h->chunk = value;
		break;
	}
	return 0;
}

int ia_api_nworkers(const struct ia_api *h)
{
	return h ? (int)h->nworkers : -EINVAL;
}

int ia_api_index(const struct ia_api *h)
{
	return h ? h->index : -EINVAL;
}

/* A 32-bit tag of one call: its length, place in the stream and kind. */
static uint32_t call_tag(uint64_t n, uint64_t seq, uint32_t kind)
{
	uint64_t s = n ^ (seq << 20) ^ ((uint64_t)kind << 60);

	return (uint32_t)(ia_splitmix64(&s) >> 32) | 1;
}

/*
 * INAGG_DEBUG=1 in the environment (as NCCL_DEBUG): a line per call on
 * stderr with the worker's counters, to see why a call was slow.
 */
static bool debug_on(void)
{
	const char *env = getenv("INAGG_DEBUG");

	return env && *env && strcmp(env, "0");
}

static void debug_stats(const struct ia_api *h, const struct ia_worker *w, int ret)
{
	struct ia_worker_stats st;

	if (!debug_on())
		return;
	ia_worker_stats(w, &st);
	fprintf(stderr, "inagg: job %u worker %u call %llu: ret %d, %.3f s, sent %llu (retx %llu, "
		"by timer %llu, bypassed %llu), results %llu (dup %llu), marks %llu (ce %llu), "
		"colls %llu, nacks %llu, srtt %u us (min %u), rto %u us, cwnd %u (min %u), "
		"cuts %llu\n", h->job, h->id, (unsigned long long)h->calls, ret, st.elapsed,
		(unsigned long long)st.sent, (unsigned long long)st.retx,
		(unsigned long long)st.timeouts, (unsigned long long)st.bypassed,
		(unsigned long long)st.results, (unsigned long long)st.dup,
		(unsigned long long)st.marks, (unsigned long long)st.ce,
		(unsigned long long)st.colls, (unsigned long long)st.nacks, st.srtt_us,
		st.min_rtt_us, st.rto_us, st.cwnd, st.min_cwnd, (unsigned long long)st.cuts);
}

/* INAGG_DEBUG: the PS's counters, when it stops. */
static void debug_ps_stats(const struct ia_api *h, const struct ia_ps *ps, int ret)
{
	struct ia_ps_stats st;

	if (!debug_on())
		return;
	ia_ps_stats(ps, &st);
	fprintf(stderr, "inagg: job %u PS: ret %d, received %llu (dup %llu, late %llu: "
		"quiet %llu, deferred %llu), nacks %llu for %llu pieces, results %llu\n",
		h->job, ret, (unsigned long long)st.rx, (unsigned long long)st.dup,
		(unsigned long long)st.late, (unsigned long long)st.late_quiet,
		(unsigned long long)st.late_deferred, (unsigned long long)st.nacks,
		(unsigned long long)st.nacked, (unsigned long long)st.results);
}

/*
 * One all-reduce of words[1..1 + n) as chunks base .. base + C - 1; words[0]
 * carries the call's tag. The buffer is padded to whole chunks.
 */
int ia_api_stream(struct ia_api *h, uint64_t n, uint32_t kind, char *err, size_t errlen)
{
	uint64_t words = n + 1, nchunks = ia_host_nchunks(words, h->chunk);
	struct ia_worker_cfg cfg = {
		.job = h->job, .id = h->id, .addr = h->addr, .ps = h->ps, .port = h->port,
		.base_seq = (uint32_t)h->next_seq, .chunk = h->chunk, .window = h->window,
		.timeout_ms = h->timeout_ms, .retries = h->retries, .nworkers = h->nworkers,
		.cc = h->cc, .ps_job = h->ps_job, .report_sock = h->sock[0] ? h->sock : NULL,
		.path = &h->path, .mtu_checked = h->mtu_chunk == h->chunk,
	};
	uint32_t tag = call_tag(n, h->next_seq, kind);
	struct ia_worker *w;
	char addr[INET_ADDRSTRLEN];
	int ret;

	if (h->next_seq + nchunks > h->capacity / h->chunk)
		return ia_fail(err, errlen, -ENOSPC,
			       "job %u: its stream of %llu elements is used up (at chunk %llu); "
			       "end it and submit a new job", h->job,
			       (unsigned long long)h->capacity, (unsigned long long)h->next_seq);
	h->buf[0] = (int32_t)tag;
	memset(h->buf + words, 0, (nchunks * h->chunk - words) * sizeof(*h->buf));
	ret = ia_worker_open(&cfg, &w, err, errlen);
	/* The route's MTU: checked once per handle and chunk, not on every call. */
	if (!ret)
		h->mtu_chunk = h->chunk;
	if (ret == -EADDRNOTAVAIL) {
		inet_ntop(AF_INET, &h->addr, addr, sizeof(addr));
		return ia_fail(err, errlen, ret, "worker address %s is not on this host: run in %s",
			       addr, h->netns[0] ? h->netns : "the worker's network namespace");
	}
	if (ret)
		return ret;
	ret = ia_worker_run(w, h->buf, h->buf, nchunks * h->chunk, err, errlen);
	debug_stats(h, w, ret);
	ia_worker_close(w);
	if (ret == -ETIMEDOUT) {
		char why[IA_ERRLEN];

		snprintf(why, sizeof(why), "%s", err ? err : "");
		return ia_fail(err, errlen, ret, "job %u: no result from the network (%s)", h->job,
			       why);
	}
	if (ret)
		return ret;
	/* Every worker is past these chunks, whatever the tag says. */
	h->next_seq += nchunks;
	h->calls++;
	if ((uint32_t)h->buf[0] != tag * h->nworkers)
		return ia_fail(err, errlen, -EPROTO,
			       "job %u call %llu: the workers did not all-reduce the same length "
			       "(%llu elements here)", h->job, (unsigned long long)h->calls,
			       (unsigned long long)n);
	return 0;
}

int ia_api_worker_ready(struct ia_api *h, uint64_t n, uint64_t lanes, char *err, size_t errlen)
{
	uint64_t need;

	if (!h)
		return ia_fail(err, errlen, -EINVAL, "no handle");
	if (h->is_ps)
		return ia_fail(err, errlen, -EINVAL, "a PS handle does not all-reduce: serve it");
	if (!n)
		return ia_fail(err, errlen, -EINVAL, "empty vector");
	if (n > h->capacity / lanes)
		return ia_fail(err, errlen, -EINVAL, "%llu elements: more than the stream holds",
			       (unsigned long long)n);
	need = (n * lanes + 1 + h->chunk - 1) / h->chunk * h->chunk;
	if (need > h->bufcap) {
		int32_t *b = realloc(h->buf, need * sizeof(*b));

		if (!b)
			return ia_fail(err, errlen, -ENOMEM, "out of memory");
		h->buf = b;
		h->bufcap = need;
	}
	return 0;
}

int ia_api_allreduce_i32(struct ia_api *h, int32_t *v, uint64_t n, char *err, size_t errlen)
{
	int ret = ia_api_worker_ready(h, n, 1, err, errlen);

	if (ret)
		return ret;
	if (!v)
		return ia_fail(err, errlen, -EINVAL, "no vector");
	memcpy(h->buf + 1, v, n * sizeof(*v));
	ret = ia_api_stream(h, n, IA_API_KIND_I32, err, errlen);
	if (!ret)
		memcpy(v, h->buf + 1, n * sizeof(*v));
	return ret;
}

/* Lanes of an int64: bits 0..21 and 22..42 unsigned, 43..63 signed. */
#define L0_BITS 22
#define L1_BITS 21

int ia_api_allreduce_i64(struct ia_api *h, int64_t *v, uint64_t n, char *err, size_t errlen)
{
	int32_t *l0, *l1, *l2;
	uint64_t i;
	int ret = ia_api_worker_ready(h, n, 3, err, errlen);

	if (ret)
		return ret;
	if (!v)
		return ia_fail(err, errlen, -EINVAL, "no vector");
	/* Unsigned lanes of N workers must not carry out of 32 bits. */
	if (h->nworkers > IA_API_I64_MAX_WORKERS)
		return ia_fail(err, errlen, -EINVAL, "int64 sums of %u workers: at most %u",
			       h->nworkers, IA_API_I64_MAX_WORKERS);
	l0 = h->buf + 1;
	l1 = l0 + n;
	l2 = l1 + n;
	for (i = 0; i < n; i++) {
		uint64_t x = (uint64_t)v[i];

		l0[i] = (int32_t)(x & ((1u << L0_BITS) - 1));
		l1[i] = (int32_t)((x >> L0_BITS) & ((1u << L1_BITS) - 1));
		l2[i] = (int32_t)(v[i] >> (L0_BITS + L1_BITS));
	}
	ret = ia_api_stream(h, 3 * n, IA_API_KIND_I64, err, errlen);
	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		v[i] = (int64_t)((uint64_t)(uint32_t)l0[i] + ((uint64_t)(uint32_t)l1[i] << L0_BITS) +
				 ((uint64_t)(int64_t)l2[i] << (L0_BITS + L1_BITS)));
	return 0;
}

int ia_api_ps_serve(struct ia_api *h, volatile int *stop, char *err, size_t errlen)
{
	struct ia_ps_cfg cfg;
	struct ia_ps *ps;
	char addr[INET_ADDRSTRLEN];
	int ret;

	if (!h || !h->is_ps)
		return ia_fail(err, errlen, -EINVAL, "not a PS handle");
	cfg = (struct ia_ps_cfg){
		.job = h->job, .id = IA_SENDER_DEST, .nworkers = h->nworkers,
		.nelem = h->capacity, .addr = h->addr, .port = h->port, .chunk = h->chunk,
		.down_mode = h->unicast ? IA_PS_DOWN_UNICAST : IA_PS_DOWN_ADDR, .down = h->down,
		.linger_ms = -1, .stop = stop, .nack = true,
	};
	h->serving = true;
	ret = ia_ps_open(&cfg, &ps, err, errlen);
	if (ret == -EADDRNOTAVAIL) {
		inet_ntop(AF_INET, &h->addr, addr, sizeof(addr));
		return ia_fail(err, errlen, ret, "PS address %s is not on this host: run in %s",
			       addr, h->netns[0] ? h->netns : "the destination's network namespace");
	}
	if (ret)
		return ret;
	/* A stream never completes: being stopped is the normal end. */
	ret = ia_ps_run(ps, err, errlen);
	if (ret == -EINTR)
		ret = 0;
	debug_ps_stats(h, ps, ret);
	ia_ps_close(ps);
	return ret;
}

void ia_api_close(struct ia_api *h)
{
	if (!h)
		return;
	free(h->buf);
	free(h);
}
