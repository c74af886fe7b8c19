// SPDX-License-Identifier: GPL-2.0
/* inaggd's log: stderr, with the journal's "<N>" level prefix under systemd. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "inaggd.h"

static enum ia_log_level log_level = IA_LOG_INFO;
static bool journal;

void log_setup(enum ia_log_level level, bool to_journal)
{
	log_level = level;
	journal = to_journal;
}

bool log_journal(void)
{
	return journal;
}

void log_msg(enum ia_log_level level, const char *fmt, ...)
{
	static const char *const names[] = { [IA_LOG_ERR] = "error", [IA_LOG_WARN] = "warning",
					     [IA_LOG_INFO] = "info", [IA_LOG_DEBUG] = "debug" };
	va_list ap;

	if (level > log_level)
		return;
	/* The journal reads the level from a "<N>" prefix. */
	if (journal)
		fprintf(stderr, "<%d>", level);
	else
		fprintf(stderr, "inaggd: %s: ", names[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void note(void *ctx, enum ia_log_level level, const char *msg)
{
	log_msg(level, "%s", msg);
}
