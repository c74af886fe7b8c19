// SPDX-License-Identifier: GPL-2.0
/* Builds a topology as network namespaces with iproute2 (see netbuild.h). */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netbuild.h"

/* A growing script for one iproute2 batch; oom sticks until the batch runs. */
struct sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	size_t cap;
	char *s;
	int n;

	while (!b->oom) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->s && b->len + n < b->cap) {
			b->len += n;
			return;
		}
		cap = b->cap ? b->cap * 2 : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		s = realloc(b->s, cap);
		if (!s) {
			b->oom = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
}

static void sb_reset(struct sbuf *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
}

/* Runs argv with input on stdin; on failure err gets the tool's first error line. */
static int run_tool(char *const argv[], const char *input, char *err, size_t errlen)
{
	int in[2], out[2], status;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	char msg[512] = "";
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(out[1], 2);
		execvp(argv[0], argv);
		dprintf(2, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	/* The tool may stop reading at its first error. */
	sigaction(SIGPIPE, &ign, &old);
	for (size_t off = 0, len = input ? strlen(input) : 0; off < len; off += n) {
		n = write(in[1], input + off, len - off);
		if (n <= 0)
			break;
	}
	close(in[1]);
	sigaction(SIGPIPE, &old, NULL);
	while ((n = read(out[0], msg + got, sizeof(msg) - 1 - got)) > 0)
		got += n;
	msg[got] = '\0';
	{
		char drain[256];

		while (read(out[0], drain, sizeof(drain)) > 0)
			;
	}
	close(out[0]);
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	msg[strcspn(msg, "\n")] = '\0';
	return ia_fail(err, errlen, -EIO, "%s: %s", argv[0], *msg ? msg : "failed");
}

/* Runs the script in sb with "tool [-n ns] -batch -"; ns NULL: the caller's namespace. */
static int ip_batch(const char *ns, const char *tool, const struct sbuf *sb, char *err,
		    size_t errlen)
{
	char *argv[] = { (char *)tool, "-n", (char *)ns, "-batch", "-", NULL };

	if (sb->oom)
		return ia_fail(err, errlen, -ENOMEM, "%s: out of memory for its script", tool);
	if (!ns) {
		argv[1] = "-batch";
		argv[2] = "-";
		argv[3] = NULL;
	}
	return run_tool(argv, sb->s, err, errlen);
}

static const char *a2s(struct in_addr a, char *buf)
{
	return inet_ntop(AF_INET, &a, buf, INET_ADDRSTRLEN);
}

/* Namespaces of a tag. */
static int list_ns(const char *tag, char ***names)
{
	char prefix[32];
	struct dirent *d;
	int cnt = 0, cap = 0;
	DIR *dir;

	*names = NULL;
	snprintf(prefix, sizeof(prefix), "ia-%s-", tag);
	dir = opendir(IA_NETNS_DIR);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((d = readdir(dir))) {
		if (strncmp(d->d_name, prefix, strlen(prefix)))
			continue;
		if (cnt == cap) {
			char **n = realloc(*names, (cap = cap ? cap * 2 : 64) * sizeof(char *));

			if (!n)
				break;
			*names = n;
		}
		(*names)[cnt] = strdup(d->d_name);
		if (!(*names)[cnt])
			break;
		cnt++;
	}
	closedir(dir);
	return cnt;
}

int ia_net_down(const char *tag, char *err, size_t errlen)
{
	struct sbuf sb = { 0 };
	char **names;
	int cnt, ret = 0;

	if (!ia_net_tag_valid(tag))
		return ia_fail(err, errlen, -EINVAL, "network tag \"%s\": use 1 to %d of [a-z0-9]",
			       tag, IA_NET_TAG_MAX);
	cnt = list_ns(tag, &names);
	if (cnt < 0)
		return ia_fail(err, errlen, cnt, "%s: %s", IA_NETNS_DIR, strerror(-cnt));
	for (int i = 0; i < cnt; i++) {
		sb_printf(&sb, "netns del %s\n", names[i]);
		free(names[i]);
	}
	free(names);
	if (cnt)
		ret = ip_batch(NULL, "ip", &sb, err, errlen);
	free(sb.s);
	return ret;
}

/* Turns on forwarding in every switch namespace (a child process does setns). */
static int enable_forwarding(const struct ia_topo *t, const char *tag, char *err, size_t errlen)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char ns[128], path[160];

		for (int v = 0; v < t->n; v++) {
			int fd, ok;

			ia_net_switch_ns(tag, t->sw[v].name, ns, sizeof(ns));
			snprintf(path, sizeof(path), IA_NETNS_DIR "/%s", ns);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0 || setns(fd, CLONE_NEWNET))
				_exit(1);
			close(fd);
			fd = open("/proc/sys/net/ipv4/ip_forward", O_WRONLY);
			ok = fd >= 0 && write(fd, "1\n", 2) == 2;
			if (fd >= 0)
				close(fd);
			if (!ok)
				_exit(2);
		}
		_exit(0);
	}
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	return ia_fail(err, errlen, -EIO, "cannot enable IPv4 forwarding in the switch namespaces");
}

