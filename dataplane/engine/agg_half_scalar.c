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
#include "proto/nr_elem.h"

#define CHUNK 16u	/* elements per chunk */

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
	uint32_t ab = nr_bits_of_f32(a);

	if ((ab & 0x7FFFFFFFu) > 0x7F800000u)
		return nr_f32_of_bits(ab | 0x00400000u);
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
