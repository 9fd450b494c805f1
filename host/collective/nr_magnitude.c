/* SPDX-License-Identifier: BSD-3-Clause */
/* Drop-eligible packets by magnitude: see nr_magnitude.h. */
#include "nr_magnitude.h"

#include <math.h>
#include <string.h>

#include "proto/nr_elem.h"

static inline float elem_abs(const uint8_t *p, size_t i, enum nr_dtype dtype)
{
	uint16_t h;
	float f;

	if (dtype == NR_FLOAT32) {
		memcpy(&f, p + 4 * i, 4);
		return fabsf(f);
	}
	memcpy(&h, p + 2 * i, 2);
	return fabsf(dtype == NR_BF16 ? nr_bf16_widen(h) : nr_fp16_widen(h));
}

/* Sum of squares, eight partial sums (the loop's latency, not its adds, would bound one). */
static double sum_sq_f32(const float *x, size_t n)
{
	float acc[8] = { 0 };
	double s = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8)
		for (unsigned k = 0; k < 8; k++)
			acc[k] += x[i + k] * x[i + k];
	for (unsigned k = 0; k < 8; k++)
		s += acc[k];
	for (; i < n; i++)
		s += (double)x[i] * x[i];
	return s;
}

float nr_de_level(const void *buf, size_t n, enum nr_dtype dtype, double thresh)
{
	double s = 0, rms;

	if (!(thresh > 0) || n == 0)
		return 0;
	if (dtype == NR_FLOAT32 && ((uintptr_t)buf & 3) == 0) {
		s = sum_sq_f32(buf, n);
	} else {
		for (size_t i = 0; i < n; i++) {
			double v = elem_abs(buf, i, dtype);

			s += v * v;
		}
	}
	rms = sqrt(s / (double)n);
	if (!isfinite(rms) || !isfinite(thresh * rms))
		return 0;
	return (float)(thresh * rms);
}

uint32_t nr_de_mark(const void *buf, uint32_t len, uint32_t mtu, enum nr_dtype dtype,
		    float level, uint64_t *bits)
{
	uint32_t es = dtype == NR_FLOAT32 ? 4 : 2, npkts = (len + mtu - 1) / mtu, marked = 0;
	const uint8_t *p = buf;

	memset(bits, 0, (npkts + 63) / 64 * sizeof(*bits));
	if (!(level > 0))
		return 0;
	for (uint32_t k = 0; k < npkts; k++) {
		uint32_t off = k * mtu, n = (len - off < mtu ? len - off : mtu) / es, i = 0;

		/* !(|x| < level): a NaN ends the packet's chance as a large value does */
		while (i < n && elem_abs(p + off, i, dtype) < level)
			i++;
		if (i == n) {
			bits[k / 64] |= 1ull << (k % 64);
			marked++;
		}
	}
	return marked;
}
