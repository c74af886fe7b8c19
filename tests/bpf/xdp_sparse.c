// SPDX-License-Identifier: GPL-2.0
/*
 * BPF_PROG_TEST_RUN tests of the sparse blue datapath (bpf/dp_sparse.h):
 * word count's announcements and key blocks at one switch. Verdicts,
 * emitted bytes and counters, under duplication, reordering and a block
 * from a member that did not announce it. Runs on the host and in the 6.1
 * guest (tests/kmod/vm.sh), where it also reports how many instructions
 * the verifier processed for the datapath.
 */
#include <linux/if_link.h>
#include <bpf/bpf.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "insns_budget.h"
#include "xdp_switch.h"

#define NPORTS	3	/* 0: up, 1..2: down */
#define SELF_ID	77
#define JOB	41
#define BASE	500
#define NANN	1
#define NMEM	3	/* senders 1..3 */

FIXTURE(sp) {
	struct ia_xdp *x;
	int port[NPORTS];
	__u8 in[4096], out[4096], want[4096];
};

FIXTURE_SETUP(sp)
{
	ASSERT_EQ(0, switch_ports(NPORTS, self->port, NULL));
	ASSERT_EQ(0, ia_xdp_open(NULL, &self->x, NULL, 0));
	for (int i = 0; i < NPORTS; i++)
		ASSERT_EQ(0, ia_xdp_port_add(self->x, self->port[i]));
}

FIXTURE_TEARDOWN(sp)
{
	ia_xdp_close(self->x);
}

/* The job: 3 members, one announcement, up to 3 blocks, masks in the last slot. */
static int add_sparse(struct ia_xdp *x, const int *port, __u32 window)
{
	struct ia_sender m[NMEM];
	struct ia_xdp_job j = {
		.id = JOB, .role = IA_ROLE_BLUE, .window = window, .base_seq = BASE,
		.self_id = SELF_ID, .nmembers = NMEM, .members = m, .flags = IA_JOB_F_SPARSE,
		.sparse_nann = NANN,
		.up = { .ifindex = port[0], .saddr = IP(10, 9, 0, 2), .daddr = IP(10, 9, 0, 1) },
	};

	for (int i = 0; i < NMEM; i++)
		m[i] = (struct ia_sender){ .id = i + 1, .nworkers = 1 };
	memcpy(j.up.smac, mac_up_s, 6);
	memcpy(j.up.dmac, mac_up_d, 6);
	return ia_xdp_job_add(x, &j, NULL, 0);
}

static struct frame_spec msg(__u32 seq, __u32 sender, const __s32 *v)
{
	struct frame_spec f = {
		.saddr = IP(10, 9, 0, 10), .daddr = IP(10, 9, 0, 1), .type = IA_MSG_CONTRIB,
		.job = JOB, .seq = seq, .sender = sender, .nworkers = 1, .nelem = IA_SPARSE_ELEMS,
		.vals = v,
	};

	memcpy(f.smac, mac_w, 6);
	memcpy(f.dmac, mac_up_s, 6);
	return f;
}

/* Sends sender's message; the verdict, and the frame it left in out. */
static int send_msg(struct __test_metadata *_metadata, FIXTURE_DATA(sp) *self, __u32 seq,
		    __u32 sender, const __s32 *v, __u32 *olen)
{
	struct frame_spec f = msg(seq, sender, v);
	int len = build_frame(self->in, &f);

	return run(self->x, self->port[1], self->in, len, self->out, olen);
}

/* out holds this switch's aggregate of seq carrying sums, with flags. */
static void expect_agg(struct __test_metadata *_metadata, FIXTURE_DATA(sp) *self, __u32 seq,
		       const __s32 *sums, __u8 flags, __u32 olen)
{
	struct frame_spec a = msg(seq, SELF_ID, sums);
	int wlen;

	memcpy(a.smac, mac_up_s, 6);
	memcpy(a.dmac, mac_up_d, 6);
	a.saddr = IP(10, 9, 0, 2);
	a.type = IA_MSG_AGG;
	a.nworkers = NMEM;	/* the switch's, whoever sent the block */
	a.flags = flags;
	wlen = build_frame(self->want, &a);
	ASSERT_EQ(wlen, olen);
	ASSERT_EQ(0, memcmp(self->want, self->out, wlen));
}

/* Instructions and verified instructions of prog; 0 if it cannot say. */
static int prog_insns(int fd, struct bpf_prog_info *info, __u32 *map_ids, __u32 nmaps)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	info->nr_map_ids = nmaps;
	info->map_ids = (__u64)(unsigned long)map_ids;
	return bpf_obj_get_info_by_fd(fd, info, &len);
}

