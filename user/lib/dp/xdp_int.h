/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the XDP datapath loader, shared by its parts: xdp.c (open, close),
 * xdp_log.c (errors, libbpf's messages), xdp_probe.c (kernel features),
 * xdp_pin.c (pins), xdp_push.c (jobs into the maps), xdp_attach.c (ports),
 * xdp_mem.c, xdp_tail.c and xdp_vq.c.
 */
#ifndef INAGG_XDP_INT_H
#define INAGG_XDP_INT_H

#include <bpf/libbpf.h>

#include "err.h"
#include "xdp.h"
#include "bpf/inagg.skel.h"

/* An inner map template: libbpf frees its own copy once the outer map exists. */
struct ia_xdp_inner {
	enum bpf_map_type type;
	__u32 key_size, value_size, flags, key_type_id, value_type_id;
};

enum { IA_INNER_SLOTS, IA_INNER_MTAB, IA_INNER_JFAST, IA_INNER_TDIR, IA_INNER__N };

/* The programs of a switch (ia_sparse: tail-called by ia_xdp); one pinned instance each. */
enum { IA_PROG_XDP, IA_PROG_EGRESS, IA_PROG_PASS, IA_PROG_SPARSE, IA_PROG_HOLD, IA_PROG__N };

struct ia_xdp {
	struct inagg *skel;	/* its maps; its programs only if loaded here */
	struct ia_xdp_inner inner[IA_INNER__N];
	int prog_fd[IA_PROG__N];
	__u32 prog_id[IA_PROG__N];
	__u32 jobs_map_id;	/* tells this switch's ia_xdp from another's */
	int ncpus;
};

/*
 * xdp_log.c: a public call that takes the caller's buffer (why, whylen:
 * err.h) empties it first, and ends with ia_xdp_said(), which gives a
 * failure no reason was written for its errno's words: so the caller
 * always has a line to print. Inside, reasons are written with ia_fail().
 */
void ia_xdp_err_start(char *why, size_t whylen);
int ia_xdp_said(char *why, size_t whylen, int ret);
/* err of a failed load, with the tail of what libbpf and the verifier said. */
int ia_xdp_load_failed(int err, char *why, size_t whylen);
void ia_xdp_log_reset(void);

/* xdp_probe.c: 0, or what this kernel lacks (in why). */
int ia_xdp_probe_features(char *why, size_t whylen);

/* xdp_pin.c: the switch's pin folder into buf. */
int ia_xdp_pin_dir(const char *sw, char *buf, size_t len, char *why, size_t whylen);
int ia_xdp_ensure_bpffs(char *why, size_t whylen);
int ia_xdp_pin_mkdir(const char *dir);
/*
 * 0 if the pins in dir have this build's IA_MAPS_LAYOUT (an empty dir gets
 * its ia_layout); -ESTALE, saying what to do, if another layout's or an
 * older package's (pins, but no ia_layout). Before anything is pinned there.
 */
int ia_xdp_pin_layout(const char *sw, const char *dir, char *why, size_t whylen);
/* Maps' pin paths; the devmap's own path if it must be pinned after the load. */
int ia_xdp_pin_maps(struct ia_xdp *x, const char *dir, char *dports_path, bool *dports_new);
/* 1 if the pinned programs are there and use the switch's maps. */
int ia_xdp_reuse_progs(struct ia_xdp *x, const char *dir);
int ia_xdp_pin_progs(struct ia_xdp *x, const char *dir, char *why, size_t whylen);
/* The ids of the programs and of ia_jobs pinned in dir (0: none), whatever their layout. */
void ia_xdp_pinned_ids(struct ia_xdp *x, const char *dir);
/* A map's or program's id. */
__u32 ia_xdp_obj_id(int fd);

/* Before loading obj beside switch x: each of obj's maps x has (by name) is x's instance. */
int ia_xdp_share_maps(struct ia_xdp *x, struct bpf_object *obj);
/* Waits until no XDP program still runs with state looked up before now. */
void ia_xdp_rcu_wait(void);
/* Whether a program uses a map: whose instance it is. */
bool ia_xdp_prog_uses_map(int prog_fd, __u32 map_id);

/* xdp_push.c: owners of job slots and port indexes, and counters. */
int ia_xdp_own_claim(struct ia_xdp *x, __u32 kind, __u32 first, __u32 n, __u32 base,
		     __u32 value, __u32 *out);
void ia_xdp_own_release(struct ia_xdp *x, __u32 kind, __u32 index);
int ia_xdp_zero_counters(struct ia_xdp *x, int map_fd, const void *key, __u64 flags);

/* xdp_push.c: an inner map like template kind's, nvals entries filled, as outer[key]. */
int ia_xdp_add_inner(struct ia_xdp *x, struct bpf_map *outer, int kind, __u32 key,
		     const char *name, __u32 n, __u32 nvals, const void *vals);
int ia_xdp_sum_counters(struct ia_xdp *x, int map_fd, const void *key, struct ia_counters *out);

/* xdp_tail.c: withdraws a deleted job's lend from the directory. */
int ia_xdp_tail_forget(struct ia_xdp *x, __u32 job);

/* xdp_vq.c: a new port's virtual queue: none (a reused index keeps no old rate). */
int ia_xdp_vq_reset(struct ia_xdp *x, __u32 idx);

/* xdp_attach.c: the port index of ifindex, or -ENOENT. */
int ia_xdp_port_index(struct ia_xdp *x, __u32 ifindex, __u32 *idx);

#endif
