// SPDX-License-Identifier: GPL-2.0
/*
 * A live job over virtio-net, inside the Debian 6.1 guest of tests/kmod/vm.sh.
 *
 * qemu gives the guest one pair of virtio-net NICs per link of the tree
 * below, the two NICs of a pair joined back to back (see vm.sh), so every
 * frame between two namespaces crosses a real virtio_net driver, both ways.
 * The pair of link L carries MACs 52:54:00:1a:LL:01 (upper end: the parent
 * switch, the destination, or the switch of a worker) and :02 (lower end: a
 * switch's uplink or a worker's eth0). Link v (v < switches) is switch v's
 * uplink; link switches + g is worker g's (g as numbered by netplan.h).
 *
 * The NICs are moved into the namespaces, renamed and addressed exactly as
 * "inagg net up" lays out its veth network (docs/net.md), so that inaggd,
  * "inagg dev attach", "inagg job submit", "inagg worker/ps" and "inagg stats" run
 * on it unchanged, as an operator would run them on a router VM.
 *
 *         dest
 *          |            s0: no workers
 *          s0           s1: 3 workers, s2: 1 worker
 *        /    \
 *      s1      s2
 *     /|\       |
 *    w w w      w
 *
 * Tests run in order and share the network: ledger, attach, then jobs (blue
 * at s1, blue at s1 and s0, all red), then detach. Each job: every worker's
 * result and the destination's sum are exact (checksums of the same sum),
 * the kernel ledger holds the job on each blue switch while it runs and not
 * after, and the messages per chunk counted on every uplink equal the
 * congestion model.
 *
 * "virtio_job --links" prints the number of NIC pairs the guest needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>

#include <bpf/libbpf.h>
#include <json-c/json.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "../nstest.h"
#include "daemon.h"
#include "inagg/wire.h"
#include "json_get.h"
#include "netplan.h"
#include "topo.h"

#define TAG	"vt"
#define DIR	"/tmp/ia-vt"
#define SOCK	DIR "/inaggd.sock"
#define CHUNKS	300
/* Generous: a retransmission would add messages beyond the model's count. */
#define WORKER_TIMEOUT_MS 3000
/* Slots per blue switch; workers keep half of it in flight. Small: TCG is slow. */
#define WINDOW	32
/* Every NIC's MTU: frames of the largest chunk, a flushed partial's member set included. */
#define MTU	IA_MTU(IA_MAX_ELEMS)

static const char topo_json[] =
	"{\"switches\": ["
	"{\"name\": \"s0\", \"parent\": null},"
	"{\"name\": \"s1\", \"parent\": \"s0\", \"load\": 3},"
	"{\"name\": \"s2\", \"parent\": \"s0\", \"load\": 1}]}";

static char build[PATH_MAX];
static struct ia_topo *topo;
static char setup_err[512];	/* why the network is not up, or "" */
static pid_t daemon_pid;

/* ---- the network: virtio NICs into namespaces ---- */

/* The name in this namespace of the NIC with MAC 52:54:00:1a:link:end. */
static int nic_name(int link, int end, char *name)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	char want[18], path[64], mac[32];
	int ret = -ENODEV;

	snprintf(want, sizeof(want), "52:54:00:1a:%02x:%02x", link, end);
	for (i = ifs; i && i->if_index; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/sys/class/net/%s/address", i->if_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(mac, sizeof(mac), f) && !strncmp(mac, want, 17)) {
			snprintf(name, IFNAMSIZ, "%s", i->if_name);
			ret = 0;
		}
		fclose(f);
	}
	if (ifs)
		if_freenameindex(ifs);
	return ret;
}

/* Moves the NIC of (link, end) into ns as ifname, with address addr/30, up. */
static int place_nic(int link, int end, const char *ns, const char *ifname, struct in_addr addr)
{
	char cur[IFNAMSIZ], a[INET_ADDRSTRLEN];

	if (nic_name(link, end, cur)) {
		snprintf(setup_err, sizeof(setup_err), "no NIC 52:54:00:1a:%02x:%02x (link %d)",
			 link, end, link);
		return -1;
	}
	inet_ntop(AF_INET, &addr, a, sizeof(a));
	if (sh("ip link set dev %s netns %s && ip -n %s link set dev %s name %s mtu %d && "
	       "ip -n %s addr add %s/30 dev %s && ip -n %s link set dev %s up",
	       cur, ns, ns, cur, ifname, MTU, ns, a, ifname, ns, ifname)) {
		snprintf(setup_err, sizeof(setup_err), "%s: cannot set up %s", ns, ifname);
		return -1;
	}
	return 0;
}

