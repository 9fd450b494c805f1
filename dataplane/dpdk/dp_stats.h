/* SPDX-License-Identifier: BSD-3-Clause */
/* Counters out (dp_stats.c): sums, the control API's stats and info, a line. */
#ifndef NR_DP_STATS_H
#define NR_DP_STATS_H

#include <stddef.h>

#include <jansson.h>

#include "dataplane/dpdk/dp_state.h"

/* The rte_eth_stats fields the box shows per port (JSON and telemetry). */
#define DP_FOREACH_PORT_STAT(_) \
	_(ipackets) _(opackets) _(ibytes) _(obytes) _(imissed) _(ierrors) _(oerrors) _(rx_nombuf)

/* Sum of every worker's counters. */
void dp_box_counters(const struct dp_box *b, struct dp_ctr *sum);
/* The control API's stats (ports, lcores, totals, engine) and backend_info. */
json_t *dp_stats_json(struct dp_box *b);
json_t *dp_info_json(struct dp_box *b);
/* One-line summary for --stats-interval. */
void dp_stats_line(struct dp_box *b, char *buf, size_t len);

#endif /* NR_DP_STATS_H */
