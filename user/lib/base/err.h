/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The library's one error convention: a function that can fail returns 0 or
 * a negative errno and, when the caller passed a buffer, writes one line
 * saying why into it. Nothing in the library prints (log.h: only through
 * the program's hook) or aborts; no error is kept for later (per handle or
 * per thread). The ledger client (ledger.h: the kernel's extack, or ""
 * where the errno says it all) and the XDP loader (xdp.h: the errno's words
 * at least) follow it too. Replies of the JSON protocols carry the same
 * errno and line (ctl.h, ia_ctl_err()).
 */
#ifndef INAGG_ERR_H
#define INAGG_ERR_H

#include <stddef.h>
#include <stdint.h>

#define IA_ERRLEN	256		/* a good size for an error buffer */
#define IA_RUN_DIR	"/run/inagg"	/* sockets, state files, user-space ledgers */

/* Formats the reason into err (NULL or errlen 0: ignored); returns ret. */
int ia_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* splitmix64: the one seedable generator of the library (tests, vectors, topologies). */
static inline uint64_t ia_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
