// SPDX-License-Identifier: GPL-2.0
/*
 * Members bound to their places and results to the PS (docs/security.md),
 * through BPF_PROG_TEST_RUN: a member's id is accepted only on the port it
 * was placed on and, on a host's port, only from its address and UDP port
 * IA_UDP_PORT (else drop_port, nothing added); a result only from the up
 * port (drop_type) and the PS's address and port (drop_port), checked
 * before a blue switch holds it.
 */
#include <bpf/bpf.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "xdp_switch.h"

#define NPORTS	4	/* 0: up, 1, 2: hosts, 3: a switch below */
#define JOB	11
#define W1	1	/* worker on port 1 */
#define W2	2	/* worker on port 2 */
#define SW3	(0x80000000u | 3)	/* a blue switch below, on port 3 */
#define IP_W1	IP(10, 9, 0, 10)
#define IP_W2	IP(10, 9, 0, 11)
#define NELEM	16

FIXTURE(bind) {
	struct ia_xdp *x;
	int port[NPORTS];
	__u8 in[4096], out[4096];
};

FIXTURE_SETUP(bind)
{
	struct ia_sender m[3] = { { W1, 1 }, { W2, 1 }, { SW3, 2 } };
	struct ia_xdp_bind b[3];
	struct ia_xdp_hop down[3] = {};
	struct ia_xdp_job j = {
		.id = JOB, .role = IA_ROLE_BLUE, .window = 4, .self_id = 900,
		.nmembers = 3, .members = m, .bind = b, .ps_addr = IP_PS,
		.ndown = 3, .down = down,
	};
	int i;

	ASSERT_EQ(0, switch_ports(NPORTS, self->port, NULL));
	ASSERT_EQ(0, ia_xdp_open(NULL, &self->x, NULL, 0));
	for (i = 0; i < NPORTS; i++)
		ASSERT_EQ(0, ia_xdp_port_add(self->x, self->port[i]));
	j.up = (struct ia_xdp_hop){ .ifindex = self->port[0], .saddr = IP_SW, .daddr = IP_PS };
	b[0] = (struct ia_xdp_bind){ self->port[1], IP_W1 };
	b[1] = (struct ia_xdp_bind){ self->port[2], IP_W2 };
	b[2] = (struct ia_xdp_bind){ self->port[3], 0 };
	for (i = 0; i < 3; i++)
		down[i].ifindex = self->port[1 + i];
	/* A member placed on the up port is refused: its messages never could come. */
	b[2].ifindex = self->port[0];
	ASSERT_EQ(-EINVAL, ia_xdp_job_add(self->x, &j, NULL, 0));
	b[2].ifindex = self->port[3];
	ASSERT_EQ(0, ia_xdp_job_add(self->x, &j, NULL, 0));
}

FIXTURE_TEARDOWN(bind)
{
	ia_xdp_close(self->x);
}

static struct frame_spec up_msg(__u32 seq, __u32 sender, __be32 saddr, __u16 sport)
{
	struct frame_spec f = {
		.saddr = saddr, .daddr = IP_PS, .sport = sport,
		.type = sender == SW3 ? IA_MSG_AGG : IA_MSG_CONTRIB, .job = JOB, .seq = seq,
		.sender = sender, .nworkers = sender == SW3 ? 2 : 1, .nelem = NELEM,
	};

	memcpy(f.smac, mac_w, 6);
	memcpy(f.dmac, mac_sw, 6);
	return f;
}

static int send_on(struct ia_xdp *x, int ifindex, __u8 *in, __u8 *out, struct frame_spec f)
{
	int len = build_frame(in, &f);

	return run(x, ifindex, in, len, out, NULL);
}

/* Forgeries of members' ids: each dropped and counted, nothing added. */
static const struct forge {
	const char *what;
	int port;		/* arrives on port[port] */
	__u32 sender;
	__u8 host;		/* source 10.9.0.host */
	__u16 sport;
} forgeries[] = {
	{ "W1's id from W2's port and address",	2, W1,  11, IA_UDP_PORT },
	{ "W1's id and address from W2's port",	2, W1,  10, IA_UDP_PORT },
	{ "W1's id from the switch's port",	3, W1,  10, IA_UDP_PORT },
	{ "W1's id from its port, spoofed",	1, W1,  99, IA_UDP_PORT },
	{ "W1's id from its port and address, another UDP port", 1, W1, 10, 40000 },
	{ "the switch's id from a host port",	1, SW3, 10, IA_UDP_PORT },
};

