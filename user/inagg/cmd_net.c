// SPDX-License-Identifier: GPL-2.0
/*
 * inagg topo up|down, attach|detach|status, job submit|list|show|end, stats:
 * the live network, its switches' interfaces and the daemon's jobs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <json-c/json.h>
#include <linux/if_link.h>

#include "cli.h"
#include "ctl.h"
#include "ledger.h"
#include "netbuild.h"
#include "xdp.h"

const char help_topo_up[] =
	"Builds the topology in network namespaces: ia-TAG-SWITCH per switch, its L(v)\n"
	"workers ia-TAG-SWITCH-wJ, the destination ia-TAG-dest; veth links, routed IPv4\n"
	"(addresses in docs/net.md).\n"
	"  -t, --topo FILE      topology (JSON)\n"
	"  -n, --net TAG        network name, 1-8 of [a-z0-9] (default ia)\n"
	"  -r, --rate-mbit R    shape each uplink to rate x R Mbit/s with tc tbf; this\n"
	"                       paces what the kernel forwards (inagg's XDP forwarding\n"
	"                       bypasses qdiscs)\n"
	"  -a, --attach         attach the XDP datapath to every switch port (and the\n"
	"                       pass program to every host's eth0)\n"
	"A failed build removes what it made. 'inagg topo down -n TAG' removes it all.\n";

const char help_topo_down[] =
	"Removes every namespace of a network built by 'inagg topo up', and the\n"
	"switches' pinned maps.\n"
	"  -n, --net TAG        network name (default ia)\n"
	"  -t, --topo FILE      also unpin the maps of the topology's switches\n";

const char help_attach[] =
	"Enables aggregation on one interface: attaches the inagg XDP program with the\n"
	"switch's maps (pinned under " IA_BPFFS_ROOT "/SWITCH).\n"
	"  dev IFACE            the interface\n"
	"  -n, --netns NS       the interface's network namespace (default: current)\n"
	"  -s, --switch NAME    switch whose maps to use (default: NS, else the host name)\n"
	"  -m, --mode MODE      drv (native), skb (generic) or auto (default)\n"
	"  -p, --pass           attach the pass-through program instead (a host's veth\n"
	"                       that receives redirected frames)\n"
	"      --force          replace an XDP program that is not this switch's\n";

const char help_detach[] =
	"Disables aggregation on one interface (removes inagg's XDP program, in any mode\n"
	"unless -m). Fails if none is attached or the switch was never set up here.\n"
	"  dev IFACE  -n NS  -s NAME  -m MODE   as for attach\n"
	"      --force          remove the XDP program even if it is not this switch's\n";

const char help_status[] =
	"Lists a switch's interfaces with their XDP program, the jobs configured in its\n"
	"maps, and its ledger with the backend in use.\n"
	"  -n, --netns NS  -s, --switch NAME   as for attach\n";

const char help_job_submit[] =
	"Submits a job to inaggd: placement, admission on every blue switch, map pushes.\n"
	"  -k, --k K            blue switches at most (required)\n"
	"  -a, --algo ALGO      smc (default), top, max, level, all-red, all-blue\n"
	"  -w, --window W       aggregator slots per blue switch (default 128);\n"
	"                       workers keep half of it in flight\n"
	"  -J, --job ID         job id (default: the smallest free)\n"
	"  -W, --workers LIST   SWITCH=COUNT,... workers taking part (default: all)\n"
	"  -S, --socket PATH    inaggd's socket (default " IA_CTL_SOCK ")\n";

const char help_job_list[] = "Lists inaggd's jobs.\n  -S, --socket PATH\n";
const char help_job_show[] = "Shows one job: placement, workers, destination, per-link model.\n"
			     "  -J, --job ID  -S, --socket PATH\n";
const char help_job_end[] = "Ends a job: configuration removed, admissions released.\n"
			    "  -J, --job ID  -S, --socket PATH\n";
const char help_stats[] =
	"Per link of a job: messages per chunk measured by the switches' counters beside\n"
	"the congestion model's prediction, and the measured network congestion.\n"
	"Without -J: per uplink, all jobs together, what was sent up, the results that\n"
	"came down, foreign traffic passed to the kernel, and drops by reason.\n"
	"  -J, --job ID         the job\n"
	"  -c, --chunks N       chunks the job ran (default: as counted at the root)\n"
	"  -S, --socket PATH\n";

/* ---- topo up / down ---- */

