// SPDX-License-Identifier: GPL-2.0
/*
 * XDP datapath benchmark: per-packet cost under BPF_PROG_TEST_RUN, and live
 * packets/s over veth, for red forwarding and blue aggregation of 1 KB
 * payloads, against an XDP_DROP sink and a user-space recvmmsg aggregator
 * measured in the same run. Prints figures and ratios; no pass/fail.
 *
 * Live rig (namespaces ia-bg/ia-bs/ia-bd-<pid>): a generator (LIVE_FRAMES
 * test_run of ia_gen) transmits on g0; the device under test is the XDP
 * program on the switch port s0; forwarded and aggregated messages leave by
 * u0 to a counting sink on d0. The live jobs' members are bound, as inaggd
 * binds a host's workers (docs/security.md): to port s0, the generator's
 * address and UDP port IA_UDP_PORT, which ia_gen stamps into every frame;
 * so the live figures include the member check. DUTs:
 *
 *   xdp_drop       counting XDP_DROP on s0 (what veth itself costs)
 *   add_floor      count, add the 256 elements into a per-CPU chunk slot, drop
 *   lock_floor     the same under a bpf_spin_lock per slot
 *   atomic_floor   per-CPU sums and one atomic OR on the chunk's member word
 *   red_forward    ia_xdp, red job: redirect to u0
 *   blue_aggregate ia_xdp, blue job, fan-in FANIN: one aggregate to u0 per chunk
 *   user-space     counting XDP_PASS on s0, kernel UDP stack, one recvmmsg
 *                  thread per measured CPU on that CPU, each with its own
 *                  SO_REUSEPORT socket, steered by CPU so each thread sums its
 *                  CPU's jobs (no duplicate detection, nothing sent back)
 *
 * The floors do only what any XDP aggregator must, plus the one cross-CPU
 * operation per message that exactly-once aggregation on several CPUs needs:
 * user-space / floor is the most any XDP aggregator could reach here.
 *
 * Two rigs:
 *  - shared: one generator thread per measured CPU (CPU 0, then both). veth
 *    runs the receiver's XDP in the sender's NAPI, so each CPU carries
 *    generator and DUT alike, and blue/xdp_drop bounds every ratio.
 *  - split (-s: this rig only): the DUT on CPU 0 (threaded NAPI on s0, its
 *    kthreads pinned, the recvmmsg thread too), the generator on CPU 1,
 *    paced by ia_gen itself to stay at most PACE_LIMIT messages ahead of
 *    what the DUT took (see inagg_bench.bpf.c): CPU 0 stays saturated and
 *    nothing is dropped. Unpaced, the full ring made the receiver fight the
 *    generator for every entry (red cost 2.3x, user space 1.6x its paced
 *    cost) and blue's window stalled on dropped contributions. The DUT's
 *    cost per packet is the scheduler's run time of its threads over the
 *    packets it took, the median of SPLIT_ROUNDS rounds; it is the cost on
 *    one core, and the ratios the targets are about.
 *
 * ia_gen is also attached to a spare veth (k0): a program run by test_run
 * but attached nowhere is added to and removed from the XDP dispatcher on
 * every run, each time a synchronize_rcu() that idled a lone generator CPU
 * half the time.
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/filter.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdp.h"
#include "../bpf/xdp_common.h"
#include "bpf/inagg_bench.skel.h"
#include "../../bpf/inagg_bench.h"

#define JOB		1
#define FANIN		8
/* inaggd's default: 4096 slots (5.3 MB) made every new chunk's slot cold. */
#define WINDOW		128
#define LIVE_SECS	1.5
#define TR_PACKETS	200000
#define UDP_BATCH	64
#define NCPU_MAX	2

static char ns_gen[32], ns_sw[32], ns_sink[32];
static struct inagg_bench *gen;
static struct ia_xdp *sw;
static int s0, u0, g0;
static __u8 tmpl[IA_FRAME_LEN(IA_CHUNK_DEFAULT)];
static int tmpl_len;
static atomic_int stop;
static volatile sig_atomic_t interrupted;	/* SIGINT or SIGTERM: clean up, stop */
static int gen_first;	/* generators run on CPUs gen_first.. */
/*
 * Split rig: the generator on its own CPU is paced by ia_gen itself (see
 * inagg_bench.bpf.c), at most PACE_LIMIT messages ahead of what the DUT
 * took, read from the DUT's own count (pace_src).
 */
