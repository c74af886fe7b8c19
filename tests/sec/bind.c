// SPDX-License-Identifier: GPL-2.0
/*
 * Tenants against the datapath on a live network (docs/security.md): a
 * member is a place, and results come only from the PS. Two switches, s0
 * the root with worker s0/w0, s1 below it with s1/w0 and s1/w1; the job
 * has s0/w0 and s1/w0, so s1/w1 is a host outside it. inaggd places the
 * job and pushes each member's place; then frames are forged as tenants
 * would: a member's id from the non-member's own port and address, from a
 * spoofed address, from a port the member is not on, from the member's
 * host with another address or UDP port; results from the destination's
 * namespace (an ordinary socket) and from a worker's port, sent while the
 * job runs. Nothing forged is aggregated, forwarded or delivered: every
 * forgery is counted (drop_port, or drop_type for a result from below),
 * and the real members' run is exact.
 *
 * Namespaces: ia-<tag>-*, tag "l<pid>"; the teardown removes them (and kills
 * the daemon it started, by PID).
 */
#include <json-c/json.h>
#include <netinet/ip.h>
#include <netinet/udp.h>

#include "kselftest_harness.h"
#include "../net/livetest.h"
#include "netplan.h"

#define CHUNKS	300

static const char topo_sec[] =
	"{\"switches\": ["
	"{\"name\": \"s0\", \"parent\": null, \"load\": 1, \"capacity\": 2},"
	"{\"name\": \"s1\", \"parent\": \"s0\", \"load\": 2, \"capacity\": 2}]}";

LIVE_FIXTURE(sec, topo_sec, 0, false)

/* How a forger sends: its namespace, source (0: its own), UDP source port (0: any). */
struct forger {
	const char *ns;
	const char *saddr;	/* spoofed: a raw socket (IP_HDRINCL) */
	uint16_t sport;
};

/*
 * Sends n messages of type for job (chunks seq, seq + 1, ...) with sender
 * and nworkers, every element 0x41414141, from f to daddr:IA_UDP_PORT, in
 * a child in f's namespace: how many left, or -1.
 */
static int forge(const struct forger *f, const char *daddr, uint8_t type, uint32_t job,
		 uint32_t seq, uint32_t sender, uint32_t nworkers, int n)
{
	int p[2], sent = -1;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		uint8_t buf[2048] __attribute__((aligned(4)));
		struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(IA_UDP_PORT) };
		struct sockaddr_in me = { .sin_family = AF_INET, .sin_port = htons(f->sport) };
		struct iphdr *ip = (void *)buf;
		struct udphdr *udp = (void *)(ip + 1);
		size_t off = f->saddr ? sizeof(*ip) + sizeof(*udp) : 0;
		size_t len = IA_HDR_LEN + 4 * IA_CHUNK_DEFAULT;
		int fd, one = 1, k = 0;

		close(p[0]);
		inet_pton(AF_INET, daddr, &to.sin_addr);
		if (enter_ns(f->ns))
			_exit(1);
		fd = f->saddr ? socket(AF_INET, SOCK_RAW, IPPROTO_RAW) : socket(AF_INET, SOCK_DGRAM, 0);
		if (fd < 0 || (!f->saddr && (setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one)) ||
					     bind(fd, (struct sockaddr *)&me, sizeof(me)))))
			_exit(1);
		memset(buf, 0x41, sizeof(buf));
		if (f->saddr) {
			memset(buf, 0, off);
			ip->version = 4;
			ip->ihl = 5;
			ip->ttl = 64;
			ip->protocol = IPPROTO_UDP;
			ip->tot_len = htons(off + len);
			inet_pton(AF_INET, f->saddr, &ip->saddr);
			ip->daddr = to.sin_addr.s_addr;
			udp->source = htons(f->sport ? f->sport : 40001);
			udp->dest = htons(IA_UDP_PORT);
			udp->len = htons(sizeof(*udp) + len);
		}
		for (int i = 0; i < n; i++) {
			ia_hdr_fill((struct ia_hdr *)(buf + off), type, job, seq + i, sender, nworkers,
				    IA_CHUNK_DEFAULT, 0);
			k += sendto(fd, buf, off + len, 0, (struct sockaddr *)&to, sizeof(to)) ==
			     (ssize_t)(off + len);
		}
		_exit(write(p[1], &k, sizeof(k)) == sizeof(k) ? 0 : 1);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &sent, sizeof(sent)) != sizeof(sent))
		sent = -1;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return sent;
}

/* Counter name of the job summed over its switches (inaggd's stats), -1 if unknown. */
static long long job_ctr(struct env *e, uint32_t job, const char *name)
{
	json_object *st = request(e, "{\"cmd\": \"stats\", \"job\": %u}", job), *links, *v;
	long long n = 0;

	if (!st)
		return -1;
	links = get(st, "links");
	for (size_t i = 0; links && i < json_object_array_length(links); i++)
		if (json_object_object_get_ex(get(json_object_array_get_idx(links, i), "counters"),
					      name, &v))
			n += json_object_get_int64(v);
	json_object_put(st);
	return n;
}

