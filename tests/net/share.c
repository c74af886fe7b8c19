// SPDX-License-Identifier: GPL-2.0
/*
 * Several jobs' endpoints on one host (user/lib/host_share.h): two
 * processes bind the host's inagg port with sharing on and register jobs 5
 * and 4105; datagrams for either job, interleaved, each reach only the process
 * of their job. Without sharing the second bind fails (why concurrent jobs
 * on a host need it). Each test runs in a private network namespace of its
 * own (unshare), loopback only.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "kselftest_harness.h"
#include "host.h"
#include "host_io.h"
#include "host_share.h"

#define PER_JOB 200

struct counts {
	int ready;
	uint64_t own, foreign;
};

static int private_net(void)
{
	if (unshare(CLONE_NEWNET))
		return -errno;
	return system("ip link set lo up") ? -EIO : 0;
}

static struct in_addr lo(void)
{
	return (struct in_addr){ htonl(INADDR_LOOPBACK) };
}

/* A receiver of job's datagrams until 300 ms pass without one. */
static pid_t receiver(const struct ia_host_steer *s, uint32_t job, struct counts *c, int ready)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct timeval tv = { .tv_usec = 300000 };
		char err[128], buf[256];
		int fd = ia_io_udp_open(lo(), IA_UDP_PORT, err, sizeof(err));

		if (fd < 0 || ia_host_steer_join(s, job))
			_exit(1);
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (write(ready, "r", 1) != 1)
			_exit(1);
		for (;;) {
			ssize_t n = recv(fd, buf, sizeof(buf), 0);
			const struct ia_hdr *h = (const void *)buf;

			if (n < 0)
				break;
			if ((size_t)n >= sizeof(*h) && ntohl(h->job) == job)
				c->own++;
			else
				c->foreign++;
		}
		_exit(0);
	}
	return pid;
}

TEST(datagrams_reach_the_process_of_their_job)
{
	struct counts *c = mmap(NULL, 2 * sizeof(*c), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	/* 9 + 4096: ids are steered modulo the map's size. */
	static const uint32_t jobs[2] = { 5, 9 + IA_STEER_MAX_JOBS };
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(IA_UDP_PORT),
				  .sin_addr = lo() };
	struct ia_host_steer s;
	int ready[2], fd, ret;
	pid_t pid[2];
	char ch;

	ASSERT_NE(MAP_FAILED, c);
	memset(c, 0, 2 * sizeof(*c));
	ASSERT_EQ(0, private_net());
	ia_host_share_enable();
	ret = ia_host_steer_new(&s);
	ASSERT_EQ(0, ret) TH_LOG("steer: %s", strerror(-ret));
	ASSERT_EQ(0, pipe(ready));
	for (int i = 0; i < 2; i++) {
		pid[i] = receiver(&s, jobs[i], &c[i], ready[1]);
		ASSERT_LT(0, pid[i]);
		ASSERT_EQ(1, read(ready[0], &ch, 1));
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, fd);
	for (int k = 0; k < 2 * PER_JOB; k++) {
		struct ia_hdr h;

		ia_hdr_fill(&h, IA_MSG_CONTRIB, jobs[k % 2], k, 1, 1, 1, 0);
		ASSERT_EQ((ssize_t)sizeof(h), sendto(fd, &h, sizeof(h), 0,
						     (struct sockaddr *)&to, sizeof(to)));
		if (k % 64 == 63)
			usleep(1000);	/* within the receivers' buffers */
	}
	for (int i = 0; i < 2; i++) {
		int st;

		ASSERT_EQ(pid[i], waitpid(pid[i], &st, 0));
		EXPECT_EQ(0, st);
		EXPECT_EQ((uint64_t)PER_JOB, c[i].own) TH_LOG("job %u", jobs[i]);
		EXPECT_EQ(0ULL, c[i].foreign) TH_LOG("job %u", jobs[i]);
	}
	close(fd);
	ia_host_steer_free(&s);
}

TEST(without_sharing_a_second_job_cannot_bind)
{
	char err[128];
	int a, b;

	ASSERT_EQ(0, private_net());
	a = ia_io_udp_open(lo(), IA_UDP_PORT, err, sizeof(err));
	ASSERT_LE(0, a) TH_LOG("%s", err);
	b = ia_io_udp_open(lo(), IA_UDP_PORT, err, sizeof(err));
	EXPECT_EQ(-EADDRINUSE, b);
	close(a);
}

TEST(join_needs_a_shared_inagg_socket)
{
	struct ia_host_steer s;

	ASSERT_EQ(0, ia_host_steer_new(&s));
	EXPECT_EQ(-ENOENT, ia_host_steer_join(&s, 5));
	ia_host_steer_free(&s);
}

TEST_HARNESS_MAIN
