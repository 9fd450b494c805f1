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
void nr_short_input(struct nr_engine *e, struct nr_job *j, uint64_t now_ns);

#endif /* NR_AGG_SHORT_H */