/* A route in ns to dst/32 (NULL: the default route) via the address via. */
static int route(const char *ns, const struct in_addr *dst, struct in_addr via, const char *dev)
{
	char d[INET_ADDRSTRLEN + 3] = "default", v[INET_ADDRSTRLEN];

	if (dst) {
		inet_ntop(AF_INET, dst, d, INET_ADDRSTRLEN);
		strcat(d, "/32");
	}
	inet_ntop(AF_INET, &via, v, sizeof(v));
	if (!sh("ip -n %s route add %s via %s dev %s", ns, d, v, dev))
		return 0;
	snprintf(setup_err, sizeof(setup_err), "%s: route to %s via %s failed", ns, d, v);
	return -1;
}

/* docs/net.md's layout, over virtio links instead of veth pairs. */
static int net_up(void)
{
	const struct ia_topo *t = topo;
	char ns[128], up[128], name[IFNAMSIZ];

	ia_net_dest_ns(TAG, ns, sizeof(ns));
	if (sh("ip netns add %s && ip -n %s link set lo up", ns, ns))
		return -1;
	for (int v = 0; v < t->n; v++) {
		ia_net_switch_ns(TAG, t->sw[v].name, ns, sizeof(ns));
		if (sh("ip netns add %s && ip -n %s link set lo up && "
		       "ip netns exec %s sysctl -qw net.ipv4.ip_forward=1", ns, ns, ns))
			return -1;
	}
	for (int v = 0; v < t->n; v++) {
		int p = t->sw[v].parent;

		ia_net_switch_ns(TAG, t->sw[v].name, ns, sizeof(ns));
		if (place_nic(v, 2, ns, IA_PORT_UP, ia_net_uplink_addr(v, false)))
			return -1;
		if (p < 0) {
			ia_net_dest_ns(TAG, up, sizeof(up));
			snprintf(name, sizeof(name), IA_HOST_PORT);
		} else {
			ia_net_switch_ns(TAG, t->sw[p].name, up, sizeof(up));
			ia_port_name(IA_PORT_CHILD, ia_topo_child_pos(t, v), name);
		}
		if (place_nic(v, 1, up, name, ia_net_uplink_addr(v, true)) ||
		    route(ns, NULL, ia_net_uplink_addr(v, true), IA_PORT_UP))
			return -1;
		if (p < 0 && route(up, NULL, ia_net_uplink_addr(v, false), IA_HOST_PORT))
			return -1;
	}
	for (int v = 0; v < t->n; v++) {
		ia_net_switch_ns(TAG, t->sw[v].name, ns, sizeof(ns));
		for (uint32_t j = 0; j < t->sw[v].load; j++) {
			int g = ia_net_worker_index(t, v, j);
			char w[128];

			ia_net_worker_ns(TAG, t->sw[v].name, j, w, sizeof(w));
			ia_port_name(IA_PORT_HOST, j, name);
			if (sh("ip netns add %s && ip -n %s link set lo up", w, w) ||
			    place_nic(t->n + g, 1, ns, name, ia_net_worker_gw(g)) ||
			    place_nic(t->n + g, 2, w, IA_HOST_PORT, ia_net_worker_addr(g)) ||
			    route(w, NULL, ia_net_worker_gw(g), IA_HOST_PORT))
				return -1;
			/* Each ancestor routes the worker toward its subtree. */
			for (int u = v; t->sw[u].parent >= 0; u = t->sw[u].parent) {
				struct in_addr wa = ia_net_worker_addr(g);
				char a[128];

				ia_net_switch_ns(TAG, t->sw[t->sw[u].parent].name, a, sizeof(a));
				ia_port_name(IA_PORT_CHILD, ia_topo_child_pos(t, u), name);
				if (route(a, &wa, ia_net_uplink_addr(u, false), name))
					return -1;
			}
		}
	}
	return 0;
}

