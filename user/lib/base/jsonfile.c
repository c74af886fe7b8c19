// SPDX-License-Identifier: GPL-2.0
/* Whole JSON files through json-c, with one-line errors; see jsonfile.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "jsonfile.h"

#define JSONFILE_MAX	(64u << 20)	/* placements, workloads: far below this */

static int read_fd(int fd, char **text, size_t *len)
{
	size_t cap = 4096;
	char *buf = malloc(cap + 1), *nb;
	ssize_t r;

	*len = 0;
	while (buf) {
		r = read(fd, buf + *len, cap - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			r = -errno;
			free(buf);
			return r;
		}
		if (!r)
			break;
		*len += r;
		if (*len < cap)
			continue;
		if (cap >= JSONFILE_MAX) {
			free(buf);
			return -EFBIG;
		}
		cap *= 2;
		nb = realloc(buf, cap + 1);
		if (!nb)
			free(buf);
		buf = nb;
	}
	if (!buf)
		return -ENOMEM;
	buf[*len] = '\0';
	*text = buf;
	return 0;
}

int ia_json_file(const char *path, json_object **out, char *err, size_t errlen)
{
	bool in = !strcmp(path, "-");
	int fd = in ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC), ret;
	enum json_tokener_error jerr;
	struct json_tokener *tok;
	char *text = NULL;
	size_t len, end;

	*out = NULL;
	if (fd < 0)
		return ia_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	ret = read_fd(fd, &text, &len);
	if (!in)
		close(fd);
	if (ret)
		return ia_fail(err, errlen, ret, "%s: %s", path, strerror(-ret));
	tok = json_tokener_new();
	if (!tok) {
		free(text);
		return ia_fail(err, errlen, -ENOMEM, "%s: %s", path, strerror(ENOMEM));
	}
	*out = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (*out && jerr == json_tokener_success)
		end += strspn(text + end, " \t\r\n");
	if (!*out || jerr != json_tokener_success || end < len) {
		json_object_put(*out);
		*out = NULL;
		ret = ia_fail(err, errlen, -EINVAL, "%s: not valid JSON (%s at offset %zu)", path,
			      jerr == json_tokener_continue ? "unexpected end of input" :
			      jerr != json_tokener_success ? json_tokener_error_desc(jerr) :
			      "text after the value", end);
	}
	free(text);
	return ret;
}
