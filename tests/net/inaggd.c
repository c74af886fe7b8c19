// SPDX-License-Identifier: GPL-2.0
/*
 * inaggd against hostile and clumsy clients (issue 11): a corpus of
 * malformed requests, each followed by a check that the daemon lives and
 * answers; silent, trickling and too many clients; a lock held by another
 * user; a second daemon on the same network; the ledgers holding the
 * topology's capacity. A three-switch network in namespaces ia-<tag>-*.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "livetest.h"
#include "ctl.h"
#include "err.h"
#include "job_lend.h"
#include "ledger.h"
#include "netns.h"
#include "pinned.h"
#include "topo.h"
#include "xdp.h"
#include "../nstest.h"

/* Capacity 1 everywhere: a second job can aggregate nowhere. Slots: s1 keeps the default. */
static const char topo3[] = "{\"switches\": ["
	"{\"name\": \"s0\", \"parent\": null, \"rate\": 1, \"load\": 0, \"capacity\": 1,"
	" \"slots\": 300},"
	"{\"name\": \"s1\", \"parent\": \"s0\", \"rate\": 1, \"load\": 2, \"capacity\": 1},"
	"{\"name\": \"s2\", \"parent\": \"s0\", \"rate\": 1, \"load\": 2, \"capacity\": 1,"
	" \"slots\": 200}]}";
static const unsigned int topo3_slots[] = { 300, IA_SLOTS_DEFAULT, 200 };

FIXTURE(d)
{
	char tag[16], dir[64], topo[96], sock[96], state[96];
	pid_t daemon;
};

/* A daemon on the test's network, with socket sock and state file state (not waited for). */
static pid_t fork_daemon(FIXTURE_DATA(d) *self, const char *sock, const char *state)
{
	return live_fork_daemon(self->topo, self->tag, sock, state, self->dir, false);
}

/* Sends len bytes (then ends the request), returns the answer's text in buf ("" if none). */
static int raw(const char *sock, const void *req, size_t len, bool shut, char *buf,
	       size_t buflen, int wait_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t got = 0, off = 0;
	int fd;

	buf[0] = '\0';
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while (off < len) {
		ssize_t n = send(fd, (const char *)req + off, len - off, MSG_NOSIGNAL);

		if (n <= 0)
			break;	/* the daemon may answer before reading all */
		off += n;
	}
	if (shut)
		shutdown(fd, SHUT_WR);
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&p, 1, wait_ms) <= 0)
			break;
		n = recv(fd, buf + got, buflen - 1 - got, 0);
		if (n <= 0)
			break;
		got += n;
		if (got == buflen - 1)
			break;
	}
	buf[got] = '\0';
	close(fd);
	return 0;
}

