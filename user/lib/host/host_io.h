/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Socket I/O shared by the worker and the destination (PS): a UDP socket set
 * up for inagg, batched receive, and sending with the test-only impairment of
 * struct ia_host_faults. Internal to the host endpoint (host_*.c).
 */
#ifndef INAGG_HOST_IO_H
#define INAGG_HOST_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "host.h"

#define IA_IO_MSG_MAX		(IA_HDR_LEN + 4 * IA_MAX_ELEMS + IA_SET_LEN)	/* + a member set trailer */
#define IA_IO_RX_BATCH		64
#define IA_IO_TX_BATCH		32	/* messages queued for one sendmmsg() */
#define IA_IO_POLL_MAX_MS	100	/* how often a stop flag is looked at */
#define IA_IO_UNREACH_MS	1000	/* refused (ICMP) and no result this long: give up */

/* The latest "destination unreachable" of messages sent: errno, when, where to. */
struct ia_io_unreach {
	int err;
	uint64_t at;
	struct sockaddr_in to;
};

/*
 * A socket's sending side, with its impairment (loss, duplication, reordering).
 * Messages are queued and go out in one sendmmsg() per ia_io_tx_flush() (or
 * when the queue is full): one system call per window, not per message.
 */
struct ia_io_tx {
	int fd;
	struct ia_host_faults f;
	uint64_t rng;
	bool held;		/* a message waiting to be sent after the next */
	size_t held_len;
	struct sockaddr_in held_to;
	uint8_t held_buf[IA_IO_MSG_MAX];
	unsigned int queued;
	struct mmsghdr q_mm[IA_IO_TX_BATCH];
	struct iovec q_iov[IA_IO_TX_BATCH];
	struct sockaddr_in q_to[IA_IO_TX_BATCH];
	uint8_t q_buf[IA_IO_TX_BATCH][IA_IO_MSG_MAX];
	uint64_t send_err;	/* transient errors (buffer full, no route) */
	struct ia_io_unreach unreach;	/* a send refused: no route (ENETUNREACH) */
};

/* ECN of the IP TOS (RFC 3168): what hosts send, and the switches' or a qdisc's mark. */
#define IA_IO_ECT0		0x2
#define IA_IO_ECN_MASK		0x3
#define IA_IO_CE		0x3

/*
 * A batch of datagrams from recvmmsg(), with the IP TOS each arrived with
 * and when it arrived (at[], CLOCK_MONOTONIC ns: the kernel's receive time
 * on a socket of ia_io_rx_stamps(), else when it was read).
 */
struct ia_io_rx {
	struct mmsghdr mm[IA_IO_RX_BATCH];
	struct iovec iov[IA_IO_RX_BATCH];
	struct sockaddr_in from[IA_IO_RX_BATCH];
	uint8_t tos[IA_IO_RX_BATCH];
	uint64_t at[IA_IO_RX_BATCH];
	uint8_t ctl[IA_IO_RX_BATCH][CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct timespec))];
	uint8_t buf[IA_IO_RX_BATCH][IA_IO_MSG_MAX + 4];	/* + 4: see a longer datagram as such */
	struct ia_io_unreach unreach;	/* the latest ICMP unreachable (ia_io_recverr()) */
};

/* Bind with SO_REUSEPORT (host_share.h); off by default. */
extern bool ia_io_reuseport;

/*
 * A bound, non-blocking-use UDP socket for inagg messages; fd or -errno. It
 * sends ECT(0), so that a switch or a qdisc marks CE rather than drops
 * (docs/cc.md), and receives each datagram's TOS (ia_io_rx.tos).
 */
int ia_io_udp_open(struct in_addr addr, uint16_t port, char *err, size_t errlen);
/* -EMSGSIZE (and why) if messages of chunk elements exceed the MTU of the route to to. */
int ia_io_mtu_check(struct in_addr to, uint32_t chunk, char *err, size_t errlen);
void ia_io_tx_init(struct ia_io_tx *t, int fd, const struct ia_host_faults *f);
/* Queues (or, impaired, drops, duplicates or holds back) one message. */
int ia_io_tx_send(struct ia_io_tx *t, const void *buf, size_t len, const struct sockaddr_in *to);
/*
 * Sends what is queued and a held-back message, if any: call it before
 * waiting for an answer and before returning.
 */
int ia_io_tx_flush(struct ia_io_tx *t);

void ia_io_rx_init(struct ia_io_rx *r);
/*
 * The kernel stamps each datagram of fd when it arrives (SO_TIMESTAMPNS):
 * ia_io_rx.at is then when it was queued, not when it was read. 0 or -errno.
 */
int ia_io_rx_stamps(int fd);
/* Datagram i of the batch arrived marked CE. */
static inline bool ia_io_rx_ce(const struct ia_io_rx *r, int i)
{
	return (r->tos[i] & IA_IO_ECN_MASK) == IA_IO_CE;
}

/*
 * Waits up to timeout_ns for datagrams; returns how many (0 on timeout) or
 * -errno. ICMP errors of a socket with ia_io_recverr() go to r->unreach.
 */
int ia_io_rx_wait(int fd, struct ia_io_rx *r, uint64_t timeout_ns);

/*
 * Reports the ICMP errors (destination unreachable: nothing listens on the
 * port, no such host or network) of messages the socket sent; without it an
 * unbound UDP socket never learns of them.
 */
int ia_io_recverr(int fd);
/*
 * -EHOSTUNREACH and a message naming dest ("no PS at ADDR:PORT: why") when the latest
 * ICMP error of r, or refused send of t, was about a message to dest and came
 * after since (a result), which is at least IA_IO_UNREACH_MS before now; else 0.
 */
int ia_io_unreach_check(const struct ia_io_rx *r, const struct ia_io_tx *t,
			const struct sockaddr_in *dest, const char *what, uint64_t since,
			uint64_t now, char *err, size_t errlen);

/* Payload elements in wire order (little-endian int32). */
void ia_io_payload_put(uint8_t *p, const int32_t *v, size_t n);
uint32_t ia_io_payload_get(const uint8_t *p, size_t i);
/* n elements of a payload into v: one pass (a copy on little-endian hosts), no call per element. */
void ia_io_payload_take(int32_t *v, const uint8_t *p, size_t n);

uint64_t ia_io_now_ns(void);
/* Nanoseconds from now until t, at most IA_IO_POLL_MAX_MS (a stop flag's period). */
uint64_t ia_io_ns_until(uint64_t t, uint64_t now);

#endif
