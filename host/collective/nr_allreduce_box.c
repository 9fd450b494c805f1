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
 *
 * Priority classes (c->classes, host/README.md "Priority classes"): an op
 * is not striped but runs on one channel, its class's (a tolerant one's
 * NR_MSG_CLASS) or, for an exact one, the channel above them, with that
 * channel's own op sequence and message count and its class's traffic
 * class; every rank sends the same ops on a channel in the same order.
 * nr_box_allreduce_multi runs several at once, an op per channel, so a
 * higher class need not wait for a lower one's op to end.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/comm/nr_comm.h"
#include "host/comm/nr_progress.h"
#include "host/comm/nr_util.h"
#include "nr_allreduce_box.h"
#include "nr_collective.h"
#include "nr_magnitude.h"

/* What an op does on one channel. */
struct box_chan {
	uint64_t n;                      /* messages of the op on the channel */
	uint64_t sent, acked, recvd;
};

struct box_op {
	struct nr_box_job *job;          /* the job of the op's element type */
	int ring;                        /* its channel 0: nr_box_ring(type, 0) */
	const uint8_t *src;
	uint8_t *dst; /* byte lo of the result; nothing outside [lo, hi) */
	size_t bytes, lo, hi;
	size_t slo, shi; /* src holds bytes [slo, shi) of the input, zeros the rest (an
			  * all-gather's); else [0, bytes) */
	struct nr_coll_count cnt;        /* cnt.nsend = cnt.nrecv = nmsg */
	uint64_t nmsg, g0;               /* g0: box messages before this op, all channels */
	uint32_t window, slots, msg, k;  /* k: channels */
	int tclass;                      /* of the op's packets: -1 the transport's; a
					  * tolerant op's: the job's short DSCP */
	enum nr_dtype dtype;
	float de_level;                  /* a tolerant op's packets whose elements are all
					  * smaller are drop-eligible (nr_magnitude.h); 0: none */
	uint32_t de_words;               /* bitmap words of a message's packets */
	int chan;                        /* priority classes: its one channel; -1: striped */
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
		struct nr_tp_mark mk = { .tclass = o->tclass };

		if (bc->sent - bc->acked >= o->window || bc->sent >= bc->recvd + o->slots)
			break;
		if (o->slo == 0 && o->shi >= o->bytes) {
			memcpy(buf, o->src + m * o->msg, len);
		} else { /* zeros but for the part of [slo, shi) the message holds */
			size_t a = m * o->msg, x = a > o->slo ? a : o->slo;
			size_t y = a + len < o->shi ? a + len : o->shi;

			memset(buf, 0, len);
			if (x < y)
				memcpy(buf + (x - a), o->src + (x - o->slo), y - x);
		}
		if (o->de_level > 0) {   /* the bits live with the send slot, as its payload */
			uint64_t *de = r->de + slot * o->de_words;

			if (nr_de_mark(buf, len, c->cfg.mtu, o->dtype, o->de_level, de)) {
				mk.de = de;
				mk.de_tclass = o->tclass + (2 << 2);   /* AFx1 -> AFx2 */
			}
		}
		rc = nr_post_message(c, o->ring + (int)ch, "nr_allreduce", o->seq, &o->cnt.sent, buf,
				     len, slot * o->msg, o->tclass < 0 ? NULL : &mk);
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
	uint32_t rkey = o->job->part[nr_chan_box(c, o->chan < 0 ? ch : (unsigned)o->chan)].result_key;

