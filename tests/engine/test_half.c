/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The 16-bit kernels (bf16, fp16; agg_sum.h), byte for byte:
 *   - the scalar rule against an independent oracle: every one of the 65536
 *     values widened (bf16: the bits shifted; fp16: GCC's _Float16 where the
 *     compiler has it, else the value computed in double), and rounding to
 *     nearest even checked against the exact distances in double for FP32
 *     patterns around every 16-bit value (the ties and their neighbours),
 *     the overflow boundary and a stride through all 2^32;
 *   - every kernel available here (AVX-512) bit-identical to the scalar one
 *     on the same patterns and on random sums (N 1..33, lengths 2..4096 step
 *     2, unaligned, outputs aliasing sources, NaN payloads, Inf, subnormals),
 *     in both modes: ordered (sum_fanout) and streaming (widen, add,
 *     narrow_fanout), which must agree when the order is the same;
 *   - a sum equals the reference: the widened values added in FP32 in rank
 *     order, rounded once;
 *   - accuracy: N = 4, 8, 16 ranks' random gradients (normal, and with a wide
 *     exponent range) summed by the box's kernel equal the rounded-once
 *     reference element by element, and their error against the exact sum
 *     (FP64), mean and maximum in units in the last place of the type at the
 *     sum's scale (sum of |x|: the ulp at the exact value itself is unbounded
 *     where the ranks' values cancel), is at most that of a 16-bit ring, which
 *     rounds at every hop (as the library's ring, NCCL's and Gloo's do); the
 *     table is printed (docs/16-bit.md).
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
#include "proto/nr_job.h"

#define MAXN  33
#define MAXB  4096
#define SLACK 80

static uint64_t seed;

static float f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static uint32_t bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static bool f32_nan(uint32_t u) { return (u & 0x7FFFFFFFu) > 0x7F800000u; }

/* The kernels to hold to the scalar ones: every variant this CPU runs. */
static const struct agg_sum_ops *variants[2];
static unsigned nvariants;

static void find_variants(void)
{
	nvariants = 0;
	variants[nvariants++] = agg_sum_get(NR_KERNEL_SCALAR);
	if (agg_sum_get(NR_KERNEL_AVX512))
		variants[nvariants++] = agg_sum_get(NR_KERNEL_AVX512);
}

/* ---- the oracle ---------------------------------------------------------- */

/* fp16 value of h in double (NaN aside), computed from the definition */
static double fp16_value(uint16_t h)
{
	int e = h >> 10 & 0x1F, m = h & 0x3FF;
	double v = e ? ldexp(1.0 + m / 1024.0, e - 15) : ldexp(m / 1024.0, -14);

	if (e == 0x1F)
		v = INFINITY;
	return h & 0x8000 ? -v : v;
}

/*
 * Round-to-nearest-even of finite or infinite f to the 16-bit type, by the
 * definition: the two neighbours of |f| among the type's magnitudes (the
 * largest finite magnitude's successor taken as its power of two, so that
 * overflow goes to Inf only past the halfway point), the nearer one, on a tie
 * the one with an even last bit.
 */
static uint16_t oracle_round(float f, bool bf)
{
	double x = fabs((double)f);
	uint16_t sign = bits(f) >> 31 ? 0x8000 : 0, lo = 0, hi = bf ? 0x7F80 : 0x7C00, mid;
	double vlo, vhi;

	if (isinf(f))
		return sign | hi;
	/* largest magnitude with value <= x, by bisection over the ordered codes */
	while (hi - lo > 1) {
		mid = (uint16_t)((lo + hi) / 2);
		if ((bf ? (double)f32((uint32_t)mid << 16) : fp16_value(mid)) <= x)
			lo = mid;
		else
			hi = mid;
	}
	vlo = bf ? (double)f32((uint32_t)lo << 16) : fp16_value(lo);
	vhi = bf ? (hi == 0x7F80 ? ldexp(1.0, 128) : (double)f32((uint32_t)hi << 16))
		 : (hi == 0x7C00 ? 65536.0 : fp16_value(hi));
	if (vlo == x)
		return sign | lo;
	if (x - vlo < vhi - x || (x - vlo == vhi - x && !(lo & 1)))
		return sign | lo;
	return sign | hi;
}

/* ---- one element at a time ------------------------------------------------ */

static void test_widen_every_value(void **state)
{
	(void)state;
	for (uint32_t v = 0; v < 65536; v++) {
		uint16_t h = (uint16_t)v;
		uint32_t b = bits(nr_bf16_widen(h)), f = bits(nr_fp16_widen(h));

		assert_int_equal(b, v << 16);
		if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF)) {     /* NaN: quieted, payload kept */
			assert_true(f32_nan(f));
			assert_int_equal(f >> 31, v >> 15);
			assert_int_equal(f & 0x7FE000u, ((v & 0x3FF) << 13) | 0x400000u);
			continue;
		}
#ifdef __FLT16_MAX__
		assert_int_equal(f, bits((float)*(const _Float16 *)&h));
#endif
		if (fp16_value(h) != (double)f32(f) && !(h == 0x8000 && f == 0x80000000u)) {
			fail_msg("fp16 0x%04x widened to 0x%08x (%a), expected %a", h, f, f32(f),
				 fp16_value(h));
		}
	}
}

