// SPDX-License-Identifier: GPL-2.0
/* Chunking, test vectors, wrapping sums and checksums of host vectors. */
#include "err.h"
#include "host_vec.h"

uint64_t ia_host_nchunks(uint64_t n, uint32_t chunk)
{
	if (!n || !chunk)
		return 0;
	return (n + chunk - 1) / chunk;
}

uint32_t ia_host_chunk_len(uint64_t n, uint32_t chunk, uint64_t idx)
{
	uint64_t off = idx * chunk;

	return n - off < chunk ? (uint32_t)(n - off) : chunk;
}

int32_t ia_host_rand(uint64_t seed, uint64_t i)
{
	uint64_t s = seed * 0xd1342543de82ef95ull + i;

	return (int32_t)(uint32_t)(ia_splitmix64(&s) >> 32);
}

void ia_host_fill(int32_t *v, size_t n, uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = ia_host_rand(seed, i);
}

void ia_host_add(int32_t *v, const int32_t *w, size_t n)
{
	size_t i;

	/* Unsigned, so that wrapping is defined. */
	for (i = 0; i < n; i++)
		v[i] = (int32_t)((uint32_t)v[i] + (uint32_t)w[i]);
}

uint64_t ia_host_checksum(const int32_t *v, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;
	int b;

	for (i = 0; i < n; i++) {
		uint32_t x = (uint32_t)v[i];

		for (b = 0; b < 4; b++) {
			h ^= (x >> (8 * b)) & 0xff;
			h *= 0x100000001b3ull;
		}
	}
	return h;
}
