// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzzer's runner: the scenario's switch built twice, once as BPF maps
 * and programs (user/lib/xdp.h, veth ports in the caller's own network
 * namespace) and once as the model; each operation applied to both and the
 * outcome compared; a failing sequence shrunk (delta debugging: drop ever
 * smaller runs of operations while it still fails).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdp.h"
#include "sender.h"
#include "fuzz.h"

#define AGE_NONE	(3600ull * 1000000000)	/* 1 h: no holder gets old in a run */
#define IP_SW		htonl(0x0a090002)
#define IP_PS		htonl(0x0a090001)

static const __u8 mac_up_s[6] = { 2, 0, 0, 0, 3, 1 }, mac_up_d[6] = { 2, 0, 0, 0, 4, 1 };

/* The scenario (fuzz.h): members as the generator knows them (fuzz_gen.c keeps its own copy). */
static const struct m_member blue_m[] = { { 1, 1, 0 }, { 2, 1, 0 }, { FZ_BELOW, 2, 0 } };
static const struct m_member red_m[] = { { 1, 1, 0 }, { 2, 1, 0 } };
static const struct m_member ps_m[] = { { 1, 1, 1 }, { 2, 1, 2 }, { 3, 1, 4 },
					{ FZ_LOWER, 2, 0x18 }, { FZ_WHOLE, 5, 0x1f } };
static const struct m_member ina_m[] = { { 11, 1, 0 }, { 12, 1, 0 } };

static const struct {
	__u32 id, role, n;
	const struct m_member *m;
} jobs[] = {
	{ FZ_BLUE, IA_ROLE_BLUE, 3, blue_m }, { FZ_RED, IA_ROLE_RED, 2, red_m },
	{ FZ_PS, IA_ROLE_TAIL, 5, ps_m }, { FZ_INA, IA_ROLE_BLUE, 2, ina_m },
};
#define NJOBS	4

static int ifindex_of(const struct fz *z, int port)
{
	return port < FZ_NPORTS ? z->port[port] : 1;	/* lo: no port of the switch */
}

/*
 * Places (docs/security.md): the red job's members are bound to ports 1
 * and 2 (the generator sends from either, so half is drop_port), its
 * results to the PS's address, which the generator's frames never carry
 * with IA_UDP_PORT. The other jobs stay unbound. j NULL: the model's only.
 */
static void job_bind(struct fz *z, int i, struct ia_xdp_job *j, struct ia_xdp_bind *b)
{
	struct m_job *mj = m_job_find(&z->m, jobs[i].id);
	__u32 k;

	if (jobs[i].id != FZ_RED || !mj)
		return;
	for (k = 0; k < jobs[i].n; k++) {
		mj->mem[k].ifindex = z->port[1 + k % 2];
		if (j)
			b[k] = (struct ia_xdp_bind){ .ifindex = mj->mem[k].ifindex };
	}
	mj->ps_addr = IP_PS;
	if (j) {
		j->bind = b;
		j->ps_addr = IP_PS;
	}
}

