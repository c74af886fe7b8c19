// SPDX-License-Identifier: GPL-2.0
/* Word count's corpus and message volume; see wordcount.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mem.h"
#include "wordcount.h"

/* Bounds that keep ids, block numbers and stamps far from UINT32_MAX. */
#define MAX_VOCAB	(1u << 30)
#define MAX_WORDS	((size_t)1 << 32)

struct ia_wc_slot {
	uint64_t hash;
	uint32_t id;		/* UINT32_MAX: empty */
};

void ia_corpus_init(struct ia_corpus *c)
{
	memset(c, 0, sizeof(*c));
}

void ia_corpus_free(struct ia_corpus *c)
{
	for (uint32_t i = 0; i < c->nvocab; i++)
		free(c->vocab[i]);
	free(c->vocab);
	free(c->count);
	free(c->word);
	free(c->tab);
	ia_corpus_init(c);
}

static uint64_t hash_word(const char *w, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a, then a final mix */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)w[i]) * 0x100000001b3ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

static bool is_word_byte(unsigned char b)
{
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') ||
	       b == '_';
}

static int grow_tab(struct ia_corpus *c)
{
	uint32_t size = c->tab ? (c->mask + 1) * 2 : 1u << 16;
	struct ia_wc_slot *t = ia_alloc_big((size_t)size * sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (uint32_t i = 0; i < size; i++)
		t[i].id = UINT32_MAX;
	for (uint32_t i = 0; c->tab && i <= c->mask; i++) {
		uint32_t k = c->tab[i].hash & (size - 1);

		if (c->tab[i].id == UINT32_MAX)
			continue;
		while (t[k].id != UINT32_MAX)
			k = (k + 1) & (size - 1);
		t[k] = c->tab[i];
	}
	free(c->tab);
	c->tab = t;
	c->mask = size - 1;
	return 0;
}

/* Slot of word (its id, or the empty slot where it would go). */
static struct ia_wc_slot *lookup(const struct ia_corpus *c, const char *w, size_t len,
				 uint64_t h)
{
	uint32_t k = h & c->mask;

	for (;;) {
		struct ia_wc_slot *s = &c->tab[k];

		if (s->id == UINT32_MAX ||
		    (s->hash == h && !strncmp(c->vocab[s->id], w, len) && !c->vocab[s->id][len]))
			return s;
		k = (k + 1) & c->mask;
	}
}

static int new_word(struct ia_corpus *c, const char *w, size_t len, uint64_t h, uint32_t *id)
{
	struct ia_wc_slot *s;

	if (c->nvocab >= MAX_VOCAB)
		return -E2BIG;
	if (c->nvocab == c->cap_vocab) {
		size_t cap = c->cap_vocab ? c->cap_vocab * 2 : 4096;
		char **v = realloc(c->vocab, cap * sizeof(*v));
		uint64_t *n = v ? realloc(c->count, cap * sizeof(*n)) : NULL;

		if (v)
			c->vocab = v;
		if (!n)
			return -ENOMEM;
		c->count = n;
		c->cap_vocab = cap;
	}
	/* Table at most half full. */
	if (!c->tab || (uint64_t)(c->nvocab + 1) * 2 > (uint64_t)c->mask + 1) {
		int ret = grow_tab(c);

		if (ret)
			return ret;
	}
	c->vocab[c->nvocab] = strndup(w, len);
	if (!c->vocab[c->nvocab])
		return -ENOMEM;
	c->count[c->nvocab] = 0;
	s = lookup(c, w, len, h);
	s->hash = h;
	s->id = c->nvocab;
	*id = c->nvocab++;
	return 0;
}

static int push_word(struct ia_corpus *c, uint32_t id)
{
	if (c->nwords == c->cap_words) {
		size_t cap = c->cap_words ? c->cap_words * 2 : 1 << 16;
		uint32_t *w;

		if (cap > MAX_WORDS)
			return -E2BIG;
		w = ia_realloc_big(c->word, cap * sizeof(*w));
		if (!w)
			return -ENOMEM;
		c->word = w;
		c->cap_words = cap;
	}
	c->word[c->nwords++] = id;
	c->count[id]++;
	return 0;
}

int64_t ia_corpus_find(const struct ia_corpus *c, const char *word, size_t len)
{
	const struct ia_wc_slot *s;

	if (!c->tab)
		return -1;
	s = lookup(c, word, len, hash_word(word, len));
	return s->id == UINT32_MAX ? -1 : (int64_t)s->id;
}

int ia_corpus_add_text(struct ia_corpus *c, const char *text, size_t len)
{
	size_t i = 0;

	c->bytes += len;
	while (i < len) {
		size_t start;
		uint64_t h;
		uint32_t id;
		int ret;

		if (!is_word_byte(text[i])) {
			i++;
			continue;
		}
		for (start = i; i < len && is_word_byte(text[i]); i++)
			;
		h = hash_word(text + start, i - start);
		if (!c->tab) {
			ret = grow_tab(c);
			if (ret)
				return ret;
		}
		{
			struct ia_wc_slot *s = lookup(c, text + start, i - start, h);

			if (s->id != UINT32_MAX) {
				id = s->id;
			} else {
				ret = new_word(c, text + start, i - start, h, &id);
				if (ret)
					return ret;
			}
		}
		ret = push_word(c, id);
		if (ret)
			return ret;
	}
	return 0;
}

int ia_corpus_add_file(struct ia_corpus *c, const char *path, char *err, size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ia_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st)) {
		ret = ia_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
		goto out;
	}
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf) {
		ret = ia_fail(err, errlen, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = ia_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (!r)
			break;	/* shrank while read: count what was there */
		got += r;
	}
	ret = ia_corpus_add_text(c, buf, got);
	if (ret)
		ia_fail(err, errlen, ret, "%s: %s", path,
			ret == -E2BIG ? "corpus too large" : strerror(-ret));
	else
		c->files++;
out:
	free(buf);
	close(fd);
	return ret;
}