	if (wc->imm == want)
		return nr_fail(c, NR_ERR_BOX,
			       "rank %d: nr_allreduce: message %lu arrived "
			       "unaggregated: the box %s lost the job (restarted?)",
			       c->rank, (unsigned long)m, nr_ring_box_addr(c, o->ring + (int)ch));
	if (wc->imm != (want ^ rkey))
		return nr_fail(c, NR_ERR_BOX,
			       "rank %d: nr_allreduce: message %lu has immediate "
			       "0x%08x, expected 0x%08x: ranks out of step or the box is wrong",
			       c->rank, (unsigned long)m, wc->imm, want ^ rkey);
	len = msg_len(o, m);
	if (wc->byte_len != len)
		return nr_fail(c, NR_ERR_BOX, "rank %d: nr_allreduce: message %lu has %u bytes, "
			       "expected %u", c->rank, (unsigned long)m, wc->byte_len, len);
	{ /* the part of the message in [lo, hi): all of it but for a reduce-scatter */
		const uint8_t *slot = (uint8_t *)c->ring[o->ring + (int)ch].mem +
				      slot_of(o, m) * o->msg;
		size_t a = m * o->msg, x = a > o->lo ? a : o->lo;
		size_t y = a + len < o->hi ? a + len : o->hi;

		if (x < y)
			memcpy(o->dst + (x - o->lo), slot + (x - a), y - x);
	}
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

static bool box_owed(const void *op, unsigned ch)
{
	const struct box_op *o = op;

	return o->ch[ch].sent > o->ch[ch].recvd;
}

static const struct nr_collective box_collective = {
	.name = "nr_allreduce",
	.post = box_post,
	.recv = box_recv,
	.recv_due = box_recv_due,
	.acked = box_acked,
	.waiting_recv = box_waiting_recv,
	.owed = box_owed,
};

/* The channel of an op with flags on a communicator with classes (netreduce.h, NR_MSG_CLASS). */
static unsigned class_chan(const struct nr_comm *c, unsigned flags)
{
	unsigned k = (flags & NR_MSG_CLASS_MASK) >> 4;

	if (!(flags & NR_MSG_TOLERANT))
		return c->classes;                 /* exact: above every class */
	if (k == 0)
		return 0;                          /* tolerant, no class given: the lowest */
	return k - 1 < c->classes ? k - 1 : c->classes - 1;
}

/*
 * A tolerant op's drop-eligible packets (cfg.de_thresh): the level under which
 * a packet is, from the whole buffer, and the bitmaps of its channels' send
 * slots (made at the first such op).  0, or NR_ERR_NOMEM.
 */
static int de_init(struct nr_comm *c, struct box_op *o)
{
	uint32_t es = o->dtype == NR_FLOAT32 ? 4 : 2;

	o->de_words = (o->msg / c->cfg.mtu + 1 + 63) / 64;
	for (unsigned ch = 0; ch < o->k; ch++) {
		struct nr_ring *r = &c->ring[o->ring + (int)ch];

		if (!r->de && !(r->de = calloc((size_t)o->slots * o->de_words, sizeof(*r->de))))
			return nr_fail(c, NR_ERR_NOMEM, "nr_allreduce: no memory for the "
				       "drop-eligible bits of %u slots", o->slots);
	}
	o->de_level = nr_de_level(o->src, o->bytes / es, o->dtype, c->cfg.de_thresh);
	return 0;
}

/*
 * The op of an all-reduce of bytes from src to dst through the job of dtype
 * (open): striped over the channels (chan < 0), or on channel chan alone; it
 * takes the next sequence byte of its rings.  0, or NR_ERR_INVALID.
 */
static int op_init(struct nr_comm *c, struct box_op *o, const void *src, void *dst, size_t bytes,
		   enum nr_dtype dtype, unsigned flags, int chan)
{
	struct nr_box_job *b = &c->box[dtype];
	struct nr_ring *r = &c->ring[nr_box_ring(dtype, 0)];

