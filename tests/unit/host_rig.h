/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rig of the host unit tests that hand-make messages on loopback:
 * addresses 127.0.0.N, bound UDP sockets, a PS or a worker run in a thread.
 * Include after host.h and host_io.h.
 */
#ifndef IA_TEST_HOST_RIG_H
#define IA_TEST_HOST_RIG_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
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

/* The last message recv_msg() took, whole. */
static uint8_t rig_msg[IA_IO_MSG_MAX] __attribute__((aligned(4)));

/* Receives one message within ms into rig_msg: its header in *h, its length or -errno. */
static inline int recv_msg(int fd, int ms, struct ia_hdr *h)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) != 1)
		return -ETIMEDOUT;
	n = recv(fd, rig_msg, sizeof(rig_msg), 0);
	if (n < IA_HDR_LEN)
		return -EBADMSG;
	memcpy(h, rig_msg, IA_HDR_LEN);
	return n;
}

/* A worker run in a thread (worker_thread) over vec[n], in place. */
struct worker_run {
	struct ia_worker *w;
	int32_t *vec;
	size_t n;
	int ret;
	char err[128];
};

static inline void *worker_thread(void *arg)
{
	struct worker_run *r = arg;

	r->ret = ia_worker_run(r->w, r->vec, r->vec, r->n, r->err, sizeof(r->err));
	return NULL;
}

/*
 * Binds the PS's socket at 127.0.0.4:cfg->port, opens r->w with cfg and
 * starts its run in *th: the PS's socket, or -1 (r->err says why when the
 * worker did not open).
 */
static inline int worker_start(const struct ia_worker_cfg *cfg, struct worker_run *r,
			       pthread_t *th)
{
	int ps = bound(4, cfg->port);

	if (ps < 0)
		return -1;
	if (ia_worker_open(cfg, &r->w, r->err, sizeof(r->err))) {
		close(ps);
		return -1;
	}
	if (pthread_create(th, NULL, worker_thread, r)) {
		ia_worker_close(r->w);
		close(ps);
		return -1;
	}
	return ps;
}

#endif
