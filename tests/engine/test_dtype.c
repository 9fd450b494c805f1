/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Jobs of 16-bit elements (dtype bf16, fp16) through the engine: each
 * packet's sum is the rank-ordered FP32 sum of the widened contributions
 * rounded once (ordered mode, whatever the arrival order) or the arrival-order
 * one (streaming), the same bits on every connection's packet, in the stored
 * result a duplicate is answered with, and under every kernel; a payload that
 * is not a whole number of elements is dropped as bad_len; the spec's checks
 * name what they refuse.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dataplane/engine/agg_sum.h"
#include "eng_harness.h"
#include "eng_rand.h"

#define N     4
#define EL    512             /* elements of a 1024-byte packet */

static uint64_t seed;

static float widen(unsigned t, uint16_t h)
{
	return t == NR_ELEM_BF16 ? nr_bf16_widen(h) : nr_fp16_widen(h);
}

static uint16_t round16(unsigned t, float f)
{
	return t == NR_ELEM_BF16 ? nr_bf16_round(f) : nr_fp16_round(f);
}

/* gradient-like values with a wide exponent range, some -0, a NaN and an Inf */
static void fill(struct eng_rng *r, unsigned t, uint16_t *p, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		float v = (float)((int32_t)eng_rand(r) % 20000) / 1024.0f;

		v *= (float)(1u << (eng_rand(r) % 12)) / 64.0f;
		p[k] = round16(t, v);
	}
	p[7] = t == NR_ELEM_BF16 ? 0x7FC1 : 0x7E01;   /* a NaN with a payload */
	p[9] = t == NR_ELEM_BF16 ? 0xFF80 : 0xFC00;   /* -Inf */
}

/* The rule: widened, summed in FP32 in the order given (acc's NaN first), rounded once. */
static void ref_sum(unsigned t, uint16_t pay[][EL], const unsigned *order, uint16_t *out)
{
	for (uint32_t k = 0; k < EL; k++) {
		float a = widen(t, pay[order[0]][k]);
		uint32_t ab;

		for (unsigned i = 1; i < N; i++) {
			memcpy(&ab, &a, 4);
			if ((ab & 0x7FFFFFFFu) > 0x7F800000u)
				continue;
			a = a + widen(t, pay[order[i]][k]);
		}
		memcpy(&ab, &a, 4);
		if ((ab & 0x7FFFFFFFu) > 0x7F800000u)
			ab |= 0x00400000u;
		memcpy(&a, &ab, 4);
		out[k] = round16(t, a);
	}
}

static enum agg_verdict offer(struct th *t, uint32_t conn, uint32_t g, const void *pay,
			    uint32_t len, enum nr_engine_ctr *ctr)
{
	const struct nr_conn_spec *c = &t->spec->conns[conn];
	struct th_pkt *k = th_data(t->spec, conn, nr_psn_add(c->ipsn, g), NR_OP_RC_WRITE_ONLY_IMM,
				   0x01000000 | g, pay, len);
	enum agg_verdict v = th_input(t, k, 0, ctr);

	if (v != NR_V_HELD)
		th_pkt_free(k);
	return v;
}

/* One job of type t in mode m under kernel k: three packets, arrival orders
 * that differ from rank order; every emitted payload checked. */
static void run_job(unsigned t, uint8_t mode, enum agg_sum_kernel k, uint8_t out[3][EL * 2])
{
	static const unsigned arrive[3][N] = { { 2, 0, 3, 1 }, { 3, 2, 1, 0 }, { 0, 1, 2, 3 } };
	static const unsigned rank[N] = { 0, 1, 2, 3 };
	uint16_t pay[N][EL], want[EL];
	struct eng_rng r;
	struct th t_;
	struct nr_job_spec *s = th_spec(N, 1024, 1024, 4, mode, NULL);

	s->dtype = (uint8_t)t;
	th_init(&t_, s, 5);
	assert_int_equal(agg_engine_set_kernel(t_.e, k), 0);
	eng_rng_init(&r, seed);
	for (uint32_t g = 0; g < 3; g++) {
		for (unsigned i = 0; i < N; i++)
			fill(&r, t, pay[i], EL);
		ref_sum(t, pay, mode == NR_SUM_ORDERED ? rank : arrive[g], want);
		for (uint32_t k = 0; k < t_.log_len; k++)   /* the last slot's results: checked */
			th_pkt_free(t_.log[k].pkt);
		t_.log_len = 0;
		for (unsigned a = 0; a < N; a++)
			assert_int_equal(offer(&t_, arrive[g][a], g, pay[arrive[g][a]], EL * 2, NULL),
					 NR_V_HELD);
		assert_int_equal(t_.log_len, N);
		for (unsigned i = 0; i < N; i++) {
			if (memcmp(th_payload(t_.log[i].pkt), want, EL * 2)) {
				const uint16_t *got = (const uint16_t *)th_payload(t_.log[i].pkt);

				for (uint32_t e = 0; e < EL; e++)
					if (got[e] != want[e])
						fail_msg("%s %s %s g=%u conn %u element %u: 0x%04x, rule 0x%04x",
							 nr_elem_name(t), mode ? "streaming" : "ordered",
							 agg_sum_get(k)->name, g, i, e, got[e], want[e]);
			}
		}
		memcpy(out[g], want, EL * 2);
	}
	/* a duplicate of an emitted packet is answered with the stored result */
	{
		const struct nr_conn_spec *c = &t_.spec->conns[1];
		struct th_pkt *d = th_data(t_.spec, 1, nr_psn_add(c->ipsn, 1), NR_OP_RC_WRITE_ONLY_IMM,
					   0x01000001, pay[0], EL * 2);
		enum nr_engine_ctr ctr;

		assert_int_equal(th_input(&t_, d, 0, &ctr), NR_V_RESEND);
		assert_int_equal(ctr, NR_ECTR_DUP_RESENT);
		assert_memory_equal(th_payload(d), out[1], EL * 2);
		th_pkt_free(d);
	}
	th_fini(&t_);
}

