// SPDX-License-Identifier: GPL-2.0
/*
 * Loader of the XDP datapath: maps and programs of a switch, pinned and
 * reused, kernel feature probes, libbpf's messages and errors. See xdp.h and
 * docs/datapath.md; jobs are pushed by xdp_push.c, ports by xdp_attach.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <linux/membarrier.h>
#include <bpf/bpf.h>

#include "err.h"
#include "xdp_int.h"

#define BPF_FS_MAGIC_NR	0xcafe4a11
#define BPF_FS_DIR	"/sys/fs/bpf"
#define BPF_FS_PARENT	"/sys/fs"
#define LOG_TAIL_LINES	20	/* of libbpf's and the verifier's messages, after a failed load */

static const char *const ctr_names[IA_C__COUNT] = {
	[IA_C_RX]		= "rx",
	[IA_C_TX]		= "tx",
	[IA_C_FWD]		= "forwarded",
	[IA_C_AGGREGATED]	= "aggregated",
	[IA_C_EMIT]		= "emitted",
	[IA_C_REEMIT]		= "reemitted",
	[IA_C_DUP]		= "duplicates",
	[IA_C_ANSWER]		= "answered",
	[IA_C_RESULT]		= "results",
	[IA_C_RESULT_EXTRA]	= "results_extra",
	[IA_C_PASS]		= "passed",
	[IA_C_RECOVERY_RX]	= "recovery_rx",
	[IA_C_RECOVERY_TX]	= "recovery_tx",
	[IA_C_TAIL_CLAIM]	= "tail_claims",
	[IA_C_TAIL_LENT]	= "tail_lent_claims",
	[IA_C_TAIL_HIT]		= "tail_hits",
	[IA_C_TAIL_COLL]	= "tail_collisions",
	[IA_C_TAIL_COMPLETE]	= "tail_completes",
	[IA_C_TAIL_FLUSH]	= "tail_flushes",
	[IA_C_TAIL_EVICT]	= "tail_evictions",
	[IA_C_TAIL_DISCARD]	= "tail_discards",
	[IA_C_TAIL_RETX]	= "tail_retx",
	[IA_C_DROP_SHORT]	= "drop_short",
	[IA_C_DROP_VERSION]	= "drop_version",
	[IA_C_DROP_TYPE]	= "drop_type",
	[IA_C_DROP_NELEM]	= "drop_nelem",
	[IA_C_DROP_JOB]		= "drop_job",
	[IA_C_DROP_MEMBER]	= "drop_member",
	[IA_C_DROP_WINDOW]	= "drop_window",
	[IA_C_DROP_SET]		= "drop_set",
	[IA_C_TAIL_BYPASS]	= "tail_bypassed",
};

const char *ia_ctr_name(enum ia_ctr c)
{
	return (unsigned int)c < IA_C__COUNT ? ctr_names[c] : NULL;
}

/* ---- errors and libbpf's messages ---- */

static bool verbose;
static libbpf_print_fn_t app_print;	/* what the application had set: NULL silences libbpf */
static __thread char log_tail[8192];	/* libbpf's last warnings (verifier log included) */
static __thread size_t log_len;
static __thread char msg[IA_ERRLEN + sizeof(log_tail)];
static __thread int msg_err;

/*
 * Kept for the error of a failed load; printed as the application asked
 * (libbpf_set_print() before opening a switch) or with ia_xdp_set_verbose().
 */
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *s = NULL;
	size_t n, keep;
	va_list aq;

	va_copy(aq, ap);
	if (verbose && level != LIBBPF_DEBUG)
		vfprintf(stderr, fmt, aq);
	else if (app_print)
		app_print(level, fmt, aq);
	va_end(aq);
	if (level != LIBBPF_WARN || vasprintf(&s, fmt, ap) < 0)
		return 0;
	n = strlen(s);
	if (n >= sizeof(log_tail)) {
		memcpy(log_tail, s + n - (sizeof(log_tail) - 1), sizeof(log_tail) - 1);
		log_len = sizeof(log_tail) - 1;
	} else {
		keep = log_len + n < sizeof(log_tail) ? log_len : sizeof(log_tail) - 1 - n;
		memmove(log_tail, log_tail + log_len - keep, keep);
		memcpy(log_tail + keep, s, n);
		log_len = keep + n;
	}
	log_tail[log_len] = '\0';
	free(s);
	return 0;
}