	*o = (struct box_op){
		.job = b,
		.src = src,
		.dst = dst,
		.bytes = bytes,
		.hi = bytes,
		.shi = bytes,
		.msg = c->cfg.msg_size,
		.slots = r->cap,
		.chan = chan,
	};
	o->nmsg = (o->bytes + o->msg - 1) / o->msg;
	if (o->nmsg > 0xFFFFFF)
		return nr_fail(c, NR_ERR_INVALID, "nr_allreduce: %lu messages exceed the 24-bit tag; "
			       "raise NR_MSG_SIZE", (unsigned long)o->nmsg);
	if (chan < 0) {
		o->ring = nr_box_ring(dtype, 0);
		o->k = c->n_channels;
		o->g0 = b->msgs;
		o->seq = b->seq++;
		o->tclass = flags & NR_MSG_TOLERANT ? c->short_tos : -1;
	} else {
		o->ring = nr_box_ring(dtype, (unsigned)chan);
		o->k = 1;
		o->g0 = b->ch_msgs[chan];
		o->seq = b->ch_seq[chan]++;
		o->tclass = c->class_tos[chan];
	}
	o->dtype = dtype;
	if ((flags & NR_MSG_TOLERANT) && c->short_tos >= 0 && c->cfg.de_thresh > 0 &&
	    (chan < 0 || (unsigned)chan < c->classes)) {
		int rc = de_init(c, o);

		if (rc)
			return rc;
	}
	o->cnt.nsend = o->cnt.nrecv = o->nmsg;
	for (unsigned ch = 0; ch < o->k; ch++) {
		uint64_t first = msg_of(o, ch, 0);

		o->ch[ch].n = first < o->nmsg ? (o->nmsg - first + o->k - 1) / o->k : 0;
	}
	o->window = b->credits < o->slots ? b->credits : o->slots;
	return 0;
}

/* The op's messages are the rings' history now. */
static void op_end(struct box_op *o)
{
	if (o->chan < 0)
		o->job->msgs += o->nmsg;
	else
		o->job->ch_msgs[o->chan] += o->nmsg;
}

static bool op_done(const struct box_op *o)
{
	return o->cnt.recvd == o->cnt.nrecv && o->cnt.acked == o->cnt.nsend;
}

/* One op striped over the job's channels, run to its end: 0, or its failure
 * (the communicator is then broken). */
static int run_striped(struct nr_comm *c, struct box_op *o)
{
	int rc = nr_collective_run(c, &box_collective, o->ring, o, &o->cnt);

	c->hold_backlog = false;
	op_end(o);
	if (rc)
		c->broken = true;
	return rc;
}

/* The checks of an all-reduce through the box, and its job open: 1 when nothing is left
 * to do (done or failed: *rc), 0 to go on. */
static int box_check(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		     enum nr_dtype dtype, enum nr_op op, int *rc)
{
	if (c && !c->broken && !c->has_box) {
		*rc = nr_fail(c, NR_ERR_CONFIG,
			      "nr_allreduce: no box configured (NR_BOX); "
			      "use nr_ring_allreduce without a box");
		return 1;
	}
	if (nr_check_args(c, sendbuf, recvbuf, count, dtype, op, "nr_allreduce", rc))
		return 1;
	if (op != c->reduce) {
		*rc = nr_fail(c, NR_ERR_INVALID, "nr_allreduce: %s through a box job that computes "
			      "%s (NR_REDUCE=%s): init the communicator with NR_REDUCE=%s, or use "
			      "nr_ring_allreduce", op == NR_MAX ? "NR_MAX" : "NR_SUM",
			      c->reduce == NR_MAX ? "max" : "sum", c->reduce == NR_MAX ? "max" : "sum",
			      op == NR_MAX ? "max" : "sum");
		return 1;
	}
	if (!c->box[dtype].open) {   /* a 16-bit type's first call: its job (collective) */
		*rc = nr_box_set_open(c, (unsigned)dtype);
		if (*rc) {
			c->broken = true;
			return 1;
		}
	}
	return 0;
}

/* ---- several ops at once, an op per channel (priority classes) ------------- */

/*
 * The ops of nr_box_allreduce_multi as one collective over the job's
 * channels: channel k runs op[k], the next request of that channel once it
 * is done; a receive or send completion on channel k is op[k]'s.  All of
 * the requests' ops are of one job (dtype): its channels are the runner's.
 */
struct box_multi {
	struct nr_comm *c;
	const struct nr_allreduce_req *reqs;
	unsigned n;
	uint64_t *done_ns;                /* NULL, or when each request's result was in */
	unsigned next[NR_MAX_CHANNELS];   /* the next request to look at for channel k */
	unsigned cur[NR_MAX_CHANNELS];    /* the request channel k runs */
	bool active[NR_MAX_CHANNELS];
	struct box_op op[NR_MAX_CHANNELS];
	struct nr_coll_count cnt;         /* every request's messages */
};

/* Channel k's op is done: ended, its time kept. */
static void multi_end(struct box_multi *mu, unsigned k)
{
	op_end(&mu->op[k]);
	mu->active[k] = false;
	if (mu->done_ns)
		mu->done_ns[mu->cur[k]] = nr_now_ns();
}

/* Channel k's next op, when its last one is done: 0, or the failure. */
static int multi_next(struct box_multi *mu, unsigned k)
{
	struct nr_comm *c = mu->c;

	if (mu->active[k] && !op_done(&mu->op[k]))
		return 0;
	if (mu->active[k])
		multi_end(mu, k);
	for (; mu->next[k] < mu->n; mu->next[k]++) {
		const struct nr_allreduce_req *q = &mu->reqs[mu->next[k]];
		int rc;

		if (class_chan(c, q->flags) != k || !q->count)
			continue;
		rc = op_init(c, &mu->op[k], q->sendbuf, q->recvbuf,
			     q->count * nr_dtype_size(q->dtype), q->dtype, q->flags, (int)k);
		if (rc)
			return rc;
		mu->active[k] = true;
		mu->cur[k] = mu->next[k]++;
		/* receives deferred for this channel's next op are due now */
		c->hold_backlog = false;
		return 0;
	}
	return 0;
}

static int multi_post(struct nr_comm *c, void *op)
{
	struct box_multi *mu = op;
	int rc = 0;

	for (unsigned k = 0; !rc && k < c->n_channels; k++) {
		rc = multi_next(mu, k);
		if (!rc && mu->active[k])
			rc = box_post(c, &mu->op[k]);
	}
	return rc;
}

static int multi_recv(struct nr_comm *c, void *op, unsigned k, const struct nr_wc *wc)
{
	struct box_multi *mu = op;
	int rc = box_recv(c, &mu->op[k], 0, wc);

	if (!rc)
		mu->cnt.recvd++;
	return rc;
}

static bool multi_recv_due(const void *op, unsigned k)
{
	const struct box_multi *mu = op;

	return mu->active[k] && box_recv_due(&mu->op[k], 0);
}

static void multi_acked(void *op, unsigned k)
{
	struct box_multi *mu = op;

	if (mu->active[k]) {
		box_acked(&mu->op[k], 0);
		mu->op[k].cnt.acked++;
	}
}

static bool multi_waiting_recv(const void *op)
{
	const struct box_multi *mu = op;

	for (unsigned k = 0; k < NR_MAX_CHANNELS; k++)
		if (mu->active[k] && box_waiting_recv(&mu->op[k]))
			return true;
	return false;
}

static bool multi_owed(const void *op, unsigned k)
{
	const struct box_multi *mu = op;

	return mu->active[k] && box_owed(&mu->op[k], 0);
}

static const struct nr_collective multi_collective = {
	.name = "nr_allreduce",
	.post = multi_post,
	.recv = multi_recv,
	.recv_due = multi_recv_due,
	.acked = multi_acked,
	.waiting_recv = multi_waiting_recv,
	.owed = multi_owed,
};

/* reqs[0..n), of one job (dtype, open, checked), at once; done_ns as theirs. */
static int run_multi(struct nr_comm *c, const struct nr_allreduce_req *reqs, unsigned n,
		     uint64_t *done_ns)
{
	struct box_multi *mu = calloc(1, sizeof(*mu));
	int rc;

	if (!mu)
		return nr_fail(c, NR_ERR_NOMEM, "rank %d: nr_allreduce: out of memory", c->rank);
	*mu = (struct box_multi){ .c = c, .reqs = reqs, .n = n, .done_ns = done_ns };
	for (unsigned i = 0; i < n; i++) {
		uint64_t m = (reqs[i].count * nr_dtype_size(reqs[i].dtype) + c->cfg.msg_size - 1) /
			     c->cfg.msg_size;

		mu->cnt.nsend += m;
		mu->cnt.nrecv += m;
	}
	rc = nr_collective_run(c, &multi_collective, nr_box_ring(reqs[0].dtype, 0), mu, &mu->cnt);
	for (unsigned k = 0; k < NR_MAX_CHANNELS; k++)
		if (mu->active[k])
			multi_end(mu, k);
	c->hold_backlog = false;
	free(mu);
	if (rc)
		c->broken = true;
	return rc;
}

static int box_allreduce_multi(struct nr_comm *c, const struct nr_allreduce_req *reqs, unsigned n,
			       uint64_t *done_ns)
{
	struct nr_allreduce_req *q = calloc(n ? n : 1, sizeof(*q));
	unsigned from = 0;
	int rc = 0;

	if (!q)
		return nr_fail(c, NR_ERR_NOMEM, "rank %d: nr_allreduce_multi: out of memory", c->rank);
	memcpy(q, reqs, n * sizeof(*q));
	/* runs of one element type's job each; a job opens (collectively) only
	 * after what came before it went through: a rank that opens must not hold
	 * the others' earlier ops up meanwhile */
	for (unsigned i = 0; !rc && i < n; i++) {
		int r;

		if (i > from && (q[i].dtype != q[from].dtype || !c->box[q[i].dtype].open)) {
			rc = run_multi(c, q + from, i - from, done_ns ? done_ns + from : NULL);
			from = i;
		}
		if (!rc && box_check(c, q[i].sendbuf, q[i].recvbuf, q[i].count, q[i].dtype, q[i].op,
				     &r)) {
			rc = r;
			q[i].count = 0;         /* nothing to send: none, or one rank */
			if (done_ns)
				done_ns[i] = nr_now_ns();
		}
	}
	if (!rc && n > from)
		rc = run_multi(c, q + from, n - from, done_ns ? done_ns + from : NULL);
	free(q);
	return rc;
}

int nr_box_allreduce_multi(struct nr_comm *c, const struct nr_allreduce_req *reqs, unsigned n,
			   uint64_t *done_ns)
{
	int rc;

	if (!c)
		return NR_ERR_INVALID;
	nr_comm_lock(c);   /* keeps the progress thread off the transport */
	rc = box_allreduce_multi(c, reqs, n, done_ns);
	nr_comm_unlock(c);
	return rc;
}

/*
 * flags NR_MSG_TOLERANT: every message of the op leaves with the job's short
 * DSCP (c->short_tos), which lets the box complete its slots short within the
 * job's bound; without one (c->short_tos < 0) the op is exact like any other.
 * With priority classes: on its class's channel (nr_box_allreduce_multi).
 */
static int box_allreduce(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
			 enum nr_dtype dtype, enum nr_op op, unsigned flags)
{
	struct box_op o;
	int rc;

