/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A placement's links as JSON, written as they are formatted: a million
 * links must not be built as a million objects first. Numbers are exact:
 * every double in the shortest form that reads back the same (numfmt.h),
 * every rational also as "num/den" text.
 */
#ifndef INAGG_PLACEOUT_H
#define INAGG_PLACEOUT_H

#include <stdbool.h>
#include <stdio.h>

#include "place.h"

/* Which uplinks a placement report lists. */
enum ia_links {
	IA_LINKS_NONE,
	IA_LINKS_CONGESTED,	/* those at the network congestion: the bottlenecks */
	IA_LINKS_ALL,
	IA_LINKS__COUNT,
};

/* The default: every link up to this many switches, the congested ones beyond. */
#define IA_LINKS_ALL_MAX 1024

const char *ia_links_name(enum ia_links l);
int ia_links_parse(const char *name);	/* -1 if unknown */
enum ia_links ia_links_default(const struct ia_topo *t);

/* Whether switch v's uplink is listed. */
bool ia_link_shown(const struct ia_problem *pb, const struct ia_placement *p, int v,
		   enum ia_links which);

/*
 * Writes the listed links, in BFS order, as a JSON array: one object per
 * line, {switch, parent, load, rate, rate_exact, messages, congestion,
 * congestion_exact, blue}, lines indented by indent spaces. 0 or -EIO.
 */
int ia_links_write_json(FILE *f, const struct ia_problem *pb, const struct ia_placement *p,
			enum ia_links which, int indent);

/* s as a JSON string, quotes included. */
void ia_json_write_string(FILE *f, const char *s);

#endif
