// SPDX-License-Identifier: GPL-2.0
/*
 * Live word count through the XDP datapath (docs/apps.md): the paper's
 * Fig. 1 tree built with "inagg net up --attach", SMC (k = 2) placed on
 * word count's own volume (ia_wc_volume(), blocks of 256 keys), blue
 * switches configured as sparse jobs (bpf/dp_sparse.h), red ones forwarding,
 * 18 mappers reading contiguous splits of the project's docs/ and the
 * reducer at the destination.
 *
 * Checks: the reducer's counts equal the single-process count word for
 * word; and, on every switch's uplink, the messages sent (first
 * transmissions: resends and re-emissions are counted apart) equal the
 * congestion model's for the placement: word count's blocks plus the
 * dense announcements. With lossy, duplicating and reordering hosts the
 * counts are still exact.
 *
 * Namespaces: ia-<tag>-*, tag "w<pid>", removed by the teardown.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>

/* The harness compares expected literals (int) with unsigned values. */
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "livetest.h"
#include "netns.h"
#include "netplan.h"
#include "place.h"
#include "plan.h"
#include "topo.h"
#include "wc_host.h"
#include "wordcount.h"
#include "xdp.h"

#define JOB	13
#define BASE	1000
#define MAXMAP	32
#ifndef RETRIES
#define RETRIES	200
#endif

static const char fig1[] =
	"{\"switches\": ["
	"{\"name\": \"s0\", \"parent\": null},"
	"{\"name\": \"s1\", \"parent\": \"s0\"},"
	"{\"name\": \"s2\", \"parent\": \"s0\"},"
	"{\"name\": \"s3\", \"parent\": \"s1\", \"load\": 2},"
	"{\"name\": \"s4\", \"parent\": \"s1\", \"load\": 6},"
	"{\"name\": \"s5\", \"parent\": \"s2\", \"load\": 5},"
	"{\"name\": \"s6\", \"parent\": \"s2\", \"load\": 5}]}";

static const char *const md[] = { ".md", NULL };

/* What the processes of a run report (shared memory). */
struct shared {
	volatile sig_atomic_t stop;
	int rc[MAXMAP + 1];		/* mappers, then the reducer */
	char err[MAXMAP + 1][IA_ERRLEN];
	struct ia_wc_mapper_stats mst[MAXMAP];
	struct ia_wc_reducer_stats rst;
	uint32_t counts[];
};

FIXTURE(wc) {
	char tag[16], dir[64], topo[128];
	struct ia_topo *t;
	struct ia_corpus c;
	bool up;
};

