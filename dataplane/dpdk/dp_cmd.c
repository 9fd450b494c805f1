/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control -> dataplane: the command rings and the box's jobs (dp_job_add,
 * dp_job_del, dp_job_stats: what the box's control backend calls).
 *
 * The control side (the control server's thread, a telemetry thread, a test)
 * takes box->ctl_lock, copies the request into a malloc'd command, posts it on
 * the owning worker's ring (single producer: the lock) and waits for the
 * worker to flip the command's state from PENDING to DONE (release store by
 * the lcore, acquire load here), for at most DP_CMD_TIMEOUT_MS.  On timeout it
 * flips PENDING to ABANDONED instead and returns "dataplane lcore N did not
 * answer"; the lcore, finding ABANDONED, frees the command itself.  The loop
 * takes no lock: it dequeues once per iteration, copies the spec into its
 * engine, and answers.  Before the workers are launched (or after they have
 * been joined) the command runs inline on the caller's thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ring.h>

#include "dataplane/dpdk/dp_box.h"
#include "proto/nr_text.h"

enum dp_cmd_type { DP_CMD_JOB_ADD, DP_CMD_JOB_DEL, DP_CMD_JOB_STATS, DP_CMD_ENGINE_CTRS };
enum dp_cmd_state { DP_CMD_PENDING, DP_CMD_DONE, DP_CMD_ABANDONED };

struct dp_cmd {
	int type;
	int state;                 /* atomic: enum dp_cmd_state */
	uint32_t id;
	int rc;
	uint32_t credits;
	unsigned n_jobs;
	char err[256];
	struct nr_job_stats st;
	uint64_t eng[NR_ECTR_MAX];
	struct nr_job_spec spec;   /* must stay last: conns[] follow */
};

static size_t spec_size(const struct nr_job_spec *s)
{
	return sizeof(*s) + (size_t)s->n_conns * sizeof(s->conns[0]);
}

/* ---- owner map ---------------------------------------------------------- */

static inline uint64_t own_key(uint32_t daddr, uint32_t qpn)
{
	return ((uint64_t)daddr << 24) | (qpn & NR_BTH_QPN_MASK);
}

static inline unsigned own_hash(uint64_t key)
{
	return (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 48) & (DP_OWN_SIZE - 1);
}

int dp_owner_get(const struct dp_owner_map *m, uint32_t daddr, uint32_t qpn)
{
	uint64_t key = own_key(daddr, qpn);

	for (unsigned i = own_hash(key), k = 0; k < DP_OWN_SIZE; i = (i + 1) & (DP_OWN_SIZE - 1), k++) {
		uint64_t v = __atomic_load_n(&m->e[i], __ATOMIC_ACQUIRE);

		if (v == 0)
			return -1;
		if ((v >> 8) == key)
			return (v & 0xFF) ? (int)(v & 0xFF) - 1 : -1;
	}
	return -1;
}

int dp_owner_set(struct dp_owner_map *m, uint32_t daddr, uint32_t qpn, unsigned worker)
{
	uint64_t key = own_key(daddr, qpn);

	for (unsigned i = own_hash(key), k = 0; k < DP_OWN_SIZE; i = (i + 1) & (DP_OWN_SIZE - 1), k++) {
		uint64_t v = m->e[i];

		if (v == 0 || (v >> 8) == key) {
			__atomic_store_n(&m->e[i], (key << 8) | (worker + 1), __ATOMIC_RELEASE);
			return 0;
		}
	}
	return -ENOSPC;
}

/* Removal leaves the key with worker 0 (a tombstone reused by the same key). */
void dp_owner_clear(struct dp_owner_map *m, uint32_t daddr, uint32_t qpn)
{
	uint64_t key = own_key(daddr, qpn);

	for (unsigned i = own_hash(key), k = 0; k < DP_OWN_SIZE; i = (i + 1) & (DP_OWN_SIZE - 1), k++) {
		uint64_t v = m->e[i];

		if (v == 0)
			return;
		if ((v >> 8) == key) {
			__atomic_store_n(&m->e[i], key << 8, __ATOMIC_RELEASE);
			return;
		}
	}
}

/* ---- lcore side --------------------------------------------------------- */

static int ep_add(struct dp_worker *w, uint32_t id, const struct nr_job_spec *s)
{
	struct dp_job_ep *j;

	if (w->n_jobs >= NR_MAX_JOBS)
		return -ENOSPC;
	j = &w->jobs[w->n_jobs];
	j->ep = calloc(2 * (size_t)s->n_conns, sizeof(*j->ep));
	if (j->ep == NULL)
		return -ENOMEM;
	j->id = id;
	j->n_conns = s->n_conns;
	for (unsigned i = 0; i < s->n_conns; i++) {
		j->ep[2 * i].ip = s->conns[i].src_ip;
		memcpy(j->ep[2 * i].mac, s->conns[i].src_mac, 6);
		j->ep[2 * i + 1].ip = s->conns[i].dst_ip;
		memcpy(j->ep[2 * i + 1].mac, s->conns[i].dst_mac, 6);
	}
	w->n_jobs++;
	dp_crc_shift_add(w, s->mtu);
	return 0;
}

