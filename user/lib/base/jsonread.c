// SPDX-License-Identifier: GPL-2.0
/* A strict RFC 8259 JSON reader over text it never writes; see jsonread.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jsonread.h"

int ia_jr_syntax(struct ia_jreader *r, const char *why)
{
	return ia_fail(r->err, r->errlen, -EINVAL, "%s: not valid JSON (%s at offset %zu)",
		       r->what ? r->what : "input", why, (size_t)(r->p - r->start));
}

static void ws(struct ia_jreader *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

/* The next significant character, or 0 at the end of the text. */
char ia_jr_peek(struct ia_jreader *r)
{
	ws(r);
	return r->p < r->end ? *r->p : 0;
}

int ia_jr_expect(struct ia_jreader *r, char c, const char *why)
{
	if (ia_jr_peek(r) != c)
		return ia_jr_syntax(r, r->p < r->end ? why : "unexpected end of input");
	r->p++;
	return 0;
}

static int hex4(const char *s, unsigned int *out)
{
	unsigned int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	*out = v;
	return 0;
}

static char *put_utf8(char *w, unsigned int cp)
{
	if (cp < 0x80) {
		*w++ = (char)cp;
	} else if (cp < 0x800) {
		*w++ = (char)(0xc0 | cp >> 6);
		*w++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*w++ = (char)(0xe0 | cp >> 12);
		*w++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*w++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*w++ = (char)(0xf0 | cp >> 18);
		*w++ = (char)(0x80 | (cp >> 12 & 0x3f));
		*w++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*w++ = (char)(0x80 | (cp & 0x3f));
	}
	return w;
}

/* Decodes the escaped string raw[0..len) into dst; returns the end of the output. */
static char *decode(const char *raw, size_t len, char *dst)
{
	const char *p = raw, *end = raw + len;
	char *w = dst;
	unsigned int cp, lo;

	while (p < end) {
		if (*p != '\\') {
			*w++ = *p++;
			continue;
		}
		switch (p[1]) {
		case 'b': *w++ = '\b'; break;
		case 'f': *w++ = '\f'; break;
		case 'n': *w++ = '\n'; break;
		case 'r': *w++ = '\r'; break;
		case 't': *w++ = '\t'; break;
		case 'u':
			hex4(p + 2, &cp);
			if (cp >= 0xd800 && cp < 0xdc00) {
				hex4(p + 8, &lo);
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			}
			w = put_utf8(w, cp);
			p += 4;
			break;
		default:	/* '"', '\\', '/' */
			*w++ = p[1];
			break;
		}
		p += 2;
	}
	return w;
}

/* Checks one escape at p ('\\'); returns its length or 0 if bad. */
static size_t escape_len(struct ia_jreader *r, const char *p, const char **why)
{
	unsigned int cp, lo;

	*why = "bad escape";
	if (r->end - p < 2)
		return 0;
	if (strchr("\"\\/bfnrt", p[1]) && p[1])
		return 2;
	if (p[1] != 'u')
		return 0;
	*why = "bad \\u escape";
	if (r->end - p < 6 || hex4(p + 2, &cp))
		return 0;
	*why = "unpaired surrogate";
	if (cp >= 0xd800 && cp < 0xdc00) {
		if (r->end - p < 12 || p[6] != '\\' || p[7] != 'u' || hex4(p + 8, &lo) ||
		    lo < 0xdc00 || lo >= 0xe000)
			return 0;
		return 12;
	}
	if (cp >= 0xdc00 && cp < 0xe000)
		return 0;
	*why = "\\u0000 in a string";
	return cp ? 6 : 0;
}

/* A string at r->p ('"'); escaped ones are decoded into the caller's storage. */
static int read_string(struct ia_jreader *r, struct ia_jval *v)
{
	const char *s = ++r->p, *why;
	bool escaped = false;
	size_t n;
	char *d;

	for (;;) {
		while (r->p < r->end && *r->p != '"' && *r->p != '\\' &&
		       (unsigned char)*r->p >= 0x20)
			r->p++;
		if (r->p >= r->end)
			return ia_jr_syntax(r, "unexpected end of input");
		if (*r->p == '"')
			break;
		if (*r->p != '\\')
			return ia_jr_syntax(r, "control character in a string");
		n = escape_len(r, r->p, &why);
		if (!n)
			return ia_jr_syntax(r, why);
		r->p += n;
		escaped = true;
	}
	*v = (struct ia_jval){ .type = IA_J_STR, .s = s, .len = (size_t)(r->p - s) };
	r->p++;
	if (!escaped)
		return 0;
	d = r->store(r->store_arg, s, v->len);	/* room enough: escapes only shrink */
	if (!d)
		return ia_fail(r->err, r->errlen, -ENOMEM, "topology: out of memory");
	v->len = (size_t)(decode(s, v->len, d) - d);
	d[v->len] = '\0';
	v->s = d;
	return 0;
}

