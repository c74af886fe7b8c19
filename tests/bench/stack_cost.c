// SPDX-License-Identifier: GPL-2.0
/*
 * The end hosts' socket path in an all-reduce (docs/allreduce.md §8, §8b):
 * what the kernel's path costs per GB moved from one host's memory to
 * another's, with nothing else on the path. One vector goes as inagg's
 * hosts move it (768-element messages of 3,094 bytes of UDP payload through
 * ia_io_tx / ia_io_rx: sendmmsg, recvmmsg, the payload copied into and out
 * of each message), as the same messages would go with UDP GSO and GRO (21
 * to a send, coalesced on receipt: checksummed, which inagg's switches do
 * not keep), as Gloo's ring moves it (a TCP stream of 64 KiB writes and
 * reads), and through AF_XDP sockets (the same messages as whole
 * Ethernet/IPv4/UDP frames, UDP checksum 0, written into a UMEM and kicked
 * with sendto(); received by an XDP program's redirect to an XSKMAP, the
 * payload copied out of the UMEM as the UDP arm's is out of its buffers).
 *
 * By default (veth mode, root) every arm runs over a veth pair between two
 * namespaces the bench makes and deletes on exit (ia-sc-a-PID, sender,
 * ia-sc-b-PID, receiver; MTU 3,130 as inagg's 768-element chunks need). The
 * receiving veth (sc1) runs the bench's XDP program (tests/bench/bpf/) in
 * every arm, as the hosts' veths' peers run the switches' XDP: that takes GSO
 * and TSO off the sending veth, for TCP as for UDP. One more arm, TCP over a
 * second pair without XDP (sc2 - sc3: TSO kept), shows what that costs TCP.
 * AF_XDP runs in copy mode (veth has no zero-copy), with XDP_USE_NEED_WAKEUP
 * when the kernel takes it; if its setup or bind fails the arm is skipped and
 * why is printed. -l runs the arms over loopback instead, as the bench did
 * before (no AF_XDP arm there).
 *
 * Sender and receiver are one thread pinned to one CPU (-c, default the
 * last): the veth hands a frame to the peer's NAPI on the sending CPU, so
 * this thread's CPU time holds both ends and the softirq between them, and
 * nothing waits for a wake-up. Printed per arm, CPU seconds per GB moved
 * (both ends): getrusage() of the process (the kernel here has tick-based
 * accounting without IRQ_TIME_ACCOUNTING: softirq run in a task's context is
 * charged to the task); from /proc/stat the pinned CPU's busy time (adds
 * what ran in ksoftirqd there), and the machine's softirq and busy time (the
 * last holds other processes' work: a check on a quiet machine only).
 * /proc/stat counts 10 ms ticks, so move enough (-m; 256 MiB by default).
 * Arms interleaved round by round, median and range, the ratios to TCP
 * (the arm with XDP on the peer, as Gloo's hosts have), and from them the
 * bench's ratio of host CPU per GB (inagg at congestion 1 / Gloo) if the
 * socket path were all the hosts spent: each worker sends and receives one
 * vector and the PS one (N + 1 crossings) against the ring's 2 (N-1)/N
 * vectors per worker each way (2 (N-1) crossings).
 *
 * Usage: stack_cost [-l] [-r ROUNDS] [-m MIB] [-n WORKERS] [-c CPU] [-a ARMS]
 * ARMS: a comma-separated subset of udp,tcp,gso,xsk,tso (e.g. for perf; the
 * ratios only with tcp among them).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "host.h"
#include "host_io.h"
#include "stats.h"
#include "../bpf/xdp_common.h"
#include "tests/bench/bpf/stack_cost_xsk.skel.h"

#ifndef SOL_UDP
#define SOL_UDP		17
#endif
#ifndef SOL_XDP
#define SOL_XDP		283
#endif
#ifndef AF_XDP
#define AF_XDP		44
#endif

#define MAX_ROUNDS	50
#define ELEMS		IA_MAX_ELEMS		/* inagg's largest message */
#define WINDOW		64			/* messages in flight, the worker's default */
#define TCP_IO		(64 << 10)		/* a write or read of the stream */

/* The veth pair: sc0 in namespace A (sender), sc1 in B (receiver). */
#define ADDR_A		"10.77.0.1"
#define ADDR_B		"10.77.0.2"
#define ADDR_A2		"10.77.1.1"	/* sc2 - sc3: a second pair, no XDP (TSO kept) */
#define ADDR_B2		"10.77.1.2"
#define MAC_A		"02:00:00:77:00:01"
#define MAC_B		"02:00:00:77:00:02"
#define VETH_MTU	IA_MTU(ELEMS)		/* 3,130: what inagg's hosts need */
#define XSK_PORT	9431			/* the AF_XDP arm's UDP port (the XDP filter's) */
#define XSK_FRAME	4096			/* UMEM chunk */
#define XSK_NFRAMES	1024			/* per UMEM; and every ring's size */
#define XSK_HDRS	IA_L2L4_LEN		/* Ethernet, IPv4, UDP before inagg's header */

