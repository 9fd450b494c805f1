/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * netreduce-switch: the DPDK box around the aggregation engine.  This is the
 * box's API for its program (dataplane/switch/), tests and benchmarks: its
 * life cycle (dp_box.c) and the headers of its parts.  Its files, bottom up,
 * each calling only the ones above it: dataplane/README.md, "Files".
 */
#ifndef NR_DP_BOX_H
#define NR_DP_BOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "dataplane/dpdk/dp_backend.h"
#include "dataplane/dpdk/dp_dev.h"
#include "dataplane/dpdk/dp_emit.h"
#include "dataplane/dpdk/dp_health.h"
#include "dataplane/dpdk/dp_jobs.h"
#include "dataplane/dpdk/dp_log.h"
#include "dataplane/dpdk/dp_loop.h"
#include "dataplane/dpdk/dp_metrics.h"
#include "dataplane/dpdk/dp_opts.h"
#include "dataplane/dpdk/dp_state.h"
#include "dataplane/dpdk/dp_stats.h"
#include "dataplane/dpdk/dp_telemetry.h"

/*
 * Create the box on already probed ports (port ids) with the given worker
 * lcores (must be enabled EAL lcores other than the main one, or the main
 * lcore itself for dp_worker_main() called directly).  pool may be NULL (the
 * box makes one of cfg->pool_mbufs).  Configures and starts the ports.
 * Returns NULL with err filled on failure.
 */
struct dp_box *dp_box_create(const struct dp_cfg *cfg, const uint16_t *ports, unsigned n_ports,
			     const unsigned *lcores, unsigned n_lcores, struct rte_mempool *pool,
			     char *err, size_t errlen);
/*
 * Hand every frame to a device instead of the engines (struct dp_dev_ops,
 * dp_dev.c), before dp_box_launch; one worker lcore.  0, or -errno with err.
 */
int dp_box_set_dev(struct dp_box *b, const struct dp_dev_ops *ops, void *ctx, char *err,
		   size_t errlen);
/* Launch every worker's loop on its lcore. */
int dp_box_launch(struct dp_box *b);
/* Ask the loops to stop and wait for them. */
void dp_box_stop(struct dp_box *b);
/* Stop, destroy engines (held mbufs freed), stop and close ports. */
void dp_box_destroy(struct dp_box *b, bool close_ports);

#endif /* NR_DP_BOX_H */