#define GEN_BATCH	64
#define PACE_LIMIT	192	/* veth's ring holds 256; > GEN_BATCH */
#define PACE_OFF	-1
static int pace_src = PACE_OFF;	/* of the next live() */
static __u32 s0_port;	/* s0's index in the switch's ia_pstats */

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* Worker threads leave SIGINT and SIGTERM to the main thread. */
static void spawn(pthread_t *t, void *(*fn)(void *), long arg)
{
	sigset_t sigs, old;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, &old);
	pthread_create(t, NULL, fn, (void *)arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void cleanup(void)
{
	if (sw)
		ia_xdp_close(sw);
	inagg_bench__destroy(gen);
	sh("ip netns del %s 2>/dev/null", ns_gen);
	sh("ip netns del %s 2>/dev/null", ns_sw);
	sh("ip netns del %s 2>/dev/null", ns_sink);
}

static int rig(void)
{
	const char *q = "numtxqueues 2 numrxqueues 2";

	if (sh("ip netns add %s && ip netns add %s && ip netns add %s", ns_gen, ns_sw, ns_sink) ||
	    sh("ip -n %s link add s0 %s address 02:00:00:00:02:00 type veth peer name g0 %s "
	       "address 02:00:00:00:01:00 netns %s", ns_sw, q, q, ns_gen) ||
	    sh("ip -n %s link add u0 %s address 02:00:00:00:03:00 type veth peer name d0 %s "
	       "address 02:00:00:00:04:00 netns %s", ns_sw, q, q, ns_sink) ||
	    sh("ip -n %s link set dev s0 up && ip -n %s link set dev u0 up && "
	       "ip -n %s addr add 10.88.0.2/24 dev s0", ns_sw, ns_sw, ns_sw) ||
	    sh("ip -n %s link set dev g0 up && ip -n %s link set dev d0 up", ns_gen, ns_sink) ||
	    sh("ip -n %s link add k0 type veth peer name k1", ns_gen))
		return -EIO;
	return 0;
}

/*
 * Live jobs bind their members where the generator is (docs/security.md):
 * port s0 and, s0 being a host's port, the generator's address (and, the
 * datapath's rule, UDP port IA_UDP_PORT, the template's source port). The
 * test_run jobs do not: their frames come in by no port of the switch, and
 * blue_today (tail_vs_head) predates the binding. XDP_BENCH_UNBOUND=1 leaves
 * the live jobs unbound too (the check's own cost: scripts/ab-split.sh).
 */
#define GEN_SADDR	"10.88.0.1"
static bool bind_live;

static int job1(__u32 id, enum ia_role role, __u32 window)
{
	struct ia_sender m[FANIN];
	struct ia_xdp_bind b[FANIN];
	__u64 sets[FANIN];
	struct ia_xdp_job j = {
		.id = id, .role = role, .window = window, .self_id = 900,
		.nmembers = FANIN, .members = m, .sets = sets,
		.bind = bind_live ? b : NULL,
		.up = { .ifindex = u0, .saddr = inet_addr("10.88.0.2"),
			.daddr = inet_addr("10.88.1.1") },
	};
	int i;

	for (i = 0; i < FANIN; i++) {
		m[i].id = i;
		m[i].nworkers = 1;
		sets[i] = 1ull << i;	/* tail: worker i has rank i */
		b[i].ifindex = s0;
		b[i].saddr = inet_addr(GEN_SADDR);
	}
	parse_mac("02:00:00:00:03:00", j.up.smac);
	parse_mac("02:00:00:00:04:00", j.up.dmac);
	ia_xdp_job_del(sw, id);
	return ia_xdp_job_add(sw, &j, NULL, 0);
}

/* One job per generating CPU (see ia_gen), fresh counters and slots. */
static int job_sized(enum ia_role role, __u32 window)
{
	__u64 zero[256] = {};
	__u32 k = 0;

	if (libbpf_num_possible_cpus() > 256 ||
	    bpf_map_update_elem(bpf_map__fd(gen->maps.gen_next), &k, zero, BPF_ANY))
		return -EINVAL;
	return job1(JOB, role, window) ?: job1(JOB + 1, role, window);
}

static int job(enum ia_role role)
{
	return job_sized(role, WINDOW);
}

/* Mean kernel-measured ns per run of prog over TR_PACKETS distinct messages. */
static double tr_cost(int prog)
{
	__u8 buf[sizeof(tmpl)];
	struct ia_hdr *h = (void *)(buf + IA_L2L4_LEN);
	double total = 0;
	__u32 n;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = tmpl_len,
		    .repeat = 1);

	memcpy(buf, tmpl, tmpl_len);
	for (n = 0; n < TR_PACKETS && !interrupted; n++) {
		h->seq = htonl(n / FANIN);
		h->sender = htonl(n % FANIN);
		if (bpf_prog_test_run_opts(prog, &o))
			return -1;
		total += o.duration;
	}
	return total / TR_PACKETS;
}

/* A map of the switch's datapath program, by name (the loader keeps them private). */
static int sw_map_fd(const char *name)
{
	__u32 ids[32], n = 32, i;
	struct bpf_prog_info pi = { .nr_map_ids = n, .map_ids = (__u64)(unsigned long)ids };
	__u32 len = sizeof(pi);

	if (bpf_obj_get_info_by_fd(ia_xdp_prog_fd(sw), &pi, &len))
		return -1;
	for (i = 0; i < pi.nr_map_ids && i < n; i++) {
		struct bpf_map_info mi = {};
		__u32 mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &mi, &mlen) && !strcmp(mi.name, name))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

/*
 * Today's blue, the same-run baseline of head aggregation: bpf/ of the last
 * commit before tail aggregation (bpf/bpf.mk, BENCH_BASE), loaded on the
 * switch's own maps. -1 if it is not built.
 */
static struct bpf_object *base_obj;

