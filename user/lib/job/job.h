/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The job transaction of one network, independent of where ledgers and
 * switches live (inaggd gives it the real ones, tests give it fakes):
 *
 *   submit:  an INA job: placement on the switches with room for its head
 *            -> admission of the head on every blue switch, all or nothing
 *            (a refusal releases the others and the job is placed again
 *            without the refusing switch); a PS job: no blue switch, and
 *            admission without a head on the switches of its paths that
 *            have room for one more job (its tails there), best effort;
 *            class auto is INA if a head could be admitted somewhere, else
 *            PS -> plan -> push to every switch on the job's paths (a
 *            failure undoes all);
 *   end:     recorded as ending, configuration removed, admissions released;
 *   recover: from the saved records, jobs caught half-way (admitting,
 *            configuring, ending) are rolled back; active ones have missing
 *            admissions and pushes restored.
 *
 * The table is saved (ops->save) before each step that changes a ledger or
 * a switch, so a crash at any point leaves a record that recovery can act on.
 */
#ifndef INAGG_JOB_H
#define INAGG_JOB_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <json-c/json.h>

#include "cc.h"
#include "err.h"
#include "log.h"
#include "plan.h"
#include "topo.h"

#define IA_JOB_WINDOW_DEFAULT 128

enum ia_job_state { IA_JOB_ADMITTING, IA_JOB_CONFIGURING, IA_JOB_ACTIVE, IA_JOB_ENDING };

/*
 * Where a job aggregates (docs/memory.md). INA: a head of its own on its
 * blue switches; PS: no head, best effort in the tails of the switches on
 * its paths, the rest at its parameter server; AUTO, a request only: INA if
 * SMC's placement can be admitted with the memory left, else PS (selective
 * INA). A job of algorithm all-red is PS without tails: no switch
 * aggregates it (the reference). The values of INA and PS are the ledger's
 * (enum inagg_job_class).
 */
enum ia_job_class { IA_JOB_INA = 1, IA_JOB_PS = 2, IA_JOB_AUTO = 3 };

struct ia_job {
	uint32_t id;
	int k;
	enum ia_algo algo;
	enum ia_job_class class;	/* INA or PS */
	uint32_t head;			/* INA: slots of its head on each blue switch; PS: 0 */
	uint32_t window;		/* chunks in flight x 2 (see ia_job_worker_window()) */
	uint32_t live_window;		/* INA: chunks its senders keep in flight now, as they
					 * report it (0: the worker window); lends follow it */
	enum ia_cc_policy cc;		/* its workers' window policy (cc.h, docs/cc.md) */
	enum ia_job_state state;
	uint32_t *load;			/* workers used per switch */
	bool *blue;			/* INA: where its heads are */
	bool *held;			/* switches whose ledger admitted it: INA blue, PS tails */
	struct ia_placement model;
	struct ia_plan plan;		/* built from CONFIGURING on */
	time_t created;
	uint32_t owner;			/* uid of who submitted it (inaggd: SO_PEERCRED); 0: root */
};

struct ia_jobs;

/* What the transaction needs from the world. ctx is ia_jobs.ctx. */
struct ia_job_ops {
	/*
	 * Ledger of switch v: class INA or PS, slots the head (0 for PS). why
	 * gets the ledger's reason on failure.
	 */
	int (*admit)(void *ctx, int v, uint32_t id, enum ia_job_class class, uint32_t slots,
		     char *why, size_t whylen);
	int (*release)(void *ctx, int v, uint32_t id, char *why, size_t whylen);
	/* 0 if admitted, -ENOENT if not, another -errno if unknown. */
	int (*admitted)(void *ctx, int v, uint32_t id);
	/* Room for one more job with a head of slots (0: a PS job). */
	bool (*has_room)(void *ctx, int v, uint32_t slots);
	/* Switch v's maps. */
	int (*push)(void *ctx, const struct ia_job *j, int v, char *why, size_t whylen);
	int (*unpush)(void *ctx, int v, uint32_t id);
	bool (*pushed)(void *ctx, int v, uint32_t id);
	/* Persists the table (ia_jobs_to_json()); a failure before admission refuses the job. */
	int (*save)(void *ctx, const struct ia_jobs *js);
	/* Optional: what happened, for the log (NULL: the print hook, log.h). */
	ia_log_fn note;
};

struct ia_jobs {
	const struct ia_topo *t;
	const struct ia_job_ops *ops;
	void *ctx;
	struct ia_job *jobs;		/* IA_MAX_JOBS of room */
	int njobs;
};