TEST_F(bind, forged_members_dropped_and_counted)
{
	struct ia_slot slot;
	size_t i;

	for (i = 0; i < sizeof(forgeries) / sizeof(forgeries[0]); i++) {
		const struct forge *g = &forgeries[i];

		TH_LOG("%s", g->what);
		ASSERT_EQ(XDP_DROP, send_on(self->x, self->port[g->port], self->in, self->out,
					   up_msg(0, g->sender, IP(10, 9, 0, g->host), g->sport)));
		ASSERT_EQ(i + 1, jctr(self->x, JOB, IA_C_DROP_PORT));
	}
	ASSERT_EQ(0, jctr(self->x, JOB, IA_C_AGGREGATED));
	ASSERT_EQ(0, jctr(self->x, JOB, IA_C_DROP_MEMBER));
	ASSERT_EQ(0, ia_xdp_slot_read(self->x, JOB, 0, &slot));
	ASSERT_EQ(IA_SLOT_EMPTY, slot.state);

	/* The real members from their places: the chunk completes, once. */
	ASSERT_EQ(XDP_DROP, send_on(self->x, self->port[1], self->in, self->out,
				    up_msg(0, W1, IP_W1, IA_UDP_PORT)));
	ASSERT_EQ(XDP_DROP, send_on(self->x, self->port[2], self->in, self->out,
				    up_msg(0, W2, IP_W2, IA_UDP_PORT)));
	/* A switch below sends from its own address: not bound there. */
	ASSERT_EQ(XDP_REDIRECT, send_on(self->x, self->port[3], self->in, self->out,
					up_msg(0, SW3, IP(10, 9, 3, 1), IA_UDP_PORT)));
	ASSERT_EQ(3, jctr(self->x, JOB, IA_C_AGGREGATED));
	ASSERT_EQ(1, jctr(self->x, JOB, IA_C_EMIT));
	ASSERT_EQ(0, jctr(self->x, JOB, IA_C_DUP));
}

static struct frame_spec result(__be32 saddr, __u16 sport)
{
	struct frame_spec f = up_msg(0, 0, saddr, sport);

	f.type = IA_MSG_RESULT;
	f.nworkers = 4;
	f.daddr = IP_SW;
	return f;
}

/*
 * Forged results: never broadcast, never held. Before the check moved
 * ahead of ia_hold, a blue switch held a result from a worker's port (then
 * dropped it) and answered the next resend with it.
 */
TEST_F(bind, forged_results_neither_sent_nor_held)
{
	struct frame_spec f;
	struct ia_slot slot;

	ASSERT_EQ(XDP_DROP, send_on(self->x, self->port[1], self->in, self->out,
				    up_msg(0, W1, IP_W1, IA_UDP_PORT)));
	ASSERT_EQ(XDP_DROP, send_on(self->x, self->port[2], self->in, self->out,
				    up_msg(0, W2, IP_W2, IA_UDP_PORT)));
	ASSERT_EQ(XDP_REDIRECT, send_on(self->x, self->port[3], self->in, self->out,
					up_msg(0, SW3, IP(10, 9, 3, 1), IA_UDP_PORT)));
	/* From a worker's port (even with the PS's address), from the PS's side spoofed. */
	ASSERT_EQ(XDP_DROP, send_on(self->x, self->port[1], self->in, self->out,
				    result(IP_PS, IA_UDP_PORT)));
	ASSERT_EQ(1, jctr(self->x, JOB, IA_C_DROP_TYPE));
	ASSERT_EQ(XDP_DROP, send_on(self->x, self->port[0], self->in, self->out,
				    result(IP(10, 9, 0, 77), IA_UDP_PORT)));
	ASSERT_EQ(XDP_DROP, send_on(self->x, self->port[0], self->in, self->out,
				    result(IP_PS, 40000)));
	ASSERT_EQ(2, jctr(self->x, JOB, IA_C_DROP_PORT));
	ASSERT_EQ(0, jctr(self->x, JOB, IA_C_RESULT));
	ASSERT_EQ(0, ia_xdp_slot_read(self->x, JOB, 0, &slot));
	ASSERT_EQ(IA_SLOT_DONE, slot.state);
	ASSERT_EQ(0, slot.held);
	/* So a member's resend re-emits the aggregate instead of answering a forgery. */
	f = up_msg(0, W1, IP_W1, IA_UDP_PORT);
	f.flags = IA_F_RETX;
	ASSERT_EQ(XDP_REDIRECT, send_on(self->x, self->port[1], self->in, self->out, f));
	ASSERT_EQ(1, jctr(self->x, JOB, IA_C_REEMIT));
	ASSERT_EQ(0, jctr(self->x, JOB, IA_C_ANSWER));
	/* The PS's own result is held and sent down. */
	ASSERT_EQ(XDP_REDIRECT, send_on(self->x, self->port[0], self->in, self->out,
					result(IP_PS, IA_UDP_PORT)));
	ASSERT_EQ(1, jctr(self->x, JOB, IA_C_RESULT));
	ASSERT_EQ(0, ia_xdp_slot_read(self->x, JOB, 0, &slot));
	ASSERT_EQ(1, slot.held);
	ASSERT_EQ(XDP_TX, send_on(self->x, self->port[1], self->in, self->out, f));
	ASSERT_EQ(1, jctr(self->x, JOB, IA_C_ANSWER));
}

TEST_HARNESS_MAIN
