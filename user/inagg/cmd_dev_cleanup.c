// SPDX-License-Identifier: GPL-2.0
/*
 * inagg dev cleanup: removes the pins of switches that no interface runs any
 * more (ports gone without a detach), after looking into every network
 * namespace the host can see.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include "cli.h"
#include "netns.h"
#include "xdp.h"

struct cleanup_args {
	const char *sw;		/* a shell pattern; NULL: every switch */
	bool dry_run;
};

static const struct cleanup_args cleanup_defaults;

static const struct opt cleanup_opts[] = {
	OPT_FLAG(0, "dry-run", struct cleanup_args, dry_run, 0,
		 "say which switches would be removed, remove nothing"),
	OPT_STR(0, "switch", "NAME", struct cleanup_args, sw, 0,
		"only the switches NAME matches (a shell pattern: 'ia-*'; default: all)"),
	OPT_END
};

const struct opt_cmd dev_cleanup_cmd = {
	.defaults = &cleanup_defaults,
	.opts = cleanup_opts,
	.size = sizeof(struct cleanup_args),
	.about = "Removes stale pins: the folder of each switch under " IA_BPFFS_ROOT " whose\n"
		 "programs run on no interface of any network namespace the host can see (the\n"
		 "initial one, /run/netns, every nsfs mount, every process's), as left when a\n"
		 "switch's ports vanish without a detach (namespace deleted, veths removed, a\n"
		 "crash). Keeps the others. One line per switch: removed, kept (attached to N\n"
		 "ports), or with --dry-run would remove. Root only; run it with no attach in\n"
		 "progress (a switch being set up has pins but no port yet).\n",
};

#ifndef NSFS_MAGIC
#define NSFS_MAGIC	0x6e736673
#endif

/* One XDP program on one interface of one namespace, with the maps it uses. */
struct cleanup_port {
	int ns, ifindex;
	__u32 prog, maps[IA_XDP_PINS_MAX], nmaps;
};

struct cleanup_scan {
	struct stat *ns;		/* namespaces seen (st_dev, st_ino) */
	int nns;
	struct cleanup_port *ports;
	int nports;
	int self;			/* this thread's namespace, to return to */
	int denied;			/* processes whose namespace could not be opened */
	char denied_path[96];		/* the first of them, and why */
};

