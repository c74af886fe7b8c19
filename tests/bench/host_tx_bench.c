// SPDX-License-Identifier: GPL-2.0
/*
 * The host endpoint's sending, one lever of docs/allreduce.md: windows of
 * full-size inagg messages over loopback, sent one sendto() each (the
 * endpoint before batching, the baseline) and through ia_io_tx (queued, one
 * sendmmsg() per window). The receiver drains each window in the same
 * thread, the same in both arms, so the difference is the sending's. The
 * arms are interleaved round by round; it prints CPU microseconds per
 * message (this process's user + system) and wall time, median and range,
 * and the ratio batched / per message. No root.
 *
 * Usage: host_tx_bench [-r ROUNDS] [-n MESSAGES] [-w WINDOW]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "host.h"
#include "host_io.h"
#include "stats.h"

#define MAX_ROUNDS	50

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double wall_now(void)
{
	return ia_io_now_ns() / 1e9;
}

/* Reads until the window's messages have come (or 100 ms pass: lost). */
static void drain(int fd, struct ia_io_rx *rx, int n)
{
	while (n > 0) {
		int k = ia_io_rx_wait(fd, rx, 100000000ull);

		if (k <= 0)
			return;
		n -= k;
	}
}

/* Seconds of CPU and of wall clock for n messages in windows of w. */
static void run(bool batched, int rfd, int sfd, const struct sockaddr_in *to, int n, int w,
		double *cpu, double *wall)
{
	static uint8_t msg[IA_HDR_LEN + 4 * IA_CHUNK_DEFAULT];
	static struct ia_io_rx rx;
	static struct ia_io_tx tx;
	struct ia_host_faults none = { 0 };
	double c0 = cpu_now(), t0 = wall_now();
	int sent = 0, i;

	ia_io_rx_init(&rx);
	ia_io_tx_init(&tx, sfd, &none);
	while (sent < n) {
		int win = n - sent < w ? n - sent : w;

		for (i = 0; i < win; i++) {
			if (batched)
				ia_io_tx_send(&tx, msg, sizeof(msg), to);
			else
				sendto(sfd, msg, sizeof(msg), 0, (const struct sockaddr *)to,
				       sizeof(*to));
		}
		if (batched)
			ia_io_tx_flush(&tx);
		drain(rfd, &rx, win);
		sent += win;
	}
	*cpu = cpu_now() - c0;
	*wall = wall_now() - t0;
}

static void print_row(const char *what, double *v, int n)
{
	double med, lo, hi;

	ia_median_range(v, n, &med, &lo, &hi);
	printf("  %-28s %8.3f (%.3f-%.3f)\n", what, med, lo, hi);
}

int main(int argc, char **argv)
{
	struct in_addr lo = { htonl(INADDR_LOOPBACK) };
	double cpu[2][MAX_ROUNDS], wall[2][MAX_ROUNDS], ratio[MAX_ROUNDS];
	int rounds = 7, n = 100000, w = 32, r, arm, opt, rfd, sfd;
	struct sockaddr_in to;
	socklen_t len = sizeof(to);
	char err[256];

	while ((opt = getopt(argc, argv, "r:n:w:")) != -1) {
		if (opt == 'r')
			rounds = atoi(optarg);
		else if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 'w')
			w = atoi(optarg);
		else
			return fprintf(stderr, "usage: %s [-r ROUNDS] [-n MESSAGES] [-w WINDOW]\n",
				       argv[0]), 2;
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || n < 1 || w < 1)
		return fprintf(stderr, "%s: rounds 1..%d, messages and window >= 1\n", argv[0],
			       MAX_ROUNDS), 2;
	rfd = ia_io_udp_open(lo, 0, err, sizeof(err));
	sfd = ia_io_udp_open(lo, 0, err, sizeof(err));
	if (rfd < 0 || sfd < 0 || getsockname(rfd, (struct sockaddr *)&to, &len))
		return fprintf(stderr, "%s: %s\n", argv[0], err), 1;
	for (r = 0; r < rounds; r++) {
		/* Alternate which arm goes first: neither always runs on a warm cache. */
		for (arm = 0; arm < 2; arm++) {
			int a = (arm + r) % 2;

			run(a, rfd, sfd, &to, n, w, &cpu[a][r], &wall[a][r]);
			cpu[a][r] *= 1e6 / n;
			wall[a][r] *= 1e6 / n;
		}
		ratio[r] = cpu[1][r] / cpu[0][r];
	}
	printf("# host_tx_bench: %d messages of %zu bytes in windows of %d over loopback, "
	       "%d interleaved rounds; median (range)\n", n, (size_t)IA_HDR_LEN + 4 * IA_CHUNK_DEFAULT,
	       w, rounds);
	print_row("sendto, CPU us/message", cpu[0], rounds);
	print_row("sendmmsg, CPU us/message", cpu[1], rounds);
	print_row("sendto, wall us/message", wall[0], rounds);
	print_row("sendmmsg, wall us/message", wall[1], rounds);
	print_row("CPU sendmmsg / sendto", ratio, rounds);
	close(rfd);
	close(sfd);
	return 0;
}
