/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sum, max and bor kernels, byte for byte (DPDK test_crc.c crc_all_algs style): one set of
 * vectors (random floats with NaN, Inf, denormals and -0; lengths 4..4096 step
 * 4; N 1..33; unaligned pointers; outputs aliasing sources) runs through every
 * kernel available here and must equal the scalar kernel and a plain C
 * rank-ordered reference exactly.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dataplane/engine/agg_sum.h"
#include "eng_rand.h"

#define MAXN    33
#define MAXB    4096
#define SLACK   80   /* guard bytes around every buffer */

static uint64_t seed;

/*
 * Random float bits: normal, denormal, +-0, +-Inf, NaN.  When two NaNs with
 * different payloads meet, IEEE 754 leaves open which one survives and the
 * compiler may commute an add, so exact vectors use the one NaN x86 itself
 * produces (0xFFC00000, e.g. from Inf - Inf); other payloads (positive qNaN,
 * signalling NaN) go through a second pass that checks NaN positions only.
 */
static bool odd_nans;

static uint32_t rand_float_bits(struct eng_rng *r, bool specials)
{
	uint32_t k = eng_rand(r) % 100;
	uint32_t sign = (eng_rand(r) & 1) << 31;

	if (specials) {
		if (k == 0)
			return sign | 0x7F800000u;          /* Inf */
		if (k == 1 && odd_nans)
			return eng_rand(r) & 1 ? 0x7FC00000u : 0x7F800001u; /* qNaN, sNaN */
		if (k == 1)
			return 0xFFC00000u;                 /* x86 default NaN */
		if (k < 5)
			return sign;                        /* +-0 */
		if (k < 10)
			return sign | (eng_rand(r) & 0x7FFFFFu); /* denormal */
	}
	/* normal with a moderate exponent so sums keep low bits */
	return sign | ((100 + eng_rand(r) % 56) << 23) | (eng_rand(r) & 0x7FFFFFu);
}

struct vec {
	uint8_t *src[MAXN];     /* unaligned inside their allocation */
	uint8_t *alloc[MAXN];
};

static void vec_fill(struct eng_rng *r, struct vec *v, unsigned n, uint32_t nbytes, bool sp)
{
	for (unsigned i = 0; i < n; i++) {
		unsigned mis = eng_rand(r) % 64;

		v->alloc[i] = malloc(nbytes + SLACK * 2);
		memset(v->alloc[i], 0xA5, nbytes + SLACK * 2);
		v->src[i] = v->alloc[i] + SLACK / 2 + mis % 31 + 1;
		for (uint32_t b = 0; b < nbytes; b += 4) {
			uint32_t w = rand_float_bits(r, sp);
			memcpy(v->src[i] + b, &w, 4);
		}
	}
}

static void vec_free(struct vec *v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		free(v->alloc[i]);
}

static void ref_sum(uint8_t *out, uint8_t *const src[], unsigned n, uint32_t nbytes)
{
	for (uint32_t b = 0; b < nbytes; b += 4) {
		float a, x;

		memcpy(&a, src[0] + b, 4);
		for (unsigned i = 1; i < n; i++) {
			memcpy(&x, src[i] + b, 4);
			a = a + x;
		}
		memcpy(out + b, &a, 4);
	}
}

/* max in rank order, agg_sum.h's rule, on the bits: m = (x > m) ? x : m */
static void ref_max(uint8_t *out, uint8_t *const src[], unsigned n, uint32_t nbytes)
{
	for (uint32_t b = 0; b < nbytes; b += 4) {
		uint32_t mb, xb;
		float m, x;

		memcpy(&mb, src[0] + b, 4);
		for (unsigned i = 1; i < n; i++) {
			memcpy(&xb, src[i] + b, 4);
			memcpy(&m, &mb, 4);
			memcpy(&x, &xb, 4);
			if (x > m)
				mb = xb;
		}
		memcpy(out + b, &mb, 4);
	}
}