	if (box_check(c, sendbuf, recvbuf, count, dtype, op, &rc))
		return rc;
	if (c->classes) {
		const struct nr_allreduce_req q = { .sendbuf = sendbuf, .recvbuf = recvbuf,
						    .count = count, .dtype = dtype, .op = op,
						    .flags = flags };

		return run_multi(c, &q, 1, NULL);
	}
	rc = op_init(c, &o, sendbuf, recvbuf, count * nr_dtype_size(dtype), dtype, flags, -1);
	if (rc)
		return rc;
	return run_striped(c, &o);
}

int nr_box_allreduce(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		     enum nr_dtype dtype, enum nr_op op, unsigned flags)
{
	return nr_collective_call(box_allreduce, c, sendbuf, recvbuf, count, dtype, op, flags);
}

/*
 * The all-reduce of count x world elements of sendbuf, of whose result only
 * this rank's share, elements [rank x count, (rank + 1) x count), is read out
 * of the receive slots into recvbuf: no buffer of the whole result.
 */
static int box_reduce_scatter(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
			      enum nr_dtype dtype, enum nr_op op, unsigned flags)
{
	size_t total = count * (size_t)c->world, share = count * nr_dtype_size(dtype);
	struct box_op o;
	int rc;

	(void)flags;
	if (box_check(c, sendbuf, recvbuf, total, dtype, op, &rc))
		return rc;
	rc = op_init(c, &o, sendbuf, recvbuf, total * nr_dtype_size(dtype), dtype, 0, -1);
	if (rc)
		return rc;
	o.lo = (size_t)c->rank * share;
	o.hi = o.lo + share;
	return run_striped(c, &o);
}

int nr_box_reduce_scatter(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
			  enum nr_dtype dtype, enum nr_op op)
{
	return nr_collective_call(box_reduce_scatter, c, sendbuf, recvbuf, count, dtype, op, 0);
}

/*
 * The all-gather of count bytes a rank: the all-reduce, through the job of
 * reduce "bor" (opened at the first call), of world x count bytes (padded to
 * whole words with zeros) that are zero but for this rank's count at rank x
 * count, made in the send slots as they go (no buffer of the whole); every
 * rank's bytes come back unchanged, written to recvbuf.
 */
static int box_allgather(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
			 enum nr_dtype dtype, enum nr_op op, unsigned flags)
{
	size_t total = count * (size_t)c->world;
	struct nr_box_job *b = &c->box[NR_BOX_BOR];
	struct box_op o;
	int rc;

