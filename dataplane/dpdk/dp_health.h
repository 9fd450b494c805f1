/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whether the box works (dp_health.c): its workers launched, every port's
 * link up, every worker's loop going round.  Read without waiting on the
 * dataplane: link status without waiting (rte_eth_link_get_nowait), the
 * workers' heartbeats (struct dp_worker's beat_tsc) relaxed.  The control
 * API's health op, GET /healthz and the systemd watchdog ask it.
 */
#ifndef NR_DP_HEALTH_H
#define NR_DP_HEALTH_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "dataplane/dpdk/dp_state.h"

struct dp_health {
	bool healthy;              /* every check passed */
	bool workers_ok;           /* launched and every worker polling (the watchdog's check) */
	unsigned n_ports, ports_up, n_workers, workers_polling;
	struct {
		bool up;
		uint32_t speed_mbps;
	} port[DP_MAX_PORTS];
	struct {
		bool polling;
		uint64_t age_ms;       /* since its last heartbeat */
	} worker[DP_MAX_WORKERS];
	uint64_t bound_ms;         /* a heartbeat older than this: stuck */
	char reason[640];          /* "" when healthy, else every failed check, "; " between */
};

/* Check the box now. */
void dp_health_check(struct dp_box *b, struct dp_health *h);
/* As an object: {"healthy", "reason", "ports_up", "ports", "workers_polling", "workers", ...}. */
json_t *dp_health_json(const struct dp_box *b, const struct dp_health *h);

#endif /* NR_DP_HEALTH_H */
