// SPDX-License-Identifier: GPL-2.0
/*
 * Congestion marks of the ports' virtual queues (bpf/dp_mark.h, docs/cc.md).
 *
 * Table (BPF_PROG_TEST_RUN, own unnamed namespace per test): messages that
 * leave a port faster than its rate are marked once more than the threshold
 * is queued, never before; none below the rate; IP CE only under ECT, with a
 * valid checksum; the same on the kernel-forward path; a blue switch's
 * aggregate; a result leaving a congested down port; a job flagged to yield
 * early (flexina's PS jobs) marked at half the threshold.
 *
 * Live: a worker namespace sends paced messages through a switch namespace
 * (XDP redirect, or forwarded by the kernel) to a PS namespace; with the up
 * port's rate below the offered load the PS receives marked (and CE)
 * messages, with it above none; with UDP cross traffic above the port's rate
 * through the same port (forwarded by the kernel, counted by ia_other), a
 * trickle of inagg messages is marked, without it not.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <poll.h>
#include <time.h>
#include <sys/socket.h>
#include <linux/if_packet.h>
#include <linux/if_link.h>
#include <netinet/in.h>
#include <bpf/bpf.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "xdp_vq.h"
#include "xdp_switch.h"

#define NPORTS	3	/* 0: up, 1..2: down */
#define SELF_ID	900
#define ECT0	0x2
#define CE	0x3

FIXTURE(mk) {
	struct ia_xdp *x;
	int port[NPORTS], peer[NPORTS];
	__u8 in[4096], out[4096];
};

FIXTURE_SETUP(mk)
{
	ASSERT_EQ(0, switch_ports(NPORTS, self->port, self->peer));
	ASSERT_EQ(0, ia_xdp_open(NULL, &self->x, NULL, 0));
	for (int i = 0; i < NPORTS; i++)
		ASSERT_EQ(0, ia_xdp_port_add(self->x, self->port[i]));
}

FIXTURE_TEARDOWN(mk)
{
	ia_xdp_close(self->x);
}

static int add_job(struct ia_xdp *x, const int *port, __u32 id, enum ia_role role, __u32 n,
		   __u32 flags)
{
	struct ia_sender m[8];
	struct ia_xdp_hop down = { .ifindex = port[1], .daddr = IP(10, 9, 0, 10) };
	struct ia_xdp_job j = {
		.id = id, .role = role, .window = 4, .self_id = SELF_ID, .nmembers = n,
		.members = m, .ndown = 1, .down = &down, .flags = flags,
		.up = { .ifindex = port[0], .saddr = IP_SW, .daddr = IP_PS },
	};

	for (__u32 i = 0; i < n; i++)
		m[i] = (struct ia_sender){ .id = 50 + i, .nworkers = 1 };
	memcpy(j.up.smac, mac_up_s, 6);
	memcpy(j.up.dmac, mac_up_d, 6);
	memcpy(down.smac, mac_sw, 6);
	memcpy(down.dmac, mac_w, 6);
	return ia_xdp_job_add(x, &j, NULL, 0);
}

/* A full-size contribution of sender to chunk seq, with the IP TOS given. */
static int contrib(__u8 *buf, __u32 job, __u32 seq, __u32 sender, __u8 tos)
{
	struct frame_spec f = {
		.saddr = IP(10, 9, 0, 10), .daddr = IP(10, 9, 0, 1), .type = IA_MSG_CONTRIB,
		.job = job, .seq = seq, .sender = sender, .nworkers = 1, .nelem = IA_CHUNK_DEFAULT,
	};
	struct iphdr *ip = (void *)(buf + 14);
	int len;

	memcpy(f.smac, mac_w, 6);
	memcpy(f.dmac, mac_sw, 6);
	len = build_frame(buf, &f);
	ip->tos = tos;
	ip->check = csum_ip(ip);
	return len;
}

static __u8 msg_flags(const __u8 *frame)
{
	return ((const struct ia_hdr *)(frame + IA_L2L4_LEN))->flags;
}

static const struct iphdr *iph(const __u8 *frame)
{
	return (const void *)(frame + 14);
}