static void net_down(void)
{
	char ns[128];

	ia_net_dest_ns(TAG, ns, sizeof(ns));
	sh("ip netns del %s 2>/dev/null", ns);
	for (int v = 0; v < topo->n; v++) {
		ia_net_switch_ns(TAG, topo->sw[v].name, ns, sizeof(ns));
		sh("ip netns del %s 2>/dev/null", ns);
		for (uint32_t j = 0; j < topo->sw[v].load; j++) {
			ia_net_worker_ns(TAG, topo->sw[v].name, j, ns, sizeof(ns));
			sh("ip netns del %s 2>/dev/null", ns);
		}
	}
}

static int links_needed(void)
{
	return topo->n + (int)ia_topo_total_load(topo);
}

/* ---- running the CLI ---- */

/* Runs "inagg ARGS" (in ns unless NULL); stdout parsed as JSON into *out. */
static int inagg_json(json_object **out, const char *ns, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int inagg_json(json_object **out, const char *ns, const char *fmt, ...)
{
	char args[1024], file[64];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(file, sizeof(file), DIR "/out.%d.json", getpid());
	ret = sh("%s%s %s/inagg -j %s >%s", ns ? "ip netns exec " : "", ns ? ns : "", build, args,
		 file);
	*out = ret ? NULL : json_object_from_file(file);
	if (!ret && !*out)
		fprintf(stderr, "# inagg %s: output is not JSON\n", args);
	unlink(file);
	return *out ? 0 : -1;
}

static const char *sget(json_object *o, const char *path)
{
	json_object *v = get(o, path);

	return v ? json_object_get_string(v) : "";
}

static int port_names(int v, char names[][IFNAMSIZ])
{
	int n = ia_port_count(topo, v);

	for (int p = 0; p < n; p++)
		ia_port_nth(topo, v, p, names[p]);
	return n;
}

/* The driver of ifname in this namespace (ethtool). */
static int driver_of(const char *ifname, char *drv, size_t len)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = { .ifr_data = (void *)&info };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret;

	memcpy(ifr.ifr_name, ifname, strnlen(ifname, IFNAMSIZ - 1));
	ret = fd < 0 || ioctl(fd, SIOCETHTOOL, &ifr) ? -errno : 0;
	if (fd >= 0)
		close(fd);
	snprintf(drv, len, "%s", ret ? "?" : info.driver);
	return ret;
}

#define NET_READY() ASSERT_STREQ("", setup_err)

/* ---- tests ---- */

/* The network is shared: built before the harness runs (main), not per test. */
FIXTURE(vt) {
	int unused;
};

FIXTURE_SETUP(vt)
{
}

FIXTURE_TEARDOWN(vt)
{
}

TEST_F(vt, ports_are_virtio_net)
{
	char names[64][IFNAMSIZ], ns[128], drv[32];

	NET_READY();
	for (int v = 0; v < topo->n; v++) {
		int n = port_names(v, names);

		ia_net_switch_ns(TAG, topo->sw[v].name, ns, sizeof(ns));
		ASSERT_EQ(0, enter_ns(ns));
		for (int i = 0; i < n; i++) {
			EXPECT_EQ(0, driver_of(names[i], drv, sizeof(drv))) TH_LOG("%s %s", ns, names[i]);
			EXPECT_STREQ("virtio_net", drv) TH_LOG("%s %s", ns, names[i]);
		}
	}
}

TEST_F(vt, ledger_is_the_kernel_module)
{
	char ns[128];

	NET_READY();
	for (int v = 0; v < topo->n; v++) {
		json_object *l;

		ia_net_switch_ns(TAG, topo->sw[v].name, ns, sizeof(ns));
		ASSERT_EQ(0, inagg_json(&l, ns, "ledger show"));
		EXPECT_STREQ("kernel", sget(l, "backend")) TH_LOG("%s: %s", ns,
								json_object_to_json_string(l));
		json_object_put(l);
	}
}

/* "inagg dev attach" in its default mode picks the driver's native XDP on virtio_net. */
TEST_F_TIMEOUT(vt, attach_native_on_virtio, 120)
{
	char names[64][IFNAMSIZ], ns[128];

	NET_READY();
	for (int v = 0; v < topo->n; v++) {
		int n = port_names(v, names);

		ia_net_switch_ns(TAG, topo->sw[v].name, ns, sizeof(ns));
		for (int i = 0; i < n; i++)
			ASSERT_EQ(0, sh("%s/inagg dev attach %s --netns %s >/dev/null", build,
					names[i], ns));
		ASSERT_EQ(0, enter_ns(ns));
		for (int i = 0; i < n; i++) {
			LIBBPF_OPTS(bpf_xdp_query_opts, q);

			ASSERT_EQ(0, bpf_xdp_query(if_nametoindex(names[i]), 0, &q));
			EXPECT_EQ(XDP_ATTACHED_DRV, q.attach_mode) TH_LOG("%s %s", ns, names[i]);
			EXPECT_NE(0, q.prog_id);
		}
	}
}

