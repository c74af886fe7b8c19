// SPDX-License-Identifier: GPL-2.0
/* Helpers every command of the CLI may call (common.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "cc.h"
#include "common.h"
#include "err.h"
#include "out.h"
#include "xdp.h"

bool cli_verbose;

int run_in(const char *dir, const char *prog, const char *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		/* No shell: a folder name is never parsed as a command. */
		if (!chdir(dir))
			execlp(prog, prog, arg, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -ECHILD;
}

int parse_long(const char *opt, const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		/* Unless too large, the upper limit is not worth printing. */
		if (max >= INT_MAX && !(errno == ERANGE || (end != s && !*end && v > max)))
			return out_err("%s: invalid value '%s': need an integer >= %ld", opt, s, min);
		return out_err("%s: invalid value '%s': need an integer in %ld..%ld", opt, s, min,
			       max);
	}
	*out = v;
	return 0;
}

int list_items_ok(const char *opt, const char *s)
{
	/* strtok() skips empty items: "smc," ran smc alone, "1,,2" two values. */
	if (!*s || *s == ',' || s[strlen(s) - 1] == ',' || strstr(s, ",,"))
		return out_err("%s: invalid list '%s': an empty item", opt, s);
	return 0;
}

int load_topo(const char *path, struct ia_topo **t)
{
	char err[IA_ERRLEN] = "";
	int ret;

	ret = ia_topo_load(path, t, err, sizeof(err));
	if (ret) {
		/* Some messages already name the file. */
		if (err[0] && !strncmp(err, path, strlen(path)))
			return out_err("%s", err);
		return out_err("%s: %s", path, err[0] ? err : strerror(-ret));
	}
	return 0;
}

int parse_algo(const char *s, enum ia_algo *out)
{
	char list[256] = "";
	int a;

	a = ia_algo_parse(s);
	if (a >= 0) {
		*out = a;
		return 0;
	}
	for (a = 0; a < IA_ALGO__COUNT; a++) {
		strncat(list, a ? ", " : "", sizeof(list) - strlen(list) - 1);
		strncat(list, ia_algo_name(a), sizeof(list) - strlen(list) - 1);
	}
	return out_err("unknown algorithm '%s' (known: %s)", s, list);
}

const char *cli_algo_name(int i)
{
	return ia_algo_name(i);
}

const char *cli_cc_name(int i)
{
	return ia_cc_policy_name(i);
}

FILE *open_out(const char *path)
{
	FILE *f;

	if (!path || !strcmp(path, "-"))
		return stdout;
	f = fopen(path, "w");
	if (!f)
		out_err("%s: %s", path, strerror(errno));
	return f;
}

int close_out(FILE *f, const char *path)
{
	if (f == stdout)
		return fflush(f) ? out_err("stdout: %s", strerror(errno)) : 0;
	if (fclose(f))
		return out_err("%s: %s", path, strerror(errno));
	return 0;
}

void quiet_libbpf(void)
{
	/* The loader keeps libbpf's messages for its errors; -v shows them all. */
	ia_xdp_set_verbose(cli_verbose);
}