/* 80 kbit/s: a 1088-byte frame drains in 108.8 ms, so a burst of test runs is never drained. */
#define SLOW_BPS	80000
#define FRAME		IA_FRAME_LEN(IA_CHUNK_DEFAULT)

TEST_F(mk, marks_above_the_rate_only_past_the_threshold)
{
	struct ia_xdp_vq q = { .rate_bps = SLOW_BPS, .thresh = 4 * FRAME };
	struct ia_xdp_vq_info vi;
	int i, len, v;

	ASSERT_EQ(0, add_job(self->x, self->port, 5, IA_ROLE_RED, 1, 0));
	ASSERT_EQ(0, ia_xdp_vq_set(self->x, self->port[0], &q, NULL, 0));
	/*
	 * Frames 1..4 leave at most 4 frames queued: never above the threshold,
	 * whatever the clock did. Frames 5..12 find more, unless 108 ms passed
	 * between two runs. Odd frames ask for ECN (ECT(0)), even ones do not.
	 */
	for (i = 1; i <= 12; i++) {
		__u8 tos = i % 2 ? ECT0 : 0;

		len = contrib(self->in, 5, i, 50, tos);
		v = run(self->x, self->port[1], self->in, len, self->out, NULL);
		ASSERT_EQ(XDP_REDIRECT, v);
		if (i <= 4) {
			ASSERT_EQ(0, msg_flags(self->out) & IA_F_MARK) TH_LOG("frame %d", i);
			ASSERT_EQ(tos, iph(self->out)->tos);
			continue;
		}
		ASSERT_EQ(IA_F_MARK, msg_flags(self->out) & IA_F_MARK) TH_LOG("frame %d", i);
		ASSERT_EQ(i % 2 ? CE : 0, iph(self->out)->tos) TH_LOG("frame %d", i);
		ASSERT_EQ(csum_ip(iph(self->out)), iph(self->out)->check);
		ASSERT_EQ(0, ((struct udphdr *)(self->out + 34))->check);
		/* Nothing else changed but the redirect's MACs. */
		ASSERT_EQ(0, memcmp(self->in + IA_PAYLOAD_OFF, self->out + IA_PAYLOAD_OFF,
				    4 * IA_CHUNK_DEFAULT));
	}
	ASSERT_EQ(0, ia_xdp_vq_get(self->x, self->port[0], &vi));
	ASSERT_EQ(12, vi.msgs);
	ASSERT_EQ(8, vi.marked);
	ASSERT_EQ(12 * FRAME, vi.bytes);
	ASSERT_EQ(SLOW_BPS, vi.cfg.rate_bps);
	ASSERT_EQ(4 * FRAME, vi.cfg.thresh);
	ASSERT_EQ(4 * FRAME + 65536, vi.cfg.limit);
	ASSERT_LT(9 * FRAME, vi.backlog);
	ASSERT_GE(12 * FRAME, vi.backlog);
	/* A port without a rate (the down port) marks nothing; nor does the up port reset. */
	ASSERT_EQ(0, ia_xdp_vq_get(self->x, self->port[1], &vi));
	ASSERT_EQ(0, vi.msgs);
	q.rate_bps = 0;
	ASSERT_EQ(0, ia_xdp_vq_set(self->x, self->port[0], &q, NULL, 0));
	len = contrib(self->in, 5, 13, 50, ECT0);
	ASSERT_EQ(XDP_REDIRECT, run(self->x, self->port[1], self->in, len, self->out, NULL));
	ASSERT_EQ(0, msg_flags(self->out) & IA_F_MARK);
	ASSERT_EQ(ECT0, iph(self->out)->tos);
}