static int base_prog(void)
{
	const char *build = getenv("BUILD");
	struct bpf_program *p;
	struct bpf_map *map;
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/bpf/base/inagg.bpf.o", build ? build : "build");
	base_obj = bpf_object__open_file(path, NULL);
	if (!base_obj) {
		printf("# warning: no baseline %s (make %s)\n", path, path);
		return -1;
	}
	bpf_object__for_each_map(map, base_obj) {
		fd = sw_map_fd(bpf_map__name(map));
		if (fd < 0)
			continue;	/* not used by ia_xdp: its own */
		if (bpf_map__reuse_fd(map, fd)) {
			close(fd);
			return -1;
		}
		close(fd);
	}
	bpf_object__for_each_program(p, base_obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), "ia_xdp"));
	if (bpf_object__load(base_obj))
		return -1;
	return bpf_program__fd(bpf_object__find_program_by_name(base_obj, "ia_xdp"));
}

/*
 * Head vs tail aggregation and today's blue, BPF_PROG_TEST_RUN on one
 * core, interleaved rounds: per round one measurement of each, every
 * measurement TR_PACKETS messages of FANIN-member chunks, the same frames.
 * Like for like, the tail pool has the head's WINDOW slots (the one chunk in
 * flight never collides: a complete chunk frees its slot); tail_4096, a
 * pool of 4096 slots (5.3 MB, beyond the L2 cache: hashed chunk by chunk,
 * each chunk's slot missed; in runs, wire.h, it is prefetched as a head's),
 * is shown beside with its like, head_4096, a head of 4096 slots.
 */
#define TT_ROUNDS	21	/* many: the host is shared, its load drifts */
#define TT_BIG		4096
enum { TT_BASE, TT_HEAD, TT_HEAD_BIG, TT_TAIL, TT_TAIL_BIG, TT__N };

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int tail_vs_head(void)
{
	static const char *const name[TT__N] = { "blue_today", "head", "head_4096", "tail",
						    "tail_4096" };
	double ns[TT__N][TT_ROUNDS], med[TT__N], rt[TT_ROUNDS], rb[TT_ROUNDS];
	int base = base_prog(), r, d;
	struct ia_xdp_tail tail = {};
	struct ia_counters jc;

	for (r = 0; r < TT_ROUNDS && !interrupted; r++) {
		for (d = 0; d < TT__N; d++) {
			ns[d][r] = -1;
			if (d == TT_BASE && base < 0)
				continue;
			tail.slots = d == TT_TAIL_BIG ? TT_BIG : WINDOW;
			if (d >= TT_TAIL && ia_xdp_tail_set(sw, &tail, NULL, 0))
				return -1;
			if (job_sized(d >= TT_TAIL ? IA_ROLE_TAIL : IA_ROLE_BLUE,
				      d == TT_HEAD_BIG ? TT_BIG : WINDOW))
				return -1;
			ns[d][r] = tr_cost(d == TT_BASE ? base : ia_xdp_prog_fd(sw));
			if (d >= TT_TAIL && (ia_xdp_job_counters(sw, JOB, &jc) ||
					     jc.c[IA_C_TAIL_COMPLETE] != TR_PACKETS / FANIN))
				printf("# warning: %s completed %llu of %d chunks\n", name[d],
				       (unsigned long long)jc.c[IA_C_TAIL_COMPLETE],
				       TR_PACKETS / FANIN);
		}
	}
	/* Per round too: the ratio of two measurements made side by side. */
	for (r = 0; r < TT_ROUNDS; r++) {
		rt[r] = ns[TT_HEAD][r] / ns[TT_TAIL][r];
		rb[r] = ns[TT_HEAD_BIG][r] / ns[TT_TAIL_BIG][r];
	}
	qsort(rt, TT_ROUNDS, sizeof(double), cmp_dbl);
	qsort(rb, TT_ROUNDS, sizeof(double), cmp_dbl);
	printf("test_run Mpps per core, median [range] of %d interleaved rounds:", TT_ROUNDS);
	for (d = 0; d < TT__N; d++) {
		qsort(ns[d], TT_ROUNDS, sizeof(double), cmp_dbl);
		med[d] = ns[d][TT_ROUNDS / 2];
		if (med[d] > 0)
			printf("  %s %.3f [%.3f, %.3f]", name[d], 1e3 / med[d],
			       1e3 / ns[d][TT_ROUNDS - 1], 1e3 / ns[d][0]);
	}
	printf("\nratio, test_run, per core: tail/head %.3f (target >= 0.8; %d slots each; "
	       "per round %.3f [%.3f, %.3f])  tail_4096/head_4096 %.3f (per round %.3f [%.3f, "
	       "%.3f])  tail_4096/head %.3f",
	       med[TT_HEAD] / med[TT_TAIL], WINDOW, rt[TT_ROUNDS / 2], rt[0], rt[TT_ROUNDS - 1],
	       med[TT_HEAD_BIG] / med[TT_TAIL_BIG], rb[TT_ROUNDS / 2], rb[0], rb[TT_ROUNDS - 1],
	       med[TT_HEAD] / med[TT_TAIL_BIG]);
	if (med[TT_BASE] > 0)
		printf("  head/blue_today %.3f (target within 5%%)", med[TT_BASE] / med[TT_HEAD]);
	printf("\n");
	return 0;
}

static struct inagg_bench *dut_sink;	/* XDP_DROP, or counting XDP_PASS, on s0 */
static struct inagg_bench *fwd_sink;	/* XDP_DROP on d0 */

