// SPDX-License-Identifier: GPL-2.0
/*
 * inagg-agent: one switch's agent (agent.h, docs/remote.md). It
 * answers the controller's requests, one JSON line each, on stdin and
 * stdout; the controller starts it over the operator's SSH (or, for a
 * switch namespace on its own host, directly) and ends it by closing stdin.
 * It opens no socket of its own.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "agent.h"
#include "err.h"
#include "xdp.h"

#define AGENT_STATE_DIR "/var/lib/inagg"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: inagg-agent [-s SWITCH] [-N NETNS] [-S STATE]\n"
		"  -s, --switch NAME   the switch whose maps are pinned under NAME (default: the\n"
		"                      host name, as inagg dev attach)\n"
		"  -N, --netns NS      work in network namespace NS\n"
		"  -S, --state FILE    the agent's record (default " AGENT_STATE_DIR "/agent-SWITCH.json,\n"
		"                      with --netns " IA_RUN_DIR "/agent-NS.json)\n"
		"Requests on stdin, replies on stdout, one JSON object per line.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "switch", required_argument, NULL, 's' }, { "netns", required_argument, NULL, 'N' },
		{ "state", required_argument, NULL, 'S' },  { "help", no_argument, NULL, 'h' },
		{ NULL }
	};
	const char *sw = NULL, *netns = NULL, *state = NULL;
	char host[128], path[PATH_MAX], err[IA_ERRLEN];
	struct ia_agent a;
	int c, ret;

	while ((c = getopt_long(argc, argv, "s:N:S:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': sw = optarg; break;
		case 'N': netns = optarg; break;
		case 'S': state = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (!sw) {
		if (gethostname(host, sizeof(host)))
			snprintf(host, sizeof(host), "inagg");
		host[strcspn(host, ".")] = '\0';
		sw = host;
	}
	if (!state) {
		const char *dir = netns ? IA_RUN_DIR : AGENT_STATE_DIR;

		/* Its folder and those above it, as a fresh machine may lack them. */
		snprintf(path, sizeof(path), "%s", dir);
		for (char *p = path + 1; *p; p++)
			if (*p == '/') {
				*p = '\0';
				mkdir(path, 0755);
				*p = '/';
			}
		mkdir(path, 0700);
		snprintf(path, sizeof(path), "%s/agent-%s.json", dir, netns ? netns : sw);
		state = path;
	}
	signal(SIGPIPE, SIG_IGN);
	/* libbpf's messages kept for the loader's errors (xdp.h), printed nowhere. */
	libbpf_set_print(ia_xdp_libbpf_print);
	ia_xdp_print_to(NULL);
	ret = ia_agent_open(&a, sw, netns, state, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "inagg-agent: %s\n", err);
		return 1;
	}
	ret = ia_agent_serve(&a, STDIN_FILENO, STDOUT_FILENO);
	ia_agent_close(&a);
	if (ret == -ESTALE) {
		/* The controller's next session gets a new agent, in the new namespace. */
		fprintf(stderr, "inagg-agent: namespace %s was removed or set up again\n", netns);
		return 1;
	}
	if (ret) {
		fprintf(stderr, "inagg-agent: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}
