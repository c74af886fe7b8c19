// SPDX-License-Identifier: GPL-2.0
/*
 * The job transaction (user/lib/job.c) against a fake network: ledgers and
 * switch maps in memory, a state "file" kept as the last saved JSON, and a
 * crash that freezes the world after a chosen number of changes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include <inagg/maps.h>

#include "cc_job.h"
#include "job.h"

#define NSW 7
#define MAXE 32

/* Fig. 1 of the paper, every switch able to take two jobs. */
static const char fig1[] = "{\"switches\": ["
	"{\"name\": \"s0\", \"parent\": null, \"rate\": 1, \"load\": 0, \"capacity\": 2},"
	"{\"name\": \"s1\", \"parent\": \"s0\", \"rate\": 1, \"load\": 0, \"capacity\": 2},"
	"{\"name\": \"s2\", \"parent\": \"s0\", \"rate\": 1, \"load\": 0, \"capacity\": 2},"
	"{\"name\": \"s3\", \"parent\": \"s1\", \"rate\": 1, \"load\": 2, \"capacity\": 2},"
	"{\"name\": \"s4\", \"parent\": \"s1\", \"rate\": 1, \"load\": 6, \"capacity\": 2},"
	"{\"name\": \"s5\", \"parent\": \"s2\", \"rate\": 1, \"load\": 5, \"capacity\": 2},"
	"{\"name\": \"s6\", \"parent\": \"s2\", \"rate\": 1, \"load\": 5, \"capacity\": 2}]}";

struct world {
	uint32_t admitted[NSW][MAXE];	/* job ids, 0 = free */
	uint32_t head[NSW][MAXE];	/* their heads (0: a PS job) */
	int class[NSW][MAXE];
	uint32_t pushed[NSW][MAXE];
	uint32_t max_jobs;
	uint32_t slots;			/* every switch's */
	int refuse_on;			/* its ledger refuses every admission */
	bool refuse_all;		/* every ledger does, while saying it has room */
	int push_fails_on;
	bool save_fails;
	int budget;			/* changes left before the crash; < 0: none */
	char *saved;			/* the state file */
	int changes;
};

static bool change(struct world *w)
{
	if (!w->budget)
		return false;	/* crashed: nothing happens any more */
	if (w->budget > 0)
		w->budget--;
	w->changes++;
	return true;
}

static int count(const uint32_t *set)
{
	int n = 0;

	for (int i = 0; i < MAXE; i++)
		n += set[i] != 0;
	return n;
}

static bool has(const uint32_t *set, uint32_t id)
{
	for (int i = 0; i < MAXE; i++)
		if (set[i] == id)
			return true;
	return false;
}

static int put(uint32_t *set, uint32_t id)
{
	if (has(set, id))
		return -EEXIST;
	for (int i = 0; i < MAXE; i++)
		if (!set[i]) {
			set[i] = id;
			return 0;
		}
	return -ENOSPC;
}

static int take(uint32_t *set, uint32_t id)
{
	for (int i = 0; i < MAXE; i++)
		if (set[i] == id) {
			set[i] = 0;
			return 0;
		}
	return -ENOENT;
}

static uint32_t heads(const struct world *w, int v)
{
	uint32_t n = 0;

	for (int i = 0; i < MAXE; i++)
		n += w->admitted[v][i] ? w->head[v][i] : 0;
	return n;
}

/* Where id is in switch v's ledger, -1 if not. */
static int entry(const struct world *w, int v, uint32_t id)
{
	for (int i = 0; i < MAXE; i++)
		if (w->admitted[v][i] == id)
			return i;
	return -1;
}

/* The ledger's rules: a PS job has no head, heads fit the slots, jobs the limit. */
static int f_admit(void *ctx, int v, uint32_t id, enum ia_job_class class, uint32_t slots,
		   char *why, size_t len)
{
	struct world *w = ctx;
	int ret;

	if (!change(w))
		return -EIO;
	if ((class == IA_JOB_PS) != !slots || (class != IA_JOB_PS && class != IA_JOB_INA))
		return ia_fail(why, len, -EINVAL, "class and head disagree");
	if (v == w->refuse_on || w->refuse_all || count(w->admitted[v]) >= (int)w->max_jobs)
		return ia_fail(why, len, -ENOSPC, "job limit reached");
	if (heads(w, v) + slots > w->slots)
		return ia_fail(why, len, -ENOSPC, "slot limit reached");
	ret = put(w->admitted[v], id);
	if (!ret) {
		w->head[v][entry(w, v, id)] = slots;
		w->class[v][entry(w, v, id)] = class;
	}
	return ret;
}

static int f_release(void *ctx, int v, uint32_t id, char *why, size_t len)
{
	struct world *w = ctx;

	return change(w) ? take(w->admitted[v], id) : -EIO;
}

static int f_admitted(void *ctx, int v, uint32_t id)
{
	return has(((struct world *)ctx)->admitted[v], id) ? 0 : -ENOENT;
}

static bool f_has_room(void *ctx, int v, uint32_t slots)
{
	struct world *w = ctx;

	return count(w->admitted[v]) < (int)w->max_jobs && heads(w, v) + slots <= w->slots;
}

static int f_push(void *ctx, const struct ia_job *j, int v, char *why, size_t len)
{
	struct world *w = ctx;

	if (!change(w))
		return -EIO;
	if (v == w->push_fails_on)
		return ia_fail(why, len, -ENODEV, "no XDP program");
	take(w->pushed[v], j->id);
	return put(w->pushed[v], j->id);
}

static int f_unpush(void *ctx, int v, uint32_t id)
{
	struct world *w = ctx;

	return change(w) ? take(w->pushed[v], id) : -EIO;
}

static bool f_pushed(void *ctx, int v, uint32_t id)
{
	return has(((struct world *)ctx)->pushed[v], id);
}

