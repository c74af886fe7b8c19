// SPDX-License-Identifier: GPL-2.0
/*
 * inaggd: the job lifecycle of one inagg network.
 *
 *   submit: placement on the switches with capacity left -> admission on
 *           every blue switch through its ledger, all or nothing (a refusal
 *           rolls back and the job is placed again without that switch) ->
 *           the job's configuration pushed into the BPF maps of every switch
 *           on its paths.
 *   end:    configuration removed, admissions released.
 *
 * The network is a topology built in namespaces by "inagg topo up": switch
 * v lives in namespace ia-<tag>-<v> and its maps are pinned under that name.
 * Jobs are written to a state file before anything is changed; after a
 * crash the daemon re-reads it and brings ledgers and maps back in line,
 * while the datapath (pinned maps, attached programs) kept forwarding.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <json-c/json.h>
#include <linux/if_link.h>

#include "ctl.h"
#include "ledger.h"
#include "netbuild.h"
#include "plan.h"
#include "xdp.h"

#define DEFAULT_WINDOW 128

enum { LOG_ERR = 3, LOG_WARN = 4, LOG_INFO = 6, LOG_DEBUG = 7 };

static int log_level = LOG_INFO;
static bool log_journal;

static void __attribute__((format(printf, 2, 3))) log_msg(int level, const char *fmt, ...)
{
	static const char *const names[] = { [LOG_ERR] = "error", [LOG_WARN] = "warning",
					     [LOG_INFO] = "info", [LOG_DEBUG] = "debug" };
	va_list ap;

	if (level > log_level)
		return;
	/* The journal reads the level from a "<N>" prefix. */
	if (log_journal)
		fprintf(stderr, "<%d>", level);
	else
		fprintf(stderr, "inaggd: %s: ", names[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

struct port {
	int ifindex;
	unsigned char mac[6];
	unsigned char peer[6];	/* MAC at the other end of the veth */
};

struct swinfo {
	char ns[128];		/* namespace name, also the pin name of its maps */
	struct port up;
	struct port *down;	/* per child position */
	struct port *host;	/* per worker */
};

enum job_state { JOB_ADMITTING, JOB_CONFIGURING, JOB_ACTIVE };

static const char *const state_names[] = { "admitting", "configuring", "active" };

struct job {
	uint32_t id;
	int k;
	enum ia_algo algo;
	uint32_t window;
	enum job_state state;
	uint32_t *load;
	bool *blue;
	struct ia_placement model;
	struct ia_plan plan;
	time_t created;
};

struct daemon {
	struct ia_topo *t;
	char tag[IA_NET_TAG_MAX + 1];
	char topo_path[PATH_MAX];
	const char *state_path;
	const char *sock_path;
	struct swinfo *sw;
	char dest_ns[128];
	struct job *jobs;
	int njobs;
	__u32 job_flags;	/* IA_JOB_F_* for every switch */
};

static void job_free(struct job *j)
{
	free(j->load);
	free(j->blue);
	ia_placement_free(&j->model);
	ia_plan_free(&j->plan);
}

static struct job *job_find(struct daemon *d, uint32_t id)
{
	for (int i = 0; i < d->njobs; i++)
		if (d->jobs[i].id == id)
			return &d->jobs[i];
	return NULL;
}

/* Reads one interface of namespace ns. */
static int read_port(const char *ns, const char *ifname, struct port *p)
{
	int h = ia_netns_enter(ns), ret;

	if (h < 0)
		return h;
	ret = ia_if_info(ifname, &p->ifindex, p->mac);
	ia_netns_return(h);
	if (ret)
		log_msg(LOG_ERR, "%s: interface %s: %s", ns, ifname, strerror(-ret));
	return ret;
}

/* Interface indexes and MACs of every port, and of the far end of each. */
static int resolve_ports(struct daemon *d)
{
	const struct ia_topo *t = d->t;
	char name[16], ns[128];
	struct port far;
	int ret;

	d->sw = calloc(t->n, sizeof(*d->sw));
	if (!d->sw)
		return -ENOMEM;
	ia_net_dest_ns(d->tag, d->dest_ns, sizeof(d->dest_ns));
	for (int v = 0; v < t->n; v++) {
		struct swinfo *s = &d->sw[v];
		int nc = t->child_start[v + 1] - t->child_start[v];

		ia_net_switch_ns(d->tag, t->sw[v].name, s->ns, sizeof(s->ns));
		s->down = calloc(nc ? nc : 1, sizeof(struct port));
		s->host = calloc(t->sw[v].load ? t->sw[v].load : 1, sizeof(struct port));
		if (!s->down || !s->host)
			return -ENOMEM;
		ret = read_port(s->ns, IA_PORT_UP, &s->up);
		for (int i = 0; !ret && i < nc; i++) {
			ia_port_name(IA_PORT_CHILD, i, name);
			ret = read_port(s->ns, name, &s->down[i]);
		}
		for (uint32_t j = 0; !ret && j < t->sw[v].load; j++) {
			ia_port_name(IA_PORT_HOST, j, name);
			ret = read_port(s->ns, name, &s->host[j]);
			ia_net_worker_ns(d->tag, t->sw[v].name, j, ns, sizeof(ns));
			if (!ret)
				ret = read_port(ns, "eth0", &far);
			memcpy(s->host[j].peer, far.mac, 6);
		}
		if (ret)
			return ret;
	}
	for (int v = 0; v < t->n; v++) {
		struct swinfo *s = &d->sw[v];
		int p = t->sw[v].parent;

		if (p < 0) {
			ret = read_port(d->dest_ns, "eth0", &far);
			if (ret)
				return ret;
			memcpy(s->up.peer, far.mac, 6);
		} else {
			int pos = ia_topo_child_pos(t, v);

			memcpy(s->up.peer, d->sw[p].down[pos].mac, 6);
			memcpy(d->sw[p].down[pos].peer, s->up.mac, 6);
		}
	}
	return 0;
}

/* ---- state file ---- */

static json_object *job_json(const struct daemon *d, const struct job *j, bool detail);

static int save_state(struct daemon *d)
{
	json_object *root = json_object_new_object(), *jobs = json_object_new_array();
	char tmp[PATH_MAX];
	int fd, ret = 0;
	const char *s;

	json_object_object_add(root, "tag", json_object_new_string(d->tag));
	json_object_object_add(root, "topology", json_object_new_string(d->topo_path));
	for (int i = 0; i < d->njobs; i++)
		json_object_array_add(jobs, job_json(d, &d->jobs[i], false));
	json_object_object_add(root, "jobs", jobs);
	s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY);
	/* Write and rename: a crash leaves the old or the new file, never half. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", d->state_path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s) || fsync(fd) ||
	    rename(tmp, d->state_path))
		ret = -errno;
	if (fd >= 0)
		close(fd);
	json_object_put(root);
	if (ret)
		log_msg(LOG_ERR, "state file %s: %s", d->state_path, strerror(-ret));
	return ret;
}

/* ---- ledger and maps ---- */

enum ledger_op { LEDGER_ADMIT, LEDGER_RELEASE, LEDGER_LOOKUP };

static int ledger_do(struct daemon *d, int v, enum ledger_op op, uint32_t id, uint32_t slots,
		     char *why, size_t whylen)
{
	struct ia_ledger_job entry;
	struct ia_ledger *l;
	int ret = ia_ledger_open(&l, IA_LEDGER_AUTO, d->sw[v].ns);

	if (ret) {
		snprintf(why, whylen, "ledger: %s", strerror(-ret));
		return ret;
	}
	switch (op) {
	case LEDGER_ADMIT:
		ret = ia_ledger_admit(l, id, slots);
		break;
	case LEDGER_RELEASE:
		ret = ia_ledger_release(l, id);
		break;
	default:
		ret = ia_ledger_job(l, id, &entry);
		break;
	}
	if (ret)
		snprintf(why, whylen, "%s", *ia_ledger_errmsg(l) ? ia_ledger_errmsg(l) :
								       strerror(-ret));
	ia_ledger_close(l);
	return ret;
}

/* Whether switch v can take one more job of this many slots. */
static bool ledger_has_room(struct daemon *d, int v, uint32_t slots)
{
	struct ia_ledger_cap cap;
	struct ia_ledger *l;
	bool room = false;

	if (ia_ledger_open(&l, IA_LEDGER_AUTO, d->sw[v].ns))
		return false;
	if (!ia_ledger_get(l, &cap))
		room = cap.used_jobs < cap.max_jobs && cap.used_slots + slots <= cap.max_slots;
	ia_ledger_close(l);
	return room;
}

/* Ledgers never set get the topology's capacity, with a full window per job. */
static void init_ledgers(struct daemon *d)
{
	for (int v = 0; v < d->t->n; v++) {
		struct ia_ledger_cap cap;
		struct ia_ledger *l;

		if (ia_ledger_open(&l, IA_LEDGER_AUTO, d->sw[v].ns))
			continue;
		if (!ia_ledger_get(l, &cap) && !cap.max_jobs && !cap.max_slots &&
		    d->t->sw[v].capacity)
			ia_ledger_set(l, d->t->sw[v].capacity,
					 (long long)d->t->sw[v].capacity * IA_MAX_WINDOW);
		if (v == 0)
			log_msg(LOG_INFO, "ledger backend: %s",
				ia_ledger_backend_name(ia_ledger_backend(l)));
		ia_ledger_close(l);
	}
}

static struct ia_xdp_hop hop(const struct port *p, struct in_addr saddr, struct in_addr daddr)
{
	struct ia_xdp_hop h = { .ifindex = p->ifindex, .saddr = saddr.s_addr,
				.daddr = daddr.s_addr };

	memcpy(h.smac, p->mac, 6);
	memcpy(h.dmac, p->peer, 6);
	return h;
}

static int push_switch(struct daemon *d, struct job *j, int v, char *why, size_t whylen)
{
	const struct ia_topo *t = d->t;
	const struct ia_plan_switch *ps = &j->plan.sw[v];
	struct swinfo *s = &d->sw[v];
	struct ia_xdp_member *members = calloc(ps->nmembers, sizeof(*members));
	struct ia_xdp_hop *down = calloc(ps->ndown + t->sw[v].load + 1, sizeof(*down));
	struct in_addr none = { 0 };
	struct ia_xdp *x = NULL;
	__u32 prog_id = 0;
	int h, ret, ndown = 0;

	if (!members || !down) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < ps->nmembers; i++)
		members[i] = (struct ia_xdp_member){ ps->members[i].id, ps->members[i].nworkers };
	for (uint32_t i = 0; i < ps->ndown; i++)
		down[ndown++] = hop(&s->down[ia_topo_child_pos(t, ps->down[i])], none, none);
	for (uint32_t w = 0; w < j->load[v]; w++)
		down[ndown++] = hop(&s->host[w], none,
				    ia_net_worker_addr(ia_net_worker_index(t, v, w)));

	struct ia_xdp_job cfg = {
		.id = j->id,
		.role = ps->blue ? IA_ROLE_BLUE : IA_ROLE_RED,
		.window = j->window,
		.self_id = ia_switch_id(v),
		.nmembers = ps->nmembers,
		.members = members,
		.flags = d->job_flags,
		.up = ps->blue ? hop(&s->up, ia_net_uplink_addr(v, false), ia_net_dest_addr(t)) :
				 hop(&s->up, none, none),
		.ndown = ndown,
		.down = down,
	};

	h = ia_netns_enter(s->ns);
	if (h < 0) {
		ret = h;
		goto out;
	}
	if (bpf_xdp_query_id(s->up.ifindex, 0, &prog_id) || !prog_id) {
		snprintf(why, whylen, "no XDP program on port up (inagg attach dev up -n %s)",
			 s->ns);
		ret = -ENODEV;
	} else {
		ret = ia_xdp_open(s->ns, &x);
		if (!ret)
			ret = ia_xdp_job_add(x, &cfg);
		if (ret)
			snprintf(why, whylen, "maps: %s", strerror(-ret));
	}
	ia_xdp_close(x);
	ia_netns_return(h);
out:
	free(members);
	free(down);
	return ret;
}

static int unpush_switch(struct daemon *d, uint32_t id, int v)
{
	struct ia_xdp *x;
	int h = ia_netns_enter(d->sw[v].ns), ret;

	if (h < 0)
		return h;
	ret = ia_xdp_open(d->sw[v].ns, &x);
	if (!ret) {
		ret = ia_xdp_job_del(x, id);
		ia_xdp_close(x);
	}
	ia_netns_return(h);
	return ret;
}

static bool pushed(struct daemon *d, uint32_t id, int v)
{
	struct ia_counters c;
	struct ia_xdp *x;
	int h = ia_netns_enter(d->sw[v].ns), ret;

	if (h < 0)
		return false;
	ret = ia_xdp_open(d->sw[v].ns, &x);
	if (!ret) {
		ret = ia_xdp_job_counters(x, id, &c);
		ia_xdp_close(x);
	}
	ia_netns_return(h);
	return !ret;
}

/* Removes a job from every switch it may have reached. */
static void teardown(struct daemon *d, struct job *j)
{
	char why[256];
	int ret;

	for (int v = 0; v < d->t->n; v++) {
		if (j->state != JOB_ADMITTING && j->plan.sw && j->plan.sw[v].on_path)
			unpush_switch(d, j->id, v);
		if (!j->blue[v])
			continue;
		/* Not admitted there (a refusal, or a crash before) is fine. */
		ret = ledger_do(d, v, LEDGER_RELEASE, j->id, 0, why, sizeof(why));
		if (ret && ret != -ENOENT)
			log_msg(LOG_WARN, "job %u: release on %s: %s", j->id, d->t->sw[v].name, why);
	}
}

/* ---- requests ---- */

static json_object *job_json(const struct daemon *d, const struct job *j, bool detail)
{
	const struct ia_topo *t = d->t;
	json_object *o = json_object_new_object(), *blue = json_object_new_array();
	json_object *load = json_object_new_object();
	char buf[64];

	json_object_object_add(o, "job", json_object_new_int64(j->id));
	json_object_object_add(o, "state", json_object_new_string(state_names[j->state]));
	json_object_object_add(o, "algorithm", json_object_new_string(ia_algo_name(j->algo)));
	json_object_object_add(o, "k", json_object_new_int(j->k));
	json_object_object_add(o, "window", json_object_new_int64(j->window));
	/*
	 * Workers keep at most half the slots in flight: a slot is then reused
	 * only once every worker has the result of its previous chunk, so a
	 * retransmission never finds its chunk's slot taken by a later one.
	 */
	json_object_object_add(o, "worker_window",
			       json_object_new_int64(j->window > 1 ? j->window / 2 : 1));
	json_object_object_add(o, "created", json_object_new_int64(j->created));
	for (int v = 0; v < t->n; v++) {
		if (j->blue[v])
			json_object_array_add(blue, json_object_new_string(t->sw[v].name));
		if (j->load[v])
			json_object_object_add(load, t->sw[v].name,
					       json_object_new_int64(j->load[v]));
	}
	json_object_object_add(o, "blue", blue);
	json_object_object_add(o, "workers_per_switch", load);
	if (!detail)
		return o;

	ia_ratio_format(j->model.congestion, buf, sizeof(buf));
	json_object_object_add(o, "congestion", json_object_new_double_s(
							ia_ratio_double(j->model.congestion), buf));
	json_object_object_add(o, "nworkers", json_object_new_int64(j->plan.nworkers));
	inet_ntop(AF_INET, &(struct in_addr){ ia_net_dest_addr(t).s_addr }, buf, sizeof(buf));
	json_object *dest = json_object_new_object();

	json_object_object_add(dest, "netns", json_object_new_string(d->dest_ns));
	json_object_object_add(dest, "address", json_object_new_string(buf));
	inet_ntop(AF_INET, &(struct in_addr){ ia_net_uplink_addr(t->root, false).s_addr }, buf,
		  sizeof(buf));
	json_object_object_add(dest, "down", json_object_new_string(buf));
	json_object_object_add(dest, "senders", json_object_new_int64(j->plan.ndest));
	json_object_object_add(o, "destination", dest);

	json_object *workers = json_object_new_array();

	for (int v = 0; v < t->n; v++) {
		for (uint32_t w = 0; w < j->load[v]; w++) {
			json_object *wo = json_object_new_object();
			int g = ia_net_worker_index(t, v, w);
			char ns[128];

			ia_net_worker_ns(d->tag, t->sw[v].name, w, ns, sizeof(ns));
			inet_ntop(AF_INET, &(struct in_addr){ ia_net_worker_addr(g).s_addr }, buf,
				  sizeof(buf));
			json_object_object_add(wo, "id", json_object_new_int64(ia_worker_id(g)));
			json_object_object_add(wo, "switch", json_object_new_string(t->sw[v].name));
			json_object_object_add(wo, "netns", json_object_new_string(ns));
			json_object_object_add(wo, "address", json_object_new_string(buf));
			json_object_array_add(workers, wo);
		}
	}
	json_object_object_add(o, "workers", workers);

	json_object *links = json_object_new_array();

	for (int v = 0; v < t->n; v++) {
		json_object *l;

		if (!j->plan.sw[v].on_path)
			continue;
		l = json_object_new_object();
		json_object_object_add(l, "switch", json_object_new_string(t->sw[v].name));
		json_object_object_add(l, "role", json_object_new_string(j->blue[v] ? "blue" :
										     "red"));
		json_object_object_add(l, "members", json_object_new_int64(j->plan.sw[v].nmembers));
		json_object_object_add(l, "messages", json_object_new_int64(j->model.msgs[v]));
		json_object_array_add(links, l);
	}
	json_object_object_add(o, "links", links);
	return o;
}

static json_object *error_reply(const char *fmt, ...)
{
	json_object *o = json_object_new_object();
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(o, "ok", json_object_new_boolean(false));
	json_object_object_add(o, "error", json_object_new_string(msg));
	return o;
}

static json_object *ok_reply(void)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(true));
	return o;
}

