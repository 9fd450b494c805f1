/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The comparison the engine's checkers make of a result against a reference
 * sum: bit for bit (so -0.0 is not 0.0 and a rounding shows), except that any
 * NaN matches any NaN (the engine keeps a NaN, not its payload).
 */
#ifndef NR_ENG_BITS_H
#define NR_ENG_BITS_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline bool eng_same_float(float a, float b)
{
	uint32_t x, y;

	if (isnan(a) && isnan(b))
		return true;
	memcpy(&x, &a, 4);
	memcpy(&y, &b, 4);
	return x == y;
}

#endif
