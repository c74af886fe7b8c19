// SPDX-License-Identifier: GPL-2.0
/* Builds a topology as network namespaces with iproute2 (see netbuild.h). */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <limits.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netbuild.h"

#define NS_DIR "/run/netns"

struct sbuf {
	char *s;
	size_t len, cap;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if (b->s && b->len + n < b->cap) {
			b->len += n;
			return;
		}
		size_t cap = b->cap ? b->cap * 2 : 4096;

		while (cap < b->len + n + 1)
			cap *= 2;
		char *s = realloc(b->s, cap);

		if (!s)
			abort();
		b->s = s;
		b->cap = cap;
	}
}

static void set_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
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
	set_err(err, errlen, "%s: %s", argv[0], *msg ? msg : "failed");
	return -EIO;
}

static int ip_batch(const char *ns, const char *tool, const char *script, char *err,
		    size_t errlen)
{
	char *argv[] = { (char *)tool, "-n", (char *)ns, "-batch", "-", NULL };

	if (!ns) {
		argv[1] = "-batch";
		argv[2] = "-";
		argv[3] = NULL;
	}
	return run_tool(argv, script, err, errlen);
}

void ia_net_switch_ns(const char *tag, const char *sw, char *buf, size_t len)
{
	snprintf(buf, len, "ia-%s-%s", tag, sw);
}

void ia_net_worker_ns(const char *tag, const char *sw, int j, char *buf, size_t len)
{
	snprintf(buf, len, "ia-%s-%s-w%d", tag, sw, j);
}

void ia_net_dest_ns(const char *tag, char *buf, size_t len)
{
	snprintf(buf, len, "ia-%s-dest", tag);
}

int ia_net_worker_index(const struct ia_topo *t, int v, int j)
{
	int g = 0;

	for (int u = 0; u < v; u++)
		g += t->sw[u].load;
	return g + j;
}

static struct in_addr addr_of(uint32_t host_order)
{
	return (struct in_addr){ htonl(host_order) };
}

struct in_addr ia_net_worker_addr(int g)
{
	return addr_of(0x0a800000u + 4u * g + 2);
}

struct in_addr ia_net_worker_gw(int g)
{
	return addr_of(0x0a800000u + 4u * g + 1);
}

struct in_addr ia_net_uplink_addr(int v, bool upper)
{
	return addr_of(0x0a400000u + 4u * v + (upper ? 1 : 2));
}

struct in_addr ia_net_dest_addr(const struct ia_topo *t)
{
	return ia_net_uplink_addr(t->root, true);
}

static const char *a2s(struct in_addr a, char *buf)
{
	return inet_ntop(AF_INET, &a, buf, INET_ADDRSTRLEN);
}

static bool valid_tag(const char *tag)
{
	size_t n = strlen(tag);

	return n && n <= IA_NET_TAG_MAX && strspn(tag, "abcdefghijklmnopqrstuvwxyz0123456789") == n;
}

/* Names become namespace names: keep them to a safe alphabet. */
static bool valid_name(const char *s)
{
	size_t n = strlen(s);

	return n && n <= 64 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") == n;
}

/* Namespaces of a tag, or of any inagg network when tag is NULL. */
static int list_ns(const char *tag, char ***names)
{
	char prefix[32];
	struct dirent *d;
	int cnt = 0, cap = 0;
	DIR *dir;

	*names = NULL;
	snprintf(prefix, sizeof(prefix), "ia-%s-", tag);
	dir = opendir(NS_DIR);
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
		(*names)[cnt++] = strdup(d->d_name);
	}
	closedir(dir);
	return cnt;
}

int ia_net_down(const char *tag, char *err, size_t errlen)
{
	struct sbuf sb = { 0 };
	char **names;
	int cnt, ret = 0;

	if (!valid_tag(tag)) {
		set_err(err, errlen, "network tag \"%s\": use 1 to %d of [a-z0-9]", tag,
			IA_NET_TAG_MAX);
		return -EINVAL;
	}
	cnt = list_ns(tag, &names);
	if (cnt < 0) {
		set_err(err, errlen, "%s: %s", NS_DIR, strerror(-cnt));
		return cnt;
	}
	for (int i = 0; i < cnt; i++) {
		sb_printf(&sb, "netns del %s\n", names[i]);
		free(names[i]);
	}
	free(names);
	if (cnt)
		ret = ip_batch(NULL, "ip", sb.s, err, errlen);
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
			snprintf(path, sizeof(path), NS_DIR "/%s", ns);
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
	set_err(err, errlen, "cannot enable IPv4 forwarding in the switch namespaces");
	return -EIO;
}