static int scan_add_port(struct cleanup_scan *s, int ifindex, __u32 prog)
{
	struct bpf_prog_info info = { 0 };
	struct cleanup_port *p, *n;
	__u32 len = sizeof(info);
	int fd;

	n = realloc(s->ports, (s->nports + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->ports = n;
	p = &n[s->nports++];
	memset(p, 0, sizeof(*p));
	p->ns = s->nns - 1, p->ifindex = ifindex, p->prog = prog;
	fd = bpf_prog_get_fd_by_id(prog);
	if (fd < 0)
		return 0;	/* detached meanwhile: its id alone */
	info.nr_map_ids = IA_XDP_PINS_MAX;
	info.map_ids = (__u64)(unsigned long)p->maps;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		p->nmaps = info.nr_map_ids < IA_XDP_PINS_MAX ? info.nr_map_ids : IA_XDP_PINS_MAX;
	close(fd);
	return 0;
}

/*
 * The XDP programs of every interface of namespace fd (new: not seen yet), in every mode
 * (native, generic, offloaded). -errno if the namespace cannot be entered or read.
 */
static int scan_ns(struct cleanup_scan *s, int fd)
{
	struct if_nameindex *ifs, *i;
	struct stat st, *n;
	int err = 0;

	if (fstat(fd, &st))
		return -errno;
	for (int k = 0; k < s->nns; k++)
		if (s->ns[k].st_dev == st.st_dev && s->ns[k].st_ino == st.st_ino)
			return 0;
	n = realloc(s->ns, (s->nns + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->ns = n;
	n[s->nns++] = st;
	if (setns(fd, CLONE_NEWNET))
		return -errno;
	ifs = if_nameindex();
	if (!ifs)
		err = -errno;
	for (i = ifs; i && i->if_index && !err; i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		__u32 ids[3];

		err = bpf_xdp_query(i->if_index, 0, &q);
		if (err == -ENODEV) {
			err = 0;	/* gone meanwhile */
			continue;
		}
		ids[0] = q.drv_prog_id, ids[1] = q.skb_prog_id, ids[2] = q.hw_prog_id;
		for (int k = 0; k < 3 && !err; k++)
			if (ids[k])
				err = scan_add_port(s, i->if_index, ids[k]);
	}
	if (ifs)
		if_freenameindex(ifs);
	if (setns(s->self, CLONE_NEWNET) && !err)
		err = -errno;
	return err;
}

/*
 * Opens path and scans it if it is a network namespace. A process's namespace that is gone
 * (it exited) or a file that is no namespace (a mount point left in /run/netns) is skipped;
 * any other failure means a namespace the scan did not see, and is an error.
 */
static int scan_path(struct cleanup_scan *s, const char *path, char *why, size_t whylen)
{
	struct statfs sf;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? 0 : ia_fail(why, whylen, -errno,
			"%s: %s", path, strerror(errno));
	if (fstatfs(fd, &sf) || sf.f_type != NSFS_MAGIC) {
		close(fd);
		return 0;
	}
	err = scan_ns(s, fd);
	close(fd);
	/* EINVAL: an nsfs mount of another kind of namespace. */
	if (err && err != -EINVAL)
		return ia_fail(why, whylen, err, "network namespace %s: %s", path, strerror(-err));
	return 0;
}

/*
 * A process's namespace. One that root may not open (an LSM's or a sandbox's rule, a
 * process of another user namespace) is counted and said, not an error: it is nearly always
 * a namespace seen otherwise, and failing would leave no way to clean up on such a host.
 */
static int scan_proc(struct cleanup_scan *s, const char *path, char *why, size_t whylen)
{
	int err = scan_path(s, path, why, whylen);

	if (err != -EACCES && err != -EPERM)
		return err;
	if (!s->denied++)
		snprintf(s->denied_path, sizeof(s->denied_path), "%.40s: %s", path,
			 strerror(-err));
	return 0;
}

/* Each pid's (and each thread's) namespace under /proc. */
static int scan_procs(struct cleanup_scan *s, char *why, size_t whylen)
{
	char path[64];
	struct dirent *e, *t;
	DIR *d, *td;
	int err = 0;

	d = opendir("/proc");
	if (!d)
		return ia_fail(why, whylen, -errno, "/proc: %s", strerror(errno));
	while (!err && (e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || strlen(e->d_name) > 20)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/net", e->d_name);
		err = scan_proc(s, path, why, whylen);
		snprintf(path, sizeof(path), "/proc/%s/task", e->d_name);
		td = err ? NULL : opendir(path);
		while (td && !err && (t = readdir(td))) {
			if (t->d_name[0] < '0' || t->d_name[0] > '9' || strlen(t->d_name) > 20 ||
			    !strcmp(t->d_name, e->d_name))
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task/%s/ns/net", e->d_name,
				 t->d_name);
			err = scan_proc(s, path, why, whylen);
		}
		if (td)
			closedir(td);
	}
	closedir(d);
	return err;
}

/* Namespaces bound to files (ip netns's /run/netns, a container runtime's): nsfs mounts. */
static int scan_mounts(struct cleanup_scan *s, char *why, size_t whylen)
{
	char line[4096], mnt[PATH_MAX];
	const char *sep;
	FILE *f;
	int err = 0;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return ia_fail(why, whylen, -errno, "/proc/self/mountinfo: %s", strerror(errno));
	while (!err && fgets(line, sizeof(line), f)) {
		sep = strstr(line, " - nsfs ");
		/* Fifth field: the mount point (octal escapes of spaces are left: skipped). */
		if (sep && sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 && !strchr(mnt, '\\'))
			err = scan_path(s, mnt, why, whylen);
	}
	fclose(f);
	return err;
}

static int scan_all(struct cleanup_scan *s, char *why, size_t whylen)
{
	struct dirent *e;
	char path[PATH_MAX];
	int err;
	DIR *d;

	s->self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (s->self < 0)
		return ia_fail(why, whylen, -errno, "/proc/thread-self/ns/net: %s",
			       strerror(errno));
	err = scan_path(s, "/proc/thread-self/ns/net", why, whylen);
	if (!err)
		err = scan_proc(s, "/proc/1/ns/net", why, whylen);	/* the initial one */
	d = err ? NULL : opendir(IA_NETNS_DIR);
	while (d && !err && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), IA_NETNS_DIR "/%s", e->d_name) <
		    sizeof(path))
			err = scan_path(s, path, why, whylen);
	}
	if (d)
		closedir(d);
	if (!err)
		err = scan_mounts(s, why, whylen);
	if (!err)
		err = scan_procs(s, why, whylen);
	close(s->self);
	return err;
}

