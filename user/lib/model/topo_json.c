// SPDX-License-Identifier: GPL-2.0
/*
 * Topology JSON, read with jsonread.h from the mapped file (a million
 * switches in a fraction of a second, rates exact), and written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jsonread.h"
#include "mem.h"
#include "topo.h"

/* The fields of one switch object, checked once it is closed. */
struct jswitch {
	struct ia_jval name, parent, rate, load, available, capacity, slots;
	struct ia_jval site;	/* where it lives: read by remote_site.c, not here */
	struct ia_jval unknown;	/* first unknown key */
	const char *twice;	/* first key given twice */
};

/* Strings with escapes are decoded into the topology's name storage. */
static char *store_in_topo(void *topo, const char *s, size_t len)
{
	return ia_topo_strdup(topo, s, len);
}

static int switch_field(struct ia_jreader *r, const struct ia_jval *key, void *arg)
{
	static const char *const names[] = { "name", "parent", "rate", "load", "available",
					     "capacity", "slots", "site" };
	struct jswitch *js = arg;
	struct ia_jval *fields[] = { &js->name, &js->parent, &js->rate, &js->load, &js->available,
				  &js->capacity, &js->slots, &js->site };
	struct ia_jval ignored;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!ia_jr_key_is(key, names[i]))
			continue;
		if (fields[i]->type != IA_J_ABSENT && !js->twice)
			js->twice = names[i];
		return ia_jr_value(r, fields[i], 2);
	}
	if (js->unknown.type == IA_J_ABSENT)
		js->unknown = *key;
	return ia_jr_value(r, &ignored, 2);
}
static int get_uint(const struct ia_jval *v, const char *sw, const char *field, uint64_t max,
		    uint64_t *out, char *err, size_t errlen)
{
	struct ia_ratio q;
	char text[40];

	if (v->type == IA_J_NUM && v->len < sizeof(text)) {
		memcpy(text, v->s, v->len);
		text[v->len] = '\0';
		if (!ia_ratio_parse(text, &q) && q.den == 1) {
			if (q.num > max)
				return ia_fail(err, errlen, -ERANGE,
					       "switch \"%s\": field \"%s\": larger than %llu", sw,
					       field, (unsigned long long)max);
			*out = q.num;
			return 0;
		}
	}
	return ia_fail(err, errlen, -EINVAL,
		       "switch \"%s\": field \"%s\": must be an integer >= 0, got %s", sw, field,
		       ia_jr_shown(v, text, sizeof(text)));
}

static int get_rate(const struct ia_jval *v, const char *sw, struct ia_ratio *rate, char *err,
		    size_t errlen)
{
	char text[40];
	int ret = -EINVAL;

	if (v->type != IA_J_NUM)
		return ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"rate\": must be a number",
			       sw);
	if (v->len < sizeof(text)) {
		memcpy(text, v->s, v->len);
		text[v->len] = '\0';
		ret = ia_ratio_parse(text, rate);
	} else {
		ret = -ERANGE;
	}
	if (ret == -ERANGE)
		return ia_fail(err, errlen, ret,
			       "switch \"%s\": field \"rate\": %s has more than %d decimal places or is too large",
			       sw, ia_jr_shown(v, text, sizeof(text)), IA_RATE_MAX_DIGITS);
	if (ret || rate->num == 0)
		return ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"rate\": must be > 0, got %s",
			       sw, ia_jr_shown(v, text, sizeof(text)));
	if (ia_ratio_cmp(*rate, (struct ia_ratio){ IA_RATE_MAX, 1 }) > 0)
		return ia_fail(err, errlen, -ERANGE, "switch \"%s\": field \"rate\": larger than %d",
			       sw, IA_RATE_MAX);
	return 0;
}

