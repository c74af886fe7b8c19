/* SPDX-License-Identifier: GPL-2.0 */
/* What inagg worker and inagg ps share: vector files, checksums, signals. */
#ifndef INAGG_HOSTIO_H
#define INAGG_HOSTIO_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* Set by SIGINT/SIGTERM once catch_signals() ran. */
extern volatile sig_atomic_t host_stop;
void catch_signals(void);

/*
 * Reads whitespace-separated numbers of path ("-": stdin): int32 integers,
 * or with frac >= 0 real numbers encoded in fixed point. Returns the count,
 * or -1 after out_err().
 */
long read_vector(const char *path, int frac, int32_t **out);
/* One element per line; with frac >= 0 decoded. 0, or 1 after out_err(). */
int write_vector(const char *path, const int32_t *v, size_t n, int frac);
/* The "checksum" value: FNV-1a 64 of the vector, hex. */
void print_checksum(const int32_t *v, size_t n);

#endif