static int f_save(void *ctx, const struct ia_jobs *js)
{
	struct world *w = ctx;
	json_object *o;

	if (w->save_fails)
		return -EIO;
	if (!change(w))
		return 0;	/* the crash came first: the file keeps what it had */
	o = ia_jobs_to_json(js);
	free(w->saved);
	w->saved = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return 0;
}

static const struct ia_job_ops fake_ops = {
	.admit = f_admit,	.release = f_release, .admitted = f_admitted,
	.has_room = f_has_room, .push = f_push,	      .unpush = f_unpush,
	.pushed = f_pushed,	.save = f_save,
};

FIXTURE(job)
{
	struct ia_topo *t;
	struct world w;
	struct ia_jobs js;
	struct ia_job_refusal refused[2 * NSW];
	int nrefused;
	char err[IA_ERRLEN];
};

FIXTURE_SETUP(job)
{
	ASSERT_EQ(0, ia_topo_parse(fig1, &self->t, self->err, sizeof(self->err)));
	ASSERT_EQ(NSW, self->t->n);
	self->w = (struct world){ .max_jobs = 2, .slots = 4096, .refuse_on = -1,
				  .push_fails_on = -1, .budget = -1 };
	ASSERT_EQ(0, ia_jobs_init(&self->js, self->t, &fake_ops, &self->w));
}

FIXTURE_TEARDOWN(job)
{
	ia_jobs_free(&self->js);
	ia_topo_free(self->t);
	free(self->w.saved);
}

static int submit(struct __test_metadata *_metadata, FIXTURE_DATA(job) *self, uint32_t id,
		  int k, struct ia_job **j)
{
	struct ia_job_request rq = { .id = id, .k = k, .algo = IA_ALGO_SMC, .window = 128 };

	return ia_jobs_submit(&self->js, &rq, j, self->refused, &self->nrefused, self->err,
			      sizeof(self->err));
}

/*
 * The job is admitted exactly where it is held, as its class with its head
 * (an INA job exactly on its blue switches, a PS job on its path only, never
 * with a head), and pushed exactly on its path.
 */
static bool in_place(const struct world *w, const struct ia_job *j)
{
	for (int v = 0; v < NSW; v++) {
		int e = entry(w, v, j->id);

		if ((e >= 0) != j->held[v] || has(w->pushed[v], j->id) != j->plan.sw[v].on_path)
			return false;
		if (j->class == IA_JOB_INA && j->held[v] != j->blue[v])
			return false;
		if (j->class == IA_JOB_PS && (j->blue[v] || (j->held[v] && !j->plan.sw[v].on_path)))
			return false;
		if (e >= 0 && (w->class[v][e] != (int)j->class || w->head[v][e] != j->head))
			return false;
	}
	return j->class == IA_JOB_INA ? j->head > 0 : j->class == IA_JOB_PS && !j->head;
}

static bool no_trace(const struct world *w, uint32_t id)
{
	for (int v = 0; v < NSW; v++)
		if (has(w->admitted[v], id) || has(w->pushed[v], id))
			return false;
	return true;
}

static bool no_trace_in_ledgers(const struct world *w, uint32_t id)
{
	for (int v = 0; v < NSW; v++)
		if (has(w->admitted[v], id))
			return false;
	return true;
}

static struct ia_jobs *restart(struct __test_metadata *_metadata, FIXTURE_DATA(job) *self);
static void check_recovered(struct __test_metadata *_metadata, FIXTURE_DATA(job) *self,
			    struct ia_jobs *js, int step);
static void rewind_to(struct __test_metadata *_metadata, FIXTURE_DATA(job) *self,
		      struct ia_jobs *js, const struct world *before);

static int nblue(const struct ia_job *j)
{
	int n = 0;

	for (int v = 0; v < NSW; v++)
		n += j->blue[v];
	return n;
}

TEST_F(job, submit_admits_blue_and_pushes_path)
{
	struct ia_job *j;

	ASSERT_EQ(0, submit(_metadata, self, 0, 2, &j));
	EXPECT_EQ(1u, j->id);
	EXPECT_EQ((int)IA_JOB_ACTIVE, (int)j->state);
	EXPECT_EQ(2, nblue(j));
	EXPECT_EQ(0, self->nrefused);
	EXPECT_TRUE(in_place(&self->w, j));
	EXPECT_NE(NULL, strstr(self->w.saved, "\"active\""));
	/* The worker window rule comes with the record. */
	EXPECT_NE(NULL, strstr(self->w.saved, "\"worker_window\":64"));
	EXPECT_EQ(64u, ia_job_worker_window(128));
	EXPECT_EQ(1u, ia_job_worker_window(1));
	EXPECT_EQ(1u, ia_job_worker_window(2));
}

TEST_F(job, refusal_rolls_back_and_places_without_the_switch)
{
	struct ia_job *j;
	int refusing = -1;

	/* Find where the job goes, end it, then make the last of its blue switches refuse. */
	ASSERT_EQ(0, submit(_metadata, self, 0, 2, &j));
	for (int v = 0; v < NSW; v++)
		if (j->blue[v])
			refusing = v;
	ASSERT_EQ(0, ia_jobs_end(&self->js, j->id, self->err, sizeof(self->err)));
	self->w.refuse_on = refusing;

	ASSERT_EQ(0, submit(_metadata, self, 0, 2, &j));
	ASSERT_EQ(1, self->nrefused);
	EXPECT_EQ(refusing, self->refused[0].sw);
	EXPECT_STREQ("job limit reached", self->refused[0].why);
	/* Placed again without it, and still with k switches. */
	EXPECT_FALSE(j->blue[refusing]);
	EXPECT_EQ(2, nblue(j));
	/* The admissions of the refused attempt were undone where the new one is not blue. */
	EXPECT_TRUE(in_place(&self->w, j));
}