/* The answer to a request: a JSON object with "ok" (valid UTF-8, strict). */
static json_object *answer_of(const char *text)
{
	json_object *o;

	if (ia_ctl_parse(text, strlen(text), &o, NULL, 0))
		return NULL;
	if (!json_object_object_get_ex(o, "ok", NULL)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static bool ok_of(json_object *o)
{
	json_object *v;

	return o && json_object_object_get_ex(o, "ok", &v) && json_object_get_boolean(v);
}

/* A valid request to sock is answered within wait_ms. */
static bool sock_answers(const char *sock, int wait_ms)
{
	static const char list[] = "{\"cmd\": \"list\"}\n";
	char buf[4096];
	json_object *o;
	bool ok;

	if (raw(sock, list, sizeof(list) - 1, false, buf, sizeof(buf), wait_ms))
		return false;
	o = answer_of(buf);
	ok = ok_of(o);
	json_object_put(o);
	return ok;
}

/* The daemon is alive and answers within wait_ms. */
static bool answers(FIXTURE_DATA(d) *self, int wait_ms)
{
	return waitpid(self->daemon, NULL, WNOHANG) == 0 && sock_answers(self->sock, wait_ms);
}

/*
 * A daemon's start loads the tail programs on every switch, seconds each on a
 * loaded machine, and until it listens a request fails at once: wait up to
 * 120 s by the clock, not by a count of tries (100 tries were 5 s).
 */
static bool started(FIXTURE_DATA(d) *self)
{
	time_t end = time(NULL) + 120;

	while (!answers(self, 1000)) {
		if (time(NULL) > end || waitpid(self->daemon, NULL, WNOHANG) != 0)
			return false;
		usleep(50000);
	}
	return true;
}

/* Teardown's work, also for a failed setup: the harness skips teardown then. */
static void d_clean(FIXTURE_DATA(d) *self)
{
	if (self->daemon > 0) {
		kill(self->daemon, SIGTERM);
		waitpid(self->daemon, NULL, 0);
		self->daemon = 0;
	}
	sh("%s/inagg net down -n %s -t %s >/dev/null", build, self->tag, self->topo);
	sh("rm -rf %s", self->dir);
}

FIXTURE_SETUP(d)
{
	FILE *f;

	snprintf(self->tag, sizeof(self->tag), "h%d", getpid() % 1000000);
	snprintf(self->dir, sizeof(self->dir), "/tmp/inagg-hd-%d", getpid());
	ASSERT_EQ(0, mkdir(self->dir, 0700));
	snprintf(self->topo, sizeof(self->topo), "%s/topo.json", self->dir);
	snprintf(self->sock, sizeof(self->sock), "%s/inaggd.sock", self->dir);
	snprintf(self->state, sizeof(self->state), "%s/state.json", self->dir);
	setenv("INAGG_LEDGER", "user", 1);
	setenv("INAGG_LEDGER_DIR", self->dir, 1);
	f = fopen(self->topo, "w");
	ASSERT_NE(NULL, f);
	fputs(topo3, f);
	fclose(f);
	ASSERT_EQ(0, sh("%s/inagg net up -t %s -n %s --attach >/dev/null", build, self->topo,
			self->tag)) {
		d_clean(self);
	}
	self->daemon = fork_daemon(self, self->sock, self->state);
	ASSERT_LT(0, self->daemon);
	ASSERT_TRUE(started(self)) {
		d_clean(self);
	}
}

FIXTURE_TEARDOWN(d)
{
	d_clean(self);
}

/* Every field of every command with every wrong JSON type. */
static const char *const wrong[] = {
	"null", "true", "0", "-1", "1.5", "1e300", "99999999999999999999", "\"x\"", "\"\"",
	"[]", "[1]", "{}", "{\"a\": 1}", "{\"s1\": null}", "{\"s1\": \"2\"}", "{\"s1\": -1}",
	"{\"s1\": 99}", "{\"nope\": 1}", "\"smc\\u0000x\"", "4294967296", "-9223372036854775808",
};

static const struct {
	const char *cmd, *fields[9];
	const char *req, *valid;	/* its required field, and a right value of it */
} cmds[] = {
	{ "submit", { "k", "algorithm", "window", "job", "workers", "class", "head", "cc" }, "k",
	  "\"k\": 1" },
	{ "end", { "job" }, "job", "\"job\": 1" },
	{ "show", { "job" }, "job", "\"job\": 1" },
	{ "window", { "job", "window" }, "job", "\"job\": 1" },
	{ "stats", { "job", "chunks" }, "job", "\"job\": 1" },
	{ "list", { NULL }, NULL, NULL },
};

/*
 * The values of the list that are right for the field's type (k = 0 runs all red;
 * {} is a right workers object, refused for another reason: a job of no workers).
 */
static bool is_right(const char *field, const char *v)
{
	return (!strcmp(field, "workers") && !strcmp(v, "{}")) ||
	       (!strcmp(field, "k") && !strcmp(v, "0"));
}

static void expect_refused(struct __test_metadata *_metadata, FIXTURE_DATA(d) *self,
			   const void *req, size_t len, const char *what)
{
	char buf[8192];
	json_object *o;

	ASSERT_EQ(0, raw(self->sock, req, len, true, buf, sizeof(buf), 5000)) TH_LOG("%s", what);
	o = answer_of(buf);
	EXPECT_NE(NULL, o) TH_LOG("%s: answer '%.200s' not strict UTF-8 JSON", what, buf);
	EXPECT_FALSE(ok_of(o)) TH_LOG("%s accepted", what);
	json_object_put(o);
	ASSERT_TRUE(answers(self, 5000)) TH_LOG("daemon gone after %s", what);
}

TEST_F_TIMEOUT(d, malformed_requests_corpus, 600)
{
	static const char *const whole[] = {
		"", " ", "{", "}", "[]", "null", "\"cmd\"", "42", "{\"cmd\"}", "{\"cmd\": \"li",
		"{\"cmd\": \"list\"", "{\"cmd\": \"list\"}}", "{\"cmd\": \"list\"} {}",
		"{'cmd': 'list'}", "{\"cmd\": \"list\",}", "{cmd: \"list\"}", "{\"cmd\": \"nope\"}",
		"{\"cmd\": \"\"}", "{\"CMD\": \"list\"}",
		/* The six crash paths of the issue. */
		"{\"cmd\": null}", "{\"cmd\": \"submit\", \"k\": 1, \"algorithm\": null}",
		"{\"cmd\": \"submit\", \"k\": 1, \"workers\": 3}",
		"{\"cmd\": \"submit\", \"k\": 1, \"workers\": null}",
		"{\"cmd\": \"submit\", \"k\": 1, \"workers\": [1, 2]}",
		"{\"cmd\": \"submit\", \"k\": 1, \"workers\": \"s1=1\"}",
		/* Invalid UTF-8, in values and in keys; a lone surrogate escape. */
		"{\"cmd\": \"\xff\xfe\"}", "{\"cmd\": \"submit\", \"k\": 1, \"algorithm\": \"\xc3\x28\"}",
		"{\"cmd\": \"list\", \"\xed\xa0\x80\": 1}", "{\"cmd\": \"\xe2\x82\"}",
		"{\"cmd\": \"submit\", \"k\": 1, \"workers\": {\"\xc0\xaf\": 1}}",
		"{\"cmd\": \"submit\", \"k\": 1, \"algorithm\": \"\\ud800\"}",
		"{\"cmd\": \"submit\", \"k\": 1, \"algorithm\": \"nope\"}",
		"{\"cmd\": \"submit\", \"k\": 1, \"algorithm\": \"brute\"}",
		"{\"cmd\": \"submit\", \"k\": 1, \"workers\": {\"s9\": 1}}",
		"{\"cmd\": \"submit\", \"k\": 1, \"cc\": \"bbr\"}",
		"{\"cmd\": \"end\", \"job\": 77}",
	};
	char req[512], *big;
	uint64_t seed = 7;

	for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
		expect_refused(_metadata, self, whole[i], strlen(whole[i]), whole[i]);
	for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
		for (int f = 0; cmds[c].fields[f]; f++) {
			for (size_t w = 0; w < sizeof(wrong) / sizeof(wrong[0]); w++) {
				const char *field = cmds[c].fields[f];

				if (is_right(field, wrong[w]))
					continue;
				/* The field wrong, the command's required field right. */
				bool req_is_field = cmds[c].req && !strcmp(cmds[c].req, field);

				snprintf(req, sizeof(req), "{\"cmd\": \"%s\", %s%s\"%s\": %s}",
					 cmds[c].cmd, req_is_field ? "" : cmds[c].valid,
					 req_is_field ? "" : ", ", field, wrong[w]);
				expect_refused(_metadata, self, req, strlen(req), req);
			}
		}
	}
	/* Too large: answered with an error, not closed in silence. */
	big = malloc(1 << 20);
	ASSERT_NE(NULL, big);
	memset(big, ' ', 1 << 20);
	memcpy(big, "{\"cmd\": \"list\", \"pad\": \"", 24);
	{
		char buf[512];

		ASSERT_EQ(0, raw(self->sock, big, 1 << 20, true, buf, sizeof(buf), 5000));
		EXPECT_NE(NULL, strstr(buf, "\"ok\":false")) TH_LOG("answer: %s", buf);
		EXPECT_NE(NULL, strstr(buf, "larger than")) TH_LOG("answer: %s", buf);
		ASSERT_TRUE(answers(self, 5000));
	}
	free(big);
	/* Random bytes. */
	for (int i = 0; i < 200; i++) {
		size_t len = 1 + ia_splitmix64(&seed) % 300;

		for (size_t b = 0; b < len; b++)
			req[b] = ia_splitmix64(&seed);
		req[0] = "{[\"x\x80"[i % 5];
		expect_refused(_metadata, self, req, len, "random bytes");
	}
	/* Deep nesting. */
	big = malloc(100001);
	ASSERT_NE(NULL, big);
	memset(big, '[', 100000);
	expect_refused(_metadata, self, big, 60000, "60000 brackets");
	free(big);
}

/* Silent clients, a trickling one and too many: a valid request is answered at once. */
TEST_F_TIMEOUT(d, slow_clients_do_not_stall_others, 300)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int silent[10], many[80], trickle;
	char buf[512];
	ssize_t n;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", self->sock);
	for (int i = 0; i < 10; i++) {
		silent[i] = socket(AF_UNIX, SOCK_STREAM, 0);
		ASSERT_EQ(0, connect(silent[i], (struct sockaddr *)&sa, sizeof(sa)));
	}
	trickle = socket(AF_UNIX, SOCK_STREAM, 0);
	ASSERT_EQ(0, connect(trickle, (struct sockaddr *)&sa, sizeof(sa)));
	ASSERT_EQ(1, send(trickle, "{", 1, 0));
	/* The old daemon took 5 s per silent client: 50 s here. */
	EXPECT_TRUE(answers(self, 1000));
	for (int i = 0; i < 3; i++) {
		usleep(300000);
		ASSERT_EQ(1, send(trickle, " ", 1, MSG_NOSIGNAL));
		EXPECT_TRUE(answers(self, 1000));
	}
	/* The trickler is cut at the whole-request deadline (5 s), told why. */
	{
		struct pollfd p = { trickle, POLLIN, 0 };

		ASSERT_EQ(1, poll(&p, 1, 20000)) TH_LOG("trickling client never cut");
	}
	n = recv(trickle, buf, sizeof(buf) - 1, 0);
	ASSERT_LT(0, n);
	buf[n] = '\0';
	EXPECT_NE(NULL, strstr(buf, "not complete within")) TH_LOG("answer: %s", buf);
	close(trickle);
	/* Silent ones too. */
	n = recv(silent[0], buf, sizeof(buf) - 1, 0);
	ASSERT_LT(0, n);
	for (int i = 0; i < 10; i++)
		close(silent[i]);
	/* More connections than the cap: the extra ones are told, the rest still served. */
	for (int i = 0; i < 80; i++) {
		many[i] = socket(AF_UNIX, SOCK_STREAM, 0);
		ASSERT_EQ(0, connect(many[i], (struct sockaddr *)&sa, sizeof(sa)));
	}
	{
		struct pollfd p = { many[79], POLLIN, 0 };

		ASSERT_EQ(1, poll(&p, 1, 5000)) TH_LOG("connection over the cap not answered");
		n = recv(many[79], buf, sizeof(buf) - 1, 0);
		ASSERT_LT(0, n);
		buf[n] = '\0';
		EXPECT_NE(NULL, strstr(buf, "too many connections")) TH_LOG("answer: %s", buf);
	}
	for (int i = 0; i < 80; i++)
		close(many[i]);
	EXPECT_TRUE(answers(self, 1000));
}

