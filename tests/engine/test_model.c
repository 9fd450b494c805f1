/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Randomized reference model: thousands of seeded schedules run a job of N
 * senders and N receivers (N = 1..33) through the engine, with random arrival
 * order across and within connections, loss of data, results and ACKs,
 * duplicates, go-back-N retransmission (on NAK and on sender timeout),
 * coalesced ACKs, short last packets, PSNs that wrap 2^24, and senders that
 * respect the credit window W (pool = 2W messages).
 *
 * Checked on every step or at the end of every schedule:
 *   - every result packet a receiver gets (emitted or resent) carries exactly
 *     the rank-ordered sum (ordered mode) or the sum in the order the engine
 *     admitted the contributions (streaming), bit for bit, and the right
 *     immediate (tag ^ result_key);
 *   - emissions per connection come once per g, in g order; a RESEND, or a
 *     result the engine resent itself for a receiver's NAK (a repair), only
 *     for a g already emitted; every receiver gets every g exactly once in
 *     order; repairs happen;
 *   - no slot is released before every connection's ACK for it reached the
 *     engine; held packets never exceed pool_packets * N;
 *   - every handle comes back exactly once (emit or free), nothing leaks, and
 *     at the end every slot is released.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "eng_harness.h"
#include "eng_rand.h"

static uint64_t seed;

struct flight {
	struct th_pkt *k;
	uint32_t conn;
	bool ack;            /* to the engine: an ACK/NAK from conn's receiver */
};

struct bag {
	struct flight *v;
	uint32_t n, cap;
};

static void bag_push(struct bag *b, struct flight f)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 64;
		b->v = realloc(b->v, b->cap * sizeof(*b->v));
	}
	b->v[b->n++] = f;
}

/* Mostly FIFO (the network mostly keeps order), sometimes any element. */
static struct flight bag_take(struct bag *b, struct eng_rng *r, unsigned reorder_pct)
{
	uint32_t i = eng_chance(r, reorder_pct) ? eng_rand(r) % b->n : 0;
	struct flight f = b->v[i];

	memmove(&b->v[i], &b->v[i + 1], (b->n - i - 1) * sizeof(*b->v));
	b->n--;
	return f;
}

static void bag_free(struct bag *b)
{
	for (uint32_t i = 0; i < b->n; i++)
		th_pkt_free(b->v[i].k);
	free(b->v);
	memset(b, 0, sizeof(*b));
}

struct sched {
	struct eng_rng r;
	uint32_t n, mtu, msg, ppm, w, msgs, total, key;
	uint8_t mode;
	/* percentages */
	unsigned p_loss, p_dup, p_rloss, p_aloss, p_ack, p_reorder, p_timeout;
	unsigned p_greedy, p_late;  /* stray packets past the window; very late packets */
	float *data;            /* [n][total][mtu/4] */
	float *ref;             /* [total][mtu/4] ordered reference */
	uint32_t *order;        /* [total][n] streaming admission order */
	uint32_t *order_len;    /* [total] */
	/* host state */
	uint32_t *una, *nxt;    /* senders */
	uint32_t *expect;       /* receivers */
	bool *nak_sent;
	/* engine-visible state for the checks */
	uint32_t *emit_next;    /* per conn: next g the engine must emit */
	uint32_t *ack_seen;     /* per conn: ACK mark that reached the engine */
	struct bag to_eng, to_rcv, late;
	struct th t;
	uint64_t steps;
};

static uint32_t pkt_len(const struct sched *s, uint32_t g)
{
	uint32_t q = g % s->ppm;

	return q + 1 < s->ppm ? s->mtu : s->msg - (s->ppm - 1) * s->mtu;
}

static float *data_of(const struct sched *s, uint32_t rank, uint32_t g)
{
	return &s->data[((size_t)rank * s->total + g) * (s->mtu / 4)];
}

static uint32_t tag_of(uint32_t m)
{
	return 0x2A000000u | m;   /* op sequence 0x2A : message index */
}

