/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ring all-reduce over the plain ring (QPs never registered with the box):
 * reduce-scatter then all-gather, 2(N-1) steps, pipelined in messages.
 *
 * Chunk c holds count/N elements (the first count%N chunks one more).  At step
 * s rank r sends chunk sc(s) to r+1 and receives chunk rc(s) from r-1:
 *   reduce-scatter s < N-1:  sc = r - s,          rc = r - 1 - s
 *   all-gather  s = N-1+t:   sc = r + 1 - t,      rc = r - t        (mod N)
 * rc(s-1) == sc(s): message m of step s is sent as soon as message m of step
 * s-1 arrived (and, in reduce-scatter, was added: work = incoming + work).
 * Chunk c is thus summed in ring order from rank c: ((x_c + x_c+1) + ...).
 * 16-bit types (NR_BF16, NR_FP16) are sent as they are, so each hop widens
 * the two to FP32, adds and rounds back (proto/nr_elem.h): a rounding at
 * every hop, as NCCL's and Gloo's 16-bit rings do.
 *
 * Memory, one registered region per rank: [stage0 | stage1 | work], each
 * `cap` bytes.  Rank r-1 writes into stage[op parity] at the chunk's offset.
 * Each (chunk, message) offset is written once by reduce-scatter and once by
 * all-gather; the all-gather write of it follows (through the ring) our own
 * forwarding of the reduce-scatter data, so it never overwrites unread data.
 * Op k+2 reuses op k's stage only after every rank finished op k+1, and so op k.
 * Sends read work (steps < N) or the received all-gather data in stage.
 */
#include <stdlib.h>
#include <string.h>

#include "host/comm/nr_bootstrap.h"
#include "host/comm/nr_config.h"
#include "host/comm/nr_region.h"
#include "host/comm/nr_util.h"
#include "nr_allreduce_ring.h"
#include "nr_collective.h"
#include "proto/nr_elem.h"

/* Grow the region for an op of `bytes`; collective (every rank sees the same count). */
static int plain_region_fit(struct nr_comm *c, size_t bytes)
{
	struct nr_ring *r = &c->ring[NR_RING_PLAIN];
	size_t cap = r->cap;
	int rc;

	if (bytes <= cap)
		return 0;
	while (cap < bytes)
		cap *= 2;
	rc = nr_plain_region_init(c, cap);
	return rc ? rc : nr_exchange_plain_region(c);
}

struct ring_op {
	int n, r;
	size_t count;
	uint32_t msg, window;
	uint8_t seq;
	int steps;
	uint8_t *stage, *work, *dst;
	uint64_t *sstart, *rstart;     /* first flattened message index of each step */
	struct nr_coll_count cnt;
	int ss, rs;                    /* step of the next send / next receive */
	bool max;                      /* NR_MAX, else NR_SUM */
	enum nr_dtype dtype;
	size_t es;                     /* bytes of an element */
};

static inline int mod(int a, int n) { return ((a % n) + n) % n; }

static int send_chunk(const struct ring_op *o, int s)
{
	return s < o->n - 1 ? mod(o->r - s, o->n) : mod(o->r + 1 - (s - (o->n - 1)), o->n);
}

static int recv_chunk(const struct ring_op *o, int s)
{
	return s < o->n - 1 ? mod(o->r - 1 - s, o->n) : mod(o->r - (s - (o->n - 1)), o->n);
}

static size_t chunk_off(const struct ring_op *o, int c)   /* bytes */
{
	size_t base = o->count / o->n, rem = o->count % o->n;

	return o->es * (c * base + ((size_t)c < rem ? (size_t)c : rem));
}

static size_t chunk_len(const struct ring_op *o, int c)   /* bytes */
{
	return o->es * (o->count / o->n + ((size_t)c < o->count % o->n));
}

static uint64_t chunk_msgs(const struct ring_op *o, int c)
{
	return (chunk_len(o, c) + o->msg - 1) / o->msg;
}