static bool id_in(__u32 id, const __u32 *ids, int n)
{
	for (int k = 0; k < n; k++)
		if (ids[k] == id)
			return true;
	return false;
}

/*
 * Interfaces that run the switch: whose XDP program is one of its pinned programs (ia_xdp on
 * its ports; ia_pass on a host's veth attached with --pass), or uses one of its pinned maps
 * (a program of the switch whose pin is missing). Each interface counted once.
 */
static int ports_running(const struct cleanup_scan *s, const struct ia_xdp_pins *p)
{
	int n = 0, last_ns = -1, last_if = 0;

	for (int k = 0; k < s->nports; k++) {
		const struct cleanup_port *c = &s->ports[k];
		bool ours = id_in(c->prog, p->prog_ids, p->nprogs);

		for (__u32 m = 0; m < c->nmaps && !ours; m++)
			ours = id_in(c->maps[m], p->map_ids, p->nmaps);
		if (!ours || (c->ns == last_ns && c->ifindex == last_if))
			continue;
		n++;
		last_ns = c->ns, last_if = c->ifindex;
	}
	return n;
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The switches' folders under IA_BPFFS_ROOT (those pattern matches), sorted; none if no root. */
static int list_switches(const char *pattern, char ***out, int *n, char *why, size_t whylen)
{
	char **names = NULL, **nn;
	struct dirent *e;
	DIR *d;

	*n = 0;
	d = opendir(IA_BPFFS_ROOT);
	if (!d)
		return errno == ENOENT ? 0 : ia_fail(why, whylen, -errno, "%s: %s", IA_BPFFS_ROOT,
						     strerror(errno));
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || e->d_type != DT_DIR ||
		    (pattern && fnmatch(pattern, e->d_name, 0)))
			continue;
		nn = realloc(names, (*n + 1) * sizeof(*nn));
		if (!nn || !(nn[*n] = strdup(e->d_name))) {
			names = nn ? nn : names;
			closedir(d);
			*out = names;
			return ia_fail(why, whylen, -ENOMEM, "%s", strerror(ENOMEM));
		}
		names = nn;
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(names, *n, sizeof(*names), cmpstr);
	*out = names;
	return 0;
}

