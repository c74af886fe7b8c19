/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal to the controller's side of the agents (remote.h), for its parts
 * remote_*.c: one unit split for size. A call may find a namespace switch
 * set up again and connect the network again (ia_remote_renew()), which
 * calls again: the parts call each other, nothing outside calls these.
 */
#ifndef INAGG_REMOTE_INT_H
#define INAGG_REMOTE_INT_H

#include "remote.h"

void ia_remote_session(struct ia_link *l, void *r);
/* What happened, to the controller's note (or the print hook). */
#define ia_remote_note(r, level, ...) ia_log_to((r)->note, (r)->note_ctx, level, __VA_ARGS__)
json_object *ia_remote_request(const char *op);
/* One request to switch v's agent; ok false becomes -errno. Consumes q. */
int ia_remote_call(struct ia_remote *r, int v, json_object *q, json_object **reply, char *why,
		   size_t whylen);

#endif
