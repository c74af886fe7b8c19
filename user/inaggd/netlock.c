// SPDX-License-Identifier: GPL-2.0
/*
 * One daemon per network: two would each push their own job ids into the
 * same switches' maps. The claim is an exclusive flock(2) on
 * IA_RUN_DIR/inaggd-TAG.lock (by tag, not by socket or state file), held
 * as long as the process lives. The file holds no state (a pid, for the
 * message of a second daemon): whoever removes it does so while holding
 * its lock, and a daemon that locked a file removed meanwhile takes the
 * new one, so a removal never lets two daemons hold one network. Also the
 * run directory's leftovers of earlier daemons: their lock files and their
 * agents' records.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inaggd.h"
#include "netns.h"
#include "netplan.h"

#define CLAIM_TRIES	100	/* 10 ms apart: a cleaner holds a file for microseconds */

/* The network's lock file, removed at exit by the process that holds it. */
static char net_lock[PATH_MAX];
static pid_t net_lock_pid;

static void release_network(void)
{
	/* Unlinked while still locked: nobody can take the old file after this. */
	if (getpid() == net_lock_pid)
		unlink(net_lock);
}

/* Whether fd is the file path names now (not one removed meanwhile). */
static bool still_named(int fd, const char *path)
{
	struct stat held, named;

	return !fstat(fd, &held) && !stat(path, &named) && held.st_dev == named.st_dev &&
	       held.st_ino == named.st_ino;
}

/*
 * Its file goes at exit (thousands of test tags piled up in /run/inagg); a
 * daemon that locked a file unlinked meanwhile tries again with the new one.
 * A file locked by someone else is tried again for a second: another
 * daemon's drop_stale_locks() holds a file only to remove it.
 */
int claim_network(const char *tag, char *err, size_t errlen)
{
	char path[PATH_MAX], pid[32] = "";
	int fd, n, tries = 0;

	mkdir(IA_RUN_DIR, 0700);
	snprintf(path, sizeof(path), IA_RUN_DIR "/inaggd-%s.lock", tag);
	for (;;) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return ia_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			if (errno == EWOULDBLOCK && ++tries < CLAIM_TRIES) {
				close(fd);
				usleep(10000);
				continue;
			}
			n = errno == EWOULDBLOCK ? pread(fd, pid, sizeof(pid) - 1, 0) : -1;
			close(fd);
			if (n < 0)
				return ia_fail(err, errlen, -errno, "%s: %s", path,
					       strerror(errno));
			pid[strcspn(pid, "\n")] = '\0';
			return ia_fail(err, errlen, -EBUSY,
				       "network '%s' already has its daemon (pid %s): one per network",
				       tag, *pid ? pid : "?");
		}
		if (still_named(fd, path))
			break;
		close(fd);	/* its daemon exited and removed it: take the new one */
	}
	n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, n, 0) != n)
		log_msg(IA_LOG_WARN, "%s: %s", path, strerror(errno));
	strcpy(net_lock, path);
	net_lock_pid = getpid();
	atexit(release_network);
	return fd;	/* held until exit */
}

/*
 * The tag of an "inaggd-TAG.lock" file name, or false. Tags that are not
 * valid (daemons once claimed before checking it) name no network at all.
 */
static bool lock_tag(const char *name, char *tag, size_t len)
{
	size_t n = strlen(name);

	if (n < 12 || strncmp(name, "inaggd-", 7) || strcmp(name + n - 5, ".lock") ||
	    n - 12 >= len)
		return false;
	memcpy(tag, name + 7, n - 12);
	tag[n - 12] = '\0';
	return true;
}

/*
 * Daemons before e176a68 left their lock files at exit (1,650 of them on a
 * test machine). Removed here: a file nobody holds (a non-blocking flock
 * succeeds), of a network that is not up on this host (no namespace
 * ia-TAG-dest: no daemon of it can be starting) or of no valid tag, unlinked while locked and
 * still the one its name gives. A daemon of that tag starting meanwhile
 * either waits out the moment it is held (claim_network()) or finds it
 * removed and creates a new one.
 */
void drop_stale_locks(void)
{
	char tag[NAME_MAX + 1], ns[NAME_MAX + 16], path[PATH_MAX];
	struct dirent *e;
	int fd, n = 0;
	DIR *d;

	d = opendir(IA_RUN_DIR);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!lock_tag(e->d_name, tag, sizeof(tag)))
			continue;
		ia_net_dest_ns(tag, ns, sizeof(ns));
		snprintf(path, sizeof(path), IA_NETNS_DIR "/%s", ns);
		if (ia_net_tag_valid(tag) && !access(path, F_OK))
			continue;
		snprintf(path, sizeof(path), IA_RUN_DIR "/%s", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (!flock(fd, LOCK_EX | LOCK_NB) && still_named(fd, path) && !unlink(path))
			n++;
		close(fd);
	}
	closedir(d);
	if (n)
		log_msg(IA_LOG_INFO, "removed %d lock files of earlier daemons of networks not up", n);
}

/*
 * The records agents of namespaces keep (IA_RUN_DIR/agent-NS.json, and
 * .json.tmp while written) of namespaces that are gone: no agent can use
 * them (a record of another namespace is ignored), and net up drops only
 * its own tag's, so those of networks never set up again piled up (4,250
 * on a test machine). An agent writes its record only while its namespace
 * exists, so a record whose namespace is missing is nobody's.
 */
void drop_stale_records(void)
{
	char ns[NAME_MAX + 1], path[PATH_MAX];
	struct dirent *e;
	int n = 0;
	DIR *d;

	d = opendir(IA_RUN_DIR);
	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name), k;

		if (strncmp(e->d_name, "agent-ia-", 9))
			continue;
		if (len > 5 && !strcmp(e->d_name + len - 5, ".json"))
			k = len - 5;
		else if (len > 9 && !strcmp(e->d_name + len - 9, ".json.tmp"))
			k = len - 9;
		else
			continue;
		snprintf(ns, sizeof(ns), "%.*s", (int)(k - 6), e->d_name + 6);
		snprintf(path, sizeof(path), IA_NETNS_DIR "/%s", ns);
		if (!access(path, F_OK) || errno != ENOENT)
			continue;
		snprintf(path, sizeof(path), IA_RUN_DIR "/%s", e->d_name);
		n += !unlink(path);
	}
	closedir(d);
	if (n)
		log_msg(IA_LOG_INFO, "removed %d agent records of namespaces that are gone", n);
}
