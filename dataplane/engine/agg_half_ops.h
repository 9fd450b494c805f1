/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ops tables of the 16-bit kernels (struct agg_half_ops of agg_sum.h),
 * one per type, made the same way in every variant: a variant's file defines
 * static inline sum_fanout(), widen_add() and narrow_fanout() with a last
 * argument bf (true: bf16, false: fp16), then says
 * NR_HALF_OPS(VARIANT, bf16, true) and NR_HALF_OPS(VARIANT, fp16, false),
 * which define agg_half_VARIANT_bf16 and nr_half_VARIANT_fp16.
 */
#ifndef NR_AGG_HALF_OPS_H
#define NR_AGG_HALF_OPS_H

#include "dataplane/engine/agg_sum.h"

#define NR_HALF_OPS(V, T, BF) \
	static void T##_sum_fanout(void *result, const void *const srcs[], unsigned n,        \
				   void *const outs[], unsigned nouts, uint32_t nbytes)        \
	{                                                                                      \
		sum_fanout(result, srcs, n, outs, nouts, nbytes, BF);                         \
	}                                                                                      \
	static void T##_widen(float *acc, const void *src, uint32_t nbytes)                   \
	{                                                                                      \
		widen_add(acc, src, nbytes, BF, false);                                       \
	}                                                                                      \
	static void T##_add(float *acc, const void *src, uint32_t nbytes)                     \
	{                                                                                      \
		widen_add(acc, src, nbytes, BF, true);                                        \
	}                                                                                      \
	static void T##_narrow_fanout(const float *acc, void *result, void *const outs[],     \
				      unsigned nouts, uint32_t nbytes)                         \
	{                                                                                      \
		narrow_fanout(acc, result, outs, nouts, nbytes, BF);                          \
	}                                                                                      \
	const struct agg_half_ops agg_half_##V##_##T = {                                        \
		.sum_fanout = T##_sum_fanout, .widen = T##_widen, .add = T##_add,              \
		.narrow_fanout = T##_narrow_fanout,                                            \
	};

#endif /* NR_AGG_HALF_OPS_H */
