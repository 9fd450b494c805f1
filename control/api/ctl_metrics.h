/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Metrics in the Prometheus text format (version 0.0.4), which Prometheus
 * and OpenMetrics parsers read (ctl_metrics.c): a growing text buffer, the
 * helpers every family goes through (HELP and TYPE once, then its samples,
 * label values escaped), and the control API's own families:
 *
 *   netreduce_control_*      the control counters, jobs held
 *   netreduce_tenant_*       per tenant: jobs, pool bytes, limits, quota refusals
 *   netreduce_job_*          per job, labelled job (id), name and tenant, never
 *                            a key or token: ranks, state, lease, slots, and
 *                            every engine counter of the job
 *
 * Names follow Prometheus' naming guide: netreduce_ prefix, the unit in the
 * name (_bytes, _seconds, _frames), counters end in _total.
 */
#ifndef NR_CTL_METRICS_H
#define NR_CTL_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/api/nr_control.h"

/* A text that grows as needed; oom set (and text kept short) when it could not. */
struct nr_mtext {
	char *buf;
	size_t len, cap;
	bool oom;
};

void nr_mtext_free(struct nr_mtext *t);
void nr_mtext_printf(struct nr_mtext *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "# HELP name help" and "# TYPE name type" (counter, gauge): once a family. */
void nr_mx_family(struct nr_mtext *t, const char *name, const char *type, const char *help);
/* One sample: name{labels} value; labels "" or from nr_mx_labels. */
void nr_mx_u64(struct nr_mtext *t, const char *name, const char *labels, uint64_t v);
void nr_mx_f64(struct nr_mtext *t, const char *name, const char *labels, double v);
/*
 * Labels from pairs of (name, value) strings ending with NULL, values
 * escaped (backslash, double quote, newline): `job="7",tenant="vision"`.
 * Returns buf (truncated to "" when it does not fit).
 */
char *nr_mx_labels(char *buf, size_t len, ...) __attribute__((sentinel));

/*
 * The control API's families into t, what says which:
 *   0                    the control counters and how many jobs (the box's
 *                        scope: no job's name, no tenant's limits)
 *   NR_MX_ADMIN          and each job by id, name and tenant, each tenant's
 *                        limits and reservations (the admin's scope)
 *   NR_MX_STATUS         with NR_MX_ADMIN: each job's state and counters from
 *                        the backend too, as the dataplane last published
 *                        them where it does (nr_backend_ops.job_published),
 *                        else asked (left out for a scrape that must not wait
 *                        on a stuck dataplane)
 * 0, -ENOMEM, or -EBUSY (nothing written) when a request held nr_ctl's lock
 * for NR_CTL_METRICS_WAIT_MS.
 */
#define NR_CTL_METRICS_WAIT_MS 250
#define NR_MX_ADMIN            1u
#define NR_MX_STATUS           2u
int nr_ctl_metrics(struct nr_ctl *c, struct nr_mtext *t, unsigned what);

#endif /* NR_CTL_METRICS_H */