static void gen_schedule(struct sched *s, uint64_t sd)
{
	struct eng_rng *r = &s->r;
	static const uint32_t mtus[] = { 256, 256, 512, 1024, 4096 };
	uint32_t nfl, *ipsn;
	struct nr_job_spec *spec;

	memset(s, 0, sizeof(*s));
	eng_rng_init(r, sd);
	uint32_t k = eng_rand(r) % 100;
	s->n = k < 55 ? 1 + eng_rand(r) % 6 : k < 90 ? 7 + eng_rand(r) % 10 : 17 + eng_rand(r) % 17;
	s->mtu = mtus[eng_rand(r) % 5];
	if (s->n > 8 && s->mtu > 1024)
		s->mtu = 1024;
	s->msg = 4 * (1 + eng_rand(r) % (3 * s->mtu / 4));
	if (eng_chance(r, 20))
		s->msg = s->mtu * (1 + eng_rand(r) % 3);
	s->ppm = (s->msg + s->mtu - 1) / s->mtu;
	s->w = 1 + eng_rand(r) % 3;
	s->msgs = 2 + eng_rand(r) % (s->ppm == 1 ? 24 : 10);
	s->total = s->msgs * s->ppm;
	s->mode = eng_rand(r) % 2;
	s->key = eng_chance(r, 50) ? eng_rand(r) : 0;
	s->p_loss = eng_rand(r) % 15;
	s->p_dup = eng_rand(r) % 10;
	s->p_rloss = eng_rand(r) % 10;
	s->p_aloss = eng_rand(r) % 20;
	s->p_ack = 20 + eng_rand(r) % 81;
	s->p_reorder = eng_rand(r) % 30;
	s->p_timeout = 1 + eng_rand(r) % 3;
	s->p_greedy = eng_chance(r, 20) ? 1 + eng_rand(r) % 10 : 0;
	s->p_late = eng_chance(r, 30) ? 1 + eng_rand(r) % 3 : 0;

	nfl = s->mtu / 4;
	s->data = malloc((size_t)s->n * s->total * nfl * sizeof(float));
	s->ref = malloc((size_t)s->total * nfl * sizeof(float));
	for (size_t i = 0; i < (size_t)s->n * s->total * nfl; i++) {
		/* random mantissas and exponents: rounding depends on the order */
		uint32_t b = (eng_rand(r) & 0x807FFFFFu) | ((112 + eng_rand(r) % 32) << 23);
		memcpy(&s->data[i], &b, 4);
	}
	for (uint32_t g = 0; g < s->total; g++)
		for (uint32_t j = 0; j < nfl; j++) {
			float a = data_of(s, 0, g)[j];
			for (uint32_t i = 1; i < s->n; i++)
				a = a + data_of(s, i, g)[j];
			s->ref[(size_t)g * nfl + j] = a;
		}
	s->order = calloc((size_t)s->total * s->n, sizeof(uint32_t));
	s->order_len = calloc(s->total, sizeof(uint32_t));
	s->una = calloc(s->n, sizeof(uint32_t));
	s->nxt = calloc(s->n, sizeof(uint32_t));
	s->expect = calloc(s->n, sizeof(uint32_t));
	s->nak_sent = calloc(s->n, sizeof(bool));
	s->emit_next = calloc(s->n, sizeof(uint32_t));
	s->ack_seen = calloc(s->n, sizeof(uint32_t));

	ipsn = malloc(s->n * sizeof(uint32_t));
	for (uint32_t i = 0; i < s->n; i++)
		ipsn[i] = eng_chance(r, 70) ? NR_PSN_MOD - 1 - eng_rand(r) % (s->total + 1)
					    : eng_rand(r) & NR_PSN_MASK;
	spec = th_spec(s->n, s->mtu, s->msg, 2 * s->w, s->mode, ipsn);
	spec->timeout_ms = 3600000;
	spec->result_key = s->key;
	free(ipsn);
	th_init(&s->t, spec, 1 + eng_rand(r) % 1000);
	agg_engine_set_kernel(s->t.e, eng_chance(r, 50) ? NR_KERNEL_SCALAR : NR_KERNEL_AVX512);
}

