/* SPDX-License-Identifier: BSD-3-Clause */
/* Rank 0's client of the box's control API (nr_box_client.c). */
#ifndef NR_BOX_CLIENT_H
#define NR_BOX_CLIENT_H

#include "comm_internal.h"

/* job_create for element type t's box rings (dtype t): c->box[t] gets the job, its
 * key, credits, result key, and a thread that renews its lease. */
int nr_box_job_create(struct nr_comm *c, unsigned t);
/* The box's worker count (backend_info "workers"; 1 when it has none): NR_CHANNELS=auto. */
int nr_box_workers(struct nr_comm *c, unsigned *workers);
/*
 * job_status of c's box jobs (rank 0's, every element type's) over
 * connections of their own, summed: the counters of nr_comm_box_counters
 * (netreduce.h).  Touches no communicator state (any thread): 0, or
 * NR_ERR_BOX with err set.
 */
int nr_box_counters_get(const struct nr_comm *c, struct nr_box_counters *out, uint64_t *left_out,
			size_t n, char *err, size_t errlen);
/* Their job_status replies' "job" objects as JSON {"jobs": [...]} into buf
 * (nr_comm_box_status, netreduce.h): 0, NR_ERR_BOX or NR_ERR_INVALID (too
 * small: err says how much it takes) with err set. */
int nr_box_status_get(const struct nr_comm *c, char *buf, size_t len, char *err, size_t errlen);
/* job_destroy of c->box[t]'s job (best effort, over a fresh connection). */
void nr_box_job_destroy(struct nr_comm *c, unsigned t);
/* What the client holds beyond the jobs (NR_TLS_CA's context), after every
 * job_destroy. */
void nr_box_client_free(struct nr_comm *c);

#endif /* NR_BOX_CLIENT_H */
