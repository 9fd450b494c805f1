/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The box's ports around a device that aggregates in the engines' place
 * (struct dp_dev_ops in dp_state.h; netreduce-switch --backend rtl): the
 * worker hands every received frame to the device and sends what the device
 * sends (dp_dev.c).
 */
#ifndef NR_DP_DEV_H
#define NR_DP_DEV_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "dataplane/dpdk/dp_state.h"

/* Every frame of a burst (counted in rx) to the device, then what it sent. */
void dp_dev_burst(struct dp_worker *w, struct rte_mbuf **pkts, uint16_t n);
/* The device's millisecond clock, from the worker's (its housekeeping). */
void dp_dev_tick(struct dp_worker *w);

#endif /* NR_DP_DEV_H */
