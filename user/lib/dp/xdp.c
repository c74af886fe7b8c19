// SPDX-License-Identifier: GPL-2.0
/*
 * Loader of the XDP datapath: opening and closing a switch's maps and
 * programs. See xdp.h and docs/datapath.md; its errors and libbpf's
 * messages are xdp_log.c, the kernel's features xdp_probe.c, the pins
 * xdp_pin.c; jobs are pushed by xdp_push.c, ports by xdp_attach.c.
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

#define BPF_FS_PARENT	"/sys/fs"

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
	[IA_C_DROP_PORT]	= "drop_port",
};

const char *ia_ctr_name(enum ia_ctr c)
{
	return (unsigned int)c < IA_C__COUNT ? ctr_names[c] : NULL;
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

static int open_switch(const char *sw, bool create, struct ia_xdp **out, char *why,
		       size_t whylen)
{
	char dir[PATH_MAX], dports_path[PATH_MAX];
	struct bpf_program *prog;
	bool dports_new = false;
	int err, i, reused = 0, lock = -1;
	struct ia_xdp *x;

	ia_xdp_log_reset();
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
		err = ia_xdp_pin_dir(sw, dir, sizeof(dir), why, whylen);
		if (err)
			goto err;
		if (!create && access(dir, F_OK)) {
			err = ia_fail(why, whylen, -ENOENT, "switch %s is not set up here (nothing "
				      "pinned in %s)", sw, dir);
			goto err;
		}
		/* One at a time mounts bpffs and pins (/sys/fs: the same folder after a mount). */
		lock = open(BPF_FS_PARENT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		err = lock < 0 || flock(lock, LOCK_EX) ? -errno :
		      ia_xdp_ensure_bpffs(why, whylen) ?: ia_xdp_pin_mkdir(dir) ?:
		      ia_xdp_pin_layout(sw, dir, why, whylen) ?:
		      ia_xdp_pin_maps(x, dir, dports_path, &dports_new);
		if (err)
			goto err;
		reused = ia_xdp_reuse_progs(x, dir);
	}
	if (reused) {
		bpf_object__for_each_program(prog, x->skel->obj)
			bpf_program__set_autoload(prog, false);
	} else {
		err = ia_xdp_probe_features(why, whylen);
		if (err)
			goto err;
	}
	keep_inner(x, IA_INNER_SLOTS, x->skel->maps.ia_slots);
	keep_inner(x, IA_INNER_MTAB, x->skel->maps.ia_mtab);
	keep_inner(x, IA_INNER_JFAST, x->skel->maps.ia_jfast);
	keep_inner(x, IA_INNER_TDIR, x->skel->maps.ia_tdir);
	err = inagg__load(x->skel);
	if (err) {
		err = ia_xdp_load_failed(err, why, whylen);
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
			err = ia_xdp_pin_progs(x, dir, why, whylen);
			if (err)
				goto err;
		}
	}
	for (i = 0; i < IA_PROG__N; i++)
		x->prog_id[i] = ia_xdp_obj_id(x->prog_fd[i]);
	x->jobs_map_id = ia_xdp_obj_id(bpf_map__fd(x->skel->maps.ia_jobs));
	*out = x;
	x = NULL;	/* err is 0 */
err:
	if (lock >= 0)
		close(lock);
	ia_xdp_close(x);
	return err;
}

int ia_xdp_open(const char *sw, struct ia_xdp **out, char *why, size_t whylen)
{
	ia_xdp_err_start(why, whylen);
	return ia_xdp_said(why, whylen, open_switch(sw, true, out, why, whylen));
}

int ia_xdp_open_existing(const char *sw, struct ia_xdp **out, char *why, size_t whylen)
{
	ia_xdp_err_start(why, whylen);
	if (!sw)
		return ia_xdp_said(why, whylen, -EINVAL);
	return ia_xdp_said(why, whylen, open_switch(sw, false, out, why, whylen));
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