static uint32_t piece_len(const struct ring_op *o, int c, uint64_t m)
{
	size_t left = chunk_len(o, c) - m * o->msg;

	return left < o->msg ? left : o->msg;
}

static __attribute__((optimize("tree-vectorize"))) void
add_into(float *restrict w, const float *restrict in, size_t n)
{
	for (size_t i = 0; i < n; i++)
		w[i] = in[i] + w[i];
}

/* a 16-bit hop: widen both, add in FP32 (what arrived first), round back */
static void add16_into(uint16_t *restrict w, const uint16_t *restrict in, size_t n, bool bf)
{
	if (bf)
		for (size_t i = 0; i < n; i++)
			w[i] = nr_bf16_round(nr_bf16_widen(in[i]) + nr_bf16_widen(w[i]));
	else
		for (size_t i = 0; i < n; i++)
			w[i] = nr_fp16_round(nr_fp16_widen(in[i]) + nr_fp16_widen(w[i]));
}

/* NR_MAX in ring order: what arrived is the max so far of the ranks before */
static void max_into(float *restrict w, const float *restrict in, size_t n)
{
	for (size_t i = 0; i < n; i++)
		w[i] = w[i] > in[i] ? w[i] : in[i];
}

static int ring_post(struct nr_comm *c, void *op)
{
	struct ring_op *o = op;
	struct nr_ring *r = &c->ring[NR_RING_PLAIN];
	int rc = 0;

	while (!rc && o->cnt.sent < o->cnt.nsend && o->cnt.sent - o->cnt.acked < o->window) {
		uint64_t m;
		int ch;

		while (o->cnt.sent >= o->sstart[o->ss + 1])
			o->ss++;
		m = o->cnt.sent - o->sstart[o->ss];
		/* gate: the data of (step, m) is what (step-1, m) brought */
		if (o->ss > 0 && o->rstart[o->ss - 1] + m >= o->cnt.recvd)
			break;
		ch = send_chunk(o, o->ss);
		size_t off = chunk_off(o, ch) + m * o->msg;
		const uint8_t *src = (o->ss < o->n ? o->work : o->stage) + off;

		rc = nr_post_message(c, NR_RING_PLAIN, "nr_ring_allreduce", o->seq, &o->cnt.sent, src,
				     piece_len(o, ch, m), (o->stage - (uint8_t *)r->mem) + off, NULL);
	}
	return rc;
}

static int ring_recv(struct nr_comm *c, void *op, unsigned k, const struct nr_wc *wc)
{
	struct ring_op *o = op;
	uint32_t want = nr_tag(o->seq, o->cnt.recvd), len;
	uint64_t m;
	size_t off;
	int ch;

	if (o->cnt.recvd >= o->cnt.nrecv || wc->imm != want)
		return nr_fail(c, NR_ERR_PEER, "rank %d: nr_ring_allreduce: message from rank %d "
			       "has immediate 0x%08x, expected 0x%08x: ranks out of step (same "
			       "count on every rank?)", c->rank, mod(c->rank - 1, c->world), wc->imm,
			       want);
	while (o->cnt.recvd >= o->rstart[o->rs + 1])
		o->rs++;
	m = o->cnt.recvd - o->rstart[o->rs];
	ch = recv_chunk(o, o->rs);
	off = chunk_off(o, ch) + m * o->msg;
	len = piece_len(o, ch, m);
	if (wc->byte_len != len)
		return nr_fail(c, NR_ERR_PEER, "rank %d: nr_ring_allreduce: message %lu has %u bytes, "
			       "expected %u", c->rank, (unsigned long)o->cnt.recvd, wc->byte_len, len);
	if (o->rs < o->n - 1 && o->max)
		max_into((float *)(o->work + off), (const float *)(o->stage + off), len / 4);
	else if (o->rs < o->n - 1 && o->dtype != NR_FLOAT32)
		add16_into((uint16_t *)(o->work + off), (const uint16_t *)(o->stage + off), len / 2,
			   o->dtype == NR_BF16);
	else if (o->rs < o->n - 1)
		add_into((float *)(o->work + off), (const float *)(o->stage + off), len / 4);
	else
		memcpy(o->dst + off, o->stage + off, len);
	o->cnt.recvd++;
	return 0;
}

