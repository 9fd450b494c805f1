/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the box's workers publish for its metrics (dp_metrics.c, the control
 * API's job families): while the metrics listener runs (dp_snap_enable),
 * each worker copies, every DP_SNAP_NS of its clock, its engine's counters
 * and each of its channels' state, slots and counters into a snapshot of its
 * own under a sequence count (DPDK's rte_seqcount: one writer, which never
 * waits; a reader retries while a copy is being written).  A scrape reads
 * the snapshots and sends no command to any worker, however many jobs and
 * channels the box holds: its cost on the data path is the copies, made
 * whether anyone scrapes or not (docs/log.md).
 */
#ifndef NR_DP_SNAP_H
#define NR_DP_SNAP_H

#include <stdint.h>

#include <rte_branch_prediction.h>

#include "dataplane/dpdk/dp_state.h"
#include "proto/nr_job.h"

#define DP_SNAP_NS (100ull * 1000 * 1000) /* a worker's copies: 10 a second */

/* Start publishing on every worker (the metrics listener calls it), or stop. */
void dp_snap_enable(struct dp_box *b, bool on);

/* Worker side: copy now (its loop calls it through dp_snap_tick). */
void dp_snap_publish(struct dp_worker *w);

/* Worker side, from its housekeeping: publish when a period has passed, or
 * a job came or went (snap_due). */
static inline void dp_snap_tick(struct dp_worker *w)
{
	if (unlikely(__atomic_load_n(&w->box->snap_on, __ATOMIC_RELAXED) &&
		     (w->snap_due || w->now_ns - w->snap_ns >= DP_SNAP_NS)))
		dp_snap_publish(w);
}

/*
 * The engine counters every worker published, summed: 0, or -EBUSY when a
 * worker's copy could not be read whole (it wrote a new one on each try),
 * -EAGAIN when one has published none yet.
 */
int dp_snap_engine(struct dp_box *b, uint64_t ctr[NR_ECTR_MAX]);

/*
 * The published state of jobs ids[0..n): into *st[i] its state, slots,
 * slots_busy, completed and counters, summed over its channels (nothing
 * else of nr_job_stats); rc[i] 0, -ENOENT (no such job), -EAGAIN (a channel
 * not published yet: the job is newer than the last copy) or -EBUSY.
 */
void dp_snap_jobs(struct dp_box *b, const uint32_t *ids, unsigned n, struct nr_job_stats *const *st,
		  int *rc);

#endif /* NR_DP_SNAP_H */