static bool wanted(const char *name, const char *const *suffixes)
{
	size_t n = strlen(name);

	if (!suffixes)
		return true;
	for (; *suffixes; suffixes++) {
		size_t s = strlen(*suffixes);

		if (n >= s && !strcmp(name + n - s, *suffixes))
			return true;
	}
	return false;
}

static int cmp_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/*
 * A folder's entries in byte order of their names: since '/' sorts below
 * every name byte but NUL, a depth-first walk in that order reads paths in
 * byte order too (up to names holding bytes below '/').
 */
static int add_dir(struct ia_corpus *c, const char *dir, const char *const *suffixes,
		   int depth, char *err, size_t errlen)
{
	struct dirent **ents;
	int n, ret = 0;

	if (depth > 64)
		return ia_fail(err, errlen, -ELOOP, "%s: folders nested too deep", dir);
	n = scandir(dir, &ents, NULL, cmp_name);
	if (n < 0)
		return ia_fail(err, errlen, -errno, "%s: %s", dir, strerror(errno));
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		struct stat st;
		char *path;

		if (ret || !strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		if (asprintf(&path, "%s/%s", dir, name) < 0) {
			ret = -ENOMEM;
			continue;
		}
		if (lstat(path, &st))
			ret = ia_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
		else if (S_ISDIR(st.st_mode))
			ret = add_dir(c, path, suffixes, depth + 1, err, errlen);
		else if (S_ISREG(st.st_mode) && wanted(name, suffixes))
			ret = ia_corpus_add_file(c, path, err, errlen);
		free(path);
	}
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	return ret;
}

int ia_corpus_add_path(struct ia_corpus *c, const char *path, const char *const *suffixes,
		       char *err, size_t errlen)
{
	struct stat st;

	if (stat(path, &st))
		return ia_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return add_dir(c, path, suffixes, 0, err, errlen);
	return ia_corpus_add_file(c, path, err, errlen);
}

/* (block, switch) pairs, grouped by block by a counting sort. */
struct pairs {
	uint32_t *start;	/* [nblocks + 1] */
	uint32_t *sw;
};

