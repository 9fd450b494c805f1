/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The box's jobs, on the control side: which worker owns each job (the least
 * loaded one when it is added), the QPN owner map that sends its frames
 * there, and the job operations the box's control backend calls, each run on
 * the owning lcore through its command ring (dp_cmd.c).  Every function
 * takes box->ctl_lock; the loop never does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/dpdk/dp_cmd.h"
#include "dataplane/dpdk/dp_jobs.h"
#include "dataplane/dpdk/dp_log.h"
#include "proto/nr_text.h"

static int job_find(const struct dp_box *b, uint32_t id)
{
	for (unsigned i = 0; i < b->n_jobs; i++)
		if (b->job_id[i] == id)
			return (int)i;
	return -1;
}

static void owners_update(struct dp_box *b, const struct nr_job_spec *s, int worker)
{
	for (unsigned i = 0; i < s->n_conns; i++) {
		const struct nr_conn_spec *cs = &s->conns[i];

		if (worker >= 0) {
			dp_owner_set(b->owners, cs->dst_ip, cs->dst_qpn, (unsigned)worker);
			dp_owner_set(b->owners, cs->src_ip, cs->src_qpn, (unsigned)worker);
		} else {
			dp_owner_clear(b->owners, cs->dst_ip, cs->dst_qpn);
			dp_owner_clear(b->owners, cs->src_ip, cs->src_qpn);
		}
	}
}

/* A connection owned by another worker's job: -EEXIST naming it. */
static int owners_conflict(struct dp_box *b, const struct nr_job_spec *s, unsigned worker,
			   char *err, size_t errlen)
{
	for (unsigned i = 0; i < s->n_conns; i++) {
		const struct nr_conn_spec *cs = &s->conns[i];
		int o = dp_owner_get(b->owners, cs->dst_ip, cs->dst_qpn);
		char ip[INET_ADDRSTRLEN];

		if (o >= 0 && (unsigned)o != worker) {
			snprintf(err, errlen, "conns[%u]: receiver %s qpn 0x%x already belongs to another job",
				 i, nr_ip4_str(cs->dst_ip, ip), cs->dst_qpn);
			return -EEXIST;
		}
	}
	return 0;
}

int dp_job_add(struct dp_box *b, uint32_t id, const struct nr_job_spec *spec,
	       uint32_t *credits, char *err, size_t errlen)
{
	unsigned load[DP_MAX_WORKERS] = { 0 }, best = 0;
	struct dp_cmd *c;
	int rc;

	pthread_mutex_lock(&b->ctl_lock);
	if (job_find(b, id) >= 0) {
		snprintf(err, errlen, "job %u already exists on the dataplane", id);
		rc = -EEXIST;
		goto out;
	}
	if (b->n_jobs >= RTE_DIM(b->job_id)) {
		snprintf(err, errlen, "dataplane full: %u jobs", b->n_jobs);
		rc = -ENOSPC;
		goto out;
	}
	for (unsigned i = 0; i < b->n_jobs; i++)
		load[b->job_worker[i]]++;
	for (unsigned i = 1; i < b->n_workers; i++)
		if (load[i] < load[best])
			best = i;
	if (load[best] >= NR_MAX_JOBS) {
		snprintf(err, errlen, "dataplane full: %u jobs on each of %u workers", NR_MAX_JOBS, b->n_workers);
		rc = -ENOSPC;
		goto out;
	}
	rc = owners_conflict(b, spec, best, err, errlen);
	if (rc)
		goto out;
	c = dp_cmd_new(DP_CMD_JOB_ADD, id, spec);
	if (c == NULL) {
		snprintf(err, errlen, "out of memory for a job command");
		rc = -ENOMEM;
		goto out;
	}
	rc = dp_cmd_call(b, b->workers[best], c, err, errlen);
	if (rc)
		goto out;
	rc = c->rc;
	if (rc == 0) {
		b->job_spec[b->n_jobs] = malloc(nr_job_spec_size(spec->n_conns));
		if (b->job_spec[b->n_jobs])
			memcpy(b->job_spec[b->n_jobs], spec, nr_job_spec_size(spec->n_conns));
		*credits = c->credits;
		b->job_id[b->n_jobs] = id;
		b->job_worker[b->n_jobs] = (uint8_t)best;
		b->n_jobs++;
		owners_update(b, spec, (int)best);
		if (b->job_spec[b->n_jobs - 1] == NULL)
			DP_LOG(WARNING, "job %u: no memory to remember its connections; its owner entries stay after destroy", id);
	} else {
		snprintf(err, errlen, "%s", c->err);
	}
	free(c);
out:
	pthread_mutex_unlock(&b->ctl_lock);
	return rc;
}

