// SPDX-License-Identifier: GPL-2.0
/* Control requests: parsing and validation of every field before use (see ctl.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "err.h"
#include "jsonread.h"	/* IA_JSON_DEPTH_MAX */

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, surrogates, > U+10FFFF), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t len)
{
	unsigned int c = s[0], min, n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	if (len < n)
		return 0;
	for (unsigned int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

bool ia_ctl_utf8_valid(const char *s, size_t len)
{
	for (size_t i = 0, n; i < len; i += n) {
		n = utf8_seq((const unsigned char *)s + i, len - i);
		if (!n)
			return false;
	}
	return true;
}

void ia_ctl_utf8_clean(char *s)
{
	size_t len = strlen(s);

	for (size_t i = 0, n; i < len; i += n) {
		n = utf8_seq((unsigned char *)s + i, len - i);
		if (!n) {
			s[i] = '?';
			n = 1;
		}
	}
}

/*
 * json-c keeps the last of two equal keys, so {"cmd":"list","cmd":"show"}
 * would run show: the text (already valid JSON) is walked once more for
 * keys given twice, in every object at any depth. Requests are small, so
 * keys are compared pairwise; keys with escapes are decoded by json-c.
 */
struct dup_key {
	const char *s;
	size_t len;
	char *own;	/* the decoded copy of a key with escapes */
};

static const char *dup_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* Past the string at p ('"'). */
static const char *dup_string(const char *p, const char *end)
{
	for (p++; p < end && *p != '"'; p++)
		if (*p == '\\')
			p++;
	return p < end ? p + 1 : end;
}

/* The key from p to q (quotes included), as its bytes. */
static int dup_key_of(const char *p, const char *q, struct dup_key *k)
{
	struct json_tokener *tok;
	json_object *o;

	*k = (struct dup_key){ .s = p + 1, .len = (size_t)(q - p - 2) };
	if (!memchr(p, '\\', q - p))
		return 0;
	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	o = json_tokener_parse_ex(tok, p, q - p);
	json_tokener_free(tok);
	if (!o)
		return -ENOMEM;
	k->len = json_object_get_string_len(o);
	k->own = malloc(k->len + 1);
	if (k->own)
		memcpy(k->own, json_object_get_string(o), k->len);
	json_object_put(o);
	k->s = k->own;
	return k->own ? 0 : -ENOMEM;
}

static const char *dup_value(const char *p, const char *end, int depth, int *ret, char *err,
			     size_t errlen);

static const char *dup_object(const char *p, const char *end, int depth, int *ret, char *err,
			      size_t errlen)
{
	struct dup_key *keys = NULL, *k;
	size_t n = 0, cap = 0;
	const char *q;

	for (p = dup_ws(p + 1, end); !*ret && p < end && *p == '"'; p = dup_ws(p, end)) {
		q = dup_string(p, end);
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			k = realloc(keys, cap * sizeof(*k));
			if (!k) {
				*ret = ia_fail(err, errlen, -ENOMEM, "request: out of memory");
				break;
			}
			keys = k;
		}
		k = &keys[n++];
		if (dup_key_of(p, q, k)) {
			*ret = ia_fail(err, errlen, -ENOMEM, "request: out of memory");
			break;
		}
		for (size_t i = 0; i + 1 < n; i++) {
			if (keys[i].len != k->len || memcmp(keys[i].s, k->s, k->len))
				continue;
			/* Valid UTF-8 (checked first), cut to 32 bytes; a NUL cuts it too. */
			*ret = ia_fail(err, errlen, -EBADMSG, "request: key '%.*s' given twice",
				       (int)(k->len < 32 ? k->len : 32), k->s);
			break;
		}
		if (*ret)
			break;
		p = dup_ws(dup_ws(q, end) + 1, end);	/* past ':' */
		p = dup_ws(dup_value(p, end, depth + 1, ret, err, errlen), end);
		if (p < end && *p == ',')
			p++;
	}
	while (n--)
		free(keys[n].own);
	free(keys);
	return p < end ? p + 1 : end;	/* past '}' */
}

static const char *dup_value(const char *p, const char *end, int depth, int *ret, char *err,
			     size_t errlen)
{
	if (depth > IA_JSON_DEPTH_MAX) {
		*ret = ia_fail(err, errlen, -EBADMSG, "request: nested too deep");
		return end;
	}
	if (p >= end)
		return end;
	if (*p == '{')
		return dup_object(p, end, depth, ret, err, errlen);
	if (*p == '"')
		return dup_string(p, end);
	if (*p == '[') {
		for (p = dup_ws(p + 1, end); !*ret && p < end && *p != ']';) {
			p = dup_ws(dup_value(p, end, depth + 1, ret, err, errlen), end);
			if (p < end && *p == ',')
				p = dup_ws(p + 1, end);
		}
		return p < end ? p + 1 : end;
	}
	while (p < end && !strchr(",]} \t\r\n", *p))
		p++;
	return p;
}

static int dup_keys(const char *buf, size_t len, char *err, size_t errlen)
{
	int ret = 0;

	dup_value(dup_ws(buf, buf + len), buf + len, 0, &ret, err, errlen);
	return ret;
}

int ia_ctl_parse(const char *buf, size_t len, json_object **msg, char *err, size_t errlen)
{
	struct json_tokener *tok;
	enum json_tokener_error e;
	int ret;

	*msg = NULL;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\r'))
		len--;
	if (!len)
		return ia_fail(err, errlen, -EBADMSG, "request: empty");
	if (!ia_ctl_utf8_valid(buf, len))
		return ia_fail(err, errlen, -EBADMSG, "request: not valid UTF-8");
	tok = json_tokener_new();
	if (!tok)
		return ia_fail(err, errlen, -ENOMEM, "request: out of memory");
	/* Strict: one JSON text; strings must be UTF-8, so replies never echo bytes that are not. */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	*msg = json_tokener_parse_ex(tok, buf, len);
	e = json_tokener_get_error(tok);
	if (e == json_tokener_continue)
		e = json_tokener_error_parse_eof;
	if (e == json_tokener_success && json_tokener_get_parse_end(tok) != len)
		e = json_tokener_error_parse_unexpected;
	json_tokener_free(tok);
	if (e != json_tokener_success) {
		json_object_put(*msg);
		*msg = NULL;
		return ia_fail(err, errlen, -EBADMSG, "request: not JSON (%s)",
			       json_tokener_error_desc(e));
	}
	if (!json_object_is_type(*msg, json_type_object)) {
		json_object_put(*msg);
		*msg = NULL;
		return ia_fail(err, errlen, -EBADMSG, "request: need a JSON object");
	}
	ret = dup_keys(buf, len, err, errlen);
	if (ret) {
		json_object_put(*msg);
		*msg = NULL;
		return ret;
	}
	return 0;
}

static int check_int(json_object *v, const struct ia_ctl_field *f, const char *what, char *err,
		     size_t errlen)
{
	long long x;

	/* json-c saturates larger numbers at INT64_MIN/MAX: those are out of range too. */
	if (!json_object_is_type(v, json_type_int))
		return ia_fail(err, errlen, -EINVAL, "%s: need an integer in [%lld, %lld]", what,
			       f->min, f->max);
	x = json_object_get_int64(v);
	if (x < f->min || x > f->max || x == INT64_MAX || x == INT64_MIN)
		return ia_fail(err, errlen, -EINVAL, "%s: need an integer in [%lld, %lld]", what,
			       f->min, f->max);
	return 0;
}

static int check_field(json_object *v, const struct ia_ctl_field *f, char *err, size_t errlen)
{
	switch (f->type) {
	case IA_CTL_INT:
		return check_int(v, f, f->key, err, errlen);
	case IA_CTL_STRING: {
		int len;

		if (!json_object_is_type(v, json_type_string))
			return ia_fail(err, errlen, -EINVAL, "%s: need a string", f->key);
		len = json_object_get_string_len(v);
		if ((size_t)len != strlen(json_object_get_string(v)))
			return ia_fail(err, errlen, -EINVAL, "%s: contains a NUL character", f->key);
		if (len < f->min || len > f->max)
			return ia_fail(err, errlen, -EINVAL, "%s: need %lld to %lld characters",
				       f->key, f->min, f->max);
		return 0;
	}
	case IA_CTL_COUNTS: {
		char what[96];

		if (!json_object_is_type(v, json_type_object))
			return ia_fail(err, errlen, -EINVAL,
				       "%s: need an object of integers such as {\"sw1\": 2}", f->key);
		json_object_object_foreach(v, name, cnt) {
			snprintf(what, sizeof(what), "%s: '%.32s'", f->key, name);
			if (check_int(cnt, f, what, err, errlen))
				return -EINVAL;
		}
		return 0;
	}
	}
	return ia_fail(err, errlen, -EINVAL, "%s: unknown type", f->key);
}

int ia_ctl_check(json_object *req, const struct ia_ctl_field *fields, char *err, size_t errlen)
{
	if (!json_object_is_type(req, json_type_object))
		return ia_fail(err, errlen, -EINVAL, "request: need a JSON object");
	for (const struct ia_ctl_field *f = fields; f->key; f++) {
		json_object *v;

		if (!json_object_object_get_ex(req, f->key, &v)) {
			if (f->required)
				return ia_fail(err, errlen, -EINVAL, "%s: missing", f->key);
			continue;
		}
		if (check_field(v, f, err, errlen))
			return -EINVAL;
	}
	return 0;
}

long long ia_ctl_int(json_object *req, const char *key, long long def)
{
	json_object *v;

	return json_object_object_get_ex(req, key, &v) ? json_object_get_int64(v) : def;
}

const char *ia_ctl_str(json_object *req, const char *key, const char *def)
{
	json_object *v;

	return json_object_object_get_ex(req, key, &v) ? json_object_get_string(v) : def;
}