static int attach_all(const struct ia_topo *t, const char *tag)
{
	char ns[128], ifname[16];
	int ret = 0;

	for (int v = 0; v < t->n && !ret; v++) {
		int nports = 1 + (t->child_start[v + 1] - t->child_start[v]) + t->sw[v].load;
		struct ia_xdp *x = NULL;	/* closed below even if the open failed */
		int h;

		ia_net_switch_ns(tag, t->sw[v].name, ns, sizeof(ns));
		h = ia_netns_enter(ns);
		if (h < 0)
			return out_err("%s: %s", ns, strerror(-h));
		ret = ia_xdp_open(ns, &x);
		if (ret)
			out_err("%s: %s", ns, ia_xdp_strerror(ret));
		for (int i = 0; !ret && i < nports; i++) {
			int nc = t->child_start[v + 1] - t->child_start[v], ifindex;

			if (i == 0)
				snprintf(ifname, sizeof(ifname), "up");
			else if (i <= nc)
				snprintf(ifname, sizeof(ifname), "d%d", i - 1);
			else
				snprintf(ifname, sizeof(ifname), "h%d", i - 1 - nc);
			ret = ia_if_info(ifname, &ifindex, NULL);
			if (!ret)
				ret = ia_xdp_attach(x, ifindex, XDP_FLAGS_DRV_MODE);
			if (ret)
				out_err("%s: attach %s: %s", ns, ifname, ia_xdp_strerror(ret));
		}
		if (!ret) {
			/* Hosts receive redirected frames: they need the pass program. */
			for (uint32_t j = 0; j <= t->sw[v].load && !ret; j++) {
				int hh, ifindex;

				if (j == t->sw[v].load && v != t->root)
					break;
				if (j == t->sw[v].load)
					ia_net_dest_ns(tag, ns, sizeof(ns));
				else
					ia_net_worker_ns(tag, t->sw[v].name, j, ns, sizeof(ns));
				hh = ia_netns_enter(ns);
				ret = hh < 0 ? hh : ia_if_info("eth0", &ifindex, NULL);
				if (!ret)
					ret = ia_xdp_attach_pass(x, ifindex, XDP_FLAGS_DRV_MODE);
				ia_netns_return(hh);
				if (ret)
					out_err("%s: attach pass eth0: %s", ns, strerror(-ret));
			}
		}
		if (x)
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

int cmd_topo_up(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "topo", required_argument, NULL, 't' }, { "net", required_argument, NULL, 'n' },
		{ "rate-mbit", required_argument, NULL, 'r' },
		{ "attach", no_argument, NULL, 'a' }, { NULL }
	};
	struct ia_net_opts o = { .tag = "ia" };
	const char *topo = NULL;
	char err[IA_ERRLEN];
	struct ia_topo *t;
	bool attach = false;
	int c, ret;

	while ((c = getopt_long(argc, argv, ":t:n:r:a", opts, NULL)) != -1) {
		switch (c) {
		case 't': topo = optarg; break;
		case 'n': o.tag = optarg; break;
		case 'a': attach = true; break;
		case 'r': {
			char *end;

			o.rate_mbit = strtod(optarg, &end);
			if (*end || end == optarg || o.rate_mbit <= 0)
				return out_err("topo up: --rate-mbit: need a number > 0");
			break;
		}
		default: return bad_option("topo up", c, optopt, argv);
		}
	}
	if (!topo)
		return out_err("topo up: missing -t FILE");
	if (load_topo(topo, &t))
		return 1;
	ret = ia_net_up(t, &o, err, sizeof(err));
	if (ret) {
		ia_topo_free(t);
		return out_err("topo up: %s", err);
	}
	libbpf_set_print(NULL);
	if (attach && attach_all(t, o.tag)) {
		ia_net_down(o.tag, err, sizeof(err));
		unpin_all(t, o.tag);
		ia_topo_free(t);
		return 1;
	}
	out_begin();
	out_str("net", "network %s up: ", o.tag);
	out_int("switches", "%lld switches, ", t->n);
	out_uint("workers", "%llu workers, ", (unsigned long long)ia_topo_total_load(t));
	out_bool("attached", attach ? "datapath attached\n" : "datapath not attached\n", attach);
	ia_topo_free(t);
	return out_end();
}

