/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scalar kernels of the 16-bit element types (bf16, fp16): the reference the
 * AVX-512 ones (agg_half_avx512.c) and the RTL match bit for bit.  The rule
 * (agg_sum.h): widen exactly, sum in FP32 in the order given with x86's NaN
 * rule, round once to nearest even.  Chunks of 16 elements mirror the
 * AVX-512 kernels, so an output aliasing a source is handled the same way.
 */
#include <stdbool.h>
#include <string.h>

#include "dataplane/engine/agg_half_ops.h"
#include "proto/nr_job.h"

#define CHUNK 16u	/* elements per chunk */

static inline float f32_of(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static inline uint32_t bits_of(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

float nr_bf16_widen(uint16_t h)
{
	return f32_of((uint32_t)h << 16);
}

float nr_fp16_widen(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1F, m = h & 0x3FF;
	int sh;

	if (e == 0x1F)          /* Inf, or NaN quieted with its payload */
		return f32_of(sign | 0x7F800000u | m << 13 | (m ? 0x00400000u : 0));
	if (e)
		return f32_of(sign | (e + 112) << 23 | m << 13);
	if (!m)
		return f32_of(sign);
	/* subnormal m * 2^-24: normalise so that bit 10 is the implicit one */
	sh = __builtin_clz(m) - 21;
	m <<= sh;
	return f32_of(sign | (uint32_t)(113 - sh) << 23 | (m & 0x3FF) << 13);
}

uint16_t nr_bf16_round(float f)
{
	uint32_t u = bits_of(f);

	if ((u & 0x7FFFFFFFu) > 0x7F800000u)    /* NaN: top bits, quieted */
		return (uint16_t)(u >> 16 | 0x40);
	return (uint16_t)((u + 0x7FFFu + (u >> 16 & 1)) >> 16);
}

uint16_t nr_fp16_round(float f)
{
	uint32_t u = bits_of(f), ax = u & 0x7FFFFFFFu;
	uint16_t sign = (uint16_t)(u >> 16 & 0x8000);
	uint32_t e, m, sh, q, rem, half;

	if (ax > 0x7F800000u)                   /* NaN: top 10 payload bits, quieted */
		return sign | 0x7E00 | (uint16_t)(ax >> 13 & 0x3FF);
	if (ax >= 0x477FF000u)                  /* 65520 and up (Inf too): Inf */
		return sign | 0x7C00;
	if (ax >= 0x38800000u) {                /* normal: rebias 127 -> 15, round 13 bits */
		uint32_t r = ax - 0x38000000u;

		return sign | (uint16_t)((r + 0xFFFu + (r >> 13 & 1)) >> 13);
	}
	if (ax <= 0x33000000u)                  /* at most 2^-25: ties to even, zero */
		return sign;
	/* subnormal result: the value in units of 2^-24, rounded to nearest even */
	e = ax >> 23;
	m = (ax & 0x7FFFFFu) | 0x800000u;
	sh = 126 - e;                           /* 14 .. 24 */
	q = m >> sh;
	rem = m & ((1u << sh) - 1);
	half = 1u << (sh - 1);
	if (rem > half || (rem == half && (q & 1)))
		q++;
	return sign | (uint16_t)q;
}

static inline float widen(uint16_t h, bool bf)
{
	return bf ? nr_bf16_widen(h) : nr_fp16_widen(h);
}

static inline uint16_t narrow(float f, bool bf)
{
	return bf ? nr_bf16_round(f) : nr_fp16_round(f);
}

/* a + b with a NaN a winning, quieted (agg_sum.h): the compiler may commute a + b */
static inline float add_first(float a, float b)
{
	uint32_t ab = bits_of(a);

	if ((ab & 0x7FFFFFFFu) > 0x7F800000u)
		return f32_of(ab | 0x00400000u);
	return a + b;
}

static inline __attribute__((always_inline)) void
sum_chunk(void *result, const void *const srcs[], unsigned n, void *const outs[],
	  unsigned nouts, size_t bo, uint32_t m, bool bf)
{
	uint16_t h[CHUNK];
	float acc[CHUNK];

	memcpy(h, (const uint8_t *)srcs[0] + bo, m * 2);
	for (uint32_t j = 0; j < m; j++)
		acc[j] = widen(h[j], bf);
	for (unsigned i = 1; i < n; i++) {
		memcpy(h, (const uint8_t *)srcs[i] + bo, m * 2);
		for (uint32_t j = 0; j < m; j++)
			acc[j] = add_first(acc[j], widen(h[j], bf));
	}
	for (uint32_t j = 0; j < m; j++)
		h[j] = narrow(acc[j], bf);
	if (result)
		memcpy((uint8_t *)result + bo, h, m * 2);
	for (unsigned k = 0; k < nouts; k++)
		memcpy((uint8_t *)outs[k] + bo, h, m * 2);
}

static inline __attribute__((always_inline)) void
sum_fanout(void *result, const void *const srcs[], unsigned n, void *const outs[],
	   unsigned nouts, uint32_t nbytes, bool bf)
{
	uint32_t nel = nbytes / 2, off = 0;

	for (; off + CHUNK <= nel; off += CHUNK)
		sum_chunk(result, srcs, n, outs, nouts, (size_t)off * 2, CHUNK, bf);
	if (off < nel)
		sum_chunk(result, srcs, n, outs, nouts, (size_t)off * 2, nel - off, bf);
}

static inline __attribute__((always_inline)) void
widen_add(float *acc, const void *src, uint32_t nbytes, bool bf, bool add)
{
	const uint8_t *s = src;

	for (uint32_t j = 0; j < nbytes / 2; j++) {
		uint16_t h;

		memcpy(&h, s + (size_t)j * 2, 2);
		acc[j] = add ? add_first(acc[j], widen(h, bf)) : widen(h, bf);
	}
}

static inline __attribute__((always_inline)) void
narrow_fanout(const float *acc, void *result, void *const outs[], unsigned nouts,
	      uint32_t nbytes, bool bf)
{
	for (uint32_t j = 0; j < nbytes / 2; j++) {
		uint16_t h = narrow(acc[j], bf);

		if (result)
			memcpy((uint8_t *)result + (size_t)j * 2, &h, 2);
		for (unsigned k = 0; k < nouts; k++)
			memcpy((uint8_t *)outs[k] + (size_t)j * 2, &h, 2);
	}
}

NR_HALF_OPS(scalar, bf16, true)
NR_HALF_OPS(scalar, fp16, false)
