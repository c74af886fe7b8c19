/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Vectors of a host endpoint: how a vector is cut into chunks, deterministic
 * test vectors, the wrapping sum of wire.h and a checksum to compare results.
 */
#ifndef INAGG_HOST_VEC_H
#define INAGG_HOST_VEC_H

#include <stddef.h>
#include <stdint.h>

/* Chunks of a vector of n elements; 0 if n or chunk is 0. */
uint64_t ia_host_nchunks(uint64_t n, uint32_t chunk);
/* Elements of chunk idx (the last one may be shorter). */
uint32_t ia_host_chunk_len(uint64_t n, uint32_t chunk, uint64_t idx);

/* Deterministic test vectors: element i of the vector of seed. Full int32 range. */
int32_t ia_host_rand(uint64_t seed, uint64_t i);
void ia_host_fill(int32_t *v, size_t n, uint64_t seed);
/* In place v[i] += w[i] modulo 2^32 (the aggregation of wire.h). */
void ia_host_add(int32_t *v, const int32_t *w, size_t n);
/* FNV-1a 64 over the little-endian bytes of v: a checksum to compare results. */
uint64_t ia_host_checksum(const int32_t *v, size_t n);

#endif