void ia_xdp_set_verbose(bool on)
{
	verbose = on;
}

/* What the kernel's own codes (above 511) mean; strerror() knows them not. */
static const char *errname(int err)
{
	switch (-err) {
	case 524:
		return "operation not supported by this kernel (ENOTSUPP)";
	case 525:
		return "buffer too small (ETOOSMALL)";
	default:
		return strerror(-err);
	}
}

int ia_xdp_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	msg_err = err;
	return err;
}

int ia_xdp_share_maps(struct ia_xdp *x, struct bpf_object *obj)
{
	struct bpf_map *m, *mine;
	int err;

	bpf_object__for_each_map(m, obj) {
		mine = bpf_object__find_map_by_name(x->skel->obj, bpf_map__name(m));
		err = mine ? bpf_map__reuse_fd(m, bpf_map__fd(mine)) : 0;
		if (err)
			return err;
	}
	return 0;
}

const char *ia_xdp_strerror(int err)
{
	if (err && err == msg_err && msg[0])
		return msg;
	return errname(err);
}

/* err of a failed load, and the tail of what libbpf and the verifier said. */
static int load_failed(int err)
{
	const char *tail = log_tail + log_len;
	int lines = 0;

	while (tail > log_tail && lines <= LOG_TAIL_LINES)
		if (*--tail == '\n' && tail + 1 < log_tail + log_len)
			lines++;
	if (lines > LOG_TAIL_LINES)
		tail++;
	return ia_xdp_fail(err, "loading the datapath: %s%s%s", errname(err),
			   log_len ? "; libbpf said:\n" : "", tail);
}

/* ---- kernel features ---- */

static const struct {
	enum bpf_map_type type;
	const char *what;
} need_maps[] = {
	{ BPF_MAP_TYPE_HASH,		"hash maps" },
	{ BPF_MAP_TYPE_ARRAY,		"array maps" },
	{ BPF_MAP_TYPE_PERCPU_ARRAY,	"per-CPU array maps (Linux 4.6)" },
	{ BPF_MAP_TYPE_ARRAY_OF_MAPS,	"array-of-maps maps (Linux 4.12)" },
	{ BPF_MAP_TYPE_DEVMAP_HASH,	"devmap-hash maps (Linux 5.4)" },
};

static const struct {
	enum bpf_func_id id;
	const char *what;
} need_helpers[] = {
	{ BPF_FUNC_redirect_map,	"bpf_redirect_map() in XDP (Linux 4.14)" },
	{ BPF_FUNC_spin_lock,		"bpf_spin_lock() in XDP (Linux 5.1)" },
};

static int missing(const char *what)
{
	struct utsname u;

	if (uname(&u))
		strcpy(u.release, "?");
	return ia_xdp_fail(-EOPNOTSUPP, "this kernel (%s) lacks %s, which the inagg datapath needs "
			   "(Linux 5.15 or later; Debian 12's 6.1 works)", u.release, what);
}

static int probe_failed(int err)
{
	return ia_xdp_fail(err, "probing the kernel's BPF features: %s (root, or CAP_BPF and "
			   "CAP_NET_ADMIN, needed)", errname(err));
}

/* Names what this kernel lacks, instead of an errno from deep inside a load. */
static int probe_features(void)
{
	size_t i;
	int r, fd;

	r = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_XDP, NULL);
	if (r <= 0)
		return r ? probe_failed(r) : missing("XDP programs (Linux 4.8)");
	for (i = 0; i < sizeof(need_maps) / sizeof(need_maps[0]); i++) {
		r = libbpf_probe_bpf_map_type(need_maps[i].type, NULL);
		if (r <= 0)
			return r ? probe_failed(r) : missing(need_maps[i].what);
	}
	for (i = 0; i < sizeof(need_helpers) / sizeof(need_helpers[0]); i++) {
		r = libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, need_helpers[i].id, NULL);
		if (r <= 0)
			return r ? probe_failed(r) : missing(need_helpers[i].what);
	}
	/* Devmap entries that run a program (ia_egress) have a larger value. */
	fd = bpf_map_create(BPF_MAP_TYPE_DEVMAP_HASH, NULL, sizeof(__u32),
			    sizeof(struct bpf_devmap_val), 1, NULL);
	if (fd < 0)
		return fd == -EINVAL ? missing("programs on devmap entries (Linux 5.8)") :
				       probe_failed(fd);
	close(fd);
	return 0;
}

