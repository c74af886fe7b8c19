// SPDX-License-Identifier: GPL-2.0
/*
 * inaggd: the job lifecycle of one inagg network.
 *
 *   submit: placement on the switches with capacity left -> admission on
 *           every blue switch through its ledger, all or nothing (a refusal
 *           rolls back and the job is placed again without that switch) ->
 *           the job's configuration pushed into the BPF maps of every switch
 *           on its paths.
 *   end:    configuration removed, admissions released.
 *
 * The network is a topology built in namespaces by "inagg net up": switch
 * v lives in namespace ia-<tag>-<v> and its maps are pinned under that name.
 * Jobs are written to a state file before anything is changed; after a
 * crash the daemon re-reads it and brings ledgers and maps back in line,
 * while the datapath (pinned maps, attached programs) kept forwarding.
 *
 * The transaction itself is libinagg's (job.h); this daemon gives it the
 * real ledgers and maps (switches.c), the state file (state.c) and the log
 * (journal.c), and serves requests (requests.c) on its control socket.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "ctl.h"
#include "files.h"
#include "inaggd.h"
#include "netplan.h"

/*
 * Tells systemd (Type=notify, $NOTIFY_SOCKET) how the daemon is: READY=1 once the
 * control socket listens, STOPPING=1. One datagram, as sd_notify(3) sends it; no
 * libsystemd. Nothing without the variable.
 */
static void notify(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path));
	len = offsetof(struct sockaddr_un, sun_path) + strlen(path);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';	/* an abstract socket */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, len) < 0)
		log_msg(IA_LOG_WARN, "NOTIFY_SOCKET %s: %s", path, strerror(errno));
	close(fd);
}

/* ---- main loop ---- */

