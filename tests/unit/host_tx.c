// SPDX-License-Identifier: GPL-2.0
/*
 * The host endpoint's batched sending (user/lib/host/host_io.c): messages are
 * queued and leave in one sendmmsg() per flush or full queue, in order, and a
 * message the kernel refuses is lost alone. Loopback only, no root.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "kselftest_harness.h"
#include "host.h"
#include "host_io.h"

#define ERRLEN	256

struct pair {
	int rfd, sfd;
	struct sockaddr_in to;
	struct ia_io_tx *tx;
};

static void pair_open(struct __test_metadata *_metadata, struct pair *p)
{
	struct in_addr lo = { htonl(INADDR_LOOPBACK) };
	struct ia_host_faults none = { 0 };
	socklen_t len = sizeof(p->to);
	char err[ERRLEN];

	p->rfd = ia_io_udp_open(lo, 0, err, sizeof(err));
	ASSERT_LE(0, p->rfd) TH_LOG("%s", err);
	p->sfd = ia_io_udp_open(lo, 0, err, sizeof(err));
	ASSERT_LE(0, p->sfd) TH_LOG("%s", err);
	ASSERT_EQ(0, getsockname(p->rfd, (struct sockaddr *)&p->to, &len));
	p->tx = calloc(1, sizeof(*p->tx));
	ASSERT_NE(NULL, p->tx);
	ia_io_tx_init(p->tx, p->sfd, &none);
}

static void pair_close(struct pair *p)
{
	close(p->rfd);
	close(p->sfd);
	free(p->tx);
}

static int send_seq(struct pair *p, uint32_t seq, const struct sockaddr_in *to)
{
	return ia_io_tx_send(p->tx, &seq, sizeof(seq), to);
}

/* The sequence numbers waiting at the receiver, without blocking. */
static int drain_rx(int fd, uint32_t *seqs, int max)
{
	int n = 0;

	while (n < max && recv(fd, &seqs[n], sizeof(seqs[n]), MSG_DONTWAIT) == sizeof(seqs[n]))
		n++;
	return n;
}

/* Nothing leaves before a flush or a full queue; everything leaves in order. */
TEST(queued_until_flush)
{
	const int n = IA_IO_TX_BATCH + 8;
	uint32_t got[2 * IA_IO_TX_BATCH];
	struct pair p;
	int i, k;

	pair_open(_metadata, &p);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, send_seq(&p, i, &p.to));
	/* The full queue went out when the next message came. */
	k = drain_rx(p.rfd, got, ARRAY_SIZE(got));
	ASSERT_EQ(IA_IO_TX_BATCH, k);
	ASSERT_EQ(0, ia_io_tx_flush(p.tx));
	k += drain_rx(p.rfd, got + k, ARRAY_SIZE(got) - k);
	ASSERT_EQ(n, k);
	for (i = 0; i < n; i++)
		EXPECT_EQ(i, (int)got[i]);
	/* A flush of an empty queue sends nothing. */
	ASSERT_EQ(0, ia_io_tx_flush(p.tx));
	EXPECT_EQ(0, drain_rx(p.rfd, got, ARRAY_SIZE(got)));
	EXPECT_EQ(0, (int)p.tx->send_err);
	pair_close(&p);
}

/*
 * A message the kernel refuses (here: the ICMP "port unreachable" of an
 * earlier message, which IP_RECVERR hands to the next send) is lost as on the
 * wire; the rest of its batch still goes.
 */
TEST(refused_message_lost_alone)
{
	struct sockaddr_in closed;
	uint32_t got[16];
	struct pair p;
	int i, k;

	pair_open(_metadata, &p);
	ASSERT_EQ(0, ia_io_recverr(p.sfd));
	/* A port nobody listens on: bound and closed again. */
	closed = p.to;
	{
		struct in_addr lo = { htonl(INADDR_LOOPBACK) };
		socklen_t len = sizeof(closed);
		char err[ERRLEN];
		int fd = ia_io_udp_open(lo, 0, err, sizeof(err));

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&closed, &len));
		close(fd);
	}
	ASSERT_EQ(0, send_seq(&p, 100, &closed));
	ASSERT_EQ(0, ia_io_tx_flush(p.tx));
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, send_seq(&p, i, &p.to));
	ASSERT_EQ(0, ia_io_tx_flush(p.tx));
	k = drain_rx(p.rfd, got, ARRAY_SIZE(got));
	/* Each message either arrived or was counted as lost, in order. */
	EXPECT_EQ(5, k + (int)p.tx->send_err);
	EXPECT_EQ(1, (int)p.tx->send_err) TH_LOG("the refusal was not seen: %d arrived", k);
	for (i = 1; i < k; i++)
		EXPECT_LT(got[i - 1], got[i]);
	pair_close(&p);
}

/* A message longer than the socket's buffers is refused, not truncated. */
TEST(oversized_refused)
{
	static uint8_t big[IA_IO_MSG_MAX + 1];
	struct pair p;

	pair_open(_metadata, &p);
	EXPECT_EQ(-EMSGSIZE, ia_io_tx_send(p.tx, big, sizeof(big), &p.to));
	pair_close(&p);
}

TEST_HARNESS_MAIN
