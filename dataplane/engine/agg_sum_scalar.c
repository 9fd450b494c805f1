/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scalar FP32 reduce kernels (sum, max, bor): the reference every other variant must match bit
 * for bit (see agg_sum.h).  Chunks of 16 floats mirror the AVX-512 kernels so
 * that an output aliasing a source is handled the same way.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/engine/agg_sum.h"

#define CHUNK 16u	/* floats per chunk */

/* One chunk of m floats (m <= CHUNK); m is a constant in the full-chunk call,
 * so the copies inline and the adds may use SSE lanes, one IEEE add (or, with
 * max, one compare and select) per element in rank order either way. */
static inline __attribute__((always_inline)) void
sum_chunk(void *result, const void *const srcs[], unsigned n, void *const outs[],
	  unsigned nouts, size_t bo, uint32_t m, bool max)
{
	float acc[CHUNK], v[CHUNK];

	memcpy(acc, (const uint8_t *)srcs[0] + bo, m * 4);
	for (unsigned i = 1; i < n; i++) {
		memcpy(v, (const uint8_t *)srcs[i] + bo, m * 4);
		/* two loops, not one with a select inside: in that shape gcc -O0
		 * commuted the add, and two NaNs gave src's (test_special_classes) */
		if (max)
			for (uint32_t j = 0; j < m; j++)
				acc[j] = v[j] > acc[j] ? v[j] : acc[j];
		else
			for (uint32_t j = 0; j < m; j++)
				acc[j] = acc[j] + v[j];
	}
	if (result)
		memcpy((uint8_t *)result + bo, acc, m * 4);
	for (unsigned k = 0; k < nouts; k++)
		memcpy((uint8_t *)outs[k] + bo, acc, m * 4);
}

static inline __attribute__((always_inline)) void
reduce_fanout(void *result, const void *const srcs[], unsigned n, void *const outs[],
	      unsigned nouts, uint32_t nbytes, bool max)
{
	uint32_t nfl = nbytes / 4, off = 0;

	for (; off + CHUNK <= nfl; off += CHUNK)
		sum_chunk(result, srcs, n, outs, nouts, (size_t)off * 4, CHUNK, max);
	if (off < nfl)
		sum_chunk(result, srcs, n, outs, nouts, (size_t)off * 4, nfl - off, max);
}

static void scalar_sum_fanout(void *result, const void *const srcs[], unsigned n,
			      void *const outs[], unsigned nouts, uint32_t nbytes)
{
	reduce_fanout(result, srcs, n, outs, nouts, nbytes, false);
}

static void scalar_max_fanout(void *result, const void *const srcs[], unsigned n,
			      void *const outs[], unsigned nouts, uint32_t nbytes)
{
	reduce_fanout(result, srcs, n, outs, nouts, nbytes, true);
}

/* acc = (src > acc) ? src : acc: the bits of the one selected, never quieted */
static void scalar_max(void *acc, const void *src, uint32_t nbytes)
{
	for (uint32_t off = 0; off < nbytes; off += 4) {
		float a, v;

		memcpy(&a, (const uint8_t *)acc + off, 4);
		memcpy(&v, (const uint8_t *)src + off, 4);
		if (v > a)
			memcpy((uint8_t *)acc + off, &v, 4);
	}
}

/* One chunk of m 32-bit words ORed in rank order (bor): integers, never
 * floats, so any bit pattern comes back as ORed; chunked as sum_chunk so an
 * output aliasing a source is handled the same way. */
static inline __attribute__((always_inline)) void bor_chunk(void *result, const void *const srcs[],
							    unsigned n, void *const outs[],
							    unsigned nouts, size_t bo, uint32_t m)
{
	uint32_t acc[CHUNK], v[CHUNK];

	memcpy(acc, (const uint8_t *)srcs[0] + bo, m * 4);
	for (unsigned i = 1; i < n; i++) {
		memcpy(v, (const uint8_t *)srcs[i] + bo, m * 4);
		for (uint32_t j = 0; j < m; j++)
			acc[j] |= v[j];
	}
	if (result)
		memcpy((uint8_t *)result + bo, acc, m * 4);
	for (unsigned k = 0; k < nouts; k++)
		memcpy((uint8_t *)outs[k] + bo, acc, m * 4);
}

