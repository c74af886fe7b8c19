// SPDX-License-Identifier: GPL-2.0
/* UDP sockets, batched receive and (test) impaired sending of host_io.h. */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/ip_icmp.h>
#include <linux/errqueue.h>

#include "err.h"
#include "host_io.h"

#define SOCK_BUF	(8 << 20)

uint64_t ia_io_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

uint64_t ia_io_ns_until(uint64_t t, uint64_t now)
{
	const uint64_t max = IA_IO_POLL_MAX_MS * 1000000ull;

	if (t <= now)
		return 0;
	return t - now > max ? max : t - now;
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

void ia_io_payload_put(uint8_t *p, const int32_t *v, size_t n)
{
	size_t i;

	/* The wire's order is the host's: one copy, not a loop. */
	if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
		memcpy(p, v, 4 * n);
		return;
	}
	for (i = 0; i < n; i++) {
		uint32_t le = htole32((uint32_t)v[i]);

		memcpy(p + 4 * i, &le, 4);
	}
}

uint32_t ia_io_payload_get(const uint8_t *p, size_t i)
{
	uint32_t le;

	memcpy(&le, p + 4 * i, 4);
	return le32toh(le);
}

void ia_io_payload_take(int32_t *v, const uint8_t *p, size_t n)
{
	size_t i;

	if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
		memcpy(v, p, 4 * n);
		return;
	}
	for (i = 0; i < n; i++)
		v[i] = (int32_t)ia_io_payload_get(p, i);
}

/* Set by ia_host_share_enable() (host_share.h): several jobs' sockets on one port. */
bool ia_io_reuseport;

int ia_io_udp_open(struct in_addr addr, uint16_t port, char *err, size_t errlen)
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
		return ia_fail(err, errlen, -errno, "socket: %s", strerror(errno));
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
		return ia_fail(err, errlen, ret, "SO_NO_CHECK: %s", strerror(-ret));
	}
	if (ia_io_reuseport)
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &v, sizeof(v));
	/* ECT(0): congestion is marked (CE), not only dropped; and the marks seen. */
	v = IA_IO_ECT0;
	if (setsockopt(fd, IPPROTO_IP, IP_TOS, &v, sizeof(v)) ||
	    setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &(int){ 1 }, sizeof(int))) {
		ret = -errno;
		close(fd);
		return ia_fail(err, errlen, ret, "IP_TOS: %s", strerror(-ret));
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		inet_ntop(AF_INET, &addr, ip, sizeof(ip));
		close(fd);
		return ia_fail(err, errlen, ret, "bind %s:%u: %s", ip, port, strerror(-ret));
	}
	return fd;
}

/*
 * A message larger than the route's MTU would leave in IP fragments, which
 * no switch aggregates: say so at the start instead of timing out.
 */
int ia_io_mtu_check(struct in_addr to, uint32_t chunk, char *err, size_t errlen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(IA_UDP_PORT),
				  .sin_addr = to };
	uint32_t need = IA_MTU(chunk);
	int fd, mtu = 0;
	socklen_t len = sizeof(mtu);
	char ip[INET_ADDRSTRLEN];

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	/* No route, or a broadcast address: the sends will say, not this check. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &len))
		mtu = 0;
	close(fd);
	if (!mtu || need <= (uint32_t)mtu)
		return 0;
	inet_ntop(AF_INET, &to, ip, sizeof(ip));
	return ia_fail(err, errlen, -EMSGSIZE,
		       "chunks of %u elements need an MTU of %u bytes, the route to %s has %d: "
		       "raise every link's MTU (ip link set DEV mtu %u) or use chunks of at most %u elements",
		       chunk, need, ip, mtu, need, (mtu - IA_MTU(0)) / 4);
}

void ia_io_tx_init(struct ia_io_tx *t, int fd, const struct ia_host_faults *f)
{
	t->fd = fd;
	t->f = *f;
	t->rng = f->seed;
	t->held = false;
	t->queued = 0;
	t->send_err = 0;
	t->unreach = (struct ia_io_unreach){ 0 };
}

static bool faults_on(const struct ia_host_faults *f)
{
	return f->loss_ppm || f->dup_ppm || f->reorder_ppm;
}

static bool draw(struct ia_io_tx *t, uint32_t ppm)
{
	return ppm && ia_splitmix64(&t->rng) % 1000000 < ppm;
}

/*
 * What an ICMP error becomes (icmp_err_convert[]). With IP_RECVERR the next
 * send or receive of the socket returns it once, whatever that call did.
 */