static void ep_del(struct dp_worker *w, uint32_t id)
{
	for (unsigned j = 0; j < w->n_jobs; j++)
		if (w->jobs[j].id == id) {
			free(w->jobs[j].ep);
			w->jobs[j] = w->jobs[--w->n_jobs];
			return;
		}
}

static void cmd_exec(struct dp_worker *w, struct dp_cmd *c)
{
	switch (c->type) {
	case DP_CMD_JOB_ADD:
		c->rc = nr_engine_job_add(w->eng, c->id, &c->spec, w->now_ns, &c->credits,
					  c->err, sizeof(c->err));
		if (c->rc == 0 && ep_add(w, c->id, &c->spec) != 0) {
			nr_engine_job_del(w->eng, c->id);
			c->rc = -ENOMEM;
			snprintf(c->err, sizeof(c->err), "worker %u: out of memory for job %u's endpoints",
				 w->idx, c->id);
		}
		break;
	case DP_CMD_JOB_DEL:
		c->rc = nr_engine_job_del(w->eng, c->id);
		ep_del(w, c->id);
		break;
	case DP_CMD_JOB_STATS:
		c->rc = nr_engine_job_stats(w->eng, c->id, &c->st);
		break;
	case DP_CMD_ENGINE_CTRS:
		nr_engine_counters(w->eng, c->eng);
		c->n_jobs = w->n_jobs;
		c->rc = 0;
		break;
	default:
		c->rc = -EINVAL;
	}
}

unsigned dp_cmd_service(struct dp_worker *w)
{
	void *objs[4];
	unsigned n;

	if (likely(rte_ring_empty(w->cmd)))
		return 0;
	n = rte_ring_sc_dequeue_burst(w->cmd, objs, RTE_DIM(objs), NULL);
	for (unsigned i = 0; i < n; i++) {
		struct dp_cmd *c = objs[i];
		int expect = DP_CMD_PENDING;

		cmd_exec(w, c);
		w->ctr.c[DP_CTR_CMDS]++;
		if (!__atomic_compare_exchange_n(&c->state, &expect, DP_CMD_DONE, false,
						 __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
			free(c);   /* the caller gave up waiting */
	}
	return n;
}

/* ---- control side (caller holds box->ctl_lock) -------------------------- */

static struct dp_cmd *cmd_new(int type, uint32_t id, const struct nr_job_spec *spec)
{
	size_t extra = spec ? spec_size(spec) - sizeof(*spec) : 0;
	struct dp_cmd *c = calloc(1, sizeof(*c) + extra);

	if (c == NULL)
		return NULL;
	c->type = type;
	c->id = id;
	c->state = DP_CMD_PENDING;
	if (spec)
		memcpy(&c->spec, spec, spec_size(spec));
	return c;
}

/*
 * Run c on worker w.  Returns 0 when c completed (c->rc holds the answer;
 * caller frees c) or -ETIMEDOUT/-ENOBUFS (c is gone or freed here).
 */
static int cmd_call(struct dp_box *b, struct dp_worker *w, struct dp_cmd *c, char *err, size_t errlen)
{
	uint64_t deadline;
	int expect = DP_CMD_PENDING;

	if (!b->started) {
		cmd_exec(w, c);
		return 0;
	}
	if (rte_ring_sp_enqueue(w->cmd, c) != 0) {
		snprintf(err, errlen, "dataplane lcore %u: command ring full", w->lcore);
		free(c);
		return -ENOBUFS;
	}
	deadline = rte_get_tsc_cycles() + b->tsc_hz / 1000 * DP_CMD_TIMEOUT_MS;
	while (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != DP_CMD_DONE) {
		if (rte_get_tsc_cycles() > deadline &&
		    __atomic_compare_exchange_n(&c->state, &expect, DP_CMD_ABANDONED, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			snprintf(err, errlen, "dataplane lcore %u did not answer within %u ms",
				 w->lcore, DP_CMD_TIMEOUT_MS);
			return -ETIMEDOUT;
		}
		expect = DP_CMD_PENDING;
		usleep(20);
	}
	return 0;
}

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
	c = cmd_new(DP_CMD_JOB_ADD, id, spec);
	if (c == NULL) {
		snprintf(err, errlen, "out of memory for a job command");
		rc = -ENOMEM;
		goto out;
	}
	rc = cmd_call(b, b->workers[best], c, err, errlen);
	if (rc)
		goto out;
	rc = c->rc;
	if (rc == 0) {
		b->job_spec[b->n_jobs] = malloc(spec_size(spec));
		if (b->job_spec[b->n_jobs])
			memcpy(b->job_spec[b->n_jobs], spec, spec_size(spec));
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
	c = cmd_new(type, id, NULL);
	if (c == NULL)
		return -ENOMEM;
	rc = cmd_call(b, b->workers[b->job_worker[*slot]], c, err, sizeof(err));
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
		struct dp_cmd *c = cmd_new(DP_CMD_ENGINE_CTRS, 0, NULL);
		int r;

		if (c == NULL) {
			rc = -ENOMEM;
			break;
		}
		r = cmd_call(b, b->workers[w], c, err, sizeof(err));
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
