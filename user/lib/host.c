// SPDX-License-Identifier: GPL-2.0
/*
 * Host endpoint: worker and destination (PS) over UDP, speaking the messages
 * of include/inagg/wire.h. One non-blocking socket each, poll() for timers,
 * recvmmsg() for batches. See host.h and docs/hosts.md.
 */
#include <endian.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "host.h"

#define MSG_MAX		(IA_HDR_LEN + 4 * IA_MAX_ELEMS)
#define RX_BATCH	64
#define SOCK_BUF	(8 << 20)
#define POLL_MAX_MS	100	/* how often a stop flag is looked at */

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t ia_host_nchunks(uint64_t n, uint32_t chunk)
{
	if (!n || !chunk)
		return 0;
	return (n + chunk - 1) / chunk;
}

int32_t ia_host_rand(uint64_t seed, uint64_t i)
{
	uint64_t s = seed * 0xd1342543de82ef95ull + i;

	return (int32_t)(uint32_t)(splitmix64(&s) >> 32);
}

void ia_host_fill(int32_t *v, size_t n, uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = ia_host_rand(seed, i);
}

void ia_host_add(int32_t *v, const int32_t *w, size_t n)
{
	size_t i;

	/* Unsigned, so that wrapping is defined. */
	for (i = 0; i < n; i++)
		v[i] = (int32_t)((uint32_t)v[i] + (uint32_t)w[i]);
}

uint64_t ia_host_checksum(const int32_t *v, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;
	int b;

	for (i = 0; i < n; i++) {
		uint32_t x = (uint32_t)v[i];

		for (b = 0; b < 4; b++) {
			h ^= (x >> (8 * b)) & 0xff;
			h *= 0x100000001b3ull;
		}
	}
	return h;
}

/* Fixed point */

int32_t ia_fx_encode(double x, unsigned int frac, bool *saturated)
{
	double s;

	if (saturated)
		*saturated = false;
	if (isnan(x))
		return 0;
	s = round(ldexp(x, frac));
	if (s > INT32_MAX || s < INT32_MIN) {
		if (saturated)
			*saturated = true;
		return s > 0 ? INT32_MAX : INT32_MIN;
	}
	return (int32_t)s;
}

double ia_fx_decode(int32_t s, unsigned int frac)
{
	return ldexp((double)s, -(int)frac);
}

size_t ia_fx_encode_vec(const double *x, int32_t *s, size_t n, unsigned int frac)
{
	size_t i, sat = 0;
	bool b;

	for (i = 0; i < n; i++) {
		s[i] = ia_fx_encode(x[i], frac, &b);
		sat += b;
	}
	return sat;
}

void ia_fx_decode_vec(const int32_t *s, double *x, size_t n, unsigned int frac)
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = ia_fx_decode(s[i], frac);
}

int ia_fx_frac_for(double max_abs, uint32_t nworkers)
{
	int f;

	if (!nworkers || isnan(max_abs) || max_abs < 0)
		return -EINVAL;
	/* Rounding adds up to 1/2 per worker: keep N * (max * 2^f + 1/2) < 2^31. */
	for (f = 30; f >= 0; f--)
		if ((double)nworkers * (ldexp(max_abs, f) + 0.5) < 2147483648.0)
			return f;
	return -ERANGE;
}

/* Sockets and (test) impaired sending */

struct tx {
	int fd;
	struct ia_host_faults f;
	uint64_t rng;
	bool held;		/* a message waiting to be sent after the next */
	size_t held_len;
	struct sockaddr_in held_to;
	uint8_t held_buf[MSG_MAX];
	uint64_t send_err;	/* transient errors (buffer full, no route) */
};

static bool faults_on(const struct ia_host_faults *f)
{
	return f->loss_ppm || f->dup_ppm || f->reorder_ppm;
}

static bool draw(struct tx *t, uint32_t ppm)
{
	return ppm && splitmix64(&t->rng) % 1000000 < ppm;
}

