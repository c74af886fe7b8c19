// SPDX-License-Identifier: GPL-2.0
/*
 * inaggd's control socket: one event loop over non-blocking connections, so
 * that no client, silent, slow or hostile, holds up another. Each
 * connection has a whole-request deadline (from accept to the last byte of
 * the answer), a request is at most REQ_MAX bytes (a larger one is answered
 * with an error), and at most MAX_CLIENTS are open at once (one more is
 * answered "busy" and closed). While a request waits for a router, the
 * loop goes on meanwhile (serve_meanwhile(), run by the link's wait): other
 * clients are read and "list" is answered; their other requests are held
 * until the one in progress is done, as they change or call what it uses.
 *
 * Who connects is known from the socket (SO_PEERCRED, SO_PEERGROUPS): root,
 * or a member of the daemon's group (inagg), or nobody. The socket file is
 * 0660 root:group, and the daemon checks again, as a socket passed on or a
 * mode changed by hand must not let anyone else in.
 */
#include <errno.h>
#include <grp.h>
#include <poll.h>
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

#include "clock.h"
#include "ctl.h"
#include "inaggd.h"

#define MAX_CLIENTS	64
#define REQ_MAX		(64 << 10)
#define DEADLINE_MS	5000

struct client {
	int fd;
	long long deadline;
	char *in;		/* the request so far; REQ_MAX + 1 of room */
	size_t inlen;
	char *out;		/* the answer, once there is one */
	size_t outlen, outoff;
	bool drain;		/* answered early: the rest of the request is discarded */
	size_t pending;		/* a request held while another is handled: its length + 1 */
	bool busy;		/* its request is being handled: left alone meanwhile */
	uid_t uid;		/* who connected (SO_PEERCRED) */
};

/* The connections, where serve_meanwhile() reaches them. */
static struct client cl[MAX_CLIENTS];
static int ncl, listen_fd = -1;
/* Counts what serve_meanwhile() accepted or closed: the main loop's poll results are stale. */
static unsigned int meanwhile_changes;

bool socket_in_use(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	bool used;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return false;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	/* Only a listening socket accepts; a killed daemon's file refuses (ECONNREFUSED). */
	used = !connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return used;
}

int listen_on(const char *path, const char *group)
{
	struct group *gr = getgrnam(group);
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
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlink(path);	/* a stale socket of a killed daemon */
	/* Root and the group only; without the group, root only (root:root). */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, 0660) ||
	    (!geteuid() && chown(path, 0, gr ? gr->gr_gid : 0)) || listen(fd, MAX_CLIENTS)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* Sets the answer of c (a JSON object, consumed). */
static void answer(struct client *c, json_object *reply)
{
	const char *s = json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(s);

	/* The deadline now bounds the sending of the answer. */
	c->deadline = ia_now_ms() + DEADLINE_MS;
	c->out = malloc(len + 1);
	if (c->out) {
		memcpy(c->out, s, len);
		c->out[len] = '\n';
		c->outlen = len + 1;
	}
	json_object_put(reply);
}

/* A complete request (up to a newline or the end): parsed, checked, handled. */
static void serve_request(struct daemon *d, struct client *c, size_t len)
{
	char err[IA_ERRLEN];
	json_object *req;

	if (ia_ctl_parse(c->in, len, &req, err, sizeof(err))) {
		answer(c, error_reply("%s", err));
		return;
	}
	c->busy = true;
	answer(c, handle(d, req, c->uid));
	c->busy = false;
	json_object_put(req);
}

/* What may be answered while another request waits for a router (meanwhile_ok()). */
static bool answers_meanwhile(struct daemon *d, const char *in, size_t len)
{
	char err[IA_ERRLEN];
	json_object *req;
	bool ok;

	if (ia_ctl_parse(in, len, &req, err, sizeof(err)))
		return true;	/* the error answer */
	ok = meanwhile_ok(d, req);
	json_object_put(req);
	return ok;
}

/* A complete request: served, or held for the main loop when it comes meanwhile. */
static void complete(struct daemon *d, struct client *c, size_t len, bool meanwhile)
{
	if (meanwhile && !answers_meanwhile(d, c->in, len)) {
		c->pending = len + 1;
		return;
	}
	serve_request(d, c, len);
}

/* Reads what c sent; returns false when c is to be closed. */
static bool client_read(struct daemon *d, struct client *c, bool meanwhile)
{
	char junk[4096];
	ssize_t n;
	char *nl;

	if (c->pending)
		return true;
	if (c->drain || c->out) {
		n = recv(c->fd, junk, sizeof(junk), MSG_DONTWAIT);
		return n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR));
	}
	n = recv(c->fd, c->in + c->inlen, REQ_MAX + 1 - c->inlen, MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (n == 0) {
		/* The end of a request without a newline. */
		complete(d, c, c->inlen, meanwhile);
		return true;
	}
	nl = memchr(c->in + c->inlen, '\n', n);
	c->inlen += n;
	if (nl) {
		complete(d, c, nl - c->in, meanwhile);
	} else if (c->inlen > REQ_MAX) {
		answer(c, error_reply("request: larger than %d bytes", REQ_MAX));
		c->drain = true;
	}
	return true;
}