int cmd_topo_down(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "net", required_argument, NULL, 'n' }, { "topo", required_argument, NULL, 't' },
		{ NULL }
	};
	const char *tag = "ia", *topo = NULL;
	char err[IA_ERRLEN];
	int c;

	while ((c = getopt_long(argc, argv, ":n:t:", opts, NULL)) != -1) {
		switch (c) {
		case 'n': tag = optarg; break;
		case 't': topo = optarg; break;
		default: return bad_option("topo down", c, optopt, argv);
		}
	}
	if (ia_net_down(tag, err, sizeof(err)))
		return out_err("topo down: %s", err);
	if (topo) {
		struct ia_topo *t;

		if (load_topo(topo, &t))
			return 1;
		unpin_all(t, tag);
		ia_topo_free(t);
	}
	out_begin();
	out_str("net", "network %s down\n", tag);
	return out_end();
}

/* ---- attach / detach / status ---- */

struct port_opts {
	const char *dev, *netns, *sw;
	__u32 mode;
	bool pass, force;
	char swbuf[HOST_NAME_MAX + 1];
};

static int parse_port_opts(const char *cmd, int argc, char **argv, struct port_opts *p,
			   bool need_dev)
{
	static const struct option opts[] = {
		{ "netns", required_argument, NULL, 'n' }, { "switch", required_argument, NULL, 's' },
		{ "mode", required_argument, NULL, 'm' },  { "pass", no_argument, NULL, 'p' },
		{ "force", no_argument, NULL, 'F' }, { NULL }
	};
	int c;

	memset(p, 0, sizeof(*p));
	while ((c = getopt_long(argc, argv, ":n:s:m:p", opts, NULL)) != -1) {
		switch (c) {
		case 'n': p->netns = optarg; break;
		case 's': p->sw = optarg; break;
		case 'p': p->pass = true; break;
		case 'F': p->force = true; break;
		case 'm':
			if (!strcmp(optarg, "drv"))
				p->mode = XDP_FLAGS_DRV_MODE;
			else if (!strcmp(optarg, "skb"))
				p->mode = XDP_FLAGS_SKB_MODE;
			else if (strcmp(optarg, "auto"))
				return out_err("%s: --mode: drv, skb or auto", cmd);
			break;
		default: return bad_option(cmd, c, optopt, argv);
		}
	}
	for (; optind < argc; optind++) {
		if (!strcmp(argv[optind], "dev") && optind + 1 < argc)
			p->dev = argv[++optind];
		else
			return out_err("%s: unexpected '%s'; try '%s -h'", cmd, argv[optind], cmd);
	}
	if (need_dev && !p->dev)
		return out_err("%s: missing 'dev IFACE'", cmd);
	if (!p->sw) {
		if (p->netns) {
			p->sw = p->netns;
		} else {
			gethostname(p->swbuf, sizeof(p->swbuf) - 1);
			p->sw = p->swbuf;
		}
	}
	return 0;
}

static int port_op(const char *cmd, int argc, char **argv, bool attach)
{
	struct port_opts p;
	struct ia_xdp *x = NULL;
	int h, ifindex, ret;

	if (parse_port_opts(cmd, argc, argv, &p, true))
		return 1;
	libbpf_set_print(NULL);
	h = ia_netns_enter(p.netns);
	if (h < 0)
		return out_err("%s: netns %s: %s", cmd, p.netns, strerror(-h));
	ret = ia_if_info(p.dev, &ifindex, NULL);
	if (ret) {
		out_err("%s: %s: %s", cmd, p.dev, strerror(-ret));
		goto out;
	}
	/* Detach never sets a switch up. */
	ret = attach ? ia_xdp_open(p.sw, &x) : ia_xdp_open_existing(p.sw, &x);
	if (ret) {
		out_err("%s: switch %s: %s", cmd, p.sw, ia_xdp_strerror(ret));
		goto out;
	}
	if (p.force)
		p.mode |= IA_XDP_F_FORCE;
	if (attach)
		ret = p.pass ? ia_xdp_attach_pass(x, ifindex, p.mode) :
			       ia_xdp_attach(x, ifindex, p.mode);
	else
		ret = ia_xdp_detach(x, ifindex, p.mode);
	if (ret) {
		out_err("%s: %s: %s", cmd, p.dev, ia_xdp_strerror(ret));
		goto out;
	}
	out_begin();
	out_str("dev", attach ? "%s: inagg attached" : "%s: inagg detached", p.dev);
	out_str("switch", " (switch %s)\n", p.sw);
	ret = out_end();
out:
	ia_xdp_close(x);
	ia_netns_return(h);
	return ret ? 1 : 0;
}

