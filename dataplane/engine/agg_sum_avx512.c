/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AVX-512 FP32 reduce kernels (sum, max and bor).  This is the only file built with AVX-512 flags
 * (its own static library, see dataplane/meson.build); it is called only after
 * agg_sum_avx512_supported() said yes.  Unaligned loads and stores throughout,
 * tails with masks, four 64-byte chunks in flight to hide the add latency.
 * Same operand order as agg_sum_scalar.c, so results are bit-identical.
 */
#include <immintrin.h>
#include <stdbool.h>

#include "dataplane/engine/agg_sum.h"

static inline __mmask16 tail_mask(uint32_t nfl)
{
	return nfl >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nfl) - 1);
}

enum red_op { RED_SUM, RED_MAX, RED_BOR };

/* acc + x; with max (x > acc) ? x : acc as a compare and a select; with bor
 * acc | x on the lanes' bits (an integer OR: loads, stores and the OR move
 * bits, nothing is quieted) */
static inline __attribute__((always_inline)) __m512 red(__m512 acc, __m512 x, enum red_op op)
{
	if (op == RED_BOR)
		return _mm512_castsi512_ps(
			_mm512_or_si512(_mm512_castps_si512(acc), _mm512_castps_si512(x)));
	return op == RED_MAX ? _mm512_mask_mov_ps(acc, _mm512_cmp_ps_mask(x, acc, _CMP_GT_OQ), x)
			     : _mm512_add_ps(acc, x);
}

static inline __attribute__((always_inline)) void reduce_fanout(void *result,
								const void *const srcs[], unsigned n,
								void *const outs[], unsigned nouts,
								uint32_t nbytes, enum red_op op)
{
	uint32_t nfl = nbytes / 4, off = 0;

	for (; off + 64 <= nfl; off += 64) {
		const float *s = (const float *)srcs[0] + off;
		__m512 a0 = _mm512_loadu_ps(s), a1 = _mm512_loadu_ps(s + 16);
		__m512 a2 = _mm512_loadu_ps(s + 32), a3 = _mm512_loadu_ps(s + 48);

		for (unsigned i = 1; i < n; i++) {
			s = (const float *)srcs[i] + off;
			a0 = red(a0, _mm512_loadu_ps(s), op);
			a1 = red(a1, _mm512_loadu_ps(s + 16), op);
			a2 = red(a2, _mm512_loadu_ps(s + 32), op);
			a3 = red(a3, _mm512_loadu_ps(s + 48), op);
		}
		if (result) {
			float *d = (float *)result + off;
			_mm512_storeu_ps(d, a0);
			_mm512_storeu_ps(d + 16, a1);
			_mm512_storeu_ps(d + 32, a2);
			_mm512_storeu_ps(d + 48, a3);
		}
		for (unsigned k = 0; k < nouts; k++) {
			float *d = (float *)outs[k] + off;
			_mm512_storeu_ps(d, a0);
			_mm512_storeu_ps(d + 16, a1);
			_mm512_storeu_ps(d + 32, a2);
			_mm512_storeu_ps(d + 48, a3);
		}
	}
	for (; off < nfl; off += 16) {
		__mmask16 m = tail_mask(nfl - off);
		__m512 a = _mm512_maskz_loadu_ps(m, (const float *)srcs[0] + off);

		for (unsigned i = 1; i < n; i++)
			a = red(a, _mm512_maskz_loadu_ps(m, (const float *)srcs[i] + off), op);
		if (result)
			_mm512_mask_storeu_ps((float *)result + off, m, a);
		for (unsigned k = 0; k < nouts; k++)
			_mm512_mask_storeu_ps((float *)outs[k] + off, m, a);
	}
}

static void avx512_sum_fanout(void *result, const void *const srcs[], unsigned n,
			      void *const outs[], unsigned nouts, uint32_t nbytes)
{
	reduce_fanout(result, srcs, n, outs, nouts, nbytes, RED_SUM);
}