/*
 * Run a command on the worker owning job id (ctl_lock held): -ENOENT when no
 * such job, else the worker's answer; *slot gets the job's index.  A command
 * the worker did not answer in time stays with it (it frees it when done).
 */
static int job_cmd(struct dp_box *b, int type, uint32_t id, const char *what, int *slot,
		   struct nr_job_stats *st)
{
	char err[256];
	struct dp_cmd *c;
	int rc;

	*slot = job_find(b, id);
	if (*slot < 0)
		return -ENOENT;
	c = dp_cmd_new(type, id, NULL);
	if (c == NULL)
		return -ENOMEM;
	rc = dp_cmd_call(b, b->workers[b->job_worker[*slot]], c, err, sizeof(err));
	if (rc) {
		DP_LOG(ERR, "job %u %s: %s", id, what, err);
		return rc;
	}
	rc = c->rc;
	if (rc == 0 && st)
		*st = c->st;
	free(c);
	return rc;
}

int dp_job_del(struct dp_box *b, uint32_t id)
{
	int i, rc;

	pthread_mutex_lock(&b->ctl_lock);
	rc = job_cmd(b, DP_CMD_JOB_DEL, id, "destroy", &i, NULL);
	if (i >= 0 && (rc == 0 || rc == -ENOENT)) {
		if (b->job_spec[i])
			owners_update(b, b->job_spec[i], -1);
		free(b->job_spec[i]);
		b->n_jobs--;
		b->job_id[i] = b->job_id[b->n_jobs];
		b->job_worker[i] = b->job_worker[b->n_jobs];
		b->job_spec[i] = b->job_spec[b->n_jobs];
	}
	pthread_mutex_unlock(&b->ctl_lock);
	return rc;
}

int dp_job_stats(struct dp_box *b, uint32_t id, struct nr_job_stats *st)
{
	int i, rc;

	pthread_mutex_lock(&b->ctl_lock);
	rc = job_cmd(b, DP_CMD_JOB_STATS, id, "status", &i, st);
	pthread_mutex_unlock(&b->ctl_lock);
	return rc;
}

int dp_box_engine_counters(struct dp_box *b, uint64_t ctr[NR_ECTR_MAX])
{
	char err[256];
	int rc = 0;

	memset(ctr, 0, sizeof(uint64_t) * NR_ECTR_MAX);
	pthread_mutex_lock(&b->ctl_lock);
	for (unsigned w = 0; w < b->n_workers; w++) {
		struct dp_cmd *c = dp_cmd_new(DP_CMD_ENGINE_CTRS, 0, NULL);
		int r;

		if (c == NULL) {
			rc = -ENOMEM;
			break;
		}
		r = dp_cmd_call(b, b->workers[w], c, err, sizeof(err));
		if (r) {
			DP_LOG(WARNING, "engine counters: %s", err);
			rc = r;
			continue;
		}
		for (unsigned i = 0; i < NR_ECTR_MAX; i++)
			ctr[i] += c->eng[i];
		free(c);
	}
	pthread_mutex_unlock(&b->ctl_lock);
	return rc;
}

/* Job list snapshot for telemetry: ids and owning workers. */
unsigned dp_box_jobs(struct dp_box *b, uint32_t *ids, unsigned *workers, unsigned max)
{
	unsigned n;

	pthread_mutex_lock(&b->ctl_lock);
	n = RTE_MIN(max, b->n_jobs);
	for (unsigned i = 0; i < n; i++) {
		ids[i] = b->job_id[i];
		if (workers)
			workers[i] = b->job_worker[i];
	}
	pthread_mutex_unlock(&b->ctl_lock);
	return n;
}
