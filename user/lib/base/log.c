// SPDX-License-Identifier: GPL-2.0
/* The library's logging (log.h): one print hook, set by the program. */
#include <stdio.h>

#include "err.h"
#include "log.h"

static ia_log_fn print_fn;
static void *print_ctx;

void ia_log_set_print(ia_log_fn fn, void *ctx)
{
	print_fn = fn;
	print_ctx = ctx;
}

void ia_vlog_to(ia_log_fn fn, void *ctx, enum ia_log_level level, const char *fmt, va_list ap)
{
	char msg[2 * IA_ERRLEN];

	if (!fn) {
		fn = print_fn;
		ctx = print_ctx;
	}
	if (!fn)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fn(ctx, level, msg);
}

void ia_log_to(ia_log_fn fn, void *ctx, enum ia_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ia_vlog_to(fn, ctx, level, fmt, ap);
	va_end(ap);
}

void ia_log(enum ia_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ia_vlog_to(NULL, NULL, level, fmt, ap);
	va_end(ap);
}
