// SPDX-License-Identifier: GPL-2.0
/*
 * Workers and a PS on loopback under heavy loss, without switches: every
 * result exact and no worker giving up. The PS sends results to a
 * replicator standing in for the root switch, which copies each to every
 * worker; every sender (workers, PS, replicator) loses and duplicates its
 * messages, so contributions, results and the answers to late resends are
 * all lost on their way. A worker that gave up on a chunk while the others
 * still made progress (a storm of resends starving the result it missed)
 * fails here.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "err.h"
#include "host.h"
#include "host_io.h"

#define MAXW	16
/* Per process: unit tests of several checkouts may run at once. */
#define PORT	(20000 + getpid() % 30000)

struct shared {
	volatile sig_atomic_t stop;
	int rc[MAXW];
	uint64_t checksum[MAXW];
	char err[MAXW][IA_ERRLEN];
	struct ia_worker_stats st[MAXW];
	struct ia_ps_stats ps;
	char ps_err[IA_ERRLEN];
	int ps_rc;
};

static struct in_addr lo(int host)
{
	struct in_addr a = { htonl(0x7f000000 | host) };

	return a;
}

/* The root switch's part: every result to every worker, each copy impaired. */
static void replicate(int nw, uint16_t port, const struct ia_host_faults *f)
{
	struct ia_io_tx tx;
	struct ia_io_rx rx;
	int fd = ia_io_udp_open(lo(2), port, NULL, 0);

	if (fd < 0)
		_exit(1);
	ia_io_tx_init(&tx, fd, f);
	ia_io_rx_init(&rx);
	for (;;) {
		int k = ia_io_rx_wait(fd, &rx, 10000000);

		for (int i = 0; i < k; i++)
			for (int m = 0; m < nw; m++) {
				struct sockaddr_in to = { .sin_family = AF_INET,
							  .sin_port = htons(port),
							  .sin_addr = lo(10 + m) };

				ia_io_tx_send(&tx, rx.buf[i], rx.mm[i].msg_len, &to);
			}
		ia_io_tx_flush(&tx);
	}
}

/*
 * An allreduce of nchunks chunks by nw workers, every send lost with
 * loss_ppm and duplicated with dup_ppm. Returns the number of exact workers.
 */
static int lossy_allreduce(struct __test_metadata *_metadata, int nw, int nchunks,
			   uint32_t loss_ppm, uint32_t dup_ppm, uint64_t seed,
			   struct shared *sh)
{
	size_t n = (size_t)nchunks * IA_CHUNK_DEFAULT;
	uint16_t port = PORT;
	int32_t *sum = calloc(n, sizeof(*sum)), *v = malloc(n * sizeof(*v));
	pid_t rep, ps, w[MAXW];
	int ready[2], go[2], exact = 0;
	uint64_t expected;
	char c;

