/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control -> lcore: the command ring of a worker (dp_cmd.c).  The control
 * side posts a command and waits for the lcore's answer; the lcore serves
 * its ring once per loop iteration, without a lock.
 */
#ifndef NR_DP_CMD_H
#define NR_DP_CMD_H

#include <stddef.h>
#include <stdint.h>

#include "dataplane/dpdk/dp_state.h"

enum dp_cmd_type { DP_CMD_JOB_ADD, DP_CMD_JOB_DEL, DP_CMD_JOB_STATS, DP_CMD_ENGINE_CTRS };

struct dp_cmd {
	int type;
	int state;                 /* atomic: enum dp_cmd_state */
	uint32_t id;
	int rc;
	uint32_t credits;
	unsigned n_jobs;
	char err[256];
	struct nr_job_stats st;
	uint64_t eng[NR_ECTR_MAX];
	struct nr_job_spec spec;   /* must stay last: conns[] follow */
};

/* A command for job id (spec copied when given); NULL when out of memory. */
struct dp_cmd *dp_cmd_new(int type, uint32_t id, const struct nr_job_spec *spec);
/*
 * Run c on worker w (the caller holds b->ctl_lock).  Returns 0 when c
 * completed (c->rc holds the answer; the caller frees c) or -ETIMEDOUT /
 * -ENOBUFS with err saying why (c is gone: freed here, or by the lcore when
 * it gets to it).
 */
int dp_cmd_call(struct dp_box *b, struct dp_worker *w, struct dp_cmd *c, char *err, size_t errlen);
/* Serve the command ring (once per loop iteration): commands served. */
unsigned dp_cmd_service(struct dp_worker *w);

#endif /* NR_DP_CMD_H */
