// SPDX-License-Identifier: GPL-2.0
/* inagg net up | down: a topology built in network namespaces (docs/net.md). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <linux/if_link.h>

#include "cli.h"
#include "netbuild.h"
#include "netns.h"
#include "netplan.h"
#include "xdp.h"
#include "xdp_vq.h"

struct net_args {
	const char *topo, *net;
	double rate_mbit;
	bool attach;
	int mark_kb;
	int mtu;
};

static const struct net_args net_defaults = { .net = "ia" };

#define NET_HELP "network name, 1-" OPT_STR_OF(IA_NET_TAG_MAX) " of [a-z0-9]"

static const struct opt up_opts[] = {
	OPT_STR('t', "topo", "FILE", struct net_args, topo, OPT_REQUIRED, "topology (JSON)"),
	OPT_STR('n', "net", "TAG", struct net_args, net, 0, NET_HELP),
	OPT_REAL(0, "rate-mbit", "R", struct net_args, rate_mbit, 0, 1.0 / 0.0, OPT_NODEF,
		 "shape each uplink to rate x R Mbit/s with tc tbf; this paces what the "
		 "kernel forwards (inagg's XDP forwarding bypasses qdiscs)"),
	OPT_INT(0, "mtu", "BYTES", struct net_args, mtu, 576, IA_NET_MTU_MAX, OPT_NODEF,
		"every link's MTU (default the kernel's, 1500): chunks of more than 360 "
		"elements need more, 768 elements 3130 (docs/allreduce.md)"),
	OPT_FLAG(0, "attach", struct net_args, attach, 0,
		 "attach the XDP datapath to every switch port (and the pass program to "
		 "every host's eth0)"),
	OPT_INT(0, "mark-kb", "K", struct net_args, mark_kb, 0, 1 << 22, OPT_NODEF,
		"with --attach and --rate-mbit: every uplink's virtual queue drains at the "
		"uplink's rate and marks messages that find more than K KiB queued "
		"(docs/cc.md)"),
	OPT_END
};

const struct opt_cmd net_up_cmd = {
	.opts = up_opts,
	.defaults = &net_defaults,
	.size = sizeof(net_defaults),
	.about = "Builds the topology in network namespaces: ia-TAG-SWITCH per switch, its L(v)\n"
		 "workers ia-TAG-SWITCH-wJ, the destination ia-TAG-dest; veth links, routed IPv4\n"
		 "(addresses in docs/net.md).\n",
	.notes = "A failed build removes what it made. 'inagg net down -n TAG' removes it all.\n",
};

static const struct opt down_opts[] = {
	OPT_STR('n', "net", "TAG", struct net_args, net, 0, NET_HELP),
	OPT_STR('t', "topo", "FILE", struct net_args, topo, 0,
		"also unpin the maps of the topology's switches (every ia-TAG-* switch's "
		"are unpinned anyway)"),
	OPT_END
};

const struct opt_cmd net_down_cmd = {
	.opts = down_opts,
	.defaults = &net_defaults,
	.size = sizeof(net_defaults),
	.about = "Removes every namespace of a network built by 'inagg net up', and the\n"
		 "switches' pinned maps.\n",
};

/* The hosts of switch v receive redirected frames: they need the pass program. */
static int attach_hosts(const struct ia_topo *t, int v, const char *tag, struct ia_xdp *x)
{
	char ns[128];
	int ret = 0;

	for (uint32_t j = 0; j <= t->sw[v].load && !ret; j++) {
		char why[IA_ERRLEN] = "";
		int h, ifindex;

		if (j == t->sw[v].load && v != t->root)
			break;
		if (j == t->sw[v].load)
			ia_net_dest_ns(tag, ns, sizeof(ns));
		else
			ia_net_worker_ns(tag, t->sw[v].name, j, ns, sizeof(ns));
		h = ia_netns_enter(ns);
		ret = h < 0 ? h : ia_if_info(IA_HOST_PORT, &ifindex, NULL);
		if (!ret)
			ret = ia_xdp_attach_pass(x, ifindex, XDP_FLAGS_DRV_MODE, why, sizeof(why));
		if (h >= 0)
			ia_netns_return(h);
		if (ret)
			out_err("%s: attach pass %s: %s", ns, IA_HOST_PORT,
				*why ? why : ia_xdp_errname(ret));
	}
	return ret;
}

/* The uplink's virtual queue: the congestion signal of what XDP forwards past tbf. */
static int mark_uplink(const struct ia_topo *t, int v, const char *ns, struct ia_xdp *x,
		       const struct net_args *a)
{
	struct ia_xdp_vq q = {
		.rate_bps = (__u64)(ia_ratio_double(t->sw[v].rate) * a->rate_mbit * 1e6),
		.thresh = (__u32)a->mark_kb * 1024,
	};
	char why[IA_ERRLEN] = "";
	int ifindex, ret;

	if (!q.rate_bps)
		q.rate_bps = 1;
	ret = ia_if_info(IA_PORT_UP, &ifindex, NULL) ?:
	      ia_xdp_vq_set(x, ifindex, &q, why, sizeof(why));
	if (ret)
		out_err("%s: marks on %s: %s", ns, IA_PORT_UP, *why ? why : ia_xdp_errname(ret));
	return ret;
}

/* Attaches every port of switch v, in its namespace ns. */
static int attach_switch(const struct ia_topo *t, int v, const char *ns, struct ia_xdp *x)
{
	char ifname[IFNAMSIZ], why[IA_ERRLEN] = "";
	int ret = 0;

	for (int p = 0; !ret && p < ia_port_count(t, v); p++) {
		int ifindex;

		ia_port_nth(t, v, p, ifname);
		ret = ia_if_info(ifname, &ifindex, NULL);
		if (!ret)
			ret = ia_xdp_attach(x, ifindex, XDP_FLAGS_DRV_MODE, why, sizeof(why));
		if (ret)
			out_err("%s: attach %s: %s", ns, ifname, *why ? why : ia_xdp_errname(ret));
	}
	return ret;
}

