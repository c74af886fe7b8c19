/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live multi-tenant experiment (issue 12 point 4, docs/cc.md "Live"):
 * the whole system in network namespaces, as users run it: `inagg net up`
 * builds a two-level tree (a root without memory, leaves with the jobs'
 * workers), inaggd places and admits the jobs, and each job's PS and
 * workers run as processes in their namespaces, all jobs at once. The
 * root's uplink to the PSs is the bottleneck (tc tbf; the daemon makes
 * upward messages go through the kernel so that the qdisc applies) and
 * every uplink has a virtual queue that marks (docs/cc.md). Optional UDP
 * cross traffic crosses the bottleneck.
 *
 * Files: eval_live_net.c (network, daemon, cross traffic), eval_live_run.c
 * (one scheme on one job mix), eval_live_ep.c (the endpoint processes),
 * eval_live_cpu.c (the CPU other work took), eval_live_keep.c (runs again
 * those that other work slowed).
 */
#ifndef INAGG_EVAL_LIVE_H
#define INAGG_EVAL_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "host_share.h"
#include "sim.h"

#define IA_LIVE_MAX_JOBS	16
#define IA_LIVE_MAX_W		8	/* workers per job (and hosts per leaf) */
#define IA_LIVE_MAX_LEAVES	8
#define IA_LIVE_MAX_ITERS	16
/*
 * The workers' shortest timer here: above the round trips of a loaded
 * bottleneck on this host (up to 26 ms measured), so that a queued chunk is
 * not resent by timer; below it most resends were spurious (docs/cc-live.md
 * "Resends").
 */
#define IA_LIVE_TIMEOUT_MS	50
/* inaggd's samples of the heads (-m): lends follow them (job_lend.h). */
#define IA_LIVE_SAMPLE_MS	20

struct ia_live_cfg {
	uint32_t jobs;		/* concurrent jobs, job i on leaf i % leaves */
	uint32_t leaves;
	uint32_t wmin, wmax;	/* workers per job, uniform */
	uint32_t cmin, cmax;	/* chunks (of 256 elements) per iteration, uniform */
	uint32_t iters;		/* allreduces per job */
	uint32_t window;	/* slots of a head; workers keep window / 2 in flight */
	double mem;		/* each leaf's slots / the heads its jobs would need */
	uint32_t ps_per_ina;	/* requested mix: of each 1 + n jobs, n are PS; 0: all auto */
	double rate_mbit;	/* the bottleneck, Mbit/s */
	uint32_t mark_kb;	/* virtual queue marking threshold, KiB */
	double cross;		/* UDP cross traffic, fraction of the bottleneck; 0: none */
	double gap_ms;		/* compute gap before each iteration, at most (the straggler's) */
	uint32_t timeout_ms;	/* the workers' shortest timer (ia_worker_cfg.timeout_ms) */
	uint64_t seed;		/* the job mix of a round */
	const char *bindir;	/* where inagg and inaggd are */
	const char *workdir;	/* for the topology, the daemon's socket, state and log */
};

/* The mix of one round (drawn from cfg->seed, the same for every scheme). */
struct ia_live_mixjob {
	uint32_t leaf, workers, chunks;
	bool want_ps;		/* submitted as class ps (else auto: INA if its head fits) */
	double gap_ms[IA_LIVE_MAX_W];
};

struct ia_live_job {
	bool ps;		/* what selective INA made it */
	bool exact;		/* every worker's every iteration, and the PS, exact */
	double jct;		/* s, from the start to its last worker's last result */
	double bytes;		/* aggregated payload: workers x chunks x iterations x 1 KiB */
	uint64_t results, marks;	/* workers' results, of them marked */
	uint64_t tail_tries, tail_colls;	/* PS jobs: tail claims + hits + collisions; collisions */
	uint64_t tail_flushes;	/* PS jobs: its partials sent up unfinished (flushed, evicted) */
	uint64_t tail_discards;	/* PS jobs: its partials dropped (the frame could not carry them) */
	uint64_t retx;		/* resends (by timer, RACK or NACK) */
	uint64_t timeouts;	/* of which by timer */
	uint64_t sent, bypassed;	/* workers' sends; first sends past switch memory */
	uint64_t ps_msgs;	/* messages its PS accepted (contributions, aggregates) */
	uint64_t ps_waste;	/* messages its PS got in vain (a sender again, a chunk done) */
	uint64_t reports;	/* INA: its workers' window reports the daemon accepted */
	char err[128];		/* the first failure */
};

