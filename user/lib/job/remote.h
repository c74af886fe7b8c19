/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The controller's side of the switch agents (agent_proto.h, docs/remote.md).
 *
 * A link runs one agent as a child process (a command: the agent itself for
 * a switch namespace of this host, or ssh to the router for a remote one)
 * and talks to it over its stdin and stdout, one JSON line per request.
 * Every call is bounded: a reply that does not come within the link's
 * timeout ends the session (the child is killed), and the call is tried
 * again on a new one, at most retries more times, with a growing pause.
 * A link that failed every try fails at once for IA_LINK_HOLDOFF_MS after,
 * so one dead router does not make every request wait its timeouts.
 * Each new session starts with hello: a boot id other than the last one
 * seen means the router rebooted (its ledger and maps are gone); another
 * epoch with the same boot id only that the agent was restarted.
 *
 * The network (struct ia_remote) is one link per switch of a topology with
 * the switch's ports and their peers, and the job transaction's operations
 * over them (ia_remote_admit() ... : what struct ia_job_ops needs).
 */
#ifndef INAGG_REMOTE_H
#define INAGG_REMOTE_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <json-c/json.h>

#include "err.h"
#include "log.h"
#include "topo.h"
#include "xdp.h"
#include "xdp_mem.h"

#define IA_LINK_HOLDOFF_MS 5000
#define IA_LINK_PROBE_MS 50	/* how often a probe in flight is looked at */

enum ia_link_health {
	IA_LINK_NEW,		/* not called yet */
	IA_LINK_OK,
	IA_LINK_SLOW,		/* the last call needed a retry */
	IA_LINK_DOWN,		/* the last call failed on every try */
};

struct ia_link {
	char name[128];		/* the switch, for messages */
	char where[256];	/* the host or namespace, for messages */
	char **argv;		/* the agent's command (owned) */
	int timeout_ms;		/* per try */
	int retries;		/* tries after the first */
	int fd, errfd;		/* the session: agent's stdin+stdout, its stderr */
	pid_t pid;
	uint64_t seq;
	char *buf;		/* replies read, not yet returned */
	size_t len;
	char stderr_tail[160];	/* the agent's (or ssh's) last line on stderr */
	/* What the sessions said. */
	bool known;
	char boot_id[64];
	uint64_t epoch;
	unsigned int sessions;	/* sessions started */
	unsigned int reboots;	/* boot id changes seen */
	json_object *lost;	/* jobs the last reboot lost (hello's "lost") */
	json_object *held;	/* jobs the agent held at the last hello */
	/* Health. */
	enum ia_link_health health;
	char why[IA_ERRLEN];	/* the last failure */
	double last_ms;		/* round trip of the last successful call */
	time_t last_ok;
	unsigned int tries_failed;	/* all time */
	long long down_until;	/* a link that failed every try is not tried again before (ms) */
	int holdoff_ms;		/* that pause (IA_LINK_HOLDOFF_MS) */
	/*
	 * async: a link that failed is never tried again in a call (which fails
	 * at once) but by ia_link_tick(), a session and its hello at a time,
	 * whose answer is read when it has come: a dead router stalls no one.
	 */
	bool async;
	bool probing;		/* a probe's hello sent, its answer not read yet */
	long long probe_deadline;
	uint64_t probe_seq;
	unsigned int sessions_probed;	/* of sessions, those a probe started */
	/*
	 * A call in progress (its depth), and whether it was made by what the
	 * wait hook runs: one made meanwhile by another request finds it busy.
	 */
	int busy;
	bool busy_hook;
	long long busy_since;	/* ms, monotonic */
	/* Called once a new session said hello, before the call that started it. */
	void (*on_session)(struct ia_link *l, void *arg);
	void *arg;
};

/* argv is copied. timeout_ms > 0, retries >= 0. */
int ia_link_init(struct ia_link *l, const char *name, const char *where, char *const argv[],
		 int timeout_ms, int retries);
/* Ends the session (stdin closed, then the child killed if it lingers) and frees. */
void ia_link_free(struct ia_link *l);
/* Ends the session only; the next call starts another. */
void ia_link_hangup(struct ia_link *l);
/*
 * Sends req (op and fields; seq is set here) and waits for its reply. 0 with
 * *reply (the caller puts it) whether the agent said ok or not; -ETIMEDOUT
 * (no answer in time), -ECONNRESET (the session ended: an unreachable host,
 * a refused login, a missing agent) or -EPROTO after the last try, why says
 * which router and what happened.
 */
