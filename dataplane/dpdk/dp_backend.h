/* SPDX-License-Identifier: BSD-3-Clause */
/* The box as the control API's backend "sw" (dp_backend.c). */
#ifndef NR_DP_BACKEND_H
#define NR_DP_BACKEND_H

#include "control/api/nr_control.h"
#include "dataplane/dpdk/dp_state.h"

/* Register the box with the control API: hand the result to nr_ctl_create()
 * (the box outlives it).  NULL when out of memory. */
struct nr_backend *dp_backend_create(struct dp_box *b);

#endif /* NR_DP_BACKEND_H */
