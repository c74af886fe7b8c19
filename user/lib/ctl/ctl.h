/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Control channel between the CLI and inaggd: a UNIX stream socket, one
 * JSON request per connection, answered by one JSON object, then closed.
 * Every answer has "ok": true, or "ok": false and "error": "one line".
 */
#ifndef INAGG_CTL_H
#define INAGG_CTL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "err.h"

#define IA_CTL_SOCK IA_RUN_DIR "/inaggd.sock"
/* The group whose members may use inaggd besides root, each its own jobs. */
#define IA_CTL_GROUP "inagg"
#define IA_CTL_MAX (4 << 20)	/* largest request or answer */

/*
 * Sends req (not consumed) and returns the answer in *resp. 0 or -errno;
 * -ETIMEDOUT when no answer came within IA_CTL_WAIT_MS ($INAGG_CTL_TIMEOUT_MS
 * overrides it): longer than any request waits on its routers (remote.md).
 */
#define IA_CTL_WAIT_MS	300000
int ia_ctl_call(const char *path, json_object *req, json_object **resp, char *err,
		size_t errlen);
/*
 * Waits until the daemon at path answers (a "list" request), by the clock,
 * polling every 50 ms: 0; -ECHILD when pid (if > 0, the daemon's process, a
 * child of the caller) exited first, and was reaped; -ETIMEDOUT after
 * timeout_ms.
 */
int ia_ctl_wait(const char *path, pid_t pid, int timeout_ms);
/* Reads a whole message from fd (until EOF or a newline) and parses it. */
int ia_ctl_read(int fd, json_object **msg);
int ia_ctl_write(int fd, json_object *msg);

/* Parses one message: strict JSON, valid UTF-8, an object. 0 or -EBADMSG, reason in err. */
int ia_ctl_parse(const char *buf, size_t len, json_object **msg, char *err, size_t errlen);

/*
 * The replies of both JSON protocols (the daemon's, the agents'): {"ok":
 * true}, or {"ok": false, "errno": N (when err is not 0, either sign),
 * "error": "one line"} with the line made valid UTF-8.
 */
json_object *ia_ctl_ok(void);
json_object *ia_ctl_verr(int err, const char *fmt, va_list ap);
json_object *ia_ctl_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Whether s is valid UTF-8 (RFC 3629); ia_ctl_utf8_clean() makes it so, '?' for each bad byte. */
bool ia_ctl_utf8_valid(const char *s, size_t len);
void ia_ctl_utf8_clean(char *s);

/* Request validation: the fields a command reads, with their type and range. */
enum ia_ctl_type {
	IA_CTL_INT,
	IA_CTL_STRING,
	IA_CTL_COUNTS,		/* an object of integers, such as {"sw1": 2} */
};

struct ia_ctl_field {
	const char *key;
	enum ia_ctl_type type;
	bool required;
	long long min, max;	/* INT: the value; STRING: the length; COUNTS: each value */
};

/*
 * Checks that req is an object whose members named in fields (ended by a
 * NULL key) have the type and range given; other members are ignored.
 * 0, or -EINVAL with one line in err naming the field and what it needs.
 */
int ia_ctl_check(json_object *req, const struct ia_ctl_field *fields, char *err, size_t errlen);
/* A checked member, or def when absent. */
long long ia_ctl_int(json_object *req, const char *key, long long def);
const char *ia_ctl_str(json_object *req, const char *key, const char *def);

#endif
