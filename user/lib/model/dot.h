/* SPDX-License-Identifier: GPL-2.0 */
/* Graphviz DOT of a topology and a placement, drawn like the paper's Fig. 1. */
#ifndef INAGG_DOT_H
#define INAGG_DOT_H

#include <stdio.h>

#include "place.h"
#include "topo.h"

#define IA_DOT_BLUE "royalblue"	/* aggregating switch */
#define IA_DOT_RED "tomato"	/* forwarding switch */
#define IA_DOT_NONE "white"	/* no placement given */
#define IA_DOT_WORKERS "lightgray"

/*
 * Writes the tree with the destination "d" on top, each switch (filled blue
 * or red when p is given), a gray box with L(v) below each loaded switch, and
 * every uplink labelled with its congestion (messages / rate; the bottleneck
 * drawn bold), or with its rate when p is NULL. load overrides the topology's
 * loads when not NULL. Returns 0 or -EIO.
 */
int ia_dot_write(FILE *f, const struct ia_topo *t, const uint32_t *load,
		 const struct ia_placement *p, const char *title);

#endif