static void check_round(uint32_t u)
{
	float f = f32(u);
	uint16_t b = nr_bf16_round(f), h = nr_fp16_round(f);

	if (f32_nan(u)) {
		assert_int_equal(b, (u >> 16) | 0x40);
		assert_int_equal(h & 0xFE00, ((u >> 16) & 0x8000) | 0x7E00);
		assert_int_equal(h & 0x3FF, ((u >> 13) & 0x3FF) | 0x200);
		return;
	}
	if (b != oracle_round(f, true))
		fail_msg("bf16 of 0x%08x (%a): 0x%04x, expected 0x%04x", u, f, b, oracle_round(f, true));
	if (h != oracle_round(f, false))
		fail_msg("fp16 of 0x%08x (%a): 0x%04x, expected 0x%04x", u, f, h, oracle_round(f, false));
#ifdef __FLT16_MAX__
	{
		_Float16 g = (_Float16)f;
		uint16_t gb;

		memcpy(&gb, &g, 2);
		assert_int_equal(h, gb);
	}
#endif
}

/* The FP32 patterns worth rounding: around every 16-bit value's ties, the
 * boundaries, and a stride through all of them (n at most cap). */
static uint32_t round_patterns(uint32_t *out, uint32_t cap)
{
	static const int32_t near[] = { -2, -1, 0, 1, 2 };
	uint32_t n = 0;

	for (uint32_t v = 0; v < 65536 && n + 32 < cap; v++) {
		uint32_t bf = v << 16;
		uint32_t fp = bits(nr_fp16_widen((uint16_t)v));

		for (unsigned k = 0; k < 5; k++) {
			out[n++] = bf + 0x8000u + (uint32_t)near[k];    /* bf16 ties */
			out[n++] = bf + (uint32_t)near[k];
			if ((v & 0x7C00) != 0x7C00) {
				out[n++] = fp + 0x1000u + (uint32_t)near[k];   /* fp16 normal ties */
				out[n++] = fp + (uint32_t)near[k];
			}
		}
	}
	for (uint32_t u = 0x33000000u - 4; u < 0x33000000u + 4 && n < cap; u++)
		out[n++] = u;           /* fp16's half of the smallest subnormal */
	for (uint64_t u = 0; u < (1ull << 32) && n < cap; u += 65521)
		out[n++] = (uint32_t)u;
	return n;
}

static void test_round_against_oracle(void **state)
{
	uint32_t cap = 65536 * 24, n;
	uint32_t *p = malloc(cap * sizeof(*p));

	(void)state;
	assert_non_null(p);
	n = round_patterns(p, cap);
	for (uint32_t k = 0; k < n; k++) {
		check_round(p[k]);
		check_round(p[k] | 0x80000000u);
	}
	printf("rounded %u FP32 patterns (and their negatives) against the oracle\n", n);
	free(p);
}

/* ---- the kernels, byte for byte ------------------------------------------ */

