/* SPDX-License-Identifier: BSD-3-Clause */
/* Running one collective on one ring of a communicator (nr_collective.c). */
#ifndef NR_COLLECTIVE_H
#define NR_COLLECTIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/comm/comm_internal.h"

/*
 * A collective: how its op posts and takes messages on its rings (the plain
 * ring, or every channel of a box job).  nr_collective_run() runs one op
 * of it: post what the window allows, poll, count send completions, hand
 * receives to the op, keep receives of the next collective for later, fail
 * with a message when nothing moves for timeout_ms.  k below is a ring's
 * index among the op's rings (the box channel).
 */
struct nr_collective {
	const char *name;               /* "nr_allreduce", for messages */
	int (*post)(struct nr_comm *c, void *op);
	/* a receive of this op on ring k (the runner posts the receive again) */
	int (*recv)(struct nr_comm *c, void *op, unsigned k, const struct nr_wc *wc);
	/* a receive on ring k is still this op's (else the next op's: a peer is ahead) */
	bool (*recv_due)(const void *op, unsigned k);
	/* optional: a send completion on ring k */
	void (*acked)(void *op, unsigned k);
	bool (*waiting_recv)(const void *op);   /* stalled on a receive (for the message) */
	/* optional: ring k has sent messages whose results are still out (a
	 * stall's message names the box of such a ring) */
	bool (*owed)(const void *op, unsigned k);
};

/* What an op of a collective counts (part of the op). */
struct nr_coll_count {
	uint64_t nsend, sent;           /* messages to send; posted (nr_post_message counts) */
	uint64_t acked;                 /* send completions (the runner counts) */
	uint64_t nrecv, recvd;          /* messages to receive; received (recv counts) */
};

/* ring: NR_RING_PLAIN, or a box job's first channel nr_box_ring(t, 0) (then all
 * c->n_channels of them) */
int nr_collective_run(struct nr_comm *c, const struct nr_collective *d, int ring, void *op,
		      struct nr_coll_count *cnt);

/* The immediate of message m of the op with sequence byte seq. */
static inline uint32_t nr_tag(uint8_t seq, uint64_t m)
{
	return (uint32_t)seq << 24 | (uint32_t)(m & 0xFFFFFF);
}

/*
 * Post message *sent (immediate nr_tag(seq, *sent)) of the collective named
 * name: len bytes at laddr of the ring's region to offset remote_off of
 * rank+1's, its packets with the traffic classes of *mark (nr_tp_mark; NULL:
 * the transport's, cfg.tclass).  0 and *sent counts it, or NR_ERR_TRANSPORT
 * with the message set.
 */
int nr_post_message(struct nr_comm *c, int ring, const char *name, uint8_t seq, uint64_t *sent,
		    const void *laddr, uint32_t len, uint64_t remote_off,
		    const struct nr_tp_mark *mark);

/*
 * The arguments every collective checks (fn names it in messages): a dtype
 * of netreduce.h with NR_SUM, or NR_FLOAT32 with NR_MAX.  1: the call is
 * over (done, or error in *rc); 0: go on with the collective.
 */
int nr_check_args(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		  enum nr_dtype dtype, enum nr_op op, const char *fn, int *rc);

/*
 * A public collective call: fn runs with the progress thread kept off the
 * transport.  flags: NR_MSG_* of nr_allreduce_flags (netreduce.h).
 */
typedef int nr_collective_fn(struct nr_comm *c, const void *sendbuf, void *recvbuf,
			     size_t count, enum nr_dtype dtype, enum nr_op op, unsigned flags);
int nr_collective_call(nr_collective_fn *fn, struct nr_comm *c, const void *sendbuf,
		       void *recvbuf, size_t count, enum nr_dtype dtype, enum nr_op op,
		       unsigned flags);

#endif /* NR_COLLECTIVE_H */
