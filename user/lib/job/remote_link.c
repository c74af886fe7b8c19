// SPDX-License-Identifier: GPL-2.0
/* One agent's session: a child process, a JSON line each way, bounded calls (remote.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_proto.h"
#include "clock.h"
#include "remote_int.h"

/* What the caller runs while a call waits (ia_link_set_wait_hook()); never re-entered. */
#define WAIT_SLICE_MS	20
static void (*wait_hook)(void *arg);
static void *wait_arg;
static bool in_hook;

void ia_link_set_wait_hook(void (*fn)(void *arg), void *arg)
{
	wait_hook = fn;
	wait_arg = arg;
}

/* poll() for up to left ms, in slices with the wait hook run between them. */
static int wait_poll(struct pollfd *p, int n, long long left)
{
	long long end = ia_now_ms() + (left > 0 ? left : 0);

	for (;;) {
		bool hook = wait_hook && !in_hook;
		int r = poll(p, n, hook && left > WAIT_SLICE_MS ? WAIT_SLICE_MS : left);

		if (r != 0)
			return r;
		left = end - ia_now_ms();
		if (left <= 0)
			return 0;
		if (hook) {
			in_hook = true;
			wait_hook(wait_arg);
			in_hook = false;
		}
	}
}

int ia_link_init(struct ia_link *l, const char *name, const char *where, char *const argv[],
		 int timeout_ms, int retries)
{
	int n = 0;

	memset(l, 0, sizeof(*l));
	l->fd = l->errfd = -1;
	snprintf(l->name, sizeof(l->name), "%s", name);
	snprintf(l->where, sizeof(l->where), "%s", where);
	l->timeout_ms = timeout_ms > 0 ? timeout_ms : 1;
	l->holdoff_ms = IA_LINK_HOLDOFF_MS;
	l->retries = retries > 0 ? retries : 0;
	while (argv[n])
		n++;
	l->argv = calloc(n + 1, sizeof(*l->argv));
	l->buf = malloc(IA_AGENT_LINE_MAX + 1);
	if (!l->argv || !l->buf)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		if (!(l->argv[i] = strdup(argv[i])))
			return -ENOMEM;
	return 0;
}

/* Keeps the last line the child wrote on stderr (ssh says there why it failed). */
static void drain_stderr(struct ia_link *l)
{
	char chunk[512];
	ssize_t n;

	while (l->errfd >= 0 && (n = read(l->errfd, chunk, sizeof(chunk) - 1)) > 0) {
		char *end, *start;

		chunk[n] = '\0';
		end = chunk + n;
		while (end > chunk && (end[-1] == '\n' || end[-1] == '\r'))
			*--end = '\0';
		if (end == chunk)
			continue;
		start = strrchr(chunk, '\n');
		start = start ? start + 1 : chunk;
		snprintf(l->stderr_tail, sizeof(l->stderr_tail), "%.159s", start);
	}
}

void ia_link_hangup(struct ia_link *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	if (l->pid > 0) {
		/* The agent ends at the end of its input; give it a moment, then make sure. */
		for (int i = 0; i < 20 && waitpid(l->pid, NULL, WNOHANG) == 0; i++)
			usleep(5000);
		if (waitpid(l->pid, NULL, WNOHANG) == 0) {
			kill(l->pid, SIGKILL);
			waitpid(l->pid, NULL, 0);
		}
	}
	l->pid = 0;
	drain_stderr(l);
	if (l->errfd >= 0)
		close(l->errfd);
	l->errfd = -1;
	l->len = 0;
}

/* Ends a session that failed: no waiting for a child that may hang. */
static void kill_session(struct ia_link *l)
{
	if (l->pid > 0)
		kill(l->pid, SIGKILL);
	ia_link_hangup(l);
}

void ia_link_free(struct ia_link *l)
{
	ia_link_hangup(l);
	for (int i = 0; l->argv && l->argv[i]; i++)
		free(l->argv[i]);
	free(l->argv);
	free(l->buf);
	json_object_put(l->lost);
	json_object_put(l->held);
	l->held = NULL;
	l->argv = NULL;
	l->buf = NULL;
	l->lost = NULL;
}

