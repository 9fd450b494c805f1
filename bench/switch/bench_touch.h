/* SPDX-License-Identifier: BSD-3-Clause */
/* What nr-bench-switch holds the box against (bench_touch.c). */
#ifndef NR_BENCH_TOUCH_H
#define NR_BENCH_TOUCH_H

#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_prefetch.h>

/* The box's prefetch distances (dataplane/dpdk/dp_loop.c), in frames ahead:
 * mbuf headers, whole frames. */
#define BENCH_PF_MBUF  8
#define BENCH_PF_WHOLE 4

/* Every line of m's frame, prefetched as the box's loop does for its ICRC check. */
static inline void bench_prefetch_frame(const struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);

	for (uint32_t o = 0; o < rte_pktmbuf_data_len(m); o += RTE_CACHE_LINE_SIZE)
		rte_prefetch0(f + o);
}

/* The first frames of order[0..count): mbuf headers and whole frames, before a pass starts. */
static inline void bench_prefetch_first(struct rte_mbuf *const *order, unsigned count)
{
	for (unsigned i = 0; i < count && i < BENCH_PF_MBUF; i++)
		rte_prefetch0(order[i]);
	for (unsigned i = 0; i < count && i < BENCH_PF_WHOLE; i++)
		bench_prefetch_frame(order[i]);
}

/* While a pass is at frame i: the mbuf header and the frame its distances ahead. */
static inline void bench_prefetch_ahead(struct rte_mbuf *const *order, unsigned i, unsigned count)
{
	if (i + BENCH_PF_MBUF < count)
		rte_prefetch0(order[i + BENCH_PF_MBUF]);
	if (i + BENCH_PF_WHOLE < count)
		bench_prefetch_frame(order[i + BENCH_PF_WHOLE]);
}

/* Bytes of one output slot of mtu payload bytes (line-aligned, headers' room). */
static inline size_t bench_slot_bytes(unsigned mtu)
{
	return RTE_ALIGN_CEIL(mtu + 128, RTE_CACHE_LINE_SIZE);
}

/*
 * The physical limit: read every cache line of each frame of order[0..count)
 * (one load a line, as cold as the box finds them, prefetched the box's way)
 * and write one output frame per n inputs into out (a ring of slots of mtu
 * bytes).  Returns this thread's CPU seconds for it.
 */
double bench_cold_touch(struct rte_mbuf *const *order, unsigned count, unsigned n, uint8_t *out,
			unsigned slots, unsigned mtu);
/*
 * Every cache line of the frames of pk[0..count) and of their mbuf headers
 * written back and dropped from every cache (CLFLUSH), as a NIC's DMA without
 * DDIO leaves them: memory that is not in cache.  No-op where there is no
 * CLFLUSH (not x86).
 */
void bench_flush_frames(struct rte_mbuf *const *pk, unsigned count);
/* memcpy of volume bytes over a working set of ws bytes, in chunks of chunk: Gbit/s of CPU time. */
double bench_memcpy(size_t ws, unsigned chunk, uint64_t volume);

#endif /* NR_BENCH_TOUCH_H */
