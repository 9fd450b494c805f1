/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Running one collective on one ring of a communicator (struct nr_collective,
 * nr_collective_run), for the box all-reduce and the ring baseline alike:
 * post what the window allows, poll, count send completions, hand receives to
 * the collective, keep receives of the next collective for later, and fail
 * with a message naming the peer when a completion fails or nothing moves for
 * timeout_ms.  Also the checks and the locking every public call shares.
 */
#include <stdio.h>
#include <string.h>

#include "host/comm/nr_comm.h"
#include "host/comm/nr_progress.h"
#include "host/comm/nr_util.h"
#include "nr_collective.h"
#include "proto/nr_text.h"

/* 1: nothing more to do (done or error in *rc); 0: go on. */
int nr_check_args(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		  enum nr_dtype dtype, enum nr_op op, const char *fn, int *rc)
{
	*rc = 0;
	if (!c) {
		*rc = NR_ERR_INVALID;
		return 1;
	}
	if (c->broken) {
		*rc = NR_ERR_BROKEN;   /* keep the message of the original failure */
		return 1;
	}
	if (dtype != NR_FLOAT32 && dtype != NR_BF16 && dtype != NR_FP16)
		*rc = nr_fail(c, NR_ERR_INVALID, "%s: dtype %d is not a netreduce type (NR_FLOAT32, "
			      "NR_BF16, NR_FP16)", fn, (int)dtype);
	else if (op != NR_SUM && (op != NR_MAX || dtype != NR_FLOAT32))
		*rc = nr_fail(c, NR_ERR_INVALID, "%s: op %d of %s: NR_SUM of every type, NR_MAX of "
			      "NR_FLOAT32 only", fn, (int)op, nr_dtype_name(dtype));
	else if (count && (!sendbuf || !recvbuf))
		*rc = nr_fail(c, NR_ERR_INVALID, "%s: NULL buffer", fn);
	else if (count > ((size_t)1 << 40) / nr_dtype_size(dtype))
		*rc = nr_fail(c, NR_ERR_INVALID, "%s: count %zu too large", fn, count);
	else if (count == 0)
		return 1;
	else if (c->world == 1) {
		if (sendbuf != recvbuf)
			memmove(recvbuf, sendbuf, count * nr_dtype_size(dtype));
		return 1;
	} else
		return 0;
	return 1;
}

/* A failed completion: NR_ERR_PEER naming the peer (and on a box ring, box: its box). */
static int wc_fail(struct nr_comm *c, const struct nr_wc *wc, int ring, const char *box)
{
	int peer = wc->op == NR_WC_SEND ? (c->rank + 1) % c->world
					 : (c->rank + c->world - 1) % c->world;
	char ip[INET_ADDRSTRLEN];
	const char *detail = wc->qp ? nr_tp_qp_error(wc->qp) : NULL;

	nr_ip4_str(c->peers[peer].ip, ip);
	/* on a box ring an ACK needs every rank's contribution: anyone may be the dead one */
	if (ring >= NR_RING_BOX && wc->op == NR_WC_SEND && wc->status == NR_WC_RETRY_EXCEEDED)
		return nr_fail(c, NR_ERR_PEER,
			       "rank %d: no answer through the box (%s) from rank %d "
			       "(%s): a rank of the job or the box stopped answering: %s (%s)",
			       c->rank, box, peer, ip, nr_wc_status_str(wc->status),
			       detail ? detail : "");
	if (wc->op == NR_WC_SEND && wc->status == NR_WC_RETRY_EXCEEDED)
		return nr_fail(c, NR_ERR_PEER, "rank %d: no answer from rank %d (%s) on the %s "
			       "ring: %s (%s)", c->rank, peer, ip, nr_ring_name(ring),
			       nr_wc_status_str(wc->status), detail ? detail : "");
	return nr_fail(c, NR_ERR_PEER, "rank %d: %s from rank %d (%s) on the %s ring failed: %s (%s)",
		       c->rank, wc->op == NR_WC_SEND ? "write to" : "receive", peer, ip,
		       nr_ring_name(ring), nr_wc_status_str(wc->status), detail ? detail : "");
}

/*
 * Nothing moved for timeout_ms: NR_ERR_TIMEOUT naming whom we waited for, and
 * where the QP we waited on stands (the first channel's on the box ring).
 */
static int stall_fail(struct nr_comm *c, const char *what, int ring, const char *box,
		      bool waiting_recv)
{
	int peer = waiting_recv ? (c->rank + c->world - 1) % c->world : (c->rank + 1) % c->world;
	const struct nr_ring *r = &c->ring[ring];
	char ip[INET_ADDRSTRLEN], st[192];

	nr_ip4_str(c->peers[peer].ip, ip);
	nr_tp_qp_state(waiting_recv ? r->rqp : r->sqp, st, sizeof(st));
	if (ring >= NR_RING_BOX)
		return nr_fail(c, NR_ERR_TIMEOUT,
			       "rank %d: %s: timeout: no result from the box (%s) "
			       "within %u ms: a rank of the job or the box stopped (rank %d %s: "
			       "no %s; %s QP: %s)",
			       c->rank, what, box, c->cfg.timeout_ms, peer, ip,
			       waiting_recv ? "data" : "acknowledgement",
			       waiting_recv ? "receive" : "send", st);
	return nr_fail(c, NR_ERR_TIMEOUT, "rank %d: %s: timeout: no %s rank %d (%s) on the %s ring "
		       "within %u ms (%s QP: %s)", c->rank, what,
		       waiting_recv ? "data from" : "acknowledgement from", peer, ip,
		       nr_ring_name(ring), c->cfg.timeout_ms, waiting_recv ? "receive" : "send", st);
}

