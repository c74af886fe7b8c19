/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The layout of an inagg network, the one place that knows it: how
 * namespaces, ports and hosts are named, how workers are numbered, which
 * addresses they get, and the sender ids messages carry. The test rig
 * (netbuild.h), the daemon, the CLI and the plan all follow it.
 *
 * Namespaces: "ia-<tag>-<switch>", "ia-<tag>-<switch>-w<j>", "ia-<tag>-dest".
 * Ports of a switch: its uplink "up", the link to its i-th child "d<i>", the
 * link to its j-th worker "h<j>"; hosts use "eth0".
 *
 * Workers: worker j of switch v has the global number g = first worker of v
 * + j, numbered switch by switch in topology (index) order.
 *
 * Addresses (all inside the namespaces, nothing outside is touched):
 *   uplink of switch v:  10.64.0.0 + 4v  /30, .1 upper end, .2 switch end
 *   link of worker g:    10.128.0.0 + 4g /30, .1 switch end, .2 worker
 * The destination is the upper end of the root's uplink.
 *
 * Sender ids (worker g is g + 1, switch v IA_SENDER_SWITCH | v) and the
 * sender a plan lists, struct ia_sender: sender.h.
 */
#ifndef INAGG_NETPLAN_H
#define INAGG_NETPLAN_H

#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "sender.h"
#include "topo.h"

#define IA_NET_TAG_MAX 8
#define IA_PORT_UP "up"
#define IA_HOST_PORT "eth0"

void ia_net_switch_ns(const char *tag, const char *sw, char *buf, size_t len);
void ia_net_worker_ns(const char *tag, const char *sw, int j, char *buf, size_t len);
void ia_net_dest_ns(const char *tag, char *buf, size_t len);

enum ia_port_kind {
	IA_PORT_UPLINK,		/* "up" */
	IA_PORT_CHILD,		/* "d<i>": to the i-th child */
	IA_PORT_HOST,		/* "h<i>": to the i-th worker */
};

/* Name of a switch's port; returns buf. */
char *ia_port_name(enum ia_port_kind kind, int i, char buf[IFNAMSIZ]);
/* Ports of switch v: uplink, children, workers. */
int ia_port_count(const struct ia_topo *t, int v);
/* The p-th port of switch v in that order (0 is the uplink); returns buf. */
char *ia_port_nth(const struct ia_topo *t, int v, int p, char buf[IFNAMSIZ]);

/* Global worker number g of worker j of switch v; O(1). */
static inline int ia_net_worker_index(const struct ia_topo *t, int v, int j)
{
	return t->first_worker[v] + j;
}

struct in_addr ia_net_worker_addr(int g);
struct in_addr ia_net_worker_gw(int g);		/* switch end of the worker's link */
struct in_addr ia_net_uplink_addr(int v, bool upper);
struct in_addr ia_net_dest_addr(const struct ia_topo *t);

/* A network tag: 1 to IA_NET_TAG_MAX of [a-z0-9]. */
bool ia_net_tag_valid(const char *tag);

#endif
