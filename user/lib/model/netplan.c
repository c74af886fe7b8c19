// SPDX-License-Identifier: GPL-2.0
/* Names, numbers and addresses of an inagg network; see netplan.h. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "netplan.h"

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

char *ia_port_name(enum ia_port_kind kind, int i, char buf[IFNAMSIZ])
{
	if (kind == IA_PORT_UPLINK)
		snprintf(buf, IFNAMSIZ, IA_PORT_UP);
	else
		snprintf(buf, IFNAMSIZ, "%c%d", kind == IA_PORT_CHILD ? 'd' : 'h', i);
	return buf;
}

int ia_port_count(const struct ia_topo *t, int v)
{
	return 1 + (t->child_start[v + 1] - t->child_start[v]) + (int)t->sw[v].load;
}

char *ia_port_nth(const struct ia_topo *t, int v, int p, char buf[IFNAMSIZ])
{
	int nc = t->child_start[v + 1] - t->child_start[v];

	if (p == 0)
		return ia_port_name(IA_PORT_UPLINK, 0, buf);
	if (p <= nc)
		return ia_port_name(IA_PORT_CHILD, p - 1, buf);
	return ia_port_name(IA_PORT_HOST, p - 1 - nc, buf);
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

bool ia_net_tag_valid(const char *tag)
{
	size_t n = strlen(tag);

	return n && n <= IA_NET_TAG_MAX && strspn(tag, "abcdefghijklmnopqrstuvwxyz0123456789") == n;
}
