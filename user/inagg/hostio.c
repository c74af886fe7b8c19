// SPDX-License-Identifier: GPL-2.0
/* Vector files, checksums and signals of inagg worker and inagg ps (hostio.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "host.h"
#include "hostio.h"

volatile sig_atomic_t host_stop;

static void on_signal(int sig)
{
	host_stop = 1;
}

/* Without SA_RESTART, so that a blocked poll() returns at once. */
void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/*
 * Reads whitespace-separated numbers: int32 integers, or with frac >= 0 real
 * numbers encoded in fixed point. Returns the count, or -1 after an error.
 */
long read_vector(const char *path, int frac, int32_t **out)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	size_t n = 0, cap = 0, sat = 0;
	int32_t *v = NULL, *nv;
	char tok[128], *end;
	long ret = -1;
	bool s;

	if (!f)
		return out_err("%s: %s", path, strerror(errno)), -1;
	while (fscanf(f, "%127s", tok) == 1) {
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				out_err("%s: out of memory", path);
				goto out;
			}
			v = nv;
		}
		errno = 0;
		if (frac >= 0) {
			double x = strtod(tok, &end);

			if (errno || end == tok || *end) {
				out_err("%s: element %zu: invalid number '%s'", path, n + 1, tok);
				goto out;
			}
			v[n++] = ia_fx_encode(x, frac, &s);
			sat += s;
		} else {
			/* Decimal: base 0 read "010" as 8 and "0x10" as 16. */
			long long x = strtoll(tok, &end, 10);

			if (errno || end == tok || *end || x < INT32_MIN || x > INT32_MAX) {
				out_err("%s: element %zu: invalid int32 '%s'", path, n + 1, tok);
				goto out;
			}
			v[n++] = x;
		}
	}
	/* errno is still the failed read's ("Is a directory" for a folder). */
	if (ferror(f)) {
		out_err("%s: %s", path, strerror(errno ? errno : EIO));
		goto out;
	}
	if (!n) {
		out_err("%s: no elements", path);
		goto out;
	}
	if (sat)
		out_warn("%s: %zu values saturated at the int32 range (lower --float)", path, sat);
	*out = v;
	v = NULL;
	ret = n;
out:
	free(v);
	if (f != stdin)
		fclose(f);
	return ret;
}

int vec_out_open(struct vec_out *o, const char *path)
{
	int fd;

	*o = (struct vec_out){ .path = path };
	if (!path)
		return 0;
	if (!strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	/* Not truncated yet: a run that fails leaves what the file held. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd >= 0)
		o->made = true;
	else if (errno == EEXIST)
		fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0)
		o->f = fdopen(fd, "w");
	if (!o->f) {
		int err = errno;

		if (fd >= 0)
			close(fd);
		vec_out_drop(o);
		return out_err("%s: %s", path, strerror(err));
	}
	return 0;
}

void vec_out_drop(struct vec_out *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	if (o->made)
		unlink(o->path);
	*o = (struct vec_out){ 0 };
}

int vec_out_write(struct vec_out *o, const int32_t *v, size_t n, int frac)
{
	FILE *f = o->f;
	size_t i;
	int ret;

	if (!f)
		return 0;
	if (f != stdout && ftruncate(fileno(f), 0)) {
		ret = out_err("%s: %s", o->path, strerror(errno));
		vec_out_drop(o);
		return ret;
	}
	for (i = 0; i < n; i++) {
		if (frac >= 0)
			fprintf(f, "%.17g\n", ia_fx_decode(v[i], frac));
		else
			fprintf(f, "%d\n", v[i]);
	}
	ret = fflush(f) || ferror(f);
	if (f != stdout)
		ret |= fclose(f);
	o->f = NULL;
	o->made = false;
	return ret ? out_err("%s: write error", o->path) : 0;
}

void print_checksum(const int32_t *v, size_t n)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)ia_host_checksum(v, n));
	out_str("checksum", "checksum %s\n", buf);
}

