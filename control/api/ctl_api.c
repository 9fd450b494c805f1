/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control API core: backends, counters, the job table (ids, tenancy: a
 * QP serves one job, tenants' quotas), leases and the reaper, and the
 * snapshot the metrics read (ctl_jobs.h; the operations that use the table
 * are ctl_request.c's, the job spec's JSON ctl_spec.c's, the tenants table
 * ctl_tenant.c's).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control/api/ctl_jobs.h"
#include "control/api/ctl_log.h"
#include "control/api/ctl_spec.h"
#include "control/api/ctl_tenant.h"
#include "proto/nr_text.h"

void nr_ctl_count(struct nr_ctl *c, enum nr_ctl_ctr k)
{
	if (k < NR_CCTR_MAX)
		__atomic_fetch_add(&c->ctr[k], 1, __ATOMIC_RELAXED);
}

uint64_t nr_ctl_counter(struct nr_ctl *c, enum nr_ctl_ctr k)
{
	return k < NR_CCTR_MAX ? __atomic_load_n(&c->ctr[k], __ATOMIC_RELAXED) : 0;
}

struct nr_backend *nr_backend_new(const struct nr_backend_ops *ops, void *priv)
{
	struct nr_backend *b = calloc(1, sizeof(*b));

	if (b) {
		b->ops = ops;
		b->priv = priv;
	}
	return b;
}

void nr_backend_destroy(struct nr_backend *b)
{
	if (!b)
		return;
	if (b->ops->destroy)
		b->ops->destroy(b);
	free(b);
}

struct nr_ctl *nr_ctl_create(struct nr_backend *b)
{
	struct nr_ctl *c;

	if (!b)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (pthread_mutex_init(&c->lock, NULL)) {
		free(c);
		return NULL;
	}
	c->b = b;
	c->tenants.cap = (struct nr_backend_cap){ .jobs = NR_MAX_JOBS };
	if (b->ops->capacity) {
		struct nr_backend_cap cap = { 0 };

		b->ops->capacity(b, &cap);
		c->tenants.cap.channels = cap.channels;
		c->tenants.cap.mbufs = cap.mbufs;
		if (cap.jobs && cap.jobs < NR_MAX_JOBS)
			c->tenants.cap.jobs = cap.jobs;
	}
	c->next_id = 1;
	c->failed_ttl_ms = NR_CTL_FAILED_TTL_MS;
	c->default_lease_ms = NR_CTL_DEFAULT_LEASE_MS;
	return c;
}

void nr_ctl_set_default_lease(struct nr_ctl *c, uint32_t default_ms)
{
	pthread_mutex_lock(&c->lock);
	c->default_lease_ms = default_ms;
	pthread_mutex_unlock(&c->lock);
}

void nr_ctl_set_mac_pinning(struct nr_ctl *c, bool on)
{
	pthread_mutex_lock(&c->lock);
	c->mac_pinning = on;
	pthread_mutex_unlock(&c->lock);
}

uint64_t nr_ctl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void nr_ctl_set_failed_ttl(struct nr_ctl *c, uint32_t ttl_ms)
{
	pthread_mutex_lock(&c->lock);
	c->failed_ttl_ms = ttl_ms;
	pthread_mutex_unlock(&c->lock);
}

int nr_ctl_tenant_add(struct nr_ctl *c, const struct nr_ctl_tenant_cfg *t, char *err, size_t errlen)
{
	int rc;

	pthread_mutex_lock(&c->lock);
	rc = ctl_tenants_add(&c->tenants, t, err, errlen);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int nr_ctl_tenants_load(struct nr_ctl *c, const char *path, char *err, size_t errlen)
{
	int rc;

	pthread_mutex_lock(&c->lock);
	rc = ctl_tenants_load(&c->tenants, path, err, errlen);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

unsigned nr_ctl_tenants(struct nr_ctl *c)
{
	unsigned n;

	pthread_mutex_lock(&c->lock);
	n = c->tenants.n;
	pthread_mutex_unlock(&c->lock);
	return n;
}

int nr_ctl_authenticate_as(struct nr_ctl *c, const char *tenant, const char *token, size_t len)
{
	int t;

	pthread_mutex_lock(&c->lock);
	t = ctl_tenants_find(&c->tenants, tenant, token, len);
	pthread_mutex_unlock(&c->lock);
	return t;
}

int nr_ctl_authenticate(struct nr_ctl *c, const char *token, size_t len)
{
	return nr_ctl_authenticate_as(c, NULL, token, len);
}

int nr_ctl_tenant_conn_limit(struct nr_ctl *c, int who, char *name, size_t len,
			     uint32_t *max_conns)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&c->lock);
	if (who >= 0 && (unsigned)who < c->tenants.n) {
		snprintf(name, len, "%s", c->tenants.t[who].name);
		*max_conns = c->tenants.t[who].max_conns;
		rc = 0;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

void nr_ctl_tenant_conn_refused(struct nr_ctl *c, int who)
{
	nr_ctl_count(c, NR_CCTR_TENANT_CONNS_REFUSED);
	pthread_mutex_lock(&c->lock);
	if (who >= 0 && (unsigned)who < c->tenants.n)
		c->tenants.t[who].conns_refused++;
	pthread_mutex_unlock(&c->lock);
}

void nr_ctl_destroy(struct nr_ctl *c)
{
	unsigned i;

	if (!c)
		return;
	for (i = 0; i < NR_MAX_JOBS; i++) {
		if (!c->jobs[i].used)
			continue;
		c->b->ops->job_destroy(c->b, c->jobs[i].id);
		free(c->jobs[i].spec);
	}
	ctl_epidx_free(&c->eps);
	nr_backend_destroy(c->b);
	ctl_tenants_clear(&c->tenants);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* ---- jobs --------------------------------------------------------------- */

/* Who created a job: "admin", a tenant's name, or "tenant-N" (an id without one). */
const char *ctl_who_name(const struct nr_ctl *c, int who)
{
	static __thread char buf[24];

	if (who == NR_CTL_ADMIN)
		return "admin";
	if ((unsigned)who < c->tenants.n)
		return c->tenants.t[who].name;
	snprintf(buf, sizeof(buf), "tenant-%d", who);
	return buf;
}

/* "job=7 name=resnet tenant=vision": how every log line names a job. */
const char *ctl_job_label(const struct nr_ctl *c, const struct ctl_job *j, char *buf, size_t len)
{
	return nr_log_job(buf, len, j->id, j->name, ctl_who_name(c, j->tenant));
}

struct ctl_job *ctl_job_find(struct nr_ctl *c, uint32_t id)
{
	unsigned i;

	for (i = 0; i < NR_MAX_JOBS; i++)
		if (c->jobs[i].used && c->jobs[i].id == id)
			return &c->jobs[i];
	return NULL;
}

/*
 * A QP (IP, QPN) belongs to at most one job, in whatever role.  Only the
 * admin is told which job holds it: a tenant learns nothing of another's jobs.
 */
int ctl_check_tenancy(struct nr_ctl *c, const struct nr_job_spec *s, int who, char *err, size_t errlen)
{
	char a[INET_ADDRSTRLEN];

	for (uint32_t i = 0; i < nr_job_conns(s); i++) {
		const struct nr_conn_spec *x = &s->conns[i];
		const char *role = "receiver";
		uint32_t ip = x->dst_ip, qpn = x->dst_qpn;
		int slot = ctl_epidx_find(&c->eps, ip, qpn);

		if (slot < 0) {
			role = "sender", ip = x->src_ip, qpn = x->src_qpn;
			slot = ctl_epidx_find(&c->eps, ip, qpn);
		}
		if (slot >= 0) {
			char where[48], owner[24] = "another job";

			if (who == NR_CTL_ADMIN)
				snprintf(owner, sizeof(owner), "job %u", c->jobs[slot].id);
			snprintf(err, errlen,
				 "spec.%s: %s %s qpn %u belongs to %s; a QP serves one job",
				 nr_job_conn_name(s, i, where, sizeof(where)), role,
				 nr_ip4_str(ip, a), qpn, owner);
			return -EEXIST;
		}
	}
	return 0;
}

uint32_t ctl_alloc_id(struct nr_ctl *c)
{
	for (;;) {
		uint32_t id = c->next_id;

		c->next_id = id >= CTL_MAX_ID ? 1 : id + 1;
		if (!ctl_job_find(c, id))
			return id;
	}
}

/*
 * The tenant's limits against its jobs plus s: 0, or -EDQUOT with err.  An
 * id without a tenant (tests' callers) has none.
 */
int ctl_quota_check(struct nr_ctl *c, int who, const struct nr_job_spec *s, char *err, size_t errlen)
{
	const struct ctl_tenant *t;
	uint64_t need = nr_job_pool_bytes(s), used = 0;
	unsigned i, jobs = 0;

	if (who < 0 || (unsigned)who >= c->tenants.n)
		return 0;
	t = &c->tenants.t[who];
	for (i = 0; i < NR_MAX_JOBS; i++)
		if (c->jobs[i].used && c->jobs[i].tenant == who) {
			jobs++;
			used += nr_job_pool_bytes(c->jobs[i].spec);
		}
	if (t->max_jobs && jobs >= t->max_jobs) {
		snprintf(err, errlen, "tenant %s is at its quota: %u jobs of max_jobs %u; destroy one "
			 "first", t->name, jobs, t->max_jobs);
		return -EDQUOT;
	}
	if (t->max_pool_bytes && need > t->max_pool_bytes - (used < t->max_pool_bytes ? used : t->max_pool_bytes)) {
		snprintf(err, errlen, "tenant %s: the job needs %" PRIu64 " bytes of pool (ranks x pool "
			 "packets x mtu), %" PRIu64 " of its max_pool_bytes %" PRIu64 " are free; lower "
			 "NR_POOL_MSGS or NR_MSG_SIZE, or destroy a job", t->name, need,
			 used < t->max_pool_bytes ? t->max_pool_bytes - used : 0, t->max_pool_bytes);
		return -EDQUOT;
	}
	return 0;
}

int ctl_reserve_check(struct nr_ctl *c, int who, const struct nr_job_spec *s, char *err, size_t errlen)
{
	const struct ctl_tenants *ts = &c->tenants;
	const uint64_t cap[3] = { ts->cap.jobs, ts->cap.channels, ts->cap.mbufs };
	const uint64_t need[3] = { 1, nr_job_channels(s), nr_job_held_frames(s) };
	uint64_t used[NR_CTL_MAX_TENANTS][3] = { { 0 } }, all[3] = { 0 };
	bool any = false;

	for (unsigned t = 0; t < ts->n; t++)
		any |= ts->t[t].reserve_jobs + ts->t[t].reserve_channels + ts->t[t].reserve_mbufs > 0;
	if (!any)
		return 0;
	for (unsigned i = 0; i < NR_MAX_JOBS; i++) {
		const struct ctl_job *j = &c->jobs[i];

		if (!j->used)
			continue;
		const uint64_t u[3] = { 1, nr_job_channels(j->spec), nr_job_held_frames(j->spec) };

		for (unsigned r = 0; r < 3; r++) {
			all[r] += u[r];
			if (j->tenant >= 0 && (unsigned)j->tenant < ts->n)
				used[j->tenant][r] += u[r];
		}
	}
	for (unsigned r = 0; r < 3; r++) {
		uint64_t held_back = 0;
		char who_holds[160] = "";
		size_t n = 0;

		if (!cap[r])
			continue;
		for (unsigned t = 0; t < ts->n; t++) {
			const uint64_t res[3] = { ts->t[t].reserve_jobs, ts->t[t].reserve_channels,
						  ts->t[t].reserve_mbufs };

			if ((int)t == who || res[r] <= used[t][r])
				continue;
			held_back += res[r] - used[t][r];
			if (n < sizeof(who_holds))
				n += (size_t)snprintf(who_holds + n, sizeof(who_holds) - n,
						      "%s%s %" PRIu64, n ? ", " : "", ts->t[t].name,
						      res[r] - used[t][r]);
		}
		if (all[r] + held_back + need[r] <= cap[r] || held_back == 0)
			continue; /* it fits, or only the box's own limit refuses it: the backend says */
		/* the whole of it for the operator's log; a tenant learns nothing of the
		 * others' names or holdings (as a tenant's stats show none) */
		NR_LOG_RL(LOG_WARNING,
			  "netreduce control: tenant=%s: job_create refused: the box's %" PRIu64
			  " %s: %" PRIu64 " held, %" PRIu64 " more reserved for other tenants (%s, "
			  "the tenants file's %s), the job needs %" PRIu64,
			  ctl_who_name(c, who), cap[r], ctl_reserve_unit[r], all[r], held_back,
			  who_holds, ctl_reserve_field[r], need[r]);
		if (who >= 0 && (unsigned)who < ts->n)
			snprintf(err, errlen,
				 "the box has no room for the job's %" PRIu64 " %s beside what other "
				 "tenants reserved (the tenants file's %s): destroy a job, or ask the "
				 "operator for a reservation of this tenant's own",
				 need[r], ctl_reserve_unit[r], ctl_reserve_field[r]);
		else
			snprintf(err, errlen,
				 "the box's %" PRIu64 " %s: %" PRIu64 " held, %" PRIu64
				 " more reserved "
				 "for tenants (%s, the tenants file's %s), the job needs %" PRIu64
				 "; destroy a job",
				 cap[r], ctl_reserve_unit[r], all[r], held_back, who_holds,
				 ctl_reserve_field[r], need[r]);
		return -ENOSPC;
	}
	return 0;
}

/* Destroy j on the backend and forget it, logged at prio with why: 0 or the backend's -errno. */
int ctl_job_remove(struct nr_ctl *c, struct ctl_job *j, int prio, const char *why)
{
	int rc = c->b->ops->job_destroy(c->b, j->id);
	char lbl[160];

	if (rc && rc != -ENOENT) {
		nr_log(LOG_ERR, "netreduce control: %s: backend %s could not destroy it: %s",
		       ctl_job_label(c, j, lbl, sizeof(lbl)), c->b->ops->name, strerror(-rc));
		return rc;
	}
	NR_LOG_RL(prio, "netreduce control: %s: destroyed: %s",
		  ctl_job_label(c, j, lbl, sizeof(lbl)), why);
	ctl_epidx_del(&c->eps, j->spec, (unsigned)(j - c->jobs));
	free(j->spec);
	memset(j, 0, sizeof(*j));
	nr_ctl_count(c, NR_CCTR_JOBS_DESTROYED);
	return 0;
}

unsigned nr_ctl_reap(struct nr_ctl *c, uint64_t now_ms)
{
	struct nr_job_stats *st = calloc(1, sizeof(*st));
	unsigned i, n = 0;
	uint64_t t;

	if (!st)
		return 0;
	/* leases run on the control clock; the failed-job TTL on the caller's now_ms */
	t = nr_ctl_now_ms();
	pthread_mutex_lock(&c->lock);
	for (i = 0; i < NR_MAX_JOBS; i++) {
		struct ctl_job *j = &c->jobs[i];

		if (!j->used)
			continue;
		if (j->lease_ms && t - j->renewed_ms >= j->lease_ms) {
			char why[192];

			snprintf(why, sizeof(why), "its lease of %u ms lapsed (%u ranks, no job_renew for "
				 "%llu ms); its slots, QPs and held frames freed", j->lease_ms,
				 j->spec->n_conns, (unsigned long long)(t - j->renewed_ms));
			if (!ctl_job_remove(c, j, LOG_WARNING, why)) {
				nr_ctl_count(c, NR_CCTR_JOBS_EXPIRED);
				n++;
			}
			continue;
		}
		/* the first reap that sees the failure says why, and starts the TTL
		 * (with one: a TTL set later counts from the reap after it) */
		if ((!j->failed_logged || (c->failed_ttl_ms && !j->failed_ms)) &&
		    !c->b->ops->job_status(c->b, j->id, st) && st->state == NR_JOB_FAILED) {
			char lbl[160];

			if (!j->failed_logged) {
				st->reason[sizeof(st->reason) - 1] = '\0';
				NR_LOG_RL(LOG_WARNING, "netreduce control: %s: failed: %s",
					  ctl_job_label(c, j, lbl, sizeof(lbl)),
					  st->reason[0] ? st->reason : "(no reason given)");
				j->failed_logged = true;
			}
			if (c->failed_ttl_ms)
				j->failed_ms = now_ms ? now_ms : 1;
		}
		if (!c->failed_ttl_ms)
			continue;
		if (j->failed_ms && now_ms - j->failed_ms >= c->failed_ttl_ms &&
		    !ctl_job_remove(c, j, LOG_NOTICE, "failed longer than the failed-job TTL")) {
			nr_ctl_count(c, NR_CCTR_JOBS_REAPED);
			n++;
		}
	}
	pthread_mutex_unlock(&c->lock);
	free(st);
	return n;
}

/* ---- snapshot (metrics) ------------------------------------------------- */

int nr_ctl_snapshot(struct nr_ctl *c, bool status, unsigned wait_ms, struct nr_ctl_job_info **jobs,
		    unsigned *n_jobs, struct nr_ctl_tenant_info **tenants, unsigned *n_tenants)
{
	struct timespec until;
	struct nr_ctl_job_info *js;
	struct nr_ctl_tenant_info *ts;
	unsigned i, n = 0;
	uint64_t t;

	js = calloc(NR_MAX_JOBS, sizeof(*js));
	ts = calloc(NR_CTL_MAX_TENANTS, sizeof(*ts));
	if (!js || !ts) {
		free(js);
		free(ts);
		return -ENOMEM;
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += wait_ms / 1000;
	until.tv_nsec += (long)(wait_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	if (wait_ms ? pthread_mutex_timedlock(&c->lock, &until) != 0 : pthread_mutex_lock(&c->lock) != 0) {
		free(js);
		free(ts);
		return -EBUSY;
	}
	t = nr_ctl_now_ms();
	for (i = 0; i < NR_MAX_JOBS; i++) {
		const struct ctl_job *j = &c->jobs[i];
		struct nr_ctl_job_info *o = &js[n];

		if (!j->used)
			continue;
		o->id = j->id;
		memcpy(o->name, j->name, sizeof(o->name));
		snprintf(o->tenant, sizeof(o->tenant), "%s", ctl_who_name(c, j->tenant));
		o->ranks = j->spec->n_conns;
		o->channels = nr_job_channels(j->spec);
		o->pool_bytes = nr_job_pool_bytes(j->spec);
		o->lease_ms = j->lease_ms;
		o->lease_left_ms = j->lease_ms && t - j->renewed_ms < j->lease_ms ?
				   j->lease_ms - (t - j->renewed_ms) : 0;
		o->status_rc = status && !c->b->ops->job_published
				       ? c->b->ops->job_status(c->b, j->id, &o->st)
				       : -EAGAIN;
		n++;
	}
	if (status && c->b->ops->job_published && n) {
		uint32_t ids[NR_MAX_JOBS];
		struct nr_job_stats *st[NR_MAX_JOBS];
		int rc[NR_MAX_JOBS];

		for (i = 0; i < n; i++) {
			ids[i] = js[i].id;
			st[i] = &js[i].st;
		}
		c->b->ops->job_published(c->b, ids, n, st, rc);
		for (i = 0; i < n; i++)
			js[i].status_rc = rc[i];
	}
	for (i = 0; i < c->tenants.n; i++) {
		const struct ctl_tenant *x = &c->tenants.t[i];

		memcpy(ts[i].name, x->name, sizeof(ts[i].name));
		ts[i].max_jobs = x->max_jobs;
		ts[i].max_pool_bytes = x->max_pool_bytes;
		ts[i].quota_refused = x->quota_refused;
		ts[i].addr_refused = x->addr_refused;
		ts[i].conns_refused = x->conns_refused;
		ts[i].max_conns = x->max_conns;
		for (unsigned k = 0; k < NR_MAX_JOBS; k++)
			if (c->jobs[k].used && c->jobs[k].tenant == (int)i) {
				ts[i].jobs++;
				ts[i].pool_bytes += nr_job_pool_bytes(c->jobs[k].spec);
			}
	}
	*n_tenants = c->tenants.n;
	pthread_mutex_unlock(&c->lock);
	*jobs = js;
	*n_jobs = n;
	*tenants = ts;
	return 0;
}