TEST_F(mk, no_marks_below_the_rate)
{
	/* 100 Gbit/s: a frame drains in 87 ns, less than one test run takes. */
	struct ia_xdp_vq q = { .rate_bps = 100000000000ull, .thresh = 60 * FRAME };
	struct ia_xdp_vq_info vi;
	int i, len;

	ASSERT_EQ(0, add_job(self->x, self->port, 5, IA_ROLE_RED, 1, 0));
	ASSERT_EQ(0, ia_xdp_vq_set(self->x, self->port[0], &q, NULL, 0));
	for (i = 0; i < 300; i++) {
		len = contrib(self->in, 5, i, 50, ECT0);
		ASSERT_EQ(XDP_REDIRECT, run(self->x, self->port[1], self->in, len, self->out, NULL));
		ASSERT_EQ(0, msg_flags(self->out) & IA_F_MARK) TH_LOG("frame %d", i);
		ASSERT_EQ(ECT0, iph(self->out)->tos);
	}
	ASSERT_EQ(0, ia_xdp_vq_get(self->x, self->port[0], &vi));
	ASSERT_EQ(300, vi.msgs);
	ASSERT_EQ(0, vi.marked);
}

/*
 * flexina's PS jobs (IA_JOB_F_MARK_EARLY) are marked above K >> 1: with
 * K = 4 frames, jobs 5 (INA-like) and 7 (early) take turns on one port,
 * frame i leaving i frames queued (at 80 kbit/s a run drains almost
 * nothing). Job 7's frame 3 (3 queued, above 2) is marked, job 5's frame 4
 * (4 queued, not above 4) is not; from frame 5 on both are.
 */
TEST_F(mk, early_jobs_marked_at_the_lower_threshold)
{
	struct ia_xdp_vq q = { .rate_bps = SLOW_BPS, .thresh = 4 * FRAME };
	struct ia_xdp_vq_info vi;
	int i, len;

	ASSERT_EQ(0, add_job(self->x, self->port, 5, IA_ROLE_RED, 1, 0));
	ASSERT_EQ(0, add_job(self->x, self->port, 7, IA_ROLE_RED, 1, IA_JOB_F_MARK_EARLY));
	ASSERT_EQ(0, ia_xdp_vq_set(self->x, self->port[0], &q, NULL, 0));
	for (i = 1; i <= 8; i++) {
		__u32 job = i % 2 ? 7 : 5;
		bool marked = i % 2 ? i > 2 : i > 4;

		len = contrib(self->in, job, i, 50, ECT0);
		ASSERT_EQ(XDP_REDIRECT, run(self->x, self->port[1], self->in, len, self->out,
					    NULL));
		ASSERT_EQ(marked ? IA_F_MARK : 0, msg_flags(self->out) & IA_F_MARK)
			TH_LOG("frame %d of job %u", i, job);
		ASSERT_EQ(marked ? CE : ECT0, iph(self->out)->tos) TH_LOG("frame %d", i);
	}
	ASSERT_EQ(0, ia_xdp_vq_get(self->x, self->port[0], &vi));
	ASSERT_EQ(8, vi.msgs);
	ASSERT_EQ(5, vi.marked);	/* frames 3, 5, 6, 7, 8 */
}

TEST_F(mk, kernel_forward_marked_too)
{
	/* Threshold 0: any message that finds itself queued is marked. */
	struct ia_xdp_vq q = { .rate_bps = SLOW_BPS, .thresh = 0 };
	struct ia_xdp_vq_info vi;
	int len;

	ASSERT_EQ(0, add_job(self->x, self->port, 6, IA_ROLE_RED, 1, IA_JOB_F_KERNEL_FWD));
	ASSERT_EQ(0, ia_xdp_vq_set(self->x, self->port[0], &q, NULL, 0));
	len = contrib(self->in, 6, 0, 50, ECT0);
	ASSERT_EQ(XDP_PASS, run(self->x, self->port[1], self->in, len, self->out, NULL));
	ASSERT_EQ(IA_F_MARK, msg_flags(self->out) & IA_F_MARK);
	ASSERT_EQ(CE, iph(self->out)->tos);
	ASSERT_EQ(csum_ip(iph(self->out)), iph(self->out)->check);
	ASSERT_EQ(0, ia_xdp_vq_get(self->x, self->port[0], &vi));
	ASSERT_EQ(1, vi.marked);
}

