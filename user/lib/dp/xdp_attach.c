// SPDX-License-Identifier: GPL-2.0
/*
 * Ports of a switch: the switch's one program instance attached to them,
 * their counters and their place in the result broadcast set. Never replaces
 * or removes an XDP program that is not inagg's unless forced; whether a
 * handle still holds the maps pinned for its switch. See xdp.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>

#include "xdp_int.h"

static int port_map_fd(struct ia_xdp *x, __u32 ifindex)
{
	return bpf_map__fd(ifindex < IA_PORT_DIRECT ? x->skel->maps.ia_ports :
						   x->skel->maps.ia_ports_far);
}

int ia_xdp_port_index(struct ia_xdp *x, __u32 ifindex, __u32 *idx)
{
	int err = bpf_map_lookup_elem(port_map_fd(x, ifindex), &ifindex, idx);

	if (err)
		return err;
	return *idx ? 0 : -ENOENT;
}

int ia_xdp_port_add(struct ia_xdp *x, int ifindex)
{
	struct bpf_devmap_val dv = {
		.ifindex = ifindex,
		.bpf_prog.fd = ia_xdp_egress_fd(x),
	};
	__u32 key = ifindex, idx;
	int err;

	if (ifindex <= 0)
		return -EINVAL;
	err = bpf_map_update_elem(bpf_map__fd(x->skel->maps.ia_dports), &key, &dv, BPF_ANY);
	if (err)
		return err;
	/* Keep counters of a port that is attached again. */
	if (!ia_xdp_port_index(x, key, &idx))
		return 0;
	err = ia_xdp_own_claim(x, IA_OWN_PORT, 0, IA_MAX_PORTS, 1, key, &idx);
	if (err)
		return err;
	err = ia_xdp_zero_counters(x, bpf_map__fd(x->skel->maps.ia_pstats), &idx, BPF_ANY) ?:
	      ia_xdp_vq_reset(x, idx);
	if (!err)
		err = bpf_map_update_elem(port_map_fd(x, key), &key, &idx, BPF_ANY);
	if (err)
		ia_xdp_own_release(x, IA_OWN_PORT, idx);
	return err;
}

int ia_xdp_port_del(struct ia_xdp *x, int ifindex)
{
	__u32 key = ifindex, idx, zero = 0;
	int err, err2;

	err = bpf_map_delete_elem(bpf_map__fd(x->skel->maps.ia_dports), &key);
	err2 = ia_xdp_port_index(x, key, &idx);
	if (err2)
		return err ? err : err2;
	if (key < IA_PORT_DIRECT)
		bpf_map_update_elem(port_map_fd(x, key), &key, &zero, BPF_ANY);
	else
		bpf_map_delete_elem(port_map_fd(x, key), &key);
	ia_xdp_rcu_wait();	/* packets of the port may still count into idx */
	ia_xdp_own_release(x, IA_OWN_PORT, idx);
	return err;
}

/* ---- what is attached, and whose it is ---- */

enum xdp_mode { MODE_DRV, MODE_SKB, MODE__N };

static const __u32 mode_flag[MODE__N] = { XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE };
static const char *const mode_name[MODE__N] = { "native", "generic" };

enum owner {
	OWN_MINE,	/* this switch's program (any instance using its maps), or ia_pass */
	OWN_OTHER,	/* another switch's ia_xdp */
	OWN_FOREIGN,	/* not inagg's */
};

struct attached {
	__u32 id;
	enum owner owner;
	char name[BPF_OBJ_NAME_LEN];
};

static enum owner owner_of(struct ia_xdp *x, __u32 id, char *name)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	enum owner o = OWN_FOREIGN;
	int fd;

	strcpy(name, "?");
	if (id == x->prog_id[IA_PROG_XDP] || id == x->prog_id[IA_PROG_PASS])
		o = OWN_MINE;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return o;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
		snprintf(name, BPF_OBJ_NAME_LEN, "%s", info.name);
		/* ia_pass holds no state: any switch's does. */
		if (!strcmp(info.name, "ia_pass"))
			o = OWN_MINE;
		else if (o != OWN_MINE && !strcmp(info.name, "ia_xdp"))
			o = ia_xdp_prog_uses_map(fd, x->jobs_map_id) ? OWN_MINE : OWN_OTHER;
	}
	close(fd);
	return o;
}

