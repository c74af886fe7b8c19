/* SPDX-License-Identifier: GPL-2.0 */
/* Inside an ia_api handle (include/inagg/api.h): api.c and api_join.c only. */
#ifndef INAGG_API_INT_H
#define INAGG_API_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>

#include "host.h"
#include "netplan.h"

struct ia_api {
	bool is_ps;
	bool unicast;		/* PS without switches: results to each worker */
	bool serving;
	uint32_t job, id, nworkers;
	int index;		/* among the job's workers; -1: PS or no daemon */
	struct in_addr addr, ps, down;
	uint16_t port;
	char netns[64];		/* where addr is (from the daemon), for messages */
	uint32_t window, timeout_ms, retries;
	enum ia_cc_policy cc;	/* the job's window policy, from the daemon (0: fixed) */
	bool ps_job;		/* the job is a PS job (flexina cuts it harder) */
	char sock[108];		/* joined by the daemon there, as a worker of an INA
				 * job: the link window is reported to it */
	struct ia_worker_path path;	/* window and round trips, from call to call */
	uint64_t capacity;	/* stream length in elements */
	bool capacity_set;	/* by the user (else the default, fitted to the chunk) */
	uint32_t chunk;		/* elements per message */
	uint32_t mtu_chunk;	/* the chunk the route's MTU was found to fit (0: none yet) */
	uint64_t next_seq;	/* first chunk of the next call */
	uint64_t calls;
	int32_t *buf;		/* tag + data, padded to whole chunks */
	uint64_t bufcap;
	uint64_t phase_ns[3];	/* the last float call: encode, network, decode */
};

/* What a call sums, in its tag: workers making different calls get -EPROTO. */
enum ia_api_kind {
	IA_API_KIND_I32 = 32,
	IA_API_KIND_I64 = 64,
	IA_API_KIND_F32 = 0xf32,
};

struct ia_api *ia_handle_alloc(uint32_t job, uint32_t nworkers);
/* A worker handle with room for n * lanes elements (and the tag), or why not. */
int ia_api_worker_ready(struct ia_api *h, uint64_t n, uint64_t lanes, char *err, size_t errlen);
/*
 * x[0..n) * 2^frac rounded half to even into q, saturated to int32 (NaN: 0);
 * returns the largest |x[i]|'s float32 bits (>= 0x7f800000: not finite).
 */
uint32_t ia_api_f32_encode(const float *x, int32_t *q, uint64_t n, int frac);
/* One all-reduce of h->buf[1 .. 1 + n) as the stream's next chunks. */
int ia_api_stream(struct ia_api *h, uint64_t n, uint32_t kind, char *err, size_t errlen);

#endif