static bool icmp_errno(int e)
{
	return e == EHOSTUNREACH || e == ENETUNREACH || e == ECONNREFUSED || e == EHOSTDOWN ||
	       e == ENONET || e == ENOPROTOOPT || e == EMSGSIZE || e == EOPNOTSUPP || e == EPROTO;
}

/* A send refused or dropped by the kernel; false for an error to report. */
static bool send_failed(struct ia_io_tx *t, int e, const struct sockaddr_in *to)
{
	/* Treated as loss: the retransmission timer recovers. */
	if (e == EAGAIN || e == ENOBUFS || e == EINTR || icmp_errno(e)) {
		/* No route: nothing was sent, and until the routes change nothing will be. */
		if (e == ENETUNREACH)
			t->unreach = (struct ia_io_unreach){ e, ia_io_now_ns(), *to };
		t->send_err++;
		return true;
	}
	return false;
}

/*
 * Sends the queue. A message the kernel refuses is lost as on the wire; the
 * rest still go (sendmmsg() stops before a failed message and loses its
 * errno: the next call starts with it and returns that errno).
 */
static int drain(struct ia_io_tx *t)
{
	unsigned int i = 0, n = t->queued;
	int sent;

	t->queued = 0;
	while (i < n) {
		sent = sendmmsg(t->fd, t->q_mm + i, n - i, 0);
		if (sent > 0) {
			i += sent;
			continue;
		}
		if (!send_failed(t, errno, &t->q_to[i]))
			return -errno;
		i++;
	}
	return 0;
}

static int queue_msg(struct ia_io_tx *t, const void *buf, size_t len, const struct sockaddr_in *to)
{
	unsigned int i;
	int ret;

	if (t->queued == IA_IO_TX_BATCH) {
		ret = drain(t);
		if (ret)
			return ret;
	}
	i = t->queued++;
	memcpy(t->q_buf[i], buf, len);
	t->q_to[i] = *to;
	t->q_iov[i] = (struct iovec){ .iov_base = t->q_buf[i], .iov_len = len };
	t->q_mm[i] = (struct mmsghdr){ .msg_hdr = {
		.msg_name = &t->q_to[i], .msg_namelen = sizeof(t->q_to[i]),
		.msg_iov = &t->q_iov[i], .msg_iovlen = 1 } };
	return 0;
}

/* The held-back message goes after the one just queued. */
static int release_held(struct ia_io_tx *t)
{
	if (!t->held)
		return 0;
	t->held = false;
	return queue_msg(t, t->held_buf, t->held_len, &t->held_to);
}

int ia_io_tx_flush(struct ia_io_tx *t)
{
	int ret = release_held(t);

	return ret ? ret : drain(t);
}

int ia_io_tx_send(struct ia_io_tx *t, const void *buf, size_t len, const struct sockaddr_in *to)
{
	int ret;

	if (len > IA_IO_MSG_MAX)
		return -EMSGSIZE;
	if (!faults_on(&t->f))
		return queue_msg(t, buf, len, to);
	if (draw(t, t->f.loss_ppm))
		return 0;
	if (!t->held && draw(t, t->f.reorder_ppm)) {
		memcpy(t->held_buf, buf, len);
		t->held_len = len;
		t->held_to = *to;
		t->held = true;
		return 0;
	}
	ret = queue_msg(t, buf, len, to);
	if (!ret && draw(t, t->f.dup_ppm))
		ret = queue_msg(t, buf, len, to);
	if (!ret)
		ret = release_held(t);
	return ret;
}

void ia_io_rx_init(struct ia_io_rx *r)
{
	int i;

	for (i = 0; i < IA_IO_RX_BATCH; i++) {
		r->iov[i].iov_base = r->buf[i];
		r->iov[i].iov_len = sizeof(r->buf[i]);
		r->mm[i].msg_hdr = (struct msghdr){
			.msg_name = &r->from[i],
			.msg_namelen = sizeof(r->from[i]),
			.msg_iov = &r->iov[i],
			.msg_iovlen = 1,
			.msg_control = r->ctl[i],
		};
	}
}

int ia_io_recverr(int fd)
{
	int on = 1;

	return setsockopt(fd, IPPROTO_IP, IP_RECVERR, &on, sizeof(on)) ? -errno : 0;
}