static void scalar_bor_fanout(void *result, const void *const srcs[], unsigned n,
			      void *const outs[], unsigned nouts, uint32_t nbytes)
{
	uint32_t nw = nbytes / 4, off = 0;

	for (; off + CHUNK <= nw; off += CHUNK)
		bor_chunk(result, srcs, n, outs, nouts, (size_t)off * 4, CHUNK);
	if (off < nw)
		bor_chunk(result, srcs, n, outs, nouts, (size_t)off * 4, nw - off);
}

/* acc |= src, word by word */
static void scalar_bor(void *acc, const void *src, uint32_t nbytes)
{
	for (uint32_t off = 0; off < nbytes; off += 4) {
		uint32_t a, v;

		memcpy(&a, (const uint8_t *)acc + off, 4);
		memcpy(&v, (const uint8_t *)src + off, 4);
		a |= v;
		memcpy((uint8_t *)acc + off, &a, 4);
	}
}

/*
 * acc + src with x86's NaN rule pinned (agg_sum.h): the compiler may commute
 * this add (it does here, in the vectorized loop), which picks src's NaN when
 * both operands are NaNs; a NaN acc wins, quieted, as in the AVX-512 kernel.
 */
static inline __attribute__((always_inline)) void
add_chunk(uint8_t *acc, const uint8_t *src, uint32_t m)
{
	float a[CHUNK], v[CHUNK], r[CHUNK];
	uint32_t ab[CHUNK], rb[CHUNK];

	memcpy(a, acc, m * 4);
	memcpy(v, src, m * 4);
	memcpy(ab, acc, m * 4);
	for (uint32_t j = 0; j < m; j++)
		r[j] = a[j] + v[j];
	memcpy(rb, r, m * 4);
	for (uint32_t j = 0; j < m; j++)
		if ((ab[j] & 0x7FFFFFFFu) > 0x7F800000u)
			rb[j] = ab[j] | 0x00400000u;
	memcpy(acc, rb, m * 4);
}

static void scalar_add(void *acc, const void *src, uint32_t nbytes)
{
	uint32_t nfl = nbytes / 4, off = 0;

	for (; off + CHUNK <= nfl; off += CHUNK)
		add_chunk((uint8_t *)acc + off * 4, (const uint8_t *)src + off * 4, CHUNK);
	if (off < nfl)
		add_chunk((uint8_t *)acc + off * 4, (const uint8_t *)src + off * 4, nfl - off);
}

static void scalar_copy_fanout(const void *src, void *const outs[], unsigned n, uint32_t nbytes)
{
	for (unsigned k = 0; k < n; k++)
		if (outs[k] != src)
			memmove(outs[k], src, nbytes);
}

const struct agg_sum_ops agg_sum_scalar_ops = {
	.name = "scalar",
	.sum_fanout = scalar_sum_fanout,
	.add = scalar_add,
	.copy_fanout = scalar_copy_fanout,
	.max_fanout = scalar_max_fanout,
	.max = scalar_max,
	.bor_fanout = scalar_bor_fanout,
	.bor = scalar_bor,
	.half = { &agg_half_scalar_bf16, &agg_half_scalar_fp16 },
};

bool agg_sum_avx512_supported(void)
{
#ifdef NR_HAVE_AVX512
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vl");
#else
	return false;
#endif
}

const struct agg_sum_ops *agg_sum_get(enum agg_sum_kernel k)
{
	switch (k) {
	case NR_KERNEL_SCALAR:
		return &agg_sum_scalar_ops;
	case NR_KERNEL_AVX512:
#ifdef NR_HAVE_AVX512
		if (agg_sum_avx512_supported())
			return &agg_sum_avx512_ops;
#endif
		return NULL;
	case NR_KERNEL_AUTO:
		return agg_sum_best();
	}
	return NULL;
}

const struct agg_sum_ops *agg_sum_best(void)
{
	const char *env = getenv("NR_SUM_KERNEL");
	const struct agg_sum_ops *o = NULL;

	if (env && strcmp(env, "scalar") == 0)
		o = agg_sum_get(NR_KERNEL_SCALAR);
	else if (env && strcmp(env, "avx512") == 0)
		o = agg_sum_get(NR_KERNEL_AVX512);
	if (o)
		return o;
	o = agg_sum_get(NR_KERNEL_AVX512);
	return o ? o : &agg_sum_scalar_ops;
}