/* What the DUT took so far on CPU 0, as pacing reads it. */
static __u64 dut_taken(int src)
{
	int ncpu = libbpf_num_possible_cpus();
	struct ia_counters c[256];
	__u64 v[256];
	__u32 k = 0;

	if (ncpu > 256)
		return 0;
	switch (src) {
	case PACE_USER:
		return 0;
	case PACE_SINK:
		return bpf_map_lookup_elem(bpf_map__fd(dut_sink->maps.sink_count), &k, v) ? 0 : v[0];
	default:
		k = s0_port;
		return bpf_map_lookup_elem(bpf_map__fd(gen->maps.gen_pace_ctr), &k, c) ? 0 :
		       c[0].c[IA_C_RX];
	}
}

static void *gen_thread(void *arg)
{
	struct xdp_md md = { .data_end = tmpl_len, .ingress_ifindex = g0 };
	int cpu = (long)arg;
	LIBBPF_OPTS(bpf_test_run_opts, o,
		.data_in = tmpl, .data_size_in = tmpl_len,
		.ctx_in = &md, .ctx_size_in = sizeof(md),
		.flags = BPF_F_TEST_XDP_LIVE_FRAMES, .repeat = 1 << 16, .batch_size = GEN_BATCH,
	);

	pin_cpu(cpu);
	if (enter_ns(ns_gen))
		return NULL;
	while (!atomic_load(&stop))
		if (bpf_prog_test_run_opts(bpf_program__fd(gen->progs.ia_gen), &o)) {
			fprintf(stderr, "xdp_bench: generator: %s\n", strerror(errno));
			break;
		}
	return NULL;
}

/* CPU 0's busy and idle jiffies (/proc/stat). */
static void cpu0_stat(unsigned long long *busy, unsigned long long *idle)
{
	unsigned long long v[8] = {};
	FILE *f = fopen("/proc/stat", "r");
	char line[512];

	*busy = *idle = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "cpu0 %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
			*idle = v[3] + v[4];
			*busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
			break;
		}
	if (f)
		fclose(f);
}

static double cpu0_busy;	/* of the last live() window */

/*
 * Split rig: CPU time of the device under test itself, read from the
 * scheduler's per-task run time (nanoseconds) of the NAPI kthreads and, for
 * user space, the recvmmsg threads. Unlike CPU 0's busy share it stays
 * exact at low load, where it only overstates the cost per packet (fewer
 * packets per wakeup), so a per-core figure from it is conservative.
 */
#define DUT_TIDS_MAX	8
static pid_t napi_tids[DUT_TIDS_MAX];
static int n_napi_tids;
static _Atomic pid_t us_tids[NCPU_MAX];
static double dut_ns;		/* of the last live() window */
static double live_pkts;	/* counted in the last live() window */

static __u64 task_ns(pid_t tid)
{
	unsigned long long ns = 0;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", tid);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%llu", &ns) != 1)
			ns = 0;
		fclose(f);
	}
	return ns;
}

static __u64 dut_runtime(void)
{
	__u64 ns = 0;
	int i;

	for (i = 0; i < n_napi_tids; i++)
		ns += task_ns(napi_tids[i]);
	for (i = 0; i < NCPU_MAX; i++)
		if (atomic_load(&us_tids[i]))
			ns += task_ns(atomic_load(&us_tids[i]));
	return ns;
}

/* Generates for LIVE_SECS on ncpu CPUs; returns the measured count's rate. */
static double live(int ncpu, __u64 (*count)(void))
{
	unsigned long long b0, i0, b1, i1;
	pthread_t t[NCPU_MAX];
	double t0, t1;
	__u64 c0, c1;
	long i;

	atomic_store(&stop, 0);
	gen->bss->pace_limit = 0;
	if (pace_src != PACE_OFF && ncpu == 1) {
		gen->bss->pace_src = pace_src;
		gen->bss->pace_port = s0_port;
		gen->bss->pace_cpu = 0;
		gen->bss->pace_done = 0;
		gen->bss->pace_done0 = dut_taken(pace_src);
		gen->bss->pace_sent = 0;
		gen->bss->pace_credit = 0;
		gen->bss->pace_stalled = 0;
		gen->bss->pace_moved = 0;
		gen->bss->pace_limit = PACE_LIMIT;
	}
	for (i = 0; i < ncpu; i++)
		spawn(&t[i], gen_thread, gen_first + i);
	usleep(200000);	/* warm up */
	c0 = count();
	cpu0_stat(&b0, &i0);
	dut_ns = -(double)dut_runtime();
	t0 = now();
	usleep(LIVE_SECS * 1e6);
	c1 = count();
	t1 = now();
	dut_ns += dut_runtime();
	live_pkts = c1 - c0;
	cpu0_stat(&b1, &i1);
	cpu0_busy = b1 + i1 > b0 + i0 ? (double)(b1 - b0) / (b1 + i1 - b0 - i0) : 0;
	/* The user-space receiver stops with the generator: unpace its last run. */
	if (pace_src == PACE_USER)
		gen->bss->pace_limit = 0;
	atomic_store(&stop, 1);
	for (i = 0; i < ncpu; i++)
		pthread_join(t[i], NULL);
	return interrupted ? -1 : (c1 - c0) / (t1 - t0);
}

