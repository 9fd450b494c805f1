/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FP32 reduce kernels (sum, max and bor) of the aggregation engine (rte_net_crc.c style): a scalar
 * version that always exists and an AVX-512 version built in its own static
 * library with its own flags.  One is picked at engine start from the CPU
 * flags (override: agg_engine_set_kernel(), or NR_SUM_KERNEL=scalar|avx512 in
 * the environment).
 *
 * Contract shared by every variant, so they are bit-identical:
 *   - element-wise IEEE-754 single-precision adds, strictly in the order given
 *     (((s0 + s1) + s2) + ...), no FMA, no reassociation (-ffp-contract=off);
 *   - nbytes is a multiple of 4 (whole floats; 16-bit kernels below: of 2), 0 allowed;
 *   - every source and destination pointer may be unaligned (packet payloads);
 *     only 'result'/'acc' buffers of the engine are 64-byte aligned, the
 *     kernels do not rely on it;
 *   - an output may alias a source (results are written into the received
 *     packets): each chunk is fully loaded before it is stored.  Outputs must
 *     not partially overlap each other or a source at a different offset.
 *   - NaN: x86's rule for acc + src: a NaN acc propagates (quieted), else a
 *     NaN src (quieted); an invalid operation (Inf - Inf) gives 0xFFC00000.
 *     IEEE 754 leaves open which of two NaNs survives and the compiler may
 *     commute an add, so the scalar kernel pins the rule where it did not
 *     hold (add); tests/engine/test_sum.c checks every pair and triple of
 *     special classes against x86's addss with a fixed operand order, and
 *     the FPGA adder (dataplane/rtl/nr_fp32_add.v) implements the same rule;
 *   - tails are handled with masks (AVX-512) or a plain loop (scalar); no
 *     byte outside [p, p + nbytes) is read or written.
 *   - max (jobs of op max): m = s0, then m = (s_r > m) ? s_r : m in rank order
 *     (an ordered, quiet compare: a NaN contribution is passed over unless it
 *     is rank 0's, which then is the result; of +0 and -0 the first stays),
 *     bits copied, never quieted; every kernel compares and selects, so the
 *     compiler cannot commute it.
 *   - bor (jobs of op bor): r = s0 | s1 | ... | s(n-1), bitwise on 32-bit
 *     words, in integer registers or lanes, never as floats: any bytes (NaN
 *     patterns, -0.0) come back as the bits ORed, none quieted; where every
 *     other rank sends zeros a rank's bytes come back unchanged (an
 *     all-gather).  nbytes a multiple of 4, aliasing and tails as above.
 *
 * 16-bit elements (jobs of dtype bf16 or fp16, proto/nr_job.h): struct
 * agg_half_ops, one per type in every variant, bit-identical as above:
 *   - widen each element to FP32 and round the sum back once, to nearest
 *     even, subnormals kept, by the rule of proto/nr_elem.h (nr_bf16_widen,
 *     nr_fp16_round, ...), which the RTL and the host's ring follow too;
 *   - sum the widened elements in FP32 under the rules above (order given,
 *     x86's NaN rule, pinned in every kernel), never in 16 bits;
 *   - AVX512_BF16's VCVTNEPS2BF16 is not used: it treats subnormal inputs as
 *     zero, which the rule does not; fp16 uses AVX512F's vcvtph2ps/vcvtps2ph;
 *   - nbytes counts the 16-bit payload (a multiple of 2); an FP32
 *     accumulator (acc) holds nbytes / 2 floats; outputs may alias sources
 *     chunk for chunk, as above.
 */
#ifndef NR_AGG_SUM_H
#define NR_AGG_SUM_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/nr_elem.h"

enum agg_sum_kernel {
	NR_KERNEL_AUTO = 0,
	NR_KERNEL_SCALAR = 1,
	NR_KERNEL_AVX512 = 2,
};

/* One 16-bit type's kernels (see above). */
struct agg_half_ops {
	/* result and outs[] = round(widen(srcs[0]) + ... + widen(srcs[n-1])), rank
	 * order; result may be NULL.  n >= 1.  (Ordered mode.) */
	void (*sum_fanout)(void *result, const void *const srcs[], unsigned n,
			   void *const outs[], unsigned nouts, uint32_t nbytes);
	/* acc = widen(src) */
	void (*widen)(float *acc, const void *src, uint32_t nbytes);
	/* acc += widen(src) (streaming mode: on arrival) */
	void (*add)(float *acc, const void *src, uint32_t nbytes);
	/* result and outs[] = round(acc); result may be NULL */
	void (*narrow_fanout)(const float *acc, void *result, void *const outs[], unsigned nouts,
			      uint32_t nbytes);
};

struct agg_sum_ops {
	const char *name;
	/* result = srcs[0] + ... + srcs[n-1] (rank order); stored into result
	 * (may be NULL) and into outs[0..nouts-1].  n >= 1. */
	void (*sum_fanout)(void *result, const void *const srcs[], unsigned n,
			   void *const outs[], unsigned nouts, uint32_t nbytes);
	/* acc += src */
	void (*add)(void *acc, const void *src, uint32_t nbytes);
	/* outs[k] = src for every k */
	void (*copy_fanout)(const void *src, void *const outs[], unsigned n, uint32_t nbytes);
	/* as sum_fanout, the max of srcs (rank order, the rule above) */
	void (*max_fanout)(void *result, const void *const srcs[], unsigned n,
			   void *const outs[], unsigned nouts, uint32_t nbytes);
	/* acc = (src > acc) ? src : acc */
	void (*max)(void *acc, const void *src, uint32_t nbytes);
	/* as sum_fanout, srcs[0] | ... | srcs[n-1] on 32-bit words (the rule above) */
	void (*bor_fanout)(void *result, const void *const srcs[], unsigned n, void *const outs[],
			   unsigned nouts, uint32_t nbytes);
	/* acc |= src (32-bit words; streaming mode) */
	void (*bor)(void *acc, const void *src, uint32_t nbytes);
	/* 16-bit types: [NR_ELEM_BF16 - 1] and [NR_ELEM_FP16 - 1] */
	const struct agg_half_ops *half[2];
};

/* The kernels of a 16-bit element type t (NR_ELEM_BF16 or NR_ELEM_FP16). */
static inline const struct agg_half_ops *agg_sum_half(const struct agg_sum_ops *o, unsigned t)
{
	return o->half[t - 1];
}


extern const struct agg_sum_ops agg_sum_scalar_ops;
extern const struct agg_half_ops agg_half_scalar_bf16, agg_half_scalar_fp16;
#ifdef NR_HAVE_AVX512
extern const struct agg_sum_ops agg_sum_avx512_ops;
extern const struct agg_half_ops agg_half_avx512_bf16, agg_half_avx512_fp16;
#endif

/* The kernel k if compiled in and supported by this CPU, else NULL. */
const struct agg_sum_ops *agg_sum_get(enum agg_sum_kernel k);
/* NR_SUM_KERNEL from the environment if set and usable, else the best supported. */
const struct agg_sum_ops *agg_sum_best(void);
/* true when the CPU and the build support the AVX-512 kernel. */
bool agg_sum_avx512_supported(void);

#endif /* NR_AGG_SUM_H */
