/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One logging interface (as xdp-tools' logging.h): a level enum, pr_warn()
 * and the like, and one print hook that a program sets. The library never
 * prints on its own: with no hook set, its messages go nowhere.
 *
 * Objects that report what happened to a caller-given sink (the job table,
 * the lender, the agents' controller: their ops' "note") take the same
 * ia_log_fn; with none given, their messages go to the print hook.
 */
#ifndef INAGG_LOG_H
#define INAGG_LOG_H

#include <stdarg.h>

/* syslog's numbers, so that a daemon can hand them to the journal ("<N>"). */
enum ia_log_level {
	IA_LOG_ERR = 3,
	IA_LOG_WARN = 4,
	IA_LOG_INFO = 6,
	IA_LOG_DEBUG = 7,
};

/* A sink of one-line messages, with its context. */
typedef void (*ia_log_fn)(void *ctx, enum ia_log_level level, const char *msg);

/* The process's print hook (NULL: none). For programs, not for the library. */
void ia_log_set_print(ia_log_fn fn, void *ctx);

/* One message to fn (ctx), or to the print hook when fn is NULL. */
void ia_vlog_to(ia_log_fn fn, void *ctx, enum ia_log_level level, const char *fmt, va_list ap);
void ia_log_to(ia_log_fn fn, void *ctx, enum ia_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void ia_log(enum ia_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define pr_warn(fmt, ...)	ia_log(IA_LOG_WARN, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...)	ia_log(IA_LOG_INFO, fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...)	ia_log(IA_LOG_DEBUG, fmt, ##__VA_ARGS__)

#endif