TEST_F(job, refused_everywhere_runs_all_red)
{
	struct ia_job *j;

	self->w.max_jobs = 0;
	ASSERT_EQ(0, submit(_metadata, self, 0, 3, &j));
	EXPECT_EQ(0, nblue(j));
	/* Automatic: no head anywhere, so a PS job, whose tails were refused too. */
	EXPECT_EQ((int)IA_JOB_PS, (int)j->class);
	EXPECT_TRUE(in_place(&self->w, j));
	EXPECT_TRUE(no_trace_in_ledgers(&self->w, j->id));
	EXPECT_NE(NULL, strstr(self->w.saved, "\"class\":\"ps\""));
}

static int submit_class(FIXTURE_DATA(job) *self, uint32_t id, int k, enum ia_job_class class,
			uint32_t head, struct ia_job **j)
{
	struct ia_job_request rq = { .id = id, .k = k, .algo = IA_ALGO_SMC, .class = class,
				     .head = head };

	return ia_jobs_submit(&self->js, &rq, j, self->refused, &self->nrefused, self->err,
			      sizeof(self->err));
}

/* An automatic job with room is INA: its head on its blue switches, the head its window. */
TEST_F(job, auto_with_memory_is_ina)
{
	struct ia_job *j;

	ASSERT_EQ(0, submit_class(self, 0, 2, IA_JOB_AUTO, 200, &j));
	EXPECT_EQ((int)IA_JOB_INA, (int)j->class);
	EXPECT_EQ(200u, j->head);
	EXPECT_EQ(200u, j->window);	/* no window given: the head's */
	EXPECT_EQ(2, nblue(j));
	EXPECT_TRUE(in_place(&self->w, j));
	EXPECT_NE(NULL, strstr(self->w.saved, "\"class\":\"ina\",\"head\":200"));
}

/* Memory for half the demand: the first head fits, an INA job then fails, auto runs PS. */
TEST_F(job, memory_decides_ina_ps_and_auto)
{
	struct ia_job *a, *b;
	int changes;

	self->w.slots = 300;
	ASSERT_EQ(0, submit_class(self, 0, 7, IA_JOB_INA, 200, &a));
	EXPECT_EQ((int)IA_JOB_INA, (int)a->class);
	/* Every switch a could use is taken: s0..s2 pass, s3..s6 aggregate. */
	changes = self->w.changes;
	EXPECT_EQ(-ENOSPC, submit_class(self, 0, 7, IA_JOB_INA, 200, &b));
	EXPECT_NE(NULL, strstr(self->err, "no switch could admit a head of 200"));
	EXPECT_EQ(NULL, b);
	EXPECT_TRUE(no_trace(&self->w, 2));
	EXPECT_EQ(1, self->js.njobs);
	EXPECT_LT(changes, self->w.changes);	/* it was tried, and undone */
	/* Where a took no memory, b's head fits: only the switches a left blue-free. */
	for (int v = 0; v < NSW; v++)
		EXPECT_LE(heads(&self->w, v), 300u);
	ASSERT_EQ(0, submit_class(self, 0, 7, IA_JOB_AUTO, 200, &b));
	if (b->class == IA_JOB_INA) {
		for (int v = 0; v < NSW; v++)
			EXPECT_FALSE(a->blue[v] && b->blue[v]);
	}
	EXPECT_TRUE(in_place(&self->w, b));
	for (int v = 0; v < NSW; v++)
		EXPECT_LE(heads(&self->w, v), 300u);
}

/* A PS job never holds head memory: admitted without a head on its path, never blue. */
TEST_F(job, ps_holds_no_head_and_its_tails_are_its_path)
{
	struct ia_job *j;
	int held = 0;

	ASSERT_EQ(0, submit_class(self, 0, 7, IA_JOB_PS, 0, &j));
	EXPECT_EQ((int)IA_JOB_PS, (int)j->class);
	EXPECT_EQ(0u, j->head);
	EXPECT_EQ((uint32_t)IA_JOB_WINDOW_DEFAULT, j->window);
	EXPECT_EQ(0, nblue(j));
	for (int v = 0; v < NSW; v++) {
		EXPECT_EQ(j->plan.sw[v].on_path, j->held[v]);
		EXPECT_EQ(0u, heads(&self->w, v));
		held += j->held[v];
	}
	EXPECT_EQ(NSW, held);	/* every switch carries some of Fig. 1's workers */
	EXPECT_TRUE(in_place(&self->w, j));
	/* A full ledger leaves only that tail out. */
	ASSERT_EQ(0, ia_jobs_end(&self->js, 1, self->err, sizeof(self->err)));
	EXPECT_TRUE(no_trace(&self->w, 1));
	self->w.refuse_on = 4;
	ASSERT_EQ(0, submit_class(self, 0, 7, IA_JOB_PS, 0, &j));
	EXPECT_EQ(1, self->nrefused);
	EXPECT_EQ(4, self->refused[0].sw);
	EXPECT_FALSE(j->held[4]);
	EXPECT_TRUE(j->plan.sw[4].on_path);
	EXPECT_TRUE(in_place(&self->w, j));
	/* Its record says where it aggregates. */
	EXPECT_NE(NULL, strstr(self->w.saved, "\"tails\":[\"s0\",\"s1\",\"s2\",\"s3\","
				 "\"s5\",\"s6\"]"));
}

/*
 * A PS job submitted without tails (NetPack's selective INA, "tail": 0 to
 * inaggd): admitted nowhere, pushed on its whole path (its messages pass
 * every switch to the PS), no tail in its record; the same for an automatic
 * job that finds no room for a head.
 */