int cmd_attach(int argc, char **argv)
{
	return port_op("attach", argc, argv, true);
}

int cmd_detach(int argc, char **argv)
{
	return port_op("detach", argc, argv, false);
}

int cmd_status(int argc, char **argv)
{
	struct port_opts p;
	struct if_nameindex *ifs, *i;
	char path[PATH_MAX];
	int h, fd;

	if (parse_port_opts("status", argc, argv, &p, false))
		return 1;
	libbpf_set_print(NULL);
	h = ia_netns_enter(p.netns);
	if (h < 0)
		return out_err("status: netns %s: %s", p.netns, strerror(-h));
	out_begin();
	out_str("switch", "switch %s\n", p.sw);
	out_arr_open("interfaces");
	ifs = if_nameindex();
	for (i = ifs; i && i->if_index; i++) {
		__u32 id = 0;
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);

		bpf_xdp_query_id(i->if_index, 0, &id);
		if (id) {
			int pfd = bpf_prog_get_fd_by_id(id);

			if (pfd >= 0) {
				bpf_obj_get_info_by_fd(pfd, &info, &len);
				close(pfd);
			}
		}
		out_obj_open(NULL);
		out_str("name", "  %-8s", i->if_name);
		out_int("ifindex", " ifindex %-4lld", i->if_index);
		out_uint("prog_id", id ? " xdp id %llu" : "", id);
		out_str("prog", id ? " %s\n" : " no xdp\n", id ? info.name : "");
		out_obj_close();
	}
	if (ifs)
		if_freenameindex(ifs);
	out_arr_close();

	/* Jobs configured in the switch's maps. */
	out_arr_open("jobs");
	snprintf(path, sizeof(path), "%s/%s/ia_jobs", IA_BPFFS_ROOT, p.sw);
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		__u32 key, *prev = NULL;
		struct ia_job_cfg cfg;

		while (!bpf_map_get_next_key(fd, prev, &key)) {
			if (!bpf_map_lookup_elem(fd, &key, &cfg)) {
				out_obj_open(NULL);
				out_uint("job", "  job %llu", key);
				out_str("role", " %s",
					cfg.role == IA_ROLE_BLUE ? "blue (aggregates)" :
								   "red (forwards)");
				out_uint("expected", ", %llu senders per chunk\n", cfg.expected);
				out_obj_close();
			}
			prev = &key;
		}
		close(fd);
	}
	out_arr_close();

	struct ia_ledger *l;
	struct ia_ledger_cap cap;

	if (!ia_ledger_open(&l, IA_LEDGER_AUTO, NULL)) {
		out_obj_open("ledger");
		out_str("backend", "ledger (%s backend):",
			ia_ledger_backend_name(ia_ledger_backend(l)));
		if (!ia_ledger_get(l, &cap)) {
			out_uint("used_jobs", " jobs %llu", cap.used_jobs);
			out_uint("max_jobs", "/%llu", cap.max_jobs);
			out_uint("used_slots", ", slots %llu", cap.used_slots);
			out_uint("max_slots", "/%llu", cap.max_slots);
		}
		out_text("\n");
		out_obj_close();
		ia_ledger_close(l);
	}
	ia_netns_return(h);
	return out_end();
}

/* ---- jobs, through inaggd ---- */

