/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The burst loop of a worker lcore (dp_loop.c) and its stages, each over
 * (worker, pkts, n), no globals: a test or a benchmark calls them without a
 * port.
 */
#ifndef NR_DP_LOOP_H
#define NR_DP_LOOP_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "dataplane/dpdk/dp_state.h"

/* The loop of one worker lcore (rte_lcore_function_t): runs until box->quit. */
int dp_worker_main(void *arg);
/* Parse and act on a burst received on port (stored in mbuf->port). */
void dp_burst(struct dp_worker *w, uint16_t port, struct rte_mbuf **pkts, uint16_t n);
/* The same for frames handed in by another lcore (already counted in rx
 * there); they keep the mbuf->port of their ingress. */
void dp_burst_handoff(struct dp_worker *w, struct rte_mbuf **pkts, uint16_t n);

#endif /* NR_DP_LOOP_H */
