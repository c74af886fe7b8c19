// SPDX-License-Identifier: GPL-2.0
/* The switch agent: its record's life, its table of requests and its loop (agent.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "err.h"
#include "files.h"
#include "ledger.h"
#include "netns.h"
#include "xdp.h"


/* ---- the record ---- */

/* $INAGG_AGENT_BOOT_ID stands for the machine's in tests (a router that "rebooted"). */
static void read_boot_id(char *buf, size_t len)
{
	const char *fake = getenv("INAGG_AGENT_BOOT_ID");

	if (fake && *fake) {
		snprintf(buf, len, "%s", fake);
		return;
	}
	if (ia_read_boot_id(buf, len))
		buf[0] = '\0';
}

/* A record from another boot: its jobs died with the machine's ledger and maps. */
static void load_record(struct ia_agent *a, json_object *root)
{
	json_object *v, *jobs;

	if (json_object_object_get_ex(root, "epoch", &v))
		a->epoch = json_object_get_int64(v);
	if (!json_object_object_get_ex(root, "jobs", &jobs) ||
	    !json_object_is_type(jobs, json_type_object))
		return;
	if (json_object_object_get_ex(root, "boot_id", &v) &&
	    !strcmp(json_object_get_string(v), a->boot_id)) {
		json_object_put(a->jobs);
		a->jobs = json_object_get(jobs);
		return;
	}
	json_object_object_foreach(jobs, key, val) {
		(void)val;
		json_object_array_add(a->lost, json_object_new_int64(strtoll(key, NULL, 10)));
	}
}

/*
 * A namespace switch "boots" with its namespace: "inagg net down" and "net
 * up" give it new ports, maps and (the kernel's) ledger, as a reboot gives a
 * router. Its boot id names the namespace too (its cookie, never reused),
 * and the namespace's inode tells when its name points elsewhere.
 */
static int ns_identity(struct ia_agent *a)
{
	uint64_t cookie = 0;
	socklen_t len = sizeof(cookie);
	size_t n = strlen(a->boot_id);
	struct stat st;
	int fd;

	if (stat("/proc/self/ns/net", &st))
		return -errno;
	a->ns_dev = st.st_dev;
	a->ns_ino = st.st_ino;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len))
		cookie = 0;
	if (fd >= 0)
		close(fd);
	/* Kernels before 5.14 have no cookie: the inode, which a later namespace may reuse. */
	snprintf(a->boot_id + n, sizeof(a->boot_id) - n, "/ns%llu",
		 (unsigned long long)(cookie ? cookie : st.st_ino));
	return 0;
}

/* The agent's namespace is still the one its name gives. */
static bool ns_current(struct ia_agent *a)
{
	char path[PATH_MAX];
	struct stat st;

	if (!*a->netns || a->ns_gone)
		return !a->ns_gone;
	snprintf(path, sizeof(path), IA_NETNS_DIR "/%s", a->netns);
	if (stat(path, &st) || st.st_dev != a->ns_dev || st.st_ino != a->ns_ino)
		a->ns_gone = true;
	return !a->ns_gone;
}

int ia_agent_open(struct ia_agent *a, const char *sw, const char *netns, const char *state,
		  char *err, size_t errlen)
{
	json_object *root;
	int ret;

	memset(a, 0, sizeof(*a));
	if (!sw || !*sw || strlen(sw) >= sizeof(a->sw))
		return ia_fail(err, errlen, -EINVAL, "switch: a name of 1 to %zu characters",
			       sizeof(a->sw) - 1);
	snprintf(a->sw, sizeof(a->sw), "%s", sw);
	snprintf(a->netns, sizeof(a->netns), "%s", netns ? netns : "");
	snprintf(a->state_path, sizeof(a->state_path), "%s", state ? state : "");
	read_boot_id(a->boot_id, sizeof(a->boot_id));
	a->jobs = json_object_new_object();
	a->lost = json_object_new_array();
	if (*a->netns) {
		/* For good: the agent's one job is this switch. */
		ret = ia_netns_enter(a->netns);
		if (ret < 0)
			return ia_fail(err, errlen, ret, "namespace %s: %s", a->netns,
				       strerror(-ret));
		close(ret);
		ret = ns_identity(a);
		if (ret)
			return ia_fail(err, errlen, ret, "namespace %s: %s", a->netns,
				       strerror(-ret));
	}
	if (*a->state_path && !access(a->state_path, F_OK)) {
		root = json_object_from_file(a->state_path);
		if (!root)
			return ia_fail(err, errlen, -EBADMSG, "record %s: %s", a->state_path,
				       json_util_get_last_err());
		load_record(a, root);
		json_object_put(root);
	}
	a->epoch++;
	ret = ia_agent_save(a);
	if (ret)
		return ia_fail(err, errlen, ret, "record %s: %s", a->state_path, strerror(-ret));
	return 0;
}