/* Job i on both sides: up by port 0, results to ports 1 (its own address) and 2 (kept). */
static int job_add(struct fz *z, int i)
{
	struct ia_sender s[M_MAX_MEMBERS];
	struct ia_xdp_hop down[2] = {};
	struct m_hop mup = {}, mdown[2] = {};
	__u64 sets[M_MAX_MEMBERS];
	struct ia_xdp_bind b[M_MAX_MEMBERS];
	struct ia_xdp_job j = {
		.id = jobs[i].id, .role = jobs[i].role, .self_id = FZ_SELF,
		.nmembers = jobs[i].n, .members = s, .ndown = 2, .down = down,
		.up = { .ifindex = z->port[0], .saddr = IP_SW, .daddr = IP_PS },
	};
	__u32 k;

	if (jobs[i].role == IA_ROLE_BLUE)
		j.window = FZ_WINDOW;
	if (jobs[i].role == IA_ROLE_TAIL)
		j.sets = sets;
	for (k = 0; k < jobs[i].n; k++) {
		s[k].id = jobs[i].m[k].id;
		s[k].nworkers = jobs[i].m[k].nworkers;
		sets[k] = jobs[i].m[k].set;
	}
	memcpy(j.up.smac, mac_up_s, 6);
	memcpy(j.up.dmac, mac_up_d, 6);
	for (k = 0; k < 2; k++) {
		down[k].ifindex = z->port[1 + k];
		memcpy(down[k].smac, mac_up_d, 6);
		memcpy(down[k].dmac, mac_up_s, 6);
		down[k].dmac[5] = 0x10 + k;
		down[k].daddr = k ? 0 : htonl(0x0a09000b);
	}
	mup.ifindex = j.up.ifindex;
	memcpy(mup.smac, mac_up_s, 6);
	memcpy(mup.dmac, mac_up_d, 6);
	mup.saddr = IP_SW;
	mup.daddr = IP_PS;
	for (k = 0; k < 2; k++) {
		mdown[k].ifindex = down[k].ifindex;
		memcpy(mdown[k].smac, down[k].smac, 6);
		memcpy(mdown[k].dmac, down[k].dmac, 6);
		mdown[k].daddr = down[k].daddr;
	}
	z->m_up = mup;
	memcpy(z->m_down, mdown, sizeof(mdown));
	z->m_window[i] = j.window;
	if (m_job_add(&z->m, j.id, j.role, j.window, 0, FZ_SELF, jobs[i].n, jobs[i].m, &mup,
		      2, mdown))
		return -EINVAL;
	job_bind(z, i, &j, b);
	return ia_xdp_job_add(z->x, &j, NULL, 0);
}

/* The ids of the maps prog uses; how many. */
static __u32 prog_maps(int prog, __u32 *ids, __u32 max, char *name)
{
	struct bpf_prog_info pi = { .nr_map_ids = max, .map_ids = (__u64)(unsigned long)ids };
	__u32 len = sizeof(pi);

	if (bpf_obj_get_info_by_fd(prog, &pi, &len))
		return 0;
	if (name)
		memcpy(name, pi.name, sizeof(pi.name));
	return pi.nr_map_ids < max ? pi.nr_map_ids : max;
}

/*
 * This switch's maps: ia_xdp's, and those of the ia_tail that shares
 * ia_xdp's first map (other switches on the host have their own).
 */
static __u32 switch_maps(struct fz *z, __u32 *ids, __u32 max)
{
	__u32 n = prog_maps(z->prog, ids, max, NULL), t[64], nt, id = 0, i, k;
	char name[BPF_OBJ_NAME_LEN];
	int fd;

	while (n && !bpf_prog_get_next_id(id, &id)) {
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		nt = prog_maps(fd, t, 64, name);
		close(fd);
		if (strcmp(name, "ia_tail"))
			continue;
		for (i = 0; i < nt && t[i] != ids[0]; i++)
			;
		if (i == nt)
			continue;
		for (i = 0; i < nt && n < max; i++) {
			for (k = 0; k < n && ids[k] != t[i]; k++)
				;
			if (k == n)
				ids[n++] = t[i];
		}
		break;
	}
	return n;
}

/* Of ids, the map called name (an fd), or -1. */
static int map_named(const __u32 *ids, __u32 n, const char *name)
{
	struct bpf_map_info mi;
	__u32 i, len;
	int fd;

	for (i = 0; i < n; i++) {
		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		memset(&mi, 0, sizeof(mi));
		len = sizeof(mi);
		if (!bpf_obj_get_info_by_fd(fd, &mi, &len) && !strcmp(mi.name, name))
			return fd;
		close(fd);
	}
	return -1;
}

static int tail_set(struct fz *z, __u32 slots, int age_old, __u32 lend)
{
	struct ia_xdp_lend l = { .job = FZ_INA, .count = lend };
	struct ia_xdp_tail t = { .slots = slots, .age_ns = age_old ? 1 : AGE_NONE,
				 .nlend = !!lend, .lend = &l };
	struct m_lend ml = { FZ_INA, lend };

	m_tail_set(&z->m, slots, age_old, !!lend, &ml);
	z->tail[0] = slots;
	z->tail[1] = age_old;
	z->tail[2] = lend;
	return ia_xdp_tail_set(z->x, &t, NULL, 0);
}

