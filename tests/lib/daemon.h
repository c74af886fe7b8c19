/* SPDX-License-Identifier: GPL-2.0 */
/* inaggd of the build tree, started by a test on its network. */
#ifndef INAGG_TESTS_DAEMON_H
#define INAGG_TESTS_DAEMON_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl.h"

struct test_daemon {
	const char *build;	/* the build folder, where inaggd is */
	const char *topo;	/* -t */
	const char *tag;	/* -n: the network's namespaces */
	const char *sock;	/* -s */
	const char *state;	/* -S */
	const char *log;	/* its stderr, appended */
	bool kernel_fwd;	/* -K */
};

/* Forks inaggd as d says: its pid, or -1. It does not wait for the daemon to answer. */
static inline pid_t daemon_fork(const struct test_daemon *d)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		char bin[PATH_MAX + 16];

		/*
		 * Dies with its test: one killed at its timeout skips the teardown,
		 * and a daemon left running keeps the network and the test lock.
		 */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fd, 2);
		snprintf(bin, sizeof(bin), "%s/inaggd", d->build);
		execl(bin, "inaggd", "-t", d->topo, "-n", d->tag, "-s", d->sock, "-S", d->state,
		      d->kernel_fwd ? "-K" : NULL, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/*
 * Waits until the daemon pid (daemon_fork()'s) answers on sock, wait_ms at
 * most: pid, or -1 (it exited, or never answered and was killed; reaped).
 */
static inline pid_t daemon_wait(pid_t pid, const char *sock, int wait_ms)
{
	if (pid < 0)
		return -1;
	switch (ia_ctl_wait(sock, pid, wait_ms)) {
	case 0:
		return pid;
	case -ECHILD:
		return -1;	/* exited, and reaped */
	}
	/* Never ready: not left running behind the test. */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

#endif