static void sched_free(struct sched *s)
{
	bag_free(&s->to_eng);
	bag_free(&s->to_rcv);
	bag_free(&s->late);
	th_fini(&s->t);
	free(s->data);
	free(s->ref);
	free(s->order);
	free(s->order_len);
	free(s->una);
	free(s->nxt);
	free(s->expect);
	free(s->nak_sent);
	free(s->emit_next);
	free(s->ack_seen);
}

static uint8_t op_of(const struct sched *s, uint32_t g)
{
	uint32_t q = g % s->ppm;

	if (s->ppm == 1)
		return NR_OP_RC_WRITE_ONLY_IMM;
	return q == 0 ? NR_OP_RC_WRITE_FIRST :
	       q + 1 < s->ppm ? NR_OP_RC_WRITE_MIDDLE : NR_OP_RC_WRITE_LAST_IMM;
}

static void sender_send(struct sched *s, uint32_t i)
{
	uint32_t g = s->nxt[i];
	struct th_pkt *k;

	/*
	 * A stray copy of a packet far past the credit window (the occupied-slot
	 * path).  Its sender's state does not move: a sender that really sent
	 * past its credits could have the slot of a packet whose ACK it lost
	 * reused under it, stall, and rightly fail the job by timeout.
	 */
	if (eng_chance(&s->r, s->p_greedy)) {
		uint32_t ahead = (s->una[i] / s->ppm + 3 * s->w) * s->ppm +
				 eng_rand(&s->r) % (s->w * s->ppm);

		if (ahead < s->total)
			bag_push(&s->to_eng, (struct flight){
				.k = th_data(s->t.spec, i,
					     nr_psn_add(s->t.spec->conns[i].ipsn, ahead),
					     op_of(s, ahead), tag_of(ahead / s->ppm),
					     data_of(s, i, ahead), pkt_len(s, ahead)),
				.conn = i });
	}
	if (g >= s->total || g / s->ppm >= s->una[i] / s->ppm + s->w)
		return;                          /* done, or out of credits */
	s->nxt[i]++;
	if (eng_chance(&s->r, s->p_loss))
		return;
	k = th_data(s->t.spec, i, nr_psn_add(s->t.spec->conns[i].ipsn, g), op_of(s, g),
		    tag_of(g / s->ppm), data_of(s, i, g), pkt_len(s, g));
	bag_push(eng_chance(&s->r, s->p_late) ? &s->late : &s->to_eng,
		 (struct flight){ .k = k, .conn = i });
	if (eng_chance(&s->r, s->p_dup)) {
		struct th_pkt *d = malloc(sizeof(*d));
		memcpy(d, k, sizeof(*d));
		bag_push(&s->to_eng, (struct flight){ .k = d, .conn = i });
	}
}

static uint32_t g_of(const struct sched *s, uint32_t conn, uint32_t psn)
{
	return nr_psn_sub(psn, s->t.spec->conns[conn].ipsn);
}

/* An ACK (or NAK) that got through the engine reaches sender conn. */
static void sender_ack(struct sched *s, uint32_t i, const struct nr_pkt *p)
{
	uint32_t g = g_of(s, i, p->psn);

	if (nr_syn_is_ack(p->aeth_syn)) {
		if (g + 1 > s->una[i])
			s->una[i] = g + 1;
		if (s->nxt[i] < s->una[i])
			s->nxt[i] = s->una[i];
	} else if (p->aeth_syn == NR_AETH_NAK_PSN_SEQ_ERR) {
		if (g > s->una[i])
			s->una[i] = g;
		s->nxt[i] = s->una[i];           /* go back N */
	}
}

/* Results the engine emitted during the last input go to the receivers. */
static void drain_emits(struct sched *s)
{
	for (uint32_t k = 0; k < s->t.log_len; k++) {
		struct th_emit *em = &s->t.log[k];

		assert_int_equal(em->g, s->emit_next[em->conn]);   /* once, in g order */
		s->emit_next[em->conn]++;
		em->pkt->state = TH_TEST;
		bag_push(&s->to_rcv, (struct flight){ .k = em->pkt, .conn = em->conn });
	}
	s->t.log_len = 0;
}

