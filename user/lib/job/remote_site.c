// SPDX-License-Identifier: GPL-2.0
/*
 * Where each switch of a topology lives (remote.h, docs/remote.md): a
 * switch object's optional "site",
 *
 *   "site": { "host": "root@192.0.2.11",        reached with ssh
 *             "ssh": ["-p", "2222"],            more ssh arguments
 *             "agent": "inagg-agent",           the command on the router
 *             "switch": "r1",                   its pin name (default: the switch's)
 *             "ports": { "up": "eth1", "down": ["eth2", "eth3"], "hosts": ["eth4"] },
 *             "peers": { "up": "52:54:00:..", "down": [...], "hosts": [...] },
 *             "layout": true,                   give the ports netplan.h's addresses
 *             "timeout_ms": 5000, "retries": 2 }
 *
 * Without a site (or without its host), the switch is the namespace
 * ia-TAG-SWITCH of this host with the ports of netplan.h, and its agent is
 * run here, in that namespace.
 *
 * Every field is checked before anything runs (site_check()): ssh reads a
 * host that begins with '-' as an option (-oProxyCommand=... runs as the
 * daemon, root), and the remote command (agent, switch) reaches the router's
 * shell, so only plain names pass there.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mac.h"
#include "netplan.h"
#include "remote_int.h"

#define LOCAL_TIMEOUT_MS 5000
#define LOCAL_RETRIES 1
#define SSH_TIMEOUT_MS 10000
#define SSH_RETRIES 2

static const char *str_of(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int int_of(json_object *o, const char *key, int dflt)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return dflt;
	return json_object_get_int(v);
}

/* The i-th string of array key of o (a list of port names or MACs), or NULL. */
static const char *nth_of(json_object *o, const char *key, int i)
{
	json_object *a, *v;

	if (!o || !json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array) ||
	    i >= (int)json_object_array_length(a))
		return NULL;
	v = json_object_array_get_idx(a, i);
	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* Characters a host ([user@]name, [v6]:) may have: none a shell or ssh reads. */
static bool host_ok(const char *h)
{
	if (!*h || *h == '-' || strlen(h) > 255)
		return false;
	for (; *h; h++)
		if (!isalnum((unsigned char)*h) && !strchr("._-@:[]%", *h))
			return false;
	return true;
}

/* A word the router's shell takes as it is: [A-Za-z0-9._/+-], not an option. */
static bool word_ok(const char *w, size_t max)
{
	if (!*w || *w == '-' || strlen(w) > max)
		return false;
	for (; *w; w++)
		if (!isalnum((unsigned char)*w) && !strchr("._/+-", *w))
			return false;
	return true;
}

/* An interface name as the kernel takes one (dev_valid_name()). */
static bool ifname_ok(const char *n)
{
	if (!*n || strlen(n) >= IFNAMSIZ || !strcmp(n, ".") || !strcmp(n, ".."))
		return false;
	for (; *n; n++)
		if (*n == '/' || *n == ':' || isspace((unsigned char)*n))
			return false;
	return true;
}

