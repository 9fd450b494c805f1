/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RTL unit benches' random numbers (test_fp32_add.cpp, test_half.cpp):
 * splitmix64, seeded by assigning rng_s, so a failing seed replays.
 */
#ifndef NR_RTL_RAND_H
#define NR_RTL_RAND_H

#include <stdint.h>

static uint64_t rng_s;

static inline uint64_t rnd64(void)
{
	uint64_t z = (rng_s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static inline uint32_t rnd(void)
{
	return (uint32_t)(rnd64() >> 32);
}

#endif /* NR_RTL_RAND_H */
