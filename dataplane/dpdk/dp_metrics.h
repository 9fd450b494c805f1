/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The box's metrics and health over HTTP (dp_metrics.c):
 * netreduce-switch --metrics-listen IP:PORT serves
 *   GET /metrics   every counter the box keeps, Prometheus text format
 *   GET /healthz   200 "ok: ..." or 503 "unhealthy: <every failed check>"
 * from a thread on the box's control cores (an EAL control thread), never a
 * worker's lcore.  It reads the counters the way the control API's stats and
 * DPDK telemetry do: the workers' blocks relaxed, engine counters and job
 * status through the command rings; no lock the loop takes.
 */
#ifndef NR_DP_METRICS_H
#define NR_DP_METRICS_H

#include "control/api/ctl_metrics.h"
#include "control/api/nr_control.h"
#include "dataplane/dpdk/dp_state.h"

/*
 * Every family of the box into t (ctl, may be NULL: with the control API's
 * families: jobs by name and tenant, tenants, control counters).  A worker
 * that is stuck would hold every command-ring read for its timeout: then
 * the engine and per-job families are left out and netreduce_metrics_partial
 * says so.  0, or -ENOMEM.
 */
int dp_metrics_render(struct dp_box *b, struct nr_ctl *ctl, struct nr_mtext *t);

struct dp_metrics_server;

/* Serve /metrics and /healthz on addr ("IP:PORT"), to requests that carry
 * bearer where it is not NULL (ctl_http.h: needed beyond loopback); NULL and
 * err on failure. */
struct dp_metrics_server *dp_metrics_start(struct dp_box *b, struct nr_ctl *ctl, const char *addr,
					   const char *bearer, char *err, size_t errlen);
/* The bound TCP port (addr's, or the one port 0 got). */
int dp_metrics_port(const struct dp_metrics_server *s);
/* Stop serving (before the box and the control API go). */
void dp_metrics_stop(struct dp_metrics_server *s);

#endif /* NR_DP_METRICS_H */
