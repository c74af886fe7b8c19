/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The switch agent (docs/remote.md): what runs on a router, or for one
 * switch namespace, and applies the job transaction's per-switch steps
 * locally with the library calls inaggd used to make itself: the ledger
 * (admit, release, room), the BPF maps (push, unpush, counters), the ports.
 * Its protocol is agent_proto.h.
 */
#ifndef INAGG_AGENT_H
#define INAGG_AGENT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "agent_proto.h"
#include "ctl.h"
#include "mac.h"

struct ia_xdp;
struct ia_ledger;

struct ia_agent {
	char sw[128];			/* pin name of the switch's maps */
	char netns[128];		/* "" : the agent's own namespace */
	char state_path[PATH_MAX];	/* "" : no record kept */
	char boot_id[64];
	uint64_t epoch;
	json_object *jobs;		/* "ID": {class, slots, admitted, push} */
	json_object *lost;		/* ids of jobs a reboot lost */
	struct ia_xdp *xdp;		/* the switch's maps, kept open once opened */
	uint64_t ns_dev, ns_ino;	/* with netns: the namespace entered */
	bool ns_gone;			/* ... removed or set up again since: the agent ends */
};

/*
 * sw: pin name; netns: namespace to work in (entered for good), or NULL;
 * state: the record's file, or NULL. Reads the record, bumps the epoch and
 * writes it back.
 */
int ia_agent_open(struct ia_agent *a, const char *sw, const char *netns, const char *state,
		  char *err, size_t errlen);
void ia_agent_close(struct ia_agent *a);
/* One request, one reply (never NULL; the caller puts it). */
json_object *ia_agent_handle(struct ia_agent *a, json_object *req);
/*
 * Reads requests from fd in and answers on fd out until end of input. 0 or
 * -errno; -ESTALE, the request unanswered, when the agent's namespace was
 * removed or set up again (its switch is another now: a new agent serves it).
 */
int ia_agent_serve(struct ia_agent *a, int in, int out);

/* Replies: the control protocol's (ctl.h), errno always given. */
#define ia_agent_ok() ia_ctl_ok()
#define ia_agent_err(err, ...) ia_ctl_err(err, __VA_ARGS__)

/* An ok reply with one more field, key: val (the reply takes it). */
static inline json_object *ia_agent_ok_with(const char *key, json_object *val)
{
	json_object *r = ia_agent_ok();

	json_object_object_add(r, key, val);
	return r;
}

/* agent_common.c: what every request needs. The record of job id ("ID" key), made if create. */
json_object *ia_agent_job(struct ia_agent *a, uint32_t id, bool create);
/* Forgets a job once it holds nothing here. */
void ia_agent_job_tidy(struct ia_agent *a, uint32_t id);
int ia_agent_save(struct ia_agent *a);
/*
 * Integer field key of o, 0..max, into *out (left alone when absent and not
 * need). 0, -EINVAL (absent and needed, or not an integer), -ERANGE.
 */
int ia_agent_num(json_object *o, const char *key, uint64_t max, uint64_t *out, bool need);
/*
 * The switch's maps, opened once and kept, created if create (NULL and *err
 * if they are not there; why, whylen: the caller's buffer for the reason,
 * xdp.h).
 */
struct ia_xdp *ia_agent_maps(struct ia_agent *a, bool create, int *err, char *why,
			     size_t whylen);
void ia_agent_maps_drop(struct ia_agent *a);

/* agent_ledger.c: the ledger of the agent's namespace, and its requests. */
int ia_agent_ledger_open(struct ia_agent *a, struct ia_ledger **l);
/*
 * A ledger request's start: its integer field key (NULL: none) into *val
 * and the ledger opened into *l. NULL then, else the error reply.
 */
json_object *ia_agent_ledger(struct ia_agent *a, json_object *req, const char *key,
			     uint32_t *val, struct ia_ledger **l);
json_object *ia_agent_setup(struct ia_agent *a, json_object *req);
json_object *ia_agent_admit(struct ia_agent *a, json_object *req);
json_object *ia_agent_release(struct ia_agent *a, json_object *req);
json_object *ia_agent_admitted(struct ia_agent *a, json_object *req);
json_object *ia_agent_room(struct ia_agent *a, json_object *req);

/* agent_push.c: the maps and the ports. */
json_object *ia_agent_push(struct ia_agent *a, json_object *req);
json_object *ia_agent_unpush(struct ia_agent *a, json_object *req);
json_object *ia_agent_pushed(struct ia_agent *a, json_object *req);
json_object *ia_agent_counters(struct ia_agent *a, json_object *req);
json_object *ia_agent_ports(struct ia_agent *a, json_object *req);
/* agent_tail.c: FlexINA's lending, tail publication and memory figures. */
json_object *ia_agent_lend(struct ia_agent *a, json_object *req);
json_object *ia_agent_reclaim(struct ia_agent *a, json_object *req);
json_object *ia_agent_tail(struct ia_agent *a, json_object *req);
json_object *ia_agent_memory(struct ia_agent *a, json_object *req);
/* agent_layout.c */
json_object *ia_agent_layout(struct ia_agent *a, json_object *req);

#endif