void ia_agent_close(struct ia_agent *a)
{
	json_object_put(a->jobs);
	json_object_put(a->lost);
	ia_xdp_close(a->xdp);
	a->jobs = a->lost = NULL;
	a->xdp = NULL;
}

static json_object *held_ids(struct ia_agent *a)
{
	json_object *ids = json_object_new_array();

	json_object_object_foreach(a->jobs, key, val) {
		(void)val;
		json_object_array_add(ids, json_object_new_int64(strtoll(key, NULL, 10)));
	}
	return ids;
}

static json_object *op_hello(struct ia_agent *a, json_object *req)
{
	json_object *r = ia_agent_ok();
	struct ia_ledger *l;

	json_object_object_add(r, "proto", json_object_new_int(IA_AGENT_PROTO));
	json_object_object_add(r, "switch", json_object_new_string(a->sw));
	json_object_object_add(r, "boot_id", json_object_new_string(a->boot_id));
	json_object_object_add(r, "epoch", json_object_new_int64(a->epoch));
	if (!ia_agent_ledger_open(a, &l)) {
		json_object_object_add(r, "backend", json_object_new_string(
					  ia_ledger_backend_name(ia_ledger_backend(l))));
		ia_ledger_close(l);
	}
	json_object_object_add(r, "jobs", held_ids(a));
	json_object_object_add(r, "lost", json_object_get(a->lost));
	return r;
}

static json_object *op_state(struct ia_agent *a, json_object *req)
{
	json_object *r = op_hello(a, req);

	json_object_object_add(r, "record", json_object_get(a->jobs));
	return r;
}

static const struct {
	const char *name;
	json_object *(*fn)(struct ia_agent *a, json_object *req);
} ops[] = {
	{ "hello", op_hello },		{ "state", op_state },
	{ "setup", ia_agent_setup },		{ "admit", ia_agent_admit },
	{ "release", ia_agent_release },	{ "admitted", ia_agent_admitted },
	{ "room", ia_agent_room },		{ "ports", ia_agent_ports },
	{ "push", ia_agent_push },	{ "unpush", ia_agent_unpush },
	{ "pushed", ia_agent_pushed },	{ "counters", ia_agent_counters },
	{ "layout", ia_agent_layout },	{ "lend", ia_agent_lend },
	{ "reclaim", ia_agent_reclaim },	{ "tail", ia_agent_tail },
	{ "memory", ia_agent_memory },
};

json_object *ia_agent_handle(struct ia_agent *a, json_object *req)
{
	json_object *op, *seq, *r = NULL;
	const char *name;

	if (!json_object_is_type(req, json_type_object) ||
	    !json_object_object_get_ex(req, "op", &op) ||
	    !json_object_is_type(op, json_type_string))
		return ia_agent_err(EINVAL, "a request is an object with \"op\"");
	name = json_object_get_string(op);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]) && !r; i++)
		if (!strcmp(name, ops[i].name))
			r = ops[i].fn(a, req);
	if (!r)
		r = ia_agent_err(EOPNOTSUPP, "unknown op \"%s\"", name);
	if (json_object_object_get_ex(req, "seq", &seq))
		json_object_object_add(r, "seq", json_object_get(seq));
	return r;
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -errno;
		s += w;
		n -= w;
	}
	return 0;
}

static int answer(struct ia_agent *a, int out, const char *line)
{
	json_object *req, *r;
	const char *s;
	int ret;

	/* Another switch by that name now, or none: not served by this agent. */
	if (!ns_current(a))
		return -ESTALE;
	req = json_tokener_parse(line);

	r = req ? ia_agent_handle(a, req) : ia_agent_err(EINVAL, "not JSON");
	s = json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN);
	ret = write_all(out, s, strlen(s));
	if (!ret)
		ret = write_all(out, "\n", 1);
	json_object_put(r);
	json_object_put(req);
	return ret;
}

int ia_agent_serve(struct ia_agent *a, int in, int out)
{
	static const char too_long[] =
		"{\"ok\":false,\"errno\":7,\"error\":\"request too long\"}\n";
	char *buf = malloc(IA_AGENT_LINE_MAX + 1);
	size_t len = 0;
	bool skip = false;	/* inside a line too long: answered, dropped */
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(in, buf + len, IA_AGENT_LINE_MAX - len);
		char *nl, *p = buf;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : 0;
			break;
		}
		len += n;
		while ((nl = memchr(p, '\n', buf + len - p))) {
			*nl = '\0';
			if (!skip && p != nl)
				ret = answer(a, out, p);
			skip = false;
			p = nl + 1;
			if (ret)
				goto out;
		}
		len -= p - buf;
		memmove(buf, p, len);
		if (len == IA_AGENT_LINE_MAX) {
			if (!skip)
				ret = write_all(out, too_long, strlen(too_long));
			skip = true;
			len = 0;
			if (ret)
				break;
		}
	}
out:
	free(buf);
	return ret;
}