FIXTURE_SETUP(wc)
{
	char err[IA_ERRLEN], docs[PATH_MAX + 8];
	FILE *f;

	snprintf(self->tag, sizeof(self->tag), "w%d", getpid() % 1000000);
	snprintf(self->dir, sizeof(self->dir), "/tmp/inagg-wc-%d", getpid());
	snprintf(self->topo, sizeof(self->topo), "%s/topo.json", self->dir);
	mkdir(self->dir, 0700);
	f = fopen(self->topo, "w");
	ASSERT_NE(NULL, f);
	fputs(fig1, f);
	fclose(f);
	ASSERT_EQ(0, ia_topo_parse(fig1, &self->t, err, sizeof(err))) TH_LOG("%s", err);
	ia_corpus_init(&self->c);
	snprintf(docs, sizeof(docs), "%s/../docs", build);
	ASSERT_EQ(0, ia_corpus_add_path(&self->c, docs, md, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, sh("%s/inagg net up -t %s -n %s --attach >/dev/null", build, self->topo,
			self->tag));
	self->up = true;
}

FIXTURE_TEARDOWN(wc)
{
	if (self->up)
		sh("%s/inagg net down -n %s -t %s >/dev/null", build, self->tag, self->topo);
	sh("rm -rf %s", self->dir);
	ia_corpus_free(&self->c);
	ia_topo_free(self->t);
}

/* Index and MAC of ifname in namespace ns. */
static int port(const char *ns, const char *ifname, int *ifindex, __u8 mac[6])
{
	int h = ia_netns_enter(ns), ret;

	if (h < 0)
		return h;
	ret = ia_if_info(ifname, ifindex, mac);
	ia_netns_return(h);
	return ret;
}

/* A hop out of switch v's port (ns, ifname) to the interface (far_ns, far_if). */
static int hop(const char *ns, const char *ifname, const char *far_ns, const char *far_if,
	       struct ia_xdp_hop *h)
{
	int far;

	return port(ns, ifname, &h->ifindex, h->smac) ?: port(far_ns, far_if, &far, h->dmac);
}

/* Switch v's part of the job: sparse blue, or red; results down to its children and hosts. */
static int push(FIXTURE_DATA(wc) *self, const struct ia_plan *plan, int v, uint32_t nvocab)
{
	const struct ia_topo *t = self->t;
	const struct ia_plan_switch *ps = &plan->sw[v];
	struct ia_xdp_hop down[16] = {};
	char ns[128], far[128], name[IFNAMSIZ], fname[IFNAMSIZ];
	struct ia_xdp_job j = {
		.id = JOB, .role = ps->blue ? IA_ROLE_BLUE : IA_ROLE_RED, .base_seq = BASE,
		.self_id = ia_switch_id(v), .nmembers = ps->nmembers, .members = ps->members,
		.down = down,
	};
	struct ia_xdp *x;
	int p = t->sw[v].parent, ret, h;

	ia_net_switch_ns(self->tag, t->sw[v].name, ns, sizeof(ns));
	if (p < 0)
		ia_net_dest_ns(self->tag, far, sizeof(far));
	else
		ia_net_switch_ns(self->tag, t->sw[p].name, far, sizeof(far));
	ret = hop(ns, IA_PORT_UP, far, p < 0 ? IA_HOST_PORT :
		  ia_port_name(IA_PORT_CHILD, ia_topo_child_pos(t, v), fname), &j.up);
	if (ps->blue) {
		j.flags = IA_JOB_F_SPARSE;
		j.sparse_nann = ia_wc_nann(nvocab);
		j.window = ia_wc_switch_window(nvocab, ps->nmembers);
		j.up.saddr = ia_net_uplink_addr(v, false).s_addr;
		j.up.daddr = ia_net_dest_addr(t).s_addr;
	}
	for (uint32_t i = 0; !ret && i < ps->ndown; i++) {
		int c = ps->down[i];

		ia_net_switch_ns(self->tag, t->sw[c].name, far, sizeof(far));
		ret = hop(ns, ia_port_name(IA_PORT_CHILD, ia_topo_child_pos(t, c), name), far,
			  IA_PORT_UP, &down[j.ndown++]);
	}
	for (uint32_t w = 0; !ret && w < t->sw[v].load; w++) {
		ia_net_worker_ns(self->tag, t->sw[v].name, w, far, sizeof(far));
		down[j.ndown].daddr = ia_net_worker_addr(ia_net_worker_index(t, v, w)).s_addr;
		ret = hop(ns, ia_port_name(IA_PORT_HOST, w, name), far, IA_HOST_PORT,
			  &down[j.ndown++]);
	}
	if (ret)
		return ret;
	h = ia_netns_enter(ns);
	if (h < 0)
		return h;
	ret = ia_xdp_open(ns, &x, NULL, 0);
	if (!ret) {
		ret = ia_xdp_job_add(x, &j, NULL, 0);
		ia_xdp_close(x);
	}
	ia_netns_return(h);
	return ret;
}

/* Upward messages switch v sent first (resends and re-emissions apart), and its drops. */
static int uplink(FIXTURE_DATA(wc) *self, int v, uint64_t *sent, uint64_t *dropped)
{
	struct ia_counters c;
	struct ia_xdp *x;
	char ns[128];
	int ifindex, h, ret;

	ia_net_switch_ns(self->tag, self->t->sw[v].name, ns, sizeof(ns));
	h = ia_netns_enter(ns);
	if (h < 0)
		return h;
	ret = ia_if_info(IA_PORT_UP, &ifindex, NULL) ?: ia_xdp_open_existing(ns, &x, NULL, 0);
	if (!ret) {
		ret = ia_xdp_port_counters(x, ifindex, &c);
		*sent = c.c[IA_C_TX] - c.c[IA_C_RECOVERY_TX];
		if (!ret)
			ret = ia_xdp_job_counters(x, JOB, &c);
		*dropped = 0;
		for (int i = IA_C_DROP_SHORT; i <= IA_C_DROP_WINDOW; i++)
			*dropped += c.c[i];
		ia_xdp_close(x);
	}
	ia_netns_return(h);
	return ret;
}

/* Switch v's nonzero job counters, one line (what a failed run can tell). */
static void dump(struct __test_metadata *_metadata, FIXTURE_DATA(wc) *self, int v)
{
	char ns[128], line[512] = "";
	struct ia_counters c;
	struct ia_xdp *x;
	int h;

	ia_net_switch_ns(self->tag, self->t->sw[v].name, ns, sizeof(ns));
	h = ia_netns_enter(ns);
	if (h < 0)
		return;
	if (!ia_xdp_open_existing(ns, &x, NULL, 0)) {
		int up;

		if (!ia_xdp_job_counters(x, JOB, &c))
			for (int i = 0; i < IA_C__COUNT; i++)
				if (c.c[i])
					snprintf(line + strlen(line), sizeof(line) - strlen(line),
						 " %s %llu", ia_ctr_name(i), (unsigned long long)c.c[i]);
		snprintf(line + strlen(line), sizeof(line) - strlen(line), "; up port:");
		if (!ia_if_info(IA_PORT_UP, &up, NULL) && !ia_xdp_port_counters(x, up, &c))
			for (int i = 0; i < IA_C__COUNT; i++)
				if (c.c[i])
					snprintf(line + strlen(line), sizeof(line) - strlen(line),
						 " %s %llu", ia_ctr_name(i), (unsigned long long)c.c[i]);
		ia_xdp_close(x);
	}
	ia_netns_return(h);
	TH_LOG("%s:%s", self->t->sw[v].name, line);
}

/* Runs the reducer and every mapper as processes in their namespaces. */
static void run(struct __test_metadata *_metadata, FIXTURE_DATA(wc) *self,
		const struct ia_plan *plan, struct shared *sh_,
		const struct ia_host_faults *faults)
{
	const struct ia_topo *t = self->t;
	uint32_t nmap = t->first_worker[t->n];
	pid_t pids[MAXMAP + 1];
	char ns[128];

	ASSERT_LE(nmap, MAXMAP);
	for (uint32_t i = 0; i <= nmap; i++)
		sh_->rc[i] = -1;
	pids[nmap] = fork();
	if (pids[nmap] == 0) {
		struct ia_wc_reducer_cfg cfg = {
			.job = JOB, .addr = ia_net_dest_addr(t), .down = ia_net_uplink_addr(t->root, false),
			.base_seq = BASE, .nvocab = self->c.nvocab, .nmembers = plan->ndest,
			.members = plan->dest, .stop = &sh_->stop,
		};

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		ia_net_dest_ns(self->tag, ns, sizeof(ns));
		if (enter_ns(ns))
			_exit(1);
		sh_->rc[nmap] = ia_wc_reduce(&cfg, sh_->counts, &sh_->rst, sh_->err[nmap], IA_ERRLEN);
		_exit(0);
	}
	usleep(100000);	/* the reducer's socket first */
	for (int v = 0; v < t->n; v++)
		for (uint32_t w = 0; w < t->sw[v].load; w++) {
			int g = ia_net_worker_index(t, v, w);

			pids[g] = fork();
			if (pids[g] == 0) {
				struct ia_wc_mapper_cfg cfg = {
					.job = JOB, .id = ia_worker_id(g), .addr = ia_net_worker_addr(g),
					.reducer = ia_net_dest_addr(t), .base_seq = BASE,
					.nvocab = self->c.nvocab, .timeout_ms = 300, .retries = RETRIES,
					.faults = *faults,
				};
				size_t from = ia_wc_split(self->c.nwords, nmap, g);
				size_t to = ia_wc_split(self->c.nwords, nmap, g + 1);

				prctl(PR_SET_PDEATHSIG, SIGKILL);
				cfg.faults.seed += g;
				ia_net_worker_ns(self->tag, t->sw[v].name, w, ns, sizeof(ns));
				if (enter_ns(ns))
					_exit(1);
				sh_->rc[g] = ia_wc_map(&cfg, self->c.word + from, to - from,
						       &sh_->mst[g], sh_->err[g], IA_ERRLEN);
				_exit(0);
			}
		}
	for (uint32_t g = 0; g < nmap; g++)
		waitpid(pids[g], NULL, 0);
	sh_->stop = 1;
	waitpid(pids[nmap], NULL, 0);
	for (uint32_t g = 0; g < nmap; g++) {
		EXPECT_EQ(0, sh_->rc[g]) TH_LOG("mapper %u: %s", g, sh_->err[g]);
	}
	EXPECT_EQ(0, sh_->rc[nmap]) TH_LOG("reducer: %s", sh_->err[nmap]);
}

FIXTURE_VARIANT(wc) {
	struct ia_host_faults faults;
};

FIXTURE_VARIANT_ADD(wc, clean) {};
FIXTURE_VARIANT_ADD(wc, lossy) {
	.faults = { .loss_ppm = 50000, .dup_ppm = 50000, .reorder_ppm = 50000, .seed = 7 },
};

TEST_F_TIMEOUT(wc, counts_exact_and_messages_as_modelled, 300)
{
	const struct ia_topo *t = self->t;
	uint32_t *load = calloc(t->n, sizeof(*load)), *merged = calloc(t->n, sizeof(*merged));
	uint32_t nvocab = self->c.nvocab, nann = ia_wc_nann(nvocab);
	bool lossy = variant->faults.loss_ppm > 0;
	struct ia_placement p, pann;
	struct ia_plan plan;
	struct shared *s;
	char blue[64] = "";
	size_t len = sizeof(*s) + nvocab * sizeof(uint32_t);

	/* Placement: SMC on word count's blocks; the model of the announcements alongside. */
	ASSERT_EQ(0, ia_wc_volume(&self->c, t, IA_WC_KEYS, load, merged));
	struct ia_problem pb = { .topo = t, .load = load, .merged = merged, .k = 2 };
	struct ia_problem pa = { .topo = t, .k = 2 };

	ASSERT_EQ(0, ia_placement_init(&p, t->n));
	ASSERT_EQ(0, ia_placement_init(&pann, t->n));
	ASSERT_EQ(0, ia_place(&pb, IA_ALGO_SMC, &p));
	memcpy(pann.blue, p.blue, t->n * sizeof(*p.blue));
	ia_model_eval(&pa, &pann);
	for (int v = 0; v < t->n; v++)
		if (p.blue[v])
			snprintf(blue + strlen(blue), sizeof(blue) - strlen(blue), " %s",
				 t->sw[v].name);
	TH_LOG("%zu words, %u distinct, %u blocks, %u announcement(s); SMC k=2 blue:%s",
	       self->c.nwords, nvocab, ia_wc_nblocks(nvocab), nann, blue);

	ASSERT_EQ(0, ia_plan_build(t, NULL, p.blue, &plan));
	for (int v = 0; v < t->n; v++) {
		ASSERT_EQ(0, push(self, &plan, v, nvocab)) TH_LOG("switch %s", t->sw[v].name);
	}
	s = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, s);
	memset(s, 0, len);

	run(_metadata, self, &plan, s, &variant->faults);

	TH_LOG("reducer: rx %lu, accepted %lu, dup %lu, late %lu, results %lu, dropped %lu",
	       (unsigned long)s->rst.rx, (unsigned long)s->rst.accepted,
	       (unsigned long)s->rst.dup, (unsigned long)s->rst.late,
	       (unsigned long)s->rst.results, (unsigned long)s->rst.dropped);
	for (int v = 0; v < t->n; v++)
		dump(_metadata, self, v);
	for (uint32_t id = 0; id < nvocab; id++) {
		ASSERT_EQ(self->c.count[id], s->counts[id]) TH_LOG("'%s'", self->c.vocab[id]);
	}
	TH_LOG("reducer: %lu contributions, %u blocks complete, %lu late, %lu dup",
	       (unsigned long)s->rst.accepted, s->rst.done, (unsigned long)s->rst.late,
	       (unsigned long)s->rst.dup);
	for (int v = 0; v < t->n; v++) {
		uint64_t sent = 0, dropped = 0, model = p.msgs[v] + (uint64_t)nann * pann.msgs[v];

		ASSERT_EQ(0, uplink(self, v, &sent, &dropped));
		TH_LOG("%s %-4s uplink: %lu messages (model %lu: %lu blocks + %u x %lu "
		       "announcements), %lu dropped", t->sw[v].name, p.blue[v] ? "blue" : "red",
		       (unsigned long)sent, (unsigned long)model, (unsigned long)p.msgs[v], nann,
		       (unsigned long)pann.msgs[v], (unsigned long)dropped);
		if (!lossy) {
			EXPECT_EQ(model, sent);
			EXPECT_EQ(0, dropped);
		}
	}
	munmap(s, len);
	ia_plan_free(&plan);
	ia_placement_free(&p);
	ia_placement_free(&pann);
	free(load);
	free(merged);
}

LIVE_TEST_MAIN
