/* SPDX-License-Identifier: BSD-3-Clause */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "eng_harness.h"

#define TH_MAGIC 0x7e57bac7u

static uint32_t rank_ip(uint32_t r)
{
	return htonl(0x0A000001u + r);
}

struct nr_job_spec *th_spec(uint32_t n, uint32_t mtu, uint32_t msg_size, uint32_t pool_msgs,
			    uint8_t mode, const uint32_t *ipsn)
{
	struct nr_job_spec *s = calloc(1, sizeof(*s) + n * sizeof(s->conns[0]));

	s->n_conns = n;
	s->mtu = mtu;
	s->msg_size = msg_size;
	s->pool_msgs = pool_msgs;
	s->timeout_ms = 5000;
	s->mode = mode;
	for (uint32_t i = 0; i < n; i++) {
		struct nr_conn_spec *c = &s->conns[i];

		c->src_ip = rank_ip(i);
		c->dst_ip = rank_ip((i + 1) % n);
		c->src_qpn = 0x100 + i;
		c->dst_qpn = 0x200 + (i + 1) % n;
		c->ipsn = ipsn ? ipsn[i] : 0;
		c->src_mac[5] = (uint8_t)i;
		c->dst_mac[5] = (uint8_t)((i + 1) % n);
	}
	return s;
}

static void th_emit_cb(void *ctx, const struct agg_emit *em)
{
	struct th *t = ctx;
	struct th_pkt *k = em->handle;

	assert_int_equal(k->magic, TH_MAGIC);
	assert_int_equal(k->state, TH_HELD);   /* exactly once */
	assert_ptr_equal(em->frame, k->frame);
	k->state = TH_EMITTED;
	k->p = *em->pkt;
	t->held--;
	t->emitted++;
	if (t->log_len == t->log_cap) {
		t->log_cap = t->log_cap ? t->log_cap * 2 : 64;
		t->log = realloc(t->log, t->log_cap * sizeof(*t->log));
	}
	t->log[t->log_len++] = (struct th_emit){ .pkt = k, .job = em->job, .conn = em->conn,
						 .g = em->g, .ecn_ce = em->ecn_ce };
}

/* The box's way: a slot at once.  Each packet as th_emit_cb would see it,
 * after checking that every payload is the slot's sum. */
static void th_emit_slot_cb(void *ctx, const struct agg_emit_slot *es)
{
	struct th *t = ctx;

	/* N packets, or N - 1 of a short slot (dataplane/engine/agg_short.c) */
	assert_true(es->n == t->spec->n_conns || es->n + 1 == t->spec->n_conns);
	assert_int_equal(es->job, t->job);
	assert_int_equal((uintptr_t)es->sum % 64, 0);
	for (uint32_t i = 0, c = 0; i < es->n; i++, c++) {
		const struct agg_held *h = &es->held[i];
		struct agg_emit em;

		while (c < t->spec->n_conns && t->spec->conns[c].dst_qpn != h->pkt->qpn)
			c++;    /* the connection of a packet: its QPN (rank order) */
		assert_true(c < t->spec->n_conns);
		em = (struct agg_emit){ .handle = h->handle, .frame = h->frame, .pkt = h->pkt,
				       .job = es->job, .conn = c, .g = es->g, .ecn_ce = es->ecn_ce };

		assert_ptr_equal(h->pay, h->frame + h->pkt->pay_off);
		assert_int_equal(h->pkt->pay_len, es->len);
		assert_memory_equal(h->pay, es->sum, es->len);
		th_emit_cb(ctx, &em);
	}
}

static void th_free_cb(void *ctx, void *h)
{
	struct th *t = ctx;
	struct th_pkt *k = h;

	assert_int_equal(k->magic, TH_MAGIC);
	assert_int_equal(k->state, TH_HELD);   /* exactly once */
	k->state = TH_FREED;
	t->held--;
	t->freed++;
	th_pkt_free(k);
}