#define POLL_BATCH 32

/* A receive of this collective on ring k: the op takes it, then the receive is posted again. */
static int take_recv(struct nr_comm *c, const struct nr_collective *d, int ring, void *op,
		     unsigned k, const struct nr_wc *wc)
{
	struct nr_ring *r = &c->ring[ring + (int)k];
	int rc;

	r->posted--;
	rc = d->recv(c, op, k, wc);
	return rc ? rc : nr_post_recvs(c, r);
}

/* Which of the op's n rings a QP belongs to, and whether it is the send QP: -1 for none. */
static int ring_of(const struct nr_comm *c, int ring, unsigned n, const struct nr_tp_qp *qp,
		   bool *send)
{
	for (unsigned k = 0; k < n; k++) {
		const struct nr_ring *r = &c->ring[ring + (int)k];

		if (qp == r->sqp || qp == r->rqp) {
			*send = qp == r->sqp;
			return (int)k;
		}
	}
	return -1;
}

/*
 * The box an op waits on when nothing moved: over several boxes, the box of
 * its first channel that sent messages whose results are still out (a box
 * that died holds its own channels' results; the others' channels are then
 * stopped by flow control, their results all in); else NR_BOX.
 */
static const char *stalled_box(const struct nr_comm *c, const struct nr_collective *d, int ring,
			       unsigned n, const void *op)
{
	for (unsigned k = 0; ring >= NR_RING_BOX && c->n_boxes > 1 && k < n; k++)
		if (d->owed ? d->owed(op, k) : d->recv_due(op, k))
			return nr_ring_box_addr(c, ring + (int)k);
	return nr_ring_box_addr(c, ring);
}

int nr_collective_run(struct nr_comm *c, const struct nr_collective *d, int ring, void *op,
		      struct nr_coll_count *cnt)
{
	const unsigned n = ring >= NR_RING_BOX ? c->n_channels : 1;
	uint64_t last = nr_now_ms();
	struct nr_wc wc[POLL_BATCH];
	int rc;

	while (cnt->recvd < cnt->nrecv || cnt->acked < cnt->nsend) {
		rc = d->post(c, op);
		if (rc)
			return rc;
		int got = nr_poll(c, wc, POLL_BATCH, 100);

		if (got < 0)
			return got;
		for (int i = 0; i < got; i++) {
			bool send = false;
			int k;

			k = ring_of(c, ring, n, wc[i].qp, &send);
			if (wc[i].status != NR_WC_OK)
				return wc_fail(c, &wc[i], ring,
					       nr_ring_box_addr(c, ring + (k > 0 ? k : 0)));
			if (k >= 0 && send && wc[i].op == NR_WC_SEND) {
				cnt->acked++;
				if (d->acked)
					d->acked(op, (unsigned)k);
			} else if (wc[i].op == NR_WC_RECV && (k < 0 || !d->recv_due(op, (unsigned)k)))
				rc = nr_defer(c, &wc[i]);   /* the next op's: a peer is ahead */
			else if (k >= 0 && !send && wc[i].op == NR_WC_RECV)
				rc = take_recv(c, d, ring, op, (unsigned)k, &wc[i]);
			else
				rc = nr_fail(c, NR_ERR_TRANSPORT, "rank %d: %s: completion from a QP "
					     "outside the %s ring", c->rank, d->name,
					     nr_ring_name(ring));
			if (rc)
				return rc;
		}
		if (got > 0)
			last = nr_now_ms();
		else if (nr_now_ms() - last > c->cfg.timeout_ms)
			return stall_fail(c, d->name, ring, stalled_box(c, d, ring, n, op),
					  d->waiting_recv(op));
	}
	return 0;
}

int nr_post_message(struct nr_comm *c, int ring, const char *name, uint8_t seq, uint64_t *sent,
		    const void *laddr, uint32_t len, uint64_t remote_off, const struct nr_tp_mark *mark)
{
	struct nr_ring *r = &c->ring[ring];
	int rc = nr_tp_post_write_imm_tc(r->sqp, *sent, &r->mr, laddr, len, r->peer_va + remote_off,
					 r->peer_rkey, nr_tag(seq, *sent), mark);

	if (rc)
		return nr_fail(c, NR_ERR_TRANSPORT, "rank %d: %s: posting message %lu: %s", c->rank,
			       name, (unsigned long)*sent, strerror(-rc));
	(*sent)++;
	return 0;
}

int nr_collective_call(nr_collective_fn *fn, struct nr_comm *c, const void *sendbuf,
		       void *recvbuf, size_t count, enum nr_dtype dtype, enum nr_op op,
		       unsigned flags)
{
	int rc;

	if (!c)
		return NR_ERR_INVALID;
	nr_comm_lock(c);   /* keeps the progress thread off the transport */
	rc = fn(c, sendbuf, recvbuf, count, dtype, op, flags);
	nr_comm_unlock(c);
	return rc;
}