/* Namespaces and veth pairs, created directly inside the namespaces. */
static int build_links(const struct ia_topo *t, const struct ia_net_opts *o, char *err,
		       size_t errlen)
{
	const char *tag = o->tag;
	char ns[128], peer[128], port[IFNAMSIZ], hport[IFNAMSIZ], mtu[24] = "";
	struct sbuf sb = { 0 };
	int ret;

	if (o->mtu)
		snprintf(mtu, sizeof(mtu), " mtu %u", o->mtu);
	ia_net_dest_ns(tag, ns, sizeof(ns));
	sb_printf(&sb, "netns add %s\n", ns);
	for (int v = 0; v < t->n; v++) {
		ia_net_switch_ns(tag, t->sw[v].name, ns, sizeof(ns));
		sb_printf(&sb, "netns add %s\n", ns);
		for (uint32_t j = 0; j < t->sw[v].load; j++) {
			ia_net_worker_ns(tag, t->sw[v].name, j, peer, sizeof(peer));
			sb_printf(&sb, "netns add %s\n", peer);
		}
	}
	for (int v = 0; v < t->n; v++) {
		ia_net_switch_ns(tag, t->sw[v].name, ns, sizeof(ns));
		if (t->sw[v].parent < 0) {
			ia_net_dest_ns(tag, peer, sizeof(peer));
			snprintf(port, sizeof(port), IA_HOST_PORT);
		} else {
			ia_net_switch_ns(tag, t->sw[t->sw[v].parent].name, peer, sizeof(peer));
			ia_port_name(IA_PORT_CHILD, ia_topo_child_pos(t, v), port);
		}
		sb_printf(&sb, "link add name %s netns %s%s type veth peer name %s netns %s%s\n",
			  IA_PORT_UP, ns, mtu, port, peer, mtu);
		for (uint32_t j = 0; j < t->sw[v].load; j++) {
			ia_net_worker_ns(tag, t->sw[v].name, j, peer, sizeof(peer));
			sb_printf(&sb, "link add name %s netns %s%s type veth peer name %s netns %s%s\n",
				  ia_port_name(IA_PORT_HOST, j, hport), ns, mtu, IA_HOST_PORT, peer,
				  mtu);
		}
	}
	ret = ip_batch(NULL, "ip", &sb, err, errlen);
	free(sb.s);
	return ret;
}

/* An address on a port, the port up. */
static void addr_up(struct sbuf *sb, struct in_addr a, const char *port)
{
	char buf[INET_ADDRSTRLEN];

	sb_printf(sb, "addr add %s/30 dev %s\nlink set dev %s up\n", a2s(a, buf), port, port);
}

/* A host (worker or destination): one port, default route to gw. */
static int build_host(const char *ns, struct in_addr a, struct in_addr gw, struct sbuf *sb,
		      char *err, size_t errlen)
{
	char buf[INET_ADDRSTRLEN];

	sb_reset(sb);
	sb_printf(sb, "link set lo up\n");
	addr_up(sb, a, IA_HOST_PORT);
	sb_printf(sb, "route add default via %s dev %s\n", a2s(gw, buf), IA_HOST_PORT);
	return ip_batch(ns, "ip", sb, err, errlen);
}

