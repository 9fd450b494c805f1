/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * All-reduce through the box (the wire protocol of docs/architecture.md).  Every rank sends the same sequence
 * of messages on its box-ring send QP: the buffer cut into msg_size pieces,
 * message m of op k written WITH IMM tag (k & 0xFF) << 24 | m into slot
 * (g mod S) of rank+1's staging area, g counting messages since init.  The
 * box replaces each payload with the rank-ordered sum and XORs result_key into
 * the immediate; what lands on our receive QP from rank-1 is the result.
 *
 * Flow control: at most W (the box's credits) messages unacknowledged; message
 * g is sent only after our own message g - S was received, so slot g mod S of
 * the receiver is free: the box emits result g only once every rank,
 * the receiver included, contributed g, and a rank contributes g only after it
 * consumed g - S.  Send slots: W <= S and sends complete in order.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "nr_allreduce_box.h"
#include "nr_collective.h"
#include "nr_util.h"

struct box_op {
	const uint8_t *src;
	uint8_t *dst;
	size_t bytes;
	struct nr_coll_count cnt;        /* cnt.nsend = cnt.nrecv = nmsg */
	uint64_t nmsg, g0;
	uint32_t window, slots, msg;
	uint8_t seq;
};

static uint32_t msg_len(const struct box_op *o, uint64_t m)
{
	size_t left = o->bytes - m * o->msg;

	return left < o->msg ? left : o->msg;
}

static int box_post(struct nr_comm *c, void *op)
{
	struct box_op *o = op;
	struct nr_ring *r = &c->ring[NR_RING_BOX];
	int rc = 0;

	while (!rc && o->cnt.sent < o->nmsg && o->cnt.sent - o->cnt.acked < o->window &&
	       o->cnt.sent < o->cnt.recvd + o->slots) {
		uint64_t slot = (o->g0 + o->cnt.sent) % o->slots;
		uint8_t *buf = (uint8_t *)r->mem + (o->slots + slot) * o->msg;
		uint32_t len = msg_len(o, o->cnt.sent);

		memcpy(buf, o->src + o->cnt.sent * o->msg, len);
		rc = nr_post_message(c, NR_RING_BOX, "nr_allreduce", o->seq, &o->cnt.sent, buf, len,
				     slot * o->msg);
	}
	return rc;
}

static int box_recv(struct nr_comm *c, void *op, const struct nr_wc *wc)
{
	struct box_op *o = op;
	struct nr_ring *r = &c->ring[NR_RING_BOX];
	uint32_t want = nr_tag(o->seq, o->cnt.recvd), len;
	uint64_t slot;

	if (o->cnt.recvd >= o->nmsg)
		return nr_fail(c, NR_ERR_BOX, "rank %d: nr_allreduce: unexpected message (imm 0x%08x) "
			       "after the last one", c->rank, wc->imm);
	if (wc->imm == want)
		return nr_fail(c, NR_ERR_BOX, "rank %d: nr_allreduce: message %lu arrived "
			       "unaggregated: the box lost the job (restarted?)", c->rank,
			       (unsigned long)o->cnt.recvd);
	if (wc->imm != (want ^ c->box.result_key))
		return nr_fail(c, NR_ERR_BOX, "rank %d: nr_allreduce: message %lu has immediate "
			       "0x%08x, expected 0x%08x: ranks out of step or the box is wrong",
			       c->rank, (unsigned long)o->cnt.recvd, wc->imm, want ^ c->box.result_key);
	len = msg_len(o, o->cnt.recvd);
	if (wc->byte_len != len)
		return nr_fail(c, NR_ERR_BOX, "rank %d: nr_allreduce: message %lu has %u bytes, "
			       "expected %u", c->rank, (unsigned long)o->cnt.recvd, wc->byte_len, len);
	slot = (o->g0 + o->cnt.recvd) % o->slots;
	memcpy(o->dst + o->cnt.recvd * o->msg, (uint8_t *)r->mem + slot * o->msg, len);
	o->cnt.recvd++;
	return 0;
}

static bool box_waiting_recv(const void *op)
{
	const struct box_op *o = op;

	return o->cnt.recvd < o->cnt.sent || o->cnt.acked == o->cnt.sent;
}

static const struct nr_collective box_collective = {
	.name = "nr_allreduce", .ring = NR_RING_BOX,
	.post = box_post, .recv = box_recv, .waiting_recv = box_waiting_recv,
};

static int box_allreduce(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		 enum nr_dtype dtype, enum nr_op op)
{
	struct nr_ring *r;
	struct box_op o;
	int rc;

	if (c && !c->broken && !c->has_box)
		return nr_fail(c, NR_ERR_CONFIG, "nr_allreduce: no box configured (NR_SWITCH); "
			       "use nr_ring_allreduce without a box");
	if (nr_check_args(c, sendbuf, recvbuf, count, dtype, op, "nr_allreduce", &rc))
		return rc;
	r = &c->ring[NR_RING_BOX];
	o = (struct box_op){
		.src = sendbuf, .dst = recvbuf, .bytes = count * 4, .msg = c->cfg.msg_size,
		.slots = r->cap, .g0 = c->box_msgs, .seq = c->box_seq++,
	};
	o.nmsg = (o.bytes + o.msg - 1) / o.msg;
	o.cnt.nsend = o.cnt.nrecv = o.nmsg;
	o.window = c->box.credits < o.slots ? c->box.credits : o.slots;
	if (o.nmsg > 0xFFFFFF) {
		c->box_seq--;
		return nr_fail(c, NR_ERR_INVALID, "nr_allreduce: %lu messages exceed the 24-bit tag; "
			       "raise NR_MSG_SIZE", (unsigned long)o.nmsg);
	}
	rc = nr_collective_run(c, &box_collective, &o, &o.cnt);
	c->hold_backlog = false;
	c->box_msgs += o.nmsg;
	if (rc)
		c->broken = true;
	return rc;
}

int nr_box_allreduce(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		     enum nr_dtype dtype, enum nr_op op)
{
	return nr_collective_call(box_allreduce, c, sendbuf, recvbuf, count, dtype, op);
}
