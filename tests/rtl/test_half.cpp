// SPDX-License-Identifier: BSD-3-Clause
/*
 * The FPGA's 16-bit conversions (dataplane/rtl/nr_half.v, Verilated through
 * tests/rtl/nr_half_tb.v) against the engine's scalar rule, bit for bit
 * (dataplane/engine/agg_half_scalar.c: nr_bf16_widen, nr_fp16_widen,
 * nr_bf16_round, nr_fp16_round, the reference every kernel matches):
 *   - widen: every 16-bit value of both types;
 *   - round: every FP32 exponent and sign with every top fraction bit
 *     pattern (16 bits) against low bits at and around each rounding point
 *     (bf16: bit 16; fp16: bit 13, and each subnormal result's own ulp), the
 *     range and overflow edges, and NR_HALF_ROUNDS (default 1,000,000)
 *     random FP32 patterns.
 * NR_TEST_SEED reproduces a run.  Prints "N passed, N failed".
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "Vnr_half_tb.h"
#include "verilated.h"

#include "rtl_rand.h"

extern "C" {
#include "dataplane/engine/agg_sum.h"
}

static uint32_t bits_of(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float f32_of(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

int main(int argc, char **argv)
{
	const char *env = getenv("NR_TEST_SEED"), *nr = getenv("NR_HALF_ROUNDS");
	uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
	uint64_t rounds = nr ? strtoull(nr, NULL, 0) : 1000000;
	uint64_t passed = 0, failed = 0;
	VerilatedContext ctx;
	Vnr_half_tb m(&ctx);
	static const char *const tname[2] = { "bf16", "fp16" };

	ctx.commandArgs(argc, argv);
	rng_s = seed;
	printf("test_half: seed %llu (NR_TEST_SEED=%llu reproduces), %llu random roundings\n",
	       (unsigned long long)seed, (unsigned long long)seed, (unsigned long long)rounds);
	auto widen = [&](unsigned fp16, uint32_t h) {
		uint32_t want = bits_of(fp16 ? nr_fp16_widen((uint16_t)h) : nr_bf16_widen((uint16_t)h));

		m.fp16 = fp16;
		m.h = h;
		m.eval();
		if (m.wf == want) {
			passed++;
			return;
		}
		if (failed++ < 20)
			printf("MISMATCH: %s widen 0x%04x: rtl 0x%08x, engine 0x%08x\n", tname[fp16], h,
			       (uint32_t)m.wf, want);
	};
	auto round = [&](unsigned fp16, uint32_t u, const char *what) {
		uint32_t want = fp16 ? nr_fp16_round(f32_of(u)) : nr_bf16_round(f32_of(u));

		m.fp16 = fp16;
		m.f = u;
		m.eval();
		if (m.rh == want) {
			passed++;
			return;
		}
		if (failed++ < 20)
			printf("MISMATCH (%s): %s round 0x%08x: rtl 0x%04x, engine 0x%04x\n", what,
			       tname[fp16], u, (uint32_t)m.rh, want);
	};

	for (unsigned t = 0; t < 2; t++)
		for (uint32_t h = 0; h < 0x10000; h++)
			widen(t, h);
	/* every top half (sign, exponent, 7 fraction bits) with low halves at
	 * and around bf16's rounding point and fp16's (bit 13) */
	static const uint32_t low[] = { 0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001, 0x1FFF, 0x2000,
					0x3000, 0x5000, 0x7FFF, 0x8000, 0x8001, 0xB000, 0xF000,
					0xFFFF };
	for (unsigned t = 0; t < 2; t++)
		for (uint32_t hi = 0; hi < 0x10000; hi++)
			for (uint32_t l : low)
				round(t, hi << 16 | l, "grid");
	/* fp16's subnormal results (FP32 exponents 102..112): the bits at and
	 * around each one's rounding point, 126 - e bits down */
	for (uint32_t e = 101; e <= 113; e++)
		for (uint32_t top = 0; top < 0x400; top++) {
			uint32_t sh = e < 126 ? 126 - e : 1, half = sh <= 23 ? 1u << (sh - 1) : 0;
			uint32_t m0 = (top << 13) & 0x7FFFFF;

			for (int d = -1; d <= 1; d++)
				for (uint32_t s = 0; s < 2; s++) {
					uint32_t frac = sh <= 23 ? (m0 & ~((half << 1) - 1)) + half + (uint32_t)d :
							(uint32_t)(top + d) & 0x7FFFFF;

					round(1, s << 31 | e << 23 | (frac & 0x7FFFFF), "fp16 subnormal");
				}
		}
	/* the edges: fp16 overflow (65520) and the smallest values, bf16's largest */
	static const uint32_t edge[] = { 0x477FEFFF, 0x477FF000, 0x477FF001, 0x477FE000, 0x47800000,
					 0x33000000, 0x33000001, 0x32FFFFFF, 0x33800000, 0x387FFFFF,
					 0x38800000, 0x387FF000, 0x7F7F7FFF, 0x7F7F8000, 0x7F7FFFFF,
					 0x7F800000, 0x7F800001, 0x7FBFFFFF, 0x7FC00000, 0x00000001,
					 0x00008000, 0x00018000, 0x007FFFFF };
	for (unsigned t = 0; t < 2; t++)
		for (uint32_t u : edge)
			for (uint32_t s = 0; s < 2; s++)
				round(t, u | s << 31, "edge");
	for (uint64_t k = 0; k < rounds; k++) {
		uint32_t u = rnd(), t = u & 1;

		/* half of them where fp16 is finite: FP32 exponents 95..145 */
		if (rnd() & 1)
			u = (u & 0x807FFFFFu) | (95 + rnd() % 51) << 23;
		round(t, u, "random");
	}
	m.final();
	printf("16-bit conversions vs the engine's rule: %llu passed, %llu failed\n",
	       (unsigned long long)passed, (unsigned long long)failed);
	return failed ? 1 : 0;
}
