// SPDX-License-Identifier: GPL-2.0
/*
 * Live AllReduce through one blue switch: NW worker namespaces send real UDP
 * contributions from threads pinned to alternate CPUs, the switch namespace
 * aggregates in XDP and sends one aggregate per chunk to the PS namespace,
 * whose results the switch replicates back down. Workers keep a window of
 * chunks in flight and retransmit on timeout. Every result is checked
 * element by element; the switch's counters must account for every message.
 */
#include <pthread.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* The harness compares expected literals (int) with unsigned values. */
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "xdp.h"
#include "xdp_common.h"

#define NW		4	/* workers */
#define NCHUNKS		4000
#define NELEM		IA_MAX_ELEMS	/* the largest chunk ... */
#define MTU		IA_MTU(NELEM)	/* ... on links that take it */
#define WIN		32	/* chunks in flight per worker */
#define SLOTS		64	/* switch window: > WIN */
#define JOB		7
#define SELF_ID		900
#define SENDER(i)	(100 + (i))
#define RETX_MS		20

struct live {
	char sw[32], ps[32], w[NW][32];
	struct ia_xdp *x;
	int port[NW], up;
	atomic_int stop;
	int loss;			/* percent of sends dropped, and duplicated */
	/* results */
	atomic_long bad;		/* wrong vectors or headers seen anywhere */
	long sent[NW], retx[NW], got[NW];
	long ps_rx, ps_chunks;
	unsigned char ps_seen[NCHUNKS];
};

static void lv_cleanup(struct live *l)
{
	int i;

	if (l->x) {
		ia_xdp_close(l->x);
		l->x = NULL;
	}
	ia_xdp_unpin(l->sw);
	sh("ip netns del %s 2>/dev/null", l->sw);
	sh("ip netns del %s 2>/dev/null", l->ps);
	for (i = 0; i < NW; i++)
		sh("ip netns del %s 2>/dev/null", l->w[i]);
}

static int attach_pass(const char *ns)
{
	struct ia_xdp *h;
	int err;

	err = enter_ns(ns);
	if (err)
		return err;
	err = ia_xdp_open(NULL, &h, NULL, 0);
	if (err)
		return err;
	/* The program stays attached after h is closed. */
	err = ia_xdp_attach_pass(h, if_nametoindex("h"), XDP_FLAGS_DRV_MODE, NULL, 0);
	ia_xdp_close(h);
	return err;
}

static int lv_setup(struct live *l)
{
	struct ia_sender m[NW];
	struct ia_xdp_hop down[NW] = {};
	struct ia_xdp_job j = {
		.id = JOB, .role = IA_ROLE_BLUE, .window = SLOTS, .self_id = SELF_ID,
		.nmembers = NW, .members = m, .ndown = NW, .down = down,
		.up = { .saddr = inet_addr("10.77.0.2"), .daddr = inet_addr("10.77.0.1") },
	};
	char name[16], mac[32];
	int i, err, home = netns_save();

	if (home < 0)
		return -errno;
	if (sh("ip netns add %s && ip netns add %s", l->sw, l->ps))
		return -EIO;
	if (sh("ip -n %s link add u0 mtu %d address 02:00:00:00:03:00 type veth peer name h "
	       "mtu %d address 02:00:00:00:04:00 netns %s", l->sw, MTU, MTU, l->ps) ||
	    sh("ip -n %s link set dev u0 up && ip -n %s link set dev h up && "
	       "ip -n %s addr add 10.77.0.1/24 dev h && "
	       "ip -n %s neigh add 10.77.0.2 lladdr 02:00:00:00:03:00 dev h",
	       l->sw, l->ps, l->ps, l->ps))
		return -EIO;
	for (i = 0; i < NW; i++) {
		if (sh("ip netns add %s", l->w[i]) ||
		    sh("ip -n %s link add s%d mtu %d address 02:00:00:00:02:%02x type veth peer "
		       "name h mtu %d address 02:00:00:00:01:%02x netns %s", l->sw, i, MTU, i, MTU, i,
		       l->w[i]) ||
		    sh("ip -n %s link set dev s%d up && ip -n %s link set dev h up && "
		       "ip -n %s addr add 10.77.0.%d/24 dev h && "
		       "ip -n %s neigh add 10.77.0.1 lladdr 02:00:00:00:02:%02x dev h",
		       l->sw, i, l->w[i], l->w[i], 10 + i, l->w[i], i))
			return -EIO;
	}

	err = enter_ns(l->sw);
	if (err)
		goto out;
	err = ia_xdp_open(l->sw, &l->x, NULL, 0);
	if (err)
		goto out;
	l->up = if_nametoindex("u0");
	err = ia_xdp_attach(l->x, l->up, XDP_FLAGS_DRV_MODE, NULL, 0);
	for (i = 0; i < NW && !err; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		l->port[i] = if_nametoindex(name);
		err = ia_xdp_attach(l->x, l->port[i], XDP_FLAGS_DRV_MODE, NULL, 0);
		m[i].id = SENDER(i);
		m[i].nworkers = 1;
		down[i].ifindex = l->port[i];
		snprintf(mac, sizeof(mac), "02:00:00:00:02:%02x", i);
		parse_mac(mac, down[i].smac);
		snprintf(mac, sizeof(mac), "02:00:00:00:01:%02x", i);
		parse_mac(mac, down[i].dmac);
		snprintf(mac, sizeof(mac), "10.77.0.%d", 10 + i);
		down[i].daddr = inet_addr(mac);
	}
	if (err)
		goto out;
	j.up.ifindex = l->up;
	parse_mac("02:00:00:00:03:00", j.up.smac);
	parse_mac("02:00:00:00:04:00", j.up.dmac);
	err = ia_xdp_job_add(l->x, &j, NULL, 0);
	if (err)
		goto out;
	/* Host ends receive redirected frames: they need an XDP program. */
	err = attach_pass(l->ps);
	for (i = 0; i < NW && !err; i++)
		err = attach_pass(l->w[i]);
out:
	if (setns(home, CLONE_NEWNET) && !err)
		err = -errno;
	close(home);
	return err;
}

