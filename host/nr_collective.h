/* SPDX-License-Identifier: BSD-3-Clause */
/* Running one collective on one ring of a communicator (nr_collective.c). */
#ifndef NR_COLLECTIVE_H
#define NR_COLLECTIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "comm_internal.h"

/*
 * One collective in flight on one ring, as nr_collective_run() runs it: post
 * what the window allows, poll, count send completions, hand receives to the
 * op, keep receives of the next collective for later, fail with a message
 * when nothing moves for timeout_ms.
 */
struct nr_collective {
	const char *name;               /* "nr_allreduce", for messages */
	int ring;                       /* NR_RING_BOX or NR_RING_PLAIN */
	void *op;
	const uint64_t *recvd;          /* messages received so far (recv bumps it) */
	uint64_t nrecv;                 /* ... of this many */
	uint64_t *acked;                /* send completions so far (the run bumps it) */
	uint64_t nsend;                 /* ... of this many */
	int (*post)(struct nr_comm *c, void *op);
	int (*recv)(struct nr_comm *c, void *op, const struct nr_wc *wc);
	bool (*waiting_recv)(const void *op);   /* stalled on a receive (for the message) */
};

int nr_collective_run(struct nr_comm *c, const struct nr_collective *d);

/* The immediate of message m of the op with sequence byte seq. */
static inline uint32_t nr_tag(uint8_t seq, uint64_t m)
{
	return (uint32_t)seq << 24 | (uint32_t)(m & 0xFFFFFF);
}

/*
 * The arguments every collective checks (fn names it in messages).  1: the
 * call is over (done, or error in *rc); 0: go on with the collective.
 */
int nr_check_args(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		  enum nr_dtype dtype, enum nr_op op, const char *fn, int *rc);

/* A public collective call: fn runs with the progress thread kept off the transport. */
typedef int nr_collective_fn(struct nr_comm *c, const void *sendbuf, void *recvbuf,
			     size_t count, enum nr_dtype dtype, enum nr_op op);
int nr_collective_call(nr_collective_fn *fn, struct nr_comm *c, const void *sendbuf,
		       void *recvbuf, size_t count, enum nr_dtype dtype, enum nr_op op);

#endif /* NR_COLLECTIVE_H */
