/* SPDX-License-Identifier: BSD-3-Clause */
/* The box's kernels alone, on the box's frames (bench_kernels.c). */
#ifndef NR_BENCH_KERNELS_H
#define NR_BENCH_KERNELS_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "dataplane/engine/agg_sum.h"
#include "proto/roce_icrc.h"
#include "proto/roce_pkt.h"

/* What the kernels run with: the box's sum kernel, a shift table for the payload. */
struct bench_kernels {
	const struct agg_sum_ops *sum;
	const struct agg_half_ops *half;   /* a 16-bit job's (NULL: FP32) */
	struct nr_crc_shift shift;
	bool icrc_check;          /* the box checks the ICRC of its input (not --no-icrc-check) */
};

/* The box's sum kernel (as the engine picks it) for elements of dtype (enum
 * nr_elem_type), a shift table for payload bytes. */
void bench_kernels_init(struct bench_kernels *k, uint32_t payload, bool icrc_check, unsigned dtype);

/*
 * The kernels of the box's aggregate path over a window, and nothing else:
 * the ICRC check of every frame of order[0..count) (nr_icrc_check_keep; none
 * without k->icrc_check), in that order, prefetched as the box's loop does;
 * and with sums, for every slot, once the round of bursts that completes it
 * is checked, the ordered sum of its n payloads written into its n frames
 * (the sum kernel's sum_fanout, a 16-bit job's widening, FP32 sum and
 * rounding, with a copy into res, a ring of slots of mtu
 * bytes), the CRC of the sum and each result's ICRC from its headers and that
 * CRC (nr_icrc_compute_tail), stored, as the box's emit does.  order is the
 * feed order (bench_feed_order: rounds of one burst of `burst` frames a rank,
 * per_port frames a rank); recs[q] is order[q]'s record, parsed before the
 * timing.  No parse, lookup, slot bookkeeping, monitor, rx or tx: what the
 * box's path costs at the least with these kernels.  Returns this thread's
 * CPU seconds for it, or -1 when a frame failed its check.
 */
double bench_kernels_run(const struct bench_kernels *k, bool sums, struct rte_mbuf *const *order,
			 struct nr_pkt *recs, unsigned n, unsigned per_port, unsigned burst,
			 uint8_t *res, unsigned slots, unsigned mtu);

#endif /* NR_BENCH_KERNELS_H */
