// SPDX-License-Identifier: GPL-2.0
/*
 * inagg dev attach | detach | show: the XDP datapath on a switch's
 * interfaces, the jobs configured in its pinned maps, and its ledger
 * (dev cleanup: cmd_dev_cleanup.c).
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	bool pass, force, stats;
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