static int raw_send(struct tx *t, const void *buf, size_t len, const struct sockaddr_in *to)
{
	if (sendto(t->fd, buf, len, 0, (const struct sockaddr *)to, sizeof(*to)) >= 0)
		return 0;
	/* Treated as loss: the retransmission timer recovers. */
	if (errno == EAGAIN || errno == ENOBUFS || errno == EHOSTUNREACH ||
	    errno == ENETUNREACH || errno == ECONNREFUSED || errno == EINTR) {
		t->send_err++;
		return 0;
	}
	return -errno;
}

static int tx_flush(struct tx *t)
{
	if (!t->held)
		return 0;
	t->held = false;
	return raw_send(t, t->held_buf, t->held_len, &t->held_to);
}

static int tx_send(struct tx *t, const void *buf, size_t len, const struct sockaddr_in *to)
{
	int ret;

	if (!faults_on(&t->f))
		return raw_send(t, buf, len, to);
	if (draw(t, t->f.loss_ppm))
		return 0;
	if (!t->held && draw(t, t->f.reorder_ppm)) {
		memcpy(t->held_buf, buf, len);
		t->held_len = len;
		t->held_to = *to;
		t->held = true;
		return 0;
	}
	ret = raw_send(t, buf, len, to);
	if (!ret && draw(t, t->f.dup_ppm))
		ret = raw_send(t, buf, len, to);
	if (!ret)
		ret = tx_flush(t);
	return ret;
}

static int open_socket(struct in_addr addr, uint16_t port, char *err, size_t errlen)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr = addr,
	};
	int fd, v = SOCK_BUF, ret;
	char ip[INET_ADDRSTRLEN];

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(err, errlen, -errno, "socket: %s", strerror(errno));
	/* Large buffers: a window of chunks from many workers arrives at once. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
	/* A PS may send results down to a subnet's broadcast address. */
	v = 1;
	setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &v, sizeof(v));
	/*
	 * No UDP checksum (allowed for IPv4): a veth leaves it to be completed
	 * by "hardware", which never happens once XDP redirects the frame.
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &v, sizeof(v))) {
		ret = -errno;
		close(fd);
		return fail(err, errlen, ret, "SO_NO_CHECK: %s", strerror(-ret));
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		inet_ntop(AF_INET, &addr, ip, sizeof(ip));
		close(fd);
		return fail(err, errlen, ret, "bind %s:%u: %s", ip, port, strerror(-ret));
	}
	return fd;
}

void ia_hdr_fill(struct ia_hdr *h, uint8_t type, uint32_t job, uint32_t seq, uint32_t sender,
		 uint32_t nworkers, uint16_t nelem, uint8_t flags)
{
	h->ver = IA_VERSION;
	h->type = type;
	h->job = htonl(job);
	h->seq = htonl(seq);
	h->sender = htonl(sender);
	h->nworkers = htonl(nworkers);
	h->nelem = htons(nelem);
	h->flags = flags;
	h->rsvd = 0;
}

static void payload_put(uint8_t *p, const int32_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t le = htole32((uint32_t)v[i]);

		memcpy(p + 4 * i, &le, 4);
	}
}

static uint32_t payload_get(const uint8_t *p, size_t i)
{
	uint32_t le;

	memcpy(&le, p + 4 * i, 4);
	return le32toh(le);
}

/* A batch of datagrams from recvmmsg(). */
struct rx {
	struct mmsghdr mm[RX_BATCH];
	struct iovec iov[RX_BATCH];
	struct sockaddr_in from[RX_BATCH];
	uint8_t buf[RX_BATCH][MSG_MAX + 4];	/* + 4: see a longer datagram as such */
};

static void rx_init(struct rx *r)
{
	int i;

	for (i = 0; i < RX_BATCH; i++) {
		r->iov[i].iov_base = r->buf[i];
		r->iov[i].iov_len = sizeof(r->buf[i]);
		r->mm[i].msg_hdr = (struct msghdr){
			.msg_name = &r->from[i],
			.msg_namelen = sizeof(r->from[i]),
			.msg_iov = &r->iov[i],
			.msg_iovlen = 1,
		};
	}
}