enum { UDP, TCP, GSO, XSK, TSO, NARMS };
static const char *const arm_name[NARMS] = { "UDP", "TCP", "UDP GSO/GRO", "AF_XDP", "TCP TSO" };
static const char *const arm_row[NARMS] = {
	"inagg's messages (UDP)", "TCP stream (Gloo's)", "UDP GSO + GRO", "AF_XDP, copy mode",
	"TCP, no XDP on the peer",
};

static bool loopback;
static char ns_a[32], ns_b[32];
static int home_ns = -1;
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* Deletes the namespaces (and with them the veth pair and its XDP program). */
static void rig_down(void)
{
	char cmd[160];

	if (!ns_a[0])
		return;
	if (home_ns >= 0)
		setns(home_ns, CLONE_NEWNET);
	snprintf(cmd, sizeof(cmd), "ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null",
		 ns_a, ns_b);
	if (system(cmd)) {
		/* one may not have been made */
	}
	ns_a[0] = 0;
}

static int rig_up(void)
{
	snprintf(ns_a, sizeof(ns_a), "ia-sc-a-%d", getpid());
	snprintf(ns_b, sizeof(ns_b), "ia-sc-b-%d", getpid());
	atexit(rig_down);
	if (sh("ip netns add %s && ip netns add %s", ns_a, ns_b) ||
	    sh("ip -n %s link add sc0 mtu %d address %s type veth peer name sc1 mtu %d "
	       "address %s netns %s", ns_a, VETH_MTU, MAC_A, VETH_MTU, MAC_B, ns_b) ||
	    sh("ip -n %s addr add %s/24 dev sc0 && ip -n %s link set dev sc0 up && "
	       "ip -n %s neigh replace %s lladdr %s dev sc0 nud permanent", ns_a, ADDR_A, ns_a,
	       ns_a, ADDR_B, MAC_B) ||
	    sh("ip -n %s addr add %s/24 dev sc1 && ip -n %s link set dev sc1 up && "
	       "ip -n %s neigh replace %s lladdr %s dev sc1 nud permanent", ns_b, ADDR_B, ns_b,
	       ns_b, ADDR_A, MAC_A) ||
	    sh("ip -n %s link add sc2 mtu %d type veth peer name sc3 mtu %d netns %s", ns_a,
	       VETH_MTU, VETH_MTU, ns_b) ||
	    sh("ip -n %s addr add %s/24 dev sc2 && ip -n %s link set dev sc2 up", ns_a, ADDR_A2,
	       ns_a) ||
	    sh("ip -n %s addr add %s/24 dev sc3 && ip -n %s link set dev sc3 up", ns_b, ADDR_B2,
	       ns_b))
		return -1;
	return 0;
}

/* The calling thread into the sender's (A) or receiver's (B) namespace; none on loopback. */
static int side(bool receiver)
{
	if (loopback)
		return 0;
	return enter_ns(receiver ? ns_b : ns_a);
}

static struct in_addr side_addr(bool receiver)
{
	struct in_addr a = { htonl(INADDR_LOOPBACK) };

	if (!loopback)
		inet_pton(AF_INET, receiver ? ADDR_B : ADDR_A, &a);
	return a;
}

/* ---- CPU accounting ---- */

struct cpu_mark {
	double rus;		/* this process: user + system */
	double busy;		/* the pinned CPU, from /proc/stat */
	double soft, all;	/* every CPU's softirq time, and busy time */
};

static void cpu_mark(int cpu, struct cpu_mark *m)
{
	unsigned long long u, ni, sy, id, io, irq, si;
	double hz = sysconf(_SC_CLK_TCK);
	struct rusage ru;
	char line[512], want[16];
	size_t wl;
	FILE *f;

	getrusage(RUSAGE_SELF, &ru);
	m->rus = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
		 ru.ru_stime.tv_usec / 1e6;
	m->busy = m->soft = m->all = 0;
	snprintf(want, sizeof(want), "cpu%d ", cpu);
	wl = strlen(want);
	f = fopen("/proc/stat", "r");
	while (f && fgets(line, sizeof(line), f)) {
		bool total = !strncmp(line, "cpu ", 4), mine = !strncmp(line, want, wl);

		if ((!total && !mine) ||
		    sscanf(line + (total ? 4 : wl), "%llu %llu %llu %llu %llu %llu %llu", &u, &ni, &sy,
			   &id, &io, &irq, &si) != 7)
			continue;
		if (total) {
			m->all = (u + ni + sy + irq + si) / hz;
			m->soft = si / hz;
		} else {
			m->busy = (u + ni + sy + irq + si) / hz;
		}
	}
	if (f)
		fclose(f);
}

/* ---- UDP: inagg's messages through ia_io ---- */