/* Every variant narrows the same patterns to the same bits. */
static void test_narrow_variants(void **state)
{
	uint32_t cap = 65536 * 24, n;
	uint32_t *p = malloc(cap * sizeof(*p));
	uint16_t *ref = malloc(cap * sizeof(*ref)), *got = malloc(cap * sizeof(*got) + 2);

	(void)state;
	assert_true(p && ref && got);
	n = round_patterns(p, cap);
	for (unsigned t = NR_ELEM_BF16; t <= NR_ELEM_FP16; t++) {
		for (uint32_t k = 0; k < n; k++)
			ref[k] = t == NR_ELEM_BF16 ? nr_bf16_round(f32(p[k])) : nr_fp16_round(f32(p[k]));
		for (unsigned v = 0; v < nvariants; v++) {
			uint16_t *dst = got + 1;   /* unaligned to 4 */
			void *outs[1] = { dst };

			memset(got, 0xA5, cap * sizeof(*got) + 2);
			agg_sum_half(variants[v], t)->narrow_fanout((const float *)p, NULL, outs, 1, n * 2);
			for (uint32_t k = 0; k < n; k++)
				if (dst[k] != ref[k])
					fail_msg("%s %s: 0x%08x narrowed to 0x%04x, scalar rule 0x%04x",
						 variants[v]->name, nr_elem_name(t), p[k], dst[k], ref[k]);
		}
	}
	free(p);
	free(ref);
	free(got);
}

/* Every variant widens every value to the same bits. */
static void test_widen_variants(void **state)
{
	uint16_t *h = malloc(65536 * 2 + 2);
	float *acc = aligned_alloc(64, 65536 * 4);

	(void)state;
	assert_true(h && acc);
	for (uint32_t v = 0; v < 65536; v++)
		h[v] = (uint16_t)v;
	for (unsigned t = NR_ELEM_BF16; t <= NR_ELEM_FP16; t++)
		for (unsigned v = 0; v < nvariants; v++) {
			agg_sum_half(variants[v], t)->widen(acc, h, 65536 * 2);
			for (uint32_t k = 0; k < 65536; k++) {
				float w = t == NR_ELEM_BF16 ? nr_bf16_widen((uint16_t)k)
							    : nr_fp16_widen((uint16_t)k);

				if (bits(acc[k]) != bits(w))
					fail_msg("%s %s: 0x%04x widened to 0x%08x, scalar rule 0x%08x",
						 variants[v]->name, nr_elem_name(t), k, bits(acc[k]),
						 bits(w));
			}
		}
	free(h);
	free(acc);
}

/* Random 16-bit values: mostly moderate normals, some Inf, NaN (any payload),
 * zeros and subnormals when specials. */
static uint16_t rand_half(struct eng_rng *r, unsigned t, bool specials)
{
	uint16_t sign = eng_rand(r) & 1 ? 0x8000 : 0;
	unsigned k = eng_rand(r) % 100;
	bool bf = t == NR_ELEM_BF16;
	uint16_t einf = bf ? 0x7F80 : 0x7C00, mmask = bf ? 0x7F : 0x3FF;

	if (specials) {
		if (k == 0)
			return sign | einf;
		if (k == 1)
			return sign | einf | (uint16_t)(1 + eng_rand(r) % mmask);   /* NaN */
		if (k < 5)
			return sign;
		if (k < 10)
			return sign | (uint16_t)(eng_rand(r) & mmask);              /* subnormal */
	}
	/* exponents around 1 so that sums keep their low bits */
	if (bf)
		return sign | (uint16_t)((120 + eng_rand(r) % 16) << 7) | (uint16_t)(eng_rand(r) & 0x7F);
	return sign | (uint16_t)((8 + eng_rand(r) % 14) << 10) | (uint16_t)(eng_rand(r) & 0x3FF);
}

