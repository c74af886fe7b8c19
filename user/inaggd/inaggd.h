/* SPDX-License-Identifier: GPL-2.0 */
/*
 * inaggd's parts: the daemon (inaggd.c), its log (journal.c), the state file
 * (state.c), the network (switches.c), requests (requests.c).
 */
#ifndef INAGGD_H
#define INAGGD_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include <json-c/json.h>
#include <linux/types.h>

#include "ctl.h"
#include "job.h"
#include "job_lend.h"
#include "log.h"
#include "netbuild.h"
#include "remote.h"
#include "xdp.h"

/* journal.c: the daemon's log (level: the least important message written). */
void log_setup(enum ia_log_level level, bool journal);
bool log_journal(void);
void log_msg(enum ia_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The job transaction's and the lender's sink (log.h's ia_log_fn). */
void note(void *ctx, enum ia_log_level level, const char *msg);

struct port {
	int ifindex;
	unsigned char mac[6];
	unsigned char peer[6];	/* MAC at the other end of the veth */
};

struct swinfo {
	char ns[128];		/* namespace name, also the pin name of its maps */
	struct port up;
	struct port *down;	/* per child position */
	struct port *host;	/* per worker */
};

struct daemon {
	struct ia_topo *t;
	char tag[IA_NET_TAG_MAX + 1];
	char topo_path[PATH_MAX];
	const char *state_path;
	const char *sock_path;
	const char *group;	/* who besides root may use the socket (default inagg) */
	struct swinfo *sw;
	struct ia_xdp **xdp;	/* per switch: its maps, kept open (sw_xdp()) */
	long long *xdp_retry;	/* per switch: no open before then (s, monotonic) */
	char dest_ns[128];
	struct ia_jobs jobs;
	__u32 job_flags;	/* IA_JOB_F_* for every switch */
	int sample_ms;		/* memory statistics every this many ms; 0: none */
	struct memstat *mem;
	int lend_hold;		/* samples an INA head stays underused before it lends */
	struct ia_lender lend;
	struct ia_remote *remote;	/* the switches' agents (switches.c) */
	bool connected;		/* a switch connected since: its tail to publish */
};

/* switches.c: the real network behind the job transaction. */
int resolve_ports(struct daemon *d);
int init_ledgers(struct daemon *d, char *err, size_t errlen);
void port_counters(struct daemon *d, int v, int ifindex, struct ia_counters *c);
void job_counters(struct daemon *d, int v, __u32 id, struct ia_counters *c);
struct ia_xdp *sw_xdp(struct daemon *d, int v);
void sw_xdp_drop(struct daemon *d, int v);
extern const struct ia_job_ops switch_job_ops;

/* state.c: the state file, for the job transaction (save) and after a crash. */
int save_state(void *ctx, const struct ia_jobs *js);
int recover_state(struct daemon *d);

/* memory.c: sampled occupancy and utilisation of every switch's memory. */
int mem_init(struct daemon *d);
void mem_free(struct daemon *d);
/* Samples if due; returns ms until the next sample, -1 if none. */
long long mem_tick(struct daemon *d);
/* {"sample_ms", "samples", "switches": [...], "history" (the last history samples)}. */
json_object *mem_json(struct daemon *d, long long history);
/* Switch v's ledger figures as the daemon keeps them (heads, tail, lent). */
struct ia_ledger_cap;
void mem_ledger_figures(const struct daemon *d, int v, struct ia_ledger_cap *c);
/* The datapath's tail counters of c, by name, into o. */
void mem_tail_counters(const struct ia_counters *c, json_object *o);
/* Adds head, head_open, utilisation of job id at switch v to l. */
void mem_job_link(struct daemon *d, __u32 id, int v, json_object *l);

/* lend.c: the lend / reclaim policy's operations (job_lend.h). */
int lend_init(struct daemon *d);
void lend_reset(struct daemon *d);
void lend_end(struct daemon *d, uint32_t id);
void lend_forget(struct daemon *d, uint32_t id);

/* netlock.c: one daemon per network, by a lock file of IA_RUN_DIR. */
/* The network's lock, held until exit (its file removed then); fd or -errno. */
int claim_network(const char *tag, char *err, size_t errlen);
/* Removes the lock files earlier daemons of networks not up left behind. */
void drop_stale_locks(void);
/* Removes the agents' records (agent-NS.json) of namespaces that are gone. */
void drop_stale_records(void);

/* server.c: the control socket */
int listen_on(const char *path, const char *group);
/* Whether a process listens on path (a live daemon's socket, not a stale file). */
bool socket_in_use(const char *path);
int serve(struct daemon *d, int lfd, int sfd);

/* stats.c: the replies of "stats", without a job and for job j (req: chunks, history). */
json_object *stats_links(struct daemon *d, json_object *req);
json_object *stats_job(struct daemon *d, const struct ia_job *j, json_object *req);

/* requests.c */
/* A request of uid (the peer's): root may do anything, others their own jobs. */
json_object *handle(struct daemon *d, json_object *req, uid_t uid);
/*
 * Whether req may be served while another request's call waits for a
 * router: it makes no call to a switch that call uses, and touches no job
 * that request works on (docs/remote.md). Otherwise it waits its turn.
 */
bool meanwhile_ok(struct daemon *d, json_object *req);
/* The daemon's refusals name no errno. */
#define error_reply(...) ia_ctl_err(0, __VA_ARGS__)

#endif