/* The programs attached to ifindex, native and generic (hardware ones are not ours). */
static int query(struct ia_xdp *x, int ifindex, struct attached at[MODE__N])
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int err, m;

	err = bpf_xdp_query(ifindex, 0, &q);
	if (err)
		return err;
	at[MODE_DRV].id = q.drv_prog_id;
	at[MODE_SKB].id = q.skb_prog_id;
	for (m = 0; m < MODE__N; m++)
		if (at[m].id)
			at[m].owner = owner_of(x, at[m].id, at[m].name);
	return 0;
}

/* Messages leave the interface's name to the caller, who knows it. */
static int refuse(const struct attached *a, enum xdp_mode m, const char *verb, char *why,
		  size_t whylen)
{
	if (a->owner == OWN_OTHER)
		return ia_fail(why, whylen, -EBUSY, "another inagg switch's program (id %u) is "
			       "attached in %s mode: not %s it (detach it with that switch's "
			       "name, or --force)", a->id, mode_name[m], verb);
	return ia_fail(why, whylen, -EBUSY, "XDP program '%s' (id %u) in %s mode is not inagg's: "
		       "not %s it (--force does)", a->name, a->id, mode_name[m], verb);
}

/* Sets (prog_fd >= 0) or removes the program of mode m, only if it still is old_id. */
static int xdp_swap(int ifindex, int prog_fd, enum xdp_mode m, __u32 old_id)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = -1);
	__u32 flags = mode_flag[m];
	int err;

	if (!old_id)
		return bpf_xdp_attach(ifindex, prog_fd, flags | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	o.old_prog_fd = bpf_prog_get_fd_by_id(old_id);
	if (o.old_prog_fd < 0)
		return -errno;
	err = bpf_xdp_attach(ifindex, prog_fd, flags | XDP_FLAGS_REPLACE, &o);
	close(o.old_prog_fd);
	return err;
}

/*
 * Attaches program p of the switch, in the mode asked (or the mode of what is
 * attached, or the kernel's choice): nothing to do if it is there already,
 * replaces another instance of this switch's program, refuses anything else
 * unless forced.
 */
