/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Short slots of the aggregation engine (agg_short.c): a slot completed
 * with one sender's contribution missing, within the job's bound.  Called
 * by agg_input.c after each data packet of a job with short_ppm.
 */
#ifndef NR_AGG_SHORT_H
#define NR_AGG_SHORT_H

#include <stdint.h>

#include "dataplane/engine/agg_internal.h"

/* A data packet of job j was handled: complete the slots next in emission
 * order short while each lacks one contribution whose sender has sent past it. */
void agg_short_input(struct agg_engine *e, struct agg_job *j, uint64_t now_ns);

/* Sender i's first packet of sequence x (p: its RETH) is in: kept for a
 * later message's lost first packet (a job with short_first). */
void agg_short_first_seen(struct agg_job *j, uint32_t i, uint64_t x, const struct nr_pkt *p);

#endif /* NR_AGG_SHORT_H */
