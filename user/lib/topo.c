// SPDX-License-Identifier: GPL-2.0
/* Topology model: JSON parsing, validation and the derived tree arrays. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "topo.h"

struct ia_topo *ia_topo_new(int n)
{
	struct ia_topo *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->n = n;
	t->root = -1;
	t->sw = calloc(n ? n : 1, sizeof(*t->sw));
	if (!t->sw) {
		free(t);
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		t->sw[i].parent = -1;
		t->sw[i].rate = (struct ia_ratio){ 1, 1 };
		t->sw[i].available = true;
		t->sw[i].capacity = 1;
	}
	return t;
}

static void topo_free_derived(struct ia_topo *t)
{
	free(t->child_start);
	free(t->child);
	free(t->order);
	free(t->depth);
	free(t->child_pos);
	free(t->first_worker);
	t->child_start = t->child = t->order = t->depth = NULL;
	t->child_pos = t->first_worker = NULL;
}

void ia_topo_free(struct ia_topo *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n; i++)
		free(t->sw[i].name);
	free(t->sw);
	topo_free_derived(t);
	free(t);
}

int ia_topo_find(const struct ia_topo *t, const char *name)
{
	for (int i = 0; i < t->n; i++)
		if (t->sw[i].name && !strcmp(t->sw[i].name, name))
			return i;
	return -1;
}

uint64_t ia_topo_total_load(const struct ia_topo *t)
{
	uint64_t s = 0;

	for (int i = 0; i < t->n; i++)
		s += t->sw[i].load;
	return s;
}

static int cmp_name_idx(const void *a, const void *b, void *arg)
{
	const struct ia_topo *t = arg;

	return strcmp(t->sw[*(const int *)a].name, t->sw[*(const int *)b].name);
}

int ia_topo_finalize(struct ia_topo *t, char *err, size_t errlen)
{
	int n = t->n, *by_name = NULL, ret = -EINVAL, seen = 0;
	uint64_t total = 0;

	topo_free_derived(t);
	if (n <= 0) {
		ia_fail(err, errlen, -EINVAL, "topology: no switches");
		return -EINVAL;
	}
	t->root = -1;
	for (int i = 0; i < n; i++) {
		struct ia_switch *s = &t->sw[i];

		if (!s->name || !*s->name) {
			ia_fail(err, errlen, -EINVAL, "switch #%d: field \"name\": missing or empty", i);
			return -EINVAL;
		}
		if (s->parent < -1 || s->parent >= n || s->parent == i) {
			ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"parent\": invalid", s->name);
			return -EINVAL;
		}
		if (s->rate.num == 0 || s->rate.den == 0) {
			ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"rate\": must be > 0", s->name);
			return -EINVAL;
		}
		total += s->load;
		if (s->parent >= 0)
			continue;
		if (t->root >= 0) {
			ia_fail(err, errlen, -EINVAL,
				"switch \"%s\": field \"parent\": null, but \"%s\" is already the root",
				s->name, t->sw[t->root].name);
			return -EINVAL;
		}
		t->root = i;
	}
	if (t->root < 0) {
		ia_fail(err, errlen, -EINVAL, "topology: no root (one switch needs \"parent\": null)");
		return -EINVAL;
	}
	if (total > IA_LOAD_MAX) {
		ia_fail(err, errlen, -EINVAL, "topology: field \"load\": total %llu exceeds %u",
			(unsigned long long)total, IA_LOAD_MAX);
		return -ERANGE;
	}

	by_name = malloc(n * sizeof(int));
	t->child_start = calloc(n + 1, sizeof(int));
	t->child = malloc(n * sizeof(int));
	t->order = malloc(n * sizeof(int));
	t->depth = malloc(n * sizeof(int));
	t->child_pos = malloc(n * sizeof(int));
	t->first_worker = malloc((n + 1) * sizeof(int));
	if (!by_name || !t->child_start || !t->child || !t->order || !t->depth || !t->child_pos ||
	    !t->first_worker) {
		ia_fail(err, errlen, -EINVAL, "topology: out of memory");
		ret = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++)
		by_name[i] = i;
	qsort_r(by_name, n, sizeof(int), cmp_name_idx, t);
	for (int i = 1; i < n; i++) {
		if (!strcmp(t->sw[by_name[i]].name, t->sw[by_name[i - 1]].name)) {
			ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"name\": duplicate",
				t->sw[by_name[i]].name);
			goto out;
		}
	}

	/* Children in CSR form, in input order. */
	for (int i = 0; i < n; i++)
		if (t->sw[i].parent >= 0)
			t->child_start[t->sw[i].parent + 1]++;
	for (int i = 0; i < n; i++)
		t->child_start[i + 1] += t->child_start[i];
	int *fill = by_name;	/* reused as the fill cursor */

	for (int i = 0; i < n; i++)
		fill[i] = t->child_start[i];
	for (int i = 0; i < n; i++) {
		int p = t->sw[i].parent;

		t->child_pos[i] = p < 0 ? -1 : fill[p] - t->child_start[p];
		if (p >= 0)
			t->child[fill[p]++] = i;
	}
	/* Workers numbered switch by switch, in index order (netplan.h). */
	t->first_worker[0] = 0;
	for (int i = 0; i < n; i++)
		t->first_worker[i + 1] = t->first_worker[i] + (int)t->sw[i].load;

	/* BFS from the root; a switch never reached lies on a cycle. */
	t->order[seen++] = t->root;
	t->depth[t->root] = 0;
	t->height = 0;
	for (int h = 0; h < seen; h++) {
		int v = t->order[h];

		for (int c = t->child_start[v]; c < t->child_start[v + 1]; c++) {
			int u = t->child[c];

			t->depth[u] = t->depth[v] + 1;
			if (t->depth[u] > t->height)
				t->height = t->depth[u];
			t->order[seen++] = u;
		}
	}
	if (seen != n) {
		for (int i = 0; i < n; i++)
			t->depth[i] = -1;
		for (int h = 0; h < seen; h++)
			t->depth[t->order[h]] = 0;
		for (int i = 0; i < n; i++) {
			if (t->depth[i] < 0) {
				ia_fail(err, errlen, -EINVAL,
					"switch \"%s\": field \"parent\": forms a cycle (not connected to the root)",
					t->sw[i].name);
				break;
			}
		}
		goto out;
	}
	ret = 0;