/* Writes the answer; returns false when c is to be closed. */
static bool client_write(struct client *c)
{
	ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
			 MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	c->outoff += n;
	if (c->outoff < c->outlen)
		return true;
	/* Answered. A client still sending an oversized request reads it first. */
	if (c->drain) {
		shutdown(c->fd, SHUT_WR);
		return true;
	}
	return false;
}

static void client_close(struct client *c)
{
	close(c->fd);
	free(c->in);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* One connection too many: told so, without waiting for it. */
static void refuse(int fd)
{
	static const char busy[] = "{\"ok\":false,\"error\":\"inaggd busy: too many connections\"}\n";

	send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
}

/* A request not complete by its deadline. */
static void refuse_late(struct client *c)
{
	char msg[128];
	int len = snprintf(msg, sizeof(msg),
			   "{\"ok\":false,\"error\":\"request: not complete within %d ms\"}\n",
			   DEADLINE_MS);

	send(c->fd, msg, len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* A free slot; when there is none, first frees those whose client has gone. */
static struct client *free_slot(int *ncl)
{
	char b;

	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < MAX_CLIENTS; i++)
			if (cl[i].fd < 0)
				return &cl[i];
		for (int i = 0; i < MAX_CLIENTS; i++) {
			if (recv(cl[i].fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0) {
				client_close(&cl[i]);
				(*ncl)--;
			}
		}
	}
	return NULL;
}

/* Whether gid is the group's, or one of groups (n of them). */
static bool in_group(const struct group *gr, gid_t gid, const gid_t *groups, int n)
{
	if (!gr)
		return false;
	if (gid == gr->gr_gid)
		return true;
	for (int i = 0; i < n; i++)
		if (groups[i] == gr->gr_gid)
			return true;
	return false;
}

/*
 * Whether the peer of fd may use the daemon: root, or a member of group (by
 * its primary or a supplementary group, as the kernel saw them at connect).
 * why gets the refusal. The group is looked up on each connection, so that
 * one made while the daemon runs counts.
 */
static bool peer_allowed(int fd, const char *group, uid_t *uid, char *why, size_t whylen)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	gid_t groups[256];
	struct group *gr;
	int n = 0;

	*uid = (uid_t)-1;	/* nobody's until known */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len)) {
		snprintf(why, whylen, "permission denied: who connected is unknown (%s)",
			 strerror(errno));
		return false;
	}
	*uid = cr.uid;
	/* Root, and the daemon's own user when it is not root (a test's). */
	if (cr.uid == 0 || cr.uid == geteuid())
		return true;
	len = sizeof(groups);
	/* ERANGE: more than 256 groups; the primary group still counts. */
	if (!getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		n = len / sizeof(groups[0]);
	gr = getgrnam(group);
	if (in_group(gr, cr.gid, groups, n))
		return true;
	snprintf(why, whylen, "permission denied: uid %u is neither root nor in group '%s'%s",
		 (unsigned int)cr.uid, group, gr ? "" : " (no such group: root only)");
	return false;
}

static void accept_all(struct daemon *d, int lfd, int *ncl)
{
	char why[160];

	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct client *c;

		if (fd < 0)
			return;
		c = free_slot(ncl);
		if (!c || !(c->in = malloc(REQ_MAX + 1))) {
			log_msg(IA_LOG_WARN, "%d connections open: one more refused", *ncl);
			refuse(fd);
			continue;
		}
		c->fd = fd;
		c->deadline = ia_now_ms() + DEADLINE_MS;
		(*ncl)++;
		/* Refused: told why at once, what it sends is read and discarded. */
		if (!peer_allowed(fd, d->group, &c->uid, why, sizeof(why))) {
			log_msg(IA_LOG_WARN, "control socket: %s", why);
			answer(c, error_reply("%s", why));
			c->drain = true;
		}
	}
}

