/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A strict RFC 8259 JSON reader for libinagg's large inputs. A general JSON
 * library builds a tree of objects first, about a kilobyte per switch of a
 * topology; this walks the text once (mapped, never written), hands each
 * object key to a callback and keeps values as text: strings without
 * escapes point into the text, numbers stay digits (exact, see ratio.h).
 * Errors are one line into the reader's buffer, syntax ones with the offset.
 */
#ifndef INAGG_JSONREAD_H
#define INAGG_JSONREAD_H

#include <stdbool.h>
#include <stddef.h>

#define IA_JSON_DEPTH_MAX 64

enum ia_jtype { IA_J_ABSENT, IA_J_NULL, IA_J_BOOL, IA_J_NUM, IA_J_STR, IA_J_ARRAY, IA_J_OBJECT };

struct ia_jval {
	enum ia_jtype type;
	const char *s;		/* IA_J_STR: decoded, not NUL-terminated; IA_J_NUM: the text */
	size_t len;
	bool b;
};

struct ia_jreader {
	const char *p, *start, *end;
	/* Storage for strings that had escapes, decoded: len + 1 bytes, NULL if none left. */
	char *(*store)(void *arg, const char *s, size_t len);
	void *store_arg;
	const char *what;	/* names the document in messages ("topology") */
	char *err;
	size_t errlen;
};

/* "<what>: not valid JSON (why at offset N)"; returns -EINVAL. */
int ia_jr_syntax(struct ia_jreader *r, const char *why);
/* The next significant character (white space skipped), or 0 at the end. */
char ia_jr_peek(struct ia_jreader *r);
int ia_jr_expect(struct ia_jreader *r, char c, const char *why);
/* Any value; objects and arrays are checked and skipped, their type kept. */
int ia_jr_value(struct ia_jreader *r, struct ia_jval *v, int depth);
/*
 * Walks the object or array at r->p. For an object, each (if set) gets
 * every key with r->p at its value and must consume that value.
 */
int ia_jr_walk(struct ia_jreader *r, int depth,
	       int (*each)(struct ia_jreader *r, const struct ia_jval *key, void *arg), void *arg);
bool ia_jr_key_is(const struct ia_jval *key, const char *name);
/* A value for a message: a type name, or its text cut to 32 bytes, unprintables as '?'. */
const char *ia_jr_shown(const struct ia_jval *v, char *buf, size_t len);

#endif