/* Both programs of the datapath, each within its budget (insns_budget.h). */
TEST_F(sp, verifier_accepts_the_datapath)
{
	__u32 ids[64], sids[64], id = 0, nsparse = 0;
	struct bpf_prog_info info, si;

	ASSERT_EQ(0, prog_insns(ia_xdp_prog_fd(self->x), &info, ids, 64));
	TH_LOG("ia_xdp: %u instructions, %u processed by the verifier (budget %lu)",
	       info.xlated_prog_len / 8, info.verified_insns, insns_budget("ia_xdp"));
	ASSERT_LE(info.verified_insns, insns_budget("ia_xdp"));
	/* ia_sparse: the program named so that shares ia_xdp's first map. */
	while (!bpf_prog_get_next_id(id, &id)) {
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!prog_insns(fd, &si, sids, 64) && !strcmp(si.name, "ia_sparse"))
			for (__u32 i = 0; i < si.nr_map_ids && i < 64; i++)
				if (sids[i] == ids[0]) {
					TH_LOG("ia_sparse: %u instructions, %u processed by the "
					       "verifier (budget %lu)", si.xlated_prog_len / 8,
					       si.verified_insns, insns_budget("ia_sparse"));
					ASSERT_LE(si.verified_insns, insns_budget("ia_sparse"));
					nsparse++;
					break;
				}
		close(fd);
	}
	ASSERT_EQ(1, nsparse);
}

TEST_F(sp, loader_refuses_a_window_without_room_for_masks)
{
	/* 1 announcement + 1 mask slot leave no block. */
	ASSERT_EQ(-EINVAL, add_sparse(self->x, self->port, 2));
	ASSERT_EQ(0, add_sparse(self->x, self->port, 3));
}

/*
 * Member 1 announces blocks 0 and 1, member 2 block 1, member 3 block 2:
 * the announcement's aggregate counts the members per block, block 0
 * leaves with member 1 alone, block 1 with the sum of 1 and 2, block 2
 * with member 3; duplicates are dropped, a late copy re-emits, a block
 * before its announcement is complete or from a member that did not
 * announce it is dropped.
 */
TEST_F(sp, blocks_merge_announced_members_exactly_once)
{
	__s32 ann[NMEM][IA_SPARSE_ELEMS] = {}, cnt[IA_SPARSE_ELEMS] = {};
	__s32 b[NMEM][IA_SPARSE_ELEMS], sum[IA_SPARSE_ELEMS];
	__u32 olen;

	ASSERT_EQ(0, add_sparse(self->x, self->port, 5));	/* 1 + 3 blocks + 1 mask slot */
	ann[0][0] = ann[0][1] = 1;
	ann[1][1] = 7;		/* any nonzero value announces */
	ann[2][2] = 1;
	cnt[0] = 1, cnt[1] = 2, cnt[2] = 1;
	for (int s = 0; s < NMEM; s++)
		for (int e = 0; e < IA_SPARSE_ELEMS; e++)
			b[s][e] = contrib_val(s, 0, e);

	ASSERT_EQ(XDP_DROP, send_msg(_metadata, self, BASE, 1, ann[0], &olen));
	ASSERT_EQ(XDP_DROP, send_msg(_metadata, self, BASE, 1, ann[0], &olen));	/* dup */
	ASSERT_EQ(XDP_DROP, send_msg(_metadata, self, BASE, 3, ann[2], &olen));
	/* Announcement not complete: blocks wait. */
	ASSERT_EQ(XDP_DROP, send_msg(_metadata, self, BASE + 1, 1, b[0], &olen));
	ASSERT_EQ(1, jctr(self->x, JOB, IA_C_DROP_WINDOW));
	ASSERT_EQ(XDP_REDIRECT, send_msg(_metadata, self, BASE, 2, ann[1], &olen));
	expect_agg(_metadata, self, BASE, cnt, 0, olen);

	/* Block 0: member 1 alone announced it. */
	ASSERT_EQ(XDP_REDIRECT, send_msg(_metadata, self, BASE + 1, 1, b[0], &olen));
	expect_agg(_metadata, self, BASE + 1, b[0], 0, olen);
	/* Block 1: members 2 then 1 (reordered), 2 twice. */
	ASSERT_EQ(XDP_DROP, send_msg(_metadata, self, BASE + 2, 2, b[1], &olen));
	ASSERT_EQ(XDP_DROP, send_msg(_metadata, self, BASE + 2, 2, b[1], &olen));
	for (int e = 0; e < IA_SPARSE_ELEMS; e++)
		sum[e] = (__s32)((__u32)b[0][e] + (__u32)b[1][e]);
	ASSERT_EQ(XDP_REDIRECT, send_msg(_metadata, self, BASE + 2, 1, b[0], &olen));
	expect_agg(_metadata, self, BASE + 2, sum, 0, olen);
	/* Block 2: member 1 did not announce it. */
	ASSERT_EQ(XDP_DROP, send_msg(_metadata, self, BASE + 3, 1, b[0], &olen));
	ASSERT_EQ(1, jctr(self->x, JOB, IA_C_DROP_MEMBER));
	ASSERT_EQ(XDP_REDIRECT, send_msg(_metadata, self, BASE + 3, 3, b[2], &olen));
	expect_agg(_metadata, self, BASE + 3, b[2], 0, olen);
	/* A late resend of block 1 re-emits the stored sum. */
	ASSERT_EQ(XDP_REDIRECT, send_msg(_metadata, self, BASE + 2, 2, b[1], &olen));
	expect_agg(_metadata, self, BASE + 2, sum, IA_F_REEMIT, olen);

	ASSERT_EQ(3 + 4, jctr(self->x, JOB, IA_C_AGGREGATED));
	ASSERT_EQ(4, jctr(self->x, JOB, IA_C_EMIT));
	ASSERT_EQ(1, jctr(self->x, JOB, IA_C_REEMIT));
	ASSERT_EQ(2, jctr(self->x, JOB, IA_C_DUP));
	ASSERT_EQ(5, jctr(self->x, JOB, IA_C_TX));
}

