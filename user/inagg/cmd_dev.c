// SPDX-License-Identifier: GPL-2.0
/*
 * inagg dev attach | detach | show | cleanup: the XDP datapath on a switch's
 * interfaces, the jobs configured in its pinned maps, and its ledger; the
 * pins of switches that no interface runs any more.
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
#include "ledger.h"
#include "netns.h"
#include "pinned.h"
#include "xdp.h"

struct dev_args {
	const char *dev, *netns, *sw;
	int mode;		/* index in mode_names */
	bool pass, force, stats, dry_run;
	char swbuf[HOST_NAME_MAX + 1];
};

static const struct dev_args dev_defaults;

static const char *const mode_names[] = { "auto", "drv", "skb", NULL };
static const __u32 mode_flags[] = { 0, XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE };

#define DEV_NETNS(f) \
	OPT_STR(0, "netns", "NS", struct dev_args, netns, f, \
		"the interfaces' network namespace (default: the current one)")
#define DEV_SWITCH(f) \
	OPT_STR(0, "switch", "NAME", struct dev_args, sw, f, \
		"switch whose maps to use (default: NS, else the host name)")
#define DEV_FORCE(h) OPT_FLAG(0, "force", struct dev_args, force, 0, h)
#define DEV_ABOUT_ARGS "IFACE: the interface; 'dev IFACE' is accepted too.\n"

static const struct opt attach_opts[] = {
	DEV_NETNS(0),
	DEV_SWITCH(0),
	OPT_ENUM('m', "mode", "MODE", struct dev_args, mode, mode_names, 0,
		 "XDP mode: native (drv), generic (skb) or the kernel's choice"),
	OPT_FLAG(0, "pass", struct dev_args, pass, 0,
		 "attach the pass-through program instead (a host's veth that receives "
		 "redirected frames)"),
	DEV_FORCE("replace an XDP program that is not this switch's"),
	OPT_END
};

const struct opt_cmd dev_attach_cmd = {
	.defaults = &dev_defaults,
	.opts = attach_opts,
	.size = sizeof(struct dev_args),
	.args = "IFACE",
	.about = "Enables aggregation on one interface: attaches the inagg XDP program with the\n"
		 "switch's maps (pinned under " IA_BPFFS_ROOT "/SWITCH).\n" DEV_ABOUT_ARGS,
};

static const struct opt detach_opts[] = {
	DEV_NETNS(0),
	DEV_SWITCH(0),
	OPT_ENUM('m', "mode", "MODE", struct dev_args, mode, mode_names, 0,
		 "XDP mode the program was attached in (auto: whichever)"),
	DEV_FORCE("remove an XDP program that is not this switch's"),
	OPT_END
};

const struct opt_cmd dev_detach_cmd = {
	.defaults = &dev_defaults,
	.opts = detach_opts,
	.size = sizeof(struct dev_args),
	.args = "IFACE",
	.about = "Disables aggregation on one interface: removes inagg's XDP program, in any\n"
		 "mode unless --mode. Fails if none is attached or the switch was never set up\n"
		 "here (a wrong --switch pins nothing).\n" DEV_ABOUT_ARGS,
};

static const struct opt show_opts[] = {
	DEV_NETNS(0),
	DEV_SWITCH(0),
	/* No letter: -s is --seed in every command that has it (docs/cli.md). */
	OPT_FLAG(0, "stats", struct dev_args, stats, 0,
		 "each port's counters: its frames by outcome, as the datapath counted them"),
	OPT_END
};

const struct opt_cmd dev_show_cmd = {
	.defaults = &dev_defaults,
	.opts = show_opts,
	.size = sizeof(struct dev_args),
	.about = "Lists a switch's interfaces with their XDP program (id, mode: drv native, skb\n"
		 "generic; tag), the jobs configured in its maps, and its ledger with the backend\n"
		 "in use. --stats: under each of the switch's ports, its counters since it was\n"
		 "attached (ip -s link's way): frames received, sent and passed to the kernel,\n"
		 "then every other outcome that occurred (forwarded, aggregated, drops by reason;\n"
		 "with -j every counter).\n",
};