static __u64 sink_total(struct inagg_bench *b)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	__u64 v[256] = {}, s = 0;
	__u32 k = 0;

	if (ncpu > 256 || bpf_map_lookup_elem(bpf_map__fd(b->maps.sink_count), &k, v))
		return 0;
	for (i = 0; i < ncpu; i++)
		s += v[i];
	return s;
}

static __u64 cnt_dut_sink(void)
{
	return sink_total(dut_sink);
}

static __u64 cnt_job(int c)
{
	struct ia_counters a, b;

	if (ia_xdp_job_counters(sw, JOB, &a) || ia_xdp_job_counters(sw, JOB + 1, &b))
		return 0;
	return a.c[c] + b.c[c];
}

static __u64 cnt_fwd(void)
{
	return cnt_job(IA_C_FWD);
}

static __u64 cnt_agg(void)
{
	return cnt_job(IA_C_AGGREGATED);
}

/*
 * The parameter-server alternative: recvmmsg and sum in user space, one
 * thread per CPU, each on its own socket and its own slots (no locking, no
 * duplicate detection: a generous baseline).
 */
static atomic_ulong us_msgs;
static int us_fd[NCPU_MAX];

static void *us_thread(void *arg)
{
	static __u8 bufs[NCPU_MAX][UDP_BATCH][IA_HDR_LEN + 4 * IA_CHUNK_DEFAULT];
	static __s32 slots[NCPU_MAX][WINDOW][IA_CHUNK_DEFAULT];
	int cpu = (long)arg, fd = us_fd[cpu], n, i, e;
	struct mmsghdr mm[UDP_BATCH];
	struct iovec iov[UDP_BATCH];

	pin_cpu(cpu);
	atomic_store(&us_tids[cpu], (pid_t)gettid());
	memset(mm, 0, sizeof(mm));
	for (i = 0; i < UDP_BATCH; i++) {
		iov[i].iov_base = bufs[cpu][i];
		iov[i].iov_len = sizeof(bufs[cpu][i]);
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	while (!atomic_load(&stop)) {
		n = recvmmsg(fd, mm, UDP_BATCH, MSG_WAITFORONE, NULL);
		for (i = 0; i < n; i++) {
			struct ia_hdr *h = (void *)bufs[cpu][i];
			__s32 *v = (void *)(h + 1), *s = slots[cpu][ntohl(h->seq) % WINDOW];

			for (e = 0; e < IA_CHUNK_DEFAULT; e++)
				s[e] += v[e];
		}
		if (n > 0) {
			atomic_fetch_add(&us_msgs, n);
			/* Read by ia_gen on another CPU (PACE_USER). */
			__atomic_fetch_add(&gen->bss->pace_done, n, __ATOMIC_RELEASE);
		}
	}
	atomic_store(&us_tids[cpu], 0);
	return NULL;
}

static __u64 cnt_us(void)
{
	return atomic_load(&us_msgs);
}

/* ncpu reuseport sockets in ns_sw; a datagram goes to socket[its CPU]. */
static int us_sockets(int ncpu)
{
	struct sock_filter by_cpu[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_CPU),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	struct sock_fprog prog = { .len = 2, .filter = by_cpu };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(IA_UDP_PORT) };
	/* recvmmsg's own timeout is only checked after a datagram arrives. */
	struct timeval to = { 0, 10000 };
	int home = netns_save(), one = 1, rcvbuf = 8 << 20, i, err = 0;

	if (enter_ns(ns_sw))
		return -EIO;
	for (i = 0; i < ncpu && !err; i++) {
		us_fd[i] = socket(AF_INET, SOCK_DGRAM, 0);
		if (us_fd[i] < 0 ||
		    setsockopt(us_fd[i], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
		    setsockopt(us_fd[i], SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) ||
		    setsockopt(us_fd[i], SOL_SOCKET, SO_RCVTIMEO, &to, sizeof(to)) ||
		    bind(us_fd[i], (struct sockaddr *)&a, sizeof(a)))
			err = -errno;
	}
	if (!err && setsockopt(us_fd[0], SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog,
			       sizeof(prog)))
		err = -errno;
	setns(home, CLONE_NEWNET);
	close(home);
	return err;
}

static double live_us(int ncpu)
{
	pthread_t t[NCPU_MAX];
	double r;
	long i;

	if (us_sockets(ncpu))
		return -1;
	atomic_store(&stop, 0);
	for (i = 0; i < ncpu; i++)
		spawn(&t[i], us_thread, i);
	usleep(100000);
	r = live(ncpu, cnt_us);
	atomic_store(&stop, 1);
	for (i = 0; i < ncpu; i++) {
		pthread_join(t[i], NULL);
		close(us_fd[i]);
	}
	return r;
}

static int set_dut(int prog_fd)
{
	int home = netns_save(), err;

	err = enter_ns(ns_sw);
	if (!err)
		err = bpf_xdp_attach(s0, prog_fd, XDP_FLAGS_DRV_MODE, NULL);
	setns(home, CLONE_NEWNET);
	close(home);
	return err;
}

enum { D_DROP, D_FLOOR, D_LOCK, D_ATOMIC, D_RED, D_BLUE, D_US, D__N };
static const char *const dut_name[D__N] = { "xdp_drop", "add_floor", "lock_floor",
					     "atomic_floor", "red_forward", "blue_aggregate",
					     "user-space" };

static double busy[D__N];	/* CPU 0's busy share while measuring each DUT */
static double dutnspp[D__N];	/* DUT CPU ns per packet (split rig) */

/* Live rate of every DUT on ncpu CPUs. */
static int measure(int d, int ncpu, double *r, __u64 (*count)(void), int src)
{
	pace_src = gen_first ? src : PACE_OFF;	/* only the split rig is paced */
	r[d] = d == D_US ? live_us(ncpu) : live(ncpu, count);
	if (pace_src != PACE_OFF && gen->bss->pace_stalled)
		printf("# warning: split %s: the DUT took nothing for 1 s; pacing given up\n",
		       dut_name[d]);
	busy[d] = cpu0_busy;
	dutnspp[d] = live_pkts ? dut_ns / live_pkts : 0;
	if (r[d] <= 0 && !interrupted && (d == D_RED || d == D_BLUE))
		fprintf(stderr, "xdp_bench: live %s counted nothing: forwarded %llu aggregated %llu "
			"drop_port %llu drop_window %llu\n", dut_name[d], cnt_job(IA_C_FWD),
			cnt_job(IA_C_AGGREGATED), cnt_job(IA_C_DROP_PORT),
			cnt_job(IA_C_DROP_WINDOW));
	return r[d] > 0 ? 0 : -EIO;
}

/* The last live_all()'s red job, before blue's replaced it. */
static __u64 red_fwd, red_drop_port;

static int live_all(int ncpu, double *r)
{
	if (set_dut(bpf_program__fd(dut_sink->progs.ia_sink)) ||
	    measure(D_DROP, ncpu, r, cnt_dut_sink, PACE_SINK))
		return -EIO;
	if (set_dut(bpf_program__fd(dut_sink->progs.ia_add_floor)) ||
	    measure(D_FLOOR, ncpu, r, cnt_dut_sink, PACE_SINK) ||
	    set_dut(bpf_program__fd(dut_sink->progs.ia_lock_floor)) ||
	    measure(D_LOCK, ncpu, r, cnt_dut_sink, PACE_SINK) ||
	    set_dut(bpf_program__fd(dut_sink->progs.ia_atomic_floor)) ||
	    measure(D_ATOMIC, ncpu, r, cnt_dut_sink, PACE_SINK))
		return -EIO;
	if (set_dut(ia_xdp_prog_fd(sw)) || job(IA_ROLE_RED) ||
	    measure(D_RED, ncpu, r, cnt_fwd, PACE_PORT_RX))
		return -EIO;
	red_fwd = cnt_job(IA_C_FWD);
	red_drop_port = cnt_job(IA_C_DROP_PORT);
	if (red_drop_port)
		printf("# warning: red on %d CPUs: forwarded %llu drop_port %llu\n", ncpu,
		       red_fwd, red_drop_port);
	if (job(IA_ROLE_BLUE) || measure(D_BLUE, ncpu, r, cnt_agg, PACE_PORT_RX))
		return -EIO;
	if (cnt_job(IA_C_DROP_WINDOW) || cnt_job(IA_C_DUP) || cnt_job(IA_C_DROP_PORT) ||
	    cnt_job(IA_C_EMIT) * FANIN > cnt_job(IA_C_AGGREGATED))
		printf("# warning: blue on %d CPUs: aggregated %llu emitted %llu window drops %llu "
		       "duplicates %llu drop_port %llu\n", ncpu, cnt_job(IA_C_AGGREGATED),
		       cnt_job(IA_C_EMIT), cnt_job(IA_C_DROP_WINDOW), cnt_job(IA_C_DUP),
		       cnt_job(IA_C_DROP_PORT));
	/* User space: XDP_PASS on s0, the kernel delivers to the sockets. */
	if (set_dut(bpf_program__fd(dut_sink->progs.ia_count_pass)))
		return -EIO;
	atomic_store(&us_msgs, 0);
	return measure(D_US, ncpu, r, NULL, PACE_USER);
}

static void print_rates(int ncpu, const double *r, const double *r1)
{
	int d;

	printf("live Mpps, %d CPU%s:", ncpu, ncpu > 1 ? "s" : " ");
	for (d = 0; d < D__N; d++)
		printf("  %s %.3f", dut_name[d], r[d] / 1e6);
	printf("\n");
	if (r1) {
		printf("  scaling 2 CPUs / 1 CPU:");
		for (d = 0; d < D__N; d++)
			printf("  %s %.2f", dut_name[d], r[d] / r1[d]);
		printf("\n");
	}
}

/*
 * Threaded NAPI on s0 (both queues), its kthreads pinned to CPU 0: the DUT
 * then runs on CPU 0 while the generator runs on CPU 1.
 */
static int napi_split(void)
{
	char path[300], comm[64];
	struct dirent *e;
	cpu_set_t set;
	int n = 0;
	DIR *d;
	FILE *f;

	if (sh("ip netns exec %s sh -c 'echo 1 > /sys/class/net/s0/threaded'", ns_sw))
		return -EIO;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	d = opendir("/proc");
	while (d && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		/* napi/s0-<id>: only our namespace has an s0 with threaded NAPI. */
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "napi/s0-", 8) &&
		    !sched_setaffinity(atoi(e->d_name), sizeof(set), &set)) {
			if (n_napi_tids < DUT_TIDS_MAX)
				napi_tids[n_napi_tids++] = atoi(e->d_name);
			n++;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return n ? 0 : -ENOENT;
}

/* Generator included: blue/xdp_drop bounds every ratio to user space here. */
static void print_ratios(int ncpu, const double *r)
{
	printf("ratio, %d CPU%s, generator included: blue/red_forward %.2f  blue/user-space %.1f  "
	       "blue/xdp_drop %.2f\n", ncpu, ncpu > 1 ? "s" : " ", r[D_BLUE] / r[D_RED],
	       r[D_BLUE] / r[D_US], r[D_BLUE] / r[D_DROP]);
}

/*
 * Split rig, SPLIT_ROUNDS rounds of every DUT in turn: the median and range
 * of the DUT's CPU time per packet, which is its cost on one core.
 */
#define SPLIT_ROUNDS	5
static double split_rate[SPLIT_ROUNDS][D__N], split_ns[SPLIT_ROUNDS][D__N];

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of DUT d over the rounds, and the range. */
static double median(double (*v)[D__N], int d, double *lo, double *hi)
{
	double s[SPLIT_ROUNDS];
	int k;

	for (k = 0; k < SPLIT_ROUNDS; k++)
		s[k] = v[k][d];
	qsort(s, SPLIT_ROUNDS, sizeof(s[0]), cmp_double);
	*lo = s[0];
	*hi = s[SPLIT_ROUNDS - 1];
	return s[SPLIT_ROUNDS / 2];
}

static void print_split(void)
{
	double ns[D__N], rate, lo, hi;
	int d;

	printf("split, DUT on CPU 0 (NAPI kthread, + recvmmsg thread for user-space), paced "
	       "generator on CPU 1, median of %d rounds:\n", SPLIT_ROUNDS);
	printf("  live Mpps:");
	for (d = 0; d < D__N; d++) {
		rate = median(split_rate, d, &lo, &hi);
		printf("  %s %.3f", dut_name[d], rate / 1e6);
	}
	printf("\n  DUT CPU ns/packet (min-max):");
	for (d = 0; d < D__N; d++) {
		ns[d] = median(split_ns, d, &lo, &hi);
		printf("  %s %.0f (%.0f-%.0f)", dut_name[d], ns[d], lo, hi);
	}
	printf("\n  per core Mpps (1e9 / DUT ns):");
	for (d = 0; d < D__N; d++)
		printf("  %s %.3f", dut_name[d], ns[d] > 0 ? 1e3 / ns[d] : 0);
	for (d = 0; d < D__N; d++)
		if (ns[d] <= 0) {
			printf("\n# warning: split: no DUT run time for %s\n", dut_name[d]);
			return;
		}
	printf("\n  last round's jobs, members %s (port s0, %s, UDP port %d): red forwarded %llu "
	       "drop_port %llu; blue aggregated %llu emitted %llu drop_port %llu",
	       bind_live ? "bound" : "unbound", GEN_SADDR, IA_UDP_PORT, red_fwd, red_drop_port, cnt_job(IA_C_AGGREGATED),
	       cnt_job(IA_C_EMIT), cnt_job(IA_C_DROP_PORT));
	printf("\nratio, split, per core: blue/red_forward %.2f (target >= 0.5)  blue/user-space "
	       "%.1f (target >= 8)  blue/xdp_drop %.2f\n", ns[D_RED] / ns[D_BLUE],
	       ns[D_US] / ns[D_BLUE], ns[D_DROP] / ns[D_BLUE]);
	printf("ratio, split, per core, floors/user-space (the most an XDP aggregator could be "
	       "here): add_floor %.1f  lock_floor %.1f  atomic_floor %.1f\n", ns[D_US] / ns[D_FLOOR],
	       ns[D_US] / ns[D_LOCK], ns[D_US] / ns[D_ATOMIC]);
}

int main(int argc, char **argv)
{
	double c_sink, c_red, c_blue, r1[D__N], r2[D__N];
	struct frame_spec f = {
		.saddr = inet_addr(GEN_SADDR), .daddr = inet_addr("10.88.0.2"),
		.type = IA_MSG_CONTRIB, .job = JOB, .nworkers = 1, .nelem = IA_CHUNK_DEFAULT,
		.sport = IA_UDP_PORT,	/* where a bound member sends from */
	};
	__s32 vals[IA_CHUNK_DEFAULT];
	struct ia_counters jc;
	int home = netns_save(), err = 1, pstats_fd = -1, ports_fd = -1, i;
	__u32 k;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	snprintf(ns_gen, sizeof(ns_gen), "ia-bg-%d", getpid());
	snprintf(ns_sw, sizeof(ns_sw), "ia-bs-%d", getpid());
	snprintf(ns_sink, sizeof(ns_sink), "ia-bd-%d", getpid());
	for (i = 0; i < IA_CHUNK_DEFAULT; i++)
		vals[i] = i;
	parse_mac("02:00:00:00:01:00", f.smac);
	parse_mac("02:00:00:00:02:00", f.dmac);
	f.vals = vals;
	tmpl_len = build_frame(tmpl, &f);

	if (libbpf_num_possible_cpus() < NCPU_MAX) {
		fprintf(stderr, "xdp_bench: needs %d CPUs\n", NCPU_MAX);
		return 1;
	}
	if (rig())
		goto out;
	/* Switch side: datapath on s0 and u0, sink behind u0. */
	if (enter_ns(ns_sw) || ia_xdp_open(NULL, &sw, NULL, 0))
		goto out;
	s0 = if_nametoindex("s0");
	u0 = if_nametoindex("u0");
	if (ia_xdp_attach(sw, s0, XDP_FLAGS_DRV_MODE, NULL, 0) ||
	    ia_xdp_attach(sw, u0, XDP_FLAGS_DRV_MODE, NULL, 0))
		goto out;
	pstats_fd = sw_map_fd("ia_pstats");
	ports_fd = sw_map_fd("ia_ports");
	k = s0;
	if (pstats_fd < 0 || ports_fd < 0 || bpf_map_lookup_elem(ports_fd, &k, &s0_port) ||
	    !s0_port)
		goto out;

	dut_sink = inagg_bench__open_and_load();
	fwd_sink = inagg_bench__open_and_load();
	gen = inagg_bench__open();
	if (!dut_sink || !fwd_sink || !gen ||
	    bpf_map__reuse_fd(gen->maps.gen_pace_ctr, pstats_fd) ||
	    bpf_map__reuse_fd(gen->maps.gen_pace_sink, bpf_map__fd(dut_sink->maps.sink_count)))
		goto out;
	gen->rodata->gen_fanin = FANIN;
	gen->rodata->gen_job = JOB;
	memcpy(gen->bss->gen_l2l4, tmpl, IA_L2L4_LEN);
	if (inagg_bench__load(gen))
		goto out;
	if (enter_ns(ns_sink) ||
	    bpf_xdp_attach(if_nametoindex("d0"), bpf_program__fd(fwd_sink->progs.ia_sink),
			   XDP_FLAGS_DRV_MODE, NULL))
		goto out;
	if (enter_ns(ns_gen))
		goto out;
	g0 = if_nametoindex("g0");
	/* Keeps ia_gen in the XDP dispatcher (see the top of this file). */
	if (bpf_xdp_attach(if_nametoindex("k0"), bpf_program__fd(gen->progs.ia_gen),
			   XDP_FLAGS_DRV_MODE, NULL))
		goto out;
	setns(home, CLONE_NEWNET);

	printf("# payload %d x int32 (%d-byte frames), blue fan-in %d, window %d\n", IA_CHUNK_DEFAULT,
	       tmpl_len, FANIN, WINDOW);
	/* Per-packet cost, BPF_PROG_TEST_RUN, one distinct message per run. */
	c_sink = tr_cost(bpf_program__fd(dut_sink->progs.ia_sink));
	if (job(IA_ROLE_RED))
		goto out;
	c_red = tr_cost(ia_xdp_prog_fd(sw));
	if (job(IA_ROLE_BLUE))
		goto out;
	c_blue = tr_cost(ia_xdp_prog_fd(sw));
	if (ia_xdp_job_counters(sw, JOB, &jc) || jc.c[IA_C_AGGREGATED] != TR_PACKETS)
		printf("# warning: test_run aggregated %llu of %d\n", jc.c[IA_C_AGGREGATED],
		       TR_PACKETS);
	printf("test_run ns/packet: xdp_drop %.1f  red_forward %.1f  blue_aggregate %.1f\n",
	       c_sink, c_red, c_blue);
	if (tail_vs_head())
		goto out;
	if (job(IA_ROLE_BLUE))
		goto out;

	if (interrupted)
		goto out;
	if (argc > 1 && !strcmp(argv[1], "-t")) {	/* test_run only */
		err = 0;
		goto out;
	}
	bind_live = !getenv("XDP_BENCH_UNBOUND");
	/* Live over veth: every DUT on CPU 0 alone, then on both CPUs. */
	if (argc < 2 || strcmp(argv[1], "-s")) {	/* -s: the split rig only */
		if (live_all(1, r1) || live_all(2, r2))
			goto out;
		print_rates(1, r1, NULL);
		print_rates(2, r2, r1);
		print_ratios(1, r1);
		print_ratios(2, r2);
	}

	/* DUT on CPU 0 (threaded NAPI), generator on CPU 1, paced. */
	gen_first = 1;
	if (napi_split())
		goto out;
	for (k = 0; k < SPLIT_ROUNDS; k++) {
		if (live_all(1, split_rate[k]))
			goto out;
		for (i = 0; i < D__N; i++) {
			split_ns[k][i] = dutnspp[i];
			if (busy[i] < 0.9)
				printf("# warning: split %s: CPU 0 only %.0f%% busy: the generator "
				       "set the rate\n", dut_name[i], 100 * busy[i]);
		}
	}
	print_split();
	err = 0;
out:
	setns(home, CLONE_NEWNET);
	if (err)
		fprintf(stderr, "xdp_bench: %s\n", interrupted ? "interrupted" : "setup failed");
	cleanup();
	if (pstats_fd >= 0)
		close(pstats_fd);
	if (ports_fd >= 0)
		close(ports_fd);
	inagg_bench__destroy(dut_sink);
	inagg_bench__destroy(fwd_sink);
	bpf_object__close(base_obj);
	return err;
}
