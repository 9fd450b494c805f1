/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The workers' published snapshots (dp_snap.h).  rte_seqcount is DPDK's
 * single-writer sequence counter, an experimental API in 22.11 (inline
 * only: nothing of it is in DPDK's ABI), enabled for this file alone.
 */
#define ALLOW_EXPERIMENTAL_API 1

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_seqcount.h>

#include "dataplane/dpdk/dp_snap.h"

/* A worker's channel as published. */
struct dp_snap_chan {
	uint32_t eid; /* the engine's id of the channel (dp_chan_eid) */
	uint8_t state;
	uint32_t slots, slots_busy;
	uint64_t completed;
	uint64_t ctr[NR_ECTR_MAX];
};

struct dp_snap {
	rte_seqcount_t sc;
	bool published; /* a copy was made */
	uint32_t n;
	uint64_t eng[NR_ECTR_MAX];
	struct dp_snap_chan ch[NR_MAX_JOBS];
	struct nr_job_stats scratch; /* the engine's whole answer for one channel */
};

#define SNAP_READ_TRIES 1000

void dp_snap_enable(struct dp_box *b, bool on)
{
	for (unsigned i = 0; i < b->n_workers && on; i++)
		if (b->workers[i]->snap == NULL)
			b->workers[i]->snap =
				rte_zmalloc("nr_snap", sizeof(struct dp_snap), RTE_CACHE_LINE_SIZE);
	__atomic_store_n(&b->snap_on, on, __ATOMIC_RELEASE);
}

void dp_snap_publish(struct dp_worker *w)
{
	struct dp_snap *s = w->snap;

	w->snap_ns = w->now_ns;
	w->snap_due = false;
	if (s == NULL)
		return;
	rte_seqcount_write_begin(&s->sc);
	agg_engine_counters(w->eng, s->eng);
	s->n = 0;
	for (unsigned j = 0; j < w->n_jobs; j++) {
		struct dp_snap_chan *c = &s->ch[s->n];

		if (agg_engine_job_stats(w->eng, w->jobs[j].id, &s->scratch) != 0)
			continue;
		c->eid = w->jobs[j].id;
		c->state = s->scratch.state;
		c->slots = s->scratch.slots;
		c->slots_busy = s->scratch.slots_busy;
		c->completed = s->scratch.completed;
		memcpy(c->ctr, s->scratch.ctr, sizeof(c->ctr));
		s->n++;
	}
	s->published = true;
	rte_seqcount_write_end(&s->sc);
}

/* A whole copy of w's snapshot (without its scratch): 0, -EAGAIN or -EBUSY. */
static int snap_read(const struct dp_worker *w, struct dp_snap *out)
{
	const struct dp_snap *s = w->snap;

	if (s == NULL)
		return -EAGAIN;
	for (unsigned t = 0; t < SNAP_READ_TRIES; t++) {
		uint32_t sn = rte_seqcount_read_begin(&s->sc);

		memcpy(out, s, offsetof(struct dp_snap, scratch));
		if (!rte_seqcount_read_retry(&s->sc, sn))
			return out->published ? 0 : -EAGAIN;
		rte_pause();
	}
	return -EBUSY;
}

int dp_snap_engine(struct dp_box *b, uint64_t ctr[NR_ECTR_MAX])
{
	struct dp_snap *s = malloc(sizeof(*s));
	int rc = 0;

	if (s == NULL)
		return -ENOMEM;
	memset(ctr, 0, sizeof(uint64_t) * NR_ECTR_MAX);
	for (unsigned w = 0; w < b->n_workers; w++) {
		int r = snap_read(b->workers[w], s);

		if (r) {
			rc = rc ? rc : r;
			continue;
		}
		for (unsigned i = 0; i < NR_ECTR_MAX; i++)
			ctr[i] += s->eng[i];
	}
	free(s);
	return rc;
}

/* Channel eid in snapshot s, or NULL. */
static const struct dp_snap_chan *snap_chan(const struct dp_snap *s, uint32_t eid)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->ch[i].eid == eid)
			return &s->ch[i];
	return NULL;
}

void dp_snap_jobs(struct dp_box *b, const uint32_t *ids, unsigned n, struct nr_job_stats *const *st,
		  int *rc)
{
	struct dp_snap *s = malloc((size_t)b->n_workers * sizeof(*s));
	int wrc[DP_MAX_WORKERS];

	for (unsigned i = 0; i < n; i++) {
		memset(st[i], 0, sizeof(*st[i]));
		rc[i] = s ? -ENOENT : -ENOMEM;
	}
	if (s == NULL)
		return;
	for (unsigned w = 0; w < b->n_workers; w++)
		wrc[w] = snap_read(b->workers[w], &s[w]);
	pthread_mutex_lock(&b->ctl_lock); /* the channels: where each job's are */
	for (unsigned i = 0; i < n; i++) {
		bool failed = false;

		for (unsigned k = 0; k < b->n_chans; k++) {
			const struct dp_chan *ch = &b->chans[k];
			const struct dp_snap_chan *c;

			if (ch->id != ids[i] || (rc[i] < 0 && rc[i] != -ENOENT))
				continue;
			if (wrc[ch->worker]) {
				rc[i] = wrc[ch->worker];
				continue;
			}
			c = snap_chan(&s[ch->worker], dp_chan_eid(ch->id, ch->ch));
			if (c == NULL) {
				rc[i] = -EAGAIN;
				continue;
			}
			rc[i] = 0;
			failed |= c->state == NR_JOB_FAILED;
			st[i]->slots += c->slots;
			st[i]->slots_busy += c->slots_busy;
			st[i]->completed += c->completed;
			for (unsigned x = 0; x < NR_ECTR_MAX; x++)
				st[i]->ctr[x] += c->ctr[x];
			st[i]->n_channels++;
		}
		st[i]->state = failed ? NR_JOB_FAILED : NR_JOB_ACTIVE;
	}
	pthread_mutex_unlock(&b->ctl_lock);
	free(s);
}