/* Parses the options and IFACE (or "dev IFACE") when need_dev. */
static int parse_dev(const struct opt_cmd *cmd, int argc, char **argv, struct dev_args *a,
		     bool need_dev)
{
	int i;

	memset(a, 0, sizeof(*a));
	if (opt_parse(cmd, argv[0], argc, argv, a, &i, NULL))
		return 1;
	if (i < argc && !strcmp(argv[i], "dev"))
		i++;
	if (need_dev && i < argc)
		a->dev = argv[i++];
	if (i < argc)
		return out_err("%s: unexpected argument '%s'; try 'inagg %s -h'", argv[0], argv[i],
			       argv[0]);
	if (need_dev && !a->dev)
		return out_err("%s: missing IFACE; try 'inagg %s -h'", argv[0], argv[0]);
	if (!a->sw) {
		if (a->netns) {
			a->sw = a->netns;
		} else {
			gethostname(a->swbuf, sizeof(a->swbuf) - 1);
			a->sw = a->swbuf;
		}
	}
	return 0;
}

/* Whether interface ifindex runs one of inagg's programs (ia_*), in any mode. */
static bool port_has_inagg(int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	__u32 ids[3];
	bool any = false;

	if (bpf_xdp_query(ifindex, 0, &q))
		return false;
	ids[0] = q.drv_prog_id, ids[1] = q.skb_prog_id, ids[2] = q.hw_prog_id;
	for (int k = 0; k < 3 && !any; k++) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int pfd = ids[k] ? bpf_prog_get_fd_by_id(ids[k]) : -1;

		if (pfd < 0)
			continue;
		any = !bpf_obj_get_info_by_fd(pfd, &info, &len) && !strncmp(info.name, "ia_", 3);
		close(pfd);
	}
	return any;
}

/* Whether an interface of this namespace still runs one of inagg's programs. */
static bool inagg_attached(void)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	bool any = false;

	for (i = ifs; i && i->if_index && !any; i++)
		any = port_has_inagg(i->if_index);
	if (ifs)
		if_freenameindex(ifs);
	return !ifs || any;
}

/*
 * The last port detached: the switch's pinned maps go too (/sys/fs/bpf/inagg/SWITCH), unless
 * a job is still configured in them or a port of this namespace still runs inagg. Maps of
 * another version (stale) go with the last port whatever they hold: no job in them can run
 * without a port, and this version can neither read nor use them.
 */
static bool unpin_unused(const char *sw, bool stale)
{
	struct ia_pinned_job *jobs = NULL;
	size_t n = 0;
	bool done;

	if (inagg_attached() || (!stale && (ia_pinned_jobs(sw, &jobs, &n) || n))) {
		free(jobs);
		return false;
	}
	free(jobs);
	done = !ia_xdp_unpin(sw);
	return done;
}