TEST_F(job, ps_without_tails_holds_no_memory)
{
	struct ia_job_request rq = { .k = 7, .algo = IA_ALGO_SMC, .class = IA_JOB_PS,
				     .no_tail = true };
	struct ia_job *j;

	ASSERT_EQ(0, ia_jobs_submit(&self->js, &rq, &j, self->refused, &self->nrefused,
				    self->err, sizeof(self->err)));
	EXPECT_EQ((int)IA_JOB_PS, (int)j->class);
	EXPECT_EQ(0, self->nrefused);
	for (int v = 0; v < NSW; v++) {
		EXPECT_FALSE(j->held[v]);
		EXPECT_FALSE(has(self->w.admitted[v], j->id));
		EXPECT_EQ(j->plan.sw[v].on_path, has(self->w.pushed[v], j->id));
	}
	EXPECT_TRUE(in_place(&self->w, j));
	EXPECT_NE(NULL, strstr(self->w.saved, "\"tails\":[]"));
	ASSERT_EQ(0, ia_jobs_end(&self->js, j->id, self->err, sizeof(self->err)));
	EXPECT_TRUE(no_trace(&self->w, 1));
}

/*
 * All-red, the reference without in-network aggregation: a PS job that no
 * switch aggregates, in no ledger, red on its whole path, whatever its class
 * (ina refused); a job that is PS by class or memory keeps its tails.
 */
TEST_F(job, all_red_holds_no_tail)
{
	static const enum ia_job_class classes[] = { 0, IA_JOB_AUTO, IA_JOB_PS };
	struct ia_job_request rq = { .k = 2, .algo = IA_ALGO_ALL_RED };
	struct ia_job *j;
	int held = 0;

	for (size_t c = 0; c < sizeof(classes) / sizeof(classes[0]); c++) {
		rq.class = classes[c];
		ASSERT_EQ(0, ia_jobs_submit(&self->js, &rq, &j, self->refused, &self->nrefused,
					    self->err, sizeof(self->err)));
		EXPECT_EQ((int)IA_JOB_PS, (int)j->class);
		EXPECT_EQ(0, nblue(j));
		EXPECT_EQ(0, self->nrefused);
		for (int v = 0; v < NSW; v++) {
			EXPECT_FALSE(j->held[v]) TH_LOG("class %d: a tail on s%d", classes[c], v);
			EXPECT_FALSE(ia_job_tail_at(self->t, j, v));
			EXPECT_TRUE(has(self->w.pushed[v], j->id));	/* red on its path */
		}
		EXPECT_TRUE(in_place(&self->w, j));
		EXPECT_TRUE(no_trace_in_ledgers(&self->w, j->id));
		EXPECT_EQ(18, ia_ratio_double(j->model.congestion));
		EXPECT_NE(NULL, strstr(self->w.saved, "\"tails\":[]"));
		ASSERT_EQ(0, ia_jobs_end(&self->js, j->id, self->err, sizeof(self->err)));
	}
	rq.class = IA_JOB_INA;
	EXPECT_EQ(-EINVAL, ia_jobs_submit(&self->js, &rq, &j, self->refused, &self->nrefused,
					  self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "all-red aggregates nowhere"));
	EXPECT_EQ(0, self->js.njobs);
	/* PS for want of a budget (auto, k 0): its tails on its path. */
	rq = (struct ia_job_request){ .k = 0, .algo = IA_ALGO_SMC };
	ASSERT_EQ(0, ia_jobs_submit(&self->js, &rq, &j, self->refused, &self->nrefused, self->err,
				    sizeof(self->err)));
	EXPECT_EQ((int)IA_JOB_PS, (int)j->class);
	for (int v = 0; v < NSW; v++)
		held += j->held[v];
	EXPECT_EQ(NSW, held);
	EXPECT_TRUE(in_place(&self->w, j));
}

static int find_member(const struct ia_sender *m, uint32_t n, uint32_t id)
{
	for (uint32_t i = 0; i < n; i++)
		if (m[i].id == id)
			return i;
	return -1;
}

/*
 * A PS job's member sets (job_tail.c) on Fig. 1: ranks in topology order
 * (s3: 0-1, s4: 2-7, s5: 8-12, s6: 13-17); each switch accepts every worker
 * below it and every tail switch below it, a tail switch with the set of
 * ranks below it; a switch whose tail was refused (s2) is nobody's member
 * and has no tail, yet still accepts what passes it.
 */
TEST_F(job, ps_member_sets_follow_the_tails)
{
	struct ia_sender m[64];
	uint64_t sets[64];
	struct ia_job *j;
	uint32_t n;
	int i;

	self->w.refuse_on = 2;
	ASSERT_EQ(0, submit_class(self, 0, 7, IA_JOB_PS, 0, &j));
	EXPECT_EQ(18u, j->plan.nworkers);
	EXPECT_EQ(0, ia_job_rank(self->t, j, 3, 0));
	EXPECT_EQ(7, ia_job_rank(self->t, j, 4, 5));
	EXPECT_EQ(17, ia_job_rank(self->t, j, 6, 4));
	EXPECT_EQ(-1, ia_job_rank(self->t, j, 6, 5));
	EXPECT_EQ(0x3ull, ia_job_tail_set(self->t, j, 3));
	EXPECT_EQ(0xffull, ia_job_tail_set(self->t, j, 1));
	EXPECT_EQ(0x3ffffull, ia_job_tail_set(self->t, j, 0));
	EXPECT_TRUE(ia_job_tail_at(self->t, j, 1));
	EXPECT_FALSE(ia_job_tail_at(self->t, j, 2));
	/* s1: its 8 workers, s3 and s4. */
	ASSERT_EQ(0, ia_job_tail_members(self->t, j, 1, m, sets, &n));
	EXPECT_EQ(10u, n);
	i = find_member(m, n, ia_switch_id(3));
	ASSERT_LE(0, i);
	EXPECT_EQ(0x3ull, sets[i]);
	EXPECT_EQ(2u, m[i].nworkers);
	i = find_member(m, n, ia_worker_id(ia_net_worker_index(self->t, 4, 0)));
	ASSERT_LE(0, i);
	EXPECT_EQ(1ull << 2, sets[i]);
	EXPECT_EQ(1u, m[i].nworkers);
	/* s2 (red): its 10 workers, s5 and s6. */
	ASSERT_EQ(0, ia_job_tail_members(self->t, j, 2, m, sets, &n));
	EXPECT_EQ(12u, n);
	/* s0: 18 workers, s1, s3, s4, s5, s6 (not s2, which has no tail). */
	ASSERT_EQ(0, ia_job_tail_members(self->t, j, 0, m, sets, &n));
	EXPECT_EQ(23u, n);
	EXPECT_EQ(-1, find_member(m, n, ia_switch_id(2)));
	i = find_member(m, n, ia_switch_id(1));
	ASSERT_LE(0, i);
	EXPECT_EQ(8u, m[i].nworkers);
	/* The destination: every worker, every tail switch, s0 too. */
	ASSERT_EQ(0, ia_job_tail_members(self->t, j, -1, m, sets, &n));
	EXPECT_EQ(24u, n);
	i = find_member(m, n, ia_switch_id(0));
	ASSERT_LE(0, i);
	EXPECT_EQ(0x3ffffull, sets[i]);
	EXPECT_EQ(18u, m[i].nworkers);
	/* Every set is its nworkers' popcount, as the loader checks. */
	for (uint32_t k = 0; k < n; k++)
		EXPECT_EQ(m[k].nworkers, (uint32_t)__builtin_popcountll(sets[k]));
	/* An INA job has no sets. */
	ASSERT_EQ(0, ia_jobs_end(&self->js, 1, self->err, sizeof(self->err)));
	self->w.refuse_on = -1;
	ASSERT_EQ(0, submit(_metadata, self, 0, 2, &j));
	EXPECT_EQ(-EINVAL, ia_job_tail_members(self->t, j, 0, m, sets, &n));
	EXPECT_FALSE(ia_job_tail_at(self->t, j, 0));
}