static bool ring_waiting_recv(const void *op)
{
	const struct ring_op *o = op;

	return o->cnt.recvd < o->cnt.nrecv;
}

static bool ring_recv_due(const void *op, unsigned k)
{
	return ring_waiting_recv(op);
}

static const struct nr_collective ring_collective = {
	.name = "nr_ring_allreduce",
	.post = ring_post, .recv = ring_recv, .recv_due = ring_recv_due,
	.waiting_recv = ring_waiting_recv,
};

static int ring_plan(struct ring_op *o)
{
	o->sstart = calloc(o->steps + 2, sizeof(uint64_t));
	o->rstart = calloc(o->steps + 2, sizeof(uint64_t));
	if (!o->sstart || !o->rstart)
		return -1;
	for (int s = 0; s < o->steps; s++) {
		o->sstart[s + 1] = o->sstart[s] + chunk_msgs(o, send_chunk(o, s));
		o->rstart[s + 1] = o->rstart[s] + chunk_msgs(o, recv_chunk(o, s));
	}
	/* sentinel step so the step cursors never run past the end */
	o->sstart[o->steps + 1] = UINT64_MAX;
	o->rstart[o->steps + 1] = UINT64_MAX;
	o->cnt.nsend = o->sstart[o->steps];
	o->cnt.nrecv = o->rstart[o->steps];
	return 0;
}

/* flags: none matter on the ring (its messages are exact, netreduce.h). */
static int ring_allreduce(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
			  enum nr_dtype dtype, enum nr_op op, unsigned flags)
{
	struct ring_op o = { 0 };
	struct nr_ring *r;
	int rc;

	if (nr_check_args(c, sendbuf, recvbuf, count, dtype, op, "nr_ring_allreduce", &rc))
		return rc;
	rc = plain_region_fit(c, count * nr_dtype_size(dtype));
	if (rc)
		goto out;
	r = &c->ring[NR_RING_PLAIN];
	o = (struct ring_op){
		.n = c->world, .r = c->rank, .count = count, .msg = c->cfg.msg_size,
		.window = c->cfg.ring_window,   /* at most NR_RING_WINDOW_MAX (nr_config_check) */
		.seq = c->ring_seq, .steps = 2 * (c->world - 1), .dst = recvbuf, .max = op == NR_MAX,
		.dtype = dtype, .es = nr_dtype_size(dtype),
		.stage = (uint8_t *)r->mem + (c->ring_seq & 1) * r->cap,
		.work = (uint8_t *)r->mem + 2 * r->cap,
	};
	c->ring_seq++;
	if (ring_plan(&o)) {
		rc = nr_fail(c, NR_ERR_NOMEM, "nr_ring_allreduce: out of memory");
		goto out;
	}
	if (o.cnt.nsend > 0xFFFFFF) {
		rc = nr_fail(c, NR_ERR_INVALID, "nr_ring_allreduce: %lu messages exceed the 24-bit "
			     "tag; raise NR_MSG_SIZE", (unsigned long)o.cnt.nsend);
		goto out;
	}
	memcpy(o.work, sendbuf, count * o.es);
	rc = nr_collective_run(c, &ring_collective, NR_RING_PLAIN, &o, &o.cnt);
	c->hold_backlog = false;
	if (!rc) {
		int own = mod(c->rank + 1, c->world);   /* fully reduced here at the last RS step */

		memcpy(o.dst + chunk_off(&o, own), o.work + chunk_off(&o, own), chunk_len(&o, own));
	}
out:
	free(o.sstart);
	free(o.rstart);
	if (rc && rc != NR_ERR_INVALID)
		c->broken = true;
	return rc;
}

int nr_ring_allreduce_flat(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
			   enum nr_dtype dtype, enum nr_op op)
{
	return nr_collective_call(ring_allreduce, c, sendbuf, recvbuf, count, dtype, op, 0);
}
