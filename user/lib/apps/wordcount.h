/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Word count, the paper's big-data use case (Sec. V, Fig. 6), as data: a
 * text corpus read into word ids, split across mappers, and the message
 * volume each switch of a tree carries when its mappers emit (word, count)
 * records (docs/apps.md).
 *
 * A word is a maximal run of ASCII letters, digits and '_' (what
 * `LC_ALL=C tr -cs 'A-Za-z0-9_' '\n'` leaves), case kept. Word ids are
 * given in order of first occurrence: they are the key space that mappers,
 * switches and the reducer share.
 */
#ifndef INAGG_WORDCOUNT_H
#define INAGG_WORDCOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "topo.h"

struct ia_wc_slot;

struct ia_corpus {
	uint32_t *word;		/* the corpus as word ids, in reading order */
	size_t nwords;
	uint32_t nvocab;	/* distinct words */
	char **vocab;		/* id -> word */
	uint64_t *count;	/* id -> occurrences: the single-process count */
	uint64_t bytes;		/* text read */
	int files;		/* files read */
	/* Internal: word -> id. */
	struct ia_wc_slot *tab;
	uint32_t mask;
	size_t cap_words, cap_vocab;
};

/* Empty corpus; free with ia_corpus_free(). */
void ia_corpus_init(struct ia_corpus *c);
void ia_corpus_free(struct ia_corpus *c);
/* Appends the words of a text (len bytes). 0 or -ENOMEM / -E2BIG. */
int ia_corpus_add_text(struct ia_corpus *c, const char *text, size_t len);
/* Appends a file. 0 or -errno, with the reason in err. */
int ia_corpus_add_file(struct ia_corpus *c, const char *path, char *err, size_t errlen);
/*
 * Appends path: a file, or a folder whose files ending in one of the
 * suffixes (NULL-terminated list; NULL takes every file) are read in
 * byte order of their paths, recursively. 0 or -errno with err.
 */
int ia_corpus_add_path(struct ia_corpus *c, const char *path, const char *const *suffixes,
		       char *err, size_t errlen);
/* Id of word[0..len), or -1 if the corpus never saw it. */
int64_t ia_corpus_find(const struct ia_corpus *c, const char *word, size_t len);

/* Mapper i of m reads the words [first, end): contiguous splits of equal size. */
static inline size_t ia_wc_split(size_t nwords, uint32_t m, uint32_t i)
{
	return (size_t)((unsigned __int128)nwords * i / m);
}

/*
 * Message volume of word count on tree t, whose switch v has t->sw[v].load
 * mappers (numbered as netplan.h numbers workers; t->first_worker[n]
 * mappers read the corpus in as many splits). Keys are cut into blocks of
 * kpm consecutive word ids and a message carries the records of one block
 * (kpm 1: one record per message, the paper's unit). For each switch:
 *   load[v]   messages its own mappers send: each mapper one per block in
 *             which it has a word (mappers combine their own records);
 *   merged[v] messages v sends blue: one per block in which its subtree
 *             has a word (the union of the subtree's keys), 0 if none.
 * 0, -EINVAL (no mappers, kpm 0), -EOVERFLOW (a volume beyond uint32) or -ENOMEM.
 */
int ia_wc_volume(const struct ia_corpus *c, const struct ia_topo *t, uint32_t kpm,
		 uint32_t *load, uint32_t *merged);

#endif