static void test_sums(void **state)
{
	uint8_t scalar[3][EL * 2], fast[3][EL * 2];

	(void)state;
	for (unsigned t = NR_ELEM_BF16; t <= NR_ELEM_FP16; t++)
		for (uint8_t mode = NR_SUM_ORDERED; mode <= NR_SUM_STREAMING; mode++) {
			run_job(t, mode, NR_KERNEL_SCALAR, scalar);
			if (!agg_sum_get(NR_KERNEL_AVX512))
				continue;
			run_job(t, mode, NR_KERNEL_AVX512, fast);
			assert_memory_equal(scalar, fast, sizeof(scalar));
		}
}

/* Rounded once: a sum whose FP32 total is exact in bf16 but whose rank-by-rank
 * bf16 rounding is not (what a ring gets) comes out exact. */
static void test_rounded_once(void **state)
{
	/* 256 + 1 + 1 + 1 + 1 = 260: in bf16 256 + 1 rounds back to 256 at every hop */
	uint16_t p[N][EL];
	struct th t_;
	struct nr_job_spec *s = th_spec(N, 1024, 1024, 4, NR_SUM_ORDERED, NULL);

	(void)state;
	s->dtype = NR_ELEM_BF16;
	th_init(&t_, s, 6);
	for (uint32_t e = 0; e < EL; e++) {
		p[0][e] = 0x4380;       /* 256 */
		p[1][e] = p[2][e] = p[3][e] = 0x3F80;   /* 1 */
	}
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(offer(&t_, i, 0, p[i], EL * 2, NULL), NR_V_HELD);
	assert_int_equal(t_.log_len, N);
	for (unsigned i = 0; i < N; i++)
		for (uint32_t e = 0; e < EL; e++)
			assert_int_equal(((const uint16_t *)th_payload(t_.log[i].pkt))[e], 0x4382); /* 260 */
	th_fini(&t_);
}

/* A payload that is not a whole number of elements is bad_len; an odd number
 * of 16-bit elements is fine (a message's last packet). */
static void test_bad_len(void **state)
{
	uint16_t p[EL + 1] = { 0x3F80 };   /* one element over the MTU too */
	struct th t_;
	struct nr_job_spec *s = th_spec(2, 1024, 1024, 4, NR_SUM_ORDERED, NULL);
	enum nr_engine_ctr c;

	(void)state;
	s->dtype = NR_ELEM_FP16;
	th_init(&t_, s, 8);
	assert_int_equal(offer(&t_, 0, 0, p, 1023, &c), NR_V_DROP);
	assert_int_equal(c, NR_ECTR_BAD_LEN);
	assert_int_equal(offer(&t_, 0, 0, p, 1026, &c), NR_V_DROP);   /* over the MTU */
	assert_int_equal(c, NR_ECTR_BAD_LEN);
	assert_int_equal(offer(&t_, 0, 0, p, 6, NULL), NR_V_HELD);
	assert_int_equal(offer(&t_, 1, 0, p, 6, NULL), NR_V_HELD);
	assert_int_equal(t_.log_len, 2);
	assert_int_equal(th_ctr(&t_, NR_ECTR_BAD_LEN), 2);
	th_fini(&t_);
}

static void expect_invalid(struct nr_job_spec *s, const char *msg)
{
	char err[256] = "";

	assert_int_equal(nr_job_spec_validate(s, err, sizeof(err)), -EINVAL);
	if (!strstr(err, msg))
		fail_msg("error \"%s\" does not say \"%s\"", err, msg);
}

static void test_validate(void **state)
{
	struct nr_job_spec *s = th_spec(2, 1024, 1024, 4, NR_SUM_ORDERED, NULL);
	char err[256];

	(void)state;
	s->dtype = 3;
	expect_invalid(s, "dtype: 3 is not an element type (0 fp32, 1 bf16, 2 fp16)");
	s->dtype = NR_ELEM_BF16;
	s->msg_size = 1023;
	expect_invalid(s, "msg_size: 1023 must be a multiple of 2");
	s->msg_size = 2;
	assert_int_equal(nr_job_spec_validate(s, err, sizeof(err)), 0);
	s->dtype = NR_ELEM_FP32;
	expect_invalid(s, "msg_size: 2 must be a multiple of 4");
	s->dtype = NR_ELEM_FP16;
	s->msg_size = 1024;
	s->reduce = NR_REDUCE_MAX;
	expect_invalid(s, "reduce: max of fp16 elements is not built");
	/* memory: a streaming 16-bit job holds FP32 accumulators, twice its payload */
	s->reduce = NR_REDUCE_SUM;
	s->mode = NR_SUM_STREAMING;
	{
		uint64_t m16 = nr_job_mem_bytes(s);

		s->dtype = NR_ELEM_FP32;
		assert_int_equal(m16 - nr_job_mem_bytes(s), (uint64_t)nr_job_pool_packets(s) * 2 * 1024);
		s->dtype = NR_ELEM_BF16;
		s->mode = NR_SUM_ORDERED;
		m16 = nr_job_mem_bytes(s);
		s->dtype = NR_ELEM_FP32;
		assert_int_equal(m16 - nr_job_mem_bytes(s), 2 * 1024);
	}
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sums),
		cmocka_unit_test(test_rounded_once),
		cmocka_unit_test(test_bad_len),
		cmocka_unit_test(test_validate),
	};

	seed = eng_seed("test_dtype");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
