/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What nr-bench-switch holds the box against.
 *
 * The cold touch: what any aggregator must do with the frames the box gets,
 * and nothing more: bring every cache line of each input frame into the core
 * (one 8-byte load a line: the line comes in whole, and no compute rides on
 * it), in the order the box's worker meets them, and write one output frame
 * per N inputs (the sum a slot's N contributions make).  It runs on the very
 * mbufs the box is about to get, written again so the caches hold them as
 * the box will find them, and prefetches as the box's loop does (mbuf
 * headers 8 frames ahead, whole frames 4 ahead).  Its rate is the physical
 * limit of the box's aggregate path on this core and this memory.
 *
 * The warm memcpy: copying the same volume over a working set of the same
 * size, the reference earlier versions used; warm, it says little about
 * frames that arrive from a NIC.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#endif

#include <rte_malloc.h>
#include <rte_memcpy.h>

#include "bench/bench_util.h"
#include "bench/switch/bench_touch.h"

double bench_cold_touch(struct rte_mbuf *const *order, unsigned count, unsigned n, uint8_t *out,
			unsigned slots, unsigned mtu)
{
	const size_t slot_bytes = bench_slot_bytes(mtu);
	double t0 = nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID);
	uint64_t fold = 0;
	unsigned outs = 0, seen = 0;

	bench_prefetch_first(order, count);
	for (unsigned i = 0; i < count; i++) {
		const uint8_t *f = rte_pktmbuf_mtod(order[i], const uint8_t *);
		uint32_t len = rte_pktmbuf_data_len(order[i]);

		bench_prefetch_ahead(order, i, count);
		for (uint32_t o = 0; o < len; o += RTE_CACHE_LINE_SIZE)
			fold ^= *(const uint64_t *)(f + o);
		if (++seen == n) {
			uint64_t *d = (uint64_t *)(out + (size_t)(outs++ % slots) * slot_bytes);

			for (uint32_t w = 0; w < len / 8; w++)
				d[w] = fold + w;
			seen = 0;
		}
	}
	/* keep the loads: the last output depends on every one of them */
	*(volatile uint64_t *)out = fold;
	return nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID) - t0;
}

void bench_flush_frames(struct rte_mbuf *const *pk, unsigned count)
{
#if defined(__x86_64__) || defined(__i386__)
	for (unsigned i = 0; i < count; i++) {
		uintptr_t a = RTE_ALIGN_FLOOR(rte_pktmbuf_mtod(pk[i], uintptr_t), RTE_CACHE_LINE_SIZE);
		uintptr_t e = rte_pktmbuf_mtod(pk[i], uintptr_t) + rte_pktmbuf_data_len(pk[i]);

		for (; a < e; a += RTE_CACHE_LINE_SIZE)
			_mm_clflush((const void *)a);
		for (unsigned o = 0; o < sizeof(struct rte_mbuf); o += RTE_CACHE_LINE_SIZE)
			_mm_clflush((const uint8_t *)pk[i] + o);
	}
	_mm_mfence();
#else
	(void)pk;
	(void)count;
#endif
}

double bench_memcpy(size_t ws, unsigned chunk, uint64_t volume)
{
	uint8_t *src = rte_malloc(NULL, ws, 64), *dst = rte_malloc(NULL, ws, 64);
	uint64_t done = 0;
	double s;

	if (!src || !dst) {
		rte_free(src);
		rte_free(dst);
		return 0;
	}
	memset(src, 1, ws);
	memset(dst, 2, ws);
	s = nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID);
	while (done < volume)
		for (size_t off = 0; off + chunk <= ws && done < volume; off += chunk) {
			rte_memcpy(dst + off, src + off, chunk);
			done += chunk;
		}
	s = nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID) - s;   /* CPU time: the machine may be shared */
	rte_free(src);
	rte_free(dst);
	return (double)volume * 8 / s / 1e9;
}
