/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shared-memory segment of the P ranks of one host (nr_shm.c): a POSIX
 * shared memory object (shm_open + mmap) that local rank 0 creates and the
 * others attach to, a barrier on a futex in it, and the failure of one rank
 * seen by all.  The local collectives that move data through it are
 * nr_local.c.  Never the network.
 *
 * Layout: a header (magic, size, barrier, pids, failure), then
 *   inputs   2 sets x P areas of area_bytes: rank r writes only its own area
 *   results  2 sets x 1 area of area_bytes: written piece by piece
 * Two sets, so that round j+1 fills one set while slower ranks still read
 * round j from the other (nr_local.c states why that is safe).
 */
#ifndef NR_SHM_H
#define NR_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NR_LOCAL_MAX 64          /* ranks per host */
#define NR_SHM_ERRLEN 512

struct nr_shm;

struct nr_shm_config {
	const char *name;        /* "/nr-..." the same on every local rank of the host */
	int size;                /* P: local ranks, 1..NR_LOCAL_MAX */
	int rank;                /* this local rank */
	size_t area_bytes;       /* bytes of one area, a multiple of 4 * size (0: about 4 MiB) */
	uint32_t timeout_ms;     /* bound on any wait for another local rank */
	double pace_bytes_per_s; /* > 0: cap this rank's reads of other ranks' data at this
				    rate (emulates a slower intra-host link); 0: none */
};

/*
 * Local rank 0 creates the segment, the others attach (waiting up to
 * timeout_ms for it); once all P are in, the name is unlinked, so nothing is
 * left behind whatever happens later.  0 or a negative enum nr_err with err set.
 */
int nr_shm_open(const struct nr_shm_config *cfg, struct nr_shm **shm, char *err, size_t errlen);
void nr_shm_close(struct nr_shm *s);

/*
 * All P ranks: 0, or an nr_err: another rank failed or exited, or a rank that
 * is not busy did not come within timeout_ms (the message names them).
 */
int nr_shm_barrier(struct nr_shm *s, const char *what);
/*
 * This rank enters (true) or leaves (false) a phase bounded by its own
 * timeout (its network collective): meanwhile the others wait for it without
 * a deadline; it fails them (nr_shm_fail) if the phase fails.
 */
void nr_shm_busy(struct nr_shm *s, bool busy);
/*
 * This rank failed: record why and wake the others, whose waits then fail
 * naming this rank.  Returns code (negative nr_err) and sets nr_shm_error.
 */
int nr_shm_fail(struct nr_shm *s, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *nr_shm_error(const struct nr_shm *s);

int nr_shm_size(const struct nr_shm *s);
int nr_shm_rank(const struct nr_shm *s);
size_t nr_shm_area_bytes(const struct nr_shm *s);
/*
 * The set (0, 1) of the next round: rounds alternate sets whatever operation
 * they belong to, so two rounds in a row never share a set.
 */
int nr_shm_next_set(struct nr_shm *s);
/* Input area of local rank r in set (0, 1); the result area of set. */
float *nr_shm_input(struct nr_shm *s, int set, int r);
float *nr_shm_result(struct nr_shm *s, int set);
/* This rank read `bytes` of other ranks' data: wait as pace_bytes_per_s demands. */
void nr_shm_pace(struct nr_shm *s, size_t bytes);

#endif /* NR_SHM_H */