static int port_op(const struct opt_cmd *cmd, int argc, char **argv, bool attach)
{
	bool unpinned = false, stale;
	const char *path = argv[0];
	char why[IA_XDP_ERRLEN];
	struct ia_xdp *x = NULL;
	struct dev_args a;
	int h, ifindex, ret;
	__u32 mode;

	if (parse_dev(cmd, argc, argv, &a, true))
		return 1;
	mode = mode_flags[a.mode] | (a.force ? IA_XDP_F_FORCE : 0);
	quiet_libbpf();
	h = ia_netns_enter(a.netns);
	if (h < 0)
		return out_err("%s: netns %s: %s", path, a.netns, strerror(-h));
	ret = ia_if_info(a.dev, &ifindex, NULL);
	if (ret) {
		out_err("%s: %s: %s", path, a.dev, strerror(-ret));
		goto out;
	}
	/* Detaching never creates a switch: a wrong name is an error. */
	ret = attach ? ia_xdp_open(a.sw, &x, why, sizeof(why)) :
		       ia_xdp_open_existing(a.sw, &x, why, sizeof(why));
	/* Another version's pins (an upgrade): its program can still be detached, by its pins. */
	stale = !attach && ret == -ESTALE;
	if (stale)
		ret = 0;
	if (ret && !attach && !port_has_inagg(ifindex)) {
		/* As after the last port's detach, which unpinned the switch's maps. */
		out_err("%s: %s: no inagg program attached (switch %s: maps: %s)", path, a.dev, a.sw,
			why);
		goto out;
	}
	if (ret) {
		out_err("%s: switch %s: maps: %s", path, a.sw, why);
		goto out;
	}
	if (attach)
		ret = a.pass ? ia_xdp_attach_pass(x, ifindex, mode, why, sizeof(why)) :
			       ia_xdp_attach(x, ifindex, mode, why, sizeof(why));
	else if (stale)
		ret = ia_xdp_detach_pinned(a.sw, ifindex, mode, why, sizeof(why));
	else
		ret = ia_xdp_detach(x, ifindex, mode, why, sizeof(why));
	if (ret) {
		out_err("%s: %s: %s", path, a.dev, why);
		goto out;
	}
	if (!attach)
		unpinned = unpin_unused(a.sw, stale);
	out_begin();
	out_str("dev", attach ? "%s: inagg attached" : "%s: inagg detached", a.dev);
	out_str("switch", " (switch %s)", a.sw);
	if (!attach)
		out_bool("unpinned", unpinned ? "; its maps unpinned (no port left)" : NULL, unpinned);
	out_text("\n");
	ret = out_end();
out:
	ia_xdp_close(x);
	ia_netns_return(h);
	return ret ? 1 : 0;
}

int cmd_dev_attach(int argc, char **argv)
{
	return port_op(&dev_attach_cmd, argc, argv, true);
}

int cmd_dev_detach(int argc, char **argv)
{
	return port_op(&dev_detach_cmd, argc, argv, false);
}

/*
 * Port ifindex's counters, named by the datapath's own table (ia_ctr_name()),
 * so that a counter added there shows here. Nothing for a port that is not
 * this switch's (another switch's, or a host's pass-through program).
 */
static void show_port_stats(const char *sw, int ifindex)
{
	struct ia_counters c;
	int shown = 0;

	if (ia_pinned_port_counters(sw, ifindex, &c))
		return;
	out_obj_open("stats");
	for (int i = 0; i < IA_C__COUNT; i++) {
		const char *name = ia_ctr_name(i);

		if (!name)
			continue;
		out_uint(name, NULL, c.c[i]);
		if (!c.c[i] && i != IA_C_RX && i != IA_C_TX && i != IA_C_PASS)
			continue;
		/* Six to a line, indented under the port. */
		out_text("%s%s %llu", shown % 6 ? "  " : shown ? "\n    " : "    ", name,
			 (unsigned long long)c.c[i]);
		shown++;
	}
	out_text("\n");
	out_obj_close();
}