/* Waits up to timeout_ms for datagrams; returns how many (0 on timeout) or -errno. */
static int rx_wait(int fd, struct rx *r, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int i, n;

	n = poll(&p, 1, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (n == 0)
		return 0;
	for (i = 0; i < RX_BATCH; i++)
		r->mm[i].msg_hdr.msg_namelen = sizeof(r->from[i]);
	n = recvmmsg(fd, r->mm, RX_BATCH, MSG_DONTWAIT, NULL);
	if (n < 0)
		return (errno == EAGAIN || errno == EINTR) ? 0 : -errno;
	return n;
}

static int ms_until(uint64_t t, uint64_t now)
{
	uint64_t d;

	if (t <= now)
		return 0;
	d = (t - now + 999999) / 1000000;
	return d > POLL_MAX_MS ? POLL_MAX_MS : (int)d;
}

/* Worker */

enum { CH_UNSENT, CH_INFLIGHT, CH_DONE };

struct wchunk {
	uint32_t gen;		/* sends so far; a timer entry is live iff its gen matches */
	uint8_t state;
};

struct timer {
	uint32_t idx;
	uint32_t gen;
	uint64_t deadline;
};

struct ia_worker {
	struct ia_worker_cfg cfg;
	struct sockaddr_in ps;
	struct tx tx;
	uint64_t rng;		/* timer jitter */
	struct ia_worker_stats st;
	struct rx rx;
};

int ia_worker_open(const struct ia_worker_cfg *cfg, struct ia_worker **out, char *err,
		   size_t errlen)
{
	struct ia_worker *w;
	int fd;

	if (cfg->chunk > IA_MAX_ELEMS)
		return fail(err, errlen, -EINVAL, "chunk of %u elements: at most %u", cfg->chunk,
			    IA_MAX_ELEMS);
	if (!cfg->ps.s_addr)
		return fail(err, errlen, -EINVAL, "no destination (PS) address");
	w = calloc(1, sizeof(*w));
	if (!w)
		return fail(err, errlen, -ENOMEM, "out of memory");
	w->cfg = *cfg;
	if (!w->cfg.port)
		w->cfg.port = IA_UDP_PORT;
	if (!w->cfg.chunk)
		w->cfg.chunk = IA_MAX_ELEMS;
	if (!w->cfg.window)
		w->cfg.window = IA_HOST_WINDOW;
	if (!w->cfg.timeout_ms)
		w->cfg.timeout_ms = IA_HOST_TIMEOUT_MS;
	if (!w->cfg.retries)
		w->cfg.retries = IA_HOST_RETRIES;
	fd = open_socket(cfg->addr, w->cfg.port, err, errlen);
	if (fd < 0) {
		free(w);
		return fd;
	}
	w->ps = (struct sockaddr_in){
		.sin_family = AF_INET,
		.sin_port = htons(w->cfg.port),
		.sin_addr = cfg->ps,
	};
	w->tx.fd = fd;
	w->tx.f = cfg->faults;
	w->tx.rng = cfg->faults.seed;
	w->rng = ((uint64_t)cfg->job << 32 | cfg->id) ^ now_ns();
	rx_init(&w->rx);
	*out = w;
	return 0;
}

void ia_worker_close(struct ia_worker *w)
{
	if (!w)
		return;
	close(w->tx.fd);
	free(w);
}

void ia_worker_stats(const struct ia_worker *w, struct ia_worker_stats *st)
{
	*st = w->st;
}

struct wrun {
	struct ia_worker *w;
	const int32_t *in;
	int32_t *out;
	size_t n;
	uint64_t nchunks;
	struct wchunk *ch;
	struct timer *q;	/* ring of nchunks entries: at most one live per chunk */
	uint64_t qhead, qlen;
	uint64_t done, inflight;
	double cwnd;		/* effective window, <= cfg.window */
	uint64_t last_cut;	/* when cwnd was last halved */
};

static uint32_t chunk_len(uint64_t n, uint32_t chunk, uint64_t idx)
{
	uint64_t off = idx * chunk;

	return n - off < chunk ? (uint32_t)(n - off) : chunk;
}

static int worker_send(struct wrun *r, uint64_t idx, uint8_t flags, uint64_t now)
{
	struct ia_worker *w = r->w;
	uint32_t len = chunk_len(r->n, w->cfg.chunk, idx);
	uint8_t buf[MSG_MAX] __attribute__((aligned(4)));
	struct wchunk *c = &r->ch[idx];
	uint64_t rto;
	struct timer *t;

	ia_hdr_fill((struct ia_hdr *)buf, IA_MSG_CONTRIB, w->cfg.job, w->cfg.base_seq + (uint32_t)idx,
		    w->cfg.id, 1, len, flags);
	payload_put(buf + IA_HDR_LEN, r->in + idx * w->cfg.chunk, len);
	c->gen++;
	c->state = CH_INFLIGHT;
	/*
	 * Exponential backoff (up to 8x) with +-25% jitter: retransmissions
	 * of workers that lost the same burst must not collide again and again.
	 */
	rto = (uint64_t)w->cfg.timeout_ms * 1000000ull << (c->gen < 4 ? c->gen - 1 : 3);
	rto = rto * 3 / 4 + splitmix64(&w->rng) % (rto / 2 + 1);
	t = &r->q[(r->qhead + r->qlen++) % r->nchunks];
	*t = (struct timer){ idx, c->gen, now + rto };
	w->st.sent++;
	if (flags & IA_F_RETX)
		w->st.retx++;
	return tx_send(&w->tx, buf, IA_HDR_LEN + 4 * len, &w->ps);
}

static void worker_recv(struct wrun *r, const uint8_t *buf, size_t len, uint64_t t0)
{
	const struct ia_hdr *h = (const struct ia_hdr *)buf;
	struct ia_worker *w = r->w;
	uint32_t seq, nelem, i;
	uint64_t idx;
	int32_t *dst;

	if (len < IA_HDR_LEN || h->ver != IA_VERSION || h->type != IA_MSG_RESULT ||
	    ntohl(h->job) != w->cfg.job)
		goto bad;
	seq = ntohl(h->seq);
	nelem = ntohs(h->nelem);
	idx = (uint32_t)(seq - w->cfg.base_seq);
	if (idx >= r->nchunks || nelem != chunk_len(r->n, w->cfg.chunk, idx) ||
	    len != IA_HDR_LEN + 4 * nelem)
		goto bad;
	if (w->cfg.nworkers && ntohl(h->nworkers) != w->cfg.nworkers)
		goto bad;
	if (r->ch[idx].state == CH_DONE) {
		w->st.dup++;
		return;
	}
	if (r->ch[idx].state == CH_UNSENT) {
		/* Cannot be ours: the sum needs this worker's contribution. */
		w->st.early++;
		return;
	}
	dst = r->out + idx * w->cfg.chunk;
	for (i = 0; i < nelem; i++)
		dst[i] = (int32_t)payload_get(buf + IA_HDR_LEN, i);
	r->ch[idx].state = CH_DONE;
	r->done++;
	r->inflight--;
	w->st.results++;
	/* Additive increase: one chunk per window of results. */
	r->cwnd += 1.0 / r->cwnd;
	if (r->cwnd > w->cfg.window)
		r->cwnd = w->cfg.window;
	w->st.elapsed = (now_ns() - t0) / 1e9;
	if (h->flags & IA_F_MARK) {
		/*
		 * Congestion on the way. Hook for INA-aware congestion control
		 * (FlexINA, a later issue): shrink the window here.
		 */
		w->st.marks++;
	}
	return;
bad:
	w->st.bad++;
}

int ia_worker_run(struct ia_worker *w, const int32_t *in, int32_t *out, size_t n, char *err,
		  size_t errlen)
{
	struct wrun r = { .w = w, .in = in, .out = out, .n = n };
	uint64_t next = 0, t0, now;
	int i, k, ret = 0;

	r.nchunks = ia_host_nchunks(n, w->cfg.chunk);
	if (!r.nchunks)
		return fail(err, errlen, -EINVAL, "empty vector");
	if (r.nchunks > IA_HOST_MAX_CHUNKS)
		return fail(err, errlen, -E2BIG, "%llu chunks: at most %u",
			    (unsigned long long)r.nchunks, IA_HOST_MAX_CHUNKS);
	r.ch = calloc(r.nchunks, sizeof(*r.ch));
	r.q = calloc(r.nchunks, sizeof(*r.q));
	if (!r.ch || !r.q) {
		ret = fail(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	memset(&w->st, 0, sizeof(w->st));
	r.cwnd = w->cfg.window;
	t0 = now_ns();
	while (r.done < r.nchunks) {
		if (w->cfg.stop && *w->cfg.stop) {
			ret = fail(err, errlen, -EINTR, "interrupted");
			goto out;
		}
		now = now_ns();
		while (r.inflight < (uint64_t)r.cwnd && next < r.nchunks) {
			ret = worker_send(&r, next++, 0, now);
			if (ret)
				goto send_err;
			r.inflight++;
		}
		/* Expired timers, oldest first; stale entries are skipped. */
		while (r.qlen) {
			struct timer t = r.q[r.qhead];
			struct wchunk *c = &r.ch[t.idx];

			if (c->state == CH_INFLIGHT && c->gen == t.gen && t.deadline > now)
				break;
			r.qhead = (r.qhead + 1) % r.nchunks;
			r.qlen--;
			if (c->state != CH_INFLIGHT || c->gen != t.gen)
				continue;
			if (c->gen > w->cfg.retries) {
				ret = fail(err, errlen, -ETIMEDOUT,
					   "chunk %u: no result after %u retransmissions",
					   w->cfg.base_seq + t.idx, w->cfg.retries);
				goto out;
			}
			/* A loss: halve the window, at most once per timeout. */
			if (now - r.last_cut >= w->cfg.timeout_ms * 1000000ull) {
				r.cwnd = r.cwnd / 2 < 1 ? 1 : r.cwnd / 2;
				r.last_cut = now;
			}
			ret = worker_send(&r, t.idx, IA_F_RETX, now);
			if (ret)
				goto send_err;
			if (c->gen - 1 > w->st.max_retx)
				w->st.max_retx = c->gen - 1;
		}
		ret = tx_flush(&w->tx);
		if (ret)
			goto send_err;
		k = rx_wait(w->tx.fd, &w->rx,
			    r.qlen ? ms_until(r.q[r.qhead].deadline, now) : POLL_MAX_MS);
		if (k < 0) {
			ret = fail(err, errlen, k, "receive: %s", strerror(-k));
			goto out;
		}
		for (i = 0; i < k; i++)
			worker_recv(&r, w->rx.buf[i], w->rx.mm[i].msg_len, t0);
	}
	ret = 0;
	goto out;
send_err:
	fail(err, errlen, ret, "send: %s", strerror(-ret));
out:
	free(r.ch);
	free(r.q);
	return ret;
}

/* Destination (PS) */

struct pchunk {
	uint8_t state;		/* CH_UNSENT (nothing yet), CH_INFLIGHT (open), CH_DONE */
	uint8_t flags;		/* IA_F_MARK seen in an accepted contribution */
	uint32_t nworkers;	/* sum over distinct senders */
	uint32_t nsenders, cap;
	uint32_t *senders;	/* freed on completion: anything later is "late" */
};

struct ia_ps {
	struct ia_ps_cfg cfg;
	struct ia_ps_member *members;
	uint64_t nchunks;
	struct pchunk *ch;
	int32_t *sum;
	struct sockaddr_in down;
	struct sockaddr_in *waddr;	/* unicast: worker addresses heard from */
	uint32_t nwaddr, capwaddr;
	struct tx tx;
	struct ia_ps_stats st;
	uint64_t t_first;
	struct rx rx;
};

static const char *const drop_names[IA_PS_DROP__COUNT] = {
	[IA_PS_DROP_SHORT] = "short",	[IA_PS_DROP_VERSION] = "version",
	[IA_PS_DROP_TYPE] = "type",	[IA_PS_DROP_JOB] = "job",
	[IA_PS_DROP_NELEM] = "nelem",	[IA_PS_DROP_MEMBER] = "member",
	[IA_PS_DROP_WINDOW] = "window", [IA_PS_DROP_OVER] = "over",
};

const char *ia_ps_drop_name(enum ia_ps_drop d)
{
	return d < IA_PS_DROP__COUNT ? drop_names[d] : "?";
}

int ia_ps_open(const struct ia_ps_cfg *cfg, struct ia_ps **out, char *err, size_t errlen)
{
	struct ia_ps *ps;
	uint32_t chunk = cfg->chunk ? cfg->chunk : IA_MAX_ELEMS;
	uint64_t nchunks;
	int fd, ret;
	uint32_t i;

	if (cfg->chunk > IA_MAX_ELEMS)
		return fail(err, errlen, -EINVAL, "chunk of %u elements: at most %u", cfg->chunk,
			    IA_MAX_ELEMS);
	if (!cfg->nworkers)
		return fail(err, errlen, -EINVAL, "the job needs at least one worker");
	nchunks = ia_host_nchunks(cfg->nelem, chunk);
	if (!nchunks)
		return fail(err, errlen, -EINVAL, "empty vector");
	if (nchunks > IA_HOST_MAX_CHUNKS)
		return fail(err, errlen, -E2BIG, "%llu chunks: at most %u",
			    (unsigned long long)nchunks, IA_HOST_MAX_CHUNKS);
	if (cfg->down_mode == IA_PS_DOWN_ADDR && !cfg->down.s_addr)
		return fail(err, errlen, -EINVAL, "no down address for results (or use unicast)");
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return fail(err, errlen, -ENOMEM, "out of memory");
	ps->cfg = *cfg;
	ps->cfg.chunk = chunk;
	if (!ps->cfg.port)
		ps->cfg.port = IA_UDP_PORT;
	ps->nchunks = nchunks;
	ps->ch = calloc(nchunks, sizeof(*ps->ch));
	ps->sum = calloc(cfg->nelem, sizeof(*ps->sum));
	if (cfg->nmembers)
		ps->members = calloc(cfg->nmembers, sizeof(*ps->members));
	if (!ps->ch || !ps->sum || (cfg->nmembers && !ps->members)) {
		ret = fail(err, errlen, -ENOMEM, "out of memory");
		goto err;
	}
	for (i = 0; i < cfg->nmembers; i++) {
		if (!cfg->members[i].nworkers) {
			ret = fail(err, errlen, -EINVAL, "member %u: nworkers must be >= 1",
				   cfg->members[i].sender);
			goto err;
		}
		ps->members[i] = cfg->members[i];
	}
	ps->cfg.members = ps->members;
	ps->down = (struct sockaddr_in){
		.sin_family = AF_INET,
		.sin_port = htons(ps->cfg.port),
		.sin_addr = cfg->down,
	};
	fd = open_socket(cfg->addr, ps->cfg.port, err, errlen);
	if (fd < 0) {
		ret = fd;
		goto err;
	}
	ps->tx.fd = fd;
	ps->tx.f = cfg->faults;
	ps->tx.rng = cfg->faults.seed;
	ps->st.chunks = nchunks;
	rx_init(&ps->rx);
	*out = ps;
	return 0;
err:
	free(ps->members);
	free(ps->sum);
	free(ps->ch);
	free(ps);
	return ret;
}

void ia_ps_close(struct ia_ps *ps)
{
	uint64_t i;

	if (!ps)
		return;
	close(ps->tx.fd);
	for (i = 0; i < ps->nchunks; i++)
		free(ps->ch[i].senders);
	free(ps->waddr);
	free(ps->members);
	free(ps->sum);
	free(ps->ch);
	free(ps);
}

const int32_t *ia_ps_result(const struct ia_ps *ps)
{
	return ps->sum;
}

void ia_ps_stats(const struct ia_ps *ps, struct ia_ps_stats *st)
{
	*st = ps->st;
}

static const struct ia_ps_member *ps_member(const struct ia_ps *ps, uint32_t sender)
{
	uint32_t i;

	for (i = 0; i < ps->cfg.nmembers; i++)
		if (ps->members[i].sender == sender)
			return &ps->members[i];
	return NULL;
}

static int ps_learn(struct ia_ps *ps, const struct sockaddr_in *from)
{
	struct sockaddr_in *n;
	uint32_t i;

	for (i = 0; i < ps->nwaddr; i++)
		if (ps->waddr[i].sin_addr.s_addr == from->sin_addr.s_addr &&
		    ps->waddr[i].sin_port == from->sin_port)
			return 0;
	if (ps->nwaddr == ps->capwaddr) {
		n = realloc(ps->waddr, (ps->capwaddr * 2 + 4) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		ps->waddr = n;
		ps->capwaddr = ps->capwaddr * 2 + 4;
	}
	ps->waddr[ps->nwaddr++] = *from;
	return 0;
}

/* Sends chunk idx's result down, or only to one host (a late worker) if to != NULL. */
static int ps_send_result(struct ia_ps *ps, uint64_t idx, const struct sockaddr_in *to)
{
	uint32_t len = chunk_len(ps->cfg.nelem, ps->cfg.chunk, idx);
	uint8_t buf[MSG_MAX] __attribute__((aligned(4)));
	size_t mlen = IA_HDR_LEN + 4 * len;
	uint32_t i;
	int ret;

	ia_hdr_fill((struct ia_hdr *)buf, IA_MSG_RESULT, ps->cfg.job,
		    ps->cfg.base_seq + (uint32_t)idx, ps->cfg.id, ps->cfg.nworkers, len,
		    ps->ch[idx].flags & IA_F_MARK);
	payload_put(buf + IA_HDR_LEN, ps->sum + idx * ps->cfg.chunk, len);
	if (ps->cfg.down_mode == IA_PS_DOWN_ADDR) {
		ps->st.results++;
		return tx_send(&ps->tx, buf, mlen, &ps->down);
	}
	if (to) {
		ps->st.results++;
		return tx_send(&ps->tx, buf, mlen, to);
	}
	for (i = 0; i < ps->nwaddr; i++) {
		ps->st.results++;
		ret = tx_send(&ps->tx, buf, mlen, &ps->waddr[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int ps_drop(struct ia_ps *ps, enum ia_ps_drop why)
{
	ps->st.drop[why]++;
	return 0;
}

static int ps_recv(struct ia_ps *ps, const uint8_t *buf, size_t len,
		   const struct sockaddr_in *from)
{
	const struct ia_hdr *h = (const struct ia_hdr *)buf;
	const struct ia_ps_member *m;
	uint32_t sender, nw, nelem, i;
	struct pchunk *c;
	bool unicast = ps->cfg.down_mode == IA_PS_DOWN_UNICAST;
	uint64_t idx;
	int32_t *dst;
	int ret;

	ps->st.rx++;
	if (len < IA_HDR_LEN)
		return ps_drop(ps, IA_PS_DROP_SHORT);
	if (h->ver != IA_VERSION)
		return ps_drop(ps, IA_PS_DROP_VERSION);
	if (h->type != IA_MSG_CONTRIB && h->type != IA_MSG_AGG)
		return ps_drop(ps, IA_PS_DROP_TYPE);
	if (ntohl(h->job) != ps->cfg.job)
		return ps_drop(ps, IA_PS_DROP_JOB);
	nelem = ntohs(h->nelem);
	if (!nelem || nelem > IA_MAX_ELEMS)
		return ps_drop(ps, IA_PS_DROP_NELEM);
	if (len < IA_HDR_LEN + 4 * nelem)
		return ps_drop(ps, IA_PS_DROP_SHORT);
	if (len != IA_HDR_LEN + 4 * nelem)
		return ps_drop(ps, IA_PS_DROP_NELEM);
	idx = (uint32_t)(ntohl(h->seq) - ps->cfg.base_seq);
	if (idx >= ps->nchunks)
		return ps_drop(ps, IA_PS_DROP_WINDOW);
	if (nelem != chunk_len(ps->cfg.nelem, ps->cfg.chunk, idx))
		return ps_drop(ps, IA_PS_DROP_NELEM);
	sender = ntohl(h->sender);
	nw = ntohl(h->nworkers);
	if (!nw)
		return ps_drop(ps, IA_PS_DROP_MEMBER);
	if (ps->cfg.nmembers) {
		m = ps_member(ps, sender);
		if (!m || m->nworkers != nw)
			return ps_drop(ps, IA_PS_DROP_MEMBER);
	}
	if (unicast && h->type == IA_MSG_CONTRIB) {
		ret = ps_learn(ps, from);
		if (ret)
			return ret;
	}
	c = &ps->ch[idx];
	if (c->state == CH_DONE) {
		/* A retransmission that missed the result: send it again, count nothing. */
		ps->st.late++;
		return ps_send_result(ps, idx,
				      unicast && h->type == IA_MSG_CONTRIB ? from : NULL);
	}
	for (i = 0; i < c->nsenders; i++)
		if (c->senders[i] == sender) {
			ps->st.dup++;
			return 0;
		}
	if (nw > ps->cfg.nworkers - c->nworkers)
		return ps_drop(ps, IA_PS_DROP_OVER);
	if (c->nsenders == c->cap) {
		uint32_t cap = c->cap ? 2 * c->cap : 4;
		uint32_t *s = realloc(c->senders, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		c->senders = s;
		c->cap = cap;
	}
	c->senders[c->nsenders++] = sender;
	c->state = CH_INFLIGHT;
	c->nworkers += nw;
	if (!ps->t_first)
		ps->t_first = now_ns();
	if (h->type == IA_MSG_CONTRIB)
		ps->st.contrib++;
	else
		ps->st.agg++;
	if (h->flags & IA_F_MARK) {
		ps->st.marks++;
		c->flags |= IA_F_MARK;
	}
	dst = ps->sum + idx * ps->cfg.chunk;
	for (i = 0; i < nelem; i++)
		dst[i] = (int32_t)((uint32_t)dst[i] + payload_get(buf + IA_HDR_LEN, i));
	if (c->nworkers < ps->cfg.nworkers)
		return 0;
	c->state = CH_DONE;
	free(c->senders);
	c->senders = NULL;
	c->nsenders = c->cap = 0;
	ps->st.done++;
	ps->st.elapsed = (now_ns() - ps->t_first) / 1e9;
	return ps_send_result(ps, idx, NULL);
}

int ia_ps_run(struct ia_ps *ps, char *err, size_t errlen)
{
	uint64_t idle_since = 0, now;
	int i, k, ret, wait;

	for (;;) {
		if (ps->cfg.stop && *ps->cfg.stop) {
			if (ps->st.done == ps->nchunks)
				return 0;
			return fail(err, errlen, -EINTR, "interrupted with %u of %u chunks complete",
				    ps->st.done, ps->st.chunks);
		}
		ret = tx_flush(&ps->tx);
		if (ret)
			return fail(err, errlen, ret, "send: %s", strerror(-ret));
		now = now_ns();
		wait = POLL_MAX_MS;
		if (ps->st.done == ps->nchunks && ps->cfg.linger_ms >= 0) {
			uint64_t end;

			if (!idle_since)
				idle_since = now;
			end = idle_since + ps->cfg.linger_ms * 1000000ull;
			if (now >= end)
				return 0;
			wait = ms_until(end, now);
		}
		k = rx_wait(ps->tx.fd, &ps->rx, wait);
		if (k < 0)
			return fail(err, errlen, k, "receive: %s", strerror(-k));
		for (i = 0; i < k; i++) {
			ret = ps_recv(ps, ps->rx.buf[i], ps->rx.mm[i].msg_len, &ps->rx.from[i]);
			if (ret)
				return fail(err, errlen, ret, "%s", strerror(-ret));
		}
		if (k)
			idle_since = 0;
	}
}