static int build(const struct ia_topo *t, const struct ia_net_opts *o, char *err, size_t errlen)
{
	const char *tag = o->tag;
	char ns[128], peer[128], a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
	struct sbuf root = { 0 }, sb = { 0 };
	int ret, *first = malloc((t->n + 1) * sizeof(int));

	if (!first)
		return -ENOMEM;
	for (int v = 0, g = 0; v <= t->n; v++) {
		first[v] = g;	/* first global worker number of switch v */
		if (v < t->n)
			g += t->sw[v].load;
	}

	/* Namespaces and veth pairs, created directly inside the namespaces. */
	ia_net_dest_ns(tag, ns, sizeof(ns));
	sb_printf(&root, "netns add %s\n", ns);
	for (int v = 0; v < t->n; v++) {
		ia_net_switch_ns(tag, t->sw[v].name, ns, sizeof(ns));
		sb_printf(&root, "netns add %s\n", ns);
		for (uint32_t j = 0; j < t->sw[v].load; j++) {
			ia_net_worker_ns(tag, t->sw[v].name, j, peer, sizeof(peer));
			sb_printf(&root, "netns add %s\n", peer);
		}
	}
	for (int v = 0; v < t->n; v++) {
		ia_net_switch_ns(tag, t->sw[v].name, ns, sizeof(ns));
		if (t->sw[v].parent < 0) {
			ia_net_dest_ns(tag, peer, sizeof(peer));
			sb_printf(&root, "link add name up netns %s type veth peer name eth0 netns %s\n", ns,
				  peer);
		} else {
			ia_net_switch_ns(tag, t->sw[t->sw[v].parent].name, peer, sizeof(peer));
			sb_printf(&root, "link add name up netns %s type veth peer name d%d netns %s\n", ns,
				  ia_topo_child_pos(t, v), peer);
		}
		for (uint32_t j = 0; j < t->sw[v].load; j++) {
			ia_net_worker_ns(tag, t->sw[v].name, j, peer, sizeof(peer));
			sb_printf(&root, "link add name h%u netns %s type veth peer name eth0 netns %s\n", j,
				  ns, peer);
		}
	}
	ret = ip_batch(NULL, "ip", root.s, err, errlen);
	if (ret)
		goto out;

	/* Switches: addresses, default route up, a host route down per worker below. */
	for (int v = 0; v < t->n; v++) {
		sb.len = 0;
		sb_printf(&sb, "link set lo up\naddr add %s/30 dev up\nlink set dev up up\n",
			  a2s(ia_net_uplink_addr(v, false), a));
		sb_printf(&sb, "route add default via %s dev up\n",
			  a2s(ia_net_uplink_addr(v, true), a));
		for (int c = t->child_start[v]; c < t->child_start[v + 1]; c++) {
			int u = t->child[c], i = c - t->child_start[v];

			sb_printf(&sb, "addr add %s/30 dev d%d\nlink set dev d%d up\n",
				  a2s(ia_net_uplink_addr(u, true), a), i, i);
		}
		for (uint32_t j = 0; j < t->sw[v].load; j++)
			sb_printf(&sb, "addr add %s/30 dev h%u\nlink set dev h%u up\n",
				  a2s(ia_net_worker_gw(first[v] + j), a), j, j);
		ia_net_switch_ns(tag, t->sw[v].name, ns, sizeof(ns));
		ret = ip_batch(ns, "ip", sb.s, err, errlen);
		if (ret)
			goto out;
	}
	/* Every worker's address, routed on each ancestor toward its subtree. */
	for (int w = 0; w < t->n; w++) {
		for (int u = w; t->sw[u].parent >= 0; u = t->sw[u].parent) {
			int p = t->sw[u].parent;

			if (!t->sw[w].load)
				break;
			sb.len = 0;
			for (uint32_t j = 0; j < t->sw[w].load; j++)
				sb_printf(&sb, "route add %s/32 via %s dev d%d\n",
					  a2s(ia_net_worker_addr(first[w] + j), a),
					  a2s(ia_net_uplink_addr(u, false), b), ia_topo_child_pos(t, u));
			ia_net_switch_ns(tag, t->sw[p].name, ns, sizeof(ns));
			ret = ip_batch(ns, "ip", sb.s, err, errlen);
			if (ret)
				goto out;
		}
	}
	/* Hosts. */
	for (int v = 0; v < t->n; v++) {
		for (uint32_t j = 0; j < t->sw[v].load; j++) {
			int g = first[v] + j;

			sb.len = 0;
			sb_printf(&sb, "link set lo up\naddr add %s/30 dev eth0\nlink set dev eth0 up\n",
				  a2s(ia_net_worker_addr(g), a));
			sb_printf(&sb, "route add default via %s dev eth0\n",
				  a2s(ia_net_worker_gw(g), a));
			ia_net_worker_ns(tag, t->sw[v].name, j, ns, sizeof(ns));
			ret = ip_batch(ns, "ip", sb.s, err, errlen);
			if (ret)
				goto out;
		}
	}
	sb.len = 0;
	sb_printf(&sb, "link set lo up\naddr add %s/30 dev eth0\nlink set dev eth0 up\n",
		  a2s(ia_net_dest_addr(t), a));
	sb_printf(&sb, "route add default via %s dev eth0\n",
		  a2s(ia_net_uplink_addr(t->root, false), a));
	ia_net_dest_ns(tag, ns, sizeof(ns));
	ret = ip_batch(ns, "ip", sb.s, err, errlen);
	if (ret)
		goto out;
	ret = enable_forwarding(t, tag, err, errlen);
	if (ret || o->rate_mbit <= 0)
		goto out;

	/* Rate emulation on each uplink (applies to traffic the kernel forwards). */
	for (int v = 0; v < t->n; v++) {
		double mbit = ia_ratio_double(t->sw[v].rate) * o->rate_mbit;

		sb.len = 0;
		sb_printf(&sb, "qdisc add dev up root tbf rate %.0fkbit burst 16kb latency 1s\n",
			  mbit * 1000 < 8 ? 8 : mbit * 1000);
		ia_net_switch_ns(tag, t->sw[v].name, ns, sizeof(ns));
		ret = ip_batch(ns, "tc", sb.s, err, errlen);
		if (ret)
			goto out;
	}
out:
	free(root.s);
	free(sb.s);
	free(first);
	return ret;
}