/* vec[0..n) to out through inagg's message path; how many elements arrived. */
static size_t run_udp(int rfd, int sfd, const struct sockaddr_in *to, const int32_t *vec,
		      int32_t *out, size_t n)
{
	static struct ia_io_rx rx;
	static struct ia_io_tx tx;
	static uint8_t msg[IA_HDR_LEN + 4 * ELEMS];
	struct ia_host_faults none = { 0 };
	size_t sent = 0, got = 0;

	ia_io_rx_init(&rx);
	ia_io_tx_init(&tx, sfd, &none);
	while (sent < n && !interrupted) {
		size_t i;
		int k, inflight = 0;

		/* A window of messages, then drain it: the receiver keeps up, nothing drops. */
		for (i = 0; i < WINDOW && sent < n; i++, inflight++) {
			size_t len = n - sent < ELEMS ? n - sent : ELEMS;

			memset(msg, 0, IA_HDR_LEN);
			ia_io_payload_put(msg + IA_HDR_LEN, vec + sent, len);
			ia_io_tx_send(&tx, msg, IA_HDR_LEN + 4 * len, to);
			sent += len;
		}
		ia_io_tx_flush(&tx);
		while (inflight > 0 && (k = ia_io_rx_wait(rfd, &rx, 100000000ull)) > 0) {
			for (i = 0; i < (size_t)k; i++) {
				size_t len = (rx.mm[i].msg_len - IA_HDR_LEN) / 4;

				ia_io_payload_take(out + got, rx.buf[i] + IA_HDR_LEN, len);
				got += len;
			}
			inflight -= k;
		}
		if (inflight > 0)
			return got;	/* lost: the caller voids the run */
	}
	return got;
}

static int udp_setup(int *rfd, int *sfd, struct sockaddr_in *to)
{
	socklen_t len = sizeof(*to);
	char err[256];

	if (side(true))
		return -1;
	*rfd = ia_io_udp_open(side_addr(true), 0, err, sizeof(err));
	if (side(false))
		return -1;
	*sfd = ia_io_udp_open(side_addr(false), 0, err, sizeof(err));
	if (*rfd < 0 || *sfd < 0 || getsockname(*rfd, (struct sockaddr *)to, &len))
		return fprintf(stderr, "stack_cost: UDP: %s\n", err), -1;
	return 0;
}

/* ---- UDP GSO and GRO ---- */

/*
 * The same messages, 21 to a send (UDP_SEGMENT: 64 KiB) and coalesced on
 * receipt (UDP_GRO): the lever inagg cannot use while its switches zero the
 * UDP checksum (the kernel's UDP GRO takes checksummed datagrams only, and
 * GSO refuses SO_NO_CHECK). Plain checksummed sockets, not ia_io's.
 */
static size_t run_gso(int rfd, int sfd, const struct sockaddr_in *to, const int32_t *vec,
		      int32_t *out, size_t n)
{
	enum { SEG = IA_HDR_LEN + 4 * ELEMS, PER_SEND = 65507 / SEG };
	static uint8_t buf[PER_SEND * SEG], in[1 << 16];
	size_t sent = 0, got = 0;

	while (sent < n && !interrupted) {
		size_t i, nseg = 0, len = 0, first = got;
		union {
			char b[CMSG_SPACE(sizeof(uint16_t))];
			struct cmsghdr align;
		} ctl = { 0 };
		struct iovec iov = { buf, 0 };
		struct msghdr m = { .msg_name = (void *)to, .msg_namelen = sizeof(*to),
				    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
				    .msg_controllen = sizeof(ctl.b) };
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);

		/* Full segments only, but the vector's last one may be short. */
		for (; nseg < PER_SEND && sent < n; nseg++) {
			size_t k = n - sent < ELEMS ? n - sent : ELEMS;

			memset(buf + len, 0, IA_HDR_LEN);
			ia_io_payload_put(buf + len + IA_HDR_LEN, vec + sent, k);
			len += IA_HDR_LEN + 4 * k;
			sent += k;
		}
		iov.iov_len = len;
		c->cmsg_level = SOL_UDP;
		c->cmsg_type = UDP_SEGMENT;
		c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
		*(uint16_t *)CMSG_DATA(c) = SEG;
		if (sendmsg(sfd, &m, 0) != (ssize_t)len)
			return got;
		while (got - first < sent - first) {
			uint16_t gso = 0;
			char rctl[CMSG_SPACE(sizeof(int))];
			struct iovec riov = { in, sizeof(in) };
			struct msghdr rm = { .msg_iov = &riov, .msg_iovlen = 1, .msg_control = rctl,
					     .msg_controllen = sizeof(rctl) };
			ssize_t k = recvmsg(rfd, &rm, 0);
			struct cmsghdr *rc;

			if (k <= 0)
				return got;
			for (rc = CMSG_FIRSTHDR(&rm); rc; rc = CMSG_NXTHDR(&rm, rc))
				if (rc->cmsg_level == SOL_UDP && rc->cmsg_type == UDP_GRO)
					gso = *(int *)CMSG_DATA(rc);
			if (!gso)
				gso = k;
			/* Each segment is one inagg message. */
			for (i = 0; i < (size_t)k; i += gso) {
				size_t seg = (size_t)k - i < gso ? (size_t)k - i : gso;

				ia_io_payload_take(out + got, in + i + IA_HDR_LEN,
						   (seg - IA_HDR_LEN) / 4);
				got += (seg - IA_HDR_LEN) / 4;
			}
		}
	}
	return got;
}

