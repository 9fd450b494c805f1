/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_engine's shadow model of short slots (docs/short-slots.md,
 * dataplane/engine/agg_short.c): when a slot may go out with one
 * contribution missing, the message being emitted and its bound (tracked,
 * as the engine does, from the emitted slots' opcodes), the missing
 * connection's result the engine builds and sends, the gap NAKs that forbid
 * it, and the counters.  The invariants and why each must hold are listed
 * at the top of fuzz_engine.c.
 */
#include <stdio.h>
#include <string.h>

#include "proto/roce_build.h"

#include "nrz_fuzz.h"
#include "fuzz_engine.h"

/* The monitor's probe time is 4 NAK round trips, never under 4 ms
 * (agg_nak.c MON_PROBE_MIN_NS): no stream stands still for less. */
#define NRZ_PROBE_MIN_NS 4000000ull

static bool op_shortable(uint8_t op)
{
	return op == NR_OP_RC_WRITE_MIDDLE || op == NR_OP_RC_WRITE_LAST ||
	       op == NR_OP_RC_WRITE_LAST_IMM;
}

/* Whether sender k has a contribution held beyond g (the engine's mon.hi > g). */
static bool sent_beyond(const struct sjob *j, uint32_t k, uint32_t g)
{
	for (size_t q = 0; q < j->nrecs; q++)
		if (j->recs[q].c[k].have && nr_psn_diff(j->recs[q].g, g) > 0)
			return true;
	return false;
}

/* Sender k's first sequence from the emission point on that the box lacks. */
static uint32_t first_missing(struct sjob *j, uint32_t k)
{
	uint32_t g = j->emit_g;

	for (uint32_t s = 0; s <= j->pool_pkts; s++, g = nr_psn_add(g, 1)) {
		const struct rec *r = nrz_rec_find(j, g, false);

		if (!r || !r->c[k].have)
			return g;
	}
	return g;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

void nrz_short_begin(struct world *w, struct sjob *j, struct rec *r)
{
	uint32_t n = j->spec->n_conns, k = 0;
	uint64_t since;

	while (k < n && r->c[k].have)
		k++;
	NRZ_CHECK(k < n, "g=%u: %u contributions and none missing", r->g, r->count);
	NRZ_CHECK(j->spec->short_ppm, "job %u: g=%u went out with %u of %u contributions, and the "
		  "job allows no short slot", j->id, r->g, r->count, n);
	NRZ_CHECK(op_shortable(r->opcode), "job %u: g=%u completed short without conn %u: a %s "
		  "packet (only WRITE MIDDLE/LAST are: a first carries the receiver's RETH)",
		  j->id, r->g, k, nr_opcode_name(r->opcode));
	for (uint32_t i = 0; i < n; i++)
		NRZ_CHECK(!r->c[i].have || r->c[i].marked, "job %u: g=%u completed short, conn %u's "
			  "contribution not marked with DSCP %u (must-be-exact)", j->id, r->g, i,
			  j->spec->short_dscp);
	NRZ_CHECK(j->msg_tolerant, "job %u: g=%u completed short in a message whose first packet "
		  "was not marked by every sender, or in no message", j->id, r->g);
	NRZ_CHECK(j->msg_left > 0, "job %u: g=%u completed short past its message's bound "
		  "(short_ppm %u)", j->id, r->g, j->spec->short_ppm);
	NRZ_CHECK(!j->nak_set[k] || j->nak_hole[k] != r->g, "job %u: g=%u completed short "
		  "without conn %u after a gap NAK went to it for g=%u (it is going back)",
		  j->id, r->g, k, r->g);
	NRZ_CHECK(!j->denied_set || j->denied_g != r->g, "job %u: g=%u completed short after it "
		  "was counted short_denied", j->id, r->g);
	/* a loss, evidently: later packets of k in, or k and the slot stood still */
	since = max64(max64(j->t_add, r->t_first), max64(j->last_new[k], j->last_short[k]));
	NRZ_CHECK(sent_beyond(j, k, r->g) || (w->polling && w->now - since >= NRZ_PROBE_MIN_NS),
		  "job %u: g=%u completed short without conn %u, which sent nothing later and "
		  "has stood still for %llu us only (%s)", j->id, r->g, k,
		  (unsigned long long)(w->now - since) / 1000, w->polling ? "poll" : "input");
	r->shorted = true;
	r->missing = (uint8_t)k;
	j->msg_left--;
	j->shorts++;
	j->left_out[k]++;
	j->last_short[k] = w->now;
}

void nrz_short_result(struct world *w, const uint8_t *frame, const struct nr_pkt *p)
{
	struct sjob *j = &w->jobs[w->due.job];
	const struct nr_conn_spec *c;
	struct rec *r;
	uint32_t conn, g;
	int jk;

	NRZ_CHECK(nrz_data_owner(w, p, &jk, &conn) && jk == w->due.job && conn == w->due.conn,
		  "job %u: g=%u went out short, and the next frame made is not conn %u's result "
		  "(opcode 0x%02x qpn 0x%06x)", j->id, w->due.g, w->due.conn, p->opcode, p->qpn);
	c = &j->spec->conns[conn];
	g = nr_psn_sub(p->psn, c->ipsn);
	r = nrz_rec_find(j, w->due.g, false);
	NRZ_CHECK(g == w->due.g, "job %u conn %u: the result left out of g=%u has the PSN of g=%u",
		  j->id, conn, w->due.g, g);
	NRZ_CHECK(p->opcode == r->opcode, "job %u conn %u: the result left out of g=%u is a %s, "
		  "the slot's packets %s", j->id, conn, g, nr_opcode_name(p->opcode),
		  nr_opcode_name(r->opcode));
	NRZ_CHECK(p->saddr == c->src_ip && !memcmp(frame + NR_ETH_ALEN, c->src_mac, NR_ETH_ALEN),
		  "job %u conn %u: the result left out of g=%u is not from its sender's address",
		  j->id, conn, g);
	NRZ_CHECK(p->pay_len == r->len, "job %u conn %u: the result left out of g=%u: length %u, "
		  "the slot's %u", j->id, conn, g, p->pay_len, r->len);
	nrz_check_payload(r, frame + p->pay_off, "left-out result", conn);
	NRZ_CHECK(!r->has_tag || ((p->mask & NR_OPF_IMMDT) &&
				  p->imm == (r->tag ^ j->spec->result_key)),
		  "job %u conn %u: the result left out of g=%u: ImmDt 0x%08x, want 0x%08x",
		  j->id, conn, g, p->imm, r->tag ^ j->spec->result_key);
	NRZ_CHECK(r->ce ? p->ecn == NR_ECN_CE || p->ecn == NR_ECN_NOT_ECT : p->ecn != NR_ECN_CE,
		  "job %u conn %u: the result left out of g=%u: ECN %u, contributions CE %d",
		  j->id, conn, g, p->ecn, r->ce);
	r->c[conn].emitted = 1;
	r->nemitted++;
	w->due.on = false;
	nrz_slot_done(j, r);
}

void nrz_slot_done(struct sjob *j, struct rec *r)
{
	uint32_t n = j->spec->n_conns;

	r->done = true;
	if (!r->shorted)
		j->whole++;
	j->emit_conn = 0;
	j->emit_g = nr_psn_add(j->emit_g, 1);
	if (!j->spec->short_ppm)
		return;
	/* the message being emitted: a first packet opens it, with its bound
	 * from the RETH of the packet that took the slot; a middle one goes on;
	 * anything else closes it */
	if (r->opcode == NR_OP_RC_WRITE_FIRST) {
		uint64_t pkts = ((uint64_t)r->c[r->order[0]].reth_len + j->spec->mtu - 1) /
				j->spec->mtu;

		j->msg_left = (uint32_t)(pkts * j->spec->short_ppm / 1000000u);
		j->msg_tolerant = true;
		for (uint32_t i = 0; i < n; i++)
			j->msg_tolerant &= r->c[i].marked;
	} else if (r->opcode != NR_OP_RC_WRITE_MIDDLE) {
		j->msg_tolerant = false;
		j->msg_left = 0;
	}
}

void nrz_short_held(struct world *w, struct sjob *j, uint32_t conn, uint32_t g)
{
	(void)w;
	if (j->nak_set[conn] && j->nak_hole[conn] == g)
		j->nak_set[conn] = false;     /* the gap is filled: the engine forgets it */
}

void nrz_short_nak(struct world *w, struct sjob *j, uint32_t conn)
{
	struct nr_job_stats st;

	/* only a gap NAK and its re-arm clear the engine's held_back: a probe
	 * (no gap seen) does not; the counters say which one this is */
	NRZ_CHECK(agg_engine_job_stats(w->eng, j->id, &st) == 0, "stats of job %u", j->id);
	if (st.ctr[NR_ECTR_NAK_GAP] != j->seen_gap || st.ctr[NR_ECTR_NAK_REARM] != j->seen_rearm) {
		j->nak_set[conn] = true;
		j->nak_hole[conn] = first_missing(j, conn);
	}
	j->seen_gap = st.ctr[NR_ECTR_NAK_GAP];
	j->seen_rearm = st.ctr[NR_ECTR_NAK_REARM];
}

void nrz_short_after_call(struct world *w)
{
	NRZ_CHECK(!w->due.on, "job %u: g=%u went out short, and conn %u's result was never sent",
		  w->jobs[w->due.job].id, w->due.g, w->due.conn);
	for (unsigned k = 0; k < w->njobs; k++) {
		struct sjob *j = &w->jobs[k];
		struct nr_job_stats st;

		if (!j->registered || j->failed ||
		    agg_engine_job_stats(w->eng, j->id, &st) || st.state != NR_JOB_ACTIVE)
			continue;
		NRZ_CHECK(st.next_emit == j->emit_g, "job %u: next_emit g=%u, the model's g=%u",
			  j->id, st.next_emit, j->emit_g);
		/* a slot denied waits (the deny ends the engine's short loop): it is next_emit */
		if (st.ctr[NR_ECTR_SHORT_DENIED] != j->seen_denied) {
			j->seen_denied = st.ctr[NR_ECTR_SHORT_DENIED];
			j->denied_set = true;
			j->denied_g = j->emit_g;
		}
	}
}

void nrz_short_counters(struct world *w, struct sjob *j, const struct nr_job_stats *st)
{
	uint32_t n = j->spec->n_conns;
	uint64_t waiting = 0;

	(void)w;
	for (size_t q = 0; q < j->nrecs; q++)
		waiting += j->recs[q].count == n && !j->recs[q].done;
	NRZ_CHECK(st->ctr[NR_ECTR_SHORT_SLOTS] == j->shorts, "job %u: short_slots %llu, the "
		  "model's %llu", j->id, (unsigned long long)st->ctr[NR_ECTR_SHORT_SLOTS],
		  (unsigned long long)j->shorts);
	for (uint32_t i = 0; i < n; i++)
		NRZ_CHECK(st->left_out[i] == j->left_out[i], "job %u: left_out[%u] %llu, the "
			  "model's %llu", j->id, i, (unsigned long long)st->left_out[i],
			  (unsigned long long)j->left_out[i]);
	NRZ_CHECK(st->ctr[NR_ECTR_EMITTED] == j->emits, "job %u: emitted %llu, results handed "
		  "out %llu", j->id, (unsigned long long)st->ctr[NR_ECTR_EMITTED],
		  (unsigned long long)j->emits);
	NRZ_CHECK(st->ctr[NR_ECTR_COMPLETED] == j->whole + waiting, "job %u: completed %llu, the "
		  "model's %llu emitted and %llu waiting", j->id,
		  (unsigned long long)st->ctr[NR_ECTR_COMPLETED], (unsigned long long)j->whole,
		  (unsigned long long)waiting);
	NRZ_CHECK(st->ctr[NR_ECTR_EMITTED] == (st->ctr[NR_ECTR_COMPLETED] - waiting) * n +
		  st->ctr[NR_ECTR_SHORT_SLOTS] * (n - 1),
		  "job %u: emitted %llu != (completed %llu - waiting %llu) x %u + short_slots %llu x %u",
		  j->id, (unsigned long long)st->ctr[NR_ECTR_EMITTED],
		  (unsigned long long)st->ctr[NR_ECTR_COMPLETED], (unsigned long long)waiting, n,
		  (unsigned long long)st->ctr[NR_ECTR_SHORT_SLOTS], n - 1);
	NRZ_CHECK(st->ctr[NR_ECTR_AGGREGATED] == st->ctr[NR_ECTR_EMITTED] + j->held,
		  "job %u: aggregated %llu != emitted %llu + held %u", j->id,
		  (unsigned long long)st->ctr[NR_ECTR_AGGREGATED],
		  (unsigned long long)st->ctr[NR_ECTR_EMITTED], j->held);
}
