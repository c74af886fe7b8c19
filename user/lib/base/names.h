/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names of enum values, for output and for parsing options: each enum has a
 * table of names indexed by value, and these two look-ups.
 */
#ifndef INAGG_NAMES_H
#define INAGG_NAMES_H

#include <stddef.h>
#include <string.h>

/* The name of v in names[0..n), or "?" for a value without one. */
static inline const char *ia_name_of(const char *const *names, size_t n, long v)
{
	return v >= 0 && (size_t)v < n && names[v] ? names[v] : "?";
}

/* The value named s, or -1 if none is. */
static inline int ia_name_find(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] && !strcmp(s, names[i]))
			return (int)i;
	return -1;
}

#endif