out:
	free(by_name);
	if (ret)
		topo_free_derived(t);
	return ret;
}

static int get_uint(json_object *v, const char *sw, const char *field, uint64_t max,
		    uint64_t *out, char *err, size_t errlen)
{
	struct ia_ratio r;

	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		goto bad;
	if (ia_ratio_parse(json_object_get_string(v), &r) || r.den != 1)
		goto bad;
	if (r.num > max) {
		ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"%s\": larger than %llu", sw, field,
			(unsigned long long)max);
		return -ERANGE;
	}
	*out = r.num;
	return 0;
bad:
	ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"%s\": must be an integer >= 0, got %s", sw,
		field, json_object_to_json_string(v));
	return -EINVAL;
}

static int parse_switch(json_object *o, int i, struct ia_topo *t, char **parents, char *err,
			size_t errlen)
{
	struct ia_switch *s = &t->sw[i];
	json_object *v;
	uint64_t u;
	int ret;

	if (!json_object_is_type(o, json_type_object)) {
		ia_fail(err, errlen, -EINVAL, "switch #%d: not a JSON object", i);
		return -EINVAL;
	}
	if (!json_object_object_get_ex(o, "name", &v) || !json_object_is_type(v, json_type_string) ||
	    !json_object_get_string_len(v)) {
		ia_fail(err, errlen, -EINVAL, "switch #%d: field \"name\": missing or not a non-empty string", i);
		return -EINVAL;
	}
	s->name = strdup(json_object_get_string(v));
	if (!s->name)
		return -ENOMEM;

	json_object_object_foreach(o, key, val) {
		if (strcmp(key, "name") && strcmp(key, "parent") && strcmp(key, "rate") &&
		    strcmp(key, "load") && strcmp(key, "available") && strcmp(key, "capacity")) {
			ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"%s\": unknown", s->name, key);
			return -EINVAL;
		}
		(void)val;
	}

	if (!json_object_object_get_ex(o, "parent", &v)) {
		ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"parent\": missing (null for the root)",
			s->name);
		return -EINVAL;
	}
	if (v && !json_object_is_type(v, json_type_string)) {
		ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"parent\": must be a name or null",
			s->name);
		return -EINVAL;
	}
	parents[i] = v ? strdup(json_object_get_string(v)) : NULL;

	if (json_object_object_get_ex(o, "rate", &v)) {
		if (!json_object_is_type(v, json_type_int) &&
		    !json_object_is_type(v, json_type_double)) {
			ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"rate\": must be a number",
				s->name);
			return -EINVAL;
		}
		ret = ia_ratio_parse(json_object_get_string(v), &s->rate);
		if (ret == -ERANGE) {
			ia_fail(err, errlen, -EINVAL,
				"switch \"%s\": field \"rate\": %s has more than %d decimal places or is too large",
				s->name, json_object_get_string(v), IA_RATE_MAX_DIGITS);
			return ret;
		}
		if (ret || s->rate.num == 0) {
			ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"rate\": must be > 0, got %s",
				s->name, json_object_get_string(v));
			return -EINVAL;
		}
		if (ia_ratio_double(s->rate) > IA_RATE_MAX) {
			ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"rate\": larger than %d", s->name,
				IA_RATE_MAX);
			return -ERANGE;
		}
	}
	if (json_object_object_get_ex(o, "load", &v)) {
		ret = get_uint(v, s->name, "load", IA_LOAD_MAX, &u, err, errlen);
		if (ret)
			return ret;
		s->load = (uint32_t)u;
	}
	if (json_object_object_get_ex(o, "available", &v)) {
		if (!json_object_is_type(v, json_type_boolean)) {
			ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"available\": must be true or false",
				s->name);
			return -EINVAL;
		}
		s->available = json_object_get_boolean(v);
	}
	if (json_object_object_get_ex(o, "capacity", &v)) {
		ret = get_uint(v, s->name, "capacity", UINT32_MAX, &u, err, errlen);
		if (ret)
			return ret;
		s->capacity = (uint32_t)u;
	}
	return 0;
}