/*
 * Ledgers that say they have room and refuse everything: an automatic job is
 * refused a head on every switch it was placed on, then a tail on every
 * switch of its path, and each refusal is reported (more than one per switch).
 */
TEST_F(job, auto_refused_heads_then_tails_all_reported)
{
	struct ia_job *j;
	int heads = 0, tails = 0;

	self->w.refuse_all = true;
	ASSERT_EQ(0, submit_class(self, 0, 7, IA_JOB_AUTO, 0, &j));
	EXPECT_EQ((int)IA_JOB_PS, (int)j->class);
	ASSERT_GE(2 * NSW, self->nrefused);
	for (int i = 0; i < self->nrefused; i++) {
		/* Heads first (placed again each time without the refusing switch), then tails. */
		if (i < self->nrefused - NSW)
			heads++;
		else
			tails += self->refused[i].sw == i - (self->nrefused - NSW);
	}
	EXPECT_LT(NSW, self->nrefused);
	EXPECT_LT(0, heads);
	EXPECT_EQ(NSW, tails);
	EXPECT_TRUE(in_place(&self->w, j));
	EXPECT_TRUE(no_trace_in_ledgers(&self->w, j->id));
}

/* A PS job's failed push undoes its tails too. */
TEST_F(job, ps_push_failure_rolls_back)
{
	struct ia_job *j;

	self->w.push_fails_on = 2;
	EXPECT_EQ(-ENODEV, submit_class(self, 0, 3, IA_JOB_PS, 0, &j));
	EXPECT_TRUE(no_trace(&self->w, 1));
	EXPECT_EQ(0, self->js.njobs);
}

/* A PS job whose admissions vanished is repaired as a PS job, and ended cleanly after. */
TEST_F(job, recovery_repairs_a_ps_job)
{
	struct ia_jobs *js;
	struct ia_job *j;

	ASSERT_EQ(0, submit_class(self, 0, 3, IA_JOB_PS, 0, &j));
	memset(self->w.admitted, 0, sizeof(self->w.admitted));
	js = restart(_metadata, self);
	ASSERT_EQ(1, js->njobs);
	EXPECT_EQ((int)IA_JOB_PS, (int)js->jobs[0].class);
	EXPECT_TRUE(in_place(&self->w, &js->jobs[0]));
	EXPECT_EQ(0, ia_jobs_end(js, 1, self->err, sizeof(self->err)));
	EXPECT_TRUE(no_trace(&self->w, 1));
	ia_jobs_free(js);
	free(js);
}

TEST_F(job, full_ledgers_are_not_placed_on)
{
	struct ia_job *a, *b, *c;

	self->w.max_jobs = 1;
	ASSERT_EQ(0, submit(_metadata, self, 0, 2, &a));
	ASSERT_EQ(0, submit(_metadata, self, 0, 2, &b));
	a = ia_jobs_find(&self->js, 1);
	for (int v = 0; v < NSW; v++)
		EXPECT_FALSE(a->blue[v] && b->blue[v]);
	EXPECT_EQ(0, self->nrefused);	/* never tried: no room was seen before placing */
	ASSERT_EQ(0, submit(_metadata, self, 0, 7, &c));
	for (int v = 0; v < NSW; v++)
		EXPECT_LE(count(self->w.admitted[v]), 1);
}

TEST_F(job, push_failure_rolls_back_everything)
{
	struct ia_job *j;
	int on_path = -1;

	ASSERT_EQ(0, submit(_metadata, self, 0, 2, &j));
	for (int v = 0; v < NSW; v++)
		if (j->plan.sw[v].on_path && !j->blue[v])
			on_path = v;
	ASSERT_EQ(0, ia_jobs_end(&self->js, j->id, self->err, sizeof(self->err)));
	self->w.push_fails_on = on_path;

	ASSERT_EQ(-ENODEV, submit(_metadata, self, 5, 2, &j));
	EXPECT_EQ(NULL, j);
	EXPECT_NE(NULL, strstr(self->err, "no XDP program"));
	EXPECT_TRUE(no_trace(&self->w, 5));
	EXPECT_EQ(0, self->js.njobs);
	EXPECT_EQ(NULL, strstr(self->w.saved, "\"job\":5"));
}