static int gso_setup(int *rfd, int *sfd, struct sockaddr_in *to)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr = side_addr(true) };
	struct timeval tmo = { 1, 0 };	/* a lost datagram voids the run, not the bench */
	socklen_t len = sizeof(*to);
	int v = 8 << 20;

	if (side(true))
		return -1;
	*rfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (side(false))
		return -1;
	*sfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (*rfd < 0 || *sfd < 0 || bind(*rfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(*rfd, (struct sockaddr *)to, &len) ||
	    setsockopt(*rfd, SOL_UDP, UDP_GRO, &(int){ 1 }, sizeof(int)))
		return fprintf(stderr, "stack_cost: UDP GRO: %s\n", strerror(errno)), -1;
	setsockopt(*rfd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo));
	if (setsockopt(*rfd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)))
		setsockopt(*rfd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	if (setsockopt(*sfd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)))
		setsockopt(*sfd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
	return 0;
}

/* ---- TCP ---- */

/* vec to out as one TCP stream over a connected pair, both ends in this thread. */
static size_t run_tcp(int a, int b, const int32_t *vec, int32_t *out, size_t n)
{
	const uint8_t *src = (const uint8_t *)vec;
	uint8_t *dst = (uint8_t *)out;
	size_t bytes = 4 * n, wr = 0, rd = 0;

	while (rd < bytes && !interrupted) {
		ssize_t k = 0;

		while (wr < bytes) {
			k = write(a, src + wr, bytes - wr < TCP_IO ? bytes - wr : TCP_IO);
			if (k <= 0)
				break;
			wr += k;
		}
		while (rd < wr) {
			k = read(b, dst + rd, wr - rd < TCP_IO ? wr - rd : TCP_IO);
			if (k <= 0)
				break;
			rd += k;
		}
		if (k < 0 && errno != EAGAIN)
			break;
	}
	return rd / 4;
}

static int tcp_setup(int *a, int *b, bool tso)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr = side_addr(true) };
	socklen_t len = sizeof(sa);
	int l;

	if (tso)
		inet_pton(AF_INET, ADDR_B2, &sa.sin_addr);
	if (side(true))
		return -1;
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&sa, &len) || side(false))
		goto fail;
	*a = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*a < 0 || connect(*a, (struct sockaddr *)&sa, sizeof(sa)))
		goto fail;
	*b = accept(l, NULL, NULL);
	close(l);
	if (*b < 0)
		return fprintf(stderr, "stack_cost: TCP: %s\n", strerror(errno)), -1;
	fcntl(*a, F_SETFL, O_NONBLOCK);
	fcntl(*b, F_SETFL, O_NONBLOCK);
	return 0;
fail:
	fprintf(stderr, "stack_cost: TCP: %s\n", strerror(errno));
	return -1;
}

/* ---- AF_XDP, raw uapi (linux/if_xdp.h): libbpf 1.1 here has no xsk.h ---- */

struct xring {
	__u32 *prod, *cons, *flags;
	void *desc;
	void *map;
	size_t len;
};

struct xsk {
	int fd;
	uint8_t *umem;
	struct xring fill, comp, rx, tx;
	__u64 free[XSK_NFRAMES];	/* the sender's unused chunks */
	int nfree;
	bool wakeup;			/* bound with XDP_USE_NEED_WAKEUP */
};

static struct xsk xtx = { .fd = -1 }, xrx = { .fd = -1 };
static struct stack_cost_xsk *xprog;

static int xring_map(int fd, const struct xdp_ring_offset *o, off_t pgoff, size_t ent,
		     struct xring *r)
{
	r->len = o->desc + XSK_NFRAMES * ent;
	r->map = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, pgoff);
	if (r->map == MAP_FAILED)
		return r->map = NULL, -errno;
	r->prod = (__u32 *)((char *)r->map + o->producer);
	r->cons = (__u32 *)((char *)r->map + o->consumer);
	r->flags = (__u32 *)((char *)r->map + o->flags);
	r->desc = (char *)r->map + o->desc;
	return 0;
}

static void xsk_close(struct xsk *x)
{
	struct xring *rs[] = { &x->fill, &x->comp, &x->rx, &x->tx };
	size_t i;

	for (i = 0; i < sizeof(rs) / sizeof(rs[0]); i++)
		if (rs[i]->map)
			munmap(rs[i]->map, rs[i]->len);
	if (x->umem)
		munmap(x->umem, (size_t)XSK_NFRAMES * XSK_FRAME);
	if (x->fd >= 0)
		close(x->fd);
	memset(x, 0, sizeof(*x));
	x->fd = -1;
}

