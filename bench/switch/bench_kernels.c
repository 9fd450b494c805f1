/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The box's kernels alone (see bench_kernels.h): the part of the aggregate
 * path's cost that does not depend on how the box finds a packet's slot, only
 * on the kernels it runs on the packet's bytes.  The box's time less this is
 * its parse, lookup, slot bookkeeping, monitor and rx/tx.
 */
#include "bench/bench_util.h"
#include "bench/switch/bench_frames.h"
#include "bench/switch/bench_kernels.h"
#include "bench/switch/bench_touch.h"

void bench_kernels_init(struct bench_kernels *k, uint32_t payload, bool icrc_check, unsigned dtype)
{
	k->sum = agg_sum_best();
	k->half = dtype == NR_ELEM_FP32 ? NULL : agg_sum_half(k->sum, dtype);
	nr_crc_shift_init(&k->shift, payload);
	k->icrc_check = icrc_check;
}

/* The ICRC checks of order[from, to) (with k->icrc_check), prefetched ahead up to count. */
static unsigned check(const struct bench_kernels *k, struct rte_mbuf *const *order,
		      struct nr_pkt *recs, unsigned from, unsigned to, unsigned count)
{
	unsigned bad = 0;

	for (unsigned q = from; q < to; q++) {
		bench_prefetch_ahead(order, q, count);
		if (k->icrc_check)
			bad += !nr_icrc_check_keep(rte_pktmbuf_mtod(order[q], const uint8_t *),
						   &recs[q]);
	}
	return bad;
}

double bench_kernels_run(const struct bench_kernels *k, bool sums, struct rte_mbuf *const *order,
			 struct nr_pkt *recs, unsigned n, unsigned per_port, unsigned burst,
			 uint8_t *res, unsigned slots, unsigned mtu)
{
	const size_t slot_bytes = bench_slot_bytes(mtu);
	const unsigned count = n * per_port;
	double t0 = nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID);
	unsigned bad = 0, outs = 0;

	bench_prefetch_first(order, count);
	for (unsigned off = 0; off < per_port; off += burst) {
		const unsigned b = RTE_MIN(burst, per_port - off), base = off * n;

		/* without the check, the same pass brings the frames in (the
		 * sums read them), prefetched the same way */
		bad += check(k, order, recs, base, base + n * b, count);
		/* the round's slots: position i of every rank's burst */
		for (unsigned i = 0; sums && i < b; i++) {
			const void *srcs[MAXN];
			void *dst[MAXN];
			uint8_t *sum = res + (size_t)(outs++ % slots) * slot_bytes;
			uint32_t len = recs[base + i].pay_len, tail;

			for (unsigned r = 0; r < n; r++) {
				unsigned q = base + r * b + i;

				srcs[r] = rte_pktmbuf_mtod(order[q], uint8_t *) + recs[q].pay_off;
				dst[r] = (void *)srcs[r];
			}
			if (k->half)
				k->half->sum_fanout(sum, srcs, n, dst, n, len);
			else
				k->sum->sum_fanout(sum, srcs, n, dst, n, len);
			tail = nr_crc32(0, sum, len);
			for (unsigned r = 0; r < n; r++) {
				unsigned q = base + r * b + i;
				uint8_t *frame = rte_pktmbuf_mtod(order[q], uint8_t *);

				nr_icrc_store(frame + recs[q].end - NR_ICRC_LEN,
					      nr_icrc_compute_tail(frame, &recs[q], tail, &k->shift));
			}
		}
	}
	t0 = nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID) - t0;
	/* every frame is the box's own, whole: a failed check is a broken window */
	return bad ? -1.0 : t0;
}
