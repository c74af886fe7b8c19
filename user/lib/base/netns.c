// SPDX-License-Identifier: GPL-2.0
/* Namespace switching and interface lookups; see netns.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netns.h"

int ia_netns_enter(const char *ns)
{
	char path[PATH_MAX];
	int self, fd;

	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return -errno;
	if (!ns)
		return self;
	snprintf(path, sizeof(path), IA_NETNS_DIR "/%s", ns);
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

int ia_netns_return(int handle)
{
	int ret = 0;

	if (handle < 0)
		return 0;
	if (setns(handle, CLONE_NEWNET))
		ret = -errno;
	close(handle);
	return ret;
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
