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
 * sender's data template, as a repair's (agg_nak.c), and sent.  Its
 * receiver sees an in-order stream and ACKs it, so its sender never goes
 * back: RC holds, no QP sees an error.  A late copy of the packet meets
 * the emitted slot and is answered with the stored result (agg_input.c,
 * resend), never summed.
 *
 * A lost first packet carries the RETH (the receiver's VA, rkey and DMA
 * length), which the box can only build when the job says the hosts lay
 * their receive rings out alike (short_first): the length from the other
 * senders' first packets of the slot (every rank sends equal messages), the
 * rkey from the connection's previous message, the VA from that message's
 * VA plus the step the other connections' VAs took between the same two
 * messages (every one the box saw both of, at least one; they must agree).  Only from first packets the box received
 * (agg_short_first_seen), never from one it built; a late copy whose RETH
 * differs from the built one fails the job (agg_input.c).
 *
 * Never shortened, each counted once in short_denied and under its reason
 * (enum nr_short_why), its missing sender then getting the sequence NAK the
 * monitor held back for it: a slot of a message whose first packet was not
 * marked by every sender (DSCP short_dscp: must-be-exact), one past the
 * message's bound (short_ppm packets per million of its packets, counted
 * from the first packet's RETH), one whose missing sender was NAKed already
 * (it goes back anyway), one whose result the box cannot send, a first
 * packet of a job without short_first, or whose RETH it cannot build.  A
 * slot with two or more contributions missing is never short either (the
 * monitor's re-arm NAKs its senders).
 */
#include "dataplane/engine/agg_short.h"

#include "dataplane/engine/agg_nak.h"

/* The one connection whose contribution slot si lacks (count n - 1). */
static uint32_t missing_conn(const struct agg_job *j, uint32_t si)
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

void agg_short_first_seen(struct agg_job *j, uint32_t i, uint64_t x, const struct nr_pkt *p)
{
	struct agg_first_seen *f = &j->first[i];
	struct agg_slot_reth r = { .va = p->reth_va, .rkey = p->reth_rkey, .len = p->reth_len };

	if (f->x[0] == NR_MON_NONE || x > f->x[0]) {
		f->x[1] = f->x[0];
		f->reth[1] = f->reth[0];
		f->x[0] = x;
		f->reth[0] = r;
	} else if (x < f->x[0] && (f->x[1] == NR_MON_NONE || x > f->x[1])) {
		f->x[1] = x;            /* overtaken by a later one (spraying) */
		f->reth[1] = r;
	}
}

/* Connection i's first packet of sequence x as received, or NULL. */
static const struct agg_slot_reth *seen_at(const struct agg_job *j, uint32_t i, uint64_t x)
{
	const struct agg_first_seen *f = &j->first[i];

	for (unsigned k = 0; k < 2; k++)
		if (f->x[k] == x)
			return &f->reth[k];
	return NULL;
}

/* Connection i's last first packet received before x (its sequence in *xp), or NULL. */
static const struct agg_slot_reth *seen_before(const struct agg_job *j, uint32_t i, uint64_t x,
					      uint64_t *xp)
{
	const struct agg_first_seen *f = &j->first[i];

	for (unsigned k = 0; k < 2; k++)
		if (f->x[k] != NR_MON_NONE && f->x[k] < x) {
			*xp = f->x[k];
			return &f->reth[k];
		}
	return NULL;
}

/*
 * The RETH of sender k's lost first packet of slot si (sequence x) into *r:
 * the others' DMA length, k's previous message's rkey, and its VA plus the
 * step the other connections' VAs took from that message to this one (those
 * whose first packets of both the box received; at least one, all agreeing).
 * NR_SHORT_WHY_MAX when built, else why not.
 */
static enum nr_short_why first_reth(const struct agg_job *j, uint32_t si, uint32_t k, uint64_t x,
				    struct agg_slot_reth *r)
{
	const struct agg_slot_reth *kp, *cur, *prev;
	uint64_t xp = 0, step = 0;
	bool any = false;

	kp = seen_before(j, k, x, &xp);
	if (!kp)
		return NR_SHORT_WHY_FIRST_UNSEEN;
	for (uint32_t i = 0; i < j->n; i++) {
		if (i == k)
			continue;
		cur = &j->reth[(size_t)si * j->n + i];
		prev = seen_at(j, i, xp);
		if (!prev)
			continue;       /* lost (or built) then: i cannot vouch for the step */
		if (!any) {
			step = cur->va - prev->va;      /* mod 2^64: a ring wraps back */
			r->len = cur->len;
			any = true;
		} else if (cur->va - prev->va != step || cur->len != r->len) {
			return NR_SHORT_WHY_FIRST_LAYOUT;
		}
	}
	if (!any)
		return NR_SHORT_WHY_FIRST_UNSEEN;
	r->va = kp->va + step;
	r->rkey = kp->rkey;
	return NR_SHORT_WHY_MAX;
}

/* Whether sender k's packet after x is in, marked, and of x's message (a middle or last). */
static bool marked_next(const struct agg_job *j, uint32_t k, uint64_t x)
{
	uint64_t y = x + 1;
	const struct agg_slot *s;
	uint32_t si;

	if (y - j->next_release >= j->pool)
		return false;
	si = agg_job_slot(j, y);
	s = &j->slots[si];
	return s->x == y && (s->state == NR_SLOT_FILLING || s->state == NR_SLOT_COMPLETE) &&
	       (j->bits[(size_t)si * j->words + k / 64] >> (k % 64) & 1) && s->tolerant &&
	       (s->opcode == NR_OP_RC_WRITE_MIDDLE || s->opcode == NR_OP_RC_WRITE_LAST ||
		s->opcode == NR_OP_RC_WRITE_LAST_IMM);
}

/*
 * Whether slot si, lacking sender k's contribution, may go short:
 * NR_SHORT_WHY_MAX, with *r the RETH of k's result when it is a first
 * packet; else why not.
 */
static enum nr_short_why why_not(const struct agg_engine *e, const struct agg_job *j, uint32_t si,
				 uint32_t k, struct agg_slot_reth *r)
{
	const struct agg_slot *s = &j->slots[si];
	const struct agg_conn_mon *m = &j->mon[k];
	/* a NAK already went out for the gap: the sender is going back anyway */
	bool naked = m->hole != NR_MON_NONE && !m->held_back;
	enum nr_short_why w;

	if (!e->ops.send || !m->have_dtpl)
		return NR_SHORT_WHY_NO_TEMPLATE;
	/* the slot's own reasons first: a NAK sent at once may follow from them */
	switch (s->opcode) {
	case NR_OP_RC_WRITE_MIDDLE:
	case NR_OP_RC_WRITE_LAST:
	case NR_OP_RC_WRITE_LAST_IMM:
		if (!j->msg_tolerant || !s->tolerant)
			return NR_SHORT_WHY_EXACT;
		if (j->msg_short_left == 0)
			return NR_SHORT_WHY_BOUND;
		break;
	case NR_OP_RC_WRITE_FIRST:
		if (!s->tolerant)
			return NR_SHORT_WHY_EXACT;
		if (!j->short_first)
			return NR_SHORT_WHY_FIRST;
		if (!marked_next(j, k, s->x))
			return NR_SHORT_WHY_FIRST_MARK;
		w = first_reth(j, si, k, s->x, r);
		if (w != NR_SHORT_WHY_MAX)
			return w;
		if (agg_short_bound(j, r->len) == 0)
			return NR_SHORT_WHY_BOUND;
		break;
	default:        /* a one-packet message: its bound is 0 */
		return s->tolerant ? NR_SHORT_WHY_BOUND : NR_SHORT_WHY_EXACT;
	}
	return naked ? NR_SHORT_WHY_NAKED : NR_SHORT_WHY_MAX;
}

static void short_emit(struct agg_engine *e, struct agg_job *j, uint32_t si, uint32_t k,
		       const struct agg_slot_reth *r, uint64_t now_ns)
{
	uint64_t x = j->slots[si].x;

	if (j->slots[si].opcode == NR_OP_RC_WRITE_FIRST)
		j->reth[(size_t)si * j->n + k] = *r;     /* its result's, and a repair's */
	j->ctr[NR_ECTR_SHORT_SLOTS]++;
	/* a shortened slot is tolerant: its class is one of the job's, below NR_MAX_CLASSES */
	j->short_cls[j->slots[si].cls % NR_MAX_CLASSES]++;
	j->short_de += j->slots[si].de;
	j->left_out[k]++;
	agg_slot_emit(e, j, si, k);      /* a first packet sets the message's bound */
	if (j->msg_short_left)          /* (a last packet ended it) */
		j->msg_short_left--;
	agg_job_emitted(j);
	agg_mon_short_result(e, j, k, x, now_ns);
	j->last_progress_ns = now_ns;
	j->emit_ns = now_ns;
	agg_job_emit_ready(e, j);
}

/*
 * Slot next_emit, when it waits for one contribution only: k, its sender,
 * and whether it lost it (lost false: only said when the slot qualifies).
 */
static bool waits_for_one(const struct agg_job *j, uint32_t *si, uint32_t *k)
{
	const struct agg_slot *s = &j->slots[j->emit_slot];

	if (s->x != j->next_emit || s->state != NR_SLOT_FILLING || s->count + 1u != j->n)
		return false;
	*si = j->emit_slot;
	*k = missing_conn(j, *si);
	return *k != NR_CONN_NONE;
}

static void deny(struct agg_engine *e, struct agg_job *j, uint32_t k, uint64_t x,
		 enum nr_short_why why, uint64_t now_ns)
{
	if (j->denied_x == x)
		return;
	j->denied_x = x;
	j->ctr[NR_ECTR_SHORT_DENIED]++;
	j->short_why[why]++;
	agg_mon_gap_nak(e, j, k, now_ns);
}

void agg_short_input(struct agg_engine *e, struct agg_job *j, uint64_t now_ns)
{
	struct agg_slot_reth r;
	enum nr_short_why w;
	uint32_t si, k;

	while (j->state == NR_JOB_ACTIVE && waits_for_one(j, &si, &k) &&
	       agg_mon_lost(j, k, j->next_emit)) {      /* later packets of k are in */
		w = why_not(e, j, si, k, &r);
		if (w != NR_SHORT_WHY_MAX) {
			deny(e, j, k, j->next_emit, w, now_ns);
			return;
		}
		short_emit(e, j, si, k, &r, now_ns);
	}
}