TEST_F(mk, blue_aggregate_marked_on_leaving)
{
	struct ia_xdp_vq q = { .rate_bps = SLOW_BPS, .thresh = 0 };
	struct ia_xdp_vq_info vi;
	int len;

	ASSERT_EQ(0, add_job(self->x, self->port, 7, IA_ROLE_BLUE, 2, 0));
	ASSERT_EQ(0, ia_xdp_vq_set(self->x, self->port[0], &q, NULL, 0));
	/* The first contribution stays in the slot: nothing leaves, nothing is queued. */
	len = contrib(self->in, 7, 0, 50, 0);
	ASSERT_EQ(XDP_DROP, run(self->x, self->port[1], self->in, len, self->out, NULL));
	len = contrib(self->in, 7, 0, 51, 0);
	ASSERT_EQ(XDP_REDIRECT, run(self->x, self->port[2], self->in, len, self->out, NULL));
	ASSERT_EQ(IA_MSG_AGG, ((struct ia_hdr *)(self->out + IA_L2L4_LEN))->type);
	ASSERT_EQ(IA_F_MARK, msg_flags(self->out) & IA_F_MARK);
	ASSERT_EQ(csum_ip(iph(self->out)), iph(self->out)->check);
	ASSERT_EQ(0, ia_xdp_vq_get(self->x, self->port[0], &vi));
	ASSERT_EQ(1, vi.msgs);
	ASSERT_EQ(1, vi.marked);
}

TEST_F(mk, config_checked)
{
	struct ia_xdp_vq q = { .rate_bps = IA_VQ_RATE_MAX + 1, .thresh = 1000 };

	ASSERT_EQ(-EINVAL, ia_xdp_vq_set(self->x, self->port[0], &q, NULL, 0));
	q = (struct ia_xdp_vq){ .rate_bps = 1000000, .thresh = 1000, .limit = 1000 };
	ASSERT_EQ(-EINVAL, ia_xdp_vq_set(self->x, self->port[0], &q, NULL, 0));
	q.limit = 0;
	ASSERT_EQ(-ENOENT, ia_xdp_vq_set(self->x, self->peer[0], &q, NULL, 0));
	ASSERT_EQ(0, ia_xdp_vq_set(self->x, self->port[0], &q, NULL, 0));
}

/* Results are replicated through the egress program, which accounts the down port's queue. */
TEST_F(mk, result_marked_on_a_congested_down_port)
{
	struct ia_xdp_vq q = { .rate_bps = SLOW_BPS, .thresh = 0 };
	struct ia_xdp_vq_info vi;
	struct ia_hdr *h = (void *)(self->in + IA_L2L4_LEN);
	int up, dn, len;

	ASSERT_EQ(0, add_job(self->x, self->port, 8, IA_ROLE_RED, 1, 0));
	ASSERT_EQ(0, ia_xdp_vq_set(self->x, self->port[1], &q, NULL, 0));
	len = contrib(self->in, 8, 0, 50, 0);
	h->type = IA_MSG_RESULT;
	ASSERT_EQ(0, ia_xdp_attach(self->x, self->port[0], XDP_FLAGS_DRV_MODE, NULL, 0));
	ASSERT_EQ(0, ia_xdp_attach_pass(self->x, self->peer[1], XDP_FLAGS_DRV_MODE, NULL, 0));
	ASSERT_EQ(0, ia_xdp_attach_pass(self->x, self->peer[0], XDP_FLAGS_DRV_MODE, NULL, 0));
	up = catcher(self->peer[0]);
	dn = catcher(self->peer[1]);
	ASSERT_LE(0, up);
	ASSERT_LE(0, dn);
	ASSERT_EQ(len, send(up, self->in, len, 0));
	ASSERT_EQ(len, catch_frame(dn, self->out, sizeof(self->out)));
	ASSERT_EQ(IA_MSG_RESULT, ((struct ia_hdr *)(self->out + IA_L2L4_LEN))->type);
	ASSERT_EQ(IA_F_MARK, msg_flags(self->out) & IA_F_MARK);
	ASSERT_EQ(0, ia_xdp_vq_get(self->x, self->port[1], &vi));
	ASSERT_EQ(1, vi.marked);
	close(up);
	close(dn);
}