static int spawn(struct ia_link *l)
{
	int sv[2], ep[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	if (pipe2(ep, O_CLOEXEC)) {
		close(sv[0]);
		close(sv[1]);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int ret = -errno;

		close(sv[0]);
		close(sv[1]);
		close(ep[0]);
		close(ep[1]);
		return ret;
	}
	if (pid == 0) {
		/* Its own session: no terminal, no signals meant for the controller's group. */
		sigset_t none;

		setsid();
		/* Not the controller's blocked or ignored signals: SIGTERM must end it. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (dup2(sv[1], 0) < 0 || dup2(sv[1], 1) < 0 || dup2(ep[1], 2) < 0)
			_exit(126);
		/* The agent (or ssh) gets its session and nothing else the controller holds. */
		close_range(3, ~0U, 0);
		execvp(l->argv[0], l->argv);
		dprintf(2, "%s: %s\n", l->argv[0], strerror(errno));
		_exit(127);
	}
	close(sv[1]);
	close(ep[1]);
	fcntl(ep[0], F_SETFL, O_NONBLOCK);
	l->fd = sv[0];
	l->errfd = ep[0];
	l->pid = pid;
	l->len = 0;
	l->stderr_tail[0] = '\0';
	l->sessions++;
	return 0;
}

static int send_line(struct ia_link *l, const char *s, long long deadline)
{
	size_t n = strlen(s), off = 0;

	while (off < n) {
		struct pollfd p = { .fd = l->fd, .events = POLLOUT };
		long long left = deadline - ia_now_ms();
		ssize_t w;

		if (left <= 0)
			return -ETIMEDOUT;
		if (wait_poll(&p, 1, left) <= 0)
			continue;
		w = send(l->fd, s + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (w < 0)
			return -ECONNRESET;
		off += w;
	}
	return 0;
}

/* The next reply line, parsed; waits until deadline. */
static int read_reply(struct ia_link *l, json_object **out, long long deadline)
{
	bool looked = false;

	for (;;) {
		struct pollfd p[2] = { { .fd = l->fd, .events = POLLIN },
				       { .fd = l->errfd, .events = POLLIN } };
		char *nl = memchr(l->buf, '\n', l->len);
		long long left;
		ssize_t n;

		if (nl) {
			*nl = '\0';
			*out = json_tokener_parse(l->buf);
			l->len -= nl + 1 - l->buf;
			memmove(l->buf, nl + 1, l->len);
			return *out ? 0 : -EPROTO;
		}
		if (l->len == IA_AGENT_LINE_MAX)
			return -EPROTO;
		left = deadline - ia_now_ms();
		/* A deadline already past still gets one look at what has come. */
		if (left <= 0 && looked)
			return -ETIMEDOUT;
		looked = true;
		if (wait_poll(p, 2, left > 0 ? left : 0) < 0 && errno != EINTR)
			return -errno;
		if (p[1].revents)
			drain_stderr(l);
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(l->fd, l->buf + l->len, IA_AGENT_LINE_MAX - l->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -ECONNRESET;
		l->len += n;
	}
}

/* One request and its reply on the open session (stale replies skipped). */
static int exchange(struct ia_link *l, json_object *req, json_object **reply, long long deadline)
{
	uint64_t seq = ++l->seq;
	json_object *r = NULL, *s;
	char *line;
	int ret;

	json_object_object_add(req, "seq", json_object_new_int64(seq));
	if (asprintf(&line, "%s\n",
		     json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN)) < 0)
		return -ENOMEM;
	ret = send_line(l, line, deadline);
	free(line);
	while (!ret) {
		ret = read_reply(l, &r, deadline);
		if (ret)
			break;
		if (json_object_object_get_ex(r, "seq", &s) &&
		    (uint64_t)json_object_get_int64(s) == seq) {
			*reply = r;
			return 0;
		}
		json_object_put(r);
	}
	return ret;
}

static json_object *hello_req(void)
{
	json_object *req = json_object_new_object();

	json_object_object_add(req, "op", json_object_new_string("hello"));
	return req;
}

/* What a new session's hello says: the router's boot id and the agent's epoch. */
static int hello_done(struct ia_link *l, json_object *r)
{
	const char *boot;
	json_object *v;

	if (!json_object_object_get_ex(r, "proto", &v) ||
	    json_object_get_int(v) != IA_AGENT_PROTO) {
		snprintf(l->stderr_tail, sizeof(l->stderr_tail), "agent speaks protocol %s, not %d",
			 v ? json_object_get_string(v) : "?", IA_AGENT_PROTO);
		return -EPROTO;
	}
	json_object_put(l->held);
	l->held = json_object_object_get_ex(r, "jobs", &v) ? json_object_get(v) : NULL;
	boot = json_object_object_get_ex(r, "boot_id", &v) ? json_object_get_string(v) : "";
	if (l->known && strcmp(boot, l->boot_id)) {
		l->reboots++;
		json_object_put(l->lost);
		l->lost = json_object_object_get_ex(r, "lost", &v) ? json_object_get(v) : NULL;
	}
	snprintf(l->boot_id, sizeof(l->boot_id), "%s", boot);
	l->epoch = json_object_object_get_ex(r, "epoch", &v) ? json_object_get_int64(v) : 0;
	l->known = true;
	return 0;
}

/* A new session and its hello. */
static int start(struct ia_link *l, long long deadline)
{
	json_object *req = hello_req(), *r = NULL;
	int ret;

	ret = spawn(l);
	if (!ret)
		ret = exchange(l, req, &r, deadline);
	if (!ret)
		ret = hello_done(l, r);
	json_object_put(req);
	json_object_put(r);
	if (ret)
		kill_session(l);
	else if (l->on_session)
		l->on_session(l, l->arg);
	return ret;
}

static int failure(struct ia_link *l, int ret, int tries, char *why, size_t whylen)
{
	const char *what = ret == -ETIMEDOUT ? "no answer within" : "unreachable";

	l->health = IA_LINK_DOWN;
	l->down_until = ia_now_ms() + l->holdoff_ms;
	if (ret == -ETIMEDOUT)
		snprintf(l->why, sizeof(l->why), "%s %d ms (%d tries)", what, l->timeout_ms, tries);
	else
		snprintf(l->why, sizeof(l->why), "%s after %d tries%s%s", what, tries,
			 *l->stderr_tail ? ": " : "", l->stderr_tail);
	return ia_fail(why, whylen, ret, "router %s (%s): %s", l->name, l->where, l->why);
}

static int call_tries(struct ia_link *l, json_object *req, json_object **reply, char *why,
		      size_t whylen)
{
	int ret = -EINVAL, tries = 0;

	/* A link that failed: tried again in the background (ia_link_tick()), never in a call. */
	if (l->health == IA_LINK_DOWN && l->async)
		return ia_fail(why, whylen, -EHOSTUNREACH,
			       "router %s (%s): %s (tried again every %d ms in the background)",
			       l->name, l->where, l->why, l->holdoff_ms);
	if (l->health == IA_LINK_DOWN && ia_now_ms() < l->down_until)
		return ia_fail(why, whylen, -EHOSTUNREACH, "router %s (%s): %s (held off for %d s)",
			       l->name, l->where, l->why, l->holdoff_ms / 1000);
	for (int attempt = 0; attempt <= l->retries; attempt++) {
		long long t0, deadline;

		if (attempt)
			wait_poll(NULL, 0, 100 << (attempt - 1 < 3 ? attempt - 1 : 3));
		tries++;
		t0 = ia_now_ms();
		deadline = t0 + l->timeout_ms;
		if (l->fd < 0) {
			ret = start(l, deadline);
			if (ret) {
				l->tries_failed++;
				continue;
			}
		}
		ret = exchange(l, req, reply, deadline);
		if (!ret) {
			l->health = attempt ? IA_LINK_SLOW : IA_LINK_OK;
			if (attempt)
				snprintf(l->why, sizeof(l->why), "answered on try %d of %d",
					 attempt + 1, l->retries + 1);
			else
				l->why[0] = '\0';
			l->last_ms = ia_now_ms() - t0;
			l->last_ok = time(NULL);
			return 0;
		}
		l->tries_failed++;
		kill_session(l);
	}
	return failure(l, ret, tries, why, whylen);
}

bool ia_link_busy(const struct ia_link *l)
{
	return l->busy > 0;
}

int ia_link_call(struct ia_link *l, json_object *req, json_object **reply, char *why,
		 size_t whylen)
{
	int ret;

	*reply = NULL;
	/*
	 * Another request's call waits on this session: a second one would
	 * read its reply. The same request's own calls (a new session's
	 * reconciliation) are of its depth and go on.
	 */
	if (l->busy && in_hook && !l->busy_hook)
		return ia_fail(why, whylen, -EBUSY,
			       "router %s (%s): busy: another request's call waits for it", l->name,
			       l->where);
	if (!l->busy++) {
		l->busy_hook = in_hook;
		l->busy_since = ia_now_ms();
	}
	ret = call_tries(l, req, reply, why, whylen);
	l->busy--;
	return ret;
}

int ia_link_do(struct ia_link *l, json_object *req, json_object **reply, char *why,
	       size_t whylen)
{
	json_object *r, *v;
	int ret = ia_link_call(l, req, &r, why, whylen), err;

	if (ret)
		return ret;
	if (json_object_object_get_ex(r, "ok", &v) && json_object_get_boolean(v)) {
		if (reply)
			*reply = r;
		else
			json_object_put(r);
		return 0;
	}
	err = json_object_object_get_ex(r, "errno", &v) ? json_object_get_int(v) : EPROTO;
	if (err <= 0)
		err = EPROTO;
	ia_fail(why, whylen, -err, "%s", json_object_object_get_ex(r, "error", &v) ?
						 json_object_get_string(v) : strerror(err));
	json_object_put(r);
	return -err;
}

/* A probe that failed: the session gone, the next one after the hold-off. */
static void probe_failed(struct ia_link *l, int ret)
{
	l->probing = false;
	l->tries_failed++;
	kill_session(l);
	failure(l, ret, 1, NULL, 0);
}

long long ia_link_mark_down(struct ia_link *l, const char *why)
{
	kill_session(l);
	l->probing = false;
	l->health = IA_LINK_DOWN;
	l->down_until = ia_now_ms() + l->holdoff_ms;
	snprintf(l->why, sizeof(l->why), "%s", why);
	return l->holdoff_ms;
}

long long ia_link_tick(struct ia_link *l)
{
	long long now = ia_now_ms();
	json_object *r = NULL, *s;
	int ret;

	if (!l->async || l->health != IA_LINK_DOWN)
		return -1;
	if (!l->probing) {
		json_object *req;
		char *line;

		if (now < l->down_until)
			return l->down_until - now;
		/* A new session and its hello sent, its answer not waited for. */
		ret = spawn(l);
		if (ret) {
			probe_failed(l, ret);
			return l->holdoff_ms;
		}
		req = hello_req();
		l->probe_seq = ++l->seq;
		json_object_object_add(req, "seq", json_object_new_int64(l->probe_seq));
		ret = asprintf(&line, "%s\n",
			       json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN));
		json_object_put(req);
		if (ret < 0) {
			probe_failed(l, -ENOMEM);
			return l->holdoff_ms;
		}
		l->probe_deadline = now + l->timeout_ms;
		ret = send_line(l, line, l->probe_deadline);
		free(line);
		if (ret) {
			probe_failed(l, ret);
			return l->holdoff_ms;
		}
		l->probing = true;
		l->sessions_probed++;
		return IA_LINK_PROBE_MS;
	}
	/* What has come so far, without waiting. */
	for (;;) {
		ret = read_reply(l, &r, now);
		if (ret)
			break;
		if (json_object_object_get_ex(r, "seq", &s) &&
		    (uint64_t)json_object_get_int64(s) == l->probe_seq)
			break;
		json_object_put(r);
		r = NULL;
	}
	if (ret == -ETIMEDOUT && now < l->probe_deadline) {
		long long left = l->probe_deadline - now;

		return left < IA_LINK_PROBE_MS ? left : IA_LINK_PROBE_MS;
	}
	if (!ret)
		ret = hello_done(l, r);
	json_object_put(r);
	if (ret) {
		probe_failed(l, ret);
		return l->holdoff_ms;
	}
	l->probing = false;
	l->health = IA_LINK_OK;
	snprintf(l->why, sizeof(l->why), "back after %u failed tries", l->tries_failed);
	l->last_ms = ia_now_ms() - (l->probe_deadline - l->timeout_ms);
	l->last_ok = time(NULL);
	if (l->on_session)
		l->on_session(l, l->arg);
	return -1;
}

const char *ia_link_health_name(enum ia_link_health h)
{
	static const char *const names[] = { "new", "ok", "slow", "unreachable" };

	return h <= IA_LINK_DOWN ? names[h] : "?";
}

json_object *ia_link_json(const struct ia_link *l)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "switch", json_object_new_string(l->name));
	json_object_object_add(o, "where", json_object_new_string(l->where));
	json_object_object_add(o, "health", json_object_new_string(ia_link_health_name(l->health)));
	if (*l->why)
		json_object_object_add(o, "why", json_object_new_string(l->why));
	if (l->busy)
		json_object_object_add(o, "busy_ms", json_object_new_int64(ia_now_ms() - l->busy_since));
	json_object_object_add(o, "rtt_ms", json_object_new_double(l->last_ms));
	json_object_object_add(o, "epoch", json_object_new_int64(l->epoch));
	json_object_object_add(o, "reboots", json_object_new_int(l->reboots));
	json_object_object_add(o, "sessions", json_object_new_int(l->sessions));
	return o;
}
