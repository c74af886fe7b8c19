/* SPDX-License-Identifier: GPL-2.0 */
/* Entering the network namespaces of an inagg network and reading its ports. */
#ifndef INAGG_NETNS_H
#define INAGG_NETNS_H

#define IA_NETNS_DIR "/run/netns"

/*
 * Moves the calling thread into network namespace ns (a name under
 * /run/netns, or NULL to stay). Returns a handle for ia_netns_return(), or a
 * negative errno.
 */
int ia_netns_enter(const char *ns);
/*
 * Returns to the namespace of the handle (< 0: nothing to do) and closes it.
 * 0 or -errno; on failure the thread is still in the other namespace and must
 * not carry on as if it were back.
 */
int ia_netns_return(int handle);

/* Index and MAC (may be NULL) of an interface of the current namespace. */
int ia_if_info(const char *ifname, int *ifindex, unsigned char mac[6]);

#endif