/* One turn of reading and writing, without waiting, while a request waits for a router. */
static void serve_meanwhile(void *arg)
{
	struct pollfd p[MAX_CLIENTS + 1];
	int who[MAX_CLIENTS + 1], np = 1;
	struct daemon *d = arg;

	p[0] = (struct pollfd){ .fd = listen_fd, .events = POLLIN };
	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct client *c = &cl[i];

		if (c->fd < 0 || c->pending || c->busy)
			continue;
		who[np] = i;
		p[np++] = (struct pollfd){
			.fd = c->fd,
			.events = c->out && c->outoff < c->outlen ? POLLOUT : POLLIN,
		};
	}
	if (poll(p, np, 0) <= 0)
		return;
	for (int k = 1; k < np; k++) {
		struct client *c = &cl[who[k]];
		bool keep = true;

		if (!p[k].revents)
			continue;
		if (p[k].revents & POLLIN)
			keep = client_read(d, c, true);
		else if (p[k].revents & POLLOUT)
			keep = client_write(c);
		else
			keep = false;
		if (keep && c->out && !c->outoff && (p[k].revents & POLLIN))
			keep = client_write(c);
		if (!keep) {
			client_close(c);
			ncl--;
			meanwhile_changes++;
		}
	}
	if (p[0].revents) {
		accept_all(d, listen_fd, &ncl);
		meanwhile_changes++;
	}
}

/* Serves until SIGINT or SIGTERM arrives on sfd. */
int serve(struct daemon *d, int lfd, int sfd)
{
	struct pollfd p[MAX_CLIENTS + 2];
	int who[MAX_CLIENTS + 2];
	unsigned int changes;

	for (int i = 0; i < MAX_CLIENTS; i++)
		cl[i] = (struct client){ .fd = -1 };
	ncl = 0;
	listen_fd = lfd;
	/* INAGGD_MEANWHILE=0 turns it off: calls then just wait (docs/remote.md). */
	if (!getenv("INAGGD_MEANWHILE") || strcmp(getenv("INAGGD_MEANWHILE"), "0"))
		ia_link_set_wait_hook(serve_meanwhile, d);
	for (;;) {
		long long now = ia_now_ms(), wait = -1;
		int np = 2;

		changes = meanwhile_changes;
		p[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		for (int i = 0; i < MAX_CLIENTS; i++) {
			struct client *c = &cl[i];

			if (c->fd < 0)
				continue;
			/* Held while another was handled: served now, not late. */
			if (c->pending) {
				serve_request(d, c, c->pending - 1);
				c->pending = 0;
				now = ia_now_ms();
			}
			/* A request that came while another was handled is not late. */
			if (now >= c->deadline && !c->out && !c->drain && client_read(d, c, false) &&
			    c->out)
				now = ia_now_ms();
			if (now >= c->deadline) {
				/* Too slow: told why if it still listens, then closed. */
				if (!c->out && !c->drain)
					refuse_late(c);
				client_close(c);
				ncl--;
				continue;
			}
			if (wait < 0 || c->deadline - now < wait)
				wait = c->deadline - now;
			who[np] = i;
			p[np++] = (struct pollfd){
				.fd = c->fd,
				.events = c->out && c->outoff < c->outlen ? POLLOUT : POLLIN,
			};
		}
		{
			long long due = mem_tick(d);

			if (due >= 0 && (wait < 0 || due < wait))
				wait = due;
			/* Routers that are down: probed, connected when back, never waited for. */
			due = ia_remote_tick(d->remote);
			if (due >= 0 && (wait < 0 || due < wait))
				wait = due;
			/* The tails of switches connected since (by the tick or a call). */
			if (d->connected) {
				d->connected = false;
				ia_lender_publish(&d->lend);
			}
			/* Requests the ticks' calls held (serve_meanwhile()): served at once. */
			for (int i = 0; i < MAX_CLIENTS; i++)
				if (cl[i].fd >= 0 && cl[i].pending)
					wait = 0;
		}
		/* Connections came or went while calls waited: p is stale, made again. */
		if (meanwhile_changes != changes)
			continue;
		if (poll(p, np, wait) < 0) {
			if (errno == EINTR)
				continue;
			ia_link_set_wait_hook(NULL, NULL);
			return -errno;
		}
		if (p[1].revents) {
			ia_link_set_wait_hook(NULL, NULL);
			return 0;
		}
		for (int k = 2; k < np; k++) {
			struct client *c = &cl[who[k]];
			bool keep = true;

			/* Connections came or went meanwhile: what poll said is stale, poll again. */
			if (meanwhile_changes != changes)
				break;
			/* Closed, or another connection, since the poll (serve_meanwhile()). */
			if (!p[k].revents || c->fd != p[k].fd)
				continue;
			if (p[k].revents & POLLIN)
				keep = client_read(d, c, false);
			else if (p[k].revents & POLLOUT)
				keep = client_write(c);
			else
				keep = false;	/* hung up or error */
			/* An answer just made is sent at once, most often whole. */
			if (keep && c->out && !c->outoff && (p[k].revents & POLLIN))
				keep = client_write(c);
			if (!keep) {
				client_close(c);
				ncl--;
			}
		}
		if (p[0].revents && meanwhile_changes == changes)
			accept_all(d, lfd, &ncl);
	}
}
