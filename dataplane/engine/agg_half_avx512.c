/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AVX-512 kernels of the 16-bit element types (bf16, fp16), bit-identical to
 * agg_half_scalar.c (the rule: agg_sum.h).  Built with AVX-512 flags in the
 * library of agg_sum_avx512.c and called only after agg_sum_avx512_supported()
 * (AVX512F, BW, VL: vpmovzxwd/vpmovdw, vcvtph2ps/vcvtps2ph on zmm, masked
 * 16-bit loads and stores).  16 elements a vector, four vectors in flight in
 * the ordered sum; tails with masks; unaligned throughout.
 */
#include <immintrin.h>
#include <stdbool.h>

#include "dataplane/engine/agg_half_ops.h"

static inline __mmask16 tail_mask(uint32_t nel)
{
	return nel >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nel) - 1);
}

/*
 * a + b with a as the first operand, whose NaN wins (x86's rule, agg_sum.h):
 * written as the instruction, because the compiler may commute an add of two
 * registers (an operand loaded from memory would pin it, a widened one does not).
 */
static inline __attribute__((always_inline)) __m512 add_first(__m512 a, __m512 b)
{
	__m512 r;

	__asm__("vaddps %2, %1, %0" : "=v"(r) : "v"(a), "v"(b));
	return r;
}

static inline __attribute__((always_inline)) __m512 widen(__m256i h, bool bf)
{
	if (bf)
		return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
	return _mm512_cvtph_ps(h);
}

/* bf16: round the FP32 bits to nearest even, a NaN's top bits quieted */
static inline __attribute__((always_inline)) __m256i narrow(__m512 a, bool bf)
{
	if (!bf)
		return _mm512_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512i u = _mm512_castps_si512(a);
	__m512i hi = _mm512_srli_epi32(u, 16);
	__m512i lsb = _mm512_and_si512(hi, _mm512_set1_epi32(1));
	__m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)),
						       lsb), 16);
	__mmask16 nan = _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q);

	r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(hi, _mm512_set1_epi32(0x40)));
	return _mm512_cvtepi32_epi16(r);
}

static inline __m256i load16(const void *p, size_t el)
{
	return _mm256_loadu_si256((const __m256i *)((const uint16_t *)p + el));
}

static inline void store16(void *p, size_t el, __m256i v)
{
	_mm256_storeu_si256((__m256i *)((uint16_t *)p + el), v);
}

static inline __attribute__((always_inline)) void
sum_fanout(void *result, const void *const srcs[], unsigned n, void *const outs[],
	   unsigned nouts, uint32_t nbytes, bool bf)
{
	uint32_t nel = nbytes / 2, off = 0;

	for (; off + 64 <= nel; off += 64) {
		__m512 a0 = widen(load16(srcs[0], off), bf), a1 = widen(load16(srcs[0], off + 16), bf);
		__m512 a2 = widen(load16(srcs[0], off + 32), bf), a3 = widen(load16(srcs[0], off + 48), bf);

		for (unsigned i = 1; i < n; i++) {
			a0 = add_first(a0, widen(load16(srcs[i], off), bf));
			a1 = add_first(a1, widen(load16(srcs[i], off + 16), bf));
			a2 = add_first(a2, widen(load16(srcs[i], off + 32), bf));
			a3 = add_first(a3, widen(load16(srcs[i], off + 48), bf));
		}
		__m256i h0 = narrow(a0, bf), h1 = narrow(a1, bf), h2 = narrow(a2, bf), h3 = narrow(a3, bf);

		if (result) {
			store16(result, off, h0);
			store16(result, off + 16, h1);
			store16(result, off + 32, h2);
			store16(result, off + 48, h3);
		}
		for (unsigned k = 0; k < nouts; k++) {
			store16(outs[k], off, h0);
			store16(outs[k], off + 16, h1);
			store16(outs[k], off + 32, h2);
			store16(outs[k], off + 48, h3);
		}
	}
	for (; off < nel; off += 16) {
		__mmask16 m = tail_mask(nel - off);
		__m512 a = widen(_mm256_maskz_loadu_epi16(m, (const uint16_t *)srcs[0] + off), bf);
		__m256i h;

		for (unsigned i = 1; i < n; i++)
			a = add_first(a, widen(_mm256_maskz_loadu_epi16(m, (const uint16_t *)srcs[i] + off),
					       bf));
		h = narrow(a, bf);
		if (result)
			_mm256_mask_storeu_epi16((uint16_t *)result + off, m, h);
		for (unsigned k = 0; k < nouts; k++)
			_mm256_mask_storeu_epi16((uint16_t *)outs[k] + off, m, h);
	}
}

static inline __attribute__((always_inline)) void
widen_add(float *acc, const void *src, uint32_t nbytes, bool bf, bool add)
{
	uint32_t nel = nbytes / 2;

	for (uint32_t off = 0; off < nel; off += 16) {
		__mmask16 m = tail_mask(nel - off);
		__m512 v = widen(_mm256_maskz_loadu_epi16(m, (const uint16_t *)src + off), bf);

		if (add)
			v = add_first(_mm512_maskz_loadu_ps(m, acc + off), v);
		_mm512_mask_storeu_ps(acc + off, m, v);
	}
}

static inline __attribute__((always_inline)) void
narrow_fanout(const float *acc, void *result, void *const outs[], unsigned nouts,
	      uint32_t nbytes, bool bf)
{
	uint32_t nel = nbytes / 2;

	for (uint32_t off = 0; off < nel; off += 16) {
		__mmask16 m = tail_mask(nel - off);
		__m256i h = narrow(_mm512_maskz_loadu_ps(m, acc + off), bf);

		if (result)
			_mm256_mask_storeu_epi16((uint16_t *)result + off, m, h);
		for (unsigned k = 0; k < nouts; k++)
			_mm256_mask_storeu_epi16((uint16_t *)outs[k] + off, m, h);
	}
}

NR_HALF_OPS(avx512, bf16, true)
NR_HALF_OPS(avx512, fp16, false)
