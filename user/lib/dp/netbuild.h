/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test rig of `inagg net up`: a topology built as network namespaces,
 * one per switch, L(v) worker hosts per switch and the destination host
 * above the root, veth links and routed IPv4, all named and addressed as
 * netplan.h says.
 */
#ifndef INAGG_NETBUILD_H
#define INAGG_NETBUILD_H

#include "netns.h"
#include "netplan.h"

/*
 * The largest MTU XDP takes on a veth without multi-buffer, as on Debian
 * 12's 6.1: a frame and the XDP headroom in a page.
 */
#define IA_NET_MTU_MAX	3506

struct ia_net_opts {
	const char *tag;	/* short name of this network, [a-z0-9]{1,8} */
	double rate_mbit;	/* > 0: each uplink shaped to rate * rate_mbit Mbit/s */
	unsigned int mtu;	/* > 0: every link's MTU (larger chunks, wire.h) */
};

/* Builds the network; on failure nothing of it is left. 0 or -errno. */
int ia_net_up(const struct ia_topo *t, const struct ia_net_opts *o, char *err, size_t errlen);
/* Removes every namespace of the network tag; fine if some are gone. */
int ia_net_down(const char *tag, char *err, size_t errlen);

#endif
