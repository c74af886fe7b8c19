// SPDX-License-Identifier: GPL-2.0
/* Several jobs' endpoints on one host: SO_REUSEPORT steered by job id (host_share.h). */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/bpf.h>
#include <linux/filter.h>

#include <bpf/bpf.h>

#include "inagg/wire.h"
#include "host_io.h"
#include "host_share.h"

void ia_host_share_enable(void)
{
	ia_io_reuseport = true;
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
						 .off = (o), .imm = (i) })

int ia_host_steer_new(struct ia_host_steer *s)
{
	/* Offset of the job id from the UDP header, where skb->data is at lookup. */
	const int job_off = 8 + offsetof(struct ia_hdr, job);
	int map_fd, prog_fd;

	map_fd = bpf_map_create(BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, "ia_steer", 4, 8,
				IA_STEER_MAX_JOBS, NULL);
	if (map_fd < 0)
		return -errno;
	{
		struct bpf_insn prog[] = {
			/* r6 = ctx; r0 = bpf_skb_load_bytes(ctx, job_off, fp - 8, 4) */
			INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, job_off),
			INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_10, 0, 0),
			INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, -8),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, 4),
			INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_skb_load_bytes),
			/* short datagram: leave the choice to the kernel */
			INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, 11, 0),
			/* key = be32 job id, as host order, modulo the map */
			INSN(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_1, BPF_REG_10, -8, 0),
			INSN(BPF_ALU | BPF_END | BPF_TO_BE, BPF_REG_1, 0, 0, 32),
			INSN(BPF_ALU | BPF_AND | BPF_K, BPF_REG_1, 0, 0, IA_STEER_MAX_JOBS - 1),
			INSN(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_1, -4, 0),
			/* bpf_sk_select_reuseport(ctx, map, &key, 0); its error: the kernel's choice */
			INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_6, 0, 0),
			INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_2, BPF_PSEUDO_MAP_FD, 0, map_fd),
			INSN(0, 0, 0, 0, 0),
			INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_10, 0, 0),
			INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, -4),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, 0),
			INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_sk_select_reuseport),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, SK_PASS),
			INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		};

		prog_fd = bpf_prog_load(BPF_PROG_TYPE_SK_REUSEPORT, "ia_steer", "GPL", prog,
					sizeof(prog) / sizeof(prog[0]), NULL);
	}
	if (prog_fd < 0) {
		int ret = -errno;

		close(map_fd);
		return ret;
	}
	s->map_fd = map_fd;
	s->prog_fd = prog_fd;
	return 0;
}

void ia_host_steer_free(struct ia_host_steer *s)
{
	if (s->prog_fd > 0)
		close(s->prog_fd);
	if (s->map_fd > 0)
		close(s->map_fd);
	s->prog_fd = s->map_fd = -1;
}

/* This process's UDP socket bound to IA_UDP_PORT: fd or -ENOENT. */
static int own_socket(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = -ENOENT;

	if (!d)
		return -errno;
	while ((e = readdir(d)) && found < 0) {
		struct sockaddr_in sa;
		socklen_t len = sizeof(sa);
		struct stat st;
		int fd = atoi(e->d_name), type;
		socklen_t tl = sizeof(type);

		if (fd <= 2 || fd == dirfd(d) || fstat(fd, &st) || !S_ISSOCK(st.st_mode))
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) || type != SOCK_DGRAM ||
		    getsockname(fd, (struct sockaddr *)&sa, &len) || sa.sin_family != AF_INET ||
		    sa.sin_port != htons(IA_UDP_PORT))
			continue;
		found = fd;
	}
	closedir(d);
	return found;
}

int ia_host_steer_join(const struct ia_host_steer *s, uint32_t job)
{
	uint32_t key = job % IA_STEER_MAX_JOBS;
	uint64_t val;
	int fd;

	fd = own_socket();
	if (fd < 0)
		return fd;
	/* The program serves the whole group; setting it again from each member is harmless. */
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF, &s->prog_fd, sizeof(s->prog_fd)))
		return -errno;
	val = fd;
	if (bpf_map_update_elem(s->map_fd, &key, &val, BPF_ANY))
		return -errno;
	return 0;
}