/* Checks one switch's fields in a fixed order, so the first problem is named. */
static int make_switch(struct ia_topo *t, const struct jswitch *js, int i, char *err,
		       size_t errlen)
{
	struct ia_switch *s = &t->sw[i];
	const char *name;
	char text[40];
	uint64_t u;
	int ret;

	*s = (struct ia_switch){ .parent = -1, .rate = { 1, 1 }, .available = true, .capacity = 1,
				   .slots = IA_SLOTS_DEFAULT };
	if (js->name.type != IA_J_STR || !js->name.len)
		return ia_fail(err, errlen, -EINVAL,
			       "switch #%d: field \"name\": missing or not a non-empty string", i);
	/* Checked before any message quotes it. */
	name = ia_topo_strdup(t, js->name.s, js->name.len);
	if (!name)
		return ia_fail(err, errlen, -ENOMEM, "topology: out of memory");
	ret = ia_topo_name_check(name, i, err, errlen);
	if (ret)
		return ret;
	if (js->unknown.type != IA_J_ABSENT)
		return ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"%s\": unknown", name,
			       ia_jr_shown(&js->unknown, text, sizeof(text)));
	if (js->site.type != IA_J_ABSENT && js->site.type != IA_J_OBJECT)
		return ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"site\": an object",
			       name);
	if (js->twice)
		return ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"%s\": given twice",
			       name, js->twice);
	if (js->parent.type == IA_J_ABSENT)
		return ia_fail(err, errlen, -EINVAL,
			       "switch \"%s\": field \"parent\": missing (null for the root)",
			       name);
	if (js->parent.type != IA_J_STR && js->parent.type != IA_J_NULL)
		return ia_fail(err, errlen, -EINVAL,
			       "switch \"%s\": field \"parent\": must be a name or null", name);
	if (js->rate.type != IA_J_ABSENT) {
		ret = get_rate(&js->rate, name, &s->rate, err, errlen);
		if (ret)
			return ret;
	}
	if (js->load.type != IA_J_ABSENT) {
		ret = get_uint(&js->load, name, "load", IA_LOAD_MAX, &u, err, errlen);
		if (ret)
			return ret;
		s->load = (uint32_t)u;
	}
	if (js->available.type != IA_J_ABSENT) {
		if (js->available.type != IA_J_BOOL)
			return ia_fail(err, errlen, -EINVAL,
				       "switch \"%s\": field \"available\": must be true or false",
				       name);
		s->available = js->available.b;
	}
	if (js->capacity.type != IA_J_ABSENT) {
		ret = get_uint(&js->capacity, name, "capacity", UINT32_MAX, &u, err, errlen);
		if (ret)
			return ret;
		s->capacity = (uint32_t)u;
	}
	if (js->slots.type != IA_J_ABSENT) {
		ret = get_uint(&js->slots, name, "slots", IA_SLOTS_MAX, &u, err, errlen);
		if (ret)
			return ret;
		s->slots = (uint32_t)u;
	}
	s->name = (char *)name;
	return 0;
}

/* A parent's name as read: in the text or in the name storage; NULL for null. */
struct jparent {
	const char *s;
	uint32_t len;
};

/* Switches read so far, and their parents' names. */
struct jtopo {
	struct ia_topo *t;
	struct jparent *parents;
	int cap;
	size_t text_len;	/* sizes the first allocation */
};

/* The smallest switch object, {"name":"a","parent":null}, has 26 characters. */
#define JSON_SWITCH_MIN 26

static int grow(struct jtopo *jt)
{
	int cap = jt->cap ? jt->cap * 2 : 1024;
	struct ia_switch *sw;
	struct jparent *parents;

	/* Room for as many switches as the text can hold: untouched pages cost nothing. */
	if (!jt->cap && jt->text_len / JSON_SWITCH_MIN + 1 > (size_t)cap)
		cap = jt->text_len / JSON_SWITCH_MIN + 1 > INT32_MAX / 2 ? INT32_MAX / 2
			: (int)(jt->text_len / JSON_SWITCH_MIN + 1);
	sw = ia_realloc_big(jt->t->sw, cap * sizeof(*sw));

	if (!sw)
		return -ENOMEM;
	jt->t->sw = sw;
	parents = ia_realloc_big(jt->parents, cap * sizeof(*parents));
	if (!parents)
		return -ENOMEM;
	jt->parents = parents;
	jt->cap = cap;
	return 0;
}

static int read_switches(struct ia_jreader *r, struct jtopo *jt)
{
	struct ia_topo *t = jt->t;
	int ret;

	if (ia_jr_peek(r) != '[')
		return ia_fail(r->err, r->errlen, -EINVAL,
			       "topology: field \"switches\": missing or not an array");
	r->p++;
	if (ia_jr_peek(r) == ']') {
		r->p++;
		return ia_fail(r->err, r->errlen, -EINVAL, "topology: field \"switches\": empty");
	}
	for (;;) {
		struct jswitch js = { 0 };

		if (t->n == jt->cap && grow(jt))
			return ia_fail(r->err, r->errlen, -ENOMEM, "topology: out of memory");
		if (t->n == INT32_MAX / 2)
			return ia_fail(r->err, r->errlen, -E2BIG, "topology: too many switches");
		if (ia_jr_peek(r) != '{') {
			struct ia_jval v;

			ret = ia_jr_value(r, &v, 1);
			return ret ? ret : ia_fail(r->err, r->errlen, -EINVAL,
						   "switch #%d: not a JSON object", t->n);
		}
		ret = ia_jr_walk(r, 2, switch_field, &js);
		if (!ret)
			ret = make_switch(t, &js, t->n, r->err, r->errlen);
		if (!ret)
			jt->parents[t->n] = (struct jparent){
				js.parent.type == IA_J_STR ? js.parent.s : NULL, (uint32_t)js.parent.len };
		if (ret)
			return ret;
		t->n++;
		if (ia_jr_peek(r) == ']') {
			r->p++;
			return 0;
		}
		ret = ia_jr_expect(r, ',', "expected ',' or ']'");
		if (ret)
			return ret;
	}
}

static int root_field(struct ia_jreader *r, const struct ia_jval *key, void *arg)
{
	struct jtopo *jt = arg;
	struct ia_jval v;

	if (!ia_jr_key_is(key, "switches"))
		return ia_jr_value(r, &v, 1);
	if (jt->t->n || jt->parents)
		return ia_fail(r->err, r->errlen, -EINVAL, "topology: field \"switches\": given twice");
	return read_switches(r, jt);
}

