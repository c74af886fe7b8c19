// SPDX-License-Identifier: GPL-2.0
/* Streamed JSON of a placement's links; see placeout.h. */
#include <errno.h>
#include <string.h>

#include "numfmt.h"
#include "names.h"
#include "placeout.h"

static const char *const links_names[IA_LINKS__COUNT] = {
	[IA_LINKS_NONE] = "none",
	[IA_LINKS_CONGESTED] = "congested",
	[IA_LINKS_ALL] = "all",
};

const char *ia_links_name(enum ia_links l)
{
	return ia_name_of(links_names, IA_LINKS__COUNT, l);
}

int ia_links_parse(const char *name)
{
	return ia_name_find(links_names, IA_LINKS__COUNT, name);
}

enum ia_links ia_links_default(const struct ia_topo *t)
{
	return t->n <= IA_LINKS_ALL_MAX ? IA_LINKS_ALL : IA_LINKS_CONGESTED;
}

bool ia_link_shown(const struct ia_problem *pb, const struct ia_placement *p, int v,
		   enum ia_links which)
{
	uint64_t m;

	if (which != IA_LINKS_CONGESTED)
		return which == IA_LINKS_ALL;
	m = p->msgs[v] + (pb->base ? pb->base[v] : 0);
	return m && !ia_ratio_cmp(ia_congestion(m, pb->topo->sw[v].rate), p->congestion);
}

void ia_json_write_string(FILE *f, const char *s)
{
	putc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			putc(c, f);
	}
	putc('"', f);
}

/* "key": double, "key_exact": "num/den" */
static void write_ratio(FILE *f, const char *key, struct ia_ratio r)
{
	char num[IA_NUMFMT_LEN], exact[48];

	ia_ratio_exact(r, exact, sizeof(exact));
	fprintf(f, ", \"%s\": %s, \"%s_exact\": \"%s\"", key, ia_fmt_ratio(r, num), key, exact);
}

int ia_links_write_json(FILE *f, const struct ia_problem *pb, const struct ia_placement *p,
			enum ia_links which, int indent)
{
	const struct ia_topo *t = pb->topo;
	bool first = true;

	putc('[', f);
	for (int h = 0; h < t->n; h++) {
		int v = t->order[h];
		const struct ia_switch *s = &t->sw[v];

		if (!ia_link_shown(pb, p, v, which))
			continue;
		fprintf(f, "%s\n%*s{\"switch\": ", first ? "" : ",", indent, "");
		first = false;
		ia_json_write_string(f, s->name);
		fputs(", \"parent\": ", f);
		if (s->parent >= 0)
			ia_json_write_string(f, t->sw[s->parent].name);
		else
			fputs("null", f);
		fprintf(f, ", \"load\": %u", pb->load ? pb->load[v] : s->load);
		write_ratio(f, "rate", s->rate);
		fprintf(f, ", \"messages\": %llu", (unsigned long long)p->msgs[v]);
		write_ratio(f, "congestion", ia_congestion(p->msgs[v], s->rate));
		fprintf(f, ", \"blue\": %s}", p->blue[v] ? "true" : "false");
	}
	if (!first)
		fprintf(f, "\n%*s", indent > 2 ? indent - 2 : 0, "");
	putc(']', f);
	return ferror(f) ? -EIO : 0;
}