/*
 * An AF_XDP socket with its own UMEM on queue 0 of ifname (this thread's
 * namespace), copy mode: RX (its fill ring given every chunk) or TX.
 * 0, or -1 with why.
 */
static int xsk_open(struct xsk *x, const char *ifname, bool rx, char *why, size_t wl)
{
	struct xdp_umem_reg reg = { .len = (__u64)XSK_NFRAMES * XSK_FRAME,
				    .chunk_size = XSK_FRAME };
	struct sockaddr_xdp sa = { .sxdp_family = AF_XDP, .sxdp_queue_id = 0 };
	struct xdp_mmap_offsets off;
	socklen_t ol = sizeof(off);
	int n = XSK_NFRAMES, i, ret;
	const char *step;

	memset(x, 0, sizeof(*x));
	step = "socket(AF_XDP)";
	x->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (x->fd < 0)
		goto fail;
	step = "UMEM";
	x->umem = mmap(NULL, reg.len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (x->umem == MAP_FAILED) {
		x->umem = NULL;
		goto fail;
	}
	reg.addr = (__u64)(uintptr_t)x->umem;
	step = "XDP_UMEM_REG";
	if (setsockopt(x->fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)))
		goto fail;
	step = "ring sizes";
	if (setsockopt(x->fd, SOL_XDP, XDP_UMEM_FILL_RING, &n, sizeof(n)) ||
	    setsockopt(x->fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &n, sizeof(n)) ||
	    setsockopt(x->fd, SOL_XDP, rx ? XDP_RX_RING : XDP_TX_RING, &n, sizeof(n)))
		goto fail;
	step = "XDP_MMAP_OFFSETS";
	if (getsockopt(x->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &ol))
		goto fail;
	step = "mmap of the rings";
	if ((ret = xring_map(x->fd, &off.fr, XDP_UMEM_PGOFF_FILL_RING, sizeof(__u64), &x->fill)) ||
	    (ret = xring_map(x->fd, &off.cr, XDP_UMEM_PGOFF_COMPLETION_RING, sizeof(__u64),
			     &x->comp)) ||
	    (ret = rx ? xring_map(x->fd, &off.rx, XDP_PGOFF_RX_RING, sizeof(struct xdp_desc), &x->rx)
		      : xring_map(x->fd, &off.tx, XDP_PGOFF_TX_RING, sizeof(struct xdp_desc),
				  &x->tx))) {
		errno = -ret;
		goto fail;
	}
	if (rx) {
		for (i = 0; i < XSK_NFRAMES; i++)
			((__u64 *)x->fill.desc)[i] = (__u64)i * XSK_FRAME;
		__atomic_store_n(x->fill.prod, XSK_NFRAMES, __ATOMIC_RELEASE);
	} else {
		for (i = 0; i < XSK_NFRAMES; i++)
			x->free[i] = (__u64)i * XSK_FRAME;
		x->nfree = XSK_NFRAMES;
	}
	step = "bind (XDP_COPY)";
	sa.sxdp_ifindex = if_nametoindex(ifname);
	sa.sxdp_flags = XDP_COPY | XDP_USE_NEED_WAKEUP;
	x->wakeup = true;
	if (bind(x->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		sa.sxdp_flags = XDP_COPY;
		x->wakeup = false;
		if (bind(x->fd, (struct sockaddr *)&sa, sizeof(sa)))
			goto fail;
	}
	return 0;
fail:
	snprintf(why, wl, "%s on %s: %s", step, ifname, strerror(errno));
	xsk_close(x);
	return -1;
}

/* Ethernet, IPv4, UDP for a message of nelem elements; UDP checksum 0, as inagg's. */
static void xsk_headers(uint8_t *f, size_t nelem)
{
	static uint8_t tmpl[XSK_HDRS];
	static bool made;
	struct ethhdr *eth = (void *)f;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);

	if (!made) {	/* the constant part once, by the same code */
		made = true;
		memset(f, 0, XSK_HDRS);
		parse_mac(MAC_B, eth->h_dest);
		parse_mac(MAC_A, eth->h_source);
		eth->h_proto = htons(ETH_P_IP);
		ip->version = 4;
		ip->ihl = 5;
		ip->ttl = 64;
		ip->frag_off = htons(0x4000);	/* DF */
		ip->protocol = IPPROTO_UDP;
		ip->saddr = inet_addr(ADDR_A);
		ip->daddr = inet_addr(ADDR_B);
		udp->source = htons(40000);
		udp->dest = htons(XSK_PORT);
		memcpy(tmpl, f, XSK_HDRS);
	}
	memcpy(f, tmpl, XSK_HDRS);
	ip->tot_len = htons(20 + IA_UDP_LEN(nelem));
	ip->check = csum_ip(ip);
	udp->len = htons(IA_UDP_LEN(nelem));
}