struct ia_live_res {
	double tput;		/* all jobs' bytes / makespan */
	double makespan;
	/*
	 * While every job runs: the payload aggregated up to the end of the
	 * first job to finish, over that time (ia_live_tput_all()); and the
	 * sum over jobs of each one's bytes / JCT.
	 */
	double tput_all, t_all;
	double tput_sum;
	double retx_rate, tmo_rate;	/* workers' resends, of them by timer, per result */
	double srtt_ms;		/* the workers' smoothed round trips at their end, mean */
	double jct_ina, jct_ps;	/* mean JCT per class, s */
	double util;		/* leaves' memory utilisation over the run (the daemon's samples) */
	double mark_rate, coll_rate, jain;
	double up;		/* messages the PSs accepted per chunk (1: all aggregated) */
	double waste;		/* messages the PSs got in vain per chunk (resends not needed) */
	double bypass;		/* PS jobs' first sends past switch memory / their chunks */
	double flushes;		/* PS jobs' partials sent up unfinished / their chunks */
	double discards;	/* PS jobs' partials dropped / their chunks */
	uint32_t n_ina, n_ps;
	bool exact;
	uint64_t cross_sent;	/* cross traffic datagrams sent */
	uint64_t lends;		/* head lends the daemon made during the run (all switches) */
	uint64_t lent_slots;	/* slots those lends lent, summed */
	double lent_mean;	/* head slots lent per INA job, mean over the daemon's samples */
	/* per INA job at the start: what the daemon lent while the endpoints got ready */
	double lent_start;
	double cpu_other;	/* share of the host's CPU other work took during the run */
	double reports;		/* the INA jobs' workers' window reports the daemon accepted */
	double first;		/* s from the start to a job's first result, mean over jobs */
	/*
	 * s between a worker's successive result batches while results stream
	 * (median): a process on this busy host takes in what came meanwhile.
	 */
	double batch;
	struct ia_live_job job[IA_LIVE_MAX_JOBS];
};

/* A network with its daemon (one memory point). */
struct ia_live {
	struct ia_live_cfg c;
	char tag[12];
	char topo[256], sock[256], state[256], log[256];
	pid_t daemon;
	bool up;
	uint32_t runs;		/* so far: every run's jobs get ids never used before */
	uint32_t nhosts;	/* per leaf */
	struct ia_host_steer dest;	/* the PSs' host */
	struct ia_host_steer host[IA_LIVE_MAX_LEAVES][IA_LIVE_MAX_W];
};

/* 8 jobs of 2-4 workers on 2 leaves, 32-96 chunks, 2 iterations, 40 Mbit/s. */
void ia_live_defaults(struct ia_live_cfg *c);
int ia_live_check(const struct ia_live_cfg *c);
void ia_live_mix(const struct ia_live_cfg *c, struct ia_live_mixjob *mix);

/* One worker's results over time: when each of its n chunks completed (ns, 0: never). */
struct ia_live_done {
	const uint64_t *t;
	uint32_t n;
};

/*
 * Aggregation throughput while every job runs: the payload aggregated in
 * (t0, t1] over t1 - t0, t1 being the end of the first job to finish. A
 * job's chunk aggregates one chunk of payload per worker, so each worker's
 * result counts chunk_bytes. 0 when t1 <= t0.
 */
double ia_live_tput_all(const struct ia_live_done *d, size_t nd, double chunk_bytes, uint64_t t0,
			uint64_t t1);

/* eval_live_net.c. 0 or -errno, err says why. */
int ia_live_up(struct ia_live *L, const struct ia_live_cfg *c, char *err, size_t errlen);
void ia_live_down(struct ia_live *L);
/* A daemon request (printf-style JSON); its answer if "ok", else NULL and err. */
struct json_object *ia_live_request(struct ia_live *L, char *err, size_t errlen,
				    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Cross traffic from a leaf-0 host to the PSs' host until stopped; the pid or -errno. */
pid_t ia_live_cross_start(struct ia_live *L, volatile uint64_t *sent);
void ia_live_cross_stop(pid_t pid);

/*
 * eval_live_cpu.c: the host's CPU time (all, busy) and the experiment's own
 * (this process, its children, the daemon and its agents, the softirq
 * threads), so that ia_live_cpu_other() gives the share of the host's CPU
 * that other work took between two snapshots (0 when unknown).
 */
struct ia_live_cpu {
	long long total_ns, busy_ns, ours_ns;
	bool ok;
};

void ia_live_cpu_snap(const struct ia_live *L, struct ia_live_cpu *c);
double ia_live_cpu_other(const struct ia_live_cpu *a, const struct ia_live_cpu *b);

/* eval_live_run.c: scheme s on the mix of L->c.seed. */
int ia_live_run(struct ia_live *L, enum ia_sim_scheme s, struct ia_live_res *r, char *err,
		size_t errlen);

/*
 * eval_live_keep.c: a run during which other work took more than max_other
 * of the host's CPU is run again, at most repeats times, pause_ms apart;
 * the run with the least other work is kept (a failed or inexact one at
 * once). *repeated says how many runs more it took. 0 or -errno.
 */
#define IA_LIVE_MAX_REPEATS	10

struct ia_live_keep {
	double max_other;	/* 0: never run again */
	uint32_t repeats;	/* at most, per run */
	uint32_t pause_ms;	/* before each */
};

typedef int (*ia_live_run_fn)(void *ctx, enum ia_sim_scheme s, struct ia_live_res *r,
			      char *err, size_t errlen);

int ia_live_keep_check(const struct ia_live_keep *k);
int ia_live_run_kept(const struct ia_live_keep *k, ia_live_run_fn run, void *ctx,
		     enum ia_sim_scheme s, struct ia_live_res *r, uint32_t *repeated, char *err,
		     size_t errlen);

#endif