/* ---- live: paced messages through a switch namespace ---- */

#define LV_N		1500		/* messages per case */
#define LV_GAP_NS	100000		/* between two sends: at most ~87 Mbit/s offered */
#define LV_THRESH	(320 << 10)	/* above a full veth ring (256 frames): bursts never mark */
#define LV_JOB		9
#define LV_SENDER	100

FIXTURE(lv) {
	char w[32], sw[32], ps[32];
	struct ia_xdp *x;
	int up;
};

FIXTURE_VARIANT(lv) {
	__u32 flags;
};

FIXTURE_VARIANT_ADD(lv, redirect) { .flags = 0 };
FIXTURE_VARIANT_ADD(lv, kernel_forward) { .flags = IA_JOB_F_KERNEL_FWD };

static int attach_pass_in(const char *ns)
{
	struct ia_xdp *h;
	int err = enter_ns(ns) ?: ia_xdp_open(NULL, &h, NULL, 0);

	if (err)
		return err;
	err = ia_xdp_attach_pass(h, if_nametoindex("h"), XDP_FLAGS_DRV_MODE, NULL, 0);
	ia_xdp_close(h);
	return err;
}

/* The kernel-forward path routes: IPv4 forwarding in the calling thread's namespace. */
static int forwarding_on(void)
{
	int fd = open("/proc/sys/net/ipv4/ip_forward", O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, "1\n", 2) != 2)
		err = -EIO;
	close(fd);
	return err;
}

static int lv_build(struct _test_data_lv *self, __u32 flags)
{
	struct ia_sender m = { .id = LV_SENDER, .nworkers = 1 };
	struct ia_xdp_hop down = {};
	struct ia_xdp_job j = {
		.id = LV_JOB, .role = IA_ROLE_RED, .nmembers = 1, .members = &m,
		.ndown = 1, .down = &down, .flags = flags,
	};
	int err, home = netns_save();

	if (home < 0)
		return -errno;
	if (sh("ip netns add %s && ip netns add %s && ip netns add %s", self->w, self->sw,
	       self->ps) ||
	    sh("ip -n %s link add s1 address 02:00:00:00:02:00 type veth peer name h "
	       "address 02:00:00:00:01:00 netns %s", self->sw, self->w) ||
	    sh("ip -n %s link add u0 address 02:00:00:00:03:00 type veth peer name h "
	       "address 02:00:00:00:04:00 netns %s", self->sw, self->ps) ||
	    sh("ip -n %s link set dev s1 up && ip -n %s link set dev u0 up && "
	       "ip -n %s addr add 10.78.1.1/24 dev s1 && ip -n %s addr add 10.78.0.2/24 dev u0 && "
	       "ip -n %s neigh add 10.78.1.2 lladdr 02:00:00:00:01:00 dev s1 && "
	       "ip -n %s neigh add 10.78.0.1 lladdr 02:00:00:00:04:00 dev u0",
	       self->sw, self->sw, self->sw, self->sw, self->sw, self->sw) ||
	    sh("ip -n %s link set dev h up && ip -n %s addr add 10.78.1.2/24 dev h && "
	       "ip -n %s neigh add 10.78.1.1 lladdr 02:00:00:00:02:00 dev h && "
	       "ip -n %s route add default via 10.78.1.1",
	       self->w, self->w, self->w, self->w) ||
	    sh("ip -n %s link set dev h up && ip -n %s addr add 10.78.0.1/24 dev h && "
	       "ip -n %s neigh add 10.78.0.2 lladdr 02:00:00:00:03:00 dev h && "
	       "ip -n %s route add 10.78.1.0/24 via 10.78.0.2",
	       self->ps, self->ps, self->ps, self->ps)) {
		err = -EIO;
		goto out;
	}
	err = enter_ns(self->sw) ?: forwarding_on() ?: ia_xdp_open(self->sw, &self->x, NULL, 0);
	if (err)
		goto out;
	self->up = if_nametoindex("u0");
	down.ifindex = if_nametoindex("s1");
	err = ia_xdp_attach(self->x, self->up, XDP_FLAGS_DRV_MODE, NULL, 0) ?:
	      ia_xdp_attach(self->x, down.ifindex, XDP_FLAGS_DRV_MODE, NULL, 0);
	if (err)
		goto out;
	j.up.ifindex = self->up;
	parse_mac("02:00:00:00:03:00", j.up.smac);
	parse_mac("02:00:00:00:04:00", j.up.dmac);
	parse_mac("02:00:00:00:02:00", down.smac);
	parse_mac("02:00:00:00:01:00", down.dmac);
	err = ia_xdp_job_add(self->x, &j, NULL, 0) ?: attach_pass_in(self->ps) ?:
	      attach_pass_in(self->w);
out:
	if (setns(home, CLONE_NEWNET) && !err)
		err = -errno;
	close(home);
	return err;
}

