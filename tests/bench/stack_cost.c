// SPDX-License-Identifier: GPL-2.0
/*
 * The end hosts' socket path in an all-reduce (docs/allreduce.md §8): what the
 * kernel's socket path costs per GB moved from one host's memory to
 * another's, with nothing else on the path. One vector goes over loopback
 * as inagg's hosts move it (768-element messages of 3,094 bytes of UDP
 * payload through ia_io_tx / ia_io_rx: sendmmsg, recvmmsg, the payload
 * copied into and out of each message), as the same messages would go with
 * UDP GSO and GRO (21 to a send, coalesced on receipt: checksummed, which
 * inagg's switches do not keep), and as Gloo's ring moves it (a TCP stream
 * of 64 KiB writes and reads). Sender and receiver are one thread, so this
 * process's CPU time holds both ends and the loopback's softirq. Arms
 * interleaved round by round; CPU seconds per GB, median and range, and
 * the ratios to TCP. From them, the bench's ratio of host CPU per GB
 * (inagg at congestion 1 / Gloo) if the socket path were all the hosts
 * spent: each worker sends and receives one vector and the PS one (N + 1
 * crossings) against the ring's 2 (N-1)/N vectors per worker each way
 * (2 (N-1) crossings).
 *
 * Usage: stack_cost [-r ROUNDS] [-m MIB] [-n WORKERS]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>

#include "host.h"
#include "host_io.h"
#include "stats.h"

#define MAX_ROUNDS	50
#define ELEMS		IA_MAX_ELEMS		/* inagg's largest message */
#define WINDOW		64			/* messages in flight, the worker's default */
#define TCP_IO		(64 << 10)		/* a write or read of the stream */

