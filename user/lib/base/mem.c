// SPDX-License-Identifier: GPL-2.0
/* Large arrays with a huge page hint; see mem.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mem.h"

#define HUGE_SIZE (2ul << 20)

/* A hint only: where it fails, small pages serve as before. */
static void *hint_huge(void *p, size_t size)
{
	uintptr_t start = ((uintptr_t)p + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1);
	uintptr_t end = ((uintptr_t)p + size) & ~(HUGE_SIZE - 1);

	if (p && end > start)
		madvise((void *)start, end - start, MADV_HUGEPAGE);
	return p;
}

void *ia_alloc_big(size_t size)
{
	return hint_huge(malloc(size), size);
}

void *ia_calloc_big(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	p = ia_alloc_big(n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void *ia_realloc_big(void *p, size_t size)
{
	return hint_huge(realloc(p, size), size);
}
