// SPDX-License-Identifier: GPL-2.0
/* Topology model: validation, the name index and the derived tree arrays. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "topo.h"

struct ia_name_slot {
	uint32_t hash;
	int idx;		/* -1: empty */
};

#define INDEX_BATCH 16

/* Names are stored in chunks: a million names cost a few allocations, not a million. */
#define NAME_CHUNK (4 << 20)

struct ia_name_chunk {
	struct ia_name_chunk *next;
	size_t used, size;
	char text[];
};

static bool in_chunks(const struct ia_name_chunk *c, const char *s)
{
	for (; c; c = c->next)
		if (s >= c->text && s < c->text + c->size)
			return true;
	return false;
}

char *ia_topo_strdup(struct ia_topo *t, const char *s, size_t len)
{
	struct ia_name_chunk *c = t->names;
	char *d;

	if (!c || c->size - c->used < len + 1) {
		size_t size = len + 1 > NAME_CHUNK ? len + 1 : NAME_CHUNK;

		c = ia_alloc_big(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = size;
		c->next = t->names;
		t->names = c;
	}
	d = c->text + c->used;
	memcpy(d, s, len);
	d[len] = '\0';
	c->used += len + 1;
	return d;
}

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
		t->sw[i].slots = IA_SLOTS_DEFAULT;
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
	for (int i = 0; t->sw && i < t->n; i++)
		if (!t->names || !in_chunks(t->names, t->sw[i].name))
			free(t->sw[i].name);
	while (t->names) {
		struct ia_name_chunk *c = t->names;

		t->names = c->next;
		free(c);
	}
	free(t->sw);
	free(t->index);
	topo_free_derived(t);
	free(t);
}

/* FNV-1a: names are short, and this keeps the index dependency-free. */
static uint32_t name_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	/* Mix the high bits down: names like s1, s2, ... differ in their last byte only. */
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	return h;
}

static bool name_is(const char *name, const char *s, size_t len)
{
	return !strncmp(name, s, len) && !name[len];
}

int ia_topo_find_n(const struct ia_topo *t, const char *name, size_t len)
{
	uint32_t h, i;

	if (!t->index) {
		for (int v = 0; v < t->n; v++)
			if (t->sw[v].name && name_is(t->sw[v].name, name, len))
				return v;
		return -1;
	}
	h = name_hash(name, len);
	for (i = h & t->index_mask; t->index[i].idx >= 0; i = (i + 1) & t->index_mask) {
		const struct ia_name_slot *e = &t->index[i];

		if (e->hash == h && name_is(t->sw[e->idx].name, name, len))
			return e->idx;
	}
	return -1;
}

int ia_topo_find(const struct ia_topo *t, const char *name)
{
	return ia_topo_find_n(t, name, strlen(name));
}

static bool name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.';
}

int ia_topo_name_check(const char *s, int i, char *err, size_t errlen)
{
	size_t n = 0;

	if (!s || !*s)
		return ia_fail(err, errlen, -EINVAL, "switch #%d: field \"name\": missing or empty", i);
	while (n <= IA_NAME_MAX && name_char(s[n]))
		n++;
	/* The name itself is not echoed: it may hold anything, newlines included. */
	if (n > IA_NAME_MAX || s[n] || !strcmp(s, "dest"))
		return ia_fail(err, errlen, -EINVAL,
			       "switch #%d: field \"name\": must be 1 to %d of [A-Za-z0-9_.] and not \"dest\" (names become namespace names)",
			       i, IA_NAME_MAX);
	return 0;
}