static int udp_sock(const char *ns, int cpu)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(IA_UDP_PORT) };
	int one = 1, buf = 4 << 20, fd;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) || enter_ns(ns))
		return -1;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* Checksum 0: a partial (offloaded) checksum would not survive XDP. */
	setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

struct msg {
	struct ia_hdr h;
	__s32 v[NELEM];
} __attribute__((packed));

static void fill(struct msg *m, __u8 type, __u32 seq, __u32 sender, __u32 nw, __u8 flags)
{
	ia_hdr_fill(&m->h, type, JOB, seq, sender, nw, NELEM, flags);
}

/* A received aggregate or result must be exactly the sum of all workers. */
static bool check_sum(const struct msg *m, __u8 type, __u32 sender, ssize_t n)
{
	__u32 q = ntohl(m->h.seq), e, i, want;

	if (n != sizeof(*m) || m->h.type != type || ntohl(m->h.job) != JOB ||
	    ntohl(m->h.nworkers) != NW || ntohs(m->h.nelem) != NELEM || q >= NCHUNKS ||
	    (sender != ~0u && ntohl(m->h.sender) != sender))
		return false;
	for (e = 0; e < NELEM; e++) {
		want = 0;
		for (i = 0; i < NW; i++)
			want += (__u32)contrib_val(SENDER(i), q, e);
		if ((__u32)le32toh(m->v[e]) != want)
			return false;
	}
	return true;
}

struct warg {
	struct live *l;
	int i;
};

/*
 * Sends m, or loses it, or sends it twice, as the lossy variant asks: the
 * host does what netem would (not available here), so every switch path
 * for loss and duplication is taken. Returns the copies sent.
 */
static int lossy_send(struct live *l, unsigned int *seed, int fd, const void *m, size_t len,
		      const struct sockaddr_in *to)
{
	int r = l->loss ? (int)(rand_r(seed) % 100) : 100, n = 0, copies;

	copies = r < l->loss ? 0 : r < 2 * l->loss ? 2 : 1;
	while (copies--)
		if (sendto(fd, m, len, 0, (const struct sockaddr *)to, sizeof(*to)) == (ssize_t)len)
			n++;
	return n;
}