static int attach_all(const struct ia_topo *t, const char *tag, const struct net_args *a)
{
	char ns[128], why[IA_XDP_ERRLEN];
	int ret = 0;

	for (int v = 0; v < t->n && !ret; v++) {
		struct ia_xdp *x = NULL;
		int h;

		ia_net_switch_ns(tag, t->sw[v].name, ns, sizeof(ns));
		h = ia_netns_enter(ns);
		if (h < 0)
			return out_err("%s: %s", ns, strerror(-h));
		ret = ia_xdp_open(ns, &x, why, sizeof(why));
		if (ret)
			out_err("%s: maps: %s", ns, why);
		else
			ret = attach_switch(t, v, ns, x);
		if (!ret && a->mark_kb)
			ret = mark_uplink(t, v, ns, x, a);
		if (!ret)
			ret = attach_hosts(t, v, tag, x);
		ia_xdp_close(x);
		ia_netns_return(h);
	}
	return ret ? 1 : 0;
}

static void unpin_all(const struct ia_topo *t, const char *tag)
{
	char ns[128];

	for (int v = 0; v < t->n; v++) {
		ia_net_switch_ns(tag, t->sw[v].name, ns, sizeof(ns));
		ia_xdp_unpin(ns);
	}
}

/*
 * Every switch of network tag pins its maps as ia-TAG-SWITCH (a tag has no
 * '-'): those go with the namespaces, topology file or not. Left behind, a
 * later net up of the tag would find them and start with their counters.
 */
static int unpin_tag(const char *tag)
{
	struct dirent *e;
	char prefix[64];
	int ret = 0, r;
	DIR *d;

	ia_net_switch_ns(tag, "", prefix, sizeof(prefix));
	d = opendir(IA_BPFFS_ROOT);
	if (!d)
		return errno == ENOENT ? 0 : out_err("%s: %s", IA_BPFFS_ROOT, strerror(errno));
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) || !e->d_name[strlen(prefix)])
			continue;
		r = ia_xdp_unpin(e->d_name);
		if (r && r != -ENOENT && !ret)
			ret = out_err("%s/%s: %s", IA_BPFFS_ROOT, e->d_name, strerror(-r));
	}
	closedir(d);
	return ret;
}

/*
 * The records the daemon's agents kept of the switches' namespaces
 * (IA_RUN_DIR/agent-ia-TAG-SWITCH.json): of namespaces that are gone, so
 * of no use to the next network of the tag, which has new namespaces (an
 * agent ignores a record of another namespace); left, they pile up in /run.
 */
static void drop_agent_records(const char *tag)
{
	char prefix[64], path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	snprintf(prefix, sizeof(prefix), "agent-ia-%s-", tag);
	d = opendir(IA_RUN_DIR);
	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		bool json = n > 5 && !strcmp(e->d_name + n - 5, ".json");
		bool tmp = n > 9 && !strcmp(e->d_name + n - 9, ".json.tmp");

		if (strncmp(e->d_name, prefix, strlen(prefix)) || !(json || tmp))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", IA_RUN_DIR, e->d_name) <
		    sizeof(path))
			unlink(path);
	}
	closedir(d);
}

int cmd_net_up(int argc, char **argv)
{
	struct net_args a = net_defaults;
	struct ia_net_opts o;
	char err[IA_ERRLEN];
	struct ia_topo *t;
	int ret;

	if (opt_parse(&net_up_cmd, argv[0], argc, argv, &a, NULL, NULL))
		return 1;
	if (a.mark_kb && (!a.attach || a.rate_mbit <= 0))
		return out_err("%s: --mark-kb needs --attach and --rate-mbit", argv[0]);
	if (load_topo(a.topo, &t))
		return 1;
	o = (struct ia_net_opts){ .tag = a.net, .rate_mbit = a.rate_mbit, .mtu = a.mtu };
	ret = ia_net_up(t, &o, err, sizeof(err));
	if (ret) {
		ia_topo_free(t);
		return out_err("%s: %s", argv[0], err);
	}
	quiet_libbpf();
	if (a.attach && attach_all(t, a.net, &a)) {
		/* Nothing of a failed build stays: namespaces and pins go. */
		ia_net_down(a.net, err, sizeof(err));
		unpin_all(t, a.net);
		ia_topo_free(t);
		return 1;
	}
	out_begin();
	out_str("net", "network %s up: ", a.net);
	out_int("switches", "%lld switches, ", t->n);
	out_uint("workers", "%llu workers, ", (unsigned long long)ia_topo_total_load(t));
	out_bool("attached", a.attach ? "datapath attached\n" : "datapath not attached\n",
		 a.attach);
	ia_topo_free(t);
	return out_end();
}

int cmd_net_down(int argc, char **argv)
{
	struct net_args a = net_defaults;
	char err[IA_ERRLEN];

	if (opt_parse(&net_down_cmd, argv[0], argc, argv, &a, NULL, NULL))
		return 1;
	if (ia_net_down(a.net, err, sizeof(err)))
		return out_err("%s: %s", argv[0], err);
	if (unpin_tag(a.net))
		return 1;
	drop_agent_records(a.net);
	if (a.topo) {
		struct ia_topo *t;

		if (load_topo(a.topo, &t))
			return 1;
		unpin_all(t, a.net);
		ia_topo_free(t);
	}
	out_begin();
	out_str("net", "network %s down\n", a.net);
	return out_end();
}
