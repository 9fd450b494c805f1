/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Drop-eligible packets by magnitude (host/collective/nr_magnitude.h): the
 * level from the buffer's RMS, and which packets of a message fall under it,
 * in FP32, bf16 and fp16; a NaN, an Inf, a zero threshold mark nothing.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "host/collective/nr_magnitude.h"
#include "proto/nr_elem.h"

#define MTU 256                 /* 64 floats, 128 halves a packet */

/* RMS of {3, 4} repeated: sqrt(12.5); the level thresh x that, whatever the path */
static void test_level(void **state)
{
	float x[1001];
	uint16_t b[1000], h[1000];

	(void)state;
	for (unsigned i = 0; i < 1000; i++) {
		x[i] = i % 2 ? 4.0f : 3.0f;
		b[i] = nr_bf16_round(x[i]);
		h[i] = nr_fp16_round(x[i]);
	}
	assert_float_equal(nr_de_level(x, 1000, NR_FLOAT32, 0.5), 0.5 * sqrt(12.5), 1e-5);
	/* unaligned: the element-by-element path */
	memmove((uint8_t *)x + 1, x, 999 * sizeof(float));
	assert_float_equal(nr_de_level((uint8_t *)x + 1, 999, NR_FLOAT32, 0.5),
			   0.5 * sqrt((500 * 9.0 + 499 * 16.0) / 999), 1e-5);
	assert_float_equal(nr_de_level(b, 1000, NR_BF16, 2), 2 * sqrt(12.5), 1e-5);
	assert_float_equal(nr_de_level(h, 1000, NR_FP16, 2), 2 * sqrt(12.5), 1e-5);
	assert_true(nr_de_level(x, 1000, NR_FLOAT32, 0) == 0);
	assert_true(nr_de_level(x, 0, NR_FLOAT32, 1) == 0);
	x[7] = INFINITY;
	assert_true(nr_de_level(x, 1000, NR_FLOAT32, 1) == 0);
	x[7] = NAN;
	assert_true(nr_de_level(x, 1000, NR_FLOAT32, 1) == 0);
}

/* packets 1, 3 and the short last one small, 0 and 2 each with one large element */
static void test_mark_f32(void **state)
{
	enum { NPKT = 5, PER = MTU / 4, N = 4 * PER + 10 };
	float x[N];
	uint64_t bits[2] = { ~0ull, ~0ull };

	(void)state;
	for (unsigned i = 0; i < N; i++)
		x[i] = (i % 3) ? 0.01f : -0.02f;
	x[5] = 1.0f;               /* packet 0 */
	x[2 * PER + PER - 1] = -1.0f;   /* packet 2, its last element */
	assert_int_equal(nr_de_mark(x, sizeof(x), MTU, NR_FLOAT32, 0.5f, bits), 3);
	assert_int_equal(bits[0], 1u << 1 | 1u << 3 | 1u << 4);
	assert_int_equal(bits[1], ~0ull);        /* one word for 5 packets: the next untouched */
	/* a NaN is never small; level 0 marks nothing */
	x[PER + 3] = NAN;
	assert_int_equal(nr_de_mark(x, sizeof(x), MTU, NR_FLOAT32, 0.5f, bits), 2);
	assert_int_equal(bits[0], 1u << 3 | 1u << 4);
	assert_int_equal(nr_de_mark(x, sizeof(x), MTU, NR_FLOAT32, 0, bits), 0);
	assert_int_equal(bits[0], 0);
	assert_int_equal(NPKT, (sizeof(x) + MTU - 1) / MTU);
}

/* 16-bit: read as their values (bf16 and fp16 of the same numbers mark alike) */
static void test_mark_half(void **state)
{
	enum { PER = MTU / 2, N = 3 * PER };
	uint16_t b[N], h[N];
	uint64_t bits;

	(void)state;
	for (unsigned i = 0; i < N; i++) {
		float v = i / PER == 1 ? 3.0f : 0.25f;    /* packet 1 large */

		b[i] = nr_bf16_round(i % 2 ? v : -v);
		h[i] = nr_fp16_round(i % 2 ? v : -v);
	}
	assert_int_equal(nr_de_mark(b, sizeof(b), MTU, NR_BF16, 1.0f, &bits), 2);
	assert_int_equal(bits, 0x5);
	assert_int_equal(nr_de_mark(h, sizeof(h), MTU, NR_FP16, 1.0f, &bits), 2);
	assert_int_equal(bits, 0x5);
	/* under a level below 0.25 nothing is small */
	assert_int_equal(nr_de_mark(h, sizeof(h), MTU, NR_FP16, 0.25f, &bits), 0);
}

/* more than 64 packets: the bits go on into the next word */
static void test_mark_words(void **state)
{
	enum { NPKT = 70, PER = MTU / 4 };
	static float x[NPKT * PER];
	uint64_t bits[2];

	(void)state;
	for (unsigned i = 0; i < NPKT * PER; i++)
		x[i] = (i / PER) % 2 ? 5.0f : 0.1f;    /* the even packets small */
	assert_int_equal(nr_de_mark(x, sizeof(x), MTU, NR_FLOAT32, 1.0f, bits), NPKT / 2);
	assert_int_equal(bits[0], 0x5555555555555555ull);
	assert_int_equal(bits[1], 0x15);          /* packets 64, 66, 68 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_level),
		cmocka_unit_test(test_mark_f32),
		cmocka_unit_test(test_mark_half),
		cmocka_unit_test(test_mark_words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