int ia_topo_parse(const char *json, struct ia_topo **out, char *err, size_t errlen)
{
	enum json_tokener_error jerr;
	struct json_tokener *tok;
	json_object *root = NULL, *arr;
	struct ia_topo *t = NULL;
	char **parents = NULL;
	int n, ret = -EINVAL;

	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	root = json_tokener_parse_ex(tok, json, (int)strlen(json));
	jerr = json_tokener_get_error(tok);
	if (!root || jerr != json_tokener_success ||
	    json_tokener_get_parse_end(tok) < strlen(json)) {
		/* Allow trailing whitespace only. */
		size_t end = json_tokener_get_parse_end(tok);

		if (!root || jerr != json_tokener_success || json[end + strspn(json + end, " \t\r\n")]) {
			const char *why = "trailing data";

			if (jerr == json_tokener_continue)
				why = "unexpected end of input";
			else if (jerr != json_tokener_success)
				why = json_tokener_error_desc(jerr);
			ia_fail(err, errlen, -EINVAL, "topology: not valid JSON (%s at offset %zu)", why, end);
			goto out;
		}
	}
	if (!json_object_is_type(root, json_type_object) ||
	    !json_object_object_get_ex(root, "switches", &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		ia_fail(err, errlen, -EINVAL, "topology: field \"switches\": missing or not an array");
		goto out;
	}
	n = (int)json_object_array_length(arr);
	if (!n) {
		ia_fail(err, errlen, -EINVAL, "topology: field \"switches\": empty");
		goto out;
	}
	t = ia_topo_new(n);
	parents = calloc(n, sizeof(char *));
	if (!t || !parents) {
		ret = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		ret = parse_switch(json_object_array_get_idx(arr, i), i, t, parents, err, errlen);
		if (ret)
			goto out;
	}
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < i; j++) {
			if (!strcmp(t->sw[i].name, t->sw[j].name)) {
				ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"name\": duplicate",
					t->sw[i].name);
				ret = -EINVAL;
				goto out;
			}
		}
		if (!parents[i])
			continue;
		t->sw[i].parent = ia_topo_find(t, parents[i]);
		if (t->sw[i].parent < 0 || t->sw[i].parent == i) {
			ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"parent\": %s \"%s\"",
				t->sw[i].name, t->sw[i].parent == i ? "is itself" : "unknown switch",
				parents[i]);
			ret = -EINVAL;
			goto out;
		}
	}
	ret = ia_topo_finalize(t, err, errlen);
out:
	if (parents) {
		for (int i = 0; i < n; i++)
			free(parents[i]);
		free(parents);
	}
	json_tokener_free(tok);
	json_object_put(root);
	if (ret) {
		ia_topo_free(t);
		t = NULL;
	}
	*out = t;
	return ret;
}

static char *read_all(FILE *f)
{
	size_t cap = 4096, len = 0, r;
	char *buf = malloc(cap);

	while (buf && (r = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += r;
		if (cap - len - 1 == 0) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
	}
	if (buf)
		buf[len] = '\0';
	return buf;
}

int ia_topo_load(const char *path, struct ia_topo **out, char *err, size_t errlen)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char *buf;
	int ret;

	*out = NULL;
	if (!f) {
		ret = -errno;
		ia_fail(err, errlen, -EINVAL, "%s: %s", path, strerror(errno));
		return ret;
	}
	buf = read_all(f);
	if (f != stdin)
		fclose(f);
	if (!buf) {
		ia_fail(err, errlen, -EINVAL, "%s: out of memory", path);
		return -ENOMEM;
	}
	ret = ia_topo_parse(buf, out, err, errlen);
	free(buf);
	return ret;
}

int ia_topo_write_json(const struct ia_topo *t, FILE *f)
{
	char rate[64];

	fprintf(f, "{\"switches\": [\n");
	for (int i = 0; i < t->n; i++) {
		const struct ia_switch *s = &t->sw[i];

		ia_ratio_format(s->rate, rate, sizeof(rate));
		fprintf(f, "  {\"name\": \"%s\", \"parent\": ", s->name);
		if (s->parent >= 0)
			fprintf(f, "\"%s\"", t->sw[s->parent].name);
		else
			fprintf(f, "null");
		fprintf(f, ", \"rate\": %s, \"load\": %u, \"available\": %s, \"capacity\": %u}%s\n",
			rate, s->load, s->available ? "true" : "false", s->capacity,
			i + 1 < t->n ? "," : "");
	}
	fprintf(f, "]}\n");
	return ferror(f) ? -EIO : 0;
}