static void check_guard(const uint8_t *alloc, const uint8_t *p, uint32_t nbytes, size_t total)
{
	for (const uint8_t *q = alloc; q < p; q++)
		assert_int_equal(*q, 0xA5);
	for (const uint8_t *q = p + nbytes; q < alloc + total; q++)
		assert_int_equal(*q, 0xA5);
}

static bool is_nan_bits(uint32_t x)
{
	return (x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFFu);
}

/*
 * nan_any: the plain C reference may pick the other NaN when two NaNs with
 * different payloads meet (IEEE leaves it open and the compiler may commute
 * the operands); kernels are compared with each other bit for bit.
 */
static void cmp_bytes(const uint8_t *a, const uint8_t *b, uint32_t n, bool nan_any,
		      const char *what, const char *k, unsigned nn, uint32_t nbytes)
{
	if (memcmp(a, b, n) == 0)
		return;
	for (uint32_t i = 0; i < n; i += 4) {
		uint32_t x, y;

		memcpy(&x, a + i, 4);
		memcpy(&y, b + i, 4);
		if (x != y && !(nan_any && is_nan_bits(x) && is_nan_bits(y))) {
			print_error("%s: kernel %s, N=%u, %u bytes: float %u is 0x%08x, expected 0x%08x\n",
				    what, k, nn, nbytes, i / 4, x, y);
			fail();
		}
	}
}

/* in run_kernel: exact against the scalar kernel, NaN-tolerant against plain C */
#define bytes_equal(a, b, n, what, k, nn, nb) cmp_bytes(a, b, n, nan_any, what, k, nn, nb)

/* One vector through one kernel: sum_fanout (separate outs, and in place),
 * add, copy_fanout, max_fanout, max. */
static void run_kernel(const struct agg_sum_ops *k, struct eng_rng *r, unsigned n,
		       uint32_t nbytes, bool sp)
{
	struct vec v;
	uint8_t ref[MAXB], *res_alloc, *res, *outs_alloc[MAXN];
	void *outs[MAXN];
	const void *srcs[MAXN];
	size_t total = nbytes + SLACK * 2;
	bool nan_any = k == &agg_sum_scalar_ops || odd_nans;

	vec_fill(r, &v, n, nbytes, sp);
	ref_sum(ref, v.src, n, nbytes);
	res_alloc = malloc(total);
	memset(res_alloc, 0xA5, total);
	res = res_alloc + SLACK / 2 + 3;
	for (unsigned i = 0; i < n; i++) {
		srcs[i] = v.src[i];
		outs_alloc[i] = malloc(total);
		memset(outs_alloc[i], 0xA5, total);
		outs[i] = outs_alloc[i] + SLACK / 2 + (i * 7) % 61;
	}
	/* the scalar kernel is the bit-exact reference for every other kernel */
	if (k != &agg_sum_scalar_ops) {
		uint8_t sref[MAXB];

		agg_sum_scalar_ops.sum_fanout(sref, srcs, n, NULL, 0, nbytes);
		cmp_bytes(sref, ref, nbytes, true, "scalar vs C", "scalar", n, nbytes);
		memcpy(ref, sref, nbytes);
	}
	/* separate outputs */
	k->sum_fanout(res, srcs, n, outs, n, nbytes);
	bytes_equal(res, ref, nbytes, "sum_fanout result", k->name, n, nbytes);
	check_guard(res_alloc, res, nbytes, total);
	for (unsigned i = 0; i < n; i++) {
		bytes_equal(outs[i], ref, nbytes, "sum_fanout out", k->name, n, nbytes);
		check_guard(outs_alloc[i], outs[i], nbytes, total);
	}
	/* copy_fanout from the result into fresh outputs */
	for (unsigned i = 0; i < n; i++)
		memset(outs[i], 0, nbytes);
	k->copy_fanout(res, outs, n, nbytes);
	for (unsigned i = 0; i < n; i++) {
		bytes_equal(outs[i], ref, nbytes, "copy_fanout", k->name, n, nbytes);
		check_guard(outs_alloc[i], outs[i], nbytes, total);
	}
	/* add: streaming accumulation in rank order gives the same bits */
	memcpy(res, v.src[0], nbytes);
	for (unsigned i = 1; i < n; i++)
		k->add(res, v.src[i], nbytes);
	bytes_equal(res, ref, nbytes, "add chain", k->name, n, nbytes);
	check_guard(res_alloc, res, nbytes, total);
	/* max (jobs of reduce max): a select, so the bits are exact against plain C,
	 * NaN payloads included; then the streaming form */
	{
		uint8_t mref[MAXB];

		ref_max(mref, v.src, n, nbytes);
		k->max_fanout(res, srcs, n, outs, n, nbytes);
		cmp_bytes(res, mref, nbytes, false, "max_fanout result", k->name, n, nbytes);
		check_guard(res_alloc, res, nbytes, total);
		for (unsigned i = 0; i < n; i++) {
			cmp_bytes(outs[i], mref, nbytes, false, "max_fanout out", k->name, n, nbytes);
			check_guard(outs_alloc[i], outs[i], nbytes, total);
		}
		memcpy(res, v.src[0], nbytes);
		for (unsigned i = 1; i < n; i++)
			k->max(res, v.src[i], nbytes);
		cmp_bytes(res, mref, nbytes, false, "max chain", k->name, n, nbytes);
		check_guard(res_alloc, res, nbytes, total);
	}
	/* in place: outputs are the sources (the engine's ordered mode) */
	for (unsigned i = 0; i < n; i++)
		outs[i] = v.src[i];
	k->sum_fanout(NULL, srcs, n, outs, n, nbytes);
	for (unsigned i = 0; i < n; i++) {
		bytes_equal(v.src[i], ref, nbytes, "sum_fanout in place", k->name, n, nbytes);
		check_guard(v.alloc[i], v.src[i], nbytes, total);
	}
	for (unsigned i = 0; i < n; i++)
		free(outs_alloc[i]);
	free(res_alloc);
	vec_free(&v, n);
}