FIXTURE_SETUP(lv)
{
	int pid = getpid();

	snprintf(self->w, sizeof(self->w), "ia-mk%d-w", pid);
	snprintf(self->sw, sizeof(self->sw), "ia-mk%d-sw", pid);
	snprintf(self->ps, sizeof(self->ps), "ia-mk%d-ps", pid);
	ASSERT_EQ(0, lv_build(self, variant->flags));
}

FIXTURE_TEARDOWN(lv)
{
	if (self->x)
		ia_xdp_close(self->x);
	ia_xdp_unpin(self->sw);
	sh("ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null",
	   self->w, self->sw, self->ps);
}

struct rx {
	const char *ns;
	int fd;
	atomic_int ready, done;
	long got, marked, ce, first_marked;
};

static int bound_sock(const char *ns, const char *addr)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(IA_UDP_PORT) };
	int one = 1, buf = 8 << 20, fd;

	if (enter_ns(ns))
		return -1;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	a.sin_addr.s_addr = inet_addr(addr);
	setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The PS end: counts messages, marks, CE, and the first marked chunk. */
static void *rx_thread(void *arg)
{
	struct rx *r = arg;
	__u8 buf[2048], cbuf[64];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct pollfd p;
	struct cmsghdr *c;
	struct ia_hdr *h = (void *)buf;
	ssize_t n;
	int idle = 0;

	r->fd = bound_sock(r->ns, "10.78.0.1");
	r->first_marked = -1;
	atomic_store(&r->ready, r->fd >= 0 ? 1 : -1);
	if (r->fd < 0)
		return NULL;
	p = (struct pollfd){ .fd = r->fd, .events = POLLIN };
	/* Until 300 ms without a message once the sender is done (at most 60 s). */
	while (idle < (atomic_load(&r->done) ? 3 : 600)) {
		if (poll(&p, 1, 100) <= 0) {
			idle++;
			continue;
		}
		idle = 0;
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		n = recvmsg(r->fd, &mh, 0);
		if (n < IA_HDR_LEN || ntohl(h->job) != LV_JOB)
			continue;
		r->got++;
		if (h->flags & IA_F_MARK) {
			r->marked++;
			if (r->first_marked < 0)
				r->first_marked = ntohl(h->seq);
		}
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS &&
			    (*(__u8 *)CMSG_DATA(c) & 3) == CE)
				r->ce++;
	}
	close(r->fd);
	return NULL;
}

/* Sends n contributions gap_ns apart from the worker namespace; the offered load in bit/s. */
static double send_paced(const char *ns, int n, long gap_ns)
{
	struct sockaddr_in ps = { .sin_family = AF_INET, .sin_port = htons(IA_UDP_PORT) };
	struct timespec gap = { 0, gap_ns }, t0, t1;
	__u8 buf[IA_HDR_LEN + 4 * IA_CHUNK_DEFAULT] = {};
	int tos = ECT0, home = netns_save(), fd, i;
	double s = 0;

	fd = bound_sock(ns, "10.78.1.2");
	if (fd < 0)
		goto out;
	setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
	ps.sin_addr.s_addr = inet_addr("10.78.0.1");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		ia_hdr_fill((struct ia_hdr *)buf, IA_MSG_CONTRIB, LV_JOB, i, LV_SENDER, 1,
			    IA_CHUNK_DEFAULT, 0);
		sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&ps, sizeof(ps));
		nanosleep(&gap, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	close(fd);
out:
	if (setns(home, CLONE_NEWNET))
		s = 0;
	close(home);
	return s > 0 ? 8.0 * n * FRAME / s : 0;
}

