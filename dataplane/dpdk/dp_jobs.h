/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The box's jobs, control side (dp_jobs.c): each call takes box->ctl_lock
 * and reaches the owning lcore through its command ring.
 */
#ifndef NR_DP_JOBS_H
#define NR_DP_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include "dataplane/dpdk/dp_state.h"

/*
 * Add a job (id 1..DP_JOB_ID_MAX): its channels round robin over the workers
 * from the least loaded one.  0, or -EEXIST / -ENOSPC / -ENOMEM / -EINVAL /
 * -ETIMEDOUT with err saying why (nothing of the job stays); *credits gets W
 * (of each channel).
 */
int dp_job_add(struct dp_box *b, uint32_t id, const struct nr_job_spec *spec,
	       uint32_t *credits, char *err, size_t errlen);
/* Remove a job, every channel (held frames freed): 0 or -ENOENT. */
int dp_job_del(struct dp_box *b, uint32_t id);
/*
 * The operator's static MAC map at run time (switch mode; dp_l2.h): mac on
 * port for good (port >= 0), or taken back (port < 0, refused while jobs pin
 * it).  0 or -errno with err.
 */
int dp_box_l2_static(struct dp_box *b, const uint8_t mac[6], int port, char *err, size_t errlen);
/* A job's state and counters, its channels summed and listed: 0 or -ENOENT. */
int dp_job_stats(struct dp_box *b, uint32_t id, struct nr_job_stats *st);
/* Engine counters summed over workers (through the command rings). */
int dp_box_engine_counters(struct dp_box *b, uint64_t ctr[NR_ECTR_MAX]);
/* Snapshot of the job ids (and the workers of their channel 0); returns how many. */
unsigned dp_box_jobs(struct dp_box *b, uint32_t *ids, unsigned *workers, unsigned max);

#endif /* NR_DP_JOBS_H */