/* bor in rank order on the words' bits: o = s0 | s1 | ... */
static void ref_bor(uint8_t *out, uint8_t *const src[], unsigned n, uint32_t nbytes)
{
	for (uint32_t b = 0; b < nbytes; b += 4) {
		uint32_t o, x;

		memcpy(&o, src[0] + b, 4);
		for (unsigned i = 1; i < n; i++) {
			memcpy(&x, src[i] + b, 4);
			o |= x;
		}
		memcpy(out + b, &o, 4);
	}
}

/* Words that a float path would change or that must come back as they are:
 * -0.0, signalling and quiet NaNs of both signs, Inf, a denormal. */
static const uint32_t bor_words[] = {
	0x80000000u, 0x7F800001u, 0xFF800001u, 0x7FBFFFFFu, 0x7FC00000u,
	0xFFC00000u, 0x7F800000u, 0x00000001u, 0xFFFFFFFFu,
};

/*
 * bor (jobs of reduce bor) through one kernel: random bytes (a fifth of the
 * words zero, some of bor_words), against plain C bit for bit: bor_fanout into
 * separate outputs and a result, in place (the outputs are the sources, no
 * result), and the streaming chain acc |= src, acc aliasing a source too;
 * nothing outside [p, p + nbytes) touched.
 */