int ia_wc_volume(const struct ia_corpus *c, const struct ia_topo *t, uint32_t kpm,
		 uint32_t *load, uint32_t *merged)
{
	uint32_t nmap = t->first_worker[t->n], nblocks;
	uint32_t *mstamp = NULL, *sstamp = NULL, *stamp = NULL;
	struct pairs p = { 0 };
	uint64_t npairs = 0, *vol = NULL;
	int ret = -ENOMEM;

	if (!nmap || !kpm)
		return -EINVAL;
	nblocks = c->nvocab / kpm + 1;
	mstamp = malloc((size_t)nblocks * sizeof(*mstamp));
	sstamp = malloc((size_t)nblocks * sizeof(*sstamp));
	stamp = malloc((size_t)t->n * sizeof(*stamp));
	p.start = calloc((size_t)nblocks + 1, sizeof(*p.start));
	vol = calloc(t->n, sizeof(*vol));
	if (!mstamp || !sstamp || !stamp || !p.start || !vol)
		goto out;
	memset(mstamp, 0xff, (size_t)nblocks * sizeof(*mstamp));
	memset(sstamp, 0xff, (size_t)nblocks * sizeof(*sstamp));

	/* Pass 1: each mapper's blocks (load), and each switch's blocks, counted per block. */
	for (int v = 0; v < t->n; v++) {
		for (uint32_t m = t->first_worker[v]; m < (uint32_t)t->first_worker[v + 1]; m++) {
			size_t end = ia_wc_split(c->nwords, nmap, m + 1);

			for (size_t i = ia_wc_split(c->nwords, nmap, m); i < end; i++) {
				uint32_t b = c->word[i] / kpm;

				if (mstamp[b] != m) {
					mstamp[b] = m;
					vol[v]++;
				}
				if (sstamp[b] != (uint32_t)v) {
					sstamp[b] = v;
					p.start[b + 1]++;
					npairs++;
				}
			}
		}
	}
	for (int v = 0; v < t->n; v++) {
		if (vol[v] > UINT32_MAX) {
			ret = -EOVERFLOW;
			goto out;
		}
		load[v] = vol[v];
		vol[v] = 0;
	}
	if (npairs > UINT32_MAX) {
		ret = -EOVERFLOW;
		goto out;
	}
	for (uint32_t b = 0; b < nblocks; b++)
		p.start[b + 1] += p.start[b];
	p.sw = malloc((npairs ? npairs : 1) * sizeof(*p.sw));
	if (!p.sw)
		goto out;
	/* Pass 2: fill the groups (the stamps tell a switch's first sight of a block). */
	memset(sstamp, 0xff, (size_t)nblocks * sizeof(*sstamp));
	memcpy(mstamp, p.start, (size_t)nblocks * sizeof(*mstamp));	/* fill cursors */
	for (int v = 0; v < t->n; v++) {
		size_t from = ia_wc_split(c->nwords, nmap, t->first_worker[v]);
		size_t end = ia_wc_split(c->nwords, nmap, t->first_worker[v + 1]);

		for (size_t i = from; i < end; i++) {
			uint32_t b = c->word[i] / kpm;

			if (sstamp[b] != (uint32_t)v) {
				sstamp[b] = v;
				p.sw[mstamp[b]++] = v;
			}
		}
	}
	/* Each block counts once at every switch above one that has it. */
	memset(stamp, 0xff, (size_t)t->n * sizeof(*stamp));
	for (uint32_t b = 0; b < nblocks; b++)
		for (uint32_t j = p.start[b]; j < p.start[b + 1]; j++)
			for (int u = p.sw[j]; u >= 0 && stamp[u] != b; u = t->sw[u].parent) {
				stamp[u] = b;
				vol[u]++;
			}
	for (int v = 0; v < t->n; v++) {
		if (vol[v] > UINT32_MAX) {
			ret = -EOVERFLOW;
			goto out;
		}
		merged[v] = vol[v];
	}
	ret = 0;
out:
	free(mstamp);
	free(sstamp);
	free(stamp);
	free(p.start);
	free(p.sw);
	free(vol);
	return ret;
}
