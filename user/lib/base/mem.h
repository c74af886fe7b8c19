/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Allocation of the large per-switch arrays. A million-switch tree needs a
 * few hundred megabytes touched once; in a virtual machine each 4 KiB page
 * fault costs microseconds, so these ask for transparent huge pages (one
 * fault per 2 MiB where the kernel allows it). Free them with free().
 */
#ifndef INAGG_MEM_H
#define INAGG_MEM_H

#include <stddef.h>

void *ia_alloc_big(size_t size);
void *ia_calloc_big(size_t n, size_t size);
void *ia_realloc_big(void *p, size_t size);

#endif
