// SPDX-License-Identifier: GPL-2.0
/* Workload files: reading and checking them against a topology (workload.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "err.h"
#include "jsonfile.h"
#include "workload.h"

void ia_workloads_free(struct ia_workloads *s)
{
	for (int i = 0; i < s->n; i++) {
		if (s->names)
			free(s->names[i]);
		if (s->loads)
			free(s->loads[i]);
	}
	free(s->names);
	free(s->loads);
	free(s->w);
	memset(s, 0, sizeof(*s));
}

/* An integer in [0, max] from JSON: integral numbers only. */
static int json_count(json_object *v, uint64_t max, uint64_t *out)
{
	double d;

	if (json_object_is_type(v, json_type_int)) {
		int64_t i = json_object_get_int64(v);

		if (i < 0 || (uint64_t)i > max)
			return -ERANGE;
		*out = i;
		return 0;
	}
	if (json_object_is_type(v, json_type_double)) {
		d = json_object_get_double(v);
		if (d != (double)(int64_t)d || d < 0 || d > (double)max)
			return -EINVAL;
		*out = (uint64_t)d;
		return 0;
	}
	return -EINVAL;
}

/* Fills workload i from its JSON object. */
static int parse_one(const char *path, const struct ia_topo *t, long kdef, json_object *item,
		     int i, struct ia_workloads *s, char *err, size_t errlen)
{
	json_object *v;
	uint64_t x;

	if (!json_object_is_type(item, json_type_object))
		return ia_fail(err, errlen, -EINVAL, "%s: workload %d: not an object", path, i);
	if (json_object_object_get_ex(item, "name", &v)) {
		if (!json_object_is_type(v, json_type_string))
			return ia_fail(err, errlen, -EINVAL,
				       "%s: workload %d: field \"name\": not a string", path, i);
		s->names[i] = strdup(json_object_get_string(v));
	} else if (asprintf(&s->names[i], "w%d", i) < 0) {
		s->names[i] = NULL;
	}
	s->loads[i] = calloc(t->n, sizeof(uint32_t));
	if (!s->names[i] || !s->loads[i])
		return ia_fail(err, errlen, -ENOMEM, "%s: out of memory", path);
	s->w[i].name = s->names[i];
	s->w[i].load = s->loads[i];
	if (json_object_object_get_ex(item, "k", &v)) {
		if (json_count(v, INT_MAX, &x))
			return ia_fail(err, errlen, -EINVAL,
				       "%s: workload \"%s\": field \"k\": must be an integer >= 0",
				       path, s->names[i]);
		s->w[i].k = x;
	} else if (kdef >= 0) {
		s->w[i].k = kdef;
	} else {
		return ia_fail(err, errlen, -EINVAL,
			       "%s: workload \"%s\": field \"k\": missing (or give -k)", path,
			       s->names[i]);
	}
	if (!json_object_object_get_ex(item, "load", &v)) {
		for (int j = 0; j < t->n; j++)
			s->loads[i][j] = t->sw[j].load;
		return 0;
	}
	if (!json_object_is_type(v, json_type_object))
		return ia_fail(err, errlen, -EINVAL,
			       "%s: workload \"%s\": field \"load\": not an object of switch: count",
			       path, s->names[i]);
	json_object_object_foreach(v, key, val) {
		int sw = ia_topo_find(t, key);

		if (sw < 0)
			return ia_fail(err, errlen, -EINVAL,
				       "%s: workload \"%s\": field \"load\": unknown switch \"%s\"",
				       path, s->names[i], key);
		if (json_count(val, IA_LOAD_MAX, &x))
			return ia_fail(err, errlen, -EINVAL,
				       "%s: workload \"%s\": switch \"%s\": field \"load\": must be an integer >= 0 (at most %u)",
				       path, s->names[i], key, IA_LOAD_MAX);
		s->loads[i][sw] = x;
	}
	return 0;
}

int ia_workloads_load(const char *path, const struct ia_topo *t, long kdef,
		      struct ia_workloads *s, char *err, size_t errlen)
{
	json_object *root, *arr;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = ia_json_file(path, &root, err, errlen);
	if (ret)
		return ret;
	ret = -EINVAL;
	if (!json_object_object_get_ex(root, "workloads", &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		ia_fail(err, errlen, ret, "%s: field \"workloads\": missing or not an array", path);
		goto out;
	}
	s->n = json_object_array_length(arr);
	if (!s->n) {
		ia_fail(err, errlen, ret, "%s: field \"workloads\": empty", path);
		goto out;
	}
	s->w = calloc(s->n, sizeof(*s->w));
	s->names = calloc(s->n, sizeof(*s->names));
	s->loads = calloc(s->n, sizeof(*s->loads));
	if (!s->w || !s->names || !s->loads) {
		ret = ia_fail(err, errlen, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
	for (int i = 0; i < s->n; i++) {
		ret = parse_one(path, t, kdef, json_object_array_get_idx(arr, i), i, s, err,
				errlen);
		if (ret)
			goto out;
	}
	ret = 0;
out:
	json_object_put(root);
	if (ret)
		ia_workloads_free(s);
	return ret;
}