static void lv_case(struct __test_metadata *_metadata, struct _test_data_lv *self,
		    __u64 rate, struct rx *r, struct ia_xdp_vq_info *vi, double *offered)
{
	struct ia_xdp_vq q = { .rate_bps = rate, .thresh = LV_THRESH };
	pthread_t th;

	memset(r, 0, sizeof(*r));
	r->ns = self->ps;
	ASSERT_EQ(0, ia_xdp_vq_set(self->x, self->up, &q, NULL, 0));
	ASSERT_EQ(0, pthread_create(&th, NULL, rx_thread, r));
	while (!atomic_load(&r->ready))
		usleep(1000);
	ASSERT_EQ(1, atomic_load(&r->ready));
	*offered = send_paced(self->w, LV_N, LV_GAP_NS);
	atomic_store(&r->done, 1);
	pthread_join(th, NULL);
	ASSERT_LT(0, *offered);
	ASSERT_EQ(0, ia_xdp_vq_get(self->x, self->up, vi));
	printf("# port rate %.0f Mbit/s, offered %.1f Mbit/s: %ld of %d received, %ld marked "
	       "(%ld CE), first marked %ld; queue: %llu messages, %llu marked, %llu at its limit\n",
	       rate / 1e6, *offered / 1e6, r->got, LV_N, r->marked, r->ce, r->first_marked,
	       (unsigned long long)vi->msgs, (unsigned long long)vi->marked,
	       (unsigned long long)vi->full);
	fflush(stdout);
	/* Most messages arrive (the PS socket is large; nothing drops them on purpose). */
	ASSERT_LT(LV_N * 9 / 10, r->got);
	ASSERT_GE(vi->msgs, r->got);
	ASSERT_EQ(r->marked, r->ce);
}

TEST_F_TIMEOUT(lv, marks_only_when_offered_load_exceeds_the_port_rate, 300)
{
	struct ia_xdp_vq_info vi;
	double offered;
	struct rx r;

	/* 1 Gbit/s against at most ~87 Mbit/s offered: not one mark. */
	lv_case(_metadata, self, 1000000000ull, &r, &vi, &offered);
	ASSERT_GT(1e9, offered);
	ASSERT_EQ(0, r.marked);
	ASSERT_EQ(0, vi.marked);
	/*
	 * 1 Mbit/s: the queue passes the threshold once more than LV_THRESH has
	 * been sent (chunk 301 at the earliest, whatever the pacing) and stays
	 * above it while the offered load exceeds the rate. At twice the rate
	 * (a slow guest) it passes by chunk 600, so a quarter is marked at least.
	 */
	lv_case(_metadata, self, 1000000ull, &r, &vi, &offered);
	ASSERT_LT(2 * 1e6, offered) TH_LOG("offered load too low to congest the port");
	ASSERT_LE(LV_THRESH / FRAME, r.first_marked);
	ASSERT_LT(LV_N / 4, r.marked);
	ASSERT_GE(vi.marked, r.marked);
}

/* ---- live: cross traffic (not inagg's) through the same port ---- */

#define CX_N		250		/* inagg messages per case */
#define CX_GAP_NS	4000000		/* ~2 Mbit/s of them: alone, far below the port */
#define CX_RATE		5000000ull	/* the port: 5 Mbit/s */
#define CX_THRESH	(32 << 10)
#define CX_DGRAM	1000		/* cross traffic: UDP to a port nobody serves */
#define CX_BURST	16		/* datagrams per millisecond: up to ~130 Mbit/s */

struct cross {
	const char *ns;
	atomic_int stop;
	long sent;
	double bps;
};