/* The reference: widen, add in FP32 in rank order (acc first: agg_sum.h), round once. */
static void ref_sum(uint8_t *out, uint8_t *const src[], unsigned n, uint32_t nbytes, unsigned t)
{
	for (uint32_t b = 0; b < nbytes; b += 2) {
		uint16_t h;
		float a;

		memcpy(&h, src[0] + b, 2);
		a = t == NR_ELEM_BF16 ? nr_bf16_widen(h) : nr_fp16_widen(h);
		for (unsigned i = 1; i < n; i++) {
			float x;

			memcpy(&h, src[i] + b, 2);
			x = t == NR_ELEM_BF16 ? nr_bf16_widen(h) : nr_fp16_widen(h);
			a = f32_nan(bits(a)) ? f32(bits(a) | 0x00400000u) : a + x;
		}
		h = t == NR_ELEM_BF16 ? nr_bf16_round(a) : nr_fp16_round(a);
		memcpy(out + b, &h, 2);
	}
}

static void run_sum(struct eng_rng *r, unsigned t, unsigned n, uint32_t nbytes, bool specials)
{
	uint8_t *alloc[MAXN], *src[MAXN], *copy[MAXN];
	uint8_t ref[MAXB], res[MAXB + 2 * SLACK];
	float *acc = aligned_alloc(64, MAXB * 2);

	assert_non_null(acc);
	for (unsigned i = 0; i < n; i++) {
		alloc[i] = malloc(nbytes + 2 * SLACK);
		copy[i] = malloc(nbytes);
		src[i] = alloc[i] + SLACK / 2 + eng_rand(r) % 31 * 2 + 1;   /* odd: unaligned */
		for (uint32_t b = 0; b < nbytes; b += 2) {
			uint16_t h = rand_half(r, t, specials);

			memcpy(src[i] + b, &h, 2);
		}
		memcpy(copy[i], src[i], nbytes);
	}
	ref_sum(ref, src, n, nbytes, t);
	for (unsigned v = 0; v < nvariants; v++) {
		const struct agg_half_ops *h = agg_sum_half(variants[v], t);
		void *outs[MAXN];

		/* ordered, result apart and into every packet (outputs alias sources) */
		for (unsigned i = 0; i < n; i++) {
			memcpy(src[i], copy[i], nbytes);
			outs[i] = src[i];
		}
		memset(res, 0x5A, sizeof(res));
		h->sum_fanout(res + SLACK, (const void *const *)src, n, outs, n, nbytes);
		if (memcmp(res + SLACK, ref, nbytes))
			fail_msg("%s %s ordered: N=%u %u bytes differs from the reference",
				 variants[v]->name, nr_elem_name(t), n, nbytes);
		assert_int_equal(res[SLACK - 1], 0x5A);
		assert_int_equal(res[SLACK + nbytes], 0x5A);
		for (unsigned i = 0; i < n; i++)
			assert_memory_equal(src[i], ref, nbytes);
		/* streaming, same order: widen, add, narrow */
		for (unsigned i = 0; i < n; i++)
			memcpy(src[i], copy[i], nbytes);
		h->widen(acc, src[0], nbytes);
		for (unsigned i = 1; i < n; i++)
			h->add(acc, src[i], nbytes);
		memset(res, 0x5A, sizeof(res));
		h->narrow_fanout(acc, res + SLACK, outs, n, nbytes);
		if (memcmp(res + SLACK, ref, nbytes))
			fail_msg("%s %s streaming: N=%u %u bytes differs from the reference",
				 variants[v]->name, nr_elem_name(t), n, nbytes);
		assert_int_equal(res[SLACK + nbytes], 0x5A);
		for (unsigned i = 0; i < n; i++)
			assert_memory_equal(src[i], ref, nbytes);
	}
	for (unsigned i = 0; i < n; i++) {
		free(alloc[i]);
		free(copy[i]);
	}
	free(acc);
}

static void test_sums(void **state)
{
	struct eng_rng r;
	static const unsigned ns[] = { 1, 2, 3, 4, 7, 8, 16, 33 };

	(void)state;
	eng_rng_init(&r, seed);
	for (unsigned t = NR_ELEM_BF16; t <= NR_ELEM_FP16; t++)
		for (unsigned k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
			for (uint32_t nb = 2; nb <= 160; nb += 2)
				run_sum(&r, t, ns[k], nb, k % 2);
			run_sum(&r, t, ns[k], 1024, true);
			run_sum(&r, t, ns[k], 4094, false);
			run_sum(&r, t, ns[k], 4096, true);
		}
}