static void th_send_cb(void *ctx, const uint8_t *frame, uint32_t len, uint16_t origin)
{
	struct th *t = ctx;
	struct th_sent *x;

	assert_true(len <= sizeof(x->frame));
	assert_int_equal(nr_parse(frame, len, &t->rep.p), NR_PKT_ROCE);
	if (t->rep.p.opcode == NR_OP_RC_ACK && nr_syn_is_ack(t->rep.p.aeth_syn)) {
		/* a repeated ACK: kept apart */
		memcpy(t->rep.frame, frame, len);
		t->rep.len = len;
		t->rep.origin = origin;
		assert_true(nr_icrc_check(t->rep.frame, &t->rep.p));
		t->nrep++;
		return;
	}
	if (t->nsent == t->sent_cap) {
		t->sent_cap = t->sent_cap ? t->sent_cap * 2 : 16;
		t->sent = realloc(t->sent, t->sent_cap * sizeof(*t->sent));
	}
	x = &t->sent[t->nsent++];
	memcpy(x->frame, frame, len);
	x->len = len;
	x->origin = origin;
	assert_int_equal(nr_parse(x->frame, len, &x->p), NR_PKT_ROCE);
	assert_true(nr_icrc_check(x->frame, &x->p));
}

static uint16_t th_origin_cb(void *ctx, void *handle)
{
	return ((const struct th_pkt *)handle)->origin;
}

/* Jobs with an odd id get their results through ops.emit_slot (as the box
 * does), even ids through ops.emit: the suites, whose job ids vary, run both. */
void th_init(struct th *t, struct nr_job_spec *spec, uint32_t job)
{
	struct agg_engine_ops ops = { .free = th_free_cb, .send = th_send_cb,
				     .origin = th_origin_cb, .ctx = t };
	char err[256] = "";
	uint32_t credits = 0;

	if (job & 1)
		ops.emit_slot = th_emit_slot_cb;
	else
		ops.emit = th_emit_cb;
	memset(t, 0, sizeof(*t));
	t->e = agg_engine_create(&ops);
	assert_non_null(t->e);
	t->spec = spec;
	t->job = job;
	if (spec) {
		int rc = agg_engine_job_add(t->e, job, spec, 0, &credits, err, sizeof(err));
		if (rc)
			print_error("job_add: %s\n", err);
		assert_int_equal(rc, 0);
		assert_int_equal(credits, spec->pool_msgs / 2);
	}
}

void th_fini(struct th *t)
{
	agg_engine_destroy(t->e);
	assert_int_equal(t->held, 0);     /* every held handle came back */
	for (uint32_t k = 0; k < t->log_len; k++)
		th_pkt_free(t->log[k].pkt);
	free(t->log);
	free(t->sent);
	free(t->spec);
	memset(t, 0, sizeof(*t));
}

void th_flow_data(const struct nr_job_spec *s, uint32_t conn, struct nr_flow *f)
{
	const struct nr_conn_spec *c = &s->conns[conn];

	memset(f, 0, sizeof(*f));
	memcpy(f->src_mac, c->src_mac, 6);
	memcpy(f->dst_mac, c->dst_mac, 6);
	f->saddr = c->src_ip;
	f->daddr = c->dst_ip;
	f->sport = (uint16_t)(49152 + conn);
	f->frag_off = NR_IPV4_DF;
	f->dqpn = c->dst_qpn;
}

struct th_pkt *th_build(const struct nr_flow *f, const struct nr_build_args *a,
			const void *payload, uint32_t len)
{
	struct th_pkt *k = calloc(1, sizeof(*k));
	int n;

	k->magic = TH_MAGIC;
	n = nr_build_frame(k->frame, sizeof(k->frame), f, a, payload, len);
	assert_true(n > 0);
	k->len = (uint32_t)n;
	assert_int_equal(nr_parse(k->frame, k->len, &k->p), NR_PKT_ROCE);
	return k;
}

struct th_pkt *th_copy(const uint8_t *frame, uint32_t len)
{
	struct th_pkt *k = calloc(1, sizeof(*k));

	assert_true(len <= sizeof(k->frame));
	k->magic = TH_MAGIC;
	memcpy(k->frame, frame, len);
	k->len = len;
	assert_int_equal(nr_parse(k->frame, k->len, &k->p), NR_PKT_ROCE);
	return k;
}