/* Job or the pool (IA_TAIL_SLOT) with n empty slots, written in place. */
static int slots_clear(struct fz *z, __u32 job, __u32 n)
{
	struct ia_job_cfg cfg;
	struct ia_slot zero = {};
	__u32 key = IA_TAIL_SLOT, id, i;
	int fd, err = 0;

	if (job) {
		if (bpf_map_lookup_elem(z->jobs_fd, &job, &cfg))
			return -ENOENT;
		key = cfg.slot;
	}
	if (bpf_map_lookup_elem(z->slots_fd, &key, &id))
		return -ENOENT;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	for (i = 0; i < n && !err; i++)
		err = bpf_map_update_elem(fd, &i, &zero, 0);
	close(fd);
	return err;
}

/*
 * A fresh switch without reloading and, after the first, without a grace
 * period: the blue heads emptied in place, the tail published back to none
 * (only if it changed), counters counted from here; the model anew.
 */
static int reset(struct fz *z)
{
	struct fz_snap s;
	int i, err = 0;

	m_init(&z->m);
	for (i = 0; i < FZ_NPORTS; i++)
		m_port_add(&z->m, z->port[i]);
	for (i = 0; i < NJOBS && !err; i++) {
		if (z->jobs_fd < 0)
			err = job_add(z, i);
		else
			err = m_job_add(&z->m, jobs[i].id, jobs[i].role, z->m_window[i], 0,
					FZ_SELF, jobs[i].n, jobs[i].m, &z->m_up, 2, z->m_down);
		job_bind(z, i, NULL, NULL);
	}
	if (!err && z->jobs_fd >= 0)
		err = slots_clear(z, FZ_BLUE, FZ_WINDOW) ?: slots_clear(z, FZ_INA, FZ_WINDOW);
	if (!err && (z->tail[0] || z->tail[1] || z->tail[2] || z->jobs_fd < 0))
		err = tail_set(z, 0, 0, 0);
	else
		m_tail_set(&z->m, 0, 0, 0, NULL);
	if (err)
		return err;
	memset(z->jbase, 0, sizeof(z->jbase));
	memset(z->pbase, 0, sizeof(z->pbase));
	if (fz_snap(z, &s))
		return -EIO;
	memcpy(z->jbase, s.j, sizeof(s.j));
	memcpy(z->pbase, s.p, sizeof(s.p));
	if (z->jobs_fd < 0) {
		__u32 ids[64], n = switch_maps(z, ids, 64);

		z->jobs_fd = map_named(ids, n, "ia_jobs");
		z->slots_fd = map_named(ids, n, "ia_slots");
		if (z->jobs_fd < 0 || z->slots_fd < 0)
			return -ENOENT;
	}
	return 0;
}

int fz_keep_dispatched(struct ia_xdp *x, const char *name)
{
	char cmd[128];
	int ifindex;

	snprintf(cmd, sizeof(cmd), "ip link add %s type veth peer name %sp", name, name);
	if (system(cmd))
		return -EIO;
	ifindex = if_nametoindex(name);
	return ifindex ? ia_xdp_attach(x, ifindex, XDP_FLAGS_SKB_MODE, NULL, 0) : -ENODEV;
}

int fz_open(struct fz *z)
{
	char cmd[160];
	int i, err;

	memset(z, 0, sizeof(*z));
	z->jobs_fd = z->slots_fd = -1;
	for (i = 0; i < FZ_NPORTS; i++) {
		snprintf(cmd, sizeof(cmd), "ip link add fz%d type veth peer name fzp%d && "
			 "ip link set fz%d up && ip link set fzp%d up", i, i, i, i);
		if (system(cmd))
			return -EIO;
		snprintf(cmd, sizeof(cmd), "fz%d", i);
		z->port[i] = if_nametoindex(cmd);
	}
	err = ia_xdp_open(NULL, &z->x, NULL, 0);
	if (err)
		return err;
	for (i = 0; i < FZ_NPORTS && !err; i++)
		err = ia_xdp_port_add(z->x, z->port[i]);
	z->prog = ia_xdp_prog_fd(z->x);
	return err ?: fz_keep_dispatched(z->x, "fzd") ?: reset(z);
}