/* The socket's queued ICMP errors: the latest unreachable into r. */
static void drain_errors(int fd, struct ia_io_rx *r)
{
	uint8_t ctl[CMSG_SPACE(sizeof(struct sock_extended_err) + sizeof(struct sockaddr_in))];
	const struct sock_extended_err *e;
	struct sockaddr_in to;
	struct cmsghdr *c;
	struct msghdr m;
	int i;

	for (i = 0; i < IA_IO_RX_BATCH; i++) {
		m = (struct msghdr){ .msg_name = &to, .msg_namelen = sizeof(to),
				     .msg_control = ctl, .msg_controllen = sizeof(ctl) };
		if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return;
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			if (c->cmsg_level != IPPROTO_IP || c->cmsg_type != IP_RECVERR)
				continue;
			e = (const void *)CMSG_DATA(c);
			if (e->ee_origin != SO_EE_ORIGIN_ICMP || e->ee_type != ICMP_DEST_UNREACH)
				continue;
			r->unreach = (struct ia_io_unreach){ e->ee_errno, ia_io_now_ns(), to };
		}
	}
}

int ia_io_unreach_check(const struct ia_io_rx *r, const struct ia_io_tx *t,
			const struct sockaddr_in *dest, const char *what, uint64_t since,
			uint64_t now, char *err, size_t errlen)
{
	const struct ia_io_unreach *u = t->unreach.at > r->unreach.at ? &t->unreach : &r->unreach;
	char ip[INET_ADDRSTRLEN];
	const char *why;

	if (!u->err || u->at <= since || now - since < IA_IO_UNREACH_MS * 1000000ull ||
	    u->to.sin_addr.s_addr != dest->sin_addr.s_addr || u->to.sin_port != dest->sin_port)
		return 0;
	switch (u->err) {
	case ECONNREFUSED:
		why = "nothing listens on that port (ICMP port unreachable)";
		break;
	case EHOSTUNREACH:
		why = "host unreachable (ICMP)";
		break;
	case ENETUNREACH:
		why = u == &t->unreach ? "no route to it" : "network unreachable (ICMP)";
		break;
	default:
		why = strerror(u->err);
		break;
	}
	inet_ntop(AF_INET, &dest->sin_addr, ip, sizeof(ip));
	/* Not -ECONNREFUSED: for the API that is inaggd's refusal of the job (api.h). */
	return ia_fail(err, errlen, -EHOSTUNREACH, "no %s at %s:%u: %s, no result for %.1f s", what,
		       ip, ntohs(dest->sin_port), why, (now - since) / 1e9);
}

int ia_io_rx_stamps(int fd)
{
	return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &(int){ 1 }, sizeof(int)) ? -errno : 0;
}

int ia_io_rx_wait(int fd, struct ia_io_rx *r, uint64_t timeout_ns)
{
	struct timespec rt;
	uint64_t now, off;
	struct timespec ts = { timeout_ns / 1000000000ull, timeout_ns % 1000000000ull };
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int i, n;

	/* ppoll: retransmission timers are well below a millisecond. */
	n = ppoll(&p, 1, &ts, NULL);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (n == 0)
		return 0;
	if (p.revents & POLLERR)
		drain_errors(fd, r);
	for (i = 0; i < IA_IO_RX_BATCH; i++) {
		r->mm[i].msg_hdr.msg_namelen = sizeof(r->from[i]);
		r->mm[i].msg_hdr.msg_controllen = sizeof(r->ctl[i]);
	}
	n = recvmmsg(fd, r->mm, IA_IO_RX_BATCH, MSG_DONTWAIT, NULL);
	/* An ICMP error that came meanwhile: read at the next wait. */
	if (n < 0)
		return (errno == EAGAIN || errno == EINTR || icmp_errno(errno)) ? 0 : -errno;
	/* Stamps are CLOCK_REALTIME: moved to CLOCK_MONOTONIC by the offset now. */
	now = ia_io_now_ns();
	clock_gettime(CLOCK_REALTIME, &rt);
	off = (uint64_t)rt.tv_sec * 1000000000ull + rt.tv_nsec - now;
	for (i = 0; i < n; i++) {
		struct msghdr *m = &r->mm[i].msg_hdr;
		struct cmsghdr *c;

		r->tos[i] = 0;
		r->at[i] = now;
		for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
			if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS &&
			    c->cmsg_len >= CMSG_LEN(1))
				r->tos[i] = *CMSG_DATA(c);
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
			    c->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
				struct timespec t;
				uint64_t at;

				memcpy(&t, CMSG_DATA(c), sizeof(t));
				at = (uint64_t)t.tv_sec * 1000000000ull + t.tv_nsec - off;
				/* A clock step between stamp and read: the read time. */
				if (at <= now && now - at < 1000000000ull)
					r->at[i] = at;
			}
		}
	}
	return n;
}