struct th_pkt *th_data(const struct nr_job_spec *s, uint32_t conn, uint32_t psn, uint8_t opcode,
		       uint32_t imm, const void *payload, uint32_t len)
{
	struct nr_flow f;
	struct nr_build_args a = {
		.opcode = opcode, .psn = psn, .imm = imm, .va = 0x10000, .rkey = 0x1234,
		.dma_len = len, .ackreq = true,
	};

	th_flow_data(s, conn, &f);
	return th_build(&f, &a, payload, len);
}

struct th_pkt *th_aeth(const struct nr_job_spec *s, uint32_t conn, uint32_t psn, uint8_t syn,
		       uint32_t msn)
{
	const struct nr_conn_spec *c = &s->conns[conn];
	struct nr_flow f = {
		.saddr = c->dst_ip, .daddr = c->src_ip, .sport = 49999,
		.frag_off = NR_IPV4_DF, .dqpn = c->src_qpn,
	};
	struct nr_build_args a = { .opcode = NR_OP_RC_ACK, .psn = psn, .syndrome = syn, .msn = msn };

	memcpy(f.src_mac, c->dst_mac, 6);
	memcpy(f.dst_mac, c->src_mac, 6);
	return th_build(&f, &a, NULL, 0);
}

struct th_pkt *th_ack(const struct nr_job_spec *s, uint32_t conn, uint32_t psn, uint8_t syn)
{
	return th_aeth(s, conn, psn, syn, 1);
}

enum agg_verdict th_input(struct th *t, struct th_pkt *k, uint64_t now, enum nr_engine_ctr *ctr)
{
	enum agg_verdict v;

	assert_int_equal(k->state, TH_TEST);
	/* The engine may emit this very packet before returning HELD. */
	k->state = TH_HELD;
	t->held++;
	v = agg_engine_input(t->e, &k->p, k->frame, k, now, ctr);
	if (v != NR_V_HELD) {
		assert_int_equal(k->state, TH_HELD);
		k->state = TH_TEST;
		t->held--;
	}
	if (t->held > t->held_max)
		t->held_max = t->held;
	return v;
}

void th_pkt_free(struct th_pkt *k)
{
	if (!k)
		return;
	k->magic = 0;
	free(k);
}

uint64_t th_ctr(struct th *t, enum nr_engine_ctr c)
{
	uint64_t ctr[NR_ECTR_MAX];

	agg_engine_counters(t->e, ctr);
	return ctr[c];
}

const uint8_t *th_payload(const struct th_pkt *k)
{
	return k->frame + k->p.pay_off;
}

float th_pf(const struct th_pkt *k, uint32_t idx)
{
	float f;

	memcpy(&f, th_payload(k) + idx * 4, 4);
	return f;
}

/*
 * The repair t->sent[k]: conn's result of g as the box first emitted it
 * (t->log), byte for byte up to the ICRC (checked by the harness) but for
 * the BTH AckReq bit, set on the last result of the repair only; from the
 * port the sender's packets came in on.
 */
void th_check_repair(struct th *t, uint32_t k, uint32_t conn, uint32_t g, bool last)
{
	const struct th_sent *x = &t->sent[k];
	const struct th_pkt *em = NULL;
	uint8_t a[TH_FRAME_CAP], b[TH_FRAME_CAP];
	uint32_t n;

	assert_true(k < t->nsent);
	for (uint32_t l = 0; l < t->log_len; l++)
		if (t->log[l].conn == conn && t->log[l].g == (g & NR_PSN_MASK))
			em = t->log[l].pkt;
	assert_non_null(em);
	assert_int_equal(x->origin, 10 + conn);
	assert_int_equal(x->p.psn, nr_psn_add(t->spec->conns[conn].ipsn, g));
	assert_int_equal(x->p.qpn, t->spec->conns[conn].dst_qpn);
	assert_int_equal(x->p.ackreq, last);
	assert_int_equal(x->len, em->len);
	n = x->p.pay_off + x->p.pay_len;
	memcpy(a, x->frame, n);
	memcpy(b, em->frame, n);
	a[x->p.bth_off + 8] &= 0x7F; /* BTH AckReq */
	b[x->p.bth_off + 8] &= 0x7F;
	assert_memory_equal(a, b, n);
}
