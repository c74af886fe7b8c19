// SPDX-License-Identifier: GPL-2.0
/* Graphviz output; see dot.h. */
#include <errno.h>

#include "dot.h"

/* A DOT double-quoted string. */
static void put_id(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

int ia_dot_write(FILE *f, const struct ia_topo *t, const uint32_t *load,
		 const struct ia_placement *p, const char *title)
{
	char buf[64];
	int i, v;

	/* Bottom to top: workers under the leaves, the destination above the root. */
	fprintf(f, "digraph inagg {\n\trankdir=BT;\n\tnodesep=0.3;\n");
	if (title) {
		fprintf(f, "\tlabelloc=t;\n\tlabel=");
		put_id(f, title);
		fprintf(f, ";\n");
	}
	fprintf(f, "\tfontname=\"Helvetica\";\n"
		   "\tnode [fontname=\"Helvetica\"];\n"
		   "\tedge [fontname=\"Helvetica\", arrowsize=0.6];\n"
		   "\t\"d\" [shape=doublecircle, style=filled, fillcolor=\"lightyellow\"];\n");
	for (i = 0; i < t->n; i++) {
		const struct ia_switch *s;
		const char *fill = IA_DOT_NONE, *font = "black";
		uint32_t l;

		v = t->order[i];
		s = &t->sw[v];
		if (p) {
			fill = p->blue[v] ? IA_DOT_BLUE : IA_DOT_RED;
			font = "white";
		}
		fprintf(f, "\t");
		put_id(f, s->name);
		fprintf(f, " [shape=circle, style=\"filled%s\", fillcolor=\"%s\", fontcolor=\"%s\"];\n",
			s->available ? "" : ",dashed", fill, font);

		l = load ? load[v] : s->load;
		if (l) {
			fprintf(f, "\t\"workers:%d\" [shape=box, style=filled, fillcolor=\"%s\", label=\"%u\"];\n",
				v, IA_DOT_WORKERS, l);
			fprintf(f, "\t\"workers:%d\" -> ", v);
			put_id(f, s->name);
			fprintf(f, " [arrowhead=none];\n");
		}

		fprintf(f, "\t");
		put_id(f, s->name);
		fprintf(f, " -> ");
		if (s->parent >= 0)
			put_id(f, t->sw[s->parent].name);
		else
			fprintf(f, "\"d\"");
		if (p) {
			ia_ratio_format(ia_congestion(p->msgs[v], s->rate), buf, sizeof(buf));
			fprintf(f, " [label=\"%s\"%s];\n", buf,
				v == p->bottleneck ? ", penwidth=2.5, fontcolor=\"red\"" : "");
		} else {
			ia_ratio_format(s->rate, buf, sizeof(buf));
			fprintf(f, " [label=\"w=%s\"];\n", buf);
		}
	}
	fprintf(f, "}\n");
	return ferror(f) ? -EIO : 0;
}
