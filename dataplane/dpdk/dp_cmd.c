/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control -> dataplane: the command ring of each worker lcore.
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

#include "dataplane/dpdk/dp_cmd.h"
#include "dataplane/dpdk/dp_emit.h"

enum dp_cmd_state { DP_CMD_PENDING, DP_CMD_DONE, DP_CMD_ABANDONED };

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
		c->rc = agg_engine_job_add(w->eng, c->id, &c->spec, w->now_ns, &c->credits,
					  c->err, sizeof(c->err));
		if (c->rc == 0 && ep_add(w, c->id, &c->spec) != 0) {
			agg_engine_job_del(w->eng, c->id);
			c->rc = -ENOMEM;
			snprintf(c->err, sizeof(c->err), "worker %u: out of memory for job %u's endpoints",
				 w->idx, c->id);
		}
		w->snap_due = true; /* the metrics see a new job at the loop's next turn */
		break;
	case DP_CMD_JOB_DEL:
		c->rc = agg_engine_job_del(w->eng, c->id);
		ep_del(w, c->id);
		w->snap_due = true;
		break;
	case DP_CMD_JOB_STATS:
		c->rc = agg_engine_job_stats(w->eng, c->id, &c->st);
		break;
	case DP_CMD_ENGINE_CTRS:
		agg_engine_counters(w->eng, c->eng);
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

/* ---- control side (the caller holds box->ctl_lock) ---------------------- */

struct dp_cmd *dp_cmd_new(int type, uint32_t id, const struct nr_job_spec *spec)
{
	size_t extra = spec ? nr_job_spec_size(spec->n_conns) - sizeof(*spec) : 0;
	struct dp_cmd *c = calloc(1, sizeof(*c) + extra);

	if (c == NULL)
		return NULL;
	c->type = type;
	c->id = id;
	c->state = DP_CMD_PENDING;
	if (spec)
		memcpy(&c->spec, spec, nr_job_spec_size(spec->n_conns));
	return c;
}

int dp_cmd_call(struct dp_box *b, struct dp_worker *w, struct dp_cmd *c, char *err, size_t errlen)
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
	deadline = rte_get_tsc_cycles() + b->tsc_hz / 1000 * b->cmd_timeout_ms;
	while (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != DP_CMD_DONE) {
		if (rte_get_tsc_cycles() > deadline &&
		    __atomic_compare_exchange_n(&c->state, &expect, DP_CMD_ABANDONED, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			snprintf(err, errlen, "dataplane lcore %u did not answer within %u ms",
				 w->lcore, b->cmd_timeout_ms);
			return -ETIMEDOUT;
		}
		expect = DP_CMD_PENDING;
		usleep(20);
	}
	return 0;
}