static void *worker(void *arg)
{
	struct warg *wa = arg;
	struct live *l = wa->l;
	int i = wa->i, fd = udp_sock(l->w[i], i % 2), e;
	struct sockaddr_in ps = { .sin_family = AF_INET, .sin_port = htons(IA_UDP_PORT) };
	static __thread unsigned char got[NCHUNKS];
	struct pollfd p = { .events = POLLIN };
	unsigned int seed = 1 + i;
	__u32 base = 0, next = 0, q;
	struct msg m, r;
	ssize_t n;

	if (fd < 0) {
		atomic_fetch_add(&l->bad, 1);
		return NULL;
	}
	p.fd = fd;
	ps.sin_addr.s_addr = inet_addr("10.77.0.1");
	memset(got, 0, sizeof(got));
	while (base < NCHUNKS) {
		for (; next < NCHUNKS && next < base + WIN; next++) {
			fill(&m, IA_MSG_CONTRIB, next, SENDER(i), 1, 0);
			for (e = 0; e < NELEM; e++)
				m.v[e] = (__s32)htole32((__u32)contrib_val(SENDER(i), next, e));
			l->sent[i] += lossy_send(l, &seed, fd, &m, sizeof(m), &ps);
		}
		if (poll(&p, 1, RETX_MS) <= 0) {
			/* Timeout: resend what has no result yet. */
			for (q = base; q < next; q++) {
				if (got[q])
					continue;
				fill(&m, IA_MSG_CONTRIB, q, SENDER(i), 1, IA_F_RETX);
				for (e = 0; e < NELEM; e++)
					m.v[e] = (__s32)htole32((__u32)contrib_val(SENDER(i), q, e));
				n = lossy_send(l, &seed, fd, &m, sizeof(m), &ps);
				l->sent[i] += n;
				l->retx[i] += n;
			}
			continue;
		}
		while ((n = recv(fd, &r, sizeof(r), MSG_DONTWAIT)) > 0) {
			if (!check_sum(&r, IA_MSG_RESULT, ~0u, n)) {
				atomic_fetch_add(&l->bad, 1);
				continue;
			}
			q = ntohl(r.h.seq);
			if (!got[q]) {
				got[q] = 1;
				l->got[i]++;
			}
		}
		while (base < NCHUNKS && got[base])
			base++;
	}
	close(fd);
	return NULL;
}

static void *ps_thread(void *arg)
{
	struct live *l = arg;
	int fd = udp_sock(l->ps, 0);
	struct sockaddr_in sw = { .sin_family = AF_INET, .sin_port = htons(IA_UDP_PORT) };
	struct pollfd p = { .events = POLLIN };
	unsigned int seed = 99;
	struct msg m;
	ssize_t n;
	__u32 q;

	if (fd < 0) {
		atomic_fetch_add(&l->bad, 1);
		return NULL;
	}
	p.fd = fd;
	sw.sin_addr.s_addr = inet_addr("10.77.0.2");
	while (!atomic_load(&l->stop)) {
		if (poll(&p, 1, 10) <= 0)
			continue;
		while ((n = recv(fd, &m, sizeof(m), MSG_DONTWAIT)) > 0) {
			l->ps_rx++;
			if (!check_sum(&m, IA_MSG_AGG, SELF_ID, n)) {
				atomic_fetch_add(&l->bad, 1);
				continue;
			}
			q = ntohl(m.h.seq);
			if (!l->ps_seen[q]) {
				l->ps_seen[q] = 1;
				l->ps_chunks++;
			}
			/* Answer every copy: a re-emitted aggregate means a lost result. */
			fill(&m, IA_MSG_RESULT, q, 0, NW, 0);
			lossy_send(l, &seed, fd, &m, sizeof(m), &sw);
		}
	}
	close(fd);
	return NULL;
}

FIXTURE(live) {
	struct live l;
};

FIXTURE_VARIANT(live) {
	int loss;
};

FIXTURE_VARIANT_ADD(live, clean) { .loss = 0 };
FIXTURE_VARIANT_ADD(live, lossy) { .loss = 5 };

FIXTURE_SETUP(live)
{
	int i, err;

	memset(&self->l, 0, sizeof(self->l));
	self->l.loss = variant->loss;
	snprintf(self->l.sw, sizeof(self->l.sw), "ia-sw-%d", getpid());
	snprintf(self->l.ps, sizeof(self->l.ps), "ia-ps-%d", getpid());
	for (i = 0; i < NW; i++)
		snprintf(self->l.w[i], sizeof(self->l.w[i]), "ia-w%d-%d", i, getpid());
	err = lv_setup(&self->l);
	if (err)
		lv_cleanup(&self->l);
	ASSERT_EQ(0, err);
}

FIXTURE_TEARDOWN(live)
{
	lv_cleanup(&self->l);
}

/*
 * Per-CPU "aggregated" of the job, read through the switch's pinned maps as
 * another process would: the job's slot from ia_jobs, then ia_jstats[slot].
 */
static int aggregated_per_cpu(const char *sw, __u64 *out, int max)
{
	char path[128];
	int fd, jfd, ncpu = libbpf_num_possible_cpus(), i, err;
	struct ia_job_cfg cfg;
	struct ia_counters *v;
	__u32 key = JOB;

	snprintf(path, sizeof(path), IA_BPFFS_ROOT "/%s/ia_jobs", sw);
	jfd = bpf_obj_get(path);
	if (jfd < 0)
		return -errno;
	err = bpf_map_lookup_elem(jfd, &key, &cfg);
	close(jfd);
	if (err)
		return err;
	snprintf(path, sizeof(path), IA_BPFFS_ROOT "/%s/ia_jstats", sw);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	v = calloc(ncpu, sizeof(*v));
	err = v ? bpf_map_lookup_elem(fd, &cfg.slot, v) : -ENOMEM;
	for (i = 0; !err && i < ncpu && i < max; i++)
		out[i] = v[i].c[IA_C_AGGREGATED];
	free(v);
	close(fd);
	return err ? err : (ncpu < max ? ncpu : max);
}

