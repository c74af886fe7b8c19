// SPDX-License-Identifier: GPL-2.0
/* A job's head occupancy (see xdp_mem.h). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "xdp_int.h"
#include "xdp_mem.h"

int ia_xdp_head_use(struct ia_xdp *x, __u32 job, struct ia_xdp_head_use *out)
{
	struct ia_job_cfg cfg;
	struct ia_slot *slot;
	__u32 inner_id, idx;
	int fd, err;

	*out = (struct ia_xdp_head_use){ 0 };
	err = bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.ia_jobs), &job, &cfg);
	if (err)
		return err;
	if (cfg.role != IA_ROLE_BLUE)
		return -ENOENT;
	err = bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.ia_slots), &cfg.slot, &inner_id);
	if (err)
		return err;
	fd = bpf_map_get_fd_by_id(inner_id);
	if (fd < 0)
		return fd;
	slot = malloc(sizeof(*slot));
	if (!slot) {
		close(fd);
		return -ENOMEM;
	}
	out->slots = cfg.window;
	/* Unlocked: a snapshot, each slot as it was when read. */
	for (idx = 0; idx < cfg.window && !err; idx++) {
		err = bpf_map_lookup_elem(fd, &idx, slot);
		out->open += !err && slot->state == IA_SLOT_OPEN;
		out->done += !err && slot->state == IA_SLOT_DONE;
	}
	free(slot);
	close(fd);
	return err;
}