/* ---- pins ---- */

static int pin_dir(const char *sw, char *buf, size_t len)
{
	if (!sw || !*sw || strchr(sw, '/') || !strcmp(sw, ".") || !strcmp(sw, ".."))
		return ia_xdp_fail(-EINVAL, "invalid switch name '%s'", sw ? sw : "");
	if ((size_t)snprintf(buf, len, "%s/%s", IA_BPFFS_ROOT, sw) >= len)
		return ia_xdp_fail(-ENAMETOOLONG, "switch name too long");
	return 0;
}

/* Like iproute2: mount bpffs where it is expected if nobody did. */
static int ensure_bpffs(void)
{
	struct statfs st;

	if (statfs(BPF_FS_DIR, &st))
		return -errno;
	if (st.f_type == BPF_FS_MAGIC_NR)
		return 0;
	if (mount("bpf", BPF_FS_DIR, "bpf", 0, "mode=0700"))
		return ia_xdp_fail(-errno, "mounting bpffs on %s: %s", BPF_FS_DIR, strerror(errno));
	return 0;
}

static int mkdir_p(const char *dir)
{
	if (mkdir(IA_BPFFS_ROOT, 0700) && errno != EEXIST)
		return -errno;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * libbpf 1.1 refuses to reuse a pinned devmap: the kernel adds
 * BPF_F_RDONLY_PROG to its flags. Reuse it by hand; 1 if it must be pinned.
 */
static int reuse_devmap(struct bpf_map *map, const char *path)
{
	int fd = bpf_obj_get(path), err;

	if (fd < 0)
		return errno == ENOENT ? 1 : -errno;
	err = bpf_map__reuse_fd(map, fd);
	close(fd);
	return err;
}

/* bpffs names cannot hold a dot: no "ia_xdp.prog". */
static const char *const prog_pin[IA_PROG__N] = {
	[IA_PROG_XDP]	 = "prog_ia_xdp",
	[IA_PROG_EGRESS] = "prog_ia_egress",
	[IA_PROG_PASS]	 = "prog_ia_pass",
	[IA_PROG_SPARSE] = "prog_ia_sparse",
	[IA_PROG_HOLD]	 = "prog_ia_hold",
};

/* dir/name, which fits: dir is a pin_dir() and names are short. */
static void pin_path(char *buf, const char *dir, const char *name)
{
	if ((size_t)snprintf(buf, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
		buf[0] = '\0';
}

static __u32 obj_id(int fd)
{
	struct bpf_prog_info info = {};	/* id: the same offset in map info */
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

bool ia_xdp_prog_uses_map(int prog_fd, __u32 map_id)
{
	__u32 ids[64], len, i;
	struct bpf_prog_info info = {};

	len = sizeof(info);
	info.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return false;
	for (i = 0; i < info.nr_map_ids && i < sizeof(ids) / sizeof(ids[0]); i++)
		/* cppcheck-suppress uninitvar ; the kernel wrote nr_map_ids ids (info.map_ids) */
		if (ids[i] == map_id)
			return true;
	return false;
}

/*
 * The switch's pinned programs, if all are there and use its maps (a pin of
 * an older set of maps is removed); 1 if reused.
 */
static int reuse_progs(struct ia_xdp *x, const char *dir)
{
	char path[PATH_MAX];
	int i, fd, n = 0;
	__u32 jobs;

	pin_path(path, dir, "ia_jobs");
	fd = bpf_obj_get(path);
	jobs = fd < 0 ? 0 : obj_id(fd);
	if (fd >= 0)
		close(fd);
	for (i = 0; i < IA_PROG__N; i++) {
		pin_path(path, dir, prog_pin[i]);
		x->prog_fd[i] = bpf_obj_get(path);
		n += x->prog_fd[i] >= 0;
	}
	if (n == IA_PROG__N && jobs && ia_xdp_prog_uses_map(x->prog_fd[IA_PROG_XDP], jobs))
		return 1;
	for (i = 0; i < IA_PROG__N; i++) {
		if (x->prog_fd[i] >= 0)
			close(x->prog_fd[i]);
		x->prog_fd[i] = -1;
		pin_path(path, dir, prog_pin[i]);
		unlink(path);
	}
	return 0;
}

/* Pins the programs loaded here; one another process pinned first wins. */
static int pin_progs(struct ia_xdp *x, const char *dir)
{
	char path[PATH_MAX];
	int i, fd;

	for (i = 0; i < IA_PROG__N; i++) {
		pin_path(path, dir, prog_pin[i]);
		if (!bpf_obj_pin(x->prog_fd[i], path))
			continue;
		if (errno != EEXIST)
			return ia_xdp_fail(-errno, "pinning %s: %s", path, strerror(errno));
		fd = bpf_obj_get(path);
		if (fd < 0)
			return -errno;
		close(x->prog_fd[i]);
		x->prog_fd[i] = fd;
	}
	return 0;
}

/* ---- open / close ---- */

static void keep_inner(struct ia_xdp *x, int i, struct bpf_map *outer)
{
	struct bpf_map *m = bpf_map__inner_map(outer);

	x->inner[i] = (struct ia_xdp_inner){
		.type = bpf_map__type(m),
		.key_size = bpf_map__key_size(m),
		.value_size = bpf_map__value_size(m),
		.flags = bpf_map__map_flags(m),
		.key_type_id = bpf_map__btf_key_type_id(m),
		.value_type_id = bpf_map__btf_value_type_id(m),
	};
}

/* Pin paths of the maps; the devmap's own path if it must be pinned after load. */
static int pin_maps(struct ia_xdp *x, const char *dir, char *dports_path, bool *dports_new)
{
	char path[PATH_MAX];
	struct bpf_map *map;
	int err;

	bpf_object__for_each_map(map, x->skel->obj) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
				     bpf_map__name(map)) >= sizeof(path))
			return -ENAMETOOLONG;
		if (map == x->skel->maps.ia_dports) {
			strcpy(dports_path, path);
			err = reuse_devmap(map, path);
			if (err < 0)
				return err;
			*dports_new = err;
			continue;
		}
		err = bpf_map__set_pin_path(map, path);
		if (err)
			return err;
	}
	return 0;
}

static int open_switch(const char *sw, bool create, struct ia_xdp **out)
{
	char dir[PATH_MAX], dports_path[PATH_MAX];
	libbpf_print_fn_t prev;
	struct bpf_program *prog;
	bool dports_new = false;
	int err, i, reused = 0, lock = -1;
	struct ia_xdp *x;

	prev = libbpf_set_print(libbpf_log);
	if (prev != libbpf_log)
		app_print = prev;
	log_len = 0;
	log_tail[0] = '\0';
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	for (i = 0; i < IA_PROG__N; i++)
		x->prog_fd[i] = -1;
	x->ncpus = libbpf_num_possible_cpus();
	if (x->ncpus <= 0) {
		err = x->ncpus ? x->ncpus : -EINVAL;
		goto err;
	}
	x->skel = inagg__open();
	if (!x->skel) {
		err = -errno;
		goto err;
	}
	if (sw) {
		err = pin_dir(sw, dir, sizeof(dir));
		if (err)
			goto err;
		if (!create && access(dir, F_OK)) {
			err = ia_xdp_fail(-ENOENT, "switch %s is not set up here (nothing pinned "
					  "in %s)", sw, dir);
			goto err;
		}
		/* One at a time mounts bpffs and pins (/sys/fs: the same folder after a mount). */
		lock = open(BPF_FS_PARENT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		err = lock < 0 || flock(lock, LOCK_EX) ? -errno : ensure_bpffs() ?: mkdir_p(dir) ?:
		      pin_maps(x, dir, dports_path, &dports_new);
		if (err)
			goto err;
		reused = reuse_progs(x, dir);
	}
	if (reused) {
		bpf_object__for_each_program(prog, x->skel->obj)
			bpf_program__set_autoload(prog, false);
	} else {
		err = probe_features();
		if (err)
			goto err;
	}
	keep_inner(x, IA_INNER_SLOTS, x->skel->maps.ia_slots);
	keep_inner(x, IA_INNER_MTAB, x->skel->maps.ia_mtab);
	keep_inner(x, IA_INNER_JFAST, x->skel->maps.ia_jfast);
	keep_inner(x, IA_INNER_TDIR, x->skel->maps.ia_tdir);
	err = inagg__load(x->skel);
	if (err) {
		err = load_failed(err);
		goto err;
	}
	if (dports_new && bpf_obj_pin(bpf_map__fd(x->skel->maps.ia_dports), dports_path)) {
		err = -errno;
		goto err;
	}
	if (!reused) {
		x->prog_fd[IA_PROG_XDP] = dup(bpf_program__fd(x->skel->progs.ia_xdp));
		x->prog_fd[IA_PROG_EGRESS] = dup(bpf_program__fd(x->skel->progs.ia_egress));
		x->prog_fd[IA_PROG_PASS] = dup(bpf_program__fd(x->skel->progs.ia_pass));
		x->prog_fd[IA_PROG_SPARSE] = dup(bpf_program__fd(x->skel->progs.ia_sparse));
		x->prog_fd[IA_PROG_HOLD] = dup(bpf_program__fd(x->skel->progs.ia_hold));
		for (i = 0; i < IA_PROG__N; i++)
			if (x->prog_fd[i] < 0) {
				err = -errno;
				goto err;
			}
		/*
		 * ia_xdp tail-calls the sparse datapath (bpf/dp_sparse.h) and ia_hold.
		 * Keys named, not compound literals: cppcheck 2.10 cannot parse those here.
		 */
		__u32 sparse = IA_TAIL_SPARSE, hold = IA_PROGS_HOLD;

		err = bpf_map_update_elem(bpf_map__fd(x->skel->maps.ia_progs), &sparse,
					  &x->prog_fd[IA_PROG_SPARSE], BPF_ANY);
		if (!err)
			err = bpf_map_update_elem(bpf_map__fd(x->skel->maps.ia_progs), &hold,
						  &x->prog_fd[IA_PROG_HOLD], BPF_ANY);
		if (err)
			goto err;
		if (sw) {
			err = pin_progs(x, dir);
			if (err)
				goto err;
		}
	}
	for (i = 0; i < IA_PROG__N; i++)
		x->prog_id[i] = obj_id(x->prog_fd[i]);
	x->jobs_map_id = obj_id(bpf_map__fd(x->skel->maps.ia_jobs));
	*out = x;
	x = NULL;	/* err is 0 */
err:
	if (lock >= 0)
		close(lock);
	ia_xdp_close(x);
	return err;
}

int ia_xdp_open(const char *sw, struct ia_xdp **out)
{
	return open_switch(sw, true, out);
}

int ia_xdp_open_existing(const char *sw, struct ia_xdp **out)
{
	if (!sw)
		return -EINVAL;
	return open_switch(sw, false, out);
}

void ia_xdp_close(struct ia_xdp *x)
{
	int i;

	if (!x)
		return;
	for (i = 0; i < IA_PROG__N; i++)
		if (x->prog_fd[i] >= 0)
			close(x->prog_fd[i]);
	inagg__destroy(x->skel);
	free(x);
}

int ia_xdp_unpin(const char *sw)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int err;

	err = pin_dir(sw, dir, sizeof(dir));
	if (err)
		return err;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
			continue;
		if (unlink(path) && !err)
			err = -errno;
	}
	closedir(d);
	if (rmdir(dir) && !err)
		err = -errno;
	return err;
}

int ia_xdp_prog_fd(struct ia_xdp *x)
{
	return x->prog_fd[IA_PROG_XDP];
}

int ia_xdp_egress_fd(struct ia_xdp *x)
{
	return x->prog_fd[IA_PROG_EGRESS];
}

/*
 * The datapath runs under RCU, and MEMBARRIER_CMD_GLOBAL is a
 * synchronize_rcu(). Called before a job slot or port index is reused.
 */
void ia_xdp_rcu_wait(void)
{
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		usleep(100000);	/* nohz_full: no global barrier; grace periods are ms */
}
