/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Short slots (docs/short-slots.md; DLCP's bounded loss tolerance inside
 * RoCE RC).  A job with short_ppm > 0 lets the box complete the slot next
 * in emission order with one contribution missing when that contribution
 * is evidently lost: the same sender's later packets are in (agg_input.c,
 * after each data packet), so it did send it.  Never on a deadline alone (a
 * tail loss): the sender may not have sent the packet yet, and its receiver
 * would then ACK a PSN the sender never sent, which an RC requester drops
 * as a stale ACK, retrying what it did send until its QP fails (seen in
 * make bench-dlcp before this rule).  A tail loss is the monitor's probe's.
 * The N-1 contributions are summed (times N/(N-1) with short_scale) and
 * emitted as any slot's; the missing connection's result is built from its
 * sender's data template, as a repair's (agg_monitor.c), and sent.  Its
 * receiver sees an in-order stream and ACKs it, so its sender never goes
 * back: RC holds, no QP sees an error.  A late copy of the packet meets
 * the emitted slot and is answered with the stored result (agg_input.c,
 * resend), never summed.
 *
 * Never shortened: a slot of a message whose first packet was not marked
 * by every sender (DSCP short_dscp: must-be-exact), a first or only packet
 * (its RETH, the receiver's address and key, is known only from the
 * packet), a slot with two or more contributions missing, one whose missing
 * sender was NAKed already (it goes back anyway), or one past the
 * message's bound (short_ppm packets per million of its packets, counted
 * from the first packet's RETH).  Such a slot counts short_denied once and
 * its missing senders get the sequence NAK the monitor held back for it.
 */
#include "dataplane/engine/agg_short.h"

#include "dataplane/engine/agg_monitor.h"

/* The one connection whose contribution slot si lacks (count n - 1). */
static uint32_t missing_conn(const struct nr_job *j, uint32_t si)
{
	const uint64_t *bits = &j->bits[(size_t)si * j->words];

	for (uint32_t w = 0; w < j->words; w++) {
		uint64_t m = ~bits[w];

		if (w == j->words - 1 && j->n % 64)
			m &= (1ull << (j->n % 64)) - 1;
		if (m)
			return w * 64 + (uint32_t)__builtin_ctzll(m);
	}
	return NR_CONN_NONE;      /* cannot happen: count < n */
}

static bool shortable(const struct nr_engine *e, const struct nr_job *j,
		      const struct nr_slot *s, uint32_t k)
{
	const struct nr_conn_mon *m = &j->mon[k];

	/* a NAK already went out for the gap: the sender is going back anyway */
	return e->ops.send && m->have_dtpl && (m->hole == NR_MON_NONE || m->held_back) &&
	       j->msg_tolerant && s->tolerant &&
	       j->msg_short_left > 0 &&
	       (s->opcode == NR_OP_RC_WRITE_MIDDLE || s->opcode == NR_OP_RC_WRITE_LAST ||
		s->opcode == NR_OP_RC_WRITE_LAST_IMM);
}

static void short_emit(struct nr_engine *e, struct nr_job *j, uint32_t si, uint32_t k,
		       uint64_t now_ns)
{
	uint64_t x = j->slots[si].x;

	j->msg_short_left--;
	j->ctr[NR_ECTR_SHORT_SLOTS]++;
	j->left_out[k]++;
	nr_slot_emit(e, j, si, k);
	nr_job_emitted(j);
	nr_mon_short_result(e, j, k, x, now_ns);
	j->last_progress_ns = now_ns;
	j->emit_ns = now_ns;
	nr_job_emit_ready(e, j);
}

/*
 * Slot next_emit, when it waits for one contribution only: k, its sender,
 * and whether it lost it (lost false: only said when the slot qualifies).
 */
static bool waits_for_one(const struct nr_job *j, uint32_t *si, uint32_t *k)
{
	const struct nr_slot *s = &j->slots[j->emit_slot];

	if (s->x != j->next_emit || s->state != NR_SLOT_FILLING || s->count + 1u != j->n)
		return false;
	*si = j->emit_slot;
	*k = missing_conn(j, *si);
	return *k != NR_CONN_NONE;
}

static void deny(struct nr_engine *e, struct nr_job *j, uint32_t k, uint64_t x, uint64_t now_ns)
{
	if (j->denied_x == x)
		return;
	j->denied_x = x;
	j->ctr[NR_ECTR_SHORT_DENIED]++;
	nr_mon_gap_nak(e, j, k, now_ns);
}

void nr_short_input(struct nr_engine *e, struct nr_job *j, uint64_t now_ns)
{
	uint32_t si, k;

	while (j->state == NR_JOB_ACTIVE && waits_for_one(j, &si, &k) &&
	       j->mon[k].hi > j->next_emit + j->reorder + 1) {      /* later packets of k are in */
		if (!shortable(e, j, &j->slots[si], k)) {
			deny(e, j, k, j->next_emit, now_ns);
			return;
		}
		short_emit(e, j, si, k, now_ns);
	}
}
