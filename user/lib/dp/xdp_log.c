// SPDX-License-Identifier: GPL-2.0
/*
 * The XDP loader's errors and libbpf's messages (xdp.h): the words of a
 * failure in the caller's buffer, and libbpf's print hook that keeps
 * libbpf's and the verifier's last warnings (of this thread: libbpf calls the
 * hook on the loading thread) for the error of a failed load. Programs
 * install the hook (libbpf_set_print() is process-wide); the library never
 * does.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "xdp_int.h"

#define LOG_TAIL_LINES	20	/* of libbpf's and the verifier's messages, after a failed load */

static bool verbose;
static libbpf_print_fn_t app_print;	/* where the program sends them: NULL nowhere */
static __thread char log_tail[8192];	/* libbpf's last warnings (verifier log included) */
static __thread size_t log_len;

/*
 * Kept for the error of a failed load; printed where the program asked
 * (ia_xdp_print_to()) or, with ia_xdp_set_verbose(), on stderr.
 */
int ia_xdp_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *s = NULL;
	size_t n, keep;
	va_list aq;

	va_copy(aq, ap);
	if (verbose && level != LIBBPF_DEBUG)
		vfprintf(stderr, fmt, aq);
	else if (app_print)
		app_print(level, fmt, aq);
	va_end(aq);
	if (level != LIBBPF_WARN || vasprintf(&s, fmt, ap) < 0)
		return 0;
	n = strlen(s);
	if (n >= sizeof(log_tail)) {
		memcpy(log_tail, s + n - (sizeof(log_tail) - 1), sizeof(log_tail) - 1);
		log_len = sizeof(log_tail) - 1;
	} else {
		keep = log_len + n < sizeof(log_tail) ? log_len : sizeof(log_tail) - 1 - n;
		memmove(log_tail, log_tail + log_len - keep, keep);
		memcpy(log_tail + keep, s, n);
		log_len = keep + n;
	}
	log_tail[log_len] = '\0';
	free(s);
	return 0;
}

void ia_xdp_print_to(libbpf_print_fn_t fn)
{
	app_print = fn;
}

/* A new load's messages only. */
void ia_xdp_log_reset(void)
{
	log_len = 0;
	log_tail[0] = '\0';
}

void ia_xdp_set_verbose(bool on)
{
	verbose = on;
}

/* What the kernel's own codes (above 511) mean; strerror() knows them not. */
const char *ia_xdp_errname(int err)
{
	switch (-err) {
	case 524:
		return "operation not supported by this kernel (ENOTSUPP)";
	case 525:
		return "buffer too small (ETOOSMALL)";
	default:
		return strerror(-err);
	}
}

void ia_xdp_err_start(char *why, size_t whylen)
{
	if (why && whylen)
		why[0] = '\0';
}

int ia_xdp_said(char *why, size_t whylen, int ret)
{
	if (ret && why && whylen && !why[0])
		ia_fail(why, whylen, ret, "%s", ia_xdp_errname(ret));
	return ret;
}

/* err of a failed load, and the tail of what libbpf and the verifier said. */
int ia_xdp_load_failed(int err, char *why, size_t whylen)
{
	const char *tail = log_tail + log_len;
	int lines = 0;

	while (tail > log_tail && lines <= LOG_TAIL_LINES)
		if (*--tail == '\n' && tail + 1 < log_tail + log_len)
			lines++;
	if (lines > LOG_TAIL_LINES)
		tail++;
	return ia_fail(why, whylen, err, "loading the datapath: %s%s%s", ia_xdp_errname(err),
		       log_len ? "; libbpf said:\n" : "", tail);
}