TEST_F_TIMEOUT(live, allreduce_exact, 120)
{
	struct live *l = &self->l;
	struct warg wa[NW];
	pthread_t w[NW], ps;
	struct ia_counters jc, pc;
	long sent = 0, retx = 0;
	__u64 percpu[64], down;
	int i, ncpu;

	ASSERT_EQ(0, pthread_create(&ps, NULL, ps_thread, l));
	for (i = 0; i < NW; i++) {
		wa[i].l = l;
		wa[i].i = i;
		ASSERT_EQ(0, pthread_create(&w[i], NULL, worker, &wa[i]));
	}
	for (i = 0; i < NW; i++)
		pthread_join(w[i], NULL);
	atomic_store(&l->stop, 1);
	pthread_join(ps, NULL);

	for (i = 0; i < NW; i++) {
		ASSERT_EQ(NCHUNKS, l->got[i]) TH_LOG("worker %d", i);
		sent += l->sent[i];
		retx += l->retx[i];
	}
	ASSERT_EQ(0, atomic_load(&l->bad));
	ASSERT_EQ(NCHUNKS, l->ps_chunks);

	ASSERT_EQ(0, ia_xdp_job_counters(l->x, JOB, &jc));
	TH_LOG("sent %ld (%ld retransmitted), aggregated %llu, emitted %llu, reemitted %llu, "
	       "answered %llu, duplicates %llu, window drops %llu, PS received %ld", sent, retx,
	       jc.c[IA_C_AGGREGATED], jc.c[IA_C_EMIT], jc.c[IA_C_REEMIT], jc.c[IA_C_ANSWER],
	       jc.c[IA_C_DUP], jc.c[IA_C_DROP_WINDOW], l->ps_rx);
	/* Exactly once: each worker's contribution to each chunk added once. */
	ASSERT_EQ((__u64)NW * NCHUNKS, jc.c[IA_C_AGGREGATED]);
	ASSERT_EQ(NCHUNKS, jc.c[IA_C_EMIT]);
	/* Every message the switch saw is accounted for. */
	ASSERT_EQ(jc.c[IA_C_RX] - jc.c[IA_C_RESULT], jc.c[IA_C_AGGREGATED] + jc.c[IA_C_DUP] +
		  jc.c[IA_C_REEMIT] + jc.c[IA_C_ANSWER] + jc.c[IA_C_DROP_WINDOW]);
	ASSERT_LE(jc.c[IA_C_RX] - jc.c[IA_C_RESULT], (__u64)sent);
	ASSERT_LE(NCHUNKS, jc.c[IA_C_RESULT]);
	ASSERT_EQ(0, ia_xdp_port_counters(l->x, l->up, &pc));
	ASSERT_EQ(jc.c[IA_C_EMIT] + jc.c[IA_C_REEMIT], pc.c[IA_C_TX]);
	if (l->loss) {
		/* The recovery paths were taken, not just the clean one. */
		ASSERT_LT(0, retx);
		ASSERT_LT(0, jc.c[IA_C_DUP]);
		ASSERT_LT(0, jc.c[IA_C_REEMIT]);
		/* Results lost on the way down: answered here from the held result. */
		ASSERT_LT(0, jc.c[IA_C_ANSWER]);
	}
	ASSERT_LE(l->ps_rx, pc.c[IA_C_TX]);
	for (i = 0, down = 0; i < NW; i++) {
		ASSERT_EQ(0, ia_xdp_port_counters(l->x, l->port[i], &pc));
		ASSERT_LE(pc.c[IA_C_RX], (__u64)l->sent[i]);
		ASSERT_LE((__u64)NCHUNKS, pc.c[IA_C_RX]);
		/* Results leave on every down port, answers on the member's. */
		ASSERT_LE(jc.c[IA_C_RESULT], pc.c[IA_C_TX]);
		down += pc.c[IA_C_TX];
	}
	ASSERT_EQ(NW * jc.c[IA_C_RESULT] + jc.c[IA_C_ANSWER], down);
	/* Both CPUs aggregated (senders alternate CPUs; veth runs XDP there). */
	ncpu = aggregated_per_cpu(l->sw, percpu, 64);
	ASSERT_LE(2, ncpu);
	ASSERT_LT(0, percpu[0]);
	ASSERT_LT(0, percpu[1]);
	TH_LOG("aggregated per CPU: %llu %llu", percpu[0], percpu[1]);
}

TEST_HARNESS_MAIN