enum { UDP, TCP, GSO, NARMS };
static const char *const arm_name[NARMS] = { "UDP", "TCP", "UDP GSO/GRO" };

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

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
	while (sent < n) {
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
			return got;	/* lost on loopback: the caller voids the run */
	}
	return got;
}

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

	while (sent < n) {
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

static int udp_gso_pair(int *rfd, int *sfd, struct sockaddr_in *to)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(*to);
	int v = 8 << 20;

	*rfd = socket(AF_INET, SOCK_DGRAM, 0);
	*sfd = socket(AF_INET, SOCK_DGRAM, 0);
	if (*rfd < 0 || *sfd < 0 || bind(*rfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(*rfd, (struct sockaddr *)to, &len) ||
	    setsockopt(*rfd, SOL_UDP, UDP_GRO, &(int){ 1 }, sizeof(int)))
		return -1;
	setsockopt(*rfd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	setsockopt(*sfd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
	return 0;
}

/* vec to out as one TCP stream over a connected pair, both ends in this thread. */
static size_t run_tcp(int a, int b, const int32_t *vec, int32_t *out, size_t n)
{
	const uint8_t *src = (const uint8_t *)vec;
	uint8_t *dst = (uint8_t *)out;
	size_t bytes = 4 * n, wr = 0, rd = 0;

	while (rd < bytes) {
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

static int tcp_pair(int *a, int *b)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&sa, &len))
		return -1;
	*a = socket(AF_INET, SOCK_STREAM, 0);
	if (*a < 0 || connect(*a, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	*b = accept(l, NULL, NULL);
	close(l);
	if (*b < 0)
		return -1;
	fcntl(*a, F_SETFL, O_NONBLOCK);
	fcntl(*b, F_SETFL, O_NONBLOCK);
	return 0;
}

static void print_row(const char *what, double *v, int n)
{
	double med, lo, hi;

	ia_median_range(v, n, &med, &lo, &hi);
	printf("  %-44s %8.3f (%.3f-%.3f)\n", what, med, lo, hi);
}

int main(int argc, char **argv)
{
	struct in_addr lo = { htonl(INADDR_LOOPBACK) };
	double cpu[NARMS][MAX_ROUNDS], ratio[2][MAX_ROUNDS], floor_[2][MAX_ROUNDS];
	int rounds = 5, mib = 64, nw = 8, r, arm, opt, rfd, sfd, ta, tb, grfd, gsfd;
	struct sockaddr_in to, gto;
	socklen_t len = sizeof(to);
	int32_t *vec, *out;
	size_t n, i;
	char err[256];

	while ((opt = getopt(argc, argv, "r:m:n:")) != -1) {
		if (opt == 'r')
			rounds = atoi(optarg);
		else if (opt == 'm')
			mib = atoi(optarg);
		else if (opt == 'n')
			nw = atoi(optarg);
		else
			return fprintf(stderr, "usage: %s [-r ROUNDS] [-m MIB] [-n WORKERS]\n",
				       argv[0]), 2;
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || mib < 1 || mib > 1024 || nw < 2)
		return fprintf(stderr, "%s: rounds 1..%d, MiB 1..1024, workers >= 2\n", argv[0],
			       MAX_ROUNDS), 2;
	n = (size_t)mib << 18;
	vec = malloc(4 * n);
	out = malloc(4 * n);
	if (!vec || !out)
		return fprintf(stderr, "%s: out of memory\n", argv[0]), 1;
	for (i = 0; i < n; i++)
		vec[i] = (int32_t)(i * 2654435761u);
	rfd = ia_io_udp_open(lo, 0, err, sizeof(err));
	sfd = ia_io_udp_open(lo, 0, err, sizeof(err));
	if (rfd < 0 || sfd < 0 || getsockname(rfd, (struct sockaddr *)&to, &len))
		return fprintf(stderr, "%s: %s\n", argv[0], err), 1;
	if (tcp_pair(&ta, &tb))
		return fprintf(stderr, "%s: TCP over loopback: %s\n", argv[0], strerror(errno)), 1;
	if (udp_gso_pair(&grfd, &gsfd, &gto))
		return fprintf(stderr, "%s: UDP GRO: %s\n", argv[0], strerror(errno)), 1;
	/* Round -1 warms every arm: pages touched, socket buffers grown. */
	for (r = -1; r < rounds; r++) {
		for (arm = 0; arm < NARMS; arm++) {
			int a = (arm + r + 1) % NARMS;
			double c0, c;
			size_t got;

			memset(out, 0, 4 * n);
			c0 = cpu_now();
			got = a == TCP ? run_tcp(ta, tb, vec, out, n) :
			      a == GSO ? run_gso(grfd, gsfd, &gto, vec, out, n) :
			      run_udp(rfd, sfd, &to, vec, out, n);
			c = cpu_now() - c0;
			if (got != n || memcmp(vec, out, 4 * n))
				return fprintf(stderr, "%s: %s arm moved %zu of %zu elements intact\n",
					       argv[0], arm_name[a], got, n), 1;
			if (r >= 0)
				cpu[a][r] = c / (4.0 * n / 1e9);
		}
		for (arm = 0; r >= 0 && arm < 2; arm++) {
			int a = arm ? GSO : UDP;

			ratio[arm][r] = cpu[a][r] / cpu[TCP][r];
			floor_[arm][r] = (nw + 1) * ratio[arm][r] / (2.0 * (nw - 1));
		}
	}
	printf("# stack_cost: %d MiB over loopback, %d interleaved rounds after a warm-up; "
	       "median (range)\n", mib, rounds);
	print_row("inagg's messages, CPU s/GB (both ends)", cpu[UDP], rounds);
	print_row("the same with UDP GSO + GRO, CPU s/GB", cpu[GSO], rounds);
	print_row("TCP stream (Gloo's), CPU s/GB", cpu[TCP], rounds);
	print_row("inagg's messages / TCP", ratio[0], rounds);
	print_row("with GSO + GRO / TCP", ratio[1], rounds);
	printf("  hosts' CPU inagg / Gloo if the socket path were all they spent, %d workers "
	       "((N + 1) x / (2 (N - 1)) TCP):\n", nw);
	print_row("inagg's messages", floor_[0], rounds);
	print_row("with GSO + GRO", floor_[1], rounds);
	free(vec);
	free(out);
	return 0;
}
