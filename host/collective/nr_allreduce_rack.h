/* SPDX-License-Identifier: BSD-3-Clause */
/* All-reduce across racks (nr_allreduce_rack.c, docs/racks.md). */
#ifndef NR_ALLREDUCE_RACK_H
#define NR_ALLREDUCE_RACK_H

#include <stdbool.h>
#include <stddef.h>

#include "host/comm/comm_internal.h"

/* The communicator of cfg->racks (cfg checked): layout, the rack's and the agents' rings. */
int nr_rack_init(const struct nr_config *cfg, struct nr_comm **comm);
/* Rack sums, agents' rings across racks, back in the rack; ring: no box in any step. */
int nr_rack_allreduce(struct nr_comm *w, const float *src, float *dst, size_t count, bool ring);

#endif /* NR_ALLREDUCE_RACK_H */
