// SPDX-License-Identifier: GPL-2.0
/* Text and JSON output through one set of calls; see out.h. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "numfmt.h"
#include "out.h"

#define OUT_DEPTH 32

static bool json_mode;
/*
 * Values too large to build as objects: placeholder strings "\001s<i>\001"
 * (JSON "\u0001s<i>\u0001"), replaced by out_end() with what stream i writes.
 */
#define OUT_STREAMS 16
static struct {
	void (*fn)(FILE *f, int indent, void *arg);
	void *arg;
} streams[OUT_STREAMS];
static int nstreams;
static json_object *stack[OUT_DEPTH];
static int depth;		/* entries in stack; 0 outside a document */

void out_set_json(bool on)
{
	json_mode = on;
}

bool out_is_json(void)
{
	return json_mode;
}

static void drop_doc(void)
{
	if (depth > 0)
		json_object_put(stack[0]);
	depth = 0;
	nstreams = 0;
}

void out_begin(void)
{
	drop_doc();
	if (!json_mode)
		return;
	stack[0] = json_object_new_object();
	depth = 1;
}

/* Prints doc, each stream's placeholder replaced by what the stream writes. */
static void print_doc(const char *doc)
{
	const char *p = doc, *mark, *line;
	char want[32];

	for (int i = 0; i < nstreams; i++) {
		snprintf(want, sizeof(want), "\"\\u0001s%d\\u0001\"", i);
		mark = strstr(p, want);
		if (!mark)
			continue;
		for (line = mark; line > doc && line[-1] != '\n'; line--)
			;
		fwrite(p, 1, mark - p, stdout);
		/* Its items one level deeper than the line holding its key. */
		streams[i].fn(stdout, (int)strspn(line, " ") + 2, streams[i].arg);
		p = mark + strlen(want);
	}
	puts(p);
}

int out_end(void)
{
	if (!json_mode)
		return 0;
	if (depth > 0) {
		const char *doc = json_object_to_json_string_ext(stack[0], JSON_C_TO_STRING_PRETTY |
								  JSON_C_TO_STRING_SPACED |
								  JSON_C_TO_STRING_NOSLASHESCAPE);
		print_doc(doc);
		drop_doc();
	}
	fflush(stdout);
	return ferror(stdout) ? 1 : 0;
}

/*
 * Adds v under key to the innermost container. Takes the reference; returns
 * false (and frees v) when the value has no place in JSON output.
 */
static bool add(const char *key, json_object *v)
{
	json_object *top;

	if (depth == 0) {
		json_object_put(v);
		return false;
	}
	top = stack[depth - 1];
	if (json_object_is_type(top, json_type_array)) {
		json_object_array_add(top, v);
		return true;
	}
	if (!key) {
		json_object_put(v);
		return false;
	}
	json_object_object_add(top, key, v);
	return true;
}

static void push(const char *key, json_object *v)
{
	/* Deeper nesting than any command uses is a programming error. */
	if (depth >= OUT_DEPTH) {
		fprintf(stderr, "inagg: output nested too deep\n");
		abort();
	}
	/* The parent takes one reference, the stack keeps the other. */
	add(key, json_object_get(v));
	stack[depth++] = v;
}

static void pop(void)
{
	if (depth > 1) {
		json_object_put(stack[depth - 1]);
		depth--;
	}
}

void out_obj_open(const char *key)
{
	if (json_mode)
		push(key, json_object_new_object());
}

void out_obj_close(void)
{
	if (json_mode)
		pop();
}

void out_arr_open(const char *key)
{
	if (json_mode)
		push(key, json_object_new_array());
}

void out_arr_close(void)
{
	if (json_mode)
		pop();
}

void out_str(const char *key, const char *fmt, const char *v)
{
	if (json_mode)
		add(key, v ? json_object_new_string(v) : NULL);
	else if (fmt)
		printf(fmt, v ? v : "-");
}

void out_int(const char *key, const char *fmt, long long v)
{
	if (json_mode)
		add(key, json_object_new_int64(v));
	else if (fmt)
		printf(fmt, v);
}

void out_uint(const char *key, const char *fmt, unsigned long long v)
{
	if (json_mode)
		add(key, json_object_new_uint64(v));
	else if (fmt)
		printf(fmt, v);
}

void out_bool(const char *key, const char *fmt, bool v)
{
	if (json_mode)
		add(key, json_object_new_boolean(v));
	else if (fmt)
		printf(fmt, v ? "true" : "false");
}

void out_double(const char *key, const char *fmt, double v)
{
	char buf[IA_NUMFMT_LEN];

	if (json_mode)	/* the shortest text that reads back as v */
		add(key, isfinite(v) ? json_object_new_double_s(v, ia_fmt_double(v, buf)) : NULL);
	else if (fmt)
		printf(fmt, v);
}

void out_ratio(const char *key, const char *fmt, struct ia_ratio r)
{
	char buf[64], exact_key[64];

	if (json_mode) {
		/* The double, exact to the last bit, and the rational as "num/den". */
		add(key, json_object_new_double_s(ia_ratio_double(r), ia_fmt_ratio(r, buf)));
		if (key) {
			snprintf(exact_key, sizeof(exact_key), "%s_exact", key);
			ia_ratio_exact(r, buf, sizeof(buf));
			add(exact_key, json_object_new_string(buf));
		}
	} else if (fmt) {
		ia_ratio_format(r, buf, sizeof(buf));
		printf(fmt, buf);
	}
}

void out_stream(const char *key, void (*fn)(FILE *f, int indent, void *arg), void *arg)
{
	char mark[16];

	if (!json_mode)
		return;
	if (nstreams == OUT_STREAMS) {
		/* More than any command uses: a programming error, like nesting too deep. */
		fprintf(stderr, "inagg: too many streamed values\n");
		abort();
	}
	snprintf(mark, sizeof(mark), "\001s%d\001", nstreams);
	if (add(key, json_object_new_string(mark)))
		streams[nstreams++] = (typeof(streams[0])){ fn, arg };
}


void out_text(const char *fmt, ...)
{
	va_list ap;

	if (json_mode)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

int out_err(const char *fmt, ...)
{
	char msg[1024];
	json_object *o;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* One line, whatever a library's message ends with. */
	msg[strcspn(msg, "\n")] = '\0';
	if (!json_mode) {
		fflush(stdout);
		fprintf(stderr, "inagg: %s\n", msg);
		return 1;
	}
	drop_doc();
	o = json_object_new_object();
	json_object_object_add(o, "error", json_object_new_string(msg));
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_SPACED |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	fflush(stdout);
	return 1;
}

void out_warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "inagg: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