/* One switch's folder: kept, removed or would be; false on a failure (said on its line). */
static bool cleanup_one(const char *sw, const struct cleanup_scan *s, bool dry_run)
{
	struct ia_xdp_pins p;
	char why[IA_ERRLEN];
	const char *note = NULL;
	int err, ports;

	out_obj_open(NULL);
	out_str("switch", "%s: ", sw);
	err = ia_xdp_pins_read(sw, &p);
	if (err) {
		snprintf(why, sizeof(why), "cannot read its folder: %s", strerror(-err));
		out_str("action", "%s", "failed");
		out_str("error", " (%s)\n", why);
		out_obj_close();
		return false;
	}
	ports = ports_running(s, &p);
	/*
	 * Without a readable ia_xdp pin (an older version's pins, a half-done setup or removal)
	 * the rule "its ia_xdp runs nowhere" cannot be applied as such. Such a folder goes only if
	 * nothing in it can be running: none of its programs or maps is used by an interface's
	 * XDP program, and every pin in it could be read (a pin that cannot be opened may be a
	 * program that runs: kept, as a failure, for the operator to look at).
	 */
	if (!p.xdp_prog)
		note = p.nprogs || p.nmaps || p.unreadable ? "no readable ia_xdp program pin"
							   : "empty";
	if (note)
		out_str("note", "%s; ", note);
	if (ports) {
		out_str("action", "%s", "kept");
		out_uint("ports", ports == 1 ? ": attached to %llu port\n" :
			 ": attached to %llu ports\n", ports);
	} else if (p.unreadable) {
		out_str("action", "%s", "failed");
		out_uint("ports", NULL, 0);
		out_str("error", " (kept: pin %s)\n", p.bad);
		out_obj_close();
		return false;
	} else if (dry_run) {
		out_str("action", "%s", "would remove");
		out_uint("ports", " (attached to no port: --dry-run)\n", 0);
	} else if ((err = ia_xdp_unpin(sw))) {
		out_str("action", "%s", "failed");
		out_uint("ports", NULL, 0);
		snprintf(why, sizeof(why), "removing %s/%s: %s", IA_BPFFS_ROOT, sw,
			 strerror(-err));
		out_str("error", " (%s)\n", why);
		out_obj_close();
		return false;
	} else {
		out_str("action", "%s", "removed");
		out_uint("ports", " (attached to no port)\n", 0);
	}
	out_obj_close();
	return true;
}

int cmd_dev_cleanup(int argc, char **argv)
{
	struct cleanup_scan s = { 0 };
	char why[IA_ERRLEN], **sws = NULL;
	int i, nsw = 0, failed = 0, ret;
	struct cleanup_args a;

	memset(&a, 0, sizeof(a));
	if (opt_parse(&dev_cleanup_cmd, argv[0], argc, argv, &a, &i, NULL))
		return 1;
	if (i < argc)
		return out_err("%s: unexpected argument '%s'; try 'inagg %s -h'", argv[0], argv[i],
			       argv[0]);
	if (geteuid())
		return out_err("%s: needs root (it enters every network namespace and removes "
			       "pins under %s)", argv[0], IA_BPFFS_ROOT);
	quiet_libbpf();
	if (list_switches(a.sw, &sws, &nsw, why, sizeof(why))) {
		ret = out_err("%s: %s", argv[0], why);
		goto out;
	}
	/* Every namespace first: a namespace not seen would make its switches look stale. */
	if (nsw && scan_all(&s, why, sizeof(why))) {
		ret = out_err("%s: %s; nothing removed", argv[0], why);
		goto out;
	}
	if (s.denied)
		out_warn("%s: could not look into the network namespace of %d process%s (%s); "
			 "a switch attached only there would count as stale", argv[0], s.denied,
			 s.denied == 1 ? "" : "es", s.denied_path);
	out_begin();
	out_bool("dry_run", NULL, a.dry_run);
	out_uint("namespaces", NULL, s.nns);
	out_arr_open("switches");
	for (int k = 0; k < nsw; k++)
		failed += !cleanup_one(sws[k], &s, a.dry_run);
	out_arr_close();
	if (!nsw)
		out_text("no switch%s%s pinned under %s\n", a.sw ? " matching " : "",
			 a.sw ? a.sw : "", IA_BPFFS_ROOT);
	ret = out_end();
	if (failed)
		ret = out_err("%s: %d switch%s failed (above)", argv[0], failed,
			      failed == 1 ? "" : "es");
out:
	for (int k = 0; k < nsw; k++)
		free(sws[k]);
	free(sws);
	free(s.ns);
	free(s.ports);
	return ret ? 1 : 0;
}
