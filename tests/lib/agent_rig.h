/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A switch agent for a test (user/agent/agent.h): a folder of its own under
 * /tmp holding the user-space ledger and the agent's record, in the
 * caller's namespace. Changing a ledger needs root: skip before setting up.
 */
#ifndef INAGG_TESTS_AGENT_RIG_H
#define INAGG_TESTS_AGENT_RIG_H

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent.h"

struct agent_rig {
	char dir[64];		/* "" until set up */
	char state[128];	/* the agent's record */
	struct ia_agent a;
};

/* 0, or a negative errno and why in err. */
static inline int agent_rig_setup(struct agent_rig *r, const char *sw, char *err, size_t errlen)
{
	char ledger[128];

	snprintf(r->dir, sizeof(r->dir), "/tmp/ia-agent-XXXXXX");
	if (!mkdtemp(r->dir)) {
		snprintf(err, errlen, "mkdtemp: %m");
		r->dir[0] = '\0';
		return -errno;
	}
	snprintf(ledger, sizeof(ledger), "%s/ledger", r->dir);
	snprintf(r->state, sizeof(r->state), "%s/agent.json", r->dir);
	if (setenv("INAGG_LEDGER_DIR", ledger, 1) || setenv("INAGG_LEDGER", "user", 1)) {
		snprintf(err, errlen, "setenv: %m");
		return -errno;
	}
	return ia_agent_open(&r->a, sw, NULL, r->state, err, errlen);
}

static inline int agent_rig_unlink(const char *path, const struct stat *st, int flag,
				   struct FTW *ftw)
{
	return remove(path);
}

/* Closes the agent and removes its folder. */
static inline void agent_rig_teardown(struct agent_rig *r)
{
	if (!r->dir[0])
		return;
	ia_agent_close(&r->a);
	nftw(r->dir, agent_rig_unlink, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