static void run_bor(const struct agg_sum_ops *k, struct eng_rng *r, unsigned n, uint32_t nbytes)
{
	struct vec v;
	uint8_t ref[MAXB], *res_alloc, *res, *outs_alloc[MAXN];
	void *outs[MAXN];
	const void *srcs[MAXN];
	size_t total = nbytes + SLACK * 2;

	vec_fill(r, &v, n, nbytes, false);
	for (unsigned i = 0; i < n; i++)
		for (uint32_t b = 0; b < nbytes; b += 4) {
			uint32_t c = eng_rand(r) % 10, w = eng_rand(r);

			if (c < 2)
				w = 0;
			else if (c < 4)
				w = bor_words[eng_rand(r) % (sizeof(bor_words) / 4)];
			memcpy(v.src[i] + b, &w, 4);
		}
	ref_bor(ref, v.src, n, nbytes);
	res_alloc = malloc(total);
	memset(res_alloc, 0xA5, total);
	res = res_alloc + SLACK / 2 + 1 + eng_rand(r) % 7;
	for (unsigned i = 0; i < n; i++) {
		srcs[i] = v.src[i];
		outs_alloc[i] = malloc(total);
		memset(outs_alloc[i], 0xA5, total);
		outs[i] = outs_alloc[i] + SLACK / 2 + (i * 7) % 61;
	}
	k->bor_fanout(res, srcs, n, outs, n, nbytes);
	cmp_bytes(res, ref, nbytes, false, "bor_fanout result", k->name, n, nbytes);
	check_guard(res_alloc, res, nbytes, total);
	for (unsigned i = 0; i < n; i++) {
		cmp_bytes(outs[i], ref, nbytes, false, "bor_fanout out", k->name, n, nbytes);
		check_guard(outs_alloc[i], outs[i], nbytes, total);
	}
	memcpy(res, v.src[0], nbytes);
	for (unsigned i = 1; i < n; i++)
		k->bor(res, v.src[i], nbytes);
	cmp_bytes(res, ref, nbytes, false, "bor chain", k->name, n, nbytes);
	check_guard(res_alloc, res, nbytes, total);
	k->bor(res, res, nbytes); /* acc | acc = acc */
	cmp_bytes(res, ref, nbytes, false, "bor acc aliasing src", k->name, n, nbytes);
	/* in place: outputs are the sources (the engine's ordered mode) */
	for (unsigned i = 0; i < n; i++)
		outs[i] = v.src[i];
	k->bor_fanout(NULL, srcs, n, outs, n, nbytes);
	for (unsigned i = 0; i < n; i++) {
		cmp_bytes(v.src[i], ref, nbytes, false, "bor_fanout in place", k->name, n, nbytes);
		check_guard(v.alloc[i], v.src[i], nbytes, total);
	}
	for (unsigned i = 0; i < n; i++)
		free(outs_alloc[i]);
	free(res_alloc);
	vec_free(&v, n);
}

static void run_all_lengths(const struct agg_sum_ops *k)
{
	struct eng_rng r;

	eng_rng_init(&r, seed);
	for (uint32_t nbytes = 4; nbytes <= MAXB; nbytes += 4) {
		unsigned n = 1 + eng_rand(&r) % MAXN;
		run_kernel(k, &r, n, nbytes, eng_rand(&r) % 4 != 0);
		run_bor(k, &r, 1 + eng_rand(&r) % MAXN, nbytes);
	}
	for (unsigned n = 1; n <= MAXN; n++) {
		run_kernel(k, &r, n, 4 * (1 + eng_rand(&r) % 1024), true);
		run_kernel(k, &r, n, 1024, true);
		run_bor(k, &r, n, 4 * (1 + eng_rand(&r) % 1024));
	}
	/* zero bytes: nothing read or written */
	run_kernel(k, &r, 3, 0, true);
	run_bor(k, &r, 3, 0);
}

static void test_scalar_vs_reference(void **state)
{
	(void)state;
	run_all_lengths(&agg_sum_scalar_ops);
}

static void test_avx512_vs_reference(void **state)
{
	(void)state;
	if (!agg_sum_avx512_supported()) {
		printf("avx512: not supported on this CPU, scalar only\n");
		skip();
	}
	run_all_lengths(agg_sum_get(NR_KERNEL_AVX512));
}

/* Other NaN payloads: NaN wherever the reference has NaN, all else exact. */
static void test_odd_nans(void **state)
{
	const struct agg_sum_ops *ks[2] = { &agg_sum_scalar_ops, agg_sum_get(NR_KERNEL_AVX512) };
	struct eng_rng r;

	(void)state;
	odd_nans = true;
	eng_rng_init(&r, seed + 1);
	for (unsigned t = 0; t < 2; t++)
		for (unsigned it = 0; ks[t] && it < 200; it++)
			run_kernel(ks[t], &r, 1 + eng_rand(&r) % MAXN, 4 * (1 + eng_rand(&r) % 1024),
				   true);
	odd_nans = false;
}

