/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Control channel between the CLI and inaggd: a UNIX stream socket, one
 * JSON request per connection, answered by one JSON object, then closed.
 * Every answer has "ok": true, or "ok": false and "error": "one line".
 */
#ifndef INAGG_CTL_H
#define INAGG_CTL_H

#include <stddef.h>

#include <json-c/json.h>

#define IA_CTL_SOCK "/run/inagg/inaggd.sock"
#define IA_CTL_MAX (4 << 20)	/* largest request or answer */

/* Sends req (not consumed) and returns the answer in *resp. 0 or -errno. */
int ia_ctl_call(const char *path, json_object *req, json_object **resp, char *err,
		size_t errlen);
/* Reads a whole message from fd (until EOF or a newline) and parses it. */
int ia_ctl_read(int fd, json_object **msg);
int ia_ctl_write(int fd, json_object *msg);

#endif
