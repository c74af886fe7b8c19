/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A topology built as network namespaces: one per switch, L(v) worker hosts
 * per switch, the destination host above the root, veth links, routed IPv4.
 *
 * Names: namespaces "ia-<tag>-<switch>", "ia-<tag>-<switch>-w<j>" and
 * "ia-<tag>-dest". In a switch namespace the uplink is "up", the link to its
 * i-th child "d<i>", the link to its j-th worker "h<j>"; hosts use "eth0".
 *
 * Addresses (all inside the namespaces, nothing outside is touched):
 *   uplink of switch v:  10.64.0.0 + 4v  /30, .1 upper end, .2 switch end
 *   link of worker g:    10.128.0.0 + 4g /30, .1 switch end, .2 worker
 * (g numbers the workers switch by switch, in topology order). The
 * destination is the upper end of the root's uplink.
 */
#ifndef INAGG_NETBUILD_H
#define INAGG_NETBUILD_H

#include <netinet/in.h>

#include "topo.h"

#define IA_NET_TAG_MAX 8

struct ia_net_opts {
	const char *tag;	/* short name of this network, [a-z0-9]{1,8} */
	double rate_mbit;	/* > 0: each uplink shaped to rate * rate_mbit Mbit/s */
};

int ia_net_up(const struct ia_topo *t, const struct ia_net_opts *o, char *err, size_t errlen);
/* Removes every namespace of the network tag; fine if some are gone. */
int ia_net_down(const char *tag, char *err, size_t errlen);

void ia_net_switch_ns(const char *tag, const char *sw, char *buf, size_t len);
void ia_net_worker_ns(const char *tag, const char *sw, int j, char *buf, size_t len);
void ia_net_dest_ns(const char *tag, char *buf, size_t len);

/* Global worker number g of worker j of switch v. */
int ia_net_worker_index(const struct ia_topo *t, int v, int j);
struct in_addr ia_net_worker_addr(int g);
struct in_addr ia_net_worker_gw(int g);		/* switch end of the worker's link */
struct in_addr ia_net_uplink_addr(int v, bool upper);
struct in_addr ia_net_dest_addr(const struct ia_topo *t);

/*
 * Moves the calling thread into network namespace ns (a name under
 * /run/netns, or NULL to stay). Returns a handle for ia_netns_return(), or a
 * negative errno.
 */
int ia_netns_enter(const char *ns);
void ia_netns_return(int handle);

/* Index and MAC of an interface of the current namespace. */
int ia_if_info(const char *ifname, int *ifindex, unsigned char mac[6]);

#endif
