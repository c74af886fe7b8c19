/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Several jobs' endpoints on one host (docs/cc.md, "Live"): every inagg
 * message goes to UDP port IA_UDP_PORT of the host's one address, so two
 * workers (or two PSs) of different jobs on a host must share that port.
 * With sharing on, the host library binds its sockets with SO_REUSEPORT, and
 * a per-host steering program (SK_REUSEPORT) hands each datagram to the
 * socket registered for the job id in its inagg header; a datagram of a job
 * nobody registered goes to any of them (and is ignored there as foreign).
 *
 * Use: the parent creates one steer per host (namespace) before it forks;
 * each endpoint process, after ia_worker_open() or ia_ps_open(), calls
 * ia_host_steer_join() with its job.
 */
#ifndef INAGG_HOST_SHARE_H
#define INAGG_HOST_SHARE_H

#include <stdint.h>

/* Jobs on one host must differ modulo this (a power of 2): the steering's key. */
#define IA_STEER_MAX_JOBS	4096

struct ia_host_steer {
	int map_fd;		/* REUSEPORT_SOCKARRAY: job id -> socket */
	int prog_fd;		/* SK_REUSEPORT program reading the job id */
};

/* From now on, this process's inagg sockets are bound with SO_REUSEPORT. */
void ia_host_share_enable(void);
/* 0 or -errno (-EPERM without CAP_BPF / CAP_NET_ADMIN). */
int ia_host_steer_new(struct ia_host_steer *s);
void ia_host_steer_free(struct ia_host_steer *s);
/*
 * The calling process's socket bound to IA_UDP_PORT (opened with sharing
 * on) receives job's datagrams from now on (and those of any job equal to it
 * modulo IA_STEER_MAX_JOBS). 0, -ENOENT (no such socket), another -errno.
 */
int ia_host_steer_join(const struct ia_host_steer *s, uint32_t job);

#endif
