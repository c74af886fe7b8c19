// SPDX-License-Identifier: GPL-2.0
/*
 * Word count's mappers and reducer on loopback, without switches (every
 * record reaches the reducer raw, as through red switches): the reducer's
 * counts equal the single-process count of the same text word for word,
 * also when the mappers' sends are lost, duplicated and reordered. A thread
 * stands in for the root switch, copying each result to every mapper.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "kselftest_harness.h"
#include "host_io.h"
#include "wc_host.h"
#include "wordcount.h"

#define NMAP 4
/* Per process: unit tests of several checkouts may run at once. */
#define PORT (20000 + getpid() % 30000)

static const char *const md[] = { ".md", NULL };

struct rig {
	struct ia_corpus c;
	struct ia_host_faults faults;
	volatile sig_atomic_t stop;
	volatile sig_atomic_t reduced;	/* the reducer is done: the replicator drains and ends */
	int rc[NMAP];
	char err[NMAP][IA_ERRLEN];
	struct ia_wc_mapper_stats st[NMAP];
	int i;
	pthread_mutex_t lock;
	/* Results the reducer sent down: first ones, and again (flagged RETX). */
	uint64_t results_first, results_again;
};

static struct in_addr lo(int host)
{
	struct in_addr a = { htonl(0x7f000000 | host) };

	return a;
}

/* The root switch's part: every result to every mapper. */
static void *replicate(void *arg)
{
	struct rig *r = arg;
	struct ia_io_rx rx;
	int fd = ia_io_udp_open(lo(2), PORT, NULL, 0);

	if (fd < 0)
		return NULL;
	ia_io_rx_init(&rx);
	for (;;) {
		int k = ia_io_rx_wait(fd, &rx, 10000000);

		if (k <= 0 && r->reduced)
			break;

		for (int i = 0; i < k; i++) {
			const struct ia_hdr *h = (const struct ia_hdr *)rx.buf[i];

			if (rx.mm[i].msg_len >= IA_HDR_LEN && h->type == IA_MSG_RESULT) {
				r->results_again += !!(h->flags & IA_F_RETX);
				r->results_first += !(h->flags & IA_F_RETX);
			}
			for (int m = 0; m < NMAP; m++) {
				struct sockaddr_in to = { .sin_family = AF_INET,
							  .sin_port = htons(PORT),
							  .sin_addr = lo(10 + m) };

				sendto(fd, rx.buf[i], rx.mm[i].msg_len, 0, (void *)&to,
				       sizeof(to));
			}
		}
	}
	close(fd);
	return NULL;
}

static void *mapper(void *arg)
{
	struct rig *r = arg;
	int i;

	pthread_mutex_lock(&r->lock);
	i = r->i++;
	pthread_mutex_unlock(&r->lock);
	struct ia_wc_mapper_cfg cfg = {
		.job = 7, .id = i + 1, .addr = lo(10 + i), .reducer = lo(1), .port = PORT,
		.base_seq = 100, .nvocab = r->c.nvocab, .window = 4, .timeout_ms = 50,
		.retries = 200, .faults = r->faults,
	};
	size_t from = ia_wc_split(r->c.nwords, NMAP, i), to = ia_wc_split(r->c.nwords, NMAP, i + 1);

	cfg.faults.seed += i;
	r->rc[i] = ia_wc_map(&cfg, r->c.word + from, to - from, &r->st[i], r->err[i],
			     sizeof(r->err[i]));
	return NULL;
}

struct reduce_arg {
	const struct ia_wc_reducer_cfg *cfg;
	uint32_t *counts;
	struct ia_wc_reducer_stats *st;
	char *err;
	int rc;
};

static void *reduce(void *p)
{
	struct reduce_arg *a = p;

	a->rc = ia_wc_reduce(a->cfg, a->counts, a->st, a->err, IA_ERRLEN);
	return NULL;
}

