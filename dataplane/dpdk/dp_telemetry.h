/* SPDX-License-Identifier: BSD-3-Clause */
/* DPDK telemetry commands /netreduce/... (dp_telemetry.c). */
#ifndef NR_DP_TELEMETRY_H
#define NR_DP_TELEMETRY_H

#include "dataplane/dpdk/dp_state.h"

/* Register /netreduce/... telemetry commands for this box (one box a process). */
int dp_telemetry_register(struct dp_box *b);
/* Called by dp_box_destroy: telemetry stops reading b (waits for a running callback). */
void dp_telemetry_forget(struct dp_box *b);

#endif /* NR_DP_TELEMETRY_H */