static int ledger_cap(const char *ns, struct ia_ledger_cap *cap)
{
	struct ia_ledger *l;
	int ret = ia_ledger_open(&l, IA_LEDGER_AUTO, ns);

	if (ret)
		return ret;
	ret = ia_ledger_get(l, cap, NULL, 0);
	ia_ledger_close(l);
	return ret;
}

/* The ledgers hold the topology's capacity, and no second daemon can add its own jobs. */
TEST_F_TIMEOUT(d, one_daemon_per_network_never_over_capacity, 300)
{
	char sock2[128], state2[128], ns[64], buf[4096];
	static const char submit[] = "{\"cmd\": \"submit\", \"k\": 3}\n";
	struct ia_ledger_cap cap;
	int status;
	pid_t second;

	for (int v = 0; v < 3; v++) {
		snprintf(ns, sizeof(ns), "ia-%s-s%d", self->tag, v);
		ASSERT_EQ(0, ledger_cap(ns, &cap));
		EXPECT_EQ(1, cap.max_jobs) TH_LOG("%s: not the topology's capacity", ns);
	}
	/* A second daemon on the same network, with its own socket and state: refused. */
	snprintf(sock2, sizeof(sock2), "%s/second.sock", self->dir);
	snprintf(state2, sizeof(state2), "%s/second.json", self->dir);
	second = fork_daemon(self, sock2, state2);
	ASSERT_LT(0, second);
	ASSERT_EQ(second, waitpid(second, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	EXPECT_EQ(0, sh("grep -q 'already has its daemon' %s/inaggd.log", self->dir));
	/* Jobs until every switch is full: no ledger ever above its capacity. */
	for (int i = 0; i < 4; i++) {
		json_object *o;

		ASSERT_EQ(0, raw(self->sock, submit, sizeof(submit) - 1, false, buf, sizeof(buf),
				 20000));
		o = answer_of(buf);
		EXPECT_TRUE(ok_of(o)) TH_LOG("%s", buf);
		json_object_put(o);
		for (int v = 0; v < 3; v++) {
			snprintf(ns, sizeof(ns), "ia-%s-s%d", self->tag, v);
			ASSERT_EQ(0, ledger_cap(ns, &cap));
			EXPECT_GE(1, cap.used_jobs) TH_LOG("%s over capacity", ns);
		}
	}
	/* Once the first is gone, a daemon may take the network (and recovers its jobs). */
	kill(self->daemon, SIGTERM);
	waitpid(self->daemon, NULL, 0);
	self->daemon = fork_daemon(self, self->sock, self->state);
	ASSERT_TRUE(started(self)) {
		d_clean(self);
	}
}

/*
 * A test process killed mid-run (the harness's timeout: no teardown) takes
 * its daemon along, so the network is free for the next daemon. (A daemon
 * left behind by a killed test once held the test lock of every engineer.)
 */
/* Process pid has ended (no such process, or a zombie). */
static bool gone(pid_t pid)
{
	char path[64], st[256];
	FILE *f;
	char *p;
	bool z;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return true;
	z = fgets(st, sizeof(st), f) && (p = strrchr(st, ')')) && p[1] == ' ' && p[2] == 'Z';
	fclose(f);
	return z;
}

TEST_F_TIMEOUT(d, daemon_dies_with_its_test, 120)
{
	pid_t test, dpid = 0;
	int p[2];

	kill(self->daemon, SIGTERM);
	waitpid(self->daemon, NULL, 0);
	ASSERT_EQ(0, pipe(p));
	test = fork();
	ASSERT_LE(0, test);
	if (test == 0) {
		pid_t d = fork_daemon(self, self->sock, self->state);

		if (write(p[1], &d, sizeof(d)) != sizeof(d))
			_exit(1);
		pause();
		_exit(0);
	}
	self->daemon = 0;
	ASSERT_EQ(sizeof(dpid), read(p[0], &dpid, sizeof(dpid)));
	ASSERT_LT(0, dpid);
	/* Up (its socket answers) before its test dies. */
	for (time_t end = time(NULL) + 120; !sock_answers(self->sock, 1000) && time(NULL) < end;)
		usleep(50000);
	EXPECT_TRUE(sock_answers(self->sock, 1000));
	kill(test, SIGKILL);
	waitpid(test, NULL, 0);
	for (int i = 0; i < 100 && !gone(dpid); i++)
		usleep(50000);
	ASSERT_TRUE(gone(dpid)) TH_LOG("daemon %d outlived its test", dpid);
	/* A new daemon takes the network: the old one is gone with its claim. */
	self->daemon = fork_daemon(self, self->sock, self->state);
	ASSERT_LT(0, self->daemon);
	EXPECT_TRUE(started(self));
	EXPECT_NE(0, sh("grep -q 'already has its daemon' %s/inaggd.log", self->dir));
}

/* Aggregator slots of a job's head in a switch's BPF maps: the first index that is not there. */
static unsigned int bpf_head_slots(const char *ns, unsigned int job)
{
	struct ia_slot *slot = malloc(sizeof(*slot));
	struct ia_xdp *x = NULL;
	unsigned int n = 0;
	int h = ia_netns_enter(ns);

	if (h < 0 || !slot || ia_xdp_open_existing(ns, &x, NULL, 0)) {
		n = -1u;
	} else {
		while (n <= IA_MAX_WINDOW && !ia_xdp_slot_read(x, job, n, slot))
			n++;
	}
	ia_xdp_close(x);
	if (h >= 0)
		ia_netns_return(h);
	free(slot);
	return n;
}

/*
 * Every ledger holds the topology's jobs and slots, the tail every slot no
 * head holds; a job's head in the ledger is the memory its BPF maps have.
 */
TEST_F_TIMEOUT(d, ledgers_hold_topology_slots_and_heads_are_bpf_memory, 300)
{
	static const char submit[] = "{\"cmd\": \"submit\", \"k\": 3, \"window\": 160}\n";
	static const char end[] = "{\"cmd\": \"end\", \"job\": 1}\n";
	static const char big[] = "{\"cmd\": \"submit\", \"k\": 3, \"window\": 350}\n";
	struct ia_ledger_cap cap;
	struct ia_ledger_job lj;
	struct ia_ledger *l;
	char ns[64], buf[8192];
	json_object *o, *job, *blue;
	int nblue = 0;

	for (int v = 0; v < 3; v++) {
		snprintf(ns, sizeof(ns), "ia-%s-s%d", self->tag, v);
		ASSERT_EQ(0, ledger_cap(ns, &cap));
		EXPECT_EQ(topo3_slots[v], cap.max_slots) TH_LOG("%s", ns);
		EXPECT_EQ(topo3_slots[v], cap.tail_slots) TH_LOG("%s: the tail is all", ns);
		EXPECT_EQ(0, cap.head_slots);
	}
	ASSERT_EQ(0, raw(self->sock, submit, sizeof(submit) - 1, false, buf, sizeof(buf), 20000));
	o = answer_of(buf);
	ASSERT_TRUE(ok_of(o)) TH_LOG("%s", buf);
	ASSERT_TRUE(json_object_object_get_ex(o, "job", &job));
	ASSERT_TRUE(json_object_object_get_ex(job, "blue", &blue));
	for (int v = 0; v < 3; v++) {
		bool is_blue = false;

		snprintf(ns, sizeof(ns), "ia-%s-s%d", self->tag, v);
		for (size_t b = 0; b < json_object_array_length(blue); b++)
			is_blue |= !strcmp(json_object_get_string(json_object_array_get_idx(blue, b)),
					   ns + strlen(ns) - 2);
		nblue += is_blue;
		ASSERT_EQ(0, ledger_cap(ns, &cap));
		EXPECT_EQ(is_blue ? 160 : 0, cap.head_slots) TH_LOG("%s", ns);
		EXPECT_EQ(topo3_slots[v] - cap.head_slots, cap.tail_slots) TH_LOG("%s", ns);
		ASSERT_EQ(0, ia_ledger_open(&l, IA_LEDGER_AUTO, ns));
		EXPECT_EQ(is_blue ? 0 : -ENOENT, ia_ledger_job(l, 1, &lj, NULL, 0))
			TH_LOG("%s", ns);
		ia_ledger_close(l);
		if (is_blue) {
			EXPECT_EQ(160, lj.slots);
			EXPECT_EQ(lj.slots, bpf_head_slots(ns, 1)) TH_LOG("%s: BPF memory", ns);
		}
	}
	/* s2's 200 slots hold the head; s0's 300 too: a blue switch can only be one with room. */
	EXPECT_LT(0, nblue) TH_LOG("%s", buf);
	json_object_put(o);
	ASSERT_EQ(0, raw(self->sock, end, sizeof(end) - 1, false, buf, sizeof(buf), 20000));
	o = answer_of(buf);
	EXPECT_TRUE(ok_of(o)) TH_LOG("%s", buf);
	json_object_put(o);
	for (int v = 0; v < 3; v++) {
		snprintf(ns, sizeof(ns), "ia-%s-s%d", self->tag, v);
		ASSERT_EQ(0, ledger_cap(ns, &cap));
		EXPECT_EQ(0, cap.head_slots) TH_LOG("%s", ns);
		EXPECT_EQ(topo3_slots[v], cap.tail_slots) TH_LOG("%s: the tail back", ns);
	}
	/* A head larger than s0's and s2's memory: only s1 may hold it. */
	ASSERT_EQ(0, raw(self->sock, big, sizeof(big) - 1, false, buf, sizeof(buf), 20000));
	o = answer_of(buf);
	ASSERT_TRUE(ok_of(o)) TH_LOG("%s", buf);
	for (int v = 0; v < 3; v++) {
		snprintf(ns, sizeof(ns), "ia-%s-s%d", self->tag, v);
		ASSERT_EQ(0, ledger_cap(ns, &cap));
		EXPECT_EQ(v == 1 ? 350 : 0, cap.head_slots) TH_LOG("%s", ns);
		EXPECT_EQ(topo3_slots[v] - cap.head_slots, cap.tail_slots) TH_LOG("%s", ns);
		if (v == 1)
			EXPECT_EQ(350, bpf_head_slots(ns, 1)) TH_LOG("%s: BPF memory", ns);
	}
	json_object_put(o);
}

/* A request's answer, which must be ok (or not); NULL if it is not what was expected. */
static json_object *ask(FIXTURE_DATA(d) *self, const char *req, bool ok)
{
	char buf[16384];
	json_object *o;

	if (raw(self->sock, req, strlen(req), false, buf, sizeof(buf), 20000))
		return NULL;
	o = answer_of(buf);
	if (ok_of(o) != ok) {
		fprintf(stderr, "# %s -> %s\n", req, buf);
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* A worker's window report: the answer (ok or not as asked). */
static json_object *report(FIXTURE_DATA(d) *self, long long worker, int window, bool ok)
{
	char req[128];

	snprintf(req, sizeof(req), "{\"cmd\": \"window\", \"job\": 1, \"worker\": %lld,"
		 " \"window\": %d}\n", worker, window);
	return ask(self, req, ok);
}

static const char *str_at(json_object *o, const char *k1, const char *k2)
{
	json_object *v;

	if (!json_object_object_get_ex(o, k1, &o) || (k2 && !json_object_object_get_ex(o, k2, &o)))
		return "";
	v = o;
	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) :
							  json_object_to_json_string(v);
}

/*
 * Classes through the daemon: a PS job is admitted without a head on the
 * switches of its path (its tails), uses up their job capacity, so an INA
 * job then fails and an automatic one runs PS with no tail.
 */
TEST_F_TIMEOUT(d, classes_ps_ina_auto_in_the_ledgers, 300)
{
	struct ia_ledger_job lj;
	struct ia_ledger_cap cap;
	struct ia_ledger *l;
	char ns[64];
	json_object *o;

	o = ask(self, "{\"cmd\": \"submit\", \"k\": 3, \"class\": \"ps\"}\n", true);
	ASSERT_NE(NULL, o);
	EXPECT_STREQ("ps", str_at(o, "job", "class"));
	EXPECT_STREQ("0", str_at(o, "job", "head"));
	EXPECT_STREQ("[ ]", str_at(o, "job", "blue"));
	EXPECT_STREQ("[ \"s0\", \"s1\", \"s2\" ]", str_at(o, "job", "tails"));
	EXPECT_NE(NULL, strstr(str_at(o, "job", "links"), "\"role\": \"tail\""));
	json_object_put(o);
	for (int v = 0; v < 3; v++) {
		snprintf(ns, sizeof(ns), "ia-%s-s%d", self->tag, v);
		ASSERT_EQ(0, ia_ledger_open(&l, IA_LEDGER_AUTO, ns));
		ASSERT_EQ(0, ia_ledger_job(l, 1, &lj, NULL, 0)) TH_LOG("%s", ns);
		EXPECT_EQ(INAGG_CLASS_PS, lj.class);
		EXPECT_EQ(0, lj.slots);
		ASSERT_EQ(0, ia_ledger_get(l, &cap, NULL, 0));
		EXPECT_EQ(0, cap.head_slots);
		EXPECT_EQ(cap.max_slots, cap.tail_slots);
		ia_ledger_close(l);
	}
	o = ask(self, "{\"cmd\": \"submit\", \"k\": 3, \"class\": \"ina\", \"head\": 64}\n",
		false);
	ASSERT_NE(NULL, o);
	EXPECT_NE(NULL, strstr(str_at(o, "error", NULL), "no switch could admit a head of 64"));
	json_object_put(o);
	o = ask(self, "{\"cmd\": \"submit\", \"k\": 3, \"head\": 64}\n", true);
	ASSERT_NE(NULL, o);
	EXPECT_STREQ("ps", str_at(o, "job", "class"));	/* auto, with no memory left */
	EXPECT_STREQ("[ ]", str_at(o, "job", "tails"));
	EXPECT_STREQ("2", str_at(o, "job", "job"));
	json_object_put(o);
	o = ask(self, "{\"cmd\": \"list\"}\n", true);
	ASSERT_NE(NULL, o);
	EXPECT_NE(NULL, strstr(json_object_to_json_string(o), "\"class\": \"ps\", \"head\": 0"));
	json_object_put(o);
	o = ask(self, "{\"cmd\": \"end\", \"job\": 1}\n", true);
	json_object_put(o);
	/* Job 1's tails gone: an INA job gets its heads. */
	o = ask(self, "{\"cmd\": \"submit\", \"k\": 3, \"class\": \"ina\", \"head\": 64}\n",
		true);
	ASSERT_NE(NULL, o);
	EXPECT_STREQ("ina", str_at(o, "job", "class"));
	EXPECT_STREQ("64", str_at(o, "job", "head"));
	json_object_put(o);
}

/*
 * The window policy is chosen at submit time (docs/cc.md): kept with the job,
 * shown by job show/list (text and -j), and what inagg worker run uses unless
 * --cc says otherwise; bad names are refused with the list of good ones.
 */
TEST_F_TIMEOUT(d, window_policy_chosen_at_submit, 120)
{
	const char *wns, *waddr, *wid, *dns, *daddr, *down;
	char out[128], cmd[3 * PATH_MAX];
	json_object *o, *show, *w;

	snprintf(out, sizeof(out), "%s/cli.out", self->dir);
	EXPECT_NE(0, sh("%s/inagg job submit -k 1 --cc bbr -S %s >%s 2>&1", build, self->sock,
			out));
	EXPECT_EQ(0, sh("grep -q \"invalid value 'bbr': need fixed, atp, a2tp or flexina\" %s", out));
	o = ask(self, "{\"cmd\": \"submit\", \"k\": 1, \"cc\": \"bbr\"}\n", false);
	ASSERT_NE(NULL, o);
	EXPECT_STREQ("cc: fixed, atp, a2tp or flexina, not 'bbr'", str_at(o, "error", NULL));
	json_object_put(o);
	/* One worker of s1, no head anywhere (k = 0): a PS job; its PS sums it alone. */
	ASSERT_EQ(0, sh("%s/inagg job submit -k 0 -W s1=1 --cc atp -S %s >%s", build, self->sock,
			out));
	EXPECT_EQ(0, sh("grep -q '^job 1: active, .*, cc atp, ' %s", out));
	EXPECT_EQ(0, sh("%s/inagg job list -S %s | grep -q '^job 1: .*, cc atp, '", build,
			self->sock));
	EXPECT_EQ(0, sh("%s/inagg -j job show -J 1 -S %s | grep -q '\"cc\": *\"atp\"'", build,
			self->sock));
	o = ask(self, "{\"cmd\": \"submit\", \"k\": 0, \"workers\": {\"s2\": 1}}\n", true);
	ASSERT_NE(NULL, o);
	EXPECT_STREQ("fixed", str_at(o, "job", "cc"));	/* the default */
	json_object_put(o);

	show = ask(self, "{\"cmd\": \"show\", \"job\": 1}\n", true);
	ASSERT_NE(NULL, show);
	ASSERT_TRUE(json_object_object_get_ex(show, "job", &o));
	ASSERT_TRUE(json_object_object_get_ex(o, "workers", &w));
	ASSERT_EQ(1, json_object_array_length(w));
	w = json_object_array_get_idx(w, 0);
	wns = str_at(w, "netns", NULL);
	waddr = str_at(w, "address", NULL);
	wid = str_at(w, "id", NULL);
	dns = str_at(o, "destination", "netns");
	daddr = str_at(o, "destination", "address");
	down = str_at(o, "destination", "down");
	/* The worker without --cc takes the job's policy and class; with them, its own. */
	for (int i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd),
			 "ip netns exec %s %s/inagg ps run -J 1 --nworkers 1 -e 5000 -A %s -D %s "
			 "--linger 300 --ready %s/ready%d >/dev/null & ps=$!; "
			 "for t in $(seq 100); do [ -e %s/ready%d ] && break; sleep 0.05; done; "
			 "ip netns exec %s %s/inagg -j worker run -J 1 -i %s -p %s -A %s -e 5000 "
			 "-S %s %s >%s; rc=$?; wait $ps && exit $rc",
			 dns, build, daddr, down, self->dir, i, self->dir, i, wns, build, wid, daddr,
			 waddr, self->sock, i ? "--cc flexina --class ina" : "", out);
		ASSERT_EQ(0, sh("%s", cmd)) TH_LOG("run %d", i);
		EXPECT_EQ(0, sh("grep -q '\"cc\": \"%s\"' %s", i ? "flexina" : "atp", out));
		EXPECT_EQ(0, sh("grep -q '\"cc_from\": \"%s\"' %s", i ? "option" : "job", out));
		EXPECT_EQ(0, sh("grep -q '\"class\": \"%s\"' %s", i ? "ina" : "ps", out));
		EXPECT_EQ(0, sh("grep -q '\"results\": 20' %s", out));
	}
	json_object_put(show);
}

/* The number at path of o (json_get.h's get()), -1 if none. */
static double num_at(json_object *o, const char *path)
{
	o = get(o, path);
	return o && (json_object_is_type(o, json_type_int) ||
		     json_object_is_type(o, json_type_double)) ? json_object_get_double(o) : -1;
}

/*
 * Memory statistics: one of a job's two workers sends 8 chunks and the other
 * none, so 8 of its head's 16 slots at s1 hold a live aggregation for as
 * long as the worker waits: the sampled occupancy says 8 and the head's
 * utilisation is above 0 and at most 8/16; the switch's figures are the
 * ledger's.
 */
TEST_F_TIMEOUT(d, stats_show_head_occupancy_and_utilisation, 300)
{
	char wns[96], addr[32], cmd[PATH_MAX + 512];
	json_object *o, *w;
	double util;
	pid_t worker;

	o = ask(self, "{\"cmd\": \"submit\", \"k\": 1, \"class\": \"ina\", \"head\": 16,"
		" \"workers\": {\"s1\": 2}}\n", true);
	ASSERT_NE(NULL, o);
	ASSERT_STREQ("[ \"s1\" ]", str_at(o, "job", "blue"));
	ASSERT_TRUE(json_object_object_get_ex(o, "job", &w));
	ASSERT_TRUE(json_object_object_get_ex(w, "destination", &w));
	ASSERT_TRUE(json_object_object_get_ex(w, "address", &w));
	snprintf(addr, sizeof(addr), "%s", json_object_get_string(w));
	ASSERT_TRUE(json_object_object_get_ex(o, "job", &w));
	ASSERT_TRUE(json_object_object_get_ex(w, "workers", &w));
	snprintf(wns, sizeof(wns), "%s", str_at(json_object_array_get_idx(w, 0), "netns", NULL));
	snprintf(cmd, sizeof(cmd), "exec ip netns exec %s %s/inagg worker run -J 1 -i %d -p %s -e 2048"
		 " -w 8 --timeout 2000 --retries 50 >/dev/null 2>&1", wns, build,
		 (int)num_at(json_object_array_get_idx(w, 0), "id"), addr);
	json_object_put(o);
	worker = fork();
	ASSERT_LE(0, worker);
	if (worker == 0) {
		execl("/bin/sh", "sh", "-c", cmd, NULL);
		_exit(127);
	}
	/* Until a sample sees the 8 chunks (or 20 s). */
	for (int i = 0; i < 200; i++) {
		o = ask(self, "{\"cmd\": \"stats\", \"job\": 1}\n", true);
		if (o && num_at(o, "links.1.head_open") == 8) /* links: s0, s1 */
			break;
		json_object_put(o);
		o = NULL;
		usleep(100000);
	}
	usleep(300000);	/* a few more samples, all with 8 open */
	json_object_put(o);
	o = ask(self, "{\"cmd\": \"stats\", \"job\": 1}\n", true);
	kill(worker, SIGKILL);
	waitpid(worker, NULL, 0);
	ASSERT_NE(NULL, o);
	EXPECT_STREQ("s1", str_at(json_object_array_get_idx(
				     json_object_object_get_ex(o, "links", &w) ? w : NULL, 1),
				     "switch", NULL));
	EXPECT_EQ(16, num_at(o, "links.1.head"));
	EXPECT_EQ(8, num_at(o, "links.1.head_open")) TH_LOG("%s", json_object_to_json_string(o));
	util = num_at(o, "links.1.utilisation");
	EXPECT_LT(0, util);
	EXPECT_GE(0.5, util);
	json_object_put(o);
	/* Per switch: the ledger's figures, s1's open head slots, history samples. */
	o = ask(self, "{\"cmd\": \"stats\", \"history\": 5}\n", true);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(IA_SLOTS_DEFAULT, num_at(o, "memory.switches.1.slots"));
	EXPECT_EQ(16, num_at(o, "memory.switches.1.head_slots"));
	EXPECT_EQ(IA_SLOTS_DEFAULT - 16, num_at(o, "memory.switches.1.tail_slots"));
	EXPECT_EQ(8, num_at(o, "memory.switches.1.head_open"));
	EXPECT_LT(0, num_at(o, "memory.switches.1.utilisation"));
	EXPECT_EQ(0, num_at(o, "memory.switches.0.head_slots"));
	EXPECT_EQ(300, num_at(o, "memory.switches.0.tail_slots"));
	/* The last sample (a slow machine may have sampled fewer than asked). */
	ASSERT_TRUE(json_object_object_get_ex(o, "memory", &w));
	ASSERT_TRUE(json_object_object_get_ex(w, "history", &w));
	ASSERT_LE(1, json_object_array_length(w));
	EXPECT_GE(5, json_object_array_length(w));
	w = json_object_array_get_idx(w, json_object_array_length(w) - 1);
	EXPECT_EQ(16, num_at(w, "s1.0"));	/* head */
	EXPECT_EQ(8, num_at(w, "s1.1"));	/* open */
	EXPECT_EQ(IA_SLOTS_DEFAULT - 16, num_at(w, "s1.2"));	/* tail */
	EXPECT_LT(0, num_at(o, "memory.samples"));
	json_object_put(o);
}

/* Polls (up to 20 s) until job id lends want slots at switch v; what it lends then. */
static long long wait_lent(FIXTURE_DATA(d) *self, int v, unsigned int id, long long want)
{
	long long got = -1;

	for (int i = 0; i < 200 && (got = live_ledger_lent(self->tag, v, id)) != want; i++)
		usleep(100000);
	return got;
}

/*
 * Lending follows the window (docs/memory.md): an INA job with a head of
 * 64 and no report (its senders may run the full worker window, 32) lends
 * nothing; reported at window 16 it lends 64 - (16 + 64/8) = 40 slots of
 * its head at its blue switch after a few quiet samples; at window 4, 52;
 * reported back at its full worker window 32 (uncongested, issue 33) it
 * takes all 52 back at once. The ledger, `stats` and `show` agree, and an
 * end releases it all.
 */
TEST_F_TIMEOUT(d, lends_follow_the_window, 300)
{
	json_object *o, *h;
	bool seen = false;

	o = ask(self, "{\"cmd\": \"submit\", \"k\": 1, \"class\": \"ina\", \"head\": 64,"
		" \"workers\": {\"s1\": 2}}\n", true);
	ASSERT_NE(NULL, o);
	ASSERT_STREQ("[ \"s1\" ]", str_at(o, "job", "blue"));
	json_object_put(o);
	usleep(1000000);	/* 10 samples: no report, nothing lent */
	EXPECT_EQ(0, live_ledger_lent(self->tag, 1, 1));
	json_object_put(ask(self, "{\"cmd\": \"window\", \"job\": 1, \"window\": 16}\n", true));
	EXPECT_EQ(40, wait_lent(self, 1, 1, 40));
	EXPECT_EQ(-1, live_ledger_lent(self->tag, 2, 1));	/* not on its path */
	usleep(300000);	/* the sample that lent published too */
	/* Per job link and per switch: the lend, counted; the tail's counters there. */
	o = ask(self, "{\"cmd\": \"stats\", \"job\": 1}\n", true);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(40, num_at(o, "links.1.tail.lent"));
	EXPECT_EQ(1, num_at(o, "links.1.tail.lends"));
	EXPECT_EQ(0, num_at(o, "links.1.tail.reclaims"));
	EXPECT_EQ(0, num_at(o, "links.1.tail.tail_hits"));
	EXPECT_EQ(0, num_at(o, "tail.tail_claims"));
	EXPECT_EQ(1, num_at(o, "memory.switches.1.tail.lends"));
	EXPECT_EQ(40, num_at(o, "memory.switches.1.tail.published_lent"));
	EXPECT_EQ(40, num_at(o, "memory.switches.1.tail.lent_slots_total"));
	EXPECT_EQ(IA_SLOTS_DEFAULT - 64, num_at(o, "memory.switches.1.tail.published_slots"));
	EXPECT_EQ(0, num_at(o, "memory.switches.1.tail_live"));
	EXPECT_EQ(0, num_at(o, "memory.switches.1.tail_stale"));
	json_object_put(o);
	o = ask(self, "{\"cmd\": \"stats\", \"history\": 4096}\n", true);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(40, num_at(o, "memory.switches.1.lent_slots"));
	EXPECT_EQ(0, num_at(o, "memory.switches.0.lent_slots"));
	/* The history's lent column saw it. */
	ASSERT_TRUE(json_object_object_get_ex(o, "memory", &h));
	ASSERT_TRUE(json_object_object_get_ex(h, "history", &h));
	for (size_t i = 0; i < json_object_array_length(h); i++)
		seen |= num_at(json_object_array_get_idx(h, i), "s1.3") == 40;
	EXPECT_TRUE(seen);
	json_object_put(o);
	o = ask(self, "{\"cmd\": \"show\", \"job\": 1}\n", true);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(40, num_at(o, "job.links.1.lent"));	/* links: s0, s1 */
	json_object_put(o);

	/* The senders slow down to 4 chunks in flight (told through the CLI): more is lent. */
	ASSERT_EQ(0, sh("%s/inagg job window -J 1 -w 4 -S %s | grep -q \"job 1: senders' window 4;"
			" lends follow 4 (the largest of it and 0 workers' reports)\"",
			build, self->sock));
	EXPECT_EQ(52, wait_lent(self, 1, 1, 52));
	/* Back to the full 32: not slowed, everything reclaimed on the next sample. */
	o = ask(self, "{\"cmd\": \"window\", \"job\": 1, \"window\": 32}\n", true);
	ASSERT_NE(NULL, o);
	json_object_put(o);
	EXPECT_EQ(0, wait_lent(self, 1, 1, 0));
	usleep(300000);
	o = ask(self, "{\"cmd\": \"stats\"}\n", true);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(2, num_at(o, "memory.switches.1.tail.lends"));
	EXPECT_EQ(1, num_at(o, "memory.switches.1.tail.reclaims"));
	EXPECT_EQ(52, num_at(o, "memory.switches.1.tail.reclaimed_slots_total"));
	json_object_put(o);

	/*
	 * Its two workers report (docs/cc.md "Window reports"), the job's own
	 * window back to none: the largest of their reports counts, 8 (64 - 16
	 * lent); the one at 8 ends its run: 4 (52 lent); the other ends: nothing
	 * in flight, all but the margin (56), and still once the reports of
	 * running workers would have expired (a run's end does not).
	 */
	o = ask(self, "{\"cmd\": \"show\", \"job\": 1}\n", true);
	ASSERT_NE(NULL, o);
	long long w0 = num_at(o, "job.workers.0.id"), w1 = num_at(o, "job.workers.1.id");

	json_object_put(o);
	json_object_put(ask(self, "{\"cmd\": \"window\", \"job\": 1, \"window\": 0}\n", true));
	o = report(self, w0, 4, true);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(4, num_at(o, "senders"));
	json_object_put(o);
	o = report(self, w1, 8, true);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(8, num_at(o, "senders"));
	EXPECT_EQ(2, num_at(o, "reports"));
	json_object_put(o);
	EXPECT_EQ(48, wait_lent(self, 1, 1, 48));
	o = report(self, w1, 0, true);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(4, num_at(o, "senders"));
	EXPECT_EQ(2, num_at(o, "reports"));	/* its 0 is a report */
	json_object_put(o);
	EXPECT_EQ(52, wait_lent(self, 1, 1, 52));
	/* A worker that is not the job's: refused. */
	o = report(self, 999, 8, false);
	ASSERT_NE(NULL, o);
	EXPECT_NE(NULL, strstr(str_at(o, "error", NULL), "worker 999 is not one of job 1's"));
	json_object_put(o);
	json_object_put(report(self, w0, 0, true));
	EXPECT_EQ(56, wait_lent(self, 1, 1, 56));
	usleep((IA_LEND_REPORT_TTL_MS + 500) * 1000);
	EXPECT_EQ(56, live_ledger_lent(self->tag, 1, 1));

	/* Above the worker window, and for a job with no head: refused. */
	o = ask(self, "{\"cmd\": \"window\", \"job\": 1, \"window\": 33}\n", false);
	ASSERT_NE(NULL, o);
	EXPECT_NE(NULL, strstr(str_at(o, "error", NULL), "above the job's worker window (32)"));
	json_object_put(o);
	o = ask(self, "{\"cmd\": \"end\", \"job\": 1}\n", true);
	json_object_put(o);
	EXPECT_EQ(-1, live_ledger_lent(self->tag, 1, 1));
	o = ask(self, "{\"cmd\": \"submit\", \"k\": 3, \"class\": \"ps\"}\n", true);
	json_object_put(o);
	o = ask(self, "{\"cmd\": \"window\", \"job\": 1, \"window\": 1}\n", false);
	ASSERT_NE(NULL, o);
	EXPECT_NE(NULL, strstr(str_at(o, "error", NULL), "only an INA job"));
	json_object_put(o);
}

/* Switch sN's published tail; job's published lend in *lent (if lent). */
static int tail_info(FIXTURE_DATA(d) *self, int v, struct ia_xdp_tail_info *ti,
		     unsigned int job, __u32 *lent)
{
	struct ia_xdp *x = NULL;
	char ns[64];
	int h, ret;

	snprintf(ns, sizeof(ns), "ia-%s-s%d", self->tag, v);
	h = ia_netns_enter(ns);
	if (h < 0)
		return h;
	ret = ia_xdp_open_existing(ns, &x, NULL, 0);
	if (!ret)
		ret = ia_xdp_tail_info(x, ti);
	if (!ret && lent)
		ret = ia_xdp_tail_lent(x, job, lent);
	ia_xdp_close(x);
	ia_netns_return(h);
	return ret;
}

/* Job id's configuration at switch sN. */
static int pinned_cfg(FIXTURE_DATA(d) *self, int v, unsigned int id, struct ia_job_cfg *cfg)
{
	struct ia_pinned_job *jobs;
	char ns[64];
	size_t n;
	int ret = -ENOENT;

	snprintf(ns, sizeof(ns), "ia-%s-s%d", self->tag, v);
	if (ia_pinned_jobs(ns, &jobs, &n))
		return -EIO;
	for (size_t i = 0; i < n; i++)
		if (jobs[i].id == id) {
			*cfg = jobs[i].cfg;
			ret = 0;
		}
	free(jobs);
	return ret;
}

/*
 * A PS job is a tail job on every switch of its path (docs/memory.md,
 * "Loader API for the tail"), whose tail programs its submission loads
 * (a start loads none): each switch's set is the ranks below it (s1's
 * workers ranks 0-1, s2's 2-3), its PS gets every worker and tail switch
 * with their sets; every switch's tail is published with every slot no head
 * holds, shrinks by an INA head, and carries the head's lends as the ledger
 * does.
 */
TEST_F_TIMEOUT(d, ps_jobs_tails_and_directories_published, 300)
{
	static const unsigned long long full[] = { 0xf, 0x3, 0xc };
	struct ia_xdp_tail_info ti;
	struct ia_job_cfg cfg;
	json_object *o, *w;
	__u32 lent;

	for (int v = 0; v < 3; v++) {
		ASSERT_EQ(0, tail_info(self, v, &ti, 0, NULL)) TH_LOG("s%d", v);
		EXPECT_EQ(topo3_slots[v], ti.slots) TH_LOG("s%d: published at start", v);
		EXPECT_EQ(0, ti.nlend);
		/* No PS job yet: nothing verified the tail's programs (a start did, per switch). */
		EXPECT_EQ(0, ti.loaded) TH_LOG("s%d: tail programs loaded at start", v);
	}
	o = ask(self, "{\"cmd\": \"submit\", \"k\": 3, \"class\": \"ps\"}\n", true);
	ASSERT_NE(NULL, o);
	for (int v = 0; v < 3; v++) {
		ASSERT_EQ(0, tail_info(self, v, &ti, 0, NULL)) TH_LOG("s%d", v);
		EXPECT_EQ(1, ti.loaded) TH_LOG("s%d: a tail job's switch without tail programs", v);
		ASSERT_EQ(0, pinned_cfg(self, v, 1, &cfg)) TH_LOG("s%d", v);
		EXPECT_EQ(IA_ROLE_TAIL, cfg.role) TH_LOG("s%d", v);
		EXPECT_EQ(full[v], cfg.full) TH_LOG("s%d", v);
		EXPECT_EQ(__builtin_popcountll(full[v]), cfg.nworkers) TH_LOG("s%d", v);
	}
	/* The PS's members: 4 workers, 3 tail switches; s0's set is all four. */
	ASSERT_TRUE(json_object_object_get_ex(o, "job", &w));
	ASSERT_TRUE(json_object_object_get_ex(w, "destination", &w));
	ASSERT_TRUE(json_object_object_get_ex(w, "members", &w));
	ASSERT_EQ(7, json_object_array_length(w));
	for (size_t i = 0; i < 7; i++) {
		json_object *m = json_object_array_get_idx(w, i);

		if (num_at(m, "id") == (double)ia_switch_id(0))
			EXPECT_EQ(15, num_at(m, "set"));
		EXPECT_EQ(__builtin_popcountll((unsigned long long)num_at(m, "set")),
			  num_at(m, "nworkers"));
	}
	EXPECT_EQ(3, num_at(o, "job.workers.3.rank"));
	json_object_put(o);
	json_object_put(ask(self, "{\"cmd\": \"end\", \"job\": 1}\n", true));
	EXPECT_EQ(-ENOENT, pinned_cfg(self, 1, 1, &cfg));

	/* An INA head of 64 on s1 (job 1 again): its tail 64 smaller, its lend published. */
	o = ask(self, "{\"cmd\": \"submit\", \"k\": 1, \"class\": \"ina\", \"head\": 64,"
		" \"workers\": {\"s1\": 2}}\n", true);
	ASSERT_NE(NULL, o);
	json_object_put(o);
	ASSERT_EQ(0, tail_info(self, 1, &ti, 1, NULL));
	EXPECT_EQ(IA_SLOTS_DEFAULT - 64, ti.slots);
	/* Lent once its senders say they slowed (16 in flight): 64 - (16 + 8). */
	json_object_put(ask(self, "{\"cmd\": \"window\", \"job\": 1, \"window\": 16}\n", true));
	EXPECT_EQ(40, wait_lent(self, 1, 1, 40));
	usleep(300000);	/* the sample that lent published too */
	ASSERT_EQ(0, tail_info(self, 1, &ti, 1, &lent));
	EXPECT_EQ(40, lent);
	EXPECT_EQ(40, ti.lent);
	EXPECT_EQ(1, ti.nlend);
	EXPECT_LE(40, ti.lends);
	json_object_put(ask(self, "{\"cmd\": \"end\", \"job\": 1}\n", true));
	ASSERT_EQ(0, tail_info(self, 1, &ti, 1, &lent));
	EXPECT_EQ(IA_SLOTS_DEFAULT, ti.slots);
	EXPECT_EQ(0, ti.lent);
	EXPECT_EQ(0, lent);
}

/* Another user holding a ledger's lock cannot freeze submissions. */
TEST_F_TIMEOUT(d, unprivileged_lock_holder_cannot_freeze, 300)
{
	static const char submit[] = "{\"cmd\": \"submit\", \"k\": 1}\n";
	char buf[4096];
	json_object *o;

	ASSERT_EQ(0, sh("setpriv --reuid=nobody --regid=nogroup --clear-groups true"));
	/* The attack of the issue, as nobody, on every lock file: it cannot even open them. */
	ASSERT_EQ(0, chmod(self->dir, 0755));	/* even with the folder open */
	EXPECT_NE(0, sh("for f in %s/ledger-*.lock; do setpriv --reuid=nobody --regid=nogroup "
			"--clear-groups flock -x -n -o \"$f\" true 2>/dev/null && exit 0; done; "
			"exit 1", self->dir));
	EXPECT_EQ(0, sh("ls %s/ledger-*.lock >/dev/null", self->dir));
	ASSERT_EQ(0, raw(self->sock, submit, sizeof(submit) - 1, false, buf, sizeof(buf), 20000));
	o = answer_of(buf);
	EXPECT_TRUE(ok_of(o)) TH_LOG("%s", buf);
	json_object_put(o);
}

/* A privileged holder that never lets go: the submission fails with a reason, it does not hang. */
TEST_F_TIMEOUT(d, held_lock_bounded_wait, 300)
{
	static const char submit[] = "{\"cmd\": \"submit\", \"k\": 3}\n";
	char buf[4096], pattern[128];
	json_object *o, *refused;
	int pipefd[2];
	glob_t g;
	pid_t holder;

	snprintf(pattern, sizeof(pattern), "%s/ledger-*.lock", self->dir);
	ASSERT_EQ(0, glob(pattern, 0, NULL, &g));
	ASSERT_EQ(0, pipe(pipefd));
	holder = fork();
	ASSERT_LE(0, holder);
	if (holder == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			int fd = open(g.gl_pathv[i], O_RDONLY);

			if (fd < 0 || flock(fd, LOCK_EX))
				_exit(1);
		}
		write(pipefd[1], "x", 1);
		pause();	/* holds them until killed */
		_exit(0);
	}
	globfree(&g);
	ASSERT_EQ(1, read(pipefd[0], buf, 1));
	ASSERT_EQ(0, raw(self->sock, submit, sizeof(submit) - 1, false, buf, sizeof(buf), 60000));
	kill(holder, SIGKILL);
	waitpid(holder, NULL, 0);
	o = answer_of(buf);
	ASSERT_NE(NULL, o) TH_LOG("no answer: '%s'", buf);
	/* Every blue switch refused with the ledger's reason; the job runs all red. */
	EXPECT_TRUE(ok_of(o)) TH_LOG("%s", buf);
	EXPECT_TRUE(json_object_object_get_ex(o, "refused", &refused));
	EXPECT_LT(0, (int)json_object_array_length(refused));
	EXPECT_NE(NULL, strstr(buf, "ledger busy")) TH_LOG("%s", buf);
	json_object_put(o);
	EXPECT_TRUE(answers(self, 1000));
}

LIVE_TEST_MAIN