int ia_link_call(struct ia_link *l, json_object *req, json_object **reply, char *why,
		 size_t whylen);
/*
 * While any call waits for a router, fn(arg) runs every few ms (never inside
 * itself), so that a program with other work, inaggd's clients, does it
 * meanwhile. Calls fn makes wait without it; one on a link whose call fn
 * interrupted fails at once with -EBUSY (a link carries one call at a
 * time). NULL: calls just wait.
 */
void ia_link_set_wait_hook(void (*fn)(void *arg), void *arg);
/* A call waits for this link now (one that the wait hook interrupted). */
bool ia_link_busy(const struct ia_link *l);
/* As ia_link_call(); a reply with ok false becomes -errno with its "error" in why. */
int ia_link_do(struct ia_link *l, json_object *req, json_object **reply, char *why,
	       size_t whylen);
/*
 * An async link that is down: starts a probe once its hold-off is over,
 * reads a probe's answer if it has come (the link is then ok again and its
 * on_session runs) or fails it at its timeout. Never blocks. Returns the ms
 * until it wants to be called again, -1 when the link is not down.
 */
long long ia_link_tick(struct ia_link *l);
/* Ends the session and marks the link down for why; returns its hold-off (ms). */
long long ia_link_mark_down(struct ia_link *l, const char *why);
const char *ia_link_health_name(enum ia_link_health h);
/* {switch, where, health, why?, busy_ms? (a call waiting for it), rtt_ms, epoch, reboots, sessions}. */
json_object *ia_link_json(const struct ia_link *l);

/* ---- the network ---- */

struct ia_rport {
	char name[IFNAMSIZ];
	int ifindex;
	unsigned char mac[6], peer[6];
	bool has_peer;
	bool peer_given;	/* by the site: kept when the switch is connected again */
};

struct ia_rswitch {
	struct ia_link link;
	bool remote;		/* reached over ssh (site.host), else a namespace here */
	bool layout;		/* site.layout: setup addresses and routes its ports */
	char ns[128];		/* a namespace switch: its namespace (also its pin name) */
	struct ia_rport up, *down, *host;	/* per child position, per worker */
	unsigned int reboots_seen;	/* link.reboots already acted on */
	bool connected;		/* its ports read (ia_remote_connect()) */
	/*
	 * To connect (again): unreachable at start, or rebooted (async links):
	 * its calls fail at once, but those connecting it (connecting).
	 */
	bool pending;
	bool connecting;
	/* Jobs it only forwards, to push again once it is connected after its reboot (ids). */
	json_object *repush;
};

struct ia_jobs;
struct ia_job;

struct ia_remote {
	const struct ia_topo *t;
	char tag[16];
	struct ia_rswitch *sw;
	uint32_t job_flags;		/* IA_JOB_F_* for every push */
	/* The controller's table as last saved: what agents may hold. */
	const struct ia_jobs *js;
	bool reconciling;
	/* Jobs a router's reboot broke: "ID" -> reason. */
	json_object *failed;
	/* Jobs a router's reboot did not break (it was red there, pushed again): "ID" -> what. */
	json_object *recovered;
	ia_log_fn note;		/* NULL: the print hook (log.h) */
	void *note_ctx;
	/* A switch connected after the start (it was unreachable, or rebooted): its ports known. */
	void (*on_connect)(void *ctx, int v);
	/* A namespace switch seen set up again: every namespace switch checked and connected. */
	bool renewed, renewing;
};

/*
 * The network of topology t (file topo_path, read again for each switch's
 * "site") and tag: a namespace switch ia-TAG-SWITCH runs agent_bin there;
 * a switch with a site's host is reached with ssh. Nothing is started yet.
 */
int ia_remote_open(struct ia_remote *r, const struct ia_topo *t, const char *topo_path,
		   const char *tag, const char *agent_bin, char *err, size_t errlen);
void ia_remote_close(struct ia_remote *r);
/*
 * remote_connect.c. Starts every agent, gives the ports netplan.h's
 * addresses and routes where the site asks for it (layout), reads every
 * port and learns every peer MAC (the site's, the neighbouring agent's, a
 * worker namespace's, the neighbour table's). A router whose link is async
 * and does not answer is marked down (a note says so), not an error: its
 * calls fail at once until ia_remote_tick() has connected it. Setup sets
 * each connected ledger's limits to the topology's.
 */