static void test_ieee_specials(void **state)
{
	const struct agg_sum_ops *ks[2] = { &agg_sum_scalar_ops, agg_sum_get(NR_KERNEL_AVX512) };
	float a[20], b[20], c[20], out[20];
	const void *srcs[3] = { a, b, c };
	void *outs[1] = { out };

	(void)state;
	for (unsigned t = 0; t < 2; t++) {
		if (!ks[t])
			continue;
		for (int i = 0; i < 20; i++)
			a[i] = b[i] = c[i] = 1.0f;
		a[0] = INFINITY; b[0] = 1.0f;               /* inf + 1 = inf */
		a[1] = INFINITY; b[1] = -INFINITY;          /* inf - inf = NaN */
		a[2] = NAN;                                  /* NaN propagates */
		a[3] = -0.0f; b[3] = -0.0f; c[3] = -0.0f;    /* -0 + -0 = -0 */
		a[4] = 3.4e38f; b[4] = 3.4e38f;              /* overflow to inf */
		a[5] = 1e-45f; b[5] = 1e-45f; c[5] = 0.0f;   /* denormals add */
		a[19] = 16777216.0f; b[19] = 1.0f; c[19] = 1.0f; /* rounding in order */
		ks[t]->sum_fanout(NULL, srcs, 3, outs, 1, sizeof(out));
		assert_true(isinf(out[0]) && out[0] > 0);
		assert_true(isnan(out[1]));
		assert_true(isnan(out[2]));
		assert_true(out[3] == 0.0f && signbit(out[3]));
		assert_true(isinf(out[4]));
		{
			uint32_t bits5;
			memcpy(&bits5, &out[5], 4);
			assert_int_equal(bits5, 2);   /* 1 + 1 denormal units */
		}
		assert_true(out[19] == 16777216.0f);      /* (2^24 + 1) + 1 in order */
		assert_true(out[10] == 3.0f);
	}
}

/*
 * x86's own single-precision add with a pinned operand order (addss
 * destination = a): when a is NaN the result is a quieted, else when b is
 * NaN b quieted, and an invalid operation (Inf - Inf) gives the default NaN
 * 0xFFC00000.  The kernels' element add is acc = acc + src[i]; this is what
 * the FPGA's adder (dataplane/rtl/nr_fp32_add.v) implements too.
 */
static uint32_t x86_add_bits(uint32_t ab, uint32_t bb)
{
	float a, b;

	memcpy(&a, &ab, 4);
	memcpy(&b, &bb, 4);
#if defined(__x86_64__) || defined(__i386__)
	__asm__("addss %1, %0" : "+x"(a) : "x"(b));
#else
	a = a + b;
#endif
	memcpy(&ab, &a, 4);
	return ab;
}

/* One value of every class: zeros, subnormals, normals, the largest finite,
 * infinities, quiet and signalling NaNs with several payloads, both signs. */
static const uint32_t special_class[] = {
	0x00000000u, 0x80000000u,                           /* +-0 */
	0x00000001u, 0x80000001u, 0x007FFFFFu, 0x807FFFFFu, /* smallest, largest subnormal */
	0x00400000u, 0x80000003u,
	0x00800000u, 0x80800000u, 0x00800001u,              /* smallest normals */
	0x3F800000u, 0xBF800000u, 0x3F800001u, 0x4B800000u, /* 1, -1, 1+ulp, 2^24 */
	0xB3800000u, 0x33FFFFFFu, 0x34000000u,              /* around half an ulp of 1 */
	0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F000000u,              /* largest finite, 2^127 */
	0x7F800000u, 0xFF800000u,                           /* +-Inf */
	0x7FC00000u, 0xFFC00000u, 0x7FC00001u, 0xFFFFFFFFu, /* quiet NaNs */
	0x7F800001u, 0xFF800001u, 0x7FBFFFFFu,              /* signalling NaNs */
};
#define NSPECIAL (sizeof(special_class) / sizeof(special_class[0]))

