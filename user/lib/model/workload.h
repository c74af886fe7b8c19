/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Workload files for multi-workload placement (docs/cli.md):
 *	{"workloads": [{"name": "w0", "k": 2, "load": {"s3": 2, "s4": 6}}, ...]}
 */
#ifndef INAGG_WORKLOAD_H
#define INAGG_WORKLOAD_H

#include <stddef.h>

#include "place.h"
#include "topo.h"

/* The workloads of one file, in order; w[i] points into names and loads. */
struct ia_workloads {
	int n;
	struct ia_workload *w;
	char **names;
	uint32_t **loads;	/* per switch of the topology */
};

/*
 * Reads PATH ("-" is stdin) against topology t. A workload without "k" gets
 * kdef (an error if kdef < 0), one without "load" the topology's loads, one
 * without "name" "w<index>". Returns 0 or a negative errno with err naming
 * the file, the workload and the field.
 */
int ia_workloads_load(const char *path, const struct ia_topo *t, long kdef,
		      struct ia_workloads *s, char *err, size_t errlen);
void ia_workloads_free(struct ia_workloads *s);

#endif