void fz_close(struct fz *z)
{
	fz_inner_close(z);
	if (z->jobs_fd >= 0)
		close(z->jobs_fd);
	if (z->slots_fd >= 0)
		close(z->slots_fd);
	ia_xdp_close(z->x);
	z->x = NULL;
}

int fz_load_mutant(struct fz *z, const char *path)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *p;
	struct bpf_map *map;
	__u32 key, ids[64], n;
	int fd, progs, err;

	if (!obj)
		return -errno;
	n = switch_maps(z, ids, 64);
	/* Every map the tail's programs use must be the switch's: a private one would differ. */
	bpf_object__for_each_map(map, obj) {
		fd = map_named(ids, n, bpf_map__name(map));
		if (fd < 0) {
			if (bpf_map__name(map)[0] != '.' &&
			    (strstr("ia_progs ia_slots ia_tdir ia_jstats ia_locks",
				    bpf_map__name(map))))
				return -ENOENT;
			continue;
		}
		err = bpf_map__reuse_fd(map, fd);
		close(fd);
		if (err)
			return err;
	}
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), "ia_tail") ||
					  !strcmp(bpf_program__name(p), "ia_evict"));
	err = bpf_object__load(obj);
	if (err)
		return err;
	progs = bpf_map__fd(bpf_object__find_map_by_name(obj, "ia_progs"));
	key = IA_PROGS_TAIL;
	fd = bpf_program__fd(bpf_object__find_program_by_name(obj, "ia_tail"));
	err = bpf_map_update_elem(progs, &key, &fd, 0);
	key = IA_PROGS_EVICT;
	fd = bpf_program__fd(bpf_object__find_program_by_name(obj, "ia_evict"));
	return err ?: bpf_map_update_elem(progs, &key, &fd, 0);
}

/* One operation on both sides; for a frame, 1 if the outcomes differ. */
static __u64 now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

static int apply_op(struct fz *z, long at, const struct fz_op *op, struct fz_snap *snap,
		    struct fz_diff *d);

/* One operation on both sides, timed. */
static int apply(struct fz *z, long at, const struct fz_op *op, struct fz_snap *snap,
		 struct fz_diff *d)
{
	__u64 t = now_ns();
	int r = apply_op(z, at, op, snap, d);

	if (op->kind == FZ_FRAME) {
		z->ns_frames += now_ns() - t;
	} else {
		z->ns_cfg += now_ns() - t;
		z->ncfg++;
	}
	return r;
}

static int apply_op(struct fz *z, long at, const struct fz_op *op, struct fz_snap *snap,
		    struct fz_diff *d)
{
	static __u8 in[M_FRAME_MAX + 64], out[M_FRAME_MAX];
	int len, err, ifindex, b;
	struct xdp_md md = {};
	__u64 t;
	LIBBPF_OPTS(bpf_test_run_opts, o);

	if (op->kind == FZ_TAIL) {
		err = tail_set(z, op->slots, op->age_old, op->lend);
		goto resnap;
	}
	if (op->kind == FZ_READD) {
		ia_xdp_job_del(z->x, FZ_PS);
		m_job_del(&z->m, FZ_PS);
		err = job_add(z, 2);
		memset(z->jbase[2], 0, sizeof(z->jbase[2]));	/* counters zeroed by the add */
		goto resnap;
	}
	len = fz_frame(op, in);
	ifindex = ifindex_of(z, op->port);
	md.data_end = len;
	md.ingress_ifindex = ifindex;
	o.data_in = in;
	o.data_size_in = len;
	o.data_out = out;
	o.data_size_out = sizeof(out);
	o.ctx_in = &md;
	o.ctx_size_in = sizeof(md);
	t = now_ns();
	err = bpf_prog_test_run_opts(z->prog, &o);
	z->ns_run += now_ns() - t;
	if (err) {
		d->at = at;
		snprintf(d->what, sizeof(d->what), "test_run failed: %d", err);
		return 1;
	}
	t = now_ns();
	m_rx(&z->m, ifindex, in, len, &z->o);
	z->ns_model += now_ns() - t;
	z->frames++;
	for (b = 0; b < MB__N; b++)
		if (z->o.branches >> b & 1)
			z->cover[b]++;
	return fz_check(z, at, op->port, o.retval, out, o.data_size_out, snap, d);
resnap:
	if (err || fz_snap(z, snap)) {
		d->at = at;
		snprintf(d->what, sizeof(d->what), "configuration failed: %d", err);
		return 1;
	}
	return 0;
}