/*
 * A repair's results (the engine resent them itself for a receiver's NAK)
 * go to their receivers like any result, and are checked the same; the
 * status monitor's NAKs to senders are not modelled (the model's senders go
 * back on the receivers' NAKs and their own timeout).
 */
static void drain_repairs(struct sched *s)
{
	for (uint32_t k = 0; k < s->t.nsent; k++) {
		const struct th_sent *x = &s->t.sent[k];
		uint32_t i;

		if (x->p.opcode == NR_OP_RC_ACK)
			continue;
		for (i = 0; i < s->n; i++)
			if (x->p.qpn == s->t.spec->conns[i].dst_qpn &&
			    x->p.daddr == s->t.spec->conns[i].dst_ip)
				break;
		assert_true(i < s->n);
		assert_true(g_of(s, i, x->p.psn) < s->emit_next[i]);   /* only what was emitted */
		bag_push(&s->to_rcv, (struct flight){ .k = th_copy(x->frame, x->len), .conn = i });
	}
	s->t.nsent = 0;
}

static void check_release(struct sched *s)
{
	struct nr_job_stats st;
	uint32_t low = UINT32_MAX;

	assert_int_equal(agg_engine_job_stats(s->t.e, s->t.job, &st), 0);
	assert_int_equal(st.state, NR_JOB_ACTIVE);
	for (uint32_t i = 0; i < s->n; i++)
		if (s->ack_seen[i] < low)
			low = s->ack_seen[i];
	if (st.next_release > low) {
		print_error("slot %u released, but some connection's ACK reached only %u\n",
			    st.next_release, low);
		fail();
	}
	assert_true(s->t.held <= (uint64_t)2 * s->w * s->ppm * s->n);
}

static void engine_deliver(struct sched *s)
{
	struct flight f = bag_take(&s->to_eng, &s->r, s->p_reorder);
	enum nr_engine_ctr c = NR_ECTR_MAX;
	uint32_t g = g_of(s, f.conn, f.k->p.psn);
	enum agg_verdict v = th_input(&s->t, f.k, s->steps * 1000, &c);

	if (f.ack) {
		/* forwarded, or a NAK the box answered with a repair itself */
		assert_true(v == NR_V_FORWARD || (v == NR_V_DROP && c == NR_ECTR_NAK_REPAIRED));
		if (c == NR_ECTR_ACKS_SNOOPED || c == NR_ECTR_NAK_REPAIRED) {
			uint32_t mark = nr_syn_is_ack(f.k->p.aeth_syn) ? g + 1 : g;
			if (mark > s->ack_seen[f.conn])
				s->ack_seen[f.conn] = mark;
		}
		if (v == NR_V_FORWARD && !eng_chance(&s->r, s->p_aloss))
			sender_ack(s, f.conn, &f.k->p);
		th_pkt_free(f.k);
		drain_repairs(s);
		check_release(s);
		return;
	}
	switch (v) {
	case NR_V_HELD:
		assert_int_equal(c, NR_ECTR_AGGREGATED);
		assert_true(s->order_len[g] < s->n);
		s->order[(size_t)g * s->n + s->order_len[g]++] = f.conn;
		drain_emits(s);
		break;
	case NR_V_RESEND:
		assert_true(g < s->emit_next[f.conn]);          /* only for emitted g */
		bag_push(&s->to_rcv, f);
		break;
	case NR_V_DROP:
		assert_true(c == NR_ECTR_DUP_DROPPED || c == NR_ECTR_STALE_DROPPED ||
			    c == NR_ECTR_OCCUPIED_DROPPED);
		th_pkt_free(f.k);
		break;
	default:
		print_error("data packet of conn %u g %u forwarded raw\n", f.conn, g);
		fail();
	}
	check_release(s);
}

