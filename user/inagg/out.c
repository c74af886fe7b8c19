// SPDX-License-Identifier: GPL-2.0
/* Text and JSON output through one set of calls; see out.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "out.h"

#define OUT_DEPTH 32

static bool json_mode;
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
}

void out_begin(void)
{
	drop_doc();
	if (!json_mode)
		return;
	stack[0] = json_object_new_object();
	depth = 1;
}

int out_end(void)
{
	if (!json_mode)
		return 0;
	if (depth > 0) {
		puts(json_object_to_json_string_ext(stack[0], JSON_C_TO_STRING_PRETTY |
						    JSON_C_TO_STRING_SPACED |
						    JSON_C_TO_STRING_NOSLASHESCAPE));
		drop_doc();
	}
	fflush(stdout);
	return 0;
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
	char buf[64];

	if (json_mode) {
		/* %.10g keeps timings and averages readable and exact enough. */
		snprintf(buf, sizeof(buf), "%.10g", v);
		add(key, json_object_new_double_s(v, buf));
	} else if (fmt) {
		printf(fmt, v);
	}
}

void out_ratio(const char *key, const char *fmt, struct ia_ratio r)
{
	char buf[64];

	ia_ratio_format(r, buf, sizeof(buf));
	if (json_mode)
		add(key, json_object_new_double_s(ia_ratio_double(r), buf));
	else if (fmt)
		printf(fmt, buf);
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