/* A decimal integer in 0..max, all of s; atoi() took "x" for 0 (never sample). */
static int parse_num(const char *s, long max, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!isdigit((unsigned char)s[0]) || errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: inaggd -t TOPOLOGY -n TAG [-s SOCKET] [-S STATE] [-g GROUP] [-K] [-m MS] [-L N]\n"
		"              [-v] [-q]\n"
		"  -t, --topology FILE  the network's topology (as given to inagg net up)\n"
		"  -n, --net TAG        the network built by 'inagg net up -n TAG'\n"
		"  -s, --socket PATH    control socket (default " IA_CTL_SOCK ")\n"
		"  -S, --state FILE     state file (default /run/inagg/inaggd-TAG.json)\n"
		"  -g, --group GROUP    who besides root may connect, each to its own jobs\n"
		"                       (default " IA_CTL_GROUP "; no such group: root only)\n"
		"  -K, --kernel-forward upward messages leave through the kernel, so that tc\n"
		"                       rate emulation (inagg net up --rate-mbit) applies to them\n"
		"  -m, --sample MS      memory statistics (occupancy, utilisation) sampled every\n"
		"                       MS ms while jobs run (default 100; 0: never)\n"
		"  -L, --lend-hold N    an INA head lends what it has not needed for N samples\n"
		"                       in a row (default %d; 0: never lends)\n"
		"  -v, --verbose        debug messages;  -q, --quiet  warnings and errors only\n",
		IA_LEND_HOLD_DEFAULT);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "topology", required_argument, NULL, 't' }, { "net", required_argument, NULL, 'n' },
		{ "socket", required_argument, NULL, 's' },   { "state", required_argument, NULL, 'S' },
		{ "verbose", no_argument, NULL, 'v' },	      { "quiet", no_argument, NULL, 'q' },
		{ "kernel-forward", no_argument, NULL, 'K' }, { "sample", required_argument, NULL, 'm' },
		{ "lend-hold", required_argument, NULL, 'L' }, { "help", no_argument, NULL, 'h' },
		{ "group", required_argument, NULL, 'g' },
		{ NULL }
	};
	struct daemon d = { .sock_path = IA_CTL_SOCK, .group = IA_CTL_GROUP, .sample_ms = 100,
			    .lend_hold = IA_LEND_HOLD_DEFAULT };
	char err[IA_ERRLEN], state[PATH_MAX];
	const char *topo = NULL, *tag = NULL;
	int c, lfd, sfd, ret;
	sigset_t mask;

	/*
	 * Nothing inherited beyond stdin, stdout and stderr: a daemon outliving
	 * whoever started it must not keep their files (a test's lock) open.
	 */
	close_range(3, ~0U, 0);
	log_setup(IA_LOG_INFO, getenv("JOURNAL_STREAM") != NULL);
	while ((c = getopt_long(argc, argv, "t:n:s:S:g:m:L:vqKh", opts, NULL)) != -1) {
		switch (c) {
		case 't': topo = optarg; break;
		case 'n': tag = optarg; break;
		case 's': d.sock_path = optarg; break;
		case 'S': d.state_path = optarg; break;
		case 'g': d.group = optarg; break;
		case 'v': log_setup(IA_LOG_DEBUG, log_journal()); break;
		case 'q': log_setup(IA_LOG_WARN, log_journal()); break;
		case 'K': d.job_flags |= IA_JOB_F_KERNEL_FWD; break;
		case 'm':
			if (parse_num(optarg, 60000, &d.sample_ms)) {
				log_msg(IA_LOG_ERR, "--sample: invalid value '%s': 0..60000 ms", optarg);
				return 2;
			}
			break;
		case 'L':
			if (parse_num(optarg, 100000, &d.lend_hold)) {
				log_msg(IA_LOG_ERR, "--lend-hold: invalid value '%s': 0..100000 samples",
					optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!topo || !tag || optind < argc) {
		usage(stderr);
		return 2;
	}
	/* As net up names the network: the tag is in namespace and file names. */
	if (!ia_net_tag_valid(tag)) {
		log_msg(IA_LOG_ERR, "network tag '%s': use 1 to %d of [a-z0-9]", tag, IA_NET_TAG_MAX);
		return 1;
	}
	strcpy(d.tag, tag);
	if (!realpath(topo, d.topo_path))
		snprintf(d.topo_path, sizeof(d.topo_path), "%s", topo);
	if (ia_topo_load(topo, &d.t, err, sizeof(err))) {
		/* As inagg says it: some messages name the file already, some do not. */
		if (strncmp(err, topo, strlen(topo)))
			log_msg(IA_LOG_ERR, "%s: %s", topo, err);
		else
			log_msg(IA_LOG_ERR, "%s", err);
		return 1;
	}
	ret = claim_network(tag, err, sizeof(err));
	if (ret < 0) {
		log_msg(IA_LOG_ERR, "%s", err);
		return 1;
	}
	drop_stale_locks();
	drop_stale_records();
	/*
	 * Before anything is touched: a daemon of another network listening on the
	 * socket would lose it to this one (the stale file of a killed one is replaced).
	 */
	if (socket_in_use(d.sock_path)) {
		log_msg(IA_LOG_ERR, "control socket %s: another daemon listens on it (-s PATH for this one)",
			d.sock_path);
		return 1;
	}
	if (!d.state_path) {
		snprintf(state, sizeof(state), IA_RUN_DIR "/inaggd-%s.json", tag);
		d.state_path = state;
	}
	if (ia_jobs_init(&d.jobs, d.t, &switch_job_ops, &d) || lend_init(&d))
		return 1;
	/* libbpf's messages kept for the loader's errors (xdp.h), printed nowhere. */
	libbpf_set_print(ia_xdp_libbpf_print);
	ia_xdp_print_to(NULL);
	ret = resolve_ports(&d);
	if (ret) {
		log_msg(IA_LOG_ERR, "network '%s' is not up (inagg net up -n %s): %s", tag, tag,
			strerror(-ret));
		return 1;
	}
	ret = init_ledgers(&d, err, sizeof(err));
	if (ret) {
		log_msg(IA_LOG_ERR, "%s", err);
		return 1;
	}
	ret = recover_state(&d);
	if (ret)
		return 1;
	lend_reset(&d);
	if (mem_init(&d)) {
		log_msg(IA_LOG_ERR, "out of memory");
		return 1;
	}

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	lfd = listen_on(d.sock_path, d.group);
	if (lfd < 0 || sfd < 0) {
		log_msg(IA_LOG_ERR, "control socket %s: %s", d.sock_path, strerror(-lfd));
		return 1;
	}
	log_msg(IA_LOG_INFO, "network %s: %d switches, %d jobs; listening on %s", tag, d.t->n,
		d.jobs.njobs, d.sock_path);
	notify("READY=1");
	ret = serve(&d, lfd, sfd);
	if (ret)
		log_msg(IA_LOG_ERR, "control socket: %s", strerror(-ret));
	notify("STOPPING=1");
	log_msg(IA_LOG_INFO, "stopping; jobs stay configured and are recovered on restart");
	unlink(d.sock_path);
	close(lfd);
	mem_free(&d);
	ia_lender_free(&d.lend);
	for (int v = 0; v < d.t->n; v++)
		ia_xdp_close(d.xdp[v]);
	return 0;
}