static int call(const char *sock, json_object *req, json_object **reply)
{
	char err[IA_ERRLEN];
	json_object *ok, *msg;

	*reply = NULL;
	if (ia_ctl_call(sock ? sock : IA_CTL_SOCK, req, reply, err, sizeof(err))) {
		json_object_put(req);
		return out_err("%s", err);
	}
	json_object_put(req);
	if (!json_object_object_get_ex(*reply, "ok", &ok) || !json_object_get_boolean(ok)) {
		json_object_object_get_ex(*reply, "error", &msg);
		out_err("inaggd: %s", msg ? json_object_get_string(msg) : "failed");
		json_object_put(*reply);
		*reply = NULL;
		return 1;
	}
	return 0;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

static int print_reply(json_object *reply, const char *key)
{
	json_object *v = reply;

	if (key)
		json_object_object_get_ex(reply, key, &v);
	printf("%s\n", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PRETTY |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(reply);
	return 0;
}

static void print_job(json_object *j)
{
	json_object *arr;

	printf("job %s: %s, %s k=%s window %s (workers %s in flight), blue:", jstr(j, "job"),
	       jstr(j, "state"), jstr(j, "algorithm"), jstr(j, "k"), jstr(j, "window"),
	       jstr(j, "worker_window"));
	if (json_object_object_get_ex(j, "blue", &arr))
		for (size_t i = 0; i < json_object_array_length(arr); i++)
			printf(" %s", json_object_get_string(json_object_array_get_idx(arr, i)));
	printf("\n");
	if (!json_object_object_get_ex(j, "congestion", &arr))
		return;
	printf("  model congestion %s, %s workers\n", jstr(j, "congestion"), jstr(j, "nworkers"));
	if (json_object_object_get_ex(j, "destination", &arr))
		printf("  destination %s (%s), results down to %s, %s senders per chunk\n",
		       jstr(arr, "address"), jstr(arr, "netns"), jstr(arr, "down"),
		       jstr(arr, "senders"));
	if (json_object_object_get_ex(j, "links", &arr))
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			json_object *l = json_object_array_get_idx(arr, i);

			printf("  %-8s %-4s %4s senders in, %4s messages up per chunk\n",
			       jstr(l, "switch"), jstr(l, "role"), jstr(l, "members"),
			       jstr(l, "messages"));
		}
	if (json_object_object_get_ex(j, "workers", &arr))
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			json_object *w = json_object_array_get_idx(arr, i);

			printf("  worker %-4s %-15s %s\n", jstr(w, "id"), jstr(w, "address"),
			       jstr(w, "netns"));
		}
}