/* Cross traffic from the worker namespace to the PS's, until told to stop. */
static void *cross_thread(void *arg)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9999) };
	struct timespec ms = { 0, 1000000 }, t0, t1;
	struct cross *c = arg;
	char buf[CX_DGRAM] = { 0 };
	int fd, i;

	if (enter_ns(c->ns))
		return NULL;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	to.sin_addr.s_addr = inet_addr("10.78.0.1");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!atomic_load(&c->stop)) {
		for (i = 0; i < CX_BURST; i++)
			c->sent += sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&to,
					  sizeof(to)) == sizeof(buf);
		nanosleep(&ms, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* Frame bytes, as the queue counts them: Ethernet, IP and UDP headers too. */
	c->bps = 8.0 * c->sent * (CX_DGRAM + 42) /
		 ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	close(fd);
	return NULL;
}

/* One case: CX_N paced inagg messages, with cross traffic or without. */
static void cx_case(struct __test_metadata *_metadata, struct _test_data_lv *self, bool cross,
		    struct rx *r, struct ia_xdp_vq_info *vi, struct cross *c)
{
	struct ia_xdp_vq q = { .rate_bps = CX_RATE, .thresh = CX_THRESH };
	pthread_t th, cth;
	double offered;

	memset(r, 0, sizeof(*r));
	memset(c, 0, sizeof(*c));
	r->ns = self->ps;
	c->ns = self->w;
	ASSERT_EQ(0, ia_xdp_vq_set(self->x, self->up, &q, NULL, 0));
	ASSERT_EQ(0, pthread_create(&th, NULL, rx_thread, r));
	while (!atomic_load(&r->ready))
		usleep(1000);
	ASSERT_EQ(1, atomic_load(&r->ready));
	if (cross) {
		ASSERT_EQ(0, pthread_create(&cth, NULL, cross_thread, c));
		usleep(200000);	/* the queue fills first */
	}
	offered = send_paced(self->w, CX_N, CX_GAP_NS);
	if (cross) {
		atomic_store(&c->stop, 1);
		pthread_join(cth, NULL);
	}
	atomic_store(&r->done, 1);
	pthread_join(th, NULL);
	ASSERT_EQ(0, ia_xdp_vq_get(self->x, self->up, vi));
	printf("# port %.0f Mbit/s, inagg offered %.2f Mbit/s, cross %.1f Mbit/s: %ld of %d "
	       "received, %ld marked (%ld CE); queue: %llu messages, %llu marked, %llu other "
	       "frames (%llu at its limit)\n",
	       CX_RATE / 1e6, offered / 1e6, c->bps / 1e6, r->got, CX_N, r->marked, r->ce,
	       (unsigned long long)vi->msgs, (unsigned long long)vi->marked,
	       (unsigned long long)vi->other, (unsigned long long)vi->other_full);
	fflush(stdout);
	ASSERT_LT(0, offered);
	ASSERT_GT(CX_RATE / 2, offered);
	ASSERT_LT(CX_N * 9 / 10, r->got);
	ASSERT_EQ(r->marked, r->ce);
}

/*
 * The kernel forwards UDP cross traffic by the same port (ia_other counts it
 * in the port's queue): inagg messages far below the port's rate are marked
 * only while cross traffic above the rate shares the port.
 */
TEST_F_TIMEOUT(lv, cross_traffic_alone_above_the_rate_marks_inagg, 300)
{
	struct ia_xdp_vq_info vi;
	struct cross c;
	struct rx r;

	cx_case(_metadata, self, false, &r, &vi, &c);
	ASSERT_EQ(0, r.marked);
	ASSERT_EQ(0, vi.marked);
	ASSERT_EQ(0, vi.other_full);
	cx_case(_metadata, self, true, &r, &vi, &c);
	ASSERT_LT(2.0 * CX_RATE, c.bps) TH_LOG("cross traffic too slow to congest the port");
	ASSERT_LT(c.sent / 2, vi.other);
	ASSERT_GE(c.sent, vi.other);
	ASSERT_LT(0, vi.other_full);
	ASSERT_LT(CX_N / 2, r.marked);
	ASSERT_GE(vi.marked, r.marked);
}

TEST_HARNESS_MAIN
