/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rig of the host unit tests that hand-make messages on loopback:
 * addresses 127.0.0.N, bound UDP sockets, a PS run in a thread. Include
 * after host.h.
 */
#ifndef IA_TEST_HOST_RIG_H
#define IA_TEST_HOST_RIG_H

#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

static inline struct in_addr lo(int host)
{
	struct in_addr a = { htonl(0x7f000000 | host) };

	return a;
}

/* A UDP socket bound to 127.0.0.host:port (port 0: any); -1 on failure. */
static inline int bound(int host, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr = lo(host) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Sends len bytes of buf to 127.0.0.host:port whole: 0 or -errno. */
static inline int send_to(int fd, int host, uint16_t port, const void *buf, size_t len)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr = lo(host) };

	return sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)len ? 0
											    : -errno;
}

/* A PS run in a thread (ps_thread): what ia_ps_run() returned and said. */
struct ps_run {
	struct ia_ps *ps;
	int ret;
	char err[128];
};

static inline void *ps_thread(void *arg)
{
	struct ps_run *r = arg;

	r->ret = ia_ps_run(r->ps, r->err, sizeof(r->err));
	return NULL;
}

#endif
