/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Clean end-to-end runs over a tree of switches (fuzz_tree.c): three
 * switch instances (a root and two below it), each as BPF maps and
 * programs run with BPF_PROG_TEST_RUN and as the reference model, carry
 * whole jobs from the workers to a parameter server and the results back
 * down; the harness delivers what each switch sends to the next hop. Every
 * frame is compared (verdict, bytes), every counter at the end of each
 * phase, and the sums at the PS and at every worker must be the exact
 * integer sums, the same in the model's run as in the datapath's.
 */
#ifndef INAGG_TESTS_TREE_H
#define INAGG_TESTS_TREE_H

#include <stdio.h>
#include <linux/types.h>

struct ft;

struct ft_stats {
	__u64	frames;		/* through a switch, both sides */
	__u64	chunks;		/* chunks completed exactly at the PS */
	__u64	results;	/* results checked at workers */
	__u64	retx;		/* resends a worker made (PS job: pieces stuck in slots) */
	__u64	ps_dup, ps_overlap;	/* pieces the PS ignored: a subset, a partial overlap */
	__u64	claims, hits, flushes, evictions, collisions, lent, dmember;	/* summed */
};

/* The switches set up (veth ports in the caller's network namespace). */
int ft_open(struct ft **out);
void ft_close(struct ft *t);
/*
 * Every scenario (roles per switch) through every tail phase with seed's
 * values and delivery orders; 0 if everything was exact and the model
 * agreed, else 1 with what differed printed to f.
 */
int ft_run(struct ft *t, __u64 seed, FILE *f, struct ft_stats *st);

/* The runs' figures, one line each. */
void ft_report(FILE *f, const struct ft_stats *st, int seeds, long secs);

#endif /* INAGG_TESTS_TREE_H */