/* Sums that leave the 16-bit range: fp16 overflows to Inf, bf16 (FP32's
 * range) keeps them; Inf - Inf is the default NaN, rounded as a NaN. */
static void test_overflow(void **state)
{
	uint16_t a[16], b[16], out[16];
	const void *srcs[2] = { a, b };
	void *outs[1] = { out };

	(void)state;
	for (unsigned v = 0; v < nvariants; v++) {
		/* 65504 (fp16's largest) + 1 rounds back to it; + 16 is the tie with
		 * 65536, which goes to Inf (even); + 65504 is past it */
		static const uint16_t add[3] = { 0x3C00, 0x4C00, 0x7BFF }, want[3] = { 0x7BFF, 0x7C00, 0x7C00 };

		for (unsigned i = 0; i < 16; i++) {
			a[i] = 0x7BFF;
			b[i] = add[i % 3];
		}
		agg_sum_half(variants[v], NR_ELEM_FP16)->sum_fanout(NULL, srcs, 2, outs, 1, 32);
		for (unsigned i = 0; i < 16; i++)
			assert_int_equal(out[i], want[i % 3]);
		for (unsigned i = 0; i < 16; i++) {
			a[i] = 0x7C00;          /* +Inf */
			b[i] = 0xFC00;          /* -Inf */
		}
		agg_sum_half(variants[v], NR_ELEM_FP16)->sum_fanout(NULL, srcs, 2, outs, 1, 32);
		for (unsigned i = 0; i < 16; i++)
			assert_int_equal(out[i], 0xFE00);   /* x86's default NaN, narrowed */
		for (unsigned i = 0; i < 16; i++) {
			a[i] = 0x7F7F;          /* bf16's largest */
			b[i] = 0x7F7F;
		}
		agg_sum_half(variants[v], NR_ELEM_BF16)->sum_fanout(NULL, srcs, 2, outs, 1, 32);
		for (unsigned i = 0; i < 16; i++)
			assert_int_equal(out[i], 0x7F80);   /* twice the largest: Inf */
	}
}