TEST_F(job, state_file_failure_refuses_before_any_admission)
{
	struct ia_job *j;

	self->w.save_fails = true;
	ASSERT_EQ(-EIO, submit(_metadata, self, 0, 2, &j));
	EXPECT_STREQ("state: Input/output error", self->err);
	EXPECT_TRUE(no_trace(&self->w, 1));
	EXPECT_EQ(0, self->js.njobs);
}

/* An end whose saves fail still tears the job down, and says why once. */
TEST_F(job, state_file_failure_on_end_still_ends)
{
	struct ia_job *j;

	ASSERT_EQ(0, submit(_metadata, self, 0, 2, &j));
	self->w.save_fails = true;
	EXPECT_EQ(-EIO, ia_jobs_end(&self->js, 1, self->err, sizeof(self->err)));
	EXPECT_STREQ("state: Input/output error", self->err);
	EXPECT_TRUE(no_trace(&self->w, 1));
	EXPECT_EQ(0, self->js.njobs);
}

TEST_F(job, end_releases_everywhere)
{
	struct ia_job *a, *b;

	ASSERT_EQ(0, submit(_metadata, self, 0, 2, &a));
	ASSERT_EQ(0, submit(_metadata, self, 0, 3, &b));
	ASSERT_EQ(2u, b->id);
	ASSERT_EQ(0, ia_jobs_end(&self->js, 1, self->err, sizeof(self->err)));
	EXPECT_TRUE(no_trace(&self->w, 1));
	EXPECT_TRUE(in_place(&self->w, ia_jobs_find(&self->js, 2)));
	EXPECT_EQ(-ENOENT, ia_jobs_end(&self->js, 1, self->err, sizeof(self->err)));
	EXPECT_STREQ("no job 1", self->err);
}

TEST_F(job, bad_requests_change_nothing)
{
	struct ia_job_request rq = { .k = 2, .algo = IA_ALGO_BRUTE, .window = 128 };
	uint32_t load[NSW] = { 0, 0, 0, 3, 0, 0, 0 };	/* s3 has 2 */
	struct ia_job *j;
	int changes;

	EXPECT_EQ(-EINVAL, ia_jobs_submit(&self->js, &rq, &j, self->refused, &self->nrefused,
					  self->err, sizeof(self->err)));
	rq.algo = IA_ALGO_SMC;
	rq.window = IA_MAX_WINDOW + 1;
	EXPECT_EQ(-ERANGE, ia_jobs_submit(&self->js, &rq, &j, self->refused, &self->nrefused,
					  self->err, sizeof(self->err)));
	rq.window = 128;
	rq.head = IA_MAX_WINDOW + 1;
	EXPECT_EQ(-ERANGE, ia_jobs_submit(&self->js, &rq, &j, self->refused, &self->nrefused,
					  self->err, sizeof(self->err)));
	rq.head = 64;	/* a window above the head: chunks in flight would share slots */
	EXPECT_EQ(-EINVAL, ia_jobs_submit(&self->js, &rq, &j, self->refused, &self->nrefused,
					  self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "above the head"));
	rq.head = 128;
	rq.class = IA_JOB_PS;	/* a PS job with a head */
	EXPECT_EQ(-EINVAL, ia_jobs_submit(&self->js, &rq, &j, self->refused, &self->nrefused,
					  self->err, sizeof(self->err)));
	rq.head = 0;
	rq.class = 7;
	EXPECT_EQ(-EINVAL, ia_jobs_submit(&self->js, &rq, &j, self->refused, &self->nrefused,
					  self->err, sizeof(self->err)));
	rq.class = IA_JOB_INA;
	rq.cc = IA_CC__COUNT;	/* no such window policy */
	EXPECT_EQ(-EINVAL, ia_jobs_submit(&self->js, &rq, &j, self->refused, &self->nrefused,
					  self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "cc: fixed, atp, a2tp or flexina"));
	rq.cc = IA_CC_FIXED;
	rq.k = 0;	/* INA without switches to be blue on */
	EXPECT_EQ(-EINVAL, ia_jobs_submit(&self->js, &rq, &j, self->refused, &self->nrefused,
					  self->err, sizeof(self->err)));
	rq.k = 2;
	rq.class = 0;
	rq.load = load;
	EXPECT_EQ(-ERANGE, ia_jobs_submit(&self->js, &rq, &j, self->refused, &self->nrefused,
					  self->err, sizeof(self->err)));
	load[3] = 0;	/* no worker at all: a job nothing would ever run */
	EXPECT_EQ(-EINVAL, ia_jobs_submit(&self->js, &rq, &j, self->refused, &self->nrefused,
					  self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "workers: none takes part"));
	rq.class = IA_JOB_PS;
	EXPECT_EQ(-EINVAL, ia_jobs_submit(&self->js, &rq, &j, self->refused, &self->nrefused,
					  self->err, sizeof(self->err)));
	rq.class = 0;
	EXPECT_EQ(0, self->js.njobs);
	EXPECT_EQ(0, self->w.changes);
	ASSERT_EQ(0, submit(_metadata, self, 9, 2, &j));
	changes = self->w.changes;
	EXPECT_EQ(-EEXIST, submit(_metadata, self, 9, 2, &j));
	EXPECT_EQ(changes, self->w.changes);
	EXPECT_EQ(1, self->js.njobs);
}

/* Recovers a fresh table from the world and the state file as the crash left them. */
static struct ia_jobs *restart(struct __test_metadata *_metadata, FIXTURE_DATA(job) *self)
{
	struct ia_jobs *js = calloc(1, sizeof(*js));
	json_object *saved;
	int repairs;

	self->w.budget = -1;
	EXPECT_EQ(0, ia_jobs_init(js, self->t, &fake_ops, &self->w));
	saved = json_tokener_parse(self->w.saved ? self->w.saved : "{\"jobs\": []}");
	EXPECT_EQ(0, ia_jobs_recover(js, saved, &repairs, self->err, sizeof(self->err)));
	json_object_put(saved);
	return js;
}