	(void)dtype, (void)op, (void)flags;
	if (b->refused)
		return nr_fail(c, NR_ERR_UNSUPPORTED,
			       "nr_allgather: the box took no all-gather job "
			       "(%s): gather with the framework's",
			       b->why);
	if (!b->open && (rc = nr_box_set_open(c, NR_BOX_BOR))) {
		/* the box refused the job (a box without reduce bor: older, the FPGA's) or could
		 * not be reached, and rank 0 told every rank so: all-reduces go on */
		if (rc != NR_ERR_BOX) {
			c->broken = true;
			return rc;
		}
		b->refused = true;
		snprintf(b->why, sizeof(b->why), "%.255s", c->err);
		return nr_fail(c, NR_ERR_UNSUPPORTED,
			       "nr_allgather: the box took no all-gather job "
			       "(%s): gather with the framework's",
			       b->why);
	}
	/* the job's element is the word: kind NR_BOX_BOR names its job and rings */
	rc = op_init(c, &o, sendbuf, recvbuf, (total + 3) & ~(size_t)3, (enum nr_dtype)NR_BOX_BOR,
		     0, -1);
	if (rc)
		return rc;
	o.hi = total;
	o.slo = (size_t)c->rank * count;
	o.shi = o.slo + count;
	return run_striped(c, &o);
}

int nr_box_allgather(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count)
{
	return nr_collective_call(box_allgather, c, sendbuf, recvbuf, count, NR_FLOAT32, NR_SUM, 0);
}