/* standard normal (Box-Muller) */
static double gauss(struct eng_rng *r)
{
	double u = ((double)eng_rand(r) + 1.0) / 4294967297.0, v = (double)eng_rand(r) / 4294967296.0;

	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

/* ulps of type t at the magnitude x >= 0: its spacing there (subnormal spacing below) */
static double ulp16(unsigned t, double x)
{
	int e = x == 0 ? -1000 : ilogb(x);
	int emin = t == NR_ELEM_BF16 ? -126 : -14, mant = t == NR_ELEM_BF16 ? 7 : 10;

	return ldexp(1.0, (e < emin ? emin : e) - mant);
}

struct acc_row {
	double mean, max;
	uint64_t n;
};

static void acc_add(struct acc_row *a, double err)
{
	a->mean += err;
	a->max = err > a->max ? err : a->max;
	a->n++;
}

/*
 * One accuracy case: world ranks, nel elements; wide: exponents spread over
 * 2^-s..2^s.  The box's kernel (sum_fanout of every variant) against the
 * rounded-once reference, bit for bit; then both it and a 16-bit ring
 * (element k summed round the ring from the rank whose chunk holds it,
 * rounded at every hop) against the exact sum, in ulps.
 */
static void accuracy_case(unsigned t, unsigned world, bool wide, uint32_t nel,
			  struct acc_row *box, struct acc_row *ring)
{
	uint16_t *x = malloc((size_t)world * nel * 2), *res = malloc((size_t)nel * 2);
	const void *srcs[16];
	struct eng_rng r;
	int spread = t == NR_ELEM_BF16 ? 30 : 10;

	assert_true(x && res && world <= 16);
	eng_rng_init(&r, seed ^ (t * 131u + world * 7u + wide));
	for (size_t i = 0; i < (size_t)world * nel; i++) {
		double g = gauss(&r) * (t == NR_ELEM_FP16 ? 1.0 : 1e-3);

		if (wide)
			g = ldexp(g, (int)(eng_rand(&r) % (2 * spread + 1)) - spread);
		x[i] = t == NR_ELEM_BF16 ? nr_bf16_round((float)g) : nr_fp16_round((float)g);
	}
	for (unsigned k = 0; k < world; k++)
		srcs[k] = x + (size_t)k * nel;
	for (unsigned v = 0; v < nvariants; v++) {
		agg_sum_half(variants[v], t)->sum_fanout(res, srcs, world, NULL, 0, nel * 2);
		for (uint32_t e = 0; e < nel; e++) {
			float a = 0;
			uint16_t want;

			for (unsigned k = 0; k < world; k++) {
				float w = t == NR_ELEM_BF16 ? nr_bf16_widen(x[(size_t)k * nel + e])
							    : nr_fp16_widen(x[(size_t)k * nel + e]);

				a = k ? a + w : w;
			}
			want = t == NR_ELEM_BF16 ? nr_bf16_round(a) : nr_fp16_round(a);
			if (res[e] != want)
				fail_msg("%s %s N=%u element %u: 0x%04x, rounded-once reference 0x%04x",
					 variants[v]->name, nr_elem_name(t), world, e, res[e], want);
		}
	}
	for (uint32_t e = 0; e < nel; e++) {
		double exact = 0, scale = 0;
		uint32_t c = (uint32_t)((uint64_t)e * world / nel);   /* the ring chunk of e */
		uint16_t acc;
		float bw;

		for (unsigned k = 0; k < world; k++) {
			double v = t == NR_ELEM_BF16 ? nr_bf16_widen(x[(size_t)k * nel + e])
						     : nr_fp16_widen(x[(size_t)k * nel + e]);

			exact += v;
			scale += fabs(v);
		}
		acc = x[(size_t)c * nel + e];
		for (unsigned j = 1; j < world; j++) {
			uint16_t y = x[(size_t)((c + j) % world) * nel + e];

			acc = t == NR_ELEM_BF16 ? nr_bf16_round(nr_bf16_widen(acc) + nr_bf16_widen(y))
					       : nr_fp16_round(nr_fp16_widen(acc) + nr_fp16_widen(y));
		}
		bw = t == NR_ELEM_BF16 ? nr_bf16_widen(res[e]) : nr_fp16_widen(res[e]);
		if (!isfinite(bw) || !isfinite(exact))
			continue;
		acc_add(box, fabs((double)bw - exact) / ulp16(t, scale));
		acc_add(ring, fabs((double)(t == NR_ELEM_BF16 ? nr_bf16_widen(acc) : nr_fp16_widen(acc)) -
				   exact) / ulp16(t, scale));
	}
	free(x);
	free(res);
}

static void test_accuracy(void **state)
{
	static const unsigned worlds[] = { 4, 8, 16 };

	(void)state;
	printf("accuracy against the exact sum, ulps of the type at the sum's scale (sum of |x|), "
	       "mean / max, 65536 elements:\n");
	printf("  %-5s %-6s %3s  %-17s %-17s\n", "dtype", "data", "N", "box (rounded once)",
	       "ring (every hop)");
	for (unsigned t = NR_ELEM_BF16; t <= NR_ELEM_FP16; t++)
		for (int wide = 0; wide < 2; wide++)
			for (unsigned w = 0; w < 3; w++) {
				struct acc_row box = { 0 }, ring = { 0 };

				accuracy_case(t, worlds[w], wide, 65536, &box, &ring);
				box.mean /= (double)box.n;
				ring.mean /= (double)ring.n;
				printf("  %-5s %-6s %3u  %6.3f / %-8.2f %6.3f / %-8.2f\n", nr_elem_name(t),
				       wide ? "wide" : "normal", worlds[w], box.mean, box.max, ring.mean,
				       ring.max);
				assert_true(box.n > 65536 * 9 / 10);
				assert_true(box.mean <= ring.mean);
				assert_true(box.max <= ring.max);
			}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_widen_every_value),
		cmocka_unit_test(test_round_against_oracle),
		cmocka_unit_test(test_widen_variants),
		cmocka_unit_test(test_narrow_variants),
		cmocka_unit_test(test_sums),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_accuracy),
	};

	seed = eng_seed("test_half");
	find_variants();
	printf("16-bit kernels: scalar%s\n", nvariants > 1 ? ", avx512" :
	       " (avx512: not supported on this CPU, scalar only)");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