/* Parents by name, through the index; consecutive siblings share one lookup. */
static int resolve_parents(struct ia_topo *t, const struct jparent *parents, char *err,
			   size_t errlen)
{
	const struct jparent *last = NULL;
	int last_idx = -1;
	char text[40];

	for (int i = 0; i < t->n; i++) {
		const struct jparent *p = &parents[i];
		int idx;

		if (!p->s)
			continue;
		if (last && last->len == p->len && !memcmp(last->s, p->s, p->len))
			idx = last_idx;
		else
			idx = ia_topo_find_n(t, p->s, p->len);
		if (idx < 0 || idx == i)
			return ia_fail(err, errlen, -EINVAL, "switch \"%s\": field \"parent\": %s \"%s\"",
				       t->sw[i].name, idx == i ? "is itself" : "unknown switch",
				       ia_jr_shown(&(struct ia_jval){ IA_J_STR, p->s, p->len }, text,
					     sizeof(text)));
		t->sw[i].parent = idx;
		last = p;
		last_idx = idx;
	}
	return 0;
}

/* Parses text[0..len), which need not be NUL-terminated. */
static int parse_text(const char *text, size_t len, struct ia_topo **out, char *err,
		      size_t errlen)
{
	struct ia_jreader r = { .p = text, .start = text, .end = text + len, .what = "topology",
				.err = err, .errlen = errlen };
	struct jtopo jt = { 0 };
	int ret;

	*out = NULL;
	jt.t = calloc(1, sizeof(*jt.t));
	if (!jt.t)
		return ia_fail(err, errlen, -ENOMEM, "topology: out of memory");
	jt.t->root = -1;
	r.store = store_in_topo;
	r.store_arg = jt.t;
	jt.text_len = len;
	if (ia_jr_peek(&r) != '{') {
		struct ia_jval v;

		/* Valid JSON that is not an object still lacks the field. */
		ret = ia_jr_value(&r, &v, 0);
		if (!ret && ia_jr_peek(&r))
			ret = ia_jr_syntax(&r, "trailing data");
		if (!ret)
			ret = ia_fail(err, errlen, -EINVAL,
				      "topology: field \"switches\": missing or not an array");
		goto out;
	}
	ret = ia_jr_walk(&r, 1, root_field, &jt);
	if (ret)
		goto out;
	if (ia_jr_peek(&r)) {
		ret = ia_jr_syntax(&r, "trailing data");
		goto out;
	}
	if (!jt.t->n) {
		ret = ia_fail(err, errlen, -EINVAL,
			      "topology: field \"switches\": missing or not an array");
		goto out;
	}
	ret = ia_topo_index(jt.t, err, errlen);
	if (!ret)
		ret = resolve_parents(jt.t, jt.parents, err, errlen);
	if (!ret)
		ret = ia_topo_finalize(jt.t, err, errlen);
out:
	free(jt.parents);
	if (ret)
		ia_topo_free(jt.t);
	else
		*out = jt.t;
	return ret;
}

int ia_topo_parse(const char *json, struct ia_topo **out, char *err, size_t errlen)
{
	return parse_text(json, strlen(json), out, err, errlen);
}

/* A stream that cannot be mapped (a pipe, stdin): read whole. */
static char *read_all(int fd, size_t *len)
{
	size_t cap = 1 << 16;
	char *buf = malloc(cap), *nb;
	ssize_t r;

	*len = 0;
	while (buf && (r = read(fd, buf + *len, cap - *len)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return NULL;
		}
		*len += r;
		if (*len == cap) {
			nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
		}
	}
	return buf;
}

int ia_topo_load(const char *path, struct ia_topo **out, char *err, size_t errlen)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0, ret;
	struct stat st;
	char *text;
	size_t len;

	*out = NULL;
	if (fd < 0)
		return ia_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0) {
		/* Mapped: the page cache is read in place, no copy, few faults. */
		len = (size_t)st.st_size;
		text = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
		if (text == MAP_FAILED) {
			ret = -errno;
			if (fd)
				close(fd);
			return ia_fail(err, errlen, ret, "%s: %s", path, strerror(-ret));
		}
		ret = parse_text(text, len, out, err, errlen);
		munmap(text, len);
	} else {
		text = read_all(fd, &len);
		ret = text ? parse_text(text, len, out, err, errlen)
			   : ia_fail(err, errlen, errno ? -errno : -ENOMEM, "%s: %s", path,
				     strerror(errno ? errno : ENOMEM));
		free(text);
	}
	if (fd)
		close(fd);
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
		fprintf(f, ", \"rate\": %s, \"load\": %u, \"available\": %s, \"capacity\": %u, \"slots\": %u}%s\n",
			rate, s->load, s->available ? "true" : "false", s->capacity, s->slots,
			i + 1 < t->n ? "," : "");
	}
	fprintf(f, "]}\n");
	return ferror(f) ? -EIO : 0;
}