static size_t digits(const char *p, const char *end)
{
	const char *q = p;

	while (q < end && *q >= '0' && *q <= '9')
		q++;
	return (size_t)(q - p);
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, kept as text. */
static int read_number(struct ia_jreader *r, struct ia_jval *v)
{
	const char *s = r->p;
	size_t n;

	if (r->p < r->end && *r->p == '-')
		r->p++;
	n = digits(r->p, r->end);
	if (!n || (n > 1 && *r->p == '0'))
		return ia_jr_syntax(r, "bad number");
	r->p += n;
	if (r->p < r->end && *r->p == '.') {
		n = digits(++r->p, r->end);
		if (!n)
			return ia_jr_syntax(r, "bad number");
		r->p += n;
	}
	if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
		r->p++;
		if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
			r->p++;
		n = digits(r->p, r->end);
		if (!n)
			return ia_jr_syntax(r, "bad number");
		r->p += n;
	}
	*v = (struct ia_jval){ .type = IA_J_NUM, .s = s, .len = (size_t)(r->p - s) };
	return 0;
}

static int read_word(struct ia_jreader *r, const char *word, struct ia_jval *v,
		     enum ia_jtype type, bool b)
{
	size_t n = strlen(word);

	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n))
		return ia_jr_syntax(r, "unexpected character");
	r->p += n;
	*v = (struct ia_jval){ .type = type, .b = b };
	return 0;
}

static int skip_container(struct ia_jreader *r, int depth);

/* Any value; containers are checked and skipped (their type is kept). */
int ia_jr_value(struct ia_jreader *r, struct ia_jval *v, int depth)
{
	switch (ia_jr_peek(r)) {
	case '"':
		return read_string(r, v);
	case '{':
	case '[':
		*v = (struct ia_jval){ .type = *r->p == '{' ? IA_J_OBJECT : IA_J_ARRAY, .s = r->p };
		return skip_container(r, depth + 1);
	case 't':
		return read_word(r, "true", v, IA_J_BOOL, true);
	case 'f':
		return read_word(r, "false", v, IA_J_BOOL, false);
	case 'n':
		return read_word(r, "null", v, IA_J_NULL, false);
	case 0:
		return ia_jr_syntax(r, "unexpected end of input");
	default:
		return read_number(r, v);
	}
}

/*
 * Walks an object or array at r->p. each (if set) gets every object key with
 * r->p at its value and must consume it.
 */
int ia_jr_walk(struct ia_jreader *r, int depth,
		int (*each)(struct ia_jreader *, const struct ia_jval *, void *), void *arg)
{
	bool obj = *r->p == '{';
	char close = obj ? '}' : ']';
	struct ia_jval key, v;
	int ret;

	if (depth > IA_JSON_DEPTH_MAX)
		return ia_jr_syntax(r, "nested too deep");
	r->p++;
	if (ia_jr_peek(r) == close) {
		r->p++;
		return 0;
	}
	for (;;) {
		if (obj) {
			if (ia_jr_peek(r) != '"')
				return ia_jr_syntax(r, r->p < r->end ? "expected a key" : "unexpected end of input");
			ret = read_string(r, &key);
			if (!ret)
				ret = ia_jr_expect(r, ':', "expected ':'");
			if (!ret)
				ret = each ? each(r, &key, arg) : ia_jr_value(r, &v, depth);
		} else {
			ret = ia_jr_value(r, &v, depth);
		}
		if (ret)
			return ret;
		if (ia_jr_peek(r) == close) {
			r->p++;
			return 0;
		}
		ret = ia_jr_expect(r, ',', obj ? "expected ',' or '}'" : "expected ',' or ']'");
		if (ret)
			return ret;
	}
}

static int skip_container(struct ia_jreader *r, int depth)
{
	return ia_jr_walk(r, depth, NULL, NULL);
}

bool ia_jr_key_is(const struct ia_jval *key, const char *name)
{
	return key->len == strlen(name) && !memcmp(key->s, name, key->len);
}
/* A value's text for a message: at most 32 bytes, nothing unprintable. */
const char *ia_jr_shown(const struct ia_jval *v, char *buf, size_t len)
{
	static const char *const type_names[] = {
		[IA_J_ABSENT] = "nothing", [IA_J_NULL] = "null", [IA_J_BOOL] = "a boolean",
		[IA_J_ARRAY] = "an array", [IA_J_OBJECT] = "an object",
	};
	size_t i, n;

	if (v->type != IA_J_NUM && v->type != IA_J_STR)
		return type_names[v->type];
	n = v->len < 32 ? v->len : 32;
	for (i = 0; i < n && i + 4 < len; i++)
		buf[i] = (unsigned char)v->s[i] >= 0x20 && v->s[i] != 0x7f ? v->s[i] : '?';
	strcpy(buf + i, n < v->len ? "..." : "");
	return buf;
}
