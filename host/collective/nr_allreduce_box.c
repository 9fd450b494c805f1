/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * All-reduce through the box (the wire protocol of docs/architecture.md).
 * Each element type has a box job of its own (a job has one dtype): FP32's
 * registered at init, a 16-bit type's at its first call (nr_box_set_open),
 * which every rank makes with the same type, as every collective call.
 * Every rank sends the same sequence of messages on the type's box ring: the
 * buffer cut into msg_size pieces, message m of op k written WITH IMM tag
 * (k & 0xFF) << 24 | m.  The messages are striped over the ring's channels:
 * counting G messages since the job opened over all channels, message G goes on channel G mod K as that channel's message
 * j = G / K, into slot (j mod S) of rank+1's staging area of that channel.
 * Each channel is one channel of the box's job (its own QPs, PSNs, slots and
 * credits), so a box with several workers sums the channels on several
 * cores.  The box replaces each payload with the rank-ordered sum and XORs
 * result_key into the immediate; what lands on our receive QP of a channel
 * from rank-1 is the result.
 *
 * Flow control, per channel: at most W (the box's credits) messages
 * unacknowledged; its message j is sent only after our own message j - S of
 * that channel was received, so slot j mod S of the receiver is free: the box
 * emits result j only once every rank, the receiver included, contributed j,
 * and a rank contributes j only after it consumed j - S.  Send slots: W <= S
 * and sends complete in order.  Messages are posted in order over all
 * channels.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "host/comm/nr_comm.h"
#include "host/comm/nr_util.h"
#include "nr_allreduce_box.h"
#include "nr_collective.h"

/* What an op does on one channel. */
struct box_chan {
	uint64_t n;                      /* messages of the op on the channel */
	uint64_t sent, acked, recvd;
};

struct box_op {
	struct nr_box_job *job;          /* the job of the op's element type */
	int ring;                        /* its channel 0: nr_box_ring(type, 0) */
	const uint8_t *src;
	uint8_t *dst;
	size_t bytes;
	struct nr_coll_count cnt;        /* cnt.nsend = cnt.nrecv = nmsg */
	uint64_t nmsg, g0;               /* g0: box messages before this op, all channels */
	uint32_t window, slots, msg, k;  /* k: channels */
	int tclass;                      /* of the op's packets: -1 the transport's; a
					  * tolerant op's: the job's short DSCP */
	uint8_t seq;
	struct box_chan ch[NR_MAX_CHANNELS];
};

static uint32_t msg_len(const struct box_op *o, uint64_t m)
{
	size_t left = o->bytes - m * o->msg;

	return left < o->msg ? left : o->msg;
}

/* Message m of the op: its channel, and its slot on that channel. */
static unsigned chan_of(const struct box_op *o, uint64_t m)
{
	return (unsigned)((o->g0 + m) % o->k);
}

static uint64_t slot_of(const struct box_op *o, uint64_t m)
{
	return (o->g0 + m) / o->k % o->slots;
}

/* The op's message that is the j-th of the op on channel ch. */
static uint64_t msg_of(const struct box_op *o, unsigned ch, uint64_t j)
{
	return (ch + o->k - o->g0 % o->k) % o->k + j * o->k;
}

static int box_post(struct nr_comm *c, void *op)
{
	struct box_op *o = op;
	int rc = 0;

	while (!rc && o->cnt.sent < o->nmsg) {
		uint64_t m = o->cnt.sent, slot = slot_of(o, m);
		unsigned ch = chan_of(o, m);
		struct box_chan *bc = &o->ch[ch];
		struct nr_ring *r = &c->ring[o->ring + (int)ch];
		uint8_t *buf = (uint8_t *)r->mem + (o->slots + slot) * o->msg;
		uint32_t len = msg_len(o, m);

		if (bc->sent - bc->acked >= o->window || bc->sent >= bc->recvd + o->slots)
			break;
		memcpy(buf, o->src + m * o->msg, len);
		rc = nr_post_message(c, o->ring + (int)ch, "nr_allreduce", o->seq, &o->cnt.sent, buf,
				     len, slot * o->msg, o->tclass);
		bc->sent++;
	}
	return rc;
}

static int box_recv(struct nr_comm *c, void *op, unsigned ch, const struct nr_wc *wc)
{
	struct box_op *o = op;
	struct box_chan *bc = &o->ch[ch];
	uint64_t m = msg_of(o, ch, bc->recvd);
	uint32_t want = nr_tag(o->seq, m), len;

	if (wc->imm == want)
		return nr_fail(c, NR_ERR_BOX, "rank %d: nr_allreduce: message %lu arrived "
			       "unaggregated: the box lost the job (restarted?)", c->rank,
			       (unsigned long)m);
	if (wc->imm != (want ^ o->job->result_key))
		return nr_fail(c, NR_ERR_BOX, "rank %d: nr_allreduce: message %lu has immediate "
			       "0x%08x, expected 0x%08x: ranks out of step or the box is wrong",
			       c->rank, (unsigned long)m, wc->imm, want ^ o->job->result_key);
	len = msg_len(o, m);
	if (wc->byte_len != len)
		return nr_fail(c, NR_ERR_BOX, "rank %d: nr_allreduce: message %lu has %u bytes, "
			       "expected %u", c->rank, (unsigned long)m, wc->byte_len, len);
	memcpy(o->dst + m * o->msg, (uint8_t *)c->ring[o->ring + (int)ch].mem + slot_of(o, m) * o->msg,
	       len);
	bc->recvd++;
	o->cnt.recvd++;
	return 0;
}

static bool box_recv_due(const void *op, unsigned ch)
{
	const struct box_op *o = op;

	return o->ch[ch].recvd < o->ch[ch].n;
}

static void box_acked(void *op, unsigned ch)
{
	struct box_op *o = op;

	o->ch[ch].acked++;
}

static bool box_waiting_recv(const void *op)
{
	const struct box_op *o = op;

	return o->cnt.recvd < o->cnt.sent || o->cnt.acked == o->cnt.sent;
}

static const struct nr_collective box_collective = {
	.name = "nr_allreduce",
	.post = box_post, .recv = box_recv, .recv_due = box_recv_due, .acked = box_acked,
	.waiting_recv = box_waiting_recv,
};

/*
 * flags NR_MSG_TOLERANT: every message of the op leaves with the job's short
 * DSCP (c->short_tos), which lets the box complete its slots short within the
 * job's bound; without one (c->short_tos < 0) the op is exact like any other.
 */
static int box_allreduce(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
			 enum nr_dtype dtype, enum nr_op op, unsigned flags)
{
	struct nr_box_job *b;
	struct nr_ring *r;
	struct box_op o;
	int rc;

	if (c && !c->broken && !c->has_box)
		return nr_fail(c, NR_ERR_CONFIG, "nr_allreduce: no box configured (NR_SWITCH); "
			       "use nr_ring_allreduce without a box");
	if (nr_check_args(c, sendbuf, recvbuf, count, dtype, op, "nr_allreduce", &rc))
		return rc;
	if (op != c->reduce)
		return nr_fail(c, NR_ERR_INVALID, "nr_allreduce: %s through a box job that computes "
			       "%s (NR_REDUCE=%s): init the communicator with NR_REDUCE=%s, or use "
			       "nr_ring_allreduce", op == NR_MAX ? "NR_MAX" : "NR_SUM",
			       c->reduce == NR_MAX ? "max" : "sum", c->reduce == NR_MAX ? "max" : "sum",
			       op == NR_MAX ? "max" : "sum");
	b = &c->box[dtype];
	if (!b->open) {   /* a 16-bit type's first call: its job (collective) */
		rc = nr_box_set_open(c, (unsigned)dtype);
		if (rc) {
			c->broken = true;
			return rc;
		}
	}
	r = &c->ring[nr_box_ring(dtype, 0)];
	o = (struct box_op){
		.job = b, .ring = nr_box_ring(dtype, 0),
		.src = sendbuf, .dst = recvbuf, .bytes = count * nr_dtype_size(dtype),
		.msg = c->cfg.msg_size, .slots = r->cap, .g0 = b->msgs, .seq = b->seq++,
		.k = c->n_channels, .tclass = flags & NR_MSG_TOLERANT ? c->short_tos : -1,
	};
	o.nmsg = (o.bytes + o.msg - 1) / o.msg;
	o.cnt.nsend = o.cnt.nrecv = o.nmsg;
	for (unsigned ch = 0; ch < o.k; ch++) {
		uint64_t first = msg_of(&o, ch, 0);

		o.ch[ch].n = first < o.nmsg ? (o.nmsg - first + o.k - 1) / o.k : 0;
	}
	o.window = b->credits < o.slots ? b->credits : o.slots;
	if (o.nmsg > 0xFFFFFF) {
		b->seq--;
		return nr_fail(c, NR_ERR_INVALID, "nr_allreduce: %lu messages exceed the 24-bit tag; "
			       "raise NR_MSG_SIZE", (unsigned long)o.nmsg);
	}
	rc = nr_collective_run(c, &box_collective, o.ring, &o, &o.cnt);
	c->hold_backlog = false;
	b->msgs += o.nmsg;
	if (rc)
		c->broken = true;
	return rc;
}

int nr_box_allreduce(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		     enum nr_dtype dtype, enum nr_op op, unsigned flags)
{
	return nr_collective_call(box_allreduce, c, sendbuf, recvbuf, count, dtype, op, flags);
}
