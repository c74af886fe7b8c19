// SPDX-License-Identifier: GPL-2.0
/*
 * A switch's pins under IA_BPFFS_ROOT/<switch>/ (xdp_int.h): bpffs mounted
 * if nobody did, the maps' pin paths, the programs pinned and reused while
 * they use the pinned maps, and all of it removed.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <bpf/bpf.h>

#include "xdp_int.h"

#define BPF_FS_MAGIC_NR	0xcafe4a11
#define BPF_FS_DIR	"/sys/fs/bpf"

int ia_xdp_pin_dir(const char *sw, char *buf, size_t len, char *why, size_t whylen)
{
	if (!sw || !*sw || strchr(sw, '/') || !strcmp(sw, ".") || !strcmp(sw, ".."))
		return ia_fail(why, whylen, -EINVAL, "invalid switch name '%s'", sw ? sw : "");
	if ((size_t)snprintf(buf, len, "%s/%s", IA_BPFFS_ROOT, sw) >= len)
		return ia_fail(why, whylen, -ENAMETOOLONG, "switch name too long");
	return 0;
}

/* Like iproute2: mount bpffs where it is expected if nobody did. */
int ia_xdp_ensure_bpffs(char *why, size_t whylen)
{
	struct statfs st;

	if (statfs(BPF_FS_DIR, &st))
		return -errno;
	if (st.f_type == BPF_FS_MAGIC_NR)
		return 0;
	if (mount("bpf", BPF_FS_DIR, "bpf", 0, "mode=0700"))
		return ia_fail(why, whylen, -errno, "mounting bpffs on %s: %s", BPF_FS_DIR,
			       strerror(errno));
	return 0;
}

