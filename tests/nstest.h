/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the tests and benchmarks that build network namespaces. */
#ifndef INAGG_TESTS_NSTEST_H
#define INAGG_TESTS_NSTEST_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Runs a shell command; 0 if it succeeded, else -1 and the command is logged. */
static inline int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	ret = system(cmd);
	if (ret)
		fprintf(stderr, "# command failed (%d): %s\n", ret, cmd);
	return ret ? -1 : 0;
}

/* Moves the calling thread into /run/netns/ns (NULL: stays). 0 or -errno. */
static inline int enter_ns(const char *ns)
{
	char path[256];
	int fd, ret;

	if (!ns)
		return 0;
	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = setns(fd, CLONE_NEWNET) ? -errno : 0;
	close(fd);
	return ret;
}

#endif