/*
 * Every ordered pair and every triple of special classes through both
 * kernels (N = 2 and 3, rank order): identical bits, NaN payloads included,
 * and equal to x86's add applied in rank order.  This is the reference the
 * FPGA adder is held to.
 */
static void test_special_classes(void **state)
{
	const struct agg_sum_ops *ks[2] = { &agg_sum_scalar_ops, agg_sum_get(NR_KERNEL_AVX512) };
	enum { M = NSPECIAL * NSPECIAL * NSPECIAL };
	uint32_t *a = malloc(M * 4), *b = malloc(M * 4), *c = malloc(M * 4);
	uint32_t *want2 = malloc(M * 4), *want3 = malloc(M * 4), *out = malloc(M * 4);
	unsigned m = 0;

	(void)state;
	for (unsigned i = 0; i < NSPECIAL; i++)
		for (unsigned j = 0; j < NSPECIAL; j++)
			for (unsigned k = 0; k < NSPECIAL; k++, m++) {
				a[m] = special_class[i];
				b[m] = special_class[j];
				c[m] = special_class[k];
				want2[m] = x86_add_bits(a[m], b[m]);
				want3[m] = x86_add_bits(want2[m], c[m]);
			}
	for (unsigned t = 0; t < 2; t++) {
		const void *srcs[3] = { a, b, c };
		void *outs[1] = { out };

		if (!ks[t])
			continue;
		for (unsigned n = 2; n <= 3; n++) {
			const uint32_t *want = n == 2 ? want2 : want3;

			ks[t]->sum_fanout(NULL, srcs, n, outs, 1, M * 4);
			for (unsigned q = 0; q < M; q++)
				if (out[q] != want[q]) {
					print_error("kernel %s, N=%u: 0x%08x + 0x%08x%s0x%08x = 0x%08x, x86 addss gives 0x%08x\n",
						    ks[t]->name, n, a[q], b[q], n == 3 ? " + " : "",
						    n == 3 ? c[q] : 0, out[q], want[q]);
					fail();
				}
			memcpy(out, a, M * 4);
			for (unsigned i = 1; i < n; i++)
				ks[t]->add(out, srcs[i], M * 4);
			for (unsigned q = 0; q < M; q++)
				if (out[q] != want[q]) {
					print_error("kernel %s add chain, N=%u: 0x%08x + 0x%08x%s0x%08x = 0x%08x, x86 addss gives 0x%08x\n",
						    ks[t]->name, n, a[q], b[q], n == 3 ? " + " : "",
						    n == 3 ? c[q] : 0, out[q], want[q]);
					fail();
				}
		}
	}
	free(a);
	free(b);
	free(c);
	free(want2);
	free(want3);
	free(out);
}

static void test_selection(void **state)
{
	(void)state;
	assert_non_null(agg_sum_get(NR_KERNEL_SCALAR));
	assert_string_equal(agg_sum_get(NR_KERNEL_SCALAR)->name, "scalar");
	assert_non_null(agg_sum_best());
	if (agg_sum_avx512_supported())
		assert_string_equal(agg_sum_get(NR_KERNEL_AVX512)->name, "avx512");
	else
		assert_null(agg_sum_get(NR_KERNEL_AVX512));
	setenv("NR_SUM_KERNEL", "scalar", 1);
	assert_string_equal(agg_sum_best()->name, "scalar");
	unsetenv("NR_SUM_KERNEL");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scalar_vs_reference),
		cmocka_unit_test(test_avx512_vs_reference),
		cmocka_unit_test(test_odd_nans),
		cmocka_unit_test(test_ieee_specials),
		cmocka_unit_test(test_special_classes),
		cmocka_unit_test(test_selection),
	};

	seed = eng_seed("test_sum");
	printf("kernels: scalar%s\n", agg_sum_avx512_supported() ? ", avx512" :
	       " (avx512: not supported on this CPU, scalar only)");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