struct ia_job_request {
	uint32_t id;			/* 0: the smallest free id */
	int k;				/* switches that may aggregate */
	enum ia_algo algo;
	enum ia_job_class class;	/* 0: IA_JOB_AUTO */
	uint32_t head;			/* INA: head slots; 0: the window */
	uint32_t window;		/* 0: the head if given, else IA_JOB_WINDOW_DEFAULT */
	enum ia_cc_policy cc;		/* its workers' window policy; 0: fixed */
	const uint32_t *load;		/* workers per switch; NULL: all of the topology's */
	bool no_tail;			/* a PS job: no tails, its messages pass every switch */
	uint32_t owner;			/* uid the job belongs to */
};

/* One admission refusal of a submission: the switch and the ledger's reason. */
struct ia_job_refusal {
	int sw;
	char why[IA_ERRLEN];
};

int ia_jobs_init(struct ia_jobs *js, const struct ia_topo *t, const struct ia_job_ops *ops,
		 void *ctx);
void ia_jobs_free(struct ia_jobs *js);
struct ia_job *ia_jobs_find(struct ia_jobs *js, uint32_t id);

/*
 * Runs the whole transaction. refused (room for 2 * t->n: an automatic job
 * may be refused a head and then a tail on every switch) gets each admission
 * refusal, *nrefused their count. On success *out points into js->jobs.
 * On failure nothing is left admitted or pushed and err says why.
 */
int ia_jobs_submit(struct ia_jobs *js, const struct ia_job_request *rq, struct ia_job **out,
		   struct ia_job_refusal *refused, int *nrefused, char *err, size_t errlen);
int ia_jobs_end(struct ia_jobs *js, uint32_t id, char *err, size_t errlen);
/*
 * Rebuilds the table from a saved one (ia_jobs_to_json()) against the world:
 * what was not active is rolled back, what was is repaired. *repairs counts
 * admissions and pushes restored. Saves the result.
 */
int ia_jobs_recover(struct ia_jobs *js, json_object *saved, int *repairs, char *err,
		    size_t errlen);

/*
 * Workers keep at most half the slots in flight: a slot is then reused only
 * once every worker has the result of its previous chunk, so a
 * retransmission never finds its chunk's slot taken by a later one.
 */
static inline uint32_t ia_job_worker_window(uint32_t window)
{
	return window > 1 ? window / 2 : 1;
}

const char *ia_job_state_name(enum ia_job_state s);
/* "ina", "ps", "auto"; parse: the class, or -EINVAL. */
const char *ia_job_class_name(enum ia_job_class c);
int ia_job_class_parse(const char *s);
/*
 * The job's record: id, state, class, head, algorithm, k, window, worker
 * window, cc (its workers' window policy), blue (= heads), tails, workers.
 */
json_object *ia_job_to_json(const struct ia_jobs *js, const struct ia_job *j);
/* {"jobs": [records]}: what ops->save persists. */
json_object *ia_jobs_to_json(const struct ia_jobs *js);

/*
 * A PS job's member sets (job_tail.c, docs/memory.md): its workers have
 * ranks 0..IA_MAX_RANKS-1 in topology order; a tail switch's set is every
 * rank below it. ia_job_tail_at(): the job aggregates in v's tail (admitted
 * there, at most IA_MAX_RANKS workers). ia_job_tail_members(): the senders
 * switch v (v < 0: the destination) accepts, each with its set: every
 * worker below it and every tail switch below it; room for the job's
 * workers plus t->n; -EINVAL for an INA job or one with too many workers.
 */
bool ia_job_tail_at(const struct ia_topo *t, const struct ia_job *j, int v);
int ia_job_rank(const struct ia_topo *t, const struct ia_job *j, int v, uint32_t w);
uint64_t ia_job_tail_set(const struct ia_topo *t, const struct ia_job *j, int v);
int ia_job_tail_members(const struct ia_topo *t, const struct ia_job *j, int v,
			struct ia_sender *m, uint64_t *sets, uint32_t *n);

/*
 * Internal, for job.c and job_json.c: a job's arrays for n switches (freed
 * with ia_job_free(), which also clears it), and a saved record read back
 * into j: -EINVAL without an id (unusable); any other failure leaves what is
 * needed to roll it back (id, the switches it may hold, load).
 */
int ia_job_alloc(struct ia_job *j, int n);
void ia_job_free(struct ia_job *j);
int ia_job_from_json(const struct ia_topo *t, json_object *o, struct ia_job *j);

#endif