/*
 * After the crash at one step recovered as js: back to the world of before
 * (whose saved state the caller copied), as a restart finds it.
 */
static void rewind_to(struct __test_metadata *_metadata, FIXTURE_DATA(job) *self,
		      struct ia_jobs *js, const struct world *before)
{
	ia_jobs_free(js);
	free(js);
	ia_jobs_free(&self->js);
	free(self->w.saved);
	self->w = *before;
	js = restart(_metadata, self);
	self->js = *js;
	free(js);
}

/* After recovery job 1 (active before) is whole; job 2 is whole and active, or gone. */
static void check_recovered(struct __test_metadata *_metadata, FIXTURE_DATA(job) *self,
			    struct ia_jobs *js, int step)
{
	struct ia_job *a = ia_jobs_find(js, 1), *b = ia_jobs_find(js, 2);

	ASSERT_NE(NULL, a) TH_LOG("step %d: job 1 lost", step);
	EXPECT_EQ((int)IA_JOB_ACTIVE, (int)a->state);
	EXPECT_TRUE(in_place(&self->w, a)) TH_LOG("step %d: job 1 not in place", step);
	if (b) {
		EXPECT_EQ((int)IA_JOB_ACTIVE, (int)b->state);
		EXPECT_TRUE(in_place(&self->w, b)) TH_LOG("step %d: job 2 half there", step);
	} else {
		EXPECT_TRUE(no_trace(&self->w, 2)) TH_LOG("step %d: job 2 left traces", step);
	}
	for (int v = 0; v < NSW; v++)
		EXPECT_LE(count(self->w.admitted[v]), 2);
}

/* A crash after every number of changes of a submission (with a refusal) and of an end. */
TEST_F(job, recovery_from_every_intermediate_state)
{
	int total_submit, total_end, refusing = -1;
	struct ia_job *j;

	/* A dry run: how many changes a submission and an end make. */
	ASSERT_EQ(0, submit(_metadata, self, 1, 2, &j));
	ASSERT_EQ(0, submit(_metadata, self, 2, 3, &j));
	for (int v = 0; v < NSW; v++)
		if (j->blue[v])
			refusing = v;
	ASSERT_EQ(0, ia_jobs_end(&self->js, 2, self->err, sizeof(self->err)));
	self->w.refuse_on = refusing;
	self->w.changes = 0;
	ASSERT_EQ(0, submit(_metadata, self, 2, 3, &j));
	ASSERT_EQ(1, self->nrefused);
	total_submit = self->w.changes;
	self->w.changes = 0;
	ASSERT_EQ(0, ia_jobs_end(&self->js, 2, self->err, sizeof(self->err)));
	total_end = self->w.changes;
	ASSERT_GT(total_submit, 6);
	ASSERT_GT(total_end, 2);

	for (int step = 0; step <= total_submit; step++) {
		struct world before = self->w;
		struct ia_jobs *js;

		before.saved = strdup(self->w.saved);
		self->w.budget = step;
		submit(_metadata, self, 2, 3, &j);
		js = restart(_metadata, self);
		check_recovered(_metadata, self, js, step);
		if (step == total_submit)
			EXPECT_NE(NULL, ia_jobs_find(js, 2));
		/* Back to job 1 alone, for the next crash point. */
		rewind_to(_metadata, self, js, &before);
		ASSERT_EQ(1, self->js.njobs);
	}

	ASSERT_EQ(0, submit(_metadata, self, 2, 3, &j));
	for (int step = 0; step <= total_end; step++) {
		struct world before = self->w;
		struct ia_jobs *js;

		before.saved = strdup(self->w.saved);
		self->w.budget = step;
		ia_jobs_end(&self->js, 2, self->err, sizeof(self->err));
		js = restart(_metadata, self);
		check_recovered(_metadata, self, js, 100 + step);
		/* Once "ending" is recorded, the end is finished on restart. */
		if (step >= 1)
			EXPECT_EQ(NULL, ia_jobs_find(js, 2));
		rewind_to(_metadata, self, js, &before);
		ASSERT_EQ(2, self->js.njobs);
	}
}

/* The same for a PS job: its tails are rolled back or whole after a crash anywhere. */
TEST_F(job, ps_recovery_from_every_intermediate_state)
{
	int total;
	struct ia_job *j;

	ASSERT_EQ(0, submit(_metadata, self, 1, 2, &j));
	self->w.changes = 0;
	ASSERT_EQ(0, submit_class(self, 2, 3, IA_JOB_PS, 0, &j));
	total = self->w.changes;
	ASSERT_EQ(0, ia_jobs_end(&self->js, 2, self->err, sizeof(self->err)));
	ASSERT_GT(total, 6);
	for (int step = 0; step <= total; step++) {
		struct world before = self->w;
		struct ia_jobs *js;

		before.saved = strdup(self->w.saved);
		self->w.budget = step;
		submit_class(self, 2, 3, IA_JOB_PS, 0, &j);
		js = restart(_metadata, self);
		check_recovered(_metadata, self, js, step);
		if (step == total) {
			ASSERT_NE(NULL, ia_jobs_find(js, 2));
			EXPECT_EQ((int)IA_JOB_PS, (int)ia_jobs_find(js, 2)->class);
		}
		rewind_to(_metadata, self, js, &before);
		ASSERT_EQ(1, self->js.njobs);
	}
}

/* An active job whose admission and pushes vanished (a reboot of the module, say) is repaired. */
TEST_F(job, recovery_repairs_an_active_job)
{
	struct ia_jobs *js;
	struct ia_job *j;

	ASSERT_EQ(0, submit(_metadata, self, 0, 2, &j));
	memset(self->w.admitted, 0, sizeof(self->w.admitted));
	memset(self->w.pushed[0], 0, sizeof(self->w.pushed[0]));
	js = restart(_metadata, self);
	ASSERT_EQ(1, js->njobs);
	EXPECT_TRUE(in_place(&self->w, &js->jobs[0]));
	ia_jobs_free(js);
	free(js);
}

