// SPDX-License-Identifier: GPL-2.0
/*
 * The switch agent's "layout" (agent.h): a router's ports get the addresses
 * and routes of netplan.h, as `inagg net up` gives a switch namespace, so a
 * fresh router needs nothing but its ports attached. Every value is checked
 * (an interface of this machine, an IPv4 address) and handed to iproute2 as
 * its own argument: no shell ever sees it.
 *
 * A controller key limited to the agent must not re-route the router
 * (docs/security.md): every interface must be a port of this switch (one
 * `inagg dev attach` made: in its port map), and every address, route and
 * gateway inside netplan.h's ranges (10.64.0.0/10, 10.128.0.0/9); never the
 * default route, never lo or the router's management interfaces.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"
#include "err.h"
#include "netns.h"
#include "xdp.h"

extern char **environ;

/* Whether the prefix a/n lies inside netplan.h's ranges, 10.64.0.0/10 and 10.128.0.0/9. */
static bool in_plan(uint32_t a, long n)
{
	return (n >= 10 && (a & 0xffc00000u) == 0x0a400000u) ||
	       (n >= 9 && (a & 0xff800000u) == 0x0a800000u);
}

/*
 * "A.B.C.D" or "A.B.C.D/N" (with prefix only if may_prefix) inside inagg's
 * ranges; "default", 0.0.0.0/0 and any other address are not inagg's.
 */
static bool addr_ok(const char *s, bool may_prefix)
{
	char buf[INET_ADDRSTRLEN + 4], *slash;
	struct in_addr in;
	long n = 32;

	if (!s || strlen(s) >= sizeof(buf))
		return false;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash) {
		char *end;

		if (!may_prefix)
			return false;
		*slash = '\0';
		n = strtol(slash + 1, &end, 10);
		if (*end || end == slash + 1 || n < 0 || n > 32)
			return false;
	}
	return inet_pton(AF_INET, buf, &in) == 1 && in_plan(ntohl(in.s_addr), n);
}

/* Whether name is an interface here that is a port of the agent's switch (dev attach). */
static bool port_ok(struct ia_agent *a, const char *name)
{
	struct ia_counters c;
	struct ia_xdp *x;
	int ifindex, err;

	if (!name || ia_if_info(name, &ifindex, NULL))
		return false;
	x = ia_agent_maps(a, false, &err, NULL, 0);
	return x && !ia_xdp_port_counters(x, ifindex, &c);
}

static int ip(const char *const argv[], char *why, size_t whylen)
{
	int status, ret;
	pid_t pid;

	ret = posix_spawnp(&pid, "ip", NULL, NULL, (char *const *)argv, environ);
	if (ret)
		return ia_fail(why, whylen, -ret, "ip: %s", strerror(ret));
	if (waitpid(pid, &status, 0) < 0)
		return ia_fail(why, whylen, -errno, "ip: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(why, whylen, "ip %s %s %s %s: failed", argv[1], argv[2], argv[3],
			 argv[4] ? argv[4] : "");
		return -EIO;
	}
	return 0;
}

static const char *nth(json_object *e, int i)
{
	json_object *v = json_object_array_get_idx(e, i);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

json_object *ia_agent_layout(struct ia_agent *a, json_object *req)
{
	json_object *addrs, *routes;
	char why[256] = "";
	int ret = 0, fd;
	size_t n;

	if (!json_object_object_get_ex(req, "addrs", &addrs) ||
	    !json_object_is_type(addrs, json_type_array) ||
	    !json_object_object_get_ex(req, "routes", &routes) ||
	    !json_object_is_type(routes, json_type_array))
		return ia_agent_err(EINVAL, "need \"addrs\" [[port, addr/len]] and \"routes\" "
				    "[[dst, via, port]]");
	/* All checked before anything changes. */
	n = json_object_array_length(addrs);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(addrs, i);

		if (!json_object_is_type(e, json_type_array) || json_object_array_length(e) != 2)
			return ia_agent_err(EINVAL, "addrs[%zu]: [a port, an IPv4 address/len]", i);
		if (!port_ok(a, nth(e, 0)))
			return ia_agent_err(EINVAL, "addrs[%zu]: '%.16s' is not a port of switch %s "
					    "(inagg dev attach): not inagg's", i,
					    nth(e, 0) ? nth(e, 0) : "", a->sw);
		if (!addr_ok(nth(e, 1), true))
			return ia_agent_err(EINVAL, "addrs[%zu]: an IPv4 address/len inside "
					    "10.64.0.0/10 or 10.128.0.0/9 (inagg's)", i);
	}
	n = json_object_array_length(routes);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(routes, i);

		if (!json_object_is_type(e, json_type_array) || json_object_array_length(e) != 3)
			return ia_agent_err(EINVAL, "routes[%zu]: [dst, via, a port]", i);
		if (!addr_ok(nth(e, 0), true) || !addr_ok(nth(e, 1), false))
			return ia_agent_err(EINVAL, "routes[%zu]: dst and via inside 10.64.0.0/10 "
					    "or 10.128.0.0/9 (inagg's; never the default route)",
					    i);
		if (!port_ok(a, nth(e, 2)))
			return ia_agent_err(EINVAL, "routes[%zu]: '%.16s' is not a port of switch "
					    "%s (inagg dev attach): not inagg's", i,
					    nth(e, 2) ? nth(e, 2) : "", a->sw);
	}
	n = json_object_array_length(addrs);
	for (size_t i = 0; !ret && i < n; i++) {
		json_object *e = json_object_array_get_idx(addrs, i);
		const char *set[] = { "ip", "addr", "replace", nth(e, 1), "dev", nth(e, 0), NULL };
		const char *up[] = { "ip", "link", "set", "dev", nth(e, 0), "up", NULL };

		ret = ip(set, why, sizeof(why));
		if (!ret)
			ret = ip(up, why, sizeof(why));
	}
	n = json_object_array_length(routes);
	for (size_t i = 0; !ret && i < n; i++) {
		json_object *e = json_object_array_get_idx(routes, i);
		const char *add[] = { "ip", "route", "replace", nth(e, 0), "via", nth(e, 1),
				      "dev", nth(e, 2), NULL };

		ret = ip(add, why, sizeof(why));
	}
	/* A switch routes what is not inagg's, as in any routed network. */
	fd = open("/proc/sys/net/ipv4/ip_forward", O_WRONLY | O_CLOEXEC);
	if (!ret && (fd < 0 || write(fd, "1\n", 2) != 2))
		ret = ia_fail(why, sizeof(why), fd < 0 ? -errno : -EIO, "ip_forward: %s",
			      strerror(errno));
	if (fd >= 0)
		close(fd);
	return ret ? ia_agent_err(ret, "%s", why) : ia_agent_ok();
}
