/* SPDX-License-Identifier: BSD-3-Clause */
/* Seeded, reproducible randomness for the engine suites (NR_TEST_SEED overrides). */
#ifndef NR_ENG_RAND_H
#define NR_ENG_RAND_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct eng_rng {
	uint64_t s;
};

static inline void eng_rng_init(struct eng_rng *r, uint64_t seed)
{
	r->s = seed ^ 0x9E3779B97F4A7C15ull;
}

/* splitmix64 */
static inline uint64_t eng_rand64(struct eng_rng *r)
{
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static inline uint32_t eng_rand(struct eng_rng *r)
{
	return (uint32_t)(eng_rand64(r) >> 32);
}

/* true with probability pct / 100 */
static inline int eng_chance(struct eng_rng *r, unsigned pct)
{
	return eng_rand(r) % 100 < pct;
}

static inline uint64_t eng_seed(const char *suite)
{
	const char *env = getenv("NR_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);

	printf("%s: seed %llu (set NR_TEST_SEED=%llu to reproduce)\n", suite,
	       (unsigned long long)seed, (unsigned long long)seed);
	fflush(stdout);
	return seed;
}

#endif /* NR_ENG_RAND_H */