/* The value the receiver must see for g. */
static void expected_result(struct sched *s, uint32_t g, float *out)
{
	uint32_t nfl = pkt_len(s, g) / 4;

	if (s->mode == NR_SUM_ORDERED) {
		memcpy(out, &s->ref[(size_t)g * (s->mtu / 4)], nfl * 4);
		return;
	}
	assert_int_equal(s->order_len[g], s->n);
	for (uint32_t j = 0; j < nfl; j++) {
		float a = data_of(s, s->order[(size_t)g * s->n], g)[j];
		for (uint32_t i = 1; i < s->n; i++)
			a = a + data_of(s, s->order[(size_t)g * s->n + i], g)[j];
		out[j] = a;
	}
}

static void receiver_ack(struct sched *s, uint32_t i, uint32_t g, uint8_t syn)
{
	struct th_pkt *k = th_ack(s->t.spec, i, nr_psn_add(s->t.spec->conns[i].ipsn, g), syn);

	if (eng_chance(&s->r, s->p_aloss)) {
		th_pkt_free(k);
		return;
	}
	bag_push(&s->to_eng, (struct flight){ .k = k, .conn = i, .ack = true });
}

static void receiver_deliver(struct sched *s)
{
	struct flight f = bag_take(&s->to_rcv, &s->r, s->p_reorder);
	uint32_t i = f.conn, g, len;
	struct nr_pkt p;
	float want[1024];

	if (eng_chance(&s->r, s->p_rloss)) {
		th_pkt_free(f.k);
		return;
	}
	assert_int_equal(nr_parse(f.k->frame, f.k->len, &p), NR_PKT_ROCE);
	assert_int_equal(p.daddr, s->t.spec->conns[i].dst_ip);
	assert_int_equal(p.qpn, s->t.spec->conns[i].dst_qpn);
	g = g_of(s, i, p.psn);
	assert_true(g < s->total);
	len = pkt_len(s, g);
	assert_int_equal(p.pay_len, len);
	expected_result(s, g, want);
	if (memcmp(f.k->frame + p.pay_off, want, len) != 0) {
		print_error("conn %u g %u: result differs from the %s reference\n", i, g,
			    s->mode == NR_SUM_ORDERED ? "rank-ordered" : "admission-order");
		fail();
	}
	if (p.mask & NR_OPF_IMMDT)
		assert_int_equal(p.imm, tag_of(g / s->ppm) ^ s->key);
	th_pkt_free(f.k);
	if (g == s->expect[i]) {
		s->expect[i]++;
		s->nak_sent[i] = false;
		if (eng_chance(&s->r, s->p_ack) || s->expect[i] == s->total ||
		    s->expect[i] % s->ppm == 0)
			receiver_ack(s, i, g, 0x1F);
	} else if (g < s->expect[i]) {
		receiver_ack(s, i, s->expect[i] - 1, 0x1F);          /* duplicate: re-ACK */
	} else if (!s->nak_sent[i]) {
		s->nak_sent[i] = true;
		receiver_ack(s, i, s->expect[i], NR_AETH_NAK_PSN_SEQ_ERR);
	}
}

static bool sched_done(const struct sched *s)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (s->una[i] < s->total || s->expect[i] < s->total)
			return false;
	return true;
}

static uint64_t ctr_sum[NR_ECTR_MAX];
static uint32_t max_n;