/* A string field: a JSON string without a NUL inside (json-c keeps "\u0000"). */
static const char *field_str(json_object *v)
{
	if (!json_object_is_type(v, json_type_string) ||
	    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
		return NULL;
	return json_object_get_string(v);
}

/* The ports (or peers) object's field key: a string (single) or an array of them. */
static int ports_check(json_object *o, const char *what, bool mac, const char *sw, char *err,
		       size_t errlen)
{
	unsigned char m[6];

	if (!o)
		return 0;
	if (!json_object_is_type(o, json_type_object))
		return ia_fail(err, errlen, -EINVAL, "switch %s: site: %s: an object", sw, what);
	json_object_object_foreach(o, key, val) {
		bool many = strcmp(key, "up");
		size_t n = many && json_object_is_type(val, json_type_array) ?
				   json_object_array_length(val) : 1;

		if (many && strcmp(key, "down") && strcmp(key, "hosts"))
			return ia_fail(err, errlen, -EINVAL,
				       "switch %s: site: %s: unknown field '%s' (up, down, hosts)",
				       sw, what, key);
		if (many && !json_object_is_type(val, json_type_array))
			return ia_fail(err, errlen, -EINVAL, "switch %s: site: %s.%s: an array",
				       sw, what, key);
		for (size_t i = 0; i < n; i++) {
			const char *x = field_str(many ? json_object_array_get_idx(val, i) : val);

			if (!x || (mac ? ia_mac_parse(x, m) != 0 : !ifname_ok(x)))
				return ia_fail(err, errlen, -EINVAL,
					       "switch %s: site: %s.%s: %s", sw, what, key,
					       mac ? "a MAC address" :
						     "an interface name (no '/', ':' or space, "
						     "< 16 characters)");
		}
	}
	return 0;
}

/* Whether an integer field, if given, is one in [min, max]. */
static int int_check(json_object *site, const char *key, int min, int max, const char *sw,
		     char *err, size_t errlen)
{
	json_object *v;

	if (!json_object_object_get_ex(site, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < min ||
	    json_object_get_int64(v) > max)
		return ia_fail(err, errlen, -EINVAL, "switch %s: site: %s: an integer in [%d, %d]",
			       sw, key, min, max);
	return 0;
}

/* Every field of a switch's site, before any runs; err names the switch, field and why. */
static int site_check(json_object *site, const char *sw, char *err, size_t errlen)
{
	json_object *v;
	const char *x;
	int ret;

	if (!site)
		return 0;
	if (!json_object_is_type(site, json_type_object))
		return ia_fail(err, errlen, -EINVAL, "switch %s: site: an object", sw);
	if (json_object_object_get_ex(site, "host", &v)) {
		x = field_str(v);
		if (!x || !host_ok(x))
			return ia_fail(err, errlen, -EINVAL,
				       "switch %s: site: host: [user@]name or address of "
				       "[A-Za-z0-9._@:[]%%-], not beginning with '-' "
				       "(ssh would read it as an option)", sw);
	}
	if (json_object_object_get_ex(site, "agent", &v) &&
	    (!(x = field_str(v)) || !word_ok(x, 255)))
		return ia_fail(err, errlen, -EINVAL,
			       "switch %s: site: agent: a command of [A-Za-z0-9._/+-], not "
			       "beginning with '-' (the router's shell reads it)", sw);
	if (json_object_object_get_ex(site, "switch", &v) &&
	    (!(x = field_str(v)) || !word_ok(x, 64) || strchr(x, '/')))
		return ia_fail(err, errlen, -EINVAL,
			       "switch %s: site: switch: a name of [A-Za-z0-9._+-], not beginning "
			       "with '-', at most 64 (the router's shell reads it)", sw);
	if (json_object_object_get_ex(site, "ssh", &v)) {
		if (!json_object_is_type(v, json_type_array))
			return ia_fail(err, errlen, -EINVAL, "switch %s: site: ssh: an array", sw);
		for (size_t i = 0; i < json_object_array_length(v); i++)
			if (!(x = field_str(json_object_array_get_idx(v, i))) || !*x)
				return ia_fail(err, errlen, -EINVAL,
					       "switch %s: site: ssh[%zu]: a non-empty string "
					       "without a null character", sw, i);
	}
	if (json_object_object_get_ex(site, "layout", &v) &&
	    !json_object_is_type(v, json_type_boolean))
		return ia_fail(err, errlen, -EINVAL, "switch %s: site: layout: true or false", sw);
	ret = ports_check(json_object_object_get_ex(site, "ports", &v) ? v : NULL, "ports",
			  false, sw, err, errlen);
	if (!ret)
		ret = ports_check(json_object_object_get_ex(site, "peers", &v) ? v : NULL, "peers",
				  true, sw, err, errlen);
	if (!ret)
		ret = int_check(site, "timeout_ms", 1, 3600000, sw, err, errlen);
	if (!ret)
		ret = int_check(site, "retries", 0, 100, sw, err, errlen);
	if (!ret)
		ret = int_check(site, "holdoff_ms", 0, 3600000, sw, err, errlen);
	return ret;
}

static int port_set(struct ia_rport *p, const char *name, const char *peer, const char *sw,
		    char *err, size_t errlen)
{
	if (!name || !*name || strlen(name) >= IFNAMSIZ)
		return ia_fail(err, errlen, -EINVAL, "switch %s: a port needs a name (< %d characters)",
			       sw, IFNAMSIZ);
	snprintf(p->name, sizeof(p->name), "%s", name);
	if (peer) {
		if (ia_mac_parse(peer, p->peer))
			return ia_fail(err, errlen, -EINVAL, "switch %s: port %s: peer '%s' is no MAC",
				       sw, name, peer);
		p->has_peer = p->peer_given = true;
	}
	return 0;
}

/* The switch objects of the topology's file, by index, if any has a site. */
static json_object *sites_of(const char *topo_path, const struct ia_topo *t, json_object ***by_sw)
{
	json_object *root, *arr;
	size_t n;

	*by_sw = NULL;
	if (!topo_path)
		return NULL;
	root = json_object_from_file(topo_path);
	if (!root)
		return NULL;
	if (!json_object_object_get_ex(root, "switches", &arr) ||
	    !json_object_is_type(arr, json_type_array) || !(*by_sw = calloc(t->n, sizeof(**by_sw)))) {
		json_object_put(root);
		return NULL;
	}
	n = json_object_array_length(arr);
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(arr, i), *site;
		const char *name = str_of(s, "name");
		int v = name ? ia_topo_find(t, name) : -1;

		if (v >= 0 && json_object_object_get_ex(s, "site", &site))
			(*by_sw)[v] = site;
	}
	return root;
}

static int site_switch(struct ia_remote *r, int v, json_object *site, const char *agent_bin,
		       char *err, size_t errlen)
{
	const struct ia_topo *t = r->t;
	struct ia_rswitch *s = &r->sw[v];
	const char *name = t->sw[v].name, *host = str_of(site, "host");
	json_object *ports = NULL, *peers = NULL, *extra = NULL;
	int nc = t->child_start[v + 1] - t->child_start[v], ret, argc = 0;
	char pname[IFNAMSIZ];
	const char *argv[64];

	s->down = calloc(nc ? nc : 1, sizeof(*s->down));
	s->host = calloc(t->sw[v].load ? t->sw[v].load : 1, sizeof(*s->host));
	if (!s->down || !s->host)
		return ia_fail(err, errlen, -ENOMEM, "out of memory");
	ret = site_check(site, name, err, errlen);
	if (ret)
		return ret;
	if (site) {
		json_object_object_get_ex(site, "ports", &ports);
		json_object_object_get_ex(site, "peers", &peers);
		json_object_object_get_ex(site, "ssh", &extra);
	}
	if (!host) {
		ia_net_switch_ns(r->tag, name, s->ns, sizeof(s->ns));
		argv[argc++] = agent_bin;
		argv[argc++] = "-s";
		argv[argc++] = s->ns;
		argv[argc++] = "-N";
		argv[argc++] = s->ns;
		argv[argc] = NULL;
		ret = ia_link_init(&s->link, name, s->ns, (char *const *)argv,
				   int_of(site, "timeout_ms", LOCAL_TIMEOUT_MS),
				   int_of(site, "retries", LOCAL_RETRIES));
	} else {
		const char *ssh = getenv("INAGG_SSH");
		size_t ne = extra && json_object_is_type(extra, json_type_array) ?
				    json_object_array_length(extra) : 0;

		if (ne > 40)
			return ia_fail(err, errlen, -E2BIG, "switch %s: too many ssh arguments", name);
		json_object *lay;

		s->remote = true;
		s->layout = json_object_object_get_ex(site, "layout", &lay) &&
			    json_object_get_boolean(lay);
		/* The operator's ssh, keys and known hosts; never a password prompt. */
		argv[argc++] = ssh && *ssh ? ssh : "ssh";
		argv[argc++] = "-T";
		argv[argc++] = "-o";
		argv[argc++] = "BatchMode=yes";
		argv[argc++] = "-o";
		argv[argc++] = "ConnectTimeout=5";
		argv[argc++] = "-o";
		argv[argc++] = "ServerAliveInterval=5";
		for (size_t i = 0; i < ne; i++)
			argv[argc++] = json_object_get_string(json_object_array_get_idx(extra, i));
		argv[argc++] = host;
		argv[argc++] = str_of(site, "agent") ? str_of(site, "agent") : "inagg-agent";
		argv[argc++] = "-s";
		argv[argc++] = str_of(site, "switch") ? str_of(site, "switch") : name;
		argv[argc] = NULL;
		ret = ia_link_init(&s->link, name, host, (char *const *)argv,
				   int_of(site, "timeout_ms", SSH_TIMEOUT_MS),
				   int_of(site, "retries", SSH_RETRIES));
	}
	if (ret)
		return ia_fail(err, errlen, ret, "out of memory");
	s->link.holdoff_ms = int_of(site, "holdoff_ms", IA_LINK_HOLDOFF_MS);
	if (s->link.holdoff_ms < 100)
		s->link.holdoff_ms = 100;
	s->link.on_session = ia_remote_session;
	s->link.arg = r;
	/* Ports: the site's names, else netplan's. */
	ret = port_set(&s->up, str_of(ports, "up") ? str_of(ports, "up") : IA_PORT_UP,
		       str_of(peers, "up"), name, err, errlen);
	for (int i = 0; !ret && i < nc; i++)
		ret = port_set(&s->down[i], nth_of(ports, "down", i) ? nth_of(ports, "down", i) :
				       ia_port_name(IA_PORT_CHILD, i, pname),
			       nth_of(peers, "down", i), name, err, errlen);
	for (uint32_t j = 0; !ret && j < t->sw[v].load; j++)
		ret = port_set(&s->host[j], nth_of(ports, "hosts", j) ? nth_of(ports, "hosts", j) :
				       ia_port_name(IA_PORT_HOST, j, pname),
			       nth_of(peers, "hosts", j), name, err, errlen);
	return ret;
}

int ia_remote_open(struct ia_remote *r, const struct ia_topo *t, const char *topo_path,
		   const char *tag, const char *agent_bin, char *err, size_t errlen)
{
	json_object **site, *root;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	r->t = t;
	snprintf(r->tag, sizeof(r->tag), "%s", tag);
	r->sw = calloc(t->n, sizeof(*r->sw));
	r->failed = json_object_new_object();
	r->recovered = json_object_new_object();
	if (!r->sw)
		return ia_fail(err, errlen, -ENOMEM, "out of memory");
	for (int v = 0; v < t->n; v++)
		r->sw[v].link.fd = r->sw[v].link.errfd = -1;
	root = sites_of(topo_path, t, &site);
	for (int v = 0; !ret && v < t->n; v++)
		ret = site_switch(r, v, site ? site[v] : NULL, agent_bin, err, errlen);
	free(site);
	json_object_put(root);
	/* A refused site frees what the switches before it got (the caller may close again). */
	if (ret)
		ia_remote_close(r);
	return ret;
}

void ia_remote_close(struct ia_remote *r)
{
	for (int v = 0; r->sw && v < r->t->n; v++) {
		if (r->sw[v].link.argv)
			ia_link_free(&r->sw[v].link);
		free(r->sw[v].down);
		free(r->sw[v].host);
		json_object_put(r->sw[v].repush);
	}
	free(r->sw);
	json_object_put(r->failed);
	json_object_put(r->recovered);
	memset(r, 0, sizeof(*r));
}
