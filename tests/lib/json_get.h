/* SPDX-License-Identifier: GPL-2.0 */
/* JSON answers of inagg and inaggd, read by path in the tests. */
#ifndef INAGG_TESTS_JSON_GET_H
#define INAGG_TESTS_JSON_GET_H

#include <stdio.h>
#include <stdlib.h>

#include <json-c/json.h>

/*
 * The member of o at path, keys separated by '.' and array elements by
 * their index ("job.destination.address", "memory.switches.2.lent_slots"),
 * or NULL if there is none.
 */
static inline json_object *get(json_object *o, const char *path)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, atoi(k));
		else if (!json_object_object_get_ex(o, k, &o))
			o = NULL;
	}
	return o;
}

#endif