TEST_F(sp, out_of_range_and_short_messages_dropped)
{
	__s32 v[IA_SPARSE_ELEMS] = { 1 };
	struct frame_spec f = msg(BASE, 1, v);
	__u32 olen;
	int len;

	ASSERT_EQ(0, add_sparse(self->x, self->port, 5));
	/* Past the blocks (the mask slot) and before the job. */
	ASSERT_EQ(XDP_DROP, send_msg(_metadata, self, BASE + 4, 1, v, &olen));
	ASSERT_EQ(XDP_DROP, send_msg(_metadata, self, BASE - 1, 1, v, &olen));
	ASSERT_EQ(2, jctr(self->x, JOB, IA_C_DROP_WINDOW));
	/* A sparse job's messages are whole. */
	f.nelem = 37;
	len = build_frame(self->in, &f);
	ASSERT_EQ(XDP_DROP, run(self->x, self->port[1], self->in, len, self->out, &olen));
	ASSERT_EQ(1, jctr(self->x, JOB, IA_C_DROP_NELEM));
	ASSERT_EQ(0, jctr(self->x, JOB, IA_C_AGGREGATED));
}

/*
 * A member set trailer (IA_F_SET) is a PS job's flushed partial: a sparse
 * job drops it as drop_set, as a dense blue job does, and adds nothing
 * (issue 32).
 */
TEST_F(sp, set_trailer_dropped)
{
	__s32 v[IA_SPARSE_ELEMS] = { 1, 1 };
	struct frame_spec f = msg(BASE, 1, v);
	struct iphdr *ip = (void *)(self->in + 14);
	struct udphdr *udp = (void *)(ip + 1);
	__u32 olen, t[2] = { 0, htonl(1) };
	int len;

	ASSERT_EQ(0, add_sparse(self->x, self->port, 4));
	f.flags = IA_F_SET;
	len = build_frame(self->in, &f);
	memcpy(self->in + len, t, sizeof(t));
	ip->tot_len = htons(ntohs(ip->tot_len) + IA_SET_LEN);
	udp->len = htons(ntohs(udp->len) + IA_SET_LEN);
	ip->check = csum_ip(ip);
	ASSERT_EQ(XDP_DROP, run(self->x, self->port[1], self->in, len + IA_SET_LEN, self->out,
				&olen));
	ASSERT_EQ(1, jctr(self->x, JOB, IA_C_DROP_SET));
	ASSERT_EQ(0, jctr(self->x, JOB, IA_C_AGGREGATED));
	/* The same announcement without the trailer is the member's first. */
	f.flags = 0;
	len = build_frame(self->in, &f);
	ASSERT_EQ(XDP_DROP, run(self->x, self->port[1], self->in, len, self->out, &olen));
	ASSERT_EQ(1, jctr(self->x, JOB, IA_C_AGGREGATED));
	ASSERT_EQ(0, jctr(self->x, JOB, IA_C_DUP));
}

TEST_HARNESS_MAIN