/* The job: s0/w0 and s1/w0; its JSON (inaggd's submit answer), roles logged. */
static json_object *submit(struct __test_metadata *_metadata, struct env *e)
{
	json_object *resp = request(e, "{\"cmd\": \"submit\", \"k\": 1, \"algorithm\": \"top\", "
				       "\"workers\": {\"s0\": 1, \"s1\": 1}}");
	json_object *links;

	if (!resp)
		return NULL;
	links = get(resp, "job.links");
	for (size_t i = 0; links && i < json_object_array_length(links); i++) {
		json_object *l = json_object_array_get_idx(links, i);

		TH_LOG("%s: %s", json_object_get_string(get(l, "switch")),
		       json_object_get_string(get(l, "role")));
	}
	return resp;
}

static const char *worker_str(json_object *job, int i, const char *field)
{
	return json_object_get_string(get(json_object_array_get_idx(get(job, "workers"), i), field));
}

/* Forged results, sent while the run is on (allreduce()'s during). */
static int forged_results[2];
static json_object *running_job;

static void forge_results(struct env *e, struct run *r)
{
	json_object *job = running_job;
	uint32_t base = json_object_get_int64(get(job, "base_seq"));
	char ns[64];
	/* An ordinary socket in the destination's namespace: the PS's address, not its port. */
	struct forger dest = { .ns = json_object_get_string(get(job, "destination.netns")) };
	/* The host outside the job: a worker's port, not the up port. */
	struct forger below = { .ns = ns, .sport = IA_UDP_PORT };

	ia_net_worker_ns(e->tag, "s1", 1, ns, sizeof(ns));
	forged_results[0] = forged_results[1] = 0;
	for (int i = 0; i < 2; i++) {
		forged_results[0] += forge(&dest, worker_str(job, i, "address"), IA_MSG_RESULT,
					   r->job, base, IA_SENDER_DEST, 2, CHUNKS);
		forged_results[1] += forge(&below, worker_str(job, i, "address"), IA_MSG_RESULT,
					   r->job, base, IA_SENDER_DEST, 2, CHUNKS);
	}
}

TEST_F_TIMEOUT(sec, forged_members_and_results_dropped_members_exact, 120)
{
	json_object *resp = submit(_metadata, &self->e), *job;
	char outsider[64], w1addr[INET_ADDRSTRLEN], ps[INET_ADDRSTRLEN];
	struct in_addr a = ia_net_worker_addr(2);	/* s1/w1: s0 has one worker, s1 two */
	const char *mns, *maddr, *ons;
	struct run *r = new_run();
	uint32_t id, base, m1, mid;
	int sent = 0, n;

	ASSERT_NE(NULL, resp);
	ASSERT_NE(NULL, r);
	job = get(resp, "job");
	id = json_object_get_int64(get(job, "job"));
	base = json_object_get_int64(get(job, "base_seq"));
	ia_net_worker_ns(self->e.tag, "s1", 1, outsider, sizeof(outsider));
	inet_ntop(AF_INET, &a, w1addr, sizeof(w1addr));
	snprintf(ps, sizeof(ps), "%s", json_object_get_string(get(job, "destination.address")));
	/* The member on s1 and its place; the other member is on s0. */
	m1 = strstr(worker_str(job, 0, "netns"), "-s1-") ? 0 : 1;
	mid = json_object_get_int64(get(json_object_array_get_idx(get(job, "workers"), m1), "id"));
	mns = worker_str(job, m1, "netns");
	maddr = worker_str(job, m1, "address");
	ons = worker_str(job, !m1, "netns");
	const struct {
		const char *what;
		struct forger f;
	} members[] = {
		{ "the outsider, its own port and address", { outsider, NULL, IA_UDP_PORT } },
		{ "the outsider, the member's address spoofed", { outsider, maddr, IA_UDP_PORT } },
		{ "the other member's port (s0)", { ons, NULL, IA_UDP_PORT } },
		{ "the member's port, another address", { mns, w1addr, IA_UDP_PORT } },
		{ "the member's port and address, another UDP port", { mns, NULL, 0 } },
	};

	for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		n = forge(&members[i].f, ps, IA_MSG_CONTRIB, id, base, mid, 1, 4);
		ASSERT_EQ(4, n) TH_LOG("%s", members[i].what);
		sent += n;
		EXPECT_EQ(sent, job_ctr(&self->e, id, "drop_port")) TH_LOG("%s", members[i].what);
	}
	EXPECT_EQ(0, job_ctr(&self->e, id, "aggregated"));
	EXPECT_EQ(0, job_ctr(&self->e, id, "forwarded"));
	EXPECT_EQ(0, job_ctr(&self->e, id, "drop_member"));

	/* The members' run, with results forged meanwhile: exact. */
	running_job = job;
	ASSERT_EQ(0, allreduce(&self->e, job, CHUNKS, r, NULL, NULL, forge_results));
	live_check_exact(_metadata, r);
	EXPECT_EQ(2 * CHUNKS, forged_results[0]);
	EXPECT_EQ(2 * CHUNKS, forged_results[1]);
	/* Every forged result dropped where it came in: at s0 by source, at s1 by port. */
	EXPECT_EQ(sent + forged_results[0], job_ctr(&self->e, id, "drop_port"));
	EXPECT_EQ(forged_results[1], job_ctr(&self->e, id, "drop_type"));
	EXPECT_EQ(0, job_ctr(&self->e, id, "drop_member"));
	json_object_put(request(&self->e, "{\"cmd\": \"end\", \"job\": %u}", id));
	json_object_put(resp);
	munmap(r, sizeof(*r));
}

LIVE_TEST_MAIN
