/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One printing path for text and JSON output (the iproute2 way): every out_*
 * call names a JSON key and a printf format for text. With -j the value goes
 * into the JSON document being built, printed by out_end(); otherwise the
 * format is printed at once. A NULL format means JSON only; a NULL key inside
 * an object means text only (inside an array it appends).
 */
#ifndef INAGG_OUT_H
#define INAGG_OUT_H

#include <stdbool.h>
#include <stdio.h>

#include "topo.h"

void out_set_json(bool on);
bool out_is_json(void);

/* Starts the document (the JSON root object) and prints it. */
void out_begin(void);
int out_end(void);

void out_obj_open(const char *key);
void out_obj_close(void);
void out_arr_open(const char *key);
void out_arr_close(void);

void out_str(const char *key, const char *fmt, const char *v);
void out_int(const char *key, const char *fmt, long long v);
void out_uint(const char *key, const char *fmt, unsigned long long v);
void out_bool(const char *key, const char *fmt, bool v);
void out_double(const char *key, const char *fmt, double v);
/*
 * Exact rational: text gets its decimal as %s; JSON the double (shortest
 * round-trip form) under key and the exact "num/den" under key_exact.
 */
void out_ratio(const char *key, const char *fmt, struct ia_ratio r);
/*
 * JSON only: a value written by fn(stdout, indent, arg) when out_end()
 * prints the document, in its place, rather than built as objects (a
 * million links). One per document; fn must write one JSON value.
 */
void out_stream(const char *key, void (*fn)(FILE *f, int indent, void *arg), void *arg);
/* Text only. */
void out_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Reports an error: "inagg: ..." on stderr, or {"error": "..."} on stdout
 * with -j (dropping any half-built document). Returns the exit status, 1.
 */
int out_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Warnings and progress always go to stderr. */
void out_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