/* Saved records of the wrong shape are skipped or rolled back, never trusted. */
TEST_F(job, recovery_survives_damaged_records)
{
	static const char *const bad[] = {
		"{\"jobs\": [1, null, \"x\", {}, {\"job\": \"1\"}, {\"job\": -4}]}",
		"{\"jobs\": [{\"job\": 3, \"state\": 7, \"blue\": [\"s1\"]}]}",
		"{\"jobs\": [{\"job\": 3, \"state\": \"active\", \"k\": 2, \"window\": 128,"
		" \"algorithm\": \"smc\", \"blue\": 5, \"workers_per_switch\": [1]}]}",
	};
	int repairs;

	ASSERT_EQ(0, put(self->w.admitted[1], 3));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_object *o = json_tokener_parse(bad[i]);
		struct ia_jobs js;

		ASSERT_NE(NULL, o);
		ASSERT_EQ(0, ia_jobs_init(&js, self->t, &fake_ops, &self->w));
		EXPECT_EQ(0, ia_jobs_recover(&js, o, &repairs, self->err, sizeof(self->err)));
		if (i == 1)	/* not active: rolled back, releasing s1 */
			EXPECT_FALSE(has(self->w.admitted[1], 3));
		ia_jobs_free(&js);
		json_object_put(o);
	}
}

/*
 * The window policy is a job attribute (docs/cc.md): kept with the job, in
 * its record, read back by workers (ia_job_cc_of()) and by recovery.
 */
TEST_F(job, window_policy_is_kept_recorded_and_recovered)
{
	struct ia_job_request rq = { .k = 2, .algo = IA_ALGO_SMC, .window = 128,
				     .cc = IA_CC_A2TP };
	enum ia_cc_policy cc = IA_CC_FIXED;
	struct ia_jobs *js;
	struct ia_job *j;
	bool ps = true;
	json_object *o;

	ASSERT_EQ(0, ia_jobs_submit(&self->js, &rq, &j, self->refused, &self->nrefused,
				    self->err, sizeof(self->err)));
	EXPECT_EQ((int)IA_CC_A2TP, (int)j->cc);
	rq = (struct ia_job_request){ .k = 2, .algo = IA_ALGO_SMC, .window = 128,
				      .class = IA_JOB_PS, .cc = IA_CC_FLEXINA };
	ASSERT_EQ(0, ia_jobs_submit(&self->js, &rq, &j, self->refused, &self->nrefused,
				    self->err, sizeof(self->err)));
	o = ia_job_to_json(&self->js, j);
	EXPECT_STREQ("flexina", json_object_get_string(json_object_object_get(o, "cc")));
	EXPECT_EQ(0, ia_job_cc_of(o, &cc, &ps));
	EXPECT_EQ((int)IA_CC_FLEXINA, (int)cc);
	EXPECT_TRUE(ps);
	json_object_put(o);
	o = ia_job_to_json(&self->js, &self->js.jobs[0]);
	EXPECT_EQ(0, ia_job_cc_of(o, &cc, &ps));
	EXPECT_EQ((int)IA_CC_A2TP, (int)cc);
	EXPECT_FALSE(ps);
	json_object_put(o);
	js = restart(_metadata, self);
	ASSERT_EQ(2, js->njobs);
	EXPECT_EQ((int)IA_CC_A2TP, (int)ia_jobs_find(js, 1)->cc);
	EXPECT_EQ((int)IA_CC_FLEXINA, (int)ia_jobs_find(js, 2)->cc);
	ia_jobs_free(js);
	free(js);
}

/* A record without cc (before issue 12) runs fixed; one naming no policy is refused. */
TEST_F(job, window_policy_of_old_and_bad_records)
{
	enum ia_cc_policy cc = IA_CC_ATP;
	json_object *o = json_tokener_parse("{\"job\": 1, \"class\": \"ina\"}");
	bool ps = true;

	ASSERT_NE(NULL, o);
	EXPECT_EQ(0, ia_job_cc_of(o, &cc, &ps));
	EXPECT_EQ((int)IA_CC_FIXED, (int)cc);
	EXPECT_FALSE(ps);
	json_object_object_add(o, "cc", json_object_new_string("bbr"));
	EXPECT_EQ(-EINVAL, ia_job_cc_of(o, &cc, &ps));
	json_object_object_add(o, "cc", json_object_new_int(2));
	EXPECT_EQ(-EINVAL, ia_job_cc_of(o, &cc, &ps));
	json_object_put(o);

	/* In the state file: a bad cc makes the record unusable, and it is rolled back. */
	struct ia_job *j;
	struct ia_jobs *js;
	json_object *saved, *rec;

	ASSERT_EQ(0, submit(_metadata, self, 0, 2, &j));
	saved = json_tokener_parse(self->w.saved);
	ASSERT_NE(NULL, saved);
	rec = json_object_array_get_idx(json_object_object_get(saved, "jobs"), 0);
	json_object_object_del(rec, "cc");
	free(self->w.saved);
	self->w.saved = strdup(json_object_to_json_string(saved));
	js = restart(_metadata, self);
	ASSERT_EQ(1, js->njobs);
	EXPECT_EQ((int)IA_CC_FIXED, (int)js->jobs[0].cc);
	ia_jobs_free(js);
	free(js);
	json_object_object_add(rec, "cc", json_object_new_string("bbr"));
	free(self->w.saved);
	self->w.saved = strdup(json_object_to_json_string(saved));
	json_object_put(saved);
	js = restart(_metadata, self);
	EXPECT_EQ(0, js->njobs);
	EXPECT_TRUE(no_trace(&self->w, 1));
	ia_jobs_free(js);
	free(js);
}

TEST_HARNESS_MAIN