/* The sender's finished chunks back to its free list. */
static void xsk_reclaim(struct xsk *x)
{
	__u32 cons = *x->comp.cons, prod = __atomic_load_n(x->comp.prod, __ATOMIC_ACQUIRE);

	for (; cons != prod; cons++)
		x->free[x->nfree++] = ((__u64 *)x->comp.desc)[cons & (XSK_NFRAMES - 1)];
	__atomic_store_n(x->comp.cons, cons, __ATOMIC_RELEASE);
}

/* What the RX ring holds into out (every payload byte read once); chunks back to the fill ring. */
static int xsk_take(struct xsk *x, int32_t *out, size_t *got, size_t n)
{
	__u32 cons = *x->rx.cons, prod = __atomic_load_n(x->rx.prod, __ATOMIC_ACQUIRE);
	__u32 fprod = *x->fill.prod;
	int k = 0;

	for (; cons != prod; cons++, k++) {
		const struct xdp_desc *d = (struct xdp_desc *)x->rx.desc + (cons & (XSK_NFRAMES - 1));
		size_t nelem = d->len > XSK_HDRS + IA_HDR_LEN ?
			       (d->len - XSK_HDRS - IA_HDR_LEN) / 4 : 0;

		if (*got + nelem > n)
			return -1;
		ia_io_payload_take(out + *got, x->umem + d->addr + XSK_HDRS + IA_HDR_LEN, nelem);
		*got += nelem;
		((__u64 *)x->fill.desc)[fprod++ & (XSK_NFRAMES - 1)] = d->addr & ~(__u64)(XSK_FRAME - 1);
	}
	__atomic_store_n(x->rx.cons, cons, __ATOMIC_RELEASE);
	__atomic_store_n(x->fill.prod, fprod, __ATOMIC_RELEASE);
	if (k && x->wakeup && (__atomic_load_n(x->fill.flags, __ATOMIC_ACQUIRE) &
			       XDP_RING_NEED_WAKEUP))
		recvfrom(x->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	return k;
}

/* vec[0..n) to out through the AF_XDP pair, in windows as run_udp; elements that arrived. */
static size_t run_xsk(struct xsk *t, struct xsk *r, const int32_t *vec, int32_t *out, size_t n)
{
	size_t sent = 0, got = 0;
	__u32 tprod = *t->tx.prod;

	while (sent < n && !interrupted) {
		int i, inflight = 0, k, spins = 0;

		xsk_reclaim(t);
		for (i = 0; i < WINDOW && sent < n && t->nfree; i++, inflight++) {
			size_t len = n - sent < ELEMS ? n - sent : ELEMS;
			__u64 addr = t->free[--t->nfree];
			uint8_t *f = t->umem + addr;
			struct xdp_desc *d = (struct xdp_desc *)t->tx.desc + (tprod & (XSK_NFRAMES - 1));

			xsk_headers(f, len);
			memset(f + XSK_HDRS, 0, IA_HDR_LEN);
			ia_io_payload_put(f + XSK_HDRS + IA_HDR_LEN, vec + sent, len);
			d->addr = addr;
			d->len = XSK_HDRS + IA_HDR_LEN + 4 * len;
			d->options = 0;
			tprod++;
			sent += len;
		}
		__atomic_store_n(t->tx.prod, tprod, __ATOMIC_RELEASE);
		/* Copy mode transmits only from sendto(), a batch at a time: kick until drained. */
		while (__atomic_load_n(t->tx.cons, __ATOMIC_ACQUIRE) != tprod) {
			if (sendto(t->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 && errno != EAGAIN &&
			    errno != EBUSY && errno != ENOBUFS && errno != EINTR) {
				fprintf(stderr, "stack_cost: AF_XDP sendto: %s\n", strerror(errno));
				return got;
			}
			if (++spins > 1000000 || interrupted)
				return got;
		}
		while (inflight > 0) {
			struct pollfd p = { .fd = r->fd, .events = POLLIN };

			k = xsk_take(r, out, &got, n);
			if (k < 0)
				return got;
			inflight -= k;
			if (inflight > 0 && !k && poll(&p, 1, 100) <= 0)
				return got;	/* lost: the caller voids the run */
		}
	}
	return got;
}

static void xsk_stats(const char *what, struct xsk *x)
{
	struct xdp_statistics st = { 0 };
	socklen_t l = sizeof(st);

	if (x->fd >= 0 && !getsockopt(x->fd, SOL_XDP, XDP_STATISTICS, &st, &l))
		fprintf(stderr, "stack_cost: %s socket: rx_dropped %llu rx_invalid %llu "
			"tx_invalid %llu rx_ring_full %llu fill_empty %llu tx_ring_empty %llu\n", what,
			st.rx_dropped, st.rx_invalid_descs, st.tx_invalid_descs, st.rx_ring_full,
			st.rx_fill_ring_empty_descs, st.tx_ring_empty_descs);
}

/*
 * The receiver's XDP program on sc1 (attached for every arm: it stands for the
 * switch's), and the two AF_XDP sockets if they bind. -1 if the program did
 * not attach; 0 with *why empty, or with why the AF_XDP arm is off.
 */
static int xsk_setup(char *why, size_t wl)
{
	__u32 key = 0;
	int ifb, err;

	why[0] = 0;
	if (side(true))
		return -1;
	xprog = stack_cost_xsk__open();
	if (!xprog)
		return fprintf(stderr, "stack_cost: XDP program: open failed\n"), -1;
	xprog->rodata->xsk_port = XSK_PORT;
	ifb = if_nametoindex("sc1");
	if ((err = stack_cost_xsk__load(xprog)) ||
	    (err = bpf_xdp_attach(ifb, bpf_program__fd(xprog->progs.sc_xsk), XDP_FLAGS_DRV_MODE,
				  NULL)))
		return fprintf(stderr, "stack_cost: XDP program on sc1: %s\n", strerror(-err)), -1;
	if (xsk_open(&xrx, "sc1", true, why, wl))
		return 0;
	if (bpf_map_update_elem(bpf_map__fd(xprog->maps.xsks), &key, &xrx.fd, 0)) {
		snprintf(why, wl, "XSKMAP update: %s", strerror(errno));
		xsk_close(&xrx);
		return 0;
	}
	if (side(false))
		return -1;
	if (xsk_open(&xtx, "sc0", false, why, wl))
		xsk_close(&xrx);
	return 0;
}

/* ---- the rounds ---- */

static void cell(const double *v, int n)
{
	double med, lo, hi;

	ia_median_range((double *)v, n, &med, &lo, &hi);
	printf(" %6.3f (%.3f-%.3f)", med, lo, hi);
}

/* A row per arm but TCP: two figures against TCP's, by getrusage() | by the CPU's busy time. */
static void pairs(const int *arms, int narms, double (*rus)[MAX_ROUNDS],
		  double (*busy)[MAX_ROUNDS], int rounds)
{
	for (int i = 0; i < narms; i++) {
		if (arms[i] == TCP)
			continue;
		printf("  %-24s", arm_row[arms[i]]);
		cell(rus[arms[i]], rounds);
		printf(" |");
		cell(busy[arms[i]], rounds);
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	static double rus[NARMS][MAX_ROUNDS], busy[NARMS][MAX_ROUNDS], soft[NARMS][MAX_ROUNDS],
		all[NARMS][MAX_ROUNDS], ratio[NARMS][MAX_ROUNDS], aratio[NARMS][MAX_ROUNDS],
		floor_[NARMS][MAX_ROUNDS], afloor[NARMS][MAX_ROUNDS];
	int rounds = 5, mib = 0, nw = 8, cpu = -1, r, arm, opt, rfd, sfd, ta, tb, grfd, gsfd, xa = -1, xb = -1;
	int arms[NARMS], narms = 0, i;
	bool on[NARMS] = { true, true, true, false, false };
	struct sockaddr_in to, gto;
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART: waits end */
	char why[256] = "loopback mode";
	int32_t *vec, *out;
	cpu_set_t set;
	size_t n;

	static const char *const arm_opt[NARMS] = { "udp", "tcp", "gso", "xsk", "tso" };
	const char *only = NULL;

	while ((opt = getopt(argc, argv, "lr:m:n:c:a:")) != -1) {
		if (opt == 'a')
			only = optarg;
		else if (opt == 'l')
			loopback = true;
		else if (opt == 'r')
			rounds = atoi(optarg);
		else if (opt == 'm')
			mib = atoi(optarg);
		else if (opt == 'n')
			nw = atoi(optarg);
		else if (opt == 'c')
			cpu = atoi(optarg);
		else
			return fprintf(stderr, "usage: %s [-l] [-r ROUNDS] [-m MIB] [-n WORKERS] "
				       "[-c CPU] [-a udp,tcp,gso,xsk,tso]\n", argv[0]), 2;
	}
	if (!mib)
		mib = loopback ? 64 : 256;
	if (cpu < 0)
		cpu = sysconf(_SC_NPROCESSORS_ONLN) - 1;
	if (rounds < 1 || rounds > MAX_ROUNDS || mib < 1 || mib > 1024 || nw < 2 || cpu < 0)
		return fprintf(stderr, "%s: rounds 1..%d, MiB 1..1024, workers >= 2\n", argv[0],
			       MAX_ROUNDS), 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return fprintf(stderr, "%s: CPU %d: %s\n", argv[0], cpu, strerror(errno)), 1;
	n = (size_t)mib << 18;
	vec = malloc(4 * n);
	out = malloc(4 * n);
	if (!vec || !out)
		return fprintf(stderr, "%s: out of memory\n", argv[0]), 1;
	for (i = 0; i < (int)n; i++)
		vec[i] = (int32_t)(i * 2654435761u);

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (!loopback) {
		home_ns = netns_save();
		if (geteuid())
			return fprintf(stderr, "%s: the veth mode needs root (or -l: loopback)\n",
				       argv[0]), 1;
		if (home_ns < 0 || rig_up() || xsk_setup(why, sizeof(why)))
			return fprintf(stderr, "%s: could not set up the veth pair\n", argv[0]), 1;
		on[XSK] = !why[0];
		on[TSO] = true;
	}
	if (udp_setup(&rfd, &sfd, &to) || tcp_setup(&ta, &tb, false) ||
	    gso_setup(&grfd, &gsfd, &gto) || (on[TSO] && tcp_setup(&xa, &xb, true)))
		return fprintf(stderr, "%s: setup failed\n", argv[0]), 1;
	if (home_ns >= 0)
		setns(home_ns, CLONE_NEWNET);
	if (!on[XSK])
		printf("# AF_XDP arm skipped: %s\n", why);
	for (arm = 0; arm < NARMS; arm++) {
		const char *p = only ? strstr(only, arm_opt[arm]) : NULL;

		if (on[arm] && (!only || p))
			arms[narms++] = arm;
		else
			on[arm] = false;
	}

	/* Round -1 warms every arm: pages touched, socket buffers grown. */
	for (r = -1; r < rounds && !interrupted; r++) {
		for (i = 0; i < narms; i++) {
			int a = arms[(i + r + 1) % narms];
			double gb = 4.0 * n / 1e9;
			struct cpu_mark m0, m1;
			size_t got;

			memset(out, 0, 4 * n);
			cpu_mark(cpu, &m0);
			got = a == TCP ? run_tcp(ta, tb, vec, out, n) :
			      a == TSO ? run_tcp(xa, xb, vec, out, n) :
			      a == GSO ? run_gso(grfd, gsfd, &gto, vec, out, n) :
			      a == XSK ? run_xsk(&xtx, &xrx, vec, out, n) :
			      run_udp(rfd, sfd, &to, vec, out, n);
			cpu_mark(cpu, &m1);
			if (interrupted)
				break;
			if (got != n || memcmp(vec, out, 4 * n)) {
				fprintf(stderr, "%s: %s arm moved %zu of %zu elements intact\n",
					argv[0], arm_name[a], got, n);
				if (a == XSK) {
					xsk_stats("sending", &xtx);
					xsk_stats("receiving", &xrx);
				}
				return 1;
			}
			if (r < 0)
				continue;
			rus[a][r] = (m1.rus - m0.rus) / gb;
			busy[a][r] = (m1.busy - m0.busy) / gb;
			soft[a][r] = (m1.soft - m0.soft) / gb;
			all[a][r] = (m1.all - m0.all) / gb;
		}
		for (i = 0; r >= 0 && i < narms && on[TCP]; i++) {
			int a = arms[i];

			ratio[a][r] = rus[a][r] / rus[TCP][r];
			aratio[a][r] = busy[a][r] / busy[TCP][r];
			floor_[a][r] = (nw + 1) * ratio[a][r] / (2.0 * (nw - 1));
			afloor[a][r] = (nw + 1) * aratio[a][r] / (2.0 * (nw - 1));
		}
	}
	if (interrupted)
		return fprintf(stderr, "%s: interrupted\n", argv[0]), 1;
	if (loopback)
		printf("# stack_cost: %d MiB over loopback", mib);
	else
		printf("# stack_cost: %d MiB over a veth pair (%s -> %s, MTU %d, XDP on the "
		       "receiving veth; AF_XDP in copy mode%s)", mib, ns_a, ns_b, VETH_MTU,
		       xtx.wakeup ? ", need_wakeup" : "");
	printf(", one thread on CPU %d, %d interleaved rounds after a warm-up; median (range)\n",
	       cpu, rounds);
	printf("# CPU s per GB moved, both ends: getrusage() | /proc/stat: CPU %d busy | all CPUs' "
	       "softirq, all CPUs busy (other processes' work too)\n", cpu);
	for (i = 0; i < narms; i++) {
		int a = arms[i];

		printf("  %-24s", arm_row[a]);
		cell(rus[a], rounds);
		printf(" |");
		cell(busy[a], rounds);
		printf(" |");
		cell(soft[a], rounds);
		cell(all[a], rounds);
		printf("\n");
	}
	if (!on[TCP])
		goto done;
	printf("# ratio to TCP: getrusage() | CPU %d busy\n", cpu);
	pairs(arms, narms, ratio, aratio, rounds);
	printf("# hosts' CPU inagg / Gloo if the socket path were all they spent, %d workers "
	       "((N + 1) x / (2 (N - 1)) TCP): getrusage() | CPU %d busy\n", nw, cpu);
	pairs(arms, narms, floor_, afloor, rounds);
done:
	xsk_close(&xtx);
	xsk_close(&xrx);
	stack_cost_xsk__destroy(xprog);
	free(vec);
	free(out);
	return 0;
}