int ia_remote_connect(struct ia_remote *r, char *err, size_t errlen);
int ia_remote_layout(struct ia_remote *r, int v, char *err, size_t errlen);
int ia_remote_setup(struct ia_remote *r, char *err, size_t errlen);
/*
 * Never blocks on a router that is down: ticks every link (ia_link_tick())
 * and connects (layout, ports, ledger limits) each switch not connected
 * whose link answers again. Returns ms until it wants to run again, or -1.
 */
long long ia_remote_tick(struct ia_remote *r);
/*
 * After a namespace switch was seen set up again ("inagg net down" and "net
 * up" under the controller: new ports, MACs, maps, ledger): every other
 * namespace switch is asked (its agent, in a namespace gone, ends, and a new
 * session finds it set up again too), and each of them is connected again
 * at once, not in the background: they are this host's.
 */
void ia_remote_renew(struct ia_remote *r);

/* The job transaction's operations (struct ia_job_ops) on switch v. */
int ia_remote_admit(struct ia_remote *r, int v, uint32_t id, int class, uint32_t slots,
		    char *why, size_t whylen);
int ia_remote_release(struct ia_remote *r, int v, uint32_t id, char *why, size_t whylen);
int ia_remote_admitted(struct ia_remote *r, int v, uint32_t id);
bool ia_remote_has_room(struct ia_remote *r, int v, uint32_t slots);
int ia_remote_push(struct ia_remote *r, const struct ia_job *j, int v, char *why, size_t whylen);
int ia_remote_unpush(struct ia_remote *r, int v, uint32_t id);
bool ia_remote_pushed(struct ia_remote *r, int v, uint32_t id);
/*
 * To call from ops->save: the table, for reconciling agents (a new session
 * releases and removes what its agent holds of jobs not in it).
 */
void ia_remote_saved(struct ia_remote *r, const struct ia_jobs *js);
/* Counters of a job (id) or of a port (ifindex) of switch v; zeros on failure. */
int ia_remote_counters(struct ia_remote *r, int v, uint32_t id, int ifindex,
		       struct ia_counters *c);
/*
 * Asks each switch the job j uses (all if j is NULL) for its hello, within
 * its bounds: finds routers that rebooted (their jobs are marked failed) or
 * are unreachable. Returns the number of switches not healthy.
 */
int ia_remote_probe(struct ia_remote *r, const struct ia_job *j);
/* Why job id failed, or NULL. */
const char *ia_remote_failed(const struct ia_remote *r, uint32_t id);
/* How job id came through a router's reboot, or NULL. */
const char *ia_remote_recovered(const struct ia_remote *r, uint32_t id);
/*
 * After switch v was connected again following its reboot: the jobs that
 * only pass it (red there: no head, no tail, nothing of theirs but
 * forwarding lost) pushed to it again; one whose push fails is failed.
 */
void ia_remote_repush(struct ia_remote *r, int v);
/* ---- FlexINA over the agents (remote_tail.c) ---- */

/* count head slots of INA job id lent to switch v's tail; taken back (count 0: all lent). */
int ia_remote_lend(struct ia_remote *r, int v, uint32_t id, uint32_t count, char *why,
		   size_t whylen);
/* The slots taken back, or -errno. */
int ia_remote_reclaim(struct ia_remote *r, int v, uint32_t id, uint32_t count, char *why,
		      size_t whylen);
/* Switch v's tail pool and directory published whole (ia_xdp_tail_set() there). */
int ia_remote_tail(struct ia_remote *r, int v, const struct ia_xdp_tail *t, char *why,
		   size_t whylen);

struct ia_remote_tail {
	struct ia_xdp_tail_info info;	/* as published and counted there */
	uint64_t live, stale;		/* partials held, of which stale (from probes slots) */
};

/*
 * What switch v's memory holds: the heads of jobs ids[0..n) (zeros where
 * one is not a head there) and its tail, probes of its slots read. 0 or
 * -errno (then all zeros).
 */
int ia_remote_memory(struct ia_remote *r, int v, const uint32_t *ids, int n, uint32_t probes,
		     struct ia_xdp_head_use *heads, struct ia_remote_tail *tail);

/* The routers of job j (all if NULL): [ia_link_json(), ...]. */
json_object *ia_remote_links_json(const struct ia_remote *r, const struct ia_job *j);

#endif