static int job_opts(const char *cmd, int argc, char **argv, json_object *req, const char **sock,
		    bool need_job)
{
	static const struct option opts[] = {
		{ "k", required_argument, NULL, 'k' },	    { "algo", required_argument, NULL, 'a' },
		{ "window", required_argument, NULL, 'w' }, { "job", required_argument, NULL, 'J' },
		{ "workers", required_argument, NULL, 'W' },
		{ "chunks", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 'S' }, { NULL }
	};
	bool has_job = false;
	long v;
	int c;

	while ((c = getopt_long(argc, argv, ":k:a:w:J:W:c:S:", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			if (parse_long("-k", optarg, 0, INT_MAX, &v))
				return 1;
			json_object_object_add(req, "k", json_object_new_int64(v));
			break;
		case 'a': {
			enum ia_algo a;

			if (parse_algo(optarg, &a))
				return 1;
			json_object_object_add(req, "algorithm", json_object_new_string(optarg));
			break;
		}
		case 'w':
			if (parse_long("-w", optarg, 1, IA_MAX_WINDOW, &v))
				return 1;
			json_object_object_add(req, "window", json_object_new_int64(v));
			break;
		case 'J':
			if (parse_long("-J", optarg, 1, UINT32_MAX - 1, &v))
				return 1;
			json_object_object_add(req, "job", json_object_new_int64(v));
			has_job = true;
			break;
		case 'c':
			if (parse_long("-c", optarg, 1, LONG_MAX, &v))
				return 1;
			json_object_object_add(req, "chunks", json_object_new_int64(v));
			break;
		case 'W': {
			json_object *w = json_object_new_object();
			char *list = strdup(optarg), *save, *item;

			for (item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
				char *eq = strchr(item, '=');

				if (!eq || parse_long("-W", eq + 1, 0, INT_MAX, &v)) {
					free(list);
					json_object_put(w);
					return eq ? 1 : out_err("-W: need SWITCH=COUNT,...");
				}
				*eq = '\0';
				json_object_object_add(w, item, json_object_new_int64(v));
			}
			free(list);
			json_object_object_add(req, "workers", w);
			break;
		}
		case 'S': *sock = optarg; break;
		default: return bad_option(cmd, c, optopt, argv);
		}
	}
	if (optind < argc)
		return out_err("%s: unexpected '%s'", cmd, argv[optind]);
	if (need_job && !has_job)
		return out_err("%s: missing -J JOB", cmd);
	return 0;
}

static int job_cmd(const char *cmd, const char *wire, int argc, char **argv, bool need_job)
{
	json_object *req = json_object_new_object(), *reply, *v;
	const char *sock = NULL;

	json_object_object_add(req, "cmd", json_object_new_string(wire));
	if (job_opts(cmd, argc, argv, req, &sock, need_job)) {
		json_object_put(req);
		return 1;
	}
	if (!strcmp(wire, "submit") && !json_object_object_get_ex(req, "k", &v)) {
		json_object_put(req);
		return out_err("%s: missing -k K", cmd);
	}
	if (call(sock, req, &reply))
		return 1;
	if (out_is_json())
		return print_reply(reply, !strcmp(wire, "list") || !strcmp(wire, "stats") ? NULL :
										       "job");
	if (!strcmp(wire, "list")) {
		json_object_object_get_ex(reply, "jobs", &v);
		printf("network %s: %zu jobs\n", jstr(reply, "network"),
		       v ? json_object_array_length(v) : 0);
		for (size_t i = 0; v && i < json_object_array_length(v); i++)
			print_job(json_object_array_get_idx(v, i));
	} else if (!strcmp(wire, "end")) {
		printf("job ended\n");
	} else if (!strcmp(wire, "stats") && !json_object_object_get_ex(reply, "job", NULL)) {
		printf("  %-8s %10s %12s %8s  %s\n", "uplink", "sent up", "results down",
		       "passed", "dropped");
		json_object_object_get_ex(reply, "links", &v);
		for (size_t i = 0; v && i < json_object_array_length(v); i++) {
			json_object *l = json_object_array_get_idx(v, i);

			printf("  %-8s %10s %12s %8s  %s\n", jstr(l, "switch"), jstr(l, "sent_up"),
			       jstr(l, "results_down"), jstr(l, "passed"),
			       json_object_to_json_string_ext(json_object_object_get(l, "dropped"),
							      JSON_C_TO_STRING_PLAIN));
		}
	} else if (!strcmp(wire, "stats")) {
		printf("job %s over %s chunks: measured congestion %s (model %s)\n",
		       jstr(reply, "job"), jstr(reply, "chunks"), jstr(reply, "congestion"),
		       jstr(reply, "model_congestion"));
		printf("  %-8s %-4s %10s %10s %8s %8s %6s\n", "switch", "role", "received",
		       "sent up", "per chunk", "model", "dups");
		json_object_object_get_ex(reply, "links", &v);
		for (size_t i = 0; v && i < json_object_array_length(v); i++) {
			json_object *l = json_object_array_get_idx(v, i);

			printf("  %-8s %-4s %10s %10s %8.3f %8s %6s\n", jstr(l, "switch"),
			       jstr(l, "role"), jstr(l, "received"), jstr(l, "sent_up"),
			       json_object_get_double(json_object_object_get(l,
									     "messages_per_chunk")),
			       jstr(l, "model_messages"), jstr(l, "duplicates"));
		}
	} else {
		json_object *refused;

		json_object_object_get_ex(reply, "job", &v);
		print_job(v);
		if (json_object_object_get_ex(reply, "refused", &refused))
			for (size_t i = 0; i < json_object_array_length(refused); i++) {
				json_object *r = json_object_array_get_idx(refused, i);

				printf("  refused by %s: %s\n", jstr(r, "switch"), jstr(r, "reason"));
			}
	}
	json_object_put(reply);
	return 0;
}

int cmd_job_submit(int argc, char **argv)
{
	return job_cmd("job submit", "submit", argc, argv, false);
}

int cmd_job_list(int argc, char **argv)
{
	return job_cmd("job list", "list", argc, argv, false);
}

int cmd_job_show(int argc, char **argv)
{
	return job_cmd("job show", "show", argc, argv, true);
}

int cmd_job_end(int argc, char **argv)
{
	return job_cmd("job end", "end", argc, argv, true);
}

int cmd_stats(int argc, char **argv)
{
	return job_cmd("stats", "stats", argc, argv, false);
}