static bool get_int(json_object *req, const char *key, long long min, long long max,
		    long long *out)
{
	json_object *v;

	if (!json_object_object_get_ex(req, key, &v))
		return true;	/* keep the default */
	if (!json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_int64(v);
	return *out >= min && *out <= max;
}

/* Configures every switch on the job's paths; on failure undoes it all. */
static int configure(struct daemon *d, struct job *j, char *why, size_t whylen)
{
	char msg[256] = "";
	int ret = 0;

	for (int v = 0; v < d->t->n && !ret; v++) {
		if (!j->plan.sw[v].on_path)
			continue;
		ret = push_switch(d, j, v, msg, sizeof(msg));
		if (ret)
			snprintf(why, whylen, "switch %s: %s", d->t->sw[v].name,
				 *msg ? msg : strerror(-ret));
	}
	return ret;
}

static json_object *do_submit(struct daemon *d, json_object *req)
{
	const struct ia_topo *t = d->t;
	long long k = -1, window = DEFAULT_WINDOW, id = 0;
	json_object *v, *refused = json_object_new_array(), *reply;
	struct job j = { .algo = IA_ALGO_SMC, .created = time(NULL) };
	bool *avail = NULL;
	char why[256];
	int ret;

	if (d->njobs >= IA_MAX_JOBS) {
		json_object_put(refused);
		return error_reply("%d jobs already: end one first", d->njobs);
	}
	if (!json_object_object_get_ex(req, "k", &v) || !get_int(req, "k", 0, INT_MAX, &k) ||
	    k < 0) {
		json_object_put(refused);
		return error_reply("k: need an integer >= 0");
	}
	if (!get_int(req, "window", 1, IA_MAX_WINDOW, &window) ||
	    !get_int(req, "job", 1, UINT32_MAX - 1, &id)) {
		json_object_put(refused);
		return error_reply("window must be in [1, %d] and job in [1, %u]", IA_MAX_WINDOW,
				   UINT32_MAX - 1);
	}
	if (json_object_object_get_ex(req, "algorithm", &v)) {
		int a = ia_algo_parse(json_object_get_string(v));

		if (a < 0 || a == IA_ALGO_BRUTE) {
			json_object_put(refused);
			return error_reply("unknown algorithm '%s'", json_object_get_string(v));
		}
		j.algo = a;
	}
	if (!id)
		for (id = 1; job_find(d, id); id++)
			;
	if (job_find(d, id)) {
		json_object_put(refused);
		return error_reply("job %lld exists", id);
	}
	j.id = id;
	j.k = k;
	j.window = window;
	j.load = calloc(t->n, sizeof(*j.load));
	j.blue = calloc(t->n, sizeof(*j.blue));
	avail = calloc(t->n, sizeof(*avail));
	if (!j.load || !j.blue || !avail || ia_placement_init(&j.model, t->n)) {
		reply = error_reply("out of memory");
		goto out;
	}
	/* Workers: all of the topology's, or {"switch": count, ...}. */
	for (int s = 0; s < t->n; s++)
		j.load[s] = t->sw[s].load;
	if (json_object_object_get_ex(req, "workers", &v)) {
		memset(j.load, 0, t->n * sizeof(*j.load));
		json_object_object_foreach(v, name, cnt) {
			int s = ia_topo_find(t, name);

			if (s < 0 || !json_object_is_type(cnt, json_type_int) ||
			    json_object_get_int64(cnt) < 0 ||
			    json_object_get_int64(cnt) > t->sw[s].load) {
				reply = error_reply("workers: switch '%s': need a count in [0, its load]",
						    name);
				goto out;
			}
			j.load[s] = json_object_get_int64(cnt);
		}
	}
	/* Capacity: the topology's (jobs this daemon runs there) and the ledger's. */
	for (int s = 0; s < t->n; s++) {
		uint32_t mine = 0;

		for (int i = 0; i < d->njobs; i++)
			mine += d->jobs[i].blue[s];
		avail[s] = t->sw[s].available && mine < t->sw[s].capacity &&
			   ledger_has_room(d, s, j.window);
	}

	/* Place, then admit on every blue switch; a refusal re-places without it. */
	for (int attempt = 0; attempt <= t->n; attempt++) {
		struct ia_problem pb = { .topo = t, .load = j.load, .avail = avail, .k = j.k };
		int failed = -1;

		ret = ia_place(&pb, j.algo, &j.model);
		if (ret) {
			reply = error_reply("placement: %s", strerror(-ret));
			goto out;
		}
		memcpy(j.blue, j.model.blue, t->n * sizeof(*j.blue));
		j.state = JOB_ADMITTING;
		/* Record the intent first: a crash mid-way is rolled back on restart. */
		d->jobs[d->njobs] = j;
		d->njobs++;
		save_state(d);
		d->njobs--;
		for (int s = 0; s < t->n && failed < 0; s++) {
			if (!j.blue[s])
				continue;
			if (ledger_do(d, s, LEDGER_ADMIT, j.id, j.window, why, sizeof(why)))
				failed = s;
		}
		if (failed < 0)
			break;
		json_object *r = json_object_new_object();

		json_object_object_add(r, "switch", json_object_new_string(t->sw[failed].name));
		json_object_object_add(r, "reason", json_object_new_string(why));
		json_object_array_add(refused, r);
		log_msg(LOG_WARN, "job %u: admission refused on %s: %s; placing again without it",
			j.id, t->sw[failed].name, why);
		for (int s = 0; s < failed; s++)
			if (j.blue[s])
				ledger_do(d, s, LEDGER_RELEASE, j.id, 0, why, sizeof(why));
		avail[failed] = false;
	}
	ret = ia_plan_build(t, j.load, j.blue, &j.plan);
	if (ret) {
		reply = error_reply("plan: %s", strerror(-ret));
		j.plan.sw = NULL;
		goto rollback;
	}
	j.state = JOB_CONFIGURING;
	d->jobs[d->njobs++] = j;
	save_state(d);
	ret = configure(d, &d->jobs[d->njobs - 1], why, sizeof(why));
	if (ret) {
		d->njobs--;
		reply = error_reply("job %u refused: %s", j.id, why);
		goto rollback;
	}
	d->jobs[d->njobs - 1].state = JOB_ACTIVE;
	save_state(d);
	log_msg(LOG_INFO, "job %u: %s k=%d, %d blue, congestion %g, %u workers", j.id,
		ia_algo_name(j.algo), j.k, j.model.nblue, ia_ratio_double(j.model.congestion),
		j.plan.nworkers);
	reply = ok_reply();
	json_object_object_add(reply, "job", job_json(d, &d->jobs[d->njobs - 1], true));
	json_object_object_add(reply, "refused", refused);
	free(avail);
	return reply;
rollback:
	teardown(d, &j);
	save_state(d);
out:
	json_object_put(refused);
	job_free(&j);
	free(avail);
	return reply;
}

static void drop_job(struct daemon *d, struct job *j)
{
	int i = j - d->jobs;

	job_free(j);
	memmove(&d->jobs[i], &d->jobs[i + 1], (d->njobs - i - 1) * sizeof(*j));
	d->njobs--;
}

static struct job *req_job(struct daemon *d, json_object *req, json_object **err)
{
	long long id = 0;
	struct job *j;

	if (!get_int(req, "job", 1, UINT32_MAX, &id) || !id) {
		*err = error_reply("job: need a job id");
		return NULL;
	}
	j = job_find(d, id);
	if (!j)
		*err = error_reply("no job %lld", id);
	return j;
}

static json_object *do_end(struct daemon *d, json_object *req)
{
	json_object *err;
	struct job *j = req_job(d, req, &err);
	uint32_t id;

	if (!j)
		return err;
	id = j->id;
	teardown(d, j);
	drop_job(d, j);
	save_state(d);
	log_msg(LOG_INFO, "job %u ended", id);
	return ok_reply();
}

static json_object *do_list(struct daemon *d, bool detail, json_object *req)
{
	json_object *reply, *arr, *err;

	if (detail) {
		struct job *j = req_job(d, req, &err);

		if (!j)
			return err;
		reply = ok_reply();
		json_object_object_add(reply, "job", job_json(d, j, true));
		return reply;
	}
	reply = ok_reply();
	arr = json_object_new_array();
	for (int i = 0; i < d->njobs; i++)
		json_object_array_add(arr, job_json(d, &d->jobs[i], false));
	json_object_object_add(reply, "jobs", arr);
	json_object_object_add(reply, "network", json_object_new_string(d->tag));
	return reply;
}

/* Counters of one port of switch v (0 on any failure). */
static void port_counters(struct daemon *d, int v, int ifindex, struct ia_counters *c)
{
	struct ia_xdp *x;
	int h = ia_netns_enter(d->sw[v].ns);

	memset(c, 0, sizeof(*c));
	if (h < 0)
		return;
	if (!ia_xdp_open(d->sw[v].ns, &x)) {
		ia_xdp_port_counters(x, ifindex, c);
		ia_xdp_close(x);
	}
	ia_netns_return(h);
}

/* Every uplink, all jobs together: what its port sent up and received down. */
static json_object *link_stats(struct daemon *d)
{
	json_object *reply = ok_reply(), *links = json_object_new_array();

	for (int v = 0; v < d->t->n; v++) {
		json_object *l = json_object_new_object(), *drops = json_object_new_object();
		struct ia_counters c;

		port_counters(d, v, d->sw[v].up.ifindex, &c);
		json_object_object_add(l, "switch", json_object_new_string(d->t->sw[v].name));
		json_object_object_add(l, "sent_up", json_object_new_int64(c.c[IA_C_TX]));
		json_object_object_add(l, "results_down", json_object_new_int64(c.c[IA_C_RESULT]));
		json_object_object_add(l, "passed", json_object_new_int64(c.c[IA_C_PASS]));
		for (int i = IA_C_DROP_SHORT; i < IA_C__COUNT; i++)
			if (c.c[i])
				json_object_object_add(drops, ia_ctr_name(i),
						       json_object_new_int64(c.c[i]));
		json_object_object_add(l, "dropped", drops);
		json_object_array_add(links, l);
	}
	json_object_object_add(reply, "links", links);
	return reply;
}

/*
 * Measured messages per chunk on each uplink of a job, from the switches'
 * counters, beside the model. chunks: given by the caller (who ran the job),
 * else what the root switch saw: its receptions over its members.
 */
static json_object *do_stats(struct daemon *d, json_object *req)
{
	const struct ia_topo *t = d->t;
	json_object *err, *reply, *links;
	struct job *j;
	struct ia_counters *c;
	long long chunks = 0;
	double worst = 0, worst_model = 0;

	if (!json_object_object_get_ex(req, "job", NULL))
		return link_stats(d);
	j = req_job(d, req, &err);
	if (!j)
		return err;
	if (!get_int(req, "chunks", 1, LLONG_MAX, &chunks))
		return error_reply("chunks: need an integer >= 1");
	c = calloc(t->n, sizeof(*c));
	if (!c)
		return error_reply("out of memory");
	for (int v = 0; v < t->n; v++) {
		struct ia_xdp *x;
		int h;

		if (!j->plan.sw[v].on_path)
			continue;
		h = ia_netns_enter(d->sw[v].ns);
		if (h < 0)
			continue;
		if (!ia_xdp_open(d->sw[v].ns, &x)) {
			ia_xdp_job_counters(x, j->id, &c[v]);
			ia_xdp_close(x);
		}
		ia_netns_return(h);
	}
	/* Received counts the results coming down too. */
	if (!chunks && j->plan.sw[t->root].nmembers)
		chunks = (c[t->root].c[IA_C_RX] - c[t->root].c[IA_C_RESULT]) /
			 j->plan.sw[t->root].nmembers;
	reply = ok_reply();
	links = json_object_new_array();
	for (int v = 0; v < t->n; v++) {
		const struct ia_plan_switch *ps = &j->plan.sw[v];
		json_object *l;
		uint64_t sent;
		double per, rate = ia_ratio_double(t->sw[v].rate), model;

		if (!ps->on_path)
			continue;
		/* What left by the uplink: forwarded (red) or emitted (blue). */
		sent = ps->blue ? c[v].c[IA_C_EMIT] + c[v].c[IA_C_REEMIT] : c[v].c[IA_C_FWD];
		per = chunks ? (double)sent / chunks : 0;
		model = (double)j->model.msgs[v];
		if (per / rate > worst)
			worst = per / rate;
		if (model / rate > worst_model)
			worst_model = model / rate;
		l = json_object_new_object();
		json_object_object_add(l, "switch", json_object_new_string(t->sw[v].name));
		json_object_object_add(l, "role", json_object_new_string(ps->blue ? "blue" : "red"));
		json_object_object_add(l, "received", json_object_new_int64(c[v].c[IA_C_RX]));
		json_object_object_add(l, "sent_up", json_object_new_int64(sent));
		json_object_object_add(l, "duplicates", json_object_new_int64(c[v].c[IA_C_DUP]));
		json_object_object_add(l, "messages_per_chunk", json_object_new_double(per));
		json_object_object_add(l, "model_messages", json_object_new_int64(j->model.msgs[v]));
		json_object_object_add(l, "rate", json_object_new_double(rate));
		json_object_object_add(l, "congestion", json_object_new_double(per / rate));
		json_object_array_add(links, l);
	}
	json_object_object_add(reply, "job", json_object_new_int64(j->id));
	json_object_object_add(reply, "chunks", json_object_new_int64(chunks));
	json_object_object_add(reply, "links", links);
	json_object_object_add(reply, "congestion", json_object_new_double(worst));
	json_object_object_add(reply, "model_congestion", json_object_new_double(worst_model));
	free(c);
	return reply;
}

static json_object *handle(struct daemon *d, json_object *req)
{
	json_object *cmd;
	const char *c;

	if (!json_object_is_type(req, json_type_object) ||
	    !json_object_object_get_ex(req, "cmd", &cmd))
		return error_reply("request: need an object with \"cmd\"");
	c = json_object_get_string(cmd);
	if (!strcmp(c, "submit"))
		return do_submit(d, req);
	if (!strcmp(c, "end"))
		return do_end(d, req);
	if (!strcmp(c, "list"))
		return do_list(d, false, req);
	if (!strcmp(c, "show"))
		return do_list(d, true, req);
	if (!strcmp(c, "stats"))
		return do_stats(d, req);
	return error_reply("unknown command '%s'", c);
}

/* ---- recovery ---- */

static int recover(struct daemon *d)
{
	json_object *root, *jobs, *v;
	char why[256];
	int fd, ret;

	fd = open(d->state_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	ret = ia_ctl_read(fd, &root);
	close(fd);
	if (ret) {
		log_msg(LOG_ERR, "state file %s unreadable: %s", d->state_path, strerror(-ret));
		return ret;
	}
	if (!json_object_object_get_ex(root, "tag", &v) ||
	    strcmp(json_object_get_string(v), d->tag)) {
		log_msg(LOG_ERR, "state file %s belongs to another network", d->state_path);
		json_object_put(root);
		return -EINVAL;
	}
	json_object_object_get_ex(root, "jobs", &jobs);
	for (size_t i = 0; jobs && i < json_object_array_length(jobs) && d->njobs < IA_MAX_JOBS;
	     i++) {
		json_object *o = json_object_array_get_idx(jobs, i), *f;
		struct job j = { 0 };
		const struct ia_topo *t = d->t;

		j.load = calloc(t->n, sizeof(*j.load));
		j.blue = calloc(t->n, sizeof(*j.blue));
		ia_placement_init(&j.model, t->n);
		json_object_object_get_ex(o, "job", &f);
		j.id = json_object_get_int64(f);
		json_object_object_get_ex(o, "k", &f);
		j.k = json_object_get_int(f);
		json_object_object_get_ex(o, "window", &f);
		j.window = json_object_get_int64(f);
		json_object_object_get_ex(o, "created", &f);
		j.created = json_object_get_int64(f);
		json_object_object_get_ex(o, "algorithm", &f);
		j.algo = ia_algo_parse(json_object_get_string(f));
		json_object_object_get_ex(o, "state", &f);
		for (int s = 0; s < 3; s++)
			if (!strcmp(json_object_get_string(f), state_names[s]))
				j.state = s;
		json_object_object_get_ex(o, "blue", &f);
		for (size_t b = 0; f && b < json_object_array_length(f); b++) {
			int s = ia_topo_find(t, json_object_get_string(json_object_array_get_idx(f, b)));

			if (s >= 0)
				j.blue[s] = true;
		}
		json_object_object_get_ex(o, "workers_per_switch", &f);
		json_object_object_foreach(f, name, cnt) {
			int s = ia_topo_find(t, name);

			if (s >= 0)
				j.load[s] = json_object_get_int64(cnt);
		}
		struct ia_problem pb = { .topo = t, .load = j.load };

		memcpy(j.model.blue, j.blue, t->n * sizeof(*j.blue));
		ia_model_eval(&pb, &j.model);
		if (ia_plan_build(t, j.load, j.blue, &j.plan) || j.state != JOB_ACTIVE) {
			log_msg(LOG_WARN, "job %u was %s when the daemon stopped: rolled back", j.id,
				state_names[j.state]);
			teardown(d, &j);
			job_free(&j);
			continue;
		}
		/* Bring ledgers and maps back in line; what is there is left alone. */
		int fixed = 0;

		for (int s = 0; s < t->n; s++) {
			if (j.blue[s] && ledger_do(d, s, LEDGER_LOOKUP, j.id, 0, why, sizeof(why))) {
				ledger_do(d, s, LEDGER_ADMIT, j.id, j.window, why, sizeof(why));
				fixed++;
			}
			if (j.plan.sw[s].on_path && !pushed(d, j.id, s)) {
				push_switch(d, &j, s, why, sizeof(why));
				fixed++;
			}
		}
		log_msg(LOG_INFO, "job %u recovered (%d repairs)", j.id, fixed);
		d->jobs[d->njobs++] = j;
	}
	json_object_put(root);
	return save_state(d);
}

/* ---- main loop ---- */

static int listen_on(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[PATH_MAX], *slash;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdir(dir, 0755);
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(path);	/* a stale socket of a killed daemon */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, 0660) || listen(fd, 16)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: inaggd -t TOPOLOGY -n TAG [-s SOCKET] [-S STATE] [-K] [-v] [-q]\n"
		"  -t, --topology FILE  the network's topology (as given to inagg topo up)\n"
		"  -n, --net TAG        the network built by 'inagg topo up -n TAG'\n"
		"  -s, --socket PATH    control socket (default " IA_CTL_SOCK ")\n"
		"  -S, --state FILE     state file (default /run/inagg/inaggd-TAG.json)\n"
		"  -K, --kernel-forward upward messages leave through the kernel, so that tc\n"
		"                       rate emulation (inagg topo up -r) applies to them\n"
		"  -v, --verbose        debug messages;  -q, --quiet  warnings and errors only\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "topology", required_argument, NULL, 't' }, { "net", required_argument, NULL, 'n' },
		{ "socket", required_argument, NULL, 's' },   { "state", required_argument, NULL, 'S' },
		{ "verbose", no_argument, NULL, 'v' },	      { "quiet", no_argument, NULL, 'q' },
		{ "kernel-forward", no_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },	      { NULL }
	};
	struct daemon d = { .sock_path = IA_CTL_SOCK };
	char err[IA_ERRLEN], state[PATH_MAX];
	const char *topo = NULL, *tag = NULL;
	int c, lfd, sfd, ret;
	sigset_t mask;

	log_journal = getenv("JOURNAL_STREAM") != NULL;
	while ((c = getopt_long(argc, argv, "t:n:s:S:vqKh", opts, NULL)) != -1) {
		switch (c) {
		case 't': topo = optarg; break;
		case 'n': tag = optarg; break;
		case 's': d.sock_path = optarg; break;
		case 'S': d.state_path = optarg; break;
		case 'v': log_level = LOG_DEBUG; break;
		case 'q': log_level = LOG_WARN; break;
		case 'K': d.job_flags |= IA_JOB_F_KERNEL_FWD; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!topo || !tag || optind < argc) {
		usage(stderr);
		return 2;
	}
	if (strlen(tag) > IA_NET_TAG_MAX) {
		log_msg(LOG_ERR, "network tag '%s' too long", tag);
		return 1;
	}
	strcpy(d.tag, tag);
	if (!realpath(topo, d.topo_path))
		snprintf(d.topo_path, sizeof(d.topo_path), "%s", topo);
	if (ia_topo_load(topo, &d.t, err, sizeof(err))) {
		log_msg(LOG_ERR, "%s", err);
		return 1;
	}
	if (!d.state_path) {
		mkdir("/run/inagg", 0755);
		snprintf(state, sizeof(state), "/run/inagg/inaggd-%s.json", tag);
		d.state_path = state;
	}
	d.jobs = calloc(IA_MAX_JOBS, sizeof(*d.jobs));
	if (!d.jobs)
		return 1;
	libbpf_set_print(NULL);
	ret = resolve_ports(&d);
	if (ret) {
		log_msg(LOG_ERR, "network '%s' is not up (inagg topo up -n %s): %s", tag, tag,
			strerror(-ret));
		return 1;
	}
	init_ledgers(&d);
	ret = recover(&d);
	if (ret)
		return 1;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	lfd = listen_on(d.sock_path);
	if (lfd < 0 || sfd < 0) {
		log_msg(LOG_ERR, "control socket %s: %s", d.sock_path, strerror(-lfd));
		return 1;
	}
	log_msg(LOG_INFO, "network %s: %d switches, %d jobs; listening on %s", tag, d.t->n,
		d.njobs, d.sock_path);
	for (;;) {
		struct pollfd p[2] = { { lfd, POLLIN, 0 }, { sfd, POLLIN, 0 } };
		json_object *req, *reply;
		int cfd;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!p[0].revents)
			continue;
		cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0)
			continue;
		/* A client that never finishes its request must not stall the daemon. */
		setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){ 5, 0 },
			   sizeof(struct timeval));
		if (ia_ctl_read(cfd, &req)) {
			reply = error_reply("request: not JSON");
		} else {
			reply = handle(&d, req);
			json_object_put(req);
		}
		ia_ctl_write(cfd, reply);
		json_object_put(reply);
		close(cfd);
	}
	log_msg(LOG_INFO, "stopping; jobs stay configured and are recovered on restart");
	unlink(d.sock_path);
	close(lfd);
	return 0;
}