static void run(struct __test_metadata *_metadata, struct rig *r)
{
	struct ia_sender members[NMAP];
	struct ia_wc_reducer_cfg cfg = {
		.job = 7, .addr = lo(1), .down = lo(2), .port = PORT, .base_seq = 100,
		.members = members, .nmembers = NMAP,
	};
	struct ia_wc_reducer_stats st;
	pthread_t rep, map[NMAP];
	char err[IA_ERRLEN];
	uint32_t *counts;
	uint64_t blocks = 0;

	ia_corpus_init(&r->c);
	ASSERT_EQ(0, ia_corpus_add_path(&r->c, "docs", md, err, sizeof(err))) TH_LOG("%s", err);
	cfg.nvocab = r->c.nvocab;
	counts = calloc(r->c.nvocab, sizeof(*counts));
	for (int i = 0; i < NMAP; i++)
		members[i] = (struct ia_sender){ .id = i + 1, .nworkers = 1 };
	pthread_mutex_init(&r->lock, NULL);
	/* Serves until stopped: mappers that missed a result resend. */
	cfg.stop = &r->stop;
	struct reduce_arg a = { &cfg, counts, &st, err, -1 };
	pthread_t red;

	ASSERT_EQ(0, pthread_create(&red, NULL, reduce, &a));
	ASSERT_EQ(0, pthread_create(&rep, NULL, replicate, r));
	for (int i = 0; i < NMAP; i++)
		ASSERT_EQ(0, pthread_create(&map[i], NULL, mapper, r));
	for (int i = 0; i < NMAP; i++)
		pthread_join(map[i], NULL);
	r->stop = 1;
	pthread_join(red, NULL);
	r->reduced = 1;
	pthread_join(rep, NULL);
	ASSERT_EQ(0, a.rc) TH_LOG("reducer: %s", err);
	for (int i = 0; i < NMAP; i++) {
		ASSERT_EQ(0, r->rc[i]) TH_LOG("mapper %d: %s", i, r->err[i]);
		blocks += r->st[i].blocks;
	}
	for (uint32_t id = 0; id < r->c.nvocab; id++) {
		ASSERT_EQ(r->c.count[id], counts[id]) TH_LOG("%s", r->c.vocab[id]);
	}
	/* Every mapper's every announcement and block counted once. */
	ASSERT_EQ(NMAP * ia_wc_nann(r->c.nvocab) + blocks, st.accepted);
	ASSERT_EQ(st.blocks, st.done);
	ASSERT_EQ(0u, st.dropped);
	/* A chunk's result once unflagged; sent again for late messages, flagged RETX. */
	ASSERT_EQ(st.results - st.late, r->results_first);
	ASSERT_EQ(st.late, r->results_again);
	free(counts);
	ia_corpus_free(&r->c);
}

TEST(loopback_counts_equal_single_process_count)
{
	struct rig *r = calloc(1, sizeof(*r));

	run(_metadata, r);
	free(r);
}

TEST(loss_duplication_reordering_still_exact)
{
	struct rig *r = calloc(1, sizeof(*r));

	r->faults = (struct ia_host_faults){ .loss_ppm = 100000, .dup_ppm = 100000,
					     .reorder_ppm = 100000, .seed = 42 };
	run(_metadata, r);
	free(r);
}

TEST(chunk_layout)
{
	/* 600 keys: 3 blocks (256, 256, 88) after one announcement of 3 elements. */
	ASSERT_EQ(3u, ia_wc_nblocks(600));
	ASSERT_EQ(1u, ia_wc_nann(600));
	ASSERT_EQ(4u, ia_wc_chunks(600));
	ASSERT_EQ(3u, ia_wc_chunk_len(600, 0));
	ASSERT_EQ(256u, ia_wc_chunk_len(600, 1));
	ASSERT_EQ(88u, ia_wc_chunk_len(600, 3));
	/* 70000 keys: 274 blocks, two announcements (256 + 18). */
	ASSERT_EQ(2u, ia_wc_nann(70000));
	ASSERT_EQ(18u, ia_wc_chunk_len(70000, 1));
	ASSERT_EQ(256u, ia_wc_chunk_len(70000, 2));
	ASSERT_EQ(70000u - 273 * 256, ia_wc_chunk_len(70000, 2 + 273));
}

TEST_HARNESS_MAIN