static void avx512_max_fanout(void *result, const void *const srcs[], unsigned n,
			      void *const outs[], unsigned nouts, uint32_t nbytes)
{
	reduce_fanout(result, srcs, n, outs, nouts, nbytes, RED_MAX);
}

static void avx512_bor_fanout(void *result, const void *const srcs[], unsigned n,
			      void *const outs[], unsigned nouts, uint32_t nbytes)
{
	reduce_fanout(result, srcs, n, outs, nouts, nbytes, RED_BOR);
}

static void avx512_max(void *acc, const void *src, uint32_t nbytes)
{
	uint32_t nfl = nbytes / 4;
	float *a = acc;
	const float *s = src;

	for (uint32_t off = 0; off < nfl; off += 16) {
		__mmask16 m = tail_mask(nfl - off);

		_mm512_mask_storeu_ps(a + off, m,
				      red(_mm512_maskz_loadu_ps(m, a + off),
					  _mm512_maskz_loadu_ps(m, s + off), RED_MAX));
	}
}

/* acc |= src: 32-bit lanes, masked tail */
static void avx512_bor(void *acc, const void *src, uint32_t nbytes)
{
	uint32_t nw = nbytes / 4;
	int *a = acc;
	const int *s = src;

	for (uint32_t off = 0; off < nw; off += 16) {
		__mmask16 m = tail_mask(nw - off);
		__m512i v = _mm512_or_si512(_mm512_maskz_loadu_epi32(m, a + off),
					    _mm512_maskz_loadu_epi32(m, s + off));

		_mm512_mask_storeu_epi32(a + off, m, v);
	}
}

/*
 * acc + src with the NaN rule of agg_sum.h pinned: the compiler folds a
 * memory operand into the add's second source, which can make acc the second
 * operand (src's NaN would then win); lanes where acc is NaN take acc,
 * quieted, as x86 gives for acc first.
 */
static inline __m512 add_acc_first(__m512 a, __m512 s)
{
	__mmask16 nan = _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q);
	__m512i q = _mm512_or_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x00400000));

	return _mm512_mask_mov_ps(_mm512_add_ps(a, s), nan, _mm512_castsi512_ps(q));
}

static void avx512_add(void *acc, const void *src, uint32_t nbytes)
{
	uint32_t nfl = nbytes / 4, off = 0;
	float *a = acc;
	const float *s = src;

	for (; off + 32 <= nfl; off += 32) {
		__m512 a0 = add_acc_first(_mm512_loadu_ps(a + off), _mm512_loadu_ps(s + off));
		__m512 a1 = add_acc_first(_mm512_loadu_ps(a + off + 16),
					  _mm512_loadu_ps(s + off + 16));
		_mm512_storeu_ps(a + off, a0);
		_mm512_storeu_ps(a + off + 16, a1);
	}
	for (; off < nfl; off += 16) {
		__mmask16 m = tail_mask(nfl - off);
		__m512 v = add_acc_first(_mm512_maskz_loadu_ps(m, a + off),
					 _mm512_maskz_loadu_ps(m, s + off));
		_mm512_mask_storeu_ps(a + off, m, v);
	}
}

static void avx512_copy_fanout(const void *src, void *const outs[], unsigned n, uint32_t nbytes)
{
	uint32_t nfl = nbytes / 4;
	const float *s = src;

	for (uint32_t off = 0; off < nfl; off += 16) {
		__mmask16 m = tail_mask(nfl - off);
		__m512 v = _mm512_maskz_loadu_ps(m, s + off);

		for (unsigned k = 0; k < n; k++)
			_mm512_mask_storeu_ps((float *)outs[k] + off, m, v);
	}
}

const struct agg_sum_ops agg_sum_avx512_ops = {
	.name = "avx512",
	.sum_fanout = avx512_sum_fanout,
	.add = avx512_add,
	.copy_fanout = avx512_copy_fanout,
	.max_fanout = avx512_max_fanout,
	.max = avx512_max,
	.bor_fanout = avx512_bor_fanout,
	.bor = avx512_bor,
	.half = { &agg_half_avx512_bf16, &agg_half_avx512_fp16 },
};