int ia_net_up(const struct ia_topo *t, const struct ia_net_opts *o, char *err, size_t errlen)
{
	char **names, dummy[IA_ERRLEN];
	int cnt, ret;

	if (!valid_tag(o->tag)) {
		set_err(err, errlen, "network tag \"%s\": use 1 to %d of [a-z0-9]", o->tag,
			IA_NET_TAG_MAX);
		return -EINVAL;
	}
	for (int v = 0; v < t->n; v++) {
		if (!valid_name(t->sw[v].name) || !strcmp(t->sw[v].name, "dest")) {
			set_err(err, errlen,
				"switch \"%s\": field \"name\": must be [A-Za-z0-9_.], at most 64, not \"dest\", to name a namespace",
				t->sw[v].name);
			return -EINVAL;
		}
	}
	if (ia_topo_total_load(t) > (1u << 20) || t->n > (1 << 20)) {
		set_err(err, errlen, "topology too large for namespaces");
		return -E2BIG;
	}
	cnt = list_ns(o->tag, &names);
	for (int i = 0; i < cnt; i++)
		free(names[i]);
	free(names);
	if (cnt > 0) {
		set_err(err, errlen, "network \"%s\" is already up (inagg topo down first)", o->tag);
		return -EEXIST;
	}
	ret = build(t, o, err, errlen);
	if (ret)	/* nothing half-built is left behind */
		ia_net_down(o->tag, dummy, sizeof(dummy));
	return ret;
}

int ia_netns_enter(const char *ns)
{
	char path[PATH_MAX];
	int self, fd;

	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return -errno;
	if (!ns)
		return self;
	snprintf(path, sizeof(path), NS_DIR "/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		int err = -errno;

		if (fd >= 0)
			close(fd);
		close(self);
		return err;
	}
	close(fd);
	return self;
}

void ia_netns_return(int handle)
{
	if (handle < 0)
		return;
	if (setns(handle, CLONE_NEWNET))
		abort();	/* carrying on in the wrong namespace would be worse */
	close(handle);
}

int ia_if_info(const char *ifname, int *ifindex, unsigned char mac[6])
{
	struct ifreq ifr = { 0 };
	int fd, ret = 0;

	if (strlen(ifname) >= IFNAMSIZ)
		return -ENAMETOOLONG;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	strcpy(ifr.ifr_name, ifname);
	if (ioctl(fd, SIOCGIFINDEX, &ifr))
		ret = -errno;
	else
		*ifindex = ifr.ifr_ifindex;
	if (!ret && mac) {
		if (ioctl(fd, SIOCGIFHWADDR, &ifr))
			ret = -errno;
		else
			memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	}
	close(fd);
	return ret;
}
