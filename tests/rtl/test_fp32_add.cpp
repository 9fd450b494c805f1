// SPDX-License-Identifier: BSD-3-Clause
/*
 * The FPGA's FP32 adder (dataplane/rtl/nr_fp32_add.v, Verilated) against the
 * host's float addition, bit for bit: x86's addss with the running sum as
 * first operand (the rule the engine's kernels pin, dataplane/engine/agg_sum.h).
 *   - every ordered pair of special classes (zeros, subnormals, normals at
 *     the edges, the largest finite, Inf, quiet and signalling NaNs);
 *   - NR_FP32_PAIRS (default 1,000,000) random pairs from mixes that reach
 *     every path: uniform bits, equal and nearby exponents, cancellation,
 *     subnormal operands and results, overflow, rounding ties.
 * NR_TEST_SEED reproduces a run.  Prints "N passed, N failed".
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "Vnr_fp32_add.h"
#include "verilated.h"

#include "rtl_rand.h"

static uint32_t host_add(uint32_t ab, uint32_t bb)
{
	float a, b;

	memcpy(&a, &ab, 4);
	memcpy(&b, &bb, 4);
#if defined(__x86_64__) || defined(__i386__)
	__asm__("addss %1, %0" : "+x"(a) : "x"(b));
#else
#error "the reference is x86's addss"
#endif
	memcpy(&ab, &a, 4);
	return ab;
}

static const uint32_t special_class[] = {
	0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x007FFFFFu, 0x807FFFFFu,
	0x00400000u, 0x80000003u, 0x00800000u, 0x80800000u, 0x00800001u, 0x3F800000u,
	0xBF800000u, 0x3F800001u, 0x4B800000u, 0xB3800000u, 0x33FFFFFFu, 0x34000000u,
	0x33800000u, 0xB4000000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F000000u, 0xFF000000u,
	0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u, 0x7FC00001u, 0xFFFFFFFFu,
	0x7FFFFFFFu, 0x7F800001u, 0xFF800001u, 0x7FBFFFFFu, 0xFFA00000u,
};
#define NSPECIAL (sizeof(special_class) / sizeof(special_class[0]))

/* A second operand chosen to hit one of the adder's paths, given a. */
static void random_pair(uint32_t *a, uint32_t *b)
{
	uint32_t k = rnd() % 10, x = rnd(), y = rnd();
	uint32_t s = rnd() & 0x80000000u;

	switch (k) {
	case 0: /* uniform bits: mostly huge exponent gaps, some NaN/Inf */
		*a = x;
		*b = y;
		break;
	case 1: /* same exponent */
		*a = x;
		*b = (y & 0x807FFFFFu) | (x & 0x7F800000u);
		break;
	case 2: /* exponents within 30: alignment and sticky bits */
		*a = x & 0xBFFFFFFFu;
		*b = (y & 0x807FFFFFu) |
		     ((((x >> 23) & 0xFF) + (rnd() % 61) - 30) & 0xFF) << 23;
		break;
	case 3: /* near cancellation: b = -a plus or minus a few ulps */
		*a = x;
		*b = ((x ^ 0x80000000u) + (rnd() % 9) - 4);
		break;
	case 4: /* subnormals, alone or against small normals */
		*a = s | (x & 0x007FFFFFu);
		*b = (rnd() & 1) ? (y & 0x807FFFFFu) : (y & 0x80FFFFFFu);
		break;
	case 5: /* near overflow */
		*a = s | 0x7E000000u | (x & 0x00FFFFFFu);
		*b = (y & 0x80000000u) | 0x7E000000u | (y & 0x00FFFFFFu);
		break;
	case 6: /* ties: b is exactly half an ulp of a (or odd multiples) */
		*a = (x & 0x80FFFFFFu) | (((x >> 24) % 200 + 30) << 23);
		*b = ((a[0] & 0x80000000u) ^ (rnd() & 1 ? 0x80000000u : 0)) |
		     ((((*a >> 23) & 0xFF) - 24 - (rnd() % 3)) << 23) | (y & 0x7FFFu);
		break;
	case 7: /* moderate values, as gradients are */
		*a = s | ((100 + x % 56) << 23) | (y & 0x7FFFFFu);
		*b = (rnd() & 0x80000000u) | ((100 + rnd() % 56) << 23) | (rnd() & 0x7FFFFFu);
		break;
	case 8: /* a special class against a random value */
		*a = special_class[x % NSPECIAL];
		*b = y;
		if (rnd() & 1) {
			uint32_t t = *a;
			*a = *b;
			*b = t;
		}
		break;
	default: /* exponent difference of exactly 1 or 2 (normalisation by 1) */
		*a = x & 0xBFFFFFFFu;
		*b = ((x ^ (rnd() & 1 ? 0x80000000u : 0)) & 0x80000000u) |
		     ((((x >> 23) & 0xFF) + 1 + (rnd() & 1)) & 0xFF) << 23 | (y & 0x7FFFFFu);
		break;
	}
}

int main(int argc, char **argv)
{
	const char *env = getenv("NR_TEST_SEED"), *np = getenv("NR_FP32_PAIRS");
	uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
	uint64_t pairs = np ? strtoull(np, NULL, 0) : 1000000;
	uint64_t passed = 0, failed = 0;
	VerilatedContext ctx;
	Vnr_fp32_add m(&ctx);

	ctx.commandArgs(argc, argv);
	rng_s = seed;
	printf("test_fp32_add: seed %llu (NR_TEST_SEED=%llu reproduces), %llu random pairs\n",
	       (unsigned long long)seed, (unsigned long long)seed, (unsigned long long)pairs);
	auto check = [&](uint32_t a, uint32_t b, const char *what) {
		uint32_t want = host_add(a, b);

		m.a = a;
		m.b = b;
		m.eval();
		if (m.y == want) {
			passed++;
			return;
		}
		if (failed++ < 20)
			printf("MISMATCH (%s): 0x%08x + 0x%08x: rtl 0x%08x, host 0x%08x\n", what, a, b,
			       (uint32_t)m.y, want);
	};
	for (unsigned i = 0; i < NSPECIAL; i++)
		for (unsigned j = 0; j < NSPECIAL; j++)
			check(special_class[i], special_class[j], "special classes");
	for (uint64_t k = 0; k < pairs; k++) {
		uint32_t a, b;

		random_pair(&a, &b);
		check(a, b, "random");
	}
	m.final();
	printf("fp32 adder vs host addss: %llu passed, %llu failed\n", (unsigned long long)passed,
	       (unsigned long long)failed);
	return failed ? 1 : 0;
}