int ia_topo_index(struct ia_topo *t, char *err, size_t errlen)
{
	uint32_t size = 16, i;
	int ret;

	free(t->index);
	t->index = NULL;
	while (size < 2u * (uint32_t)t->n)
		size *= 2;
	t->index = ia_alloc_big(size * sizeof(*t->index));
	if (!t->index)
		return ia_fail(err, errlen, -ENOMEM, "topology: out of memory");
	t->index_mask = size - 1;
	for (i = 0; i < size; i++)
		t->index[i].idx = -1;
	/* In batches: the slots of the next names are fetched while these are placed. */
	for (int v0 = 0; v0 < t->n; v0 += INDEX_BATCH) {
		int nb = t->n - v0 < INDEX_BATCH ? t->n - v0 : INDEX_BATCH;
		uint32_t hs[INDEX_BATCH];

		for (int b = 0; b < nb; b++) {
			const char *name = t->sw[v0 + b].name;

			ret = ia_topo_name_check(name, v0 + b, err, errlen);
			if (ret)
				goto fail;
			hs[b] = name_hash(name, strlen(name));
			__builtin_prefetch(&t->index[hs[b] & t->index_mask], 1);
		}
		for (int b = 0; b < nb; b++) {
			const char *name = t->sw[v0 + b].name;
			/* cppcheck-suppress uninitvar ; the loop above set hs[b] for every b < nb */
			uint32_t h = hs[b];

			for (i = h & t->index_mask; t->index[i].idx >= 0; i = (i + 1) & t->index_mask) {
				if (t->index[i].hash == h && !strcmp(t->sw[t->index[i].idx].name, name)) {
					ret = ia_fail(err, errlen, -EINVAL,
						      "switch \"%s\": field \"name\": duplicate", name);
					goto fail;
				}
			}
			t->index[i] = (struct ia_name_slot){ h, v0 + b };
		}
	}
	return 0;
fail:
	free(t->index);
	t->index = NULL;
	return ret;
}

void ia_topo_number_workers(struct ia_topo *t)
{
	t->first_worker[0] = 0;
	for (int v = 0; v < t->n; v++)
		t->first_worker[v + 1] = t->first_worker[v] + (int)t->sw[v].load;
}

uint64_t ia_topo_total_load(const struct ia_topo *t)
{
	uint64_t s = 0;

	for (int i = 0; i < t->n; i++)
		s += t->sw[i].load;
	return s;
}

int ia_topo_finalize(struct ia_topo *t, char *err, size_t errlen)
{
	int n = t->n, *fill = NULL, ret = -EINVAL, seen = 0;
	uint64_t total = 0;

	topo_free_derived(t);
	if (n <= 0) {
		ia_fail(err, errlen, -EINVAL, "topology: no switches");
		return -EINVAL;
	}
	if (!t->index) {
		ret = ia_topo_index(t, err, errlen);
		if (ret)
			return ret;
		ret = -EINVAL;
	}
	t->root = -1;
	for (int i = 0; i < n; i++) {
		struct ia_switch *s = &t->sw[i];

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

	fill = ia_alloc_big(n * sizeof(int));
	t->child_start = ia_calloc_big(n + 1, sizeof(int));
	t->child = ia_alloc_big(n * sizeof(int));
	t->order = ia_alloc_big(n * sizeof(int));
	t->depth = ia_alloc_big(n * sizeof(int));
	t->child_pos = ia_alloc_big(n * sizeof(int));
	t->first_worker = ia_alloc_big((n + 1) * sizeof(int));
	if (!fill || !t->child_start || !t->child || !t->order || !t->depth || !t->child_pos ||
	    !t->first_worker) {
		ia_fail(err, errlen, -EINVAL, "topology: out of memory");
		ret = -ENOMEM;
		goto out;
	}
	/* Children in CSR form, in input order. */
	for (int i = 0; i < n; i++)
		if (t->sw[i].parent >= 0)
			t->child_start[t->sw[i].parent + 1]++;
	for (int i = 0; i < n; i++)
		t->child_start[i + 1] += t->child_start[i];
	for (int i = 0; i < n; i++)
		fill[i] = t->child_start[i];
	for (int i = 0; i < n; i++) {
		int p = t->sw[i].parent;

		t->child_pos[i] = p < 0 ? -1 : fill[p] - t->child_start[p];
		if (p >= 0)
			t->child[fill[p]++] = i;
	}
	ia_topo_number_workers(t);

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
	free(fill);
	if (ret)
		topo_free_derived(t);
	return ret;
}
