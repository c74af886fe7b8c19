/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by inagg_bench.bpf.c and its user, tests/bench/xdp_bench.c. */
#ifndef INAGG_BENCH_H
#define INAGG_BENCH_H

/* Where the paced generator reads what the receiver took (pace_src). */
enum {
	PACE_PORT_RX,	/* rx of port pace_port in the switch's ia_pstats */
	PACE_SINK,	/* sink_count of the bench instance behind gen_pace_sink */
	PACE_USER,	/* pace_done, written by the user-space receiver */
};

#endif
