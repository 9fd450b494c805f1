/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Element types of a job's payloads (the job contract, nr_job.h: a spec's
 * "dtype"), and the one rule for converting the 16-bit ones to and from
 * FP32 that the box's kernels (dataplane/engine/agg_sum.h), the RTL, the
 * host library's ring and the tests share:
 *   - widen: bf16 exactly (its bits are FP32's top 16: shifted up, NaN
 *     payloads kept); fp16 exactly, subnormals included, a NaN quieted with
 *     its payload kept (as x86's vcvtph2ps);
 *   - round: to nearest even on every value, subnormals included (no flush
 *     to zero); bf16 by integer rounding of the FP32 bits (Inf stays Inf, a
 *     finite value past bf16's range becomes Inf, a NaN keeps its top 16 bits,
 *     quieted); fp16 as IEEE 754 (and vcvtps2ph with round-to-nearest-even)
 *     do it: overflow to Inf, a NaN keeps the top 10 bits of its payload,
 *     quieted.
 * Elements are in the hosts' byte order (little-endian), as every payload.
 */
#ifndef NR_ELEM_H
#define NR_ELEM_H

#include <stdint.h>
#include <string.h>

enum nr_elem_type {
	NR_ELEM_FP32 = 0,
	NR_ELEM_BF16 = 1,      /* bfloat16: FP32's top 16 bits */
	NR_ELEM_FP16 = 2,      /* IEEE 754 binary16 */
	NR_ELEM_TYPES
};

/* "fp32", "bf16", "fp16" (the job spec's "dtype"); NULL for an unknown type. */
static inline const char *nr_elem_name(unsigned t)
{
	return t == NR_ELEM_FP32 ? "fp32" : t == NR_ELEM_BF16 ? "bf16" : t == NR_ELEM_FP16 ? "fp16" : NULL;
}

/* Bytes of one element of type t (4 or 2). */
static inline uint32_t nr_elem_size(unsigned t)
{
	return t == NR_ELEM_FP32 ? 4 : 2;
}

static inline float nr_f32_of_bits(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static inline uint32_t nr_bits_of_f32(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static inline float nr_bf16_widen(uint16_t h)
{
	return nr_f32_of_bits((uint32_t)h << 16);
}


static inline float nr_fp16_widen(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1F, m = h & 0x3FF;
	int sh;

	if (e == 0x1F)          /* Inf, or NaN quieted with its payload */
		return nr_f32_of_bits(sign | 0x7F800000u | m << 13 | (m ? 0x00400000u : 0));
	if (e)
		return nr_f32_of_bits(sign | (e + 112) << 23 | m << 13);
	if (!m)
		return nr_f32_of_bits(sign);
	/* subnormal m * 2^-24: normalise so that bit 10 is the implicit one */
	sh = __builtin_clz(m) - 21;
	m <<= sh;
	return nr_f32_of_bits(sign | (uint32_t)(113 - sh) << 23 | (m & 0x3FF) << 13);
}


static inline uint16_t nr_bf16_round(float f)
{
	uint32_t u = nr_bits_of_f32(f);

	if ((u & 0x7FFFFFFFu) > 0x7F800000u)    /* NaN: top bits, quieted */
		return (uint16_t)(u >> 16 | 0x40);
	return (uint16_t)((u + 0x7FFFu + (u >> 16 & 1)) >> 16);
}


static inline uint16_t nr_fp16_round(float f)
{
	uint32_t u = nr_bits_of_f32(f), ax = u & 0x7FFFFFFFu;
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


#endif /* NR_ELEM_H */
