// SPDX-License-Identifier: GPL-2.0
/*
 * The user-space ledger's lock (issue 11, point 2): only who may change the
 * ledger can open its lock, and a held lock makes a change fail after a
 * bounded wait instead of blocking it forever. Each test uses a ledger
 * folder of its own ($INAGG_LEDGER_DIR), in the caller's namespace.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "skip.h"
#include "err.h"
#include "ledger.h"

/* The reason of this thread's last ledger call: the caller's buffer (ledger.h). */
static __thread char why[IA_ERRLEN];
#define WHY why, sizeof(why)

#define NOBODY 65534

FIXTURE(uledger)
{
	char base[64];
	char dir[96];
	char lock[PATH_MAX];
	struct ia_ledger *l;
};

FIXTURE_SETUP(uledger)
{
	struct dirent *e;
	DIR *d;

	if (geteuid())
		SETUP_SKIP("changing a ledger needs root (CAP_NET_ADMIN)");
	strcpy(self->base, "/tmp/ia-uledger-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->base));
	ASSERT_EQ(0, chmod(self->base, 0755));
	/* The ledger makes its folder itself. */
	snprintf(self->dir, sizeof(self->dir), "%s/run", self->base);
	ASSERT_EQ(0, setenv("INAGG_LEDGER_DIR", self->dir, 1));
	ASSERT_EQ(0, setenv("INAGG_LEDGER", "user", 1));
	ASSERT_EQ(0, ia_ledger_open(&self->l, IA_LEDGER_USER, NULL));
	ASSERT_EQ(0, ia_ledger_admit(self->l, 1, 8, WHY));
	d = opendir(self->dir);
	ASSERT_NE(NULL, d);
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".lock"))
			snprintf(self->lock, sizeof(self->lock), "%s/%s", self->dir, e->d_name);
	closedir(d);
	ASSERT_NE(0, self->lock[0]);
}

FIXTURE_TEARDOWN(uledger)
{
	char cmd[128];

	ia_ledger_close(self->l);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->base);
	if (self->base[0])
		system(cmd);
}

TEST_F(uledger, lock_is_0600_in_a_0700_folder)
{
	struct stat st;

	ASSERT_EQ(0, stat(self->dir, &st));
	EXPECT_EQ(0700, st.st_mode & 0777);
	ASSERT_EQ(0, stat(self->lock, &st));
	EXPECT_EQ(0600, st.st_mode & 0777);
}

/* Another user cannot open the lock, so cannot hold it (flock needs only a read descriptor). */
TEST_F(uledger, unprivileged_user_cannot_take_the_lock)
{
	int status;
	pid_t pid;

	/* Even with the folder open to all, the file itself refuses. */
	ASSERT_EQ(0, chmod(self->dir, 0755));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			_exit(10);
		fd = open(self->lock, O_RDONLY);
		if (fd >= 0 && !flock(fd, LOCK_EX | LOCK_NB))
			_exit(11);	/* it could have frozen every change */
		_exit(errno == EACCES ? 0 : 12);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* And the changes of who may make them go on. */
	EXPECT_EQ(0, ia_ledger_admit(self->l, 2, 8, WHY));
}

/* A lock file left readable by an older version is made 0600 at the next change. */
TEST_F(uledger, old_open_lock_file_is_closed_to_others)
{
	struct stat st;

	ASSERT_EQ(0, chmod(self->lock, 0644));
	ASSERT_EQ(0, ia_ledger_admit(self->l, 3, 8, WHY));
	ASSERT_EQ(0, stat(self->lock, &st));
	EXPECT_EQ(0600, st.st_mode & 0777);
}

/* A holder that never lets go: changes fail with a reason after a bounded wait; reads go on. */
TEST_F(uledger, held_lock_fails_changes_after_a_bounded_wait)
{
	struct ia_ledger_cap cap;
	int status, pipefd[2];
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = open(self->lock, O_RDONLY);

		if (fd < 0 || flock(fd, LOCK_EX))
			_exit(1);
		write(pipefd[1], "x", 1);
		pause();	/* holds it until killed */
		_exit(0);
	}
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	/* Returns at all: a wait without end would trip the harness's timeout. */
	EXPECT_EQ(-EWOULDBLOCK, ia_ledger_admit(self->l, 4, 8, WHY));
	EXPECT_NE(NULL, strstr(why, "ledger busy"))
		TH_LOG("reason: %s", why);
	EXPECT_EQ(-EWOULDBLOCK, ia_ledger_release(self->l, 1, WHY));
	EXPECT_EQ(-EWOULDBLOCK, ia_ledger_set(self->l, 4, IA_LEDGER_KEEP, WHY));
	/* Reads need no lock. */
	ASSERT_EQ(0, ia_ledger_get(self->l, &cap, WHY));
	EXPECT_EQ(1, cap.used_jobs);
	EXPECT_EQ(8, cap.used_slots);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* Released: changes work again. */
	EXPECT_EQ(0, ia_ledger_admit(self->l, 4, 8, WHY));
}

/*
 * A holder that keeps saving changes (many admitters in a row) is progress,
 * not a stuck lock: the wait goes on past IA_ULEDGER_LOCK_MS without a change
 * failing (16 concurrent admitters starved a waiter into "ledger busy").
 */
TEST_F(uledger, wait_goes_on_while_the_holder_saves_changes)
{
	int status, pipefd[2], rounds = 4 * IA_ULEDGER_LOCK_MS / 500;
	char state[PATH_MAX], tmp[PATH_MAX + 8], c;
	pid_t pid;

	snprintf(state, sizeof(state), "%.*s", (int)(strlen(self->lock) - strlen(".lock")),
		 self->lock);
	snprintf(tmp, sizeof(tmp), "%s.hold", state);
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = open(self->lock, O_RDONLY);
		char buf[4096];
		ssize_t n;

		if (fd < 0 || flock(fd, LOCK_EX))
			_exit(1);
		write(pipefd[1], "x", 1);
		/* Rewrites the state as a change would, for twice the bound. */
		for (int i = 0; i < rounds; i++) {
			int in = open(state, O_RDONLY), out;

			n = in < 0 ? -1 : read(in, buf, sizeof(buf));
			close(in);
			out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (n < 0 || out < 0 || write(out, buf, n) != n || close(out) ||
			    rename(tmp, state))
				_exit(2);
			usleep(500 * 1000 / 2);
		}
		_exit(0);
	}
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	EXPECT_EQ(0, ia_ledger_admit(self->l, 4, 8, WHY)) TH_LOG("%s", why);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
}

TEST_HARNESS_MAIN
