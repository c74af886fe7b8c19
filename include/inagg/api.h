/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libinagg.so's stable C API: join an inagg job as one of its workers (or as
 * its destination, the PS) and all-reduce integer vectors through the job's
 * network. This is what language bindings (python/inagg/) load; see
 * docs/pytorch.md.
 *
 * Stability: handles are opaque; options are set by number (enum
 * ia_api_opt), so the ABI grows by adding functions and enum values, never
 * by changing a struct. ia_api_version() tells the version a binding got;
 * IA_API_VERSION changes only when something is removed or changes meaning.
 *
 * Errors: every function that can fail returns 0 or a negative errno and
 * writes one line into err (errlen bytes, IA_API_ERRLEN is enough):
 *   -EINVAL        bad arguments (the message names which)
 *   -ETIMEDOUT     a chunk got no result after the retries (PS or network gone)
 *   -EHOSTUNREACH  no PS at the job's destination: its host said nothing listens
 *                  on the port, or there is no such host (ICMP), and no result
 *                  came for a second
 *   -ECONNREFUSED  the daemon does not know the job, it is not active, or the
 *                  daemon cannot be reached
 *   -EADDRNOTAVAIL this process is not in the worker's (or PS's) namespace
 *   -ENOSPC        the job's sequence space is used up (submit a new job)
 *   -EMSGSIZE      the route to the PS (or a PS's down address) has a smaller
 *                  MTU than the chunk needs (IA_API_OPT_CHUNK)
 *   -EPROTO        the workers disagreed on what they all-reduce
 *   -ENOMEM, -EINTR and socket errors as they come.
 *
 * Stream: every all-reduce of a handle takes the next chunk sequence numbers
 * of the job (each call padded to whole chunks, IA_API_OPT_CHUNK elements), so
 * all workers must make the same calls with the same lengths in the same
 * order, like any collective. A call also carries a hash of its length and
 * position, summed like the data: a worker that makes another call than the
 * others is found (-EPROTO), not summed into a wrong result.
 */
#ifndef INAGG_API_H
#define INAGG_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IA_API_VERSION		2
#define IA_API_ERRLEN		256
#define IA_API_CHUNK		256		/* default elements per message */
#define IA_API_MAX_CHUNK	768		/* IA_MAX_ELEMS */
#define IA_API_CAPACITY		(1ull << 30)	/* default stream length, in elements */
#define IA_API_I64_MAX_WORKERS	1023		/* int64 sums are exact up to this many */

struct ia_api;

enum ia_api_opt {
	IA_API_OPT_RETRIES = 1,		/* retransmissions of one chunk before -ETIMEDOUT */
	IA_API_OPT_TIMEOUT_MS,		/* shortest wait before a resend by timer */
	IA_API_OPT_WINDOW,		/* chunks in flight (worker; default: the job's) */
	IA_API_OPT_CAPACITY,		/* stream length in elements; PS and workers alike */
	/*
	 * Elements per message, 1..IA_API_MAX_CHUNK (default IA_API_CHUNK); PS
	 * and workers alike, before the first use. Fewer, larger frames cost
	 * less CPU per element; every link of the job's tree needs an MTU of
	 * 66 + 4 * chunk (768: 3,130; the handle's first call fails with
	 * -EMSGSIZE if its own route's is smaller).
	 */
	IA_API_OPT_CHUNK,
};

/* The API version of the loaded library (IA_API_VERSION it was built with). */
int ia_api_version(void);

/*
 * Joins job as its worker number index (0 .. nworkers - 1, in the order of
 * the daemon's "workers" list) by asking the daemon at sock (NULL: the
 * default socket). The caller runs in that worker's network namespace.
 */
int ia_api_worker_join(const char *sock, uint32_t job, uint32_t index, struct ia_api **out,
		       char *err, size_t errlen);
/* Joins job as its destination (PS); the caller runs in the destination's namespace. */
int ia_api_ps_join(const char *sock, uint32_t job, struct ia_api **out, char *err,
		   size_t errlen);

/*
 * Without a daemon: a worker at addr (dotted quad; results arrive there)
 * with sender id, for job of nworkers, whose PS is at ps; port 0 is inagg's.
 */
int ia_api_worker_open(uint32_t job, uint32_t id, uint32_t nworkers, const char *addr,
		       const char *ps, uint16_t port, struct ia_api **out, char *err,
		       size_t errlen);
/*
 * A PS at addr for job of nworkers; results go down to down (the root
 * switch), or, with down NULL, to each worker heard from (no switches).
 */
int ia_api_ps_open(uint32_t job, uint32_t nworkers, const char *addr, const char *down,
		   uint16_t port, struct ia_api **out, char *err, size_t errlen);

int ia_api_set(struct ia_api *h, enum ia_api_opt opt, uint64_t value, char *err,
	       size_t errlen);
/* Workers of the job, and this worker's index among them (-1 for a PS). */
int ia_api_nworkers(const struct ia_api *h);
int ia_api_index(const struct ia_api *h);

/* v[0..n) becomes the element-wise sum over the job's workers, modulo 2^32. */
int ia_api_allreduce_i32(struct ia_api *h, int32_t *v, uint64_t n, char *err, size_t errlen);
/*
 * The same modulo 2^64 (at most IA_API_I64_MAX_WORKERS workers): each value
 * travels as three 32-bit lanes of 22, 21 and 21 bits, so it costs three
 * elements on the wire.
 */
int ia_api_allreduce_i64(struct ia_api *h, int64_t *v, uint64_t n, char *err, size_t errlen);

/* Flags of ia_api_allreduce_f32(). */
#define IA_API_F32_MEAN		0x1	/* the mean over the workers, not the sum */

/*
 * v[0..n) (finite float32) becomes the sum over the job's workers (the mean
 * with IA_API_F32_MEAN), carried as int32 fixed point at a scale that cannot
 * wrap, agreed in the same call (docs/pytorch.md). rank: this worker's slot,
 * 0..nworkers-1, one per worker. *exponent: the agreed e (every |v| < 2^e);
 * on return the largest exponent any worker reported, *frac (if not NULL)
 * the scale used: the sum is within nworkers * 2^-(frac+1) of the exact one.
 * -ERANGE: some worker's values reached 2^e; v is unchanged, every worker got
 * -ERANGE, and all call again with the new *exponent. -EDOM: a value here is
 * not finite; nothing was sent.
 */
int ia_api_allreduce_f32(struct ia_api *h, float *v, uint64_t n, int rank, int *exponent,
			 int *frac, unsigned int flags, char *err, size_t errlen);
/* Seconds of the last float all-reduce's phases in ns: encode, network, decode. */
int ia_api_phase_ns(const struct ia_api *h, uint64_t ns[3]);

/*
 * PS: serves the job's stream until *stop becomes non-zero (checked every
 * 100 ms; NULL: until the process ends). 0 when stopped.
 */
int ia_api_ps_serve(struct ia_api *h, volatile int *stop, char *err, size_t errlen);

void ia_api_close(struct ia_api *h);

#ifdef __cplusplus
}
#endif

#endif
