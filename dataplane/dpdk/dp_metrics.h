/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The box's metrics and health over HTTP (dp_metrics.c):
 * netreduce-switch --metrics-listen IP:PORT serves
 *   GET /metrics   every counter the box keeps, Prometheus text format
 *   GET /healthz   200 "ok: ..." or 503 "unhealthy: <every failed check>"
 * from a thread on the box's control cores (an EAL control thread), never a
 * worker's lcore.  It reads the workers' counter blocks relaxed and what
 * they publish for it (engine counters, each channel's state and counters:
 * dp_snap.h, at most DP_SNAP_NS old), and sends no command to a worker, so a
 * scrape costs the workers nothing however many jobs the box holds; no lock
 * the loop takes.  Two scopes (ctl_http.h): the admin's (--metrics-token-file,
 * or loopback without tokens) gets every family, the box's
 * (--metrics-box-token-file) all but those naming jobs and tenants.
 */
#ifndef NR_DP_METRICS_H
#define NR_DP_METRICS_H

#include "control/api/ctl_metrics.h"
#include "control/api/nr_control.h"
#include "dataplane/dpdk/dp_state.h"

/*
 * Every family of the box into t (ctl, may be NULL: with the control API's
 * families: control counters, and with admin jobs by name and tenant and
 * the tenants).  While a worker is stuck what it published is stale: the
 * engine and per-job families are left out and netreduce_metrics_partial
 * says so.  0, or -ENOMEM.
 */
int dp_metrics_render(struct dp_box *b, struct nr_ctl *ctl, struct nr_mtext *t, bool admin);

struct dp_metrics_server;

/* Serve /metrics and /healthz on addr ("IP:PORT"), to requests that carry
 * bearer (the admin's scope) or bearer_box (the box's) where they are not
 * NULL (ctl_http.h: one needed beyond loopback), and start the workers'
 * snapshots; NULL and err on failure. */
struct dp_metrics_server *dp_metrics_start(struct dp_box *b, struct nr_ctl *ctl, const char *addr,
					   const char *bearer, const char *bearer_box, char *err,
					   size_t errlen);
/* The bound TCP port (addr's, or the one port 0 got). */
int dp_metrics_port(const struct dp_metrics_server *s);
/* Stop serving (before the box and the control API go). */
void dp_metrics_stop(struct dp_metrics_server *s);

#endif /* NR_DP_METRICS_H */
