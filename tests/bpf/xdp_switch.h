/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The switch under test of the BPF_PROG_TEST_RUN tables (xdp_table.c,
 * xdp_tail.c, xdp_mark.c, xdp_sparse.c): its addresses, its veth ports in
 * a namespace of the test's own, a frame run through ia_xdp, its counters
 * and its programs, and the frames it sends out of a port, caught on the
 * peer.
 */
#ifndef INAGG_TESTS_XDP_SWITCH_H
#define INAGG_TESTS_XDP_SWITCH_H

#include <poll.h>
#include <linux/if_packet.h>
#include <bpf/bpf.h>

#include "xdp.h"
#include "xdp_common.h"

static const __u8 mac_up_s[6] = { 0x02, 0, 0, 0, 0x03, 0x01 };
static const __u8 mac_up_d[6] = { 0x02, 0, 0, 0, 0x04, 0x01 };
static const __u8 mac_w[6] = { 0x02, 0, 0, 0, 0x01, 0x01 };
static const __u8 mac_sw[6] = { 0x02, 0, 0, 0, 0x02, 0x01 };

#define IP(a, b, c, d)	htonl((a) << 24 | (b) << 16 | (c) << 8 | (d))
#define IP_SW	IP(10, 9, 0, 2)
#define IP_PS	IP(10, 9, 0, 1)

/*
 * n veth pairs p<i>/q<i>, up, in a new network namespace (gone with the
 * test's process): port[i] the switch's end, peer[i] (if not NULL) the other.
 */
static inline int switch_ports(int n, int *port, int *peer)
{
	char a[IFNAMSIZ], b[IFNAMSIZ];
	int i;

	if (unshare(CLONE_NEWNET))
		return -errno;
	for (i = 0; i < n; i++) {
		snprintf(a, sizeof(a), "p%d", i);
		snprintf(b, sizeof(b), "q%d", i);
		if (sh("ip link add %s type veth peer name %s && ip link set %s up && ip link set %s up",
		       a, b, a, b))
			return -EIO;
		port[i] = if_nametoindex(a);
		if (!port[i] || (peer && !(peer[i] = if_nametoindex(b))))
			return -ENODEV;
	}
	return 0;
}

/*
 * Runs the ingress program on frame (len bytes) arriving on ifindex: its
 * verdict, and the length of what it left in out in *outlen (if not NULL).
 * Not inlined: the harness's tests longjmp.
 */
static __attribute__((noinline, unused))
int run(struct ia_xdp *x, int ifindex, void *frame, int len, void *out, __u32 *outlen)
{
	struct xdp_md md = { .data_end = len, .ingress_ifindex = ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, o,
		.data_in = frame, .data_size_in = len,
		.data_out = out, .data_size_out = 4096,
		.ctx_in = &md, .ctx_size_in = sizeof(md),
	);
	int err = bpf_prog_test_run_opts(ia_xdp_prog_fd(x), &o);

	if (err)
		return err;
	if (outlen)
		*outlen = o.data_size_out;
	return o.retval;
}

static inline __u64 jctr(struct ia_xdp *x, __u32 job, int c)
{
	struct ia_counters v;

	if (ia_xdp_job_counters(x, job, &v))
		return ~0ULL;
	return v.c[c];
}

/*
 * The loaded program called name that uses the switch's maps (ia_xdp's
 * first map): its info, 0 if found.
 */
static inline int switch_prog(struct ia_xdp *x, const char *name, struct bpf_prog_info *info)
{
	__u32 ids[64], sids[64], id = 0, len = sizeof(*info), i;
	struct bpf_prog_info xi = { .nr_map_ids = 64, .map_ids = (__u64)(unsigned long)ids };
	int fd, found = -ENOENT;

	if (bpf_obj_get_info_by_fd(ia_xdp_prog_fd(x), &xi, &len) || !xi.nr_map_ids)
		return -EIO;
	while (found && !bpf_prog_get_next_id(id, &id)) {
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(info, 0, sizeof(*info));
		info->nr_map_ids = 64;
		info->map_ids = (__u64)(unsigned long)sids;
		len = sizeof(*info);
		if (!bpf_obj_get_info_by_fd(fd, info, &len) && !strcmp(info->name, name))
			for (i = 0; i < info->nr_map_ids && i < 64; i++)
				if (sids[i] == ids[0])
					found = 0;
		close(fd);
	}
	return found;
}

/* Opens a raw socket on ifindex to catch what the datapath sends there. */
static inline int catcher(int ifindex)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = ifindex,
	};
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* Next UDP frame to IA_UDP_PORT received on fd within 500 ms (others skipped). */
static inline int catch_frame(int fd, __u8 *buf, int size)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct sockaddr_ll from;
	socklen_t flen;
	ssize_t n;

	while (poll(&p, 1, 500) > 0) {
		flen = sizeof(from);
		n = recvfrom(fd, buf, size, 0, (struct sockaddr *)&from, &flen);
		if (n >= IA_PAYLOAD_OFF && from.sll_pkttype != PACKET_OUTGOING &&
		    buf[23] == IPPROTO_UDP &&
		    ((struct udphdr *)(buf + 34))->dest == htons(IA_UDP_PORT))
			return n;
	}
	return 0;
}

#endif /* INAGG_TESTS_XDP_SWITCH_H */