int fz_run(struct fz *z, const struct fz_op *ops, long n, struct fz_diff *d)
{
	struct fz_snap snap;
	long i;

	d->at = -1;
	d->what[0] = 0;
	if (reset(z) || fz_snap(z, &snap)) {
		snprintf(d->what, sizeof(d->what), "reset failed");
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (z->deadline && !(i % 64) && time(NULL) >= z->deadline) {
			z->stopped = 1;
			return 0;
		}
		if (apply(z, i, &ops[i], &snap, d))
			return 1;
	}
	return 0;
}

/*
 * Delta debugging: the sequence is cut after its first mismatch, then runs
 * of n/2, n/4, ... 1 operations are dropped while it still fails (any
 * mismatch: a smaller witness of another disagreement is as good).
 * budget: runs at most.
 */
void fz_shrink(struct fz *z, struct fz_op *ops, long *n, struct fz_diff *d, int budget)
{
	struct fz_op *t = malloc(*n * sizeof(*ops));
	struct fz_diff td;
	long chunk, start, k;

	if (!t)
		return;
	*n = d->at + 1;
	chunk = *n / 2;
	while (chunk >= 1 && budget > 0) {
		int cut = 0;

		for (start = 0; start < *n && budget > 0; budget--) {
			k = 0;
			memcpy(t, ops, start * sizeof(*ops));
			k = start;
			if (start + chunk < *n) {
				memcpy(t + k, ops + start + chunk, (*n - start - chunk) * sizeof(*ops));
				k += *n - start - chunk;
			}
			if (k && fz_run(z, t, k, &td) == 1) {
				*n = td.at + 1;
				memcpy(ops, t, *n * sizeof(*ops));
				*d = td;
				cut = 1;
			} else {
				start += chunk;
			}
		}
		if (!cut || chunk > *n / 2)
			chunk /= 2;
	}
	free(t);
	fz_run(z, ops, *n, d);	/* leaves d and the counters as of the witness */
}

void fz_report(FILE *f, __u64 seed, const struct fz_op *ops, long n, const struct fz_diff *d)
{
	long i;

	fprintf(f, "# MISMATCH seed %llu, %ld operations: at %ld: %s\n",
		(unsigned long long)seed, n, d->at, d->what);
	for (i = 0; i < n; i++)
		fz_print_op(f, i, &ops[i]);
	fflush(f);	/* the harness's child exits without flushing */
}

void fz_rate(FILE *f, const struct fz *z)
{
	fprintf(f, "# %llu frames in %.1f s (%.0f frames/s; test_run %.1f s, model %.1f s, "
		"counters %.1f s, slots %.1f s); %llu configuration changes in %.1f s\n",
		(unsigned long long)z->frames, z->ns_frames / 1e9,
		z->ns_frames ? z->frames / (z->ns_frames / 1e9) : 0.0, z->ns_run / 1e9,
		z->ns_model / 1e9, z->ns_snap / 1e9, z->ns_slots / 1e9,
		(unsigned long long)z->ncfg, z->ns_cfg / 1e9);
	if (z->noslots)
		fprintf(f, "# slot budget spent: the last %llu frames compared without their slots\n",
			(unsigned long long)z->noslots);
	fflush(f);
}

void fz_coverage(FILE *f, const struct fz *z)
{
	int b, missed = 0;

	fprintf(f, "# coverage of the model's branches over %llu frames:\n",
		(unsigned long long)z->frames);
	for (b = 0; b < MB__N; b++) {
		fprintf(f, "#   %-36s %12llu%s\n", m_branch_name[b],
			(unsigned long long)z->cover[b], z->cover[b] ? "" : "   NOT REACHED");
		missed += !z->cover[b];
	}
	fprintf(f, "# %d of %d branches reached\n", MB__N - missed, MB__N);
	fflush(f);
}