static void run_schedule(uint64_t sd, uint64_t *steps_total)
{
	struct sched s;
	struct nr_job_stats st;

	gen_schedule(&s, sd);
	while (!sched_done(&s)) {
		uint32_t a = eng_rand(&s.r) % 100;

		s.steps++;
		if (s.steps > 400000) {
			struct nr_job_stats dst;

			agg_engine_job_stats(s.t.e, s.t.job, &dst);
			print_error("schedule %llu: no completion after %llu steps (n %u ppm %u w %u "
				    "total %u mode %u; engine next_emit %u next_release %u; "
				    "in flight %u/%u/%u)\n",
				    (unsigned long long)sd, (unsigned long long)s.steps, s.n, s.ppm,
				    s.w, s.total, s.mode, dst.next_emit, dst.next_release,
				    s.to_eng.n, s.to_rcv.n, s.late.n);
			for (uint32_t i = 0; i < s.n; i++)
				print_error("  conn %u: una %u nxt %u expect %u emitted %u acked %u\n",
					    i, s.una[i], s.nxt[i], s.expect[i], s.emit_next[i],
					    s.ack_seen[i]);
			fail();
		}
		if (s.late.n && eng_rand(&s.r) % 1000 < 3)
			bag_push(&s.to_eng, bag_take(&s.late, &s.r, 100));
		if (a < 35) {
			sender_send(&s, eng_rand(&s.r) % s.n);
		} else if (a < 70) {
			if (s.to_eng.n)
				engine_deliver(&s);
		} else if (a < 97) {
			if (s.to_rcv.n)
				receiver_deliver(&s);
		} else if (eng_chance(&s.r, s.p_timeout * 10) || !s.to_eng.n) {
			uint32_t i = eng_rand(&s.r) % s.n;     /* local ACK timeout */
			s.nxt[i] = s.una[i];
		}
		if (s.steps % 4096 == 0)
			assert_int_equal(agg_engine_poll(s.t.e, s.steps * 1000), 0);
	}
	/* every slot released, nothing held, every handle came back once */
	assert_int_equal(agg_engine_job_stats(s.t.e, s.t.job, &st), 0);
	while (s.late.n)
		bag_push(&s.to_eng, bag_take(&s.late, &s.r, 0));
	while (s.to_eng.n)
		engine_deliver(&s);           /* stragglers: duplicates, late packets, ACKs */
	assert_int_equal(agg_engine_job_stats(s.t.e, s.t.job, &st), 0);
	assert_int_equal(st.next_emit, s.total);
	assert_int_equal(st.next_release, s.total);
	assert_int_equal(st.ctr[NR_ECTR_COMPLETED], s.total);
	assert_int_equal(st.ctr[NR_ECTR_EMITTED], (uint64_t)s.total * s.n);
	assert_int_equal(st.ctr[NR_ECTR_AGGREGATED], (uint64_t)s.total * s.n);
	assert_int_equal(st.ctr[NR_ECTR_TAG_MISMATCH] + st.ctr[NR_ECTR_LEN_MISMATCH], 0);
	assert_int_equal(s.t.held, 0);
	for (uint32_t i = 0; i < s.n; i++)
		assert_int_equal(s.emit_next[i], s.total);
	for (unsigned c = 0; c < NR_ECTR_MAX; c++)
		ctr_sum[c] += st.ctr[c];
	if (s.n > max_n)
		max_n = s.n;
	assert_int_equal(agg_engine_job_del(s.t.e, s.t.job), 0);
	*steps_total += s.steps;
	sched_free(&s);
}

static void test_model(void **state)
{
	const char *env = getenv("NR_MODEL_SCHEDULES");
	unsigned count = env ? (unsigned)strtoul(env, NULL, 0) : 3000;
	uint64_t steps = 0;
	struct eng_rng r;

	(void)state;
	eng_rng_init(&r, seed);
	for (unsigned k = 0; k < count; k++) {
		uint64_t sd = eng_rand64(&r);

		run_schedule(sd, &steps);
	}
	printf("model: %u schedules (N up to %u), %llu steps; engine counters:", count, max_n,
	       (unsigned long long)steps);
	for (unsigned c = 0; c < NR_ECTR_MAX; c++)
		if (ctr_sum[c])
			printf(" %s=%llu", nr_engine_ctr_names[c], (unsigned long long)ctr_sum[c]);
	printf("\n");
	/* the schedules must have exercised the interesting paths */
	assert_true(ctr_sum[NR_ECTR_DUP_RESENT] > 0);
	assert_true(ctr_sum[NR_ECTR_DUP_DROPPED] > 0);
	assert_true(ctr_sum[NR_ECTR_ACK_IGNORED] > 0);
	assert_true(ctr_sum[NR_ECTR_STALE_DROPPED] > 0);
	assert_true(ctr_sum[NR_ECTR_OCCUPIED_DROPPED] > 0);
	assert_true(ctr_sum[NR_ECTR_NAK_REPAIRED] > 0);
	assert_true(ctr_sum[NR_ECTR_REPAIR_SENT] >= ctr_sum[NR_ECTR_NAK_REPAIRED]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
	};

	seed = eng_seed("test_model");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