static int build(const struct ia_topo *t, const struct ia_net_opts *o, char *err, size_t errlen)
{
	const char *tag = o->tag;
	char ns[128], port[IFNAMSIZ], a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
	struct sbuf sb = { 0 };
	int ret;

	ret = build_links(t, o, err, errlen);
	if (ret)
		return ret;

	/* Switches: addresses, default route up, a host route down per worker below. */
	for (int v = 0; v < t->n; v++) {
		sb_reset(&sb);
		sb_printf(&sb, "link set lo up\n");
		addr_up(&sb, ia_net_uplink_addr(v, false), IA_PORT_UP);
		sb_printf(&sb, "route add default via %s dev %s\n",
			  a2s(ia_net_uplink_addr(v, true), a), IA_PORT_UP);
		for (int c = t->child_start[v]; c < t->child_start[v + 1]; c++)
			addr_up(&sb, ia_net_uplink_addr(t->child[c], true),
				ia_port_name(IA_PORT_CHILD, c - t->child_start[v], port));
		for (uint32_t j = 0; j < t->sw[v].load; j++)
			addr_up(&sb, ia_net_worker_gw(ia_net_worker_index(t, v, j)),
				ia_port_name(IA_PORT_HOST, j, port));
		ia_net_switch_ns(tag, t->sw[v].name, ns, sizeof(ns));
		ret = ip_batch(ns, "ip", &sb, err, errlen);
		if (ret)
			goto out;
	}
	/* Every worker's address, routed on each ancestor toward its subtree. */
	for (int w = 0; w < t->n; w++) {
		for (int u = w; t->sw[w].load && t->sw[u].parent >= 0; u = t->sw[u].parent) {
			int p = t->sw[u].parent;

			sb_reset(&sb);
			ia_port_name(IA_PORT_CHILD, ia_topo_child_pos(t, u), port);
			for (uint32_t j = 0; j < t->sw[w].load; j++)
				sb_printf(&sb, "route add %s/32 via %s dev %s\n",
					  a2s(ia_net_worker_addr(ia_net_worker_index(t, w, j)), a),
					  a2s(ia_net_uplink_addr(u, false), b), port);
			ia_net_switch_ns(tag, t->sw[p].name, ns, sizeof(ns));
			ret = ip_batch(ns, "ip", &sb, err, errlen);
			if (ret)
				goto out;
		}
	}
	/* Hosts. */
	for (int v = 0; v < t->n; v++) {
		for (uint32_t j = 0; j < t->sw[v].load; j++) {
			int g = ia_net_worker_index(t, v, j);

			ia_net_worker_ns(tag, t->sw[v].name, j, ns, sizeof(ns));
			ret = build_host(ns, ia_net_worker_addr(g), ia_net_worker_gw(g), &sb, err,
					 errlen);
			if (ret)
				goto out;
		}
	}
	ia_net_dest_ns(tag, ns, sizeof(ns));
	ret = build_host(ns, ia_net_dest_addr(t), ia_net_uplink_addr(t->root, false), &sb, err,
			 errlen);
	if (!ret)
		ret = enable_forwarding(t, tag, err, errlen);
	if (ret || o->rate_mbit <= 0)
		goto out;

	/* Rate emulation on each uplink (applies to traffic the kernel forwards). */
	for (int v = 0; v < t->n; v++) {
		double mbit = ia_ratio_double(t->sw[v].rate) * o->rate_mbit;

		sb_reset(&sb);
		sb_printf(&sb, "qdisc add dev %s root tbf rate %.0fkbit burst 16kb latency 1s\n",
			  IA_PORT_UP, mbit * 1000 < 8 ? 8 : mbit * 1000);
		ia_net_switch_ns(tag, t->sw[v].name, ns, sizeof(ns));
		ret = ip_batch(ns, "tc", &sb, err, errlen);
		if (ret)
			goto out;
	}
out:
	free(sb.s);
	return ret;
}

int ia_net_up(const struct ia_topo *t, const struct ia_net_opts *o, char *err, size_t errlen)
{
	char **names, dummy[IA_ERRLEN];
	int cnt, ret;

	if (!ia_net_tag_valid(o->tag))
		return ia_fail(err, errlen, -EINVAL, "network tag \"%s\": use 1 to %d of [a-z0-9]",
			       o->tag, IA_NET_TAG_MAX);
	/* Switch names were checked when the topology was finalised (topo.h). */
	if (ia_topo_total_load(t) > (1u << 20) || t->n > (1 << 20))
		return ia_fail(err, errlen, -E2BIG, "topology too large for namespaces");
	cnt = list_ns(o->tag, &names);
	for (int i = 0; i < cnt; i++)
		free(names[i]);
	free(names);
	if (cnt > 0)
		return ia_fail(err, errlen, -EEXIST,
			       "network \"%s\" is already up (inagg net down first)", o->tag);
	ret = build(t, o, err, errlen);
	if (ret)	/* nothing half-built is left behind */
		ia_net_down(o->tag, dummy, sizeof(dummy));
	return ret;
}
