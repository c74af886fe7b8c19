// SPDX-License-Identifier: GPL-2.0
/* Job plans: what each switch expects per chunk is what the model predicts. */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "plan.h"
#include "random_tree.h"

static uint64_t s = 11;

static uint64_t rnd(void)
{
	return ia_splitmix64(&s);
}

static const struct tree_shape shape = { .unloaded = 2, .max_load = 6 };

static struct ia_topo *random_topo(int n)
{
	return random_tree(n, &s, &shape);
}

TEST(members_match_model)
{
	for (int iter = 0; iter < 300; iter++) {
		int n = 1 + rnd() % 40;
		struct ia_topo *t = random_topo(n);
		uint32_t *load = calloc(n, sizeof(*load));
		struct ia_problem pb = { .topo = t, .load = load, .k = rnd() % 6 };
		struct ia_placement p;
		struct ia_plan plan;

		for (int v = 0; v < n; v++)
			load[v] = t->sw[v].load ? rnd() % (t->sw[v].load + 1) : 0;
		ASSERT_EQ(0, ia_placement_init(&p, n));
		ASSERT_EQ(0, ia_place(&pb, rnd() % 2 ? IA_ALGO_SMC : IA_ALGO_TOP, &p));
		ASSERT_EQ(0, ia_plan_build(t, load, p.blue, &plan));
		for (int v = 0; v < n; v++) {
			const struct ia_plan_switch *ps = &plan.sw[v];
			uint64_t in = load[v], workers = 0;

			for (int c = t->child_start[v]; c < t->child_start[v + 1]; c++)
				in += p.msgs[t->child[c]];
			if (!ps->on_path) {
				ASSERT_EQ(0u, (unsigned)in);
				continue;
			}
			/* Senders per chunk at v = messages reaching v in the model. */
			ASSERT_EQ(in, ps->nmembers) TH_LOG("iter %d switch %d", iter, v);
			ASSERT_EQ(p.msgs[v], ps->nout);
			for (uint32_t i = 0; i < ps->nmembers; i++) {
				workers += ps->members[i].nworkers;
				for (uint32_t j = 0; j < i; j++)
					ASSERT_NE(ps->members[i].id, ps->members[j].id);
			}
			ASSERT_EQ(workers, ps->nworkers);
			ASSERT_EQ(p.blue[v], ps->blue);
		}
		ASSERT_EQ(p.msgs[t->root], plan.ndest);
		ia_plan_free(&plan);
		ia_placement_free(&p);
		free(load);
		ia_topo_free(t);
	}
}

/* Fig. 1 with SMC (blue s2, s4): the destination hears s1's senders and s2. */
TEST(fig1_smc_plan)
{
	struct ia_topo *t = ia_topo_new(7);
	static const uint32_t load[7] = { 0, 0, 0, 2, 6, 5, 5 };
	bool blue[7] = { false, false, true, false, true, false, false };
	struct ia_plan plan;

	for (int v = 0; v < 7; v++) {
		char name[8];

		snprintf(name, sizeof(name), "s%d", v);
		t->sw[v].name = strdup(name);
		t->sw[v].parent = v ? (v - 1) / 2 : -1;
		t->sw[v].load = load[v];
	}
	ASSERT_EQ(0, ia_topo_finalize(t, NULL, 0));
	ASSERT_EQ(0, ia_plan_build(t, NULL, blue, &plan));
	ASSERT_EQ(18u, plan.nworkers);
	ASSERT_EQ(4u, plan.ndest);	/* s3's two workers, s4, s2 */
	ASSERT_EQ(ia_worker_id(0), plan.dest[0].id);
	ASSERT_EQ(ia_worker_id(1), plan.dest[1].id);
	ASSERT_EQ(ia_switch_id(4), plan.dest[2].id);
	ASSERT_EQ(6u, plan.dest[2].nworkers);
	ASSERT_EQ(ia_switch_id(2), plan.dest[3].id);
	ASSERT_EQ(10u, plan.dest[3].nworkers);
	ASSERT_EQ(10u, plan.sw[2].nmembers);	/* s5's and s6's workers */
	ASSERT_EQ(2u, plan.sw[2].ndown);
	ASSERT_EQ(ia_worker_id(8), plan.sw[5].members[0].id);	/* s5's first worker */
	ia_plan_free(&plan);
	ia_topo_free(t);
}

/* One layout: ports in uplink, children, workers order; workers numbered switch by switch. */
TEST(layout_ports_and_workers)
{
	struct ia_topo *t = random_topo(40);
	char name[IFNAMSIZ];
	int g = 0;

	for (int v = 0; v < t->n; v++) {
		int nc = t->child_start[v + 1] - t->child_start[v];

		ASSERT_EQ(1 + nc + (int)t->sw[v].load, ia_port_count(t, v));
		ASSERT_STREQ("up", ia_port_nth(t, v, 0, name));
		for (int i = 0; i < nc; i++) {
			char want[IFNAMSIZ];

			snprintf(want, sizeof(want), "d%d", i);
			ASSERT_STREQ(want, ia_port_nth(t, v, 1 + i, name));
			/* Child i's downlink number is i. */
			ASSERT_EQ(i, ia_topo_child_pos(t, t->child[t->child_start[v] + i]));
		}
		for (uint32_t j = 0; j < t->sw[v].load; j++) {
			char want[IFNAMSIZ];

			snprintf(want, sizeof(want), "h%u", j);
			ASSERT_STREQ(want, ia_port_nth(t, v, 1 + nc + j, name));
			ASSERT_EQ(g, ia_net_worker_index(t, v, j));
			g++;
		}
	}
	ASSERT_EQ(-1, ia_topo_child_pos(t, t->root));
	ASSERT_EQ((uint64_t)g, ia_topo_total_load(t));
	ASSERT_EQ(g, t->first_worker[t->n]);
	ia_topo_free(t);
}

TEST(job_load_above_topology_refused)
{
	struct ia_topo *t = random_topo(3);
	uint32_t load[3] = { 0 };
	bool blue[3] = { false };
	struct ia_plan plan;

	load[0] = t->sw[0].load + 1;
	ASSERT_NE(0, ia_plan_build(t, load, blue, &plan));
	ia_topo_free(t);
}

TEST_HARNESS_MAIN