	if (!sum || !v || pipe(ready) || pipe(go))
		return -1;
	for (int i = 0; i < nw; i++) {
		ia_host_fill(v, n, 1000 + i);
		ia_host_add(sum, v, n);
	}
	expected = ia_host_checksum(sum, n);
	free(sum);
	free(v);
	rep = fork();
	if (!rep) {
		struct ia_host_faults f = { .loss_ppm = loss_ppm, .dup_ppm = dup_ppm,
					    .seed = seed * 7 + 1 };

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[0]);
		close(go[1]);
		replicate(nw, port, &f);
	}
	ps = fork();
	if (!ps) {
		struct ia_ps_cfg cfg = {
			.job = 7, .id = IA_SENDER_DEST, .nworkers = nw, .nelem = n,
			.addr = lo(1), .port = port, .down_mode = IA_PS_DOWN_ADDR,
			.down = lo(2), .linger_ms = -1, .stop = &sh->stop,
			.faults = { .loss_ppm = loss_ppm, .dup_ppm = dup_ppm, .seed = seed * 7 + 2 },
		};
		struct ia_ps *p;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[0]);
		close(go[1]);
		sh->ps_rc = ia_ps_open(&cfg, &p, sh->ps_err, IA_ERRLEN);
		if (write(ready[1], "r", 1) != 1 || sh->ps_rc)
			_exit(1);
		sh->ps_rc = ia_ps_run(p, sh->ps_err, IA_ERRLEN);
		ia_ps_stats(p, &sh->ps);
		ia_ps_close(p);
		_exit(0);
	}
	if (read(ready[0], &c, 1) != 1)
		return -1;
	for (int i = 0; i < nw; i++) {
		w[i] = fork();
		if (!w[i]) {
			struct ia_worker_cfg cfg = {
				.job = 7, .id = i + 1, .addr = lo(10 + i), .ps = lo(1),
				.port = port, .nworkers = nw,
				.faults = { .loss_ppm = loss_ppm, .dup_ppm = dup_ppm,
					    .seed = seed * 1000 + i },
			};
			int32_t *vec = malloc(n * sizeof(*vec));
			struct ia_worker *wk;

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(go[1]);
			sh->rc[i] = -1;
			if (!vec || ia_worker_open(&cfg, &wk, sh->err[i], IA_ERRLEN)) {
				if (write(ready[1], "e", 1) != 1)
					_exit(2);
				_exit(1);
			}
			ia_host_fill(vec, n, 1000 + i);
			if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 0)
				_exit(1);
			sh->rc[i] = ia_worker_run(wk, vec, vec, n, sh->err[i], IA_ERRLEN);
			ia_worker_stats(wk, &sh->st[i]);
			sh->checksum[i] = ia_host_checksum(vec, n);
			ia_worker_close(wk);
			_exit(0);
		}
	}
	close(ready[1]);
	close(go[0]);
	for (int i = 0; i < nw; i++)
		if (read(ready[0], &c, 1) != 1)
			break;
	close(ready[0]);
	close(go[1]);
	for (int i = 0; i < nw; i++)
		waitpid(w[i], NULL, 0);
	sh->stop = 1;
	waitpid(ps, NULL, 0);
	kill(rep, SIGKILL);
	waitpid(rep, NULL, 0);
	for (int i = 0; i < nw; i++) {
		EXPECT_EQ(0, sh->rc[i]) TH_LOG("worker %d: %s", i, sh->err[i]);
		exact += !sh->rc[i] && sh->checksum[i] == expected;
	}
	return exact;
}

static void run_case(struct __test_metadata *_metadata, int nw, int nchunks, uint32_t loss_ppm,
		     uint32_t dup_ppm)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t retx = 0, timeouts = 0, fresh = 0;
	double elapsed = 0;

	ASSERT_NE(MAP_FAILED, sh);
	EXPECT_EQ(nw, lossy_allreduce(_metadata, nw, nchunks, loss_ppm, dup_ppm, 1, sh));
	EXPECT_EQ(0, sh->ps_rc) TH_LOG("PS: %s", sh->ps_err);
	/* Every contribution counted exactly once, whatever came twice. */
	EXPECT_EQ((uint64_t)nw * nchunks, sh->ps.contrib);
	for (int i = 0; i < nw; i++) {
		retx += sh->st[i].retx;
		timeouts += sh->st[i].timeouts;
		fresh += sh->st[i].timeouts_fresh;
		elapsed = sh->st[i].elapsed > elapsed ? sh->st[i].elapsed : elapsed;
	}
	if (loss_ppm)
		EXPECT_LT(0U, retx);
	TH_LOG("%d workers, %d chunks, %u ppm loss: %.3f s, resent %llu (by timer %llu, of "
	       "chunks sent once %llu), PS late %llu", nw, nchunks, loss_ppm, elapsed,
	       (unsigned long long)retx, (unsigned long long)timeouts, (unsigned long long)fresh,
	       (unsigned long long)sh->ps.late);
	munmap(sh, sizeof(*sh));
}

FIXTURE(lossy) {
	int unused;
};

FIXTURE_SETUP(lossy)
{
}

FIXTURE_TEARDOWN(lossy)
{
}

TEST_F(lossy, clean)
{
	run_case(_metadata, 8, 200, 0, 0);
}

TEST_F_TIMEOUT(lossy, one_percent, 120)
{
	run_case(_metadata, 16, 200, 10000, 10000);
}

TEST_F_TIMEOUT(lossy, ten_percent, 120)
{
	run_case(_metadata, 16, 200, 100000, 20000);
}

TEST_F_TIMEOUT(lossy, twenty_percent, 120)
{
	run_case(_metadata, 8, 100, 200000, 0);
}

TEST_HARNESS_MAIN
