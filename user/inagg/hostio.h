/* SPDX-License-Identifier: GPL-2.0 */
/* What inagg worker and inagg ps share: vector files, checksums, signals. */
#ifndef INAGG_HOSTIO_H
#define INAGG_HOSTIO_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#include "host.h"
#include "opt.h"

/* Options worker and ps share, the same in both by construction. */
#define HOST_MAX_ELEMS ((uint64_t)IA_HOST_MAX_CHUNKS * IA_MAX_ELEMS)
/* Job id 0 is reserved (inagg/netlink.h), as libinagg.so's API refuses it. */
#define HOST_OPT_JOB(T, f) \
	OPT_INT('J', "job", "ID", T, f, 1, UINT32_MAX, OPT_REQUIRED, "job id")
#define HOST_OPT_ADDR(T, f) \
	OPT_ADDR('A', "addr", "ADDR", T, f, 0, "own IPv4 address to bind (default: any)")
#define HOST_OPT_CHUNK(T, f) \
	OPT_INT('C', "chunk", "E", T, f, 1, IA_MAX_ELEMS, 0, "elements per chunk")
#define HOST_OPT_BASE(T, f) \
	OPT_INT('b', "base", "SEQ", T, f, 0, UINT32_MAX, 0, "sequence number of the first chunk")
#define HOST_OPT_OUTPUT(T, f) \
	OPT_STR('o', "output", "FILE", T, f, 0, \
		"write the result, one element per line ('-': stdout)")

/* Set by SIGINT/SIGTERM once catch_signals() ran. */
extern volatile sig_atomic_t host_stop;
void catch_signals(void);

/*
 * Reads whitespace-separated numbers of path ("-": stdin): int32 integers,
 * or with frac >= 0 real numbers encoded in fixed point. Returns the count,
 * or -1 after out_err().
 */
long read_vector(const char *path, int frac, int32_t **out);
/*
 * The -o file of a run, opened before it (a path that cannot be written
 * fails at once, not after the job), truncated only when the result is
 * written: one element per line, with frac >= 0 decoded. A run that fails
 * drops it (a file it made is removed, one that was there stays as it was).
 * open and write: 0, or 1 after out_err(). path NULL: nothing to write.
 */
struct vec_out {
	const char *path;
	FILE *f;
	bool made;	/* created by vec_out_open() */
};

int vec_out_open(struct vec_out *o, const char *path);
int vec_out_write(struct vec_out *o, const int32_t *v, size_t n, int frac);
void vec_out_drop(struct vec_out *o);
/* The "checksum" value: FNV-1a 64 of the vector, hex. */
void print_checksum(const int32_t *v, size_t n);

#endif
