// SPDX-License-Identifier: GPL-2.0
/* Control channel client and framing (see ctl.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "err.h"

int ia_ctl_read(int fd, json_object **msg)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	ssize_t n;

	*msg = NULL;
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len + 1 == cap) {
			char *nb = cap >= IA_CTL_MAX ? NULL : realloc(buf, cap *= 2);

			if (!nb) {
				free(buf);
				return -EMSGSIZE;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return -errno;
		}
		if (!n || memchr(buf + len, '\n', n)) {
			len += n;
			break;
		}
		len += n;
	}
	buf[len] = '\0';
	*msg = json_tokener_parse(buf);
	free(buf);
	return *msg ? 0 : -EBADMSG;
}

int ia_ctl_write(int fd, json_object *msg)
{
	const char *s = json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(s), off = 0;

	while (off < len) {
		ssize_t n = send(fd, s + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		off += n;
	}
	return send(fd, "\n", 1, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

/* IA_CTL_WAIT_MS, or $INAGG_CTL_TIMEOUT_MS (> 0) where a network needs longer, or tests less. */
static long call_wait_ms(void)
{
	const char *s = getenv("INAGG_CTL_TIMEOUT_MS");
	char *end;
	long v;

	if (!s || !*s)
		return IA_CTL_WAIT_MS;
	v = strtol(s, &end, 10);
	return *end || v <= 0 ? IA_CTL_WAIT_MS : v;
}

int ia_ctl_call(const char *path, json_object *req, json_object **resp, char *err,
		size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	long wait_ms = call_wait_ms();
	struct timeval tv = { .tv_sec = wait_ms / 1000, .tv_usec = wait_ms % 1000 * 1000 };
	int fd, ret;

	*resp = NULL;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		return ia_fail(err, errlen, -ENAMETOOLONG, "%s: path too long", path);
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ia_fail(err, errlen, -errno, "socket: %s", strerror(errno));
	/*
	 * Bounded: a daemon that is stopped (or stuck) accepts from its backlog
	 * and never answers, and once the backlog is full connect() waits too;
	 * the caller hung for good.
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv))) {
		ret = ia_fail(err, errlen, -errno, "socket: %s", strerror(errno));
		goto out;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		if (ret != -EAGAIN) {
			ia_fail(err, errlen, ret, "cannot reach inaggd at %s: %s", path,
				strerror(-ret));
			goto out;
		}
	} else {
		ret = ia_ctl_write(fd, req);
		if (!ret)
			ret = ia_ctl_read(fd, resp);
	}
	if (ret == -EAGAIN || ret == -EWOULDBLOCK)
		ret = ia_fail(err, errlen, -ETIMEDOUT,
			      "inaggd at %s: no answer within %ld ms (is it stopped?)", path,
			      wait_ms);
	else if (ret)
		ia_fail(err, errlen, ret, "inaggd at %s: %s", path, strerror(-ret));
out:
	close(fd);
	return ret;
}

int ia_ctl_wait(const char *path, pid_t pid, int timeout_ms)
{
	struct timespec t0, now;
	json_object *req = json_object_new_object();
	int ret = -ETIMEDOUT;

	if (!req)
		return -ENOMEM;
	json_object_object_add(req, "cmd", json_object_new_string("list"));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		json_object *resp = NULL;

		if (!ia_ctl_call(path, req, &resp, NULL, 0)) {
			json_object_put(resp);
			ret = 0;
			break;
		}
		if (pid > 0 && waitpid(pid, NULL, WNOHANG) == pid) {
			ret = -ECHILD;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >=
		    timeout_ms)
			break;
		usleep(50000);
	}
	json_object_put(req);
	return ret;
}

json_object *ia_ctl_ok(void)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(true));
	return o;
}

json_object *ia_ctl_verr(int err, const char *fmt, va_list ap)
{
	json_object *o = json_object_new_object();
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* Names echoed from a request (or cut mid-character) never make the reply invalid UTF-8. */
	ia_ctl_utf8_clean(msg);
	json_object_object_add(o, "ok", json_object_new_boolean(false));
	if (err)
		json_object_object_add(o, "errno", json_object_new_int(err < 0 ? -err : err));
	json_object_object_add(o, "error", json_object_new_string(msg));
	return o;
}

json_object *ia_ctl_err(int err, const char *fmt, ...)
{
	json_object *o;
	va_list ap;

	va_start(ap, fmt);
	o = ia_ctl_verr(err, fmt, ap);
	va_end(ap);
	return o;
}
