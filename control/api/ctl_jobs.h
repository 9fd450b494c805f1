/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the control API (control/api/ only): the job table that ctl_api.c
 * keeps and ctl_request.c's operations read and change.  Calls run one way:
 * the operations call the table, never the reverse.
 *
 * Lock contract: c->lock protects jobs[], next_id and the tenants and
 * serialises every backend call; every function here runs under it.
 * Counters are atomics, readable without the lock.
 */
#ifndef NR_CTL_JOBS_H
#define NR_CTL_JOBS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "control/api/ctl_epidx.h"
#include "control/api/ctl_tenant.h"
#include "control/api/nr_control.h"

#define CTL_KEY_BYTES 16
#define CTL_MAX_ID    1000000u

struct ctl_job {
	bool used;
	uint32_t id;
	uint32_t credits;
	uint8_t key[CTL_KEY_BYTES];
	struct nr_job_spec *spec; /* with result_key filled in */
	uint64_t failed_ms;       /* when a reap first saw it failed (its now_ms); 0: not yet */
	uint32_t lease_ms;        /* 0: no lease */
	uint64_t renewed_ms;      /* created or last renewed (nr_ctl_now_ms) */
	int tenant;               /* who created it: NR_CTL_ADMIN or a tenant id */
	bool failed_logged;       /* a reap saw it failed and said so */
	char name[NR_CTL_JOB_NAME_MAX + 1]; /* "" without one */
};

struct nr_ctl {
	struct nr_backend *b;
	pthread_mutex_t lock;
	uint32_t next_id;
	uint32_t failed_ttl_ms;
	uint32_t default_lease_ms; /* of TCP jobs that ask for none */
	struct ctl_epidx eps;      /* the QPs the jobs hold (ctl_check_tenancy) */
	bool mac_pinning;          /* the backend pins MACs for tenants (nr_ctl_set_mac_pinning) */
	struct ctl_job jobs[NR_MAX_JOBS];
	struct ctl_tenants tenants;
	uint64_t ctr[NR_CCTR_MAX];
};

/* Who created a job: "admin", a tenant's name, or "tenant-N" (an id without one). */
const char *ctl_who_name(const struct nr_ctl *c, int who);
/* "job=7 name=resnet tenant=vision": how every log line names a job. */
const char *ctl_job_label(const struct nr_ctl *c, const struct ctl_job *j, char *buf, size_t len);
struct ctl_job *ctl_job_find(struct nr_ctl *c, uint32_t id);
/* A QP (IP, QPN) of s held by another job: -EEXIST with err (the job named to the admin
 * only); O(connections of s) through c->eps. */
int ctl_check_tenancy(struct nr_ctl *c, const struct nr_job_spec *s, int who, char *err,
		      size_t errlen);
/* A job id no job holds. */
uint32_t ctl_alloc_id(struct nr_ctl *c);
/* The tenant's limits against its jobs plus s: 0, or -EDQUOT with err. */
int ctl_quota_check(struct nr_ctl *c, int who, const struct nr_job_spec *s, char *err, size_t errlen);
/*
 * Whether job s of who (a tenant, or the admin) fits beside the other
 * tenants' reservations: what the box holds less what every job holds less
 * what each other tenant reserved and does not use.  0, or -ENOSPC with err
 * naming the resource (to a tenant nothing of the others; the log, and the
 * admin, the reservations in the way), logged.
 */
int ctl_reserve_check(struct nr_ctl *c, int who, const struct nr_job_spec *s, char *err,
		      size_t errlen);
/* Destroy j on the backend and forget it, logged at prio with why: 0 or the backend's -errno. */
int ctl_job_remove(struct nr_ctl *c, struct ctl_job *j, int prio, const char *why);

#endif /* NR_CTL_JOBS_H */