struct job_case {
	const char *algo;
	int k;
	double congestion;
	const char *blue;	/* the blue switches, space-separated */
	int chunk;		/* elements per message; 0: the default */
};

/* Starts "inagg ARGS" in ns with stdout and stderr to DIR/name.{out,err}. */
static pid_t spawn(const char *ns, const char *name, const char *args)
{
	char cmd[2 * PATH_MAX];
	pid_t pid;

	snprintf(cmd, sizeof(cmd), "exec ip netns exec %s %s/inagg -j %s >%s/%s.out 2>%s/%s.err",
		 ns, build, args, DIR, name, DIR, name);
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* The last line a spawned command wrote to stderr (the guest's files are lost after the run). */
static const char *last_line(const char *name, char *buf, size_t len)
{
	char path[128], line[256];
	FILE *f;

	snprintf(path, sizeof(path), DIR "/%s.err", name);
	snprintf(buf, len, "(no message)");
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		snprintf(buf, len, "%.*s", (int)strcspn(line, "\n"), line);
	if (f)
		fclose(f);
	return buf;
}

static bool ledger_has(const char *ns, uint32_t job)
{
	json_object *l, *jobs;
	bool found = false;

	if (inagg_json(&l, ns, "ledger show"))
		return false;
	jobs = get(l, "jobs");
	for (size_t i = 0; jobs && i < json_object_array_length(jobs); i++)
		found |= json_object_get_int64(get(json_object_array_get_idx(jobs, i), "id")) == job;
	json_object_put(l);
	return found;
}

static void run_job(struct __test_metadata *_metadata, const struct job_case *c)
{
	json_object *job, *workers, *st, *links, *blue, *out;
	char args[512], members[256] = "", name[32], file[160], ns[128];
	int chunk = c->chunk ? c->chunk : IA_CHUNK_DEFAULT;
	pid_t ps, w[64];
	const char *checksum;
	uint32_t id;
	size_t nw;

	NET_READY();
	ASSERT_LT(0, daemon_pid);
	/* A job an earlier test left behind when it failed would hold the switches. */
	ASSERT_EQ(0, inagg_json(&out, NULL, "job list -S %s", SOCK));
	links = get(out, "jobs");
	for (size_t i = 0; links && i < json_object_array_length(links); i++)
		sh("%s/inagg job end -J %s -S %s >/dev/null", build,
		   sget(json_object_array_get_idx(links, i), "job"), SOCK);
	json_object_put(out);

	ASSERT_EQ(0, inagg_json(&job, NULL, "job submit -k %d -a %s -w %d -S %s", c->k, c->algo,
				     WINDOW, SOCK));
	id = json_object_get_int64(get(job, "job"));
	EXPECT_EQ(c->congestion, json_object_get_double(get(job, "congestion")));
	blue = get(job, "blue");
	args[0] = '\0';
	for (size_t i = 0; blue && i < json_object_array_length(blue); i++)
		snprintf(args + strlen(args), sizeof(args) - strlen(args), "%s%s", i ? " " : "",
			 json_object_get_string(json_object_array_get_idx(blue, i)));
	EXPECT_STREQ(c->blue, args);
	/* The kernel ledger of each blue switch holds the job while it runs. */
	for (size_t i = 0; blue && i < json_object_array_length(blue); i++) {
		ia_net_switch_ns(TAG, json_object_get_string(json_object_array_get_idx(blue, i)), ns,
				 sizeof(ns));
		EXPECT_TRUE(ledger_has(ns, id)) TH_LOG("%s: job %u not admitted", ns, id);
	}

	workers = get(job, "workers");
	nw = workers ? json_object_array_length(workers) : 0;
	ASSERT_LT(0, nw);
	ASSERT_GE(64, nw);
	for (size_t i = 0; i < nw; i++)
		snprintf(members + strlen(members), sizeof(members) - strlen(members), "%s%s",
			 i ? "," : "", sget(json_object_array_get_idx(workers, i), "id"));
	snprintf(file, sizeof(file), DIR "/ps%u.ready", id);
	unlink(file);
	snprintf(args, sizeof(args),
		 "ps --job %u --nworkers %zu --elems %d --chunk %d --addr %s --down %s "
		 "--linger 1000 --ready %s --expect %s", id, nw, CHUNKS * chunk, chunk,
		 sget(job, "destination.address"), sget(job, "destination.down"), file, members);
	snprintf(name, sizeof(name), "ps%u", id);
	ps = spawn(sget(job, "destination.netns"), name, args);
	for (int i = 0; i < 600 && access(file, F_OK); i++)
		usleep(50000);
	ASSERT_EQ(0, access(file, F_OK)) TH_LOG("the destination did not get ready");
	for (size_t i = 0; i < nw; i++) {
		json_object *wk = json_object_array_get_idx(workers, i);

		snprintf(args, sizeof(args),
			 "worker --job %u --id %s --ps %s --addr %s --elems %d --chunk %d "
			 "--window %s --timeout %d --nworkers %zu", id, sget(wk, "id"),
			 sget(job, "destination.address"), sget(wk, "address"), CHUNKS * chunk, chunk,
			 sget(job, "worker_window"), WORKER_TIMEOUT_MS, nw);
		snprintf(name, sizeof(name), "w%u.%zu", id, i);
		w[i] = spawn(sget(wk, "netns"), name, args);
	}
	for (size_t i = 0; i < nw; i++) {
		int status;

		snprintf(name, sizeof(name), "w%u.%zu", id, i);
		waitpid(w[i], &status, 0);
		EXPECT_EQ(0, status) TH_LOG("worker %zu: %s", i, last_line(name, file, sizeof(file)));
	}
	{
		int status;

		snprintf(name, sizeof(name), "ps%u", id);
		waitpid(ps, &status, 0);
		EXPECT_EQ(0, status) TH_LOG("destination: %s", last_line(name, file, sizeof(file)));
	}

	/* Exact: the destination's sum is the sum of the seeds' vectors, and every worker has it. */
	snprintf(file, sizeof(file), DIR "/ps%u.out", id);
	out = json_object_from_file(file);
	ASSERT_NE(NULL, out);
	EXPECT_TRUE(json_object_get_boolean(get(out, "exact")));
	EXPECT_TRUE(json_object_get_boolean(get(out, "complete")));
	EXPECT_EQ(CHUNKS, json_object_get_int64(get(out, "done")));
	checksum = strdupa(sget(out, "checksum"));
	TH_LOG("job %u (%s, k=%d): %d chunks of %zu workers in %.2f s at the destination", id,
	       c->algo, c->k, CHUNKS, nw, json_object_get_double(get(out, "elapsed")));
	json_object_put(out);
	EXPECT_NE(0, strlen(checksum));
	for (size_t i = 0; i < nw; i++) {
		snprintf(file, sizeof(file), DIR "/w%u.%zu.out", id, i);
		out = json_object_from_file(file);
		ASSERT_NE(NULL, out) TH_LOG("worker %zu printed no JSON", i);
		EXPECT_STREQ(checksum, sget(out, "checksum")) TH_LOG("worker %zu", i);
		EXPECT_EQ(CHUNKS, json_object_get_int64(get(out, "results"))) TH_LOG("worker %zu", i);
		/*
		 * A clean link: resends only from a stall of the TCG guest itself
		 * (seen once in a loaded host's run). First transmissions are what
		 * the model is compared with below; resends are counted apart.
		 */
		EXPECT_GE(CHUNKS / 100, json_object_get_int64(get(out, "retransmitted")))
			TH_LOG("worker %zu", i);
		json_object_put(out);
	}

	/* Measured messages per chunk on every uplink = the model. */
	ASSERT_EQ(0, inagg_json(&st, NULL, "stats -J %u --chunks %d -S %s", id, CHUNKS, SOCK));
	links = get(st, "links");
	ASSERT_NE(NULL, links);
	EXPECT_EQ(topo->n, (int)json_object_array_length(links));
	for (size_t i = 0; i < json_object_array_length(links); i++) {
		json_object *l = json_object_array_get_idx(links, i);

		EXPECT_EQ(json_object_get_double(get(l, "model_messages")),
			  json_object_get_double(get(l, "messages_per_chunk")))
			TH_LOG("switch %s (%s)", sget(l, "switch"), sget(l, "role"));
	}
	EXPECT_EQ(c->congestion, json_object_get_double(get(st, "congestion")));
	EXPECT_EQ(c->congestion, json_object_get_double(get(st, "model_congestion")));
	json_object_put(st);

	ASSERT_EQ(0, sh("%s/inagg job end -J %u -S %s >/dev/null", build, id, SOCK));
	for (size_t i = 0; blue && i < json_object_array_length(blue); i++) {
		ia_net_switch_ns(TAG, json_object_get_string(json_object_array_get_idx(blue, i)), ns,
				 sizeof(ns));
		EXPECT_FALSE(ledger_has(ns, id)) TH_LOG("%s: job %u still admitted", ns, id);
	}
	json_object_put(job);
}

/* s1 aggregates its 3 workers; s0 forwards s1's aggregate and s2's worker. */
TEST_F_TIMEOUT(vt, job_blue_at_one_switch, 300)
{
	static const struct job_case c = { "smc", 1, 2, "s1" };

	run_job(_metadata, &c);
}

/* Blue over blue: s1's aggregate is aggregated again at s0; the largest chunks. */
TEST_F_TIMEOUT(vt, job_blue_at_two_levels, 300)
{
	static const struct job_case c = { "smc", 2, 1, "s0 s1", IA_MAX_ELEMS };

	run_job(_metadata, &c);
}

/* Every switch red: all 4 contributions per chunk reach the destination. */
TEST_F_TIMEOUT(vt, job_all_red, 300)
{
	static const struct job_case c = { "all-red", 2, 4, "" };

	run_job(_metadata, &c);
}

TEST_F_TIMEOUT(vt, detach_removes_the_program, 120)
{
	char names[64][IFNAMSIZ], ns[128];

	NET_READY();
	for (int v = 0; v < topo->n; v++) {
		int n = port_names(v, names);

		ia_net_switch_ns(TAG, topo->sw[v].name, ns, sizeof(ns));
		for (int i = 0; i < n; i++)
			EXPECT_EQ(0, sh("%s/inagg dev detach %s --netns %s >/dev/null", build,
					names[i], ns));
		ASSERT_EQ(0, enter_ns(ns));
		for (int i = 0; i < n; i++) {
			LIBBPF_OPTS(bpf_xdp_query_opts, q);

			ASSERT_EQ(0, bpf_xdp_query(if_nametoindex(names[i]), 0, &q));
			EXPECT_EQ(XDP_ATTACHED_NONE, q.attach_mode) TH_LOG("%s %s", ns, names[i]);
		}
	}
}

/* ---- setup around the harness ---- */

static pid_t start_daemon(void)
{
	struct test_daemon d = { .build = build, .topo = DIR "/topo.json", .tag = TAG,
				 .sock = SOCK, .state = DIR "/state.json",
				 .log = DIR "/inaggd.log" };
	pid_t pid = daemon_wait(daemon_fork(&d), SOCK, 30000);

	if (pid < 0)
		snprintf(setup_err, sizeof(setup_err), "inaggd did not start (see %s/inaggd.log)",
			 DIR);
	return pid;
}

static pid_t main_pid;

/* The harness exits from test_harness_run(): clean up at exit, in main only. */
static void teardown(void)
{
	if (getpid() != main_pid)
		return;
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGTERM);
		waitpid(daemon_pid, NULL, 0);
	}
	net_down();
}

int main(int argc, char **argv)
{
	char exe[PATH_MAX], err[IA_ERRLEN];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f;

	if (len <= 0 || ia_topo_parse(topo_json, &topo, err, sizeof(err)))
		return 1;
	if (argc == 2 && !strcmp(argv[1], "--links")) {
		printf("%d\n", links_needed());
		return 0;
	}
	exe[len] = '\0';
	/* BUILD/tests/vm/virtio_job -> BUILD */
	snprintf(build, sizeof(build), "%s", dirname(dirname(dirname(exe))));
	mkdir(DIR, 0755);
	f = fopen(DIR "/topo.json", "w");
	if (!f)
		return 1;
	fputs(topo_json, f);
	fclose(f);
	/* Namespaces, NICs and inaggd before the first test; the tests share them. */
	main_pid = getpid();
	atexit(teardown);
	if (!net_up())
		daemon_pid = start_daemon();
	else if (!setup_err[0])
		snprintf(setup_err, sizeof(setup_err), "namespaces could not be created");
	return test_harness_run(argc, argv);
}
