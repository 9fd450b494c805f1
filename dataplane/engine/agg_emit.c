/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Emission (docs/architecture.md, wire protocol rule 5): a completed slot's
 * sum written into each connection's own packet of it, slots in sequence
 * order.  Called by agg_input.c when a slot completes and by agg_short.c
 * when it completes a slot short (one contribution left out: that
 * connection has no packet here, agg_short.c builds its result).
 */
#include <string.h>

#include "dataplane/engine/agg_internal.h"

/*
 * A short slot's sum times N/(N-1) (short_scale): the mean of the N-1
 * contributions in, times N, stands in for the sum of all N.  Cold: short
 * slots are rare, and the multiply is FP32 as the kernels' adds.
 */
__attribute__((noinline, cold))
static void scale_sum(uint8_t *res, uint32_t len, uint32_t n)
{
	float f = (float)n / (float)(n - 1), v;

	for (uint32_t off = 0; off < len; off += 4) {
		memcpy(&v, res + off, 4);
		v *= f;
		memcpy(res + off, &v, 4);
	}
}

/*
 * A 16-bit job's slot si (agg_sum.h): the n contributions in j->srcs, widened
 * and summed in FP32 (ordered: now, in rank order; streaming: on arrival,
 * into the slot's accumulator), rounded once into the stored result and the
 * packets (j->outs).  A scaled short slot is scaled in FP32, before the
 * rounding.
 */
static void sum_half(struct agg_engine *e, struct agg_job *j, uint32_t si, uint32_t n, bool scale)
{
	const struct agg_half_ops *h = agg_sum_half(e->sum, j->dtype);
	const struct agg_slot *s = &j->slots[si];
	uint8_t *res = j->results + (size_t)si * j->mtu;
	float *acc;

	if (j->mode == NR_SUM_ORDERED && !scale) {
		h->sum_fanout(res, j->srcs, n, j->outs, n, s->len);
		return;
	}
	if (j->mode == NR_SUM_ORDERED) {
		acc = j->acc;
		h->widen(acc, j->srcs[0], s->len);
		for (uint32_t k = 1; k < n; k++)
			h->add(acc, j->srcs[k], s->len);
	} else {
		acc = agg_slot_acc(j, si);
	}
	if (scale)
		scale_sum((uint8_t *)acc, s->len * 2, j->n);
	h->narrow_fanout(acc, res, j->outs, n, s->len);
}

/*
 * The message the emitted slots are in (a job with short slots): its first
 * packet sets the number of slots it may have completed short, from the
 * RETH's length (packets of the message) and short_ppm, and whether its
 * senders marked it (every contribution of the first packet with DSCP
 * short_dscp); its last packet ends it, so a packet in no known message is
 * never shortened.
 */
static void msg_track(struct agg_job *j, const struct agg_slot *s, uint32_t si)
{
	if (s->opcode == NR_OP_RC_WRITE_FIRST) {
		const struct agg_slot_reth *r = &j->reth[(size_t)si * j->n + s->tag_conn];

		j->msg_short_left = agg_short_bound(j, r->len);
		j->msg_tolerant = s->tolerant;
	} else if (s->opcode != NR_OP_RC_WRITE_MIDDLE) {
		j->msg_tolerant = 0;    /* a last or only packet: the message is over */
		j->msg_short_left = 0;
	}
}

void agg_slot_emit(struct agg_engine *e, struct agg_job *j, uint32_t si, uint32_t missing)
{
	struct agg_slot *s = &j->slots[si];
	struct agg_held *h = &j->held[(size_t)si * j->n];
	const struct agg_held *out = h;
	uint8_t *res = j->results + (size_t)si * j->mtu;
	uint32_t g = (uint32_t)(s->x & NR_PSN_MASK), n = 0;
	bool scale = missing != NR_CONN_NONE && j->short_scale;

	for (uint32_t i = 0; i < j->n; i++) {
		if (i == missing)
			continue;
		j->srcs[n] = h[i].pay;
		j->outs[n] = h[i].pay;
		if (missing != NR_CONN_NONE)
			j->spare[n] = h[i];
		n++;
	}
	if (missing != NR_CONN_NONE)
		out = j->spare;         /* the N-1 packets a short slot has */
	if (j->dtype != NR_ELEM_FP32)
		sum_half(e, j, si, n, scale);
	else if (j->mode == NR_SUM_ORDERED && j->reduce == NR_REDUCE_MAX)
		e->sum->max_fanout(res, j->srcs, n, j->outs, n, s->len);
	else if (j->mode == NR_SUM_ORDERED && j->reduce == NR_REDUCE_BOR)
		e->sum->bor_fanout(res, j->srcs, n, j->outs, n, s->len);
	else if (j->mode == NR_SUM_ORDERED)
		e->sum->sum_fanout(res, j->srcs, n, j->outs, scale ? 0 : n, s->len);
	if (j->dtype == NR_ELEM_FP32 && scale)
		scale_sum(res, s->len, j->n);
	if (j->dtype == NR_ELEM_FP32 && (j->mode == NR_SUM_STREAMING || scale))
		e->sum->copy_fanout(res, j->outs, n, s->len);

	if (e->ops.emit_slot) {
		struct agg_emit_slot es = {
			.held = out, .sum = res, .n = n, .len = s->len, .job = j->id, .g = g,
			.ecn_ce = s->ecn_ce,
		};

		e->ops.emit_slot(e->ops.ctx, &es);
		j->ctr[NR_ECTR_EMITTED] += n;
	} else {
		for (uint32_t k = 0; k < n; k++) {
			struct agg_emit em = {
				.handle = out[k].handle,
				.frame = out[k].frame,
				.pkt = out[k].pkt,
				.job = j->id,
				.conn = k + (missing != NR_CONN_NONE && k >= missing),
				.g = g,
				.ecn_ce = s->ecn_ce,
			};

			j->ctr[NR_ECTR_EMITTED]++;
			if (e->ops.emit)
				e->ops.emit(e->ops.ctx, &em);
		}
	}
	for (uint32_t i = 0; i < j->n; i++)
		h[i].handle = NULL;     /* every packet went out (a short slot lacks one) */
	if (j->short_ppm)
		msg_track(j, s, si);
	s->state = NR_SLOT_EMITTED;
	j->busy--;
}

void agg_job_emit_ready(struct agg_engine *e, struct agg_job *j)
{
	for (;;) {
		struct agg_slot *s = &j->slots[j->emit_slot];

		if (s->state != NR_SLOT_COMPLETE || s->x != j->next_emit)
			return;
		agg_slot_emit(e, j, j->emit_slot, NR_CONN_NONE);
		agg_job_emitted(j);
	}
}