static void show_interfaces(const char *sw, bool stats)
{
	struct if_nameindex *ifs, *i;

	out_arr_open("interfaces");
	ifs = if_nameindex();
	for (i = ifs; i && i->if_index; i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		struct bpf_prog_info info = { 0 };
		__u32 id = 0, len = sizeof(info);
		const char *mode = "";
		char tag[2 * BPF_TAG_SIZE + 1] = "";

		/* The program of the mode attached (native first), as ip link shows it. */
		if (!bpf_xdp_query(i->if_index, 0, &q)) {
			if (q.drv_prog_id)
				id = q.drv_prog_id, mode = "drv";
			else if (q.skb_prog_id)
				id = q.skb_prog_id, mode = "skb";
			else if (q.hw_prog_id)
				id = q.hw_prog_id, mode = "hw";
		}
		if (id) {
			int pfd = bpf_prog_get_fd_by_id(id);

			if (pfd >= 0) {
				bpf_obj_get_info_by_fd(pfd, &info, &len);
				close(pfd);
				for (int k = 0; k < BPF_TAG_SIZE; k++)
					snprintf(tag + 2 * k, 3, "%02x", info.tag[k]);
			}
		}
		out_obj_open(NULL);
		out_str("name", "  %-8s", i->if_name);
		out_int("ifindex", " ifindex %-4lld", i->if_index);
		out_uint("prog_id", id ? " xdp id %llu" : "", id);
		if (id) {
			out_str("mode", " mode %s", mode);
			out_str("tag", " tag %s", tag);
		}
		out_str("prog", id ? " %s\n" : " no xdp\n", id ? info.name : "");
		if (stats && id && !strncmp(info.name, "ia_", 3))
			show_port_stats(sw, i->if_index);
		out_obj_close();
	}
	if (ifs)
		if_freenameindex(ifs);
	out_arr_close();
}

static void show_jobs(const char *sw)
{
	struct ia_pinned_job *jobs;
	size_t n = 0;

	out_arr_open("jobs");
	if (!ia_pinned_jobs(sw, &jobs, &n)) {
		for (size_t i = 0; i < n; i++) {
			const struct ia_job_cfg *cfg = &jobs[i].cfg;

			out_obj_open(NULL);
			out_uint("job", "  job %llu", jobs[i].id);
			out_str("role", " %s",
				cfg->role == IA_ROLE_BLUE ? "blue (aggregates)" : "red (forwards)");
			out_uint("expected", ", %llu senders per chunk\n", cfg->expected);
			out_obj_close();
		}
		free(jobs);
	}
	out_arr_close();
}

static void show_ledger(void)
{
	struct ia_ledger_cap cap;
	struct ia_ledger *l;

	if (ia_ledger_open(&l, IA_LEDGER_AUTO, NULL))
		return;
	out_obj_open("ledger");
	out_str("backend", "ledger (%s backend):",
		ia_ledger_backend_name(ia_ledger_backend(l)));
	if (!ia_ledger_get(l, &cap, NULL, 0)) {
		out_uint("used_jobs", " jobs %llu", cap.used_jobs);
		out_uint("max_jobs", "/%llu", cap.max_jobs);
		out_uint("used_slots", ", slots %llu", cap.used_slots);
		out_uint("max_slots", "/%llu", cap.max_slots);
	}
	out_text("\n");
	out_obj_close();
	ia_ledger_close(l);
}

int cmd_dev_show(int argc, char **argv)
{
	struct dev_args a;
	int h;

	if (parse_dev(&dev_show_cmd, argc, argv, &a, false))
		return 1;
	quiet_libbpf();
	h = ia_netns_enter(a.netns);
	if (h < 0)
		return out_err("%s: netns %s: %s", argv[0], a.netns, strerror(-h));
	out_begin();
	out_str("switch", "switch %s\n", a.sw);
	show_interfaces(a.sw, a.stats);
	show_jobs(a.sw);
	show_ledger();
	ia_netns_return(h);
	return out_end();
}

static const struct opt cleanup_opts[] = {
	OPT_FLAG(0, "dry-run", struct dev_args, dry_run, 0,
		 "say which switches would be removed, remove nothing"),
	OPT_STR(0, "switch", "NAME", struct dev_args, sw, 0,
		"only the switches NAME matches (a shell pattern: 'ia-*'; default: all)"),
	OPT_END
};

const struct opt_cmd dev_cleanup_cmd = {
	.defaults = &dev_defaults,
	.opts = cleanup_opts,
	.size = sizeof(struct dev_args),
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
	struct dev_args a;

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