int ia_xdp_pin_mkdir(const char *dir)
{
	if (mkdir(IA_BPFFS_ROOT, 0700) && errno != EEXIST)
		return -errno;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/* dir/name, which fits: dir is a ia_xdp_pin_dir() and names are short. */
static void pin_path(char *buf, const char *dir, const char *name)
{
	if ((size_t)snprintf(buf, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
		buf[0] = '\0';
}

/* What the operator does about a pin set of another layout (docs/router-vm.md, "Upgrading"). */
#define LAYOUT_REMEDY "detach the switch's ports and attach them again, between jobs " \
	"(systemctl restart 'inagg-attach@*', or inagg dev detach then inagg dev attach on " \
	"each port; with inagg net, net down and net up): the last port's detach removes " \
	"the old pins"

/* dir holds a pin (anything but . and ..); -errno if it cannot be read. */
static int dir_has_pins(const char *dir)
{
	struct dirent *e;
	int n = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -errno;
	while (!n && (e = readdir(d)))
		n = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* A new set: its ia_layout, frozen (nobody rewrites a set's layout), pinned first. */
static int layout_create(const char *path, char *why, size_t whylen)
{
	__u32 key = 0, val = IA_MAPS_LAYOUT;
	int fd, err = 0;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ia_layout", sizeof(key), sizeof(val), 1, NULL);
	if (fd < 0)
		return ia_fail(why, whylen, -errno, "creating %s: %s", path, strerror(errno));
	if (bpf_map_update_elem(fd, &key, &val, BPF_ANY) || bpf_map_freeze(fd) ||
	    bpf_obj_pin(fd, path))
		err = ia_fail(why, whylen, -errno, "pinning %s: %s", path, strerror(errno));
	close(fd);
	return err;
}

/* The layout recorded in a pinned ia_layout; 0 if it is no map of ours. */
static __u32 layout_read(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), key = 0, val = 0;

	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.type != BPF_MAP_TYPE_ARRAY ||
	    info.key_size != sizeof(key) || info.value_size != sizeof(val) ||
	    bpf_map_lookup_elem(fd, &key, &val))
		return 0;
	return val;
}

int ia_xdp_pin_layout(const char *sw, const char *dir, char *why, size_t whylen)
{
	char path[PATH_MAX];
	__u32 layout;
	int fd, pins;

	pin_path(path, dir, "ia_layout");
	fd = bpf_obj_get(path);
	if (fd < 0 && errno != ENOENT)
		return ia_fail(why, whylen, -errno, "%s: %s", path, strerror(errno));
	if (fd < 0) {
		pins = dir_has_pins(dir);
		if (pins < 0)
			return ia_fail(why, whylen, pins, "%s: %s", dir, strerror(-pins));
		if (!pins)
			return layout_create(path, why, whylen);
		return ia_fail(why, whylen, -ESTALE, "switch %s: its maps in %s were pinned by an "
			       "older inagg (no ia_layout; this inagg's map layout is %u), whose "
			       "programs may still run on them: %s", sw, dir, IA_MAPS_LAYOUT,
			       LAYOUT_REMEDY);
	}
	layout = layout_read(fd);
	close(fd);
	if (layout == IA_MAPS_LAYOUT)
		return 0;
	return ia_fail(why, whylen, -ESTALE, "switch %s: its maps in %s have map layout %u, "
		       "this inagg's is %u (pinned by another version, whose programs may "
		       "still run on them): %s", sw, dir, layout, IA_MAPS_LAYOUT, LAYOUT_REMEDY);
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

__u32 ia_xdp_obj_id(int fd)
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
int ia_xdp_reuse_progs(struct ia_xdp *x, const char *dir)
{
	char path[PATH_MAX];
	int i, fd, n = 0;
	__u32 jobs;

	pin_path(path, dir, "ia_jobs");
	fd = bpf_obj_get(path);
	jobs = fd < 0 ? 0 : ia_xdp_obj_id(fd);
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

void ia_xdp_pinned_ids(struct ia_xdp *x, const char *dir)
{
	char path[PATH_MAX];
	int i, fd;

	for (i = 0; i < IA_PROG__N; i++) {
		pin_path(path, dir, prog_pin[i]);
		fd = bpf_obj_get(path);
		x->prog_id[i] = fd < 0 ? 0 : ia_xdp_obj_id(fd);
		if (fd >= 0)
			close(fd);
	}
	pin_path(path, dir, "ia_jobs");
	fd = bpf_obj_get(path);
	x->jobs_map_id = fd < 0 ? 0 : ia_xdp_obj_id(fd);
	if (fd >= 0)
		close(fd);
}

/* Pins the programs loaded here; one another process pinned first wins. */
int ia_xdp_pin_progs(struct ia_xdp *x, const char *dir, char *why, size_t whylen)
{
	char path[PATH_MAX];
	int i, fd;

	for (i = 0; i < IA_PROG__N; i++) {
		pin_path(path, dir, prog_pin[i]);
		if (!bpf_obj_pin(x->prog_fd[i], path))
			continue;
		if (errno != EEXIST)
			return ia_fail(why, whylen, -errno, "pinning %s: %s", path,
				       strerror(errno));
		fd = bpf_obj_get(path);
		if (fd < 0)
			return -errno;
		close(x->prog_fd[i]);
		x->prog_fd[i] = fd;
	}
	return 0;
}

/* Pin paths of the maps; the devmap's own path if it must be pinned after load. */
int ia_xdp_pin_maps(struct ia_xdp *x, const char *dir, char *dports_path, bool *dports_new)
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

/*
 * fn(dir, name, ctx) for every entry of a pin folder; the first error fn
 * returns is kept and the walk goes on. 0, that error, or -errno.
 */
static int pins_walk(const char *dir, int (*fn)(const char *dir, const char *name, void *ctx),
		     void *ctx)
{
	struct dirent *e;
	int err, ret = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		err = fn(dir, e->d_name, ctx);
		if (err && !ret)
			ret = err;
	}
	closedir(d);
	return ret;
}

static int unpin_one(const char *dir, const char *name, void *ctx)
{
	char path[PATH_MAX];

	pin_path(path, dir, name);
	return path[0] && unlink(path) ? -errno : 0;
}

int ia_xdp_unpin(const char *sw)
{
	char dir[PATH_MAX];
	int err = ia_xdp_pin_dir(sw, dir, sizeof(dir), NULL, 0);

	if (err)
		return err;
	err = pins_walk(dir, unpin_one, NULL);
	if (rmdir(dir) && !err)
		err = -errno;
	return err;
}

/* 1: fd is a program, 0: a map, -1: neither (anon_inode:bpf-prog, bpf-map). */
static int bpf_fd_kind(int fd)
{
	char link[64], target[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return -1;
	target[n] = '\0';
	if (!strcmp(target, "anon_inode:bpf-prog"))
		return 1;
	return strcmp(target, "anon_inode:bpf-map") ? -1 : 0;
}

static int pin_read(const char *dir, const char *name, void *ctx)
{
	struct ia_xdp_pins *p = ctx;
	char path[PATH_MAX];
	int err, fd, kind;
	__u32 id;

	pin_path(path, dir, name);
	fd = path[0] ? bpf_obj_get(path) : -1;
	err = fd < 0 ? errno : 0;
	kind = fd < 0 ? -1 : bpf_fd_kind(fd);
	id = kind < 0 ? 0 : ia_xdp_obj_id(fd);
	if (fd >= 0)
		close(fd);
	if (!id) {
		if (!p->unreadable++)
			snprintf(p->bad, sizeof(p->bad), "%.40s: %s", name,
				 err ? strerror(err) : "not a map or program");
		return 0;
	}
	if (kind && p->nprogs < IA_XDP_PINS_MAX)
		p->prog_ids[p->nprogs++] = id;
	else if (!kind && p->nmaps < IA_XDP_PINS_MAX)
		p->map_ids[p->nmaps++] = id;
	if (kind && !strcmp(name, prog_pin[IA_PROG_XDP]))
		p->xdp_prog = true;
	return 0;
}

int ia_xdp_pins_read(const char *sw, struct ia_xdp_pins *p)
{
	char dir[PATH_MAX];
	int err;

	memset(p, 0, sizeof(*p));
	err = ia_xdp_pin_dir(sw, dir, sizeof(dir), NULL, 0);
	return err ? err : pins_walk(dir, pin_read, p);
}