static int attach_prog(struct ia_xdp *x, int ifindex, __u32 flags, int p, char *why,
		       size_t whylen)
{
	bool force = flags & IA_XDP_F_FORCE;
	struct attached at[MODE__N] = {};
	int err, m, want = -1;

	flags &= XDP_FLAGS_DRV_MODE | XDP_FLAGS_SKB_MODE;
	if (flags == XDP_FLAGS_DRV_MODE)
		want = MODE_DRV;
	else if (flags == XDP_FLAGS_SKB_MODE)
		want = MODE_SKB;
	else if (flags)
		return -EINVAL;
	err = query(x, ifindex, at);
	if (err)
		return err;
	for (m = 0; m < MODE__N; m++) {
		if (!at[m].id)
			continue;
		if (at[m].owner != OWN_MINE && !force)
			return refuse(&at[m], m, "replacing", why, whylen);
		if (want >= 0 && want != m)
			return ia_fail(why, whylen, -EEXIST, "a program is attached in %s mode: "
				       "detach it first to attach in %s mode", mode_name[m],
				       mode_name[want]);
		want = m;
	}
	if (want < 0)	/* nothing attached: the kernel's choice */
		return bpf_xdp_attach(ifindex, x->prog_fd[p], XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (at[want].id == x->prog_id[p])
		return 0;
	return xdp_swap(ifindex, x->prog_fd[p], want, at[want].id);
}

int ia_xdp_attach(struct ia_xdp *x, int ifindex, __u32 xdp_flags, char *why, size_t whylen)
{
	int err;

	ia_xdp_err_start(why, whylen);
	err = ia_xdp_port_add(x, ifindex);
	if (err)
		return ia_xdp_said(why, whylen, err);
	err = attach_prog(x, ifindex, xdp_flags, IA_PROG_XDP, why, whylen);
	if (err)
		ia_xdp_port_del(x, ifindex);
	return ia_xdp_said(why, whylen, err);
}

int ia_xdp_attach_pass(struct ia_xdp *x, int ifindex, __u32 xdp_flags, char *why, size_t whylen)
{
	ia_xdp_err_start(why, whylen);
	return ia_xdp_said(why, whylen, attach_prog(x, ifindex, xdp_flags, IA_PROG_PASS, why,
						    whylen));
}

static int detach_prog(struct ia_xdp *x, int ifindex, __u32 xdp_flags, char *why, size_t whylen)
{
	bool force = xdp_flags & IA_XDP_F_FORCE;
	struct attached at[MODE__N] = {};
	int err, m, done = 0, kept = -1;

	xdp_flags &= XDP_FLAGS_DRV_MODE | XDP_FLAGS_SKB_MODE;
	err = query(x, ifindex, at);
	if (err)
		return err;
	for (m = 0; m < MODE__N; m++) {
		if (!at[m].id || (xdp_flags && xdp_flags != mode_flag[m]))
			continue;
		if (at[m].owner != OWN_MINE && !force) {
			kept = m;
			continue;
		}
		err = xdp_swap(ifindex, -1, m, at[m].id);
		if (err)
			return err;
		done++;
	}
	/* Its place in the maps goes even if its program was gone already (none: stale pins). */
	if (x->skel)
		ia_xdp_port_del(x, ifindex);
	if (done)
		return 0;
	if (kept >= 0)
		return refuse(&at[kept], kept, "removing", why, whylen);
	return ia_fail(why, whylen, -ENOENT, "no inagg program attached%s",
		       xdp_flags == XDP_FLAGS_SKB_MODE ? " in generic mode" :
		       xdp_flags == XDP_FLAGS_DRV_MODE ? " in native mode" : "");
}

int ia_xdp_detach(struct ia_xdp *x, int ifindex, __u32 xdp_flags, char *why, size_t whylen)
{
	ia_xdp_err_start(why, whylen);
	return ia_xdp_said(why, whylen, detach_prog(x, ifindex, xdp_flags, why, whylen));
}

/*
 * A handle without maps (skel NULL), which knows the switch's programs by
 * their pins and by the ia_jobs they use: enough to tell them on a port.
 */
int ia_xdp_detach_pinned(const char *sw, int ifindex, __u32 xdp_flags, char *why,
			 size_t whylen)
{
	struct ia_xdp x = {};
	char dir[PATH_MAX];
	int err;

	ia_xdp_err_start(why, whylen);
	err = ia_xdp_pin_dir(sw, dir, sizeof(dir), why, whylen);
	if (!err && access(dir, F_OK))
		err = ia_fail(why, whylen, -ENOENT, "switch %s is not set up here (nothing "
			      "pinned in %s)", sw, dir);
	if (err)
		return ia_xdp_said(why, whylen, err);
	ia_xdp_pinned_ids(&x, dir);
	return ia_xdp_said(why, whylen, detach_prog(&x, ifindex, xdp_flags, why, whylen));
}

int ia_xdp_current(struct ia_xdp *x, const char *sw)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd, cur;

	if (!x || !sw || !*sw || strchr(sw, '/') ||
	    (size_t)snprintf(path, sizeof(path), IA_BPFFS_ROOT "/%s/ia_jobs", sw) >= sizeof(path))
		return 0;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	/* Map ids are not reused soon (cyclic): another id is another set of maps. */
	cur = !bpf_obj_get_info_by_fd(fd, &info, &len) && info.id == x->jobs_map_id;
	close(fd);
	return cur;
}
