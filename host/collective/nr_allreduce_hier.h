/* SPDX-License-Identifier: BSD-3-Clause */
/* All-reduce on hosts with several ranks (nr_allreduce_hier.c). */
#ifndef NR_ALLREDUCE_HIER_H
#define NR_ALLREDUCE_HIER_H

#include <stdbool.h>
#include <stddef.h>

#include "host/comm/comm_internal.h"

/* The communicator of cfg->local_size > 1 (cfg checked): layout, variant, shared memory, columns. */
int nr_hier_init(const struct nr_config *cfg, struct nr_comm **comm);
/* Parallel or hierarchical through the box; ring: the columns' plain rings instead. */
int nr_hier_allreduce(struct nr_comm *w, const float *src, float *dst, size_t count, bool ring);
/* "parallel" or "hierarchical". */
const char *nr_hier_variant_name(const struct nr_comm *w);

#endif /* NR_ALLREDUCE_HIER_H */
