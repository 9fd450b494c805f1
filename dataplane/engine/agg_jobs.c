/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The aggregation engine's jobs (API: agg_engine.h): the engine's life
 * cycle, adding and removing jobs, the connection lookup table, housekeeping
 * (progress timeout, the status monitor's re-arms), counters and connection
 * names in messages.  The
 * per-packet path lives in agg_input.c, the sums in agg_sum_*.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/engine/agg_internal.h"
#include "dataplane/engine/agg_nak.h"
#include "proto/nr_text.h"

struct agg_engine *agg_engine_create(const struct agg_engine_ops *ops)
{
	struct agg_engine *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	if (ops)
		e->ops = *ops;
	e->sum = agg_sum_best();
	e->lkp_mask = 63;
	e->lkp = malloc(sizeof(*e->lkp) * (e->lkp_mask + 1));
	if (!e->lkp) {
		free(e);
		return NULL;
	}
	for (uint32_t i = 0; i <= e->lkp_mask; i++)
		e->lkp[i].job = NR_LKP_EMPTY;
	return e;
}

static void job_free_handles(struct agg_engine *e, struct agg_job *j)
{
	if (!j->held)
		return;
	for (size_t k = 0; k < (size_t)j->pool * j->n; k++) {
		if (j->held[k].handle) {
			void *h = j->held[k].handle;

			j->held[k].handle = NULL;
			if (e->ops.free)
				e->ops.free(e->ops.ctx, h);
		}
	}
}

static void job_free_pool(struct agg_job *j)
{
	free(j->slots);
	free(j->bits);
	free(j->held);
	free(j->results);
	free(j->acc);
	free(j->reth);
	free(j->acked);
	free(j->mon);
	free(j->srcs);
	free(j->outs);
	free(j->spare);
	free(j->first);
	free(j->port_hi);
	j->port_hi = NULL;
	j->spare = NULL;
	j->first = NULL;
	j->slots = NULL;
	j->bits = NULL;
	j->held = NULL;
	j->results = NULL;
	j->acc = NULL;
	j->reth = NULL;
	j->acked = NULL;
	j->mon = NULL;
	j->srcs = NULL;
	j->outs = NULL;
}

/* The job and what outlives its failure (its counters, left_out). */
static void job_free(struct agg_job *j)
{
	job_free_pool(j);
	free(j->left_out);
	free(j);
}

void agg_engine_destroy(struct agg_engine *e)
{
	if (!e)
		return;
	for (unsigned k = 0; k < NR_MAX_JOBS; k++) {
		if (e->jobs[k]) {
			job_free_handles(e, e->jobs[k]);
			job_free(e->jobs[k]);
		}
	}
	free(e->lkp);
	free(e);
}

/* ---- lookup table: rebuilt whole on every job add/del (rare) ------------- */

static int lkp_insert(struct agg_lkp *t, uint32_t mask, uint32_t daddr, uint32_t qpn,
		      uint16_t job, uint16_t conn)
{
	uint32_t h = agg_lkp_hash(daddr, qpn & NR_BTH_QPN_MASK) & mask;

	while (t[h].job != NR_LKP_EMPTY) {
		if (t[h].daddr == daddr && (t[h].qpn & NR_BTH_QPN_MASK) == (qpn & NR_BTH_QPN_MASK))
			return -EEXIST;
		h = (h + 1) & mask;
	}
	t[h] = (struct agg_lkp){ .daddr = daddr, .qpn = qpn, .job = job, .conn = conn };
	return 0;
}

/*
 * Build the table for the current jobs plus (optionally) cand at index ci.
 * Returns -EEXIST when an (IP, QPN) key is registered twice.
 */
static int lkp_rebuild(struct agg_engine *e, const struct agg_job *cand, unsigned ci)
{
	uint32_t entries = 0, size = 64, mask;
	struct agg_lkp *t;
	int rc = 0;

	for (unsigned k = 0; k < NR_MAX_JOBS; k++)
		if (e->jobs[k])
			entries += 2 * e->jobs[k]->n;
	if (cand)
		entries += 2 * cand->n;
	while (size < entries * 4)
		size <<= 1;
	mask = size - 1;
	t = malloc(sizeof(*t) * size);
	if (!t)
		return -ENOMEM;
	for (uint32_t i = 0; i < size; i++)
		t[i].job = NR_LKP_EMPTY;
	for (unsigned k = 0; k < NR_MAX_JOBS && !rc; k++) {
		const struct agg_job *j = k == ci && cand ? cand : e->jobs[k];

		for (uint32_t i = 0; j && i < j->n && !rc; i++) {
			rc = lkp_insert(t, mask, j->conns[i].dst_ip, j->conns[i].dst_qpn, k, i);
			if (!rc)
				rc = lkp_insert(t, mask, j->conns[i].src_ip,
						j->conns[i].src_qpn | NR_LKP_ACK, k, i);
		}
	}
	if (rc) {
		free(t);
		return rc;
	}
	free(e->lkp);
	e->lkp = t;
	e->lkp_mask = mask;
	return 0;
}

/* ---- jobs ------------------------------------------------------------------ */

static struct agg_job *job_find(const struct agg_engine *e, uint32_t id, unsigned *idx)
{
	for (unsigned k = 0; k < NR_MAX_JOBS; k++) {
		if (e->jobs[k] && e->jobs[k]->id == id) {
			if (idx)
				*idx = k;
			return e->jobs[k];
		}
	}
	return NULL;
}

static struct agg_job *job_alloc(const struct nr_job_spec *s, uint32_t id, uint64_t now_ns)
{
	struct agg_job *j = calloc(1, sizeof(*j) + s->n_conns * sizeof(s->conns[0]));
	size_t pp;

	if (!j)
		return NULL;
	j->id = id;
	j->n = s->n_conns;
	j->words = (s->n_conns + 63) / 64;
	j->pool = nr_job_pool_packets(s);
	j->pool_magic = UINT64_MAX / j->pool + 1;
	j->slot_bias = j->pool * ((1u << 23) / j->pool + 1);
	j->mtu = s->mtu;
	j->result_key = s->result_key;
	j->pkey = s->pkey;
	j->timeout_ms = s->timeout_ms;
	j->mode = s->mode;
	j->reduce = s->reduce;
	j->dtype = s->dtype;
	j->short_ppm = s->short_ppm;
	j->short_dscp = s->short_dscp;
	j->short_scale = s->short_scale;
	j->short_first = s->short_first;
	j->selective = s->selective;
	j->classes = s->prio_classes > 1 ? s->prio_classes : 1;
	for (uint32_t d = 0; d < 64; d++)
		j->dscp_cls[d] = j->classes;           /* exact: above every class */
	for (uint32_t c = 0; c < j->classes; c++) {
		/* class c and its drop-eligible packets (+ 2: AFx1, AFx2) */
		j->tol_mask |= 1ull << (s->short_dscp + 8 * c);
		j->dscp_cls[s->short_dscp + 8 * c] = (uint8_t)c;
		if (s->short_dscp + 8 * c + 2 <= 63) {
			j->tol_mask |= 1ull << (s->short_dscp + 8 * c + 2);
			j->de_mask |= 1ull << (s->short_dscp + 8 * c + 2);
			j->dscp_cls[s->short_dscp + 8 * c + 2] = (uint8_t)c;
		}
	}
	j->spray = s->spray_ports ? s->spray_ports : 1;
	j->reorder = s->reorder_pkts;
	j->denied_x = UINT64_MAX;
	j->state = NR_JOB_ACTIVE;
	j->last_progress_ns = now_ns;
	memcpy(j->conns, s->conns, s->n_conns * sizeof(s->conns[0]));
	pp = j->pool;
	j->slots = calloc(pp, sizeof(*j->slots));
	j->bits = calloc(pp * j->words, sizeof(*j->bits));
	j->held = calloc(pp * j->n, sizeof(*j->held));
	j->results = aligned_alloc(64, (pp * j->mtu + 63) / 64 * 64);
	if (nr_job_acc_packets(s))   /* 16-bit: FP32 accumulators, 2 x mtu bytes a packet */
		j->acc = aligned_alloc(64, (size_t)nr_job_acc_packets(s) * 2 * j->mtu);
	j->reth = calloc(pp * j->n, sizeof(*j->reth));
	j->acked = calloc(j->n, sizeof(*j->acked));
	j->mon = calloc(j->n, sizeof(*j->mon));
	j->srcs = calloc(j->n, sizeof(*j->srcs));
	j->outs = calloc(j->n, sizeof(*j->outs));
	j->spare = calloc(j->n, sizeof(*j->spare));
	j->left_out = calloc(j->n, sizeof(*j->left_out));
	j->first = calloc(j->n, sizeof(*j->first));
	if (j->spray > 1)
		j->port_hi = calloc((size_t)j->n * j->spray, sizeof(*j->port_hi));
	if (!j->slots || !j->bits || !j->held || !j->results || (nr_job_acc_packets(s) && !j->acc) ||
	    (j->spray > 1 && !j->port_hi) || !j->reth || !j->acked || !j->mon ||
	    !j->srcs || !j->outs || !j->spare || !j->left_out || !j->first) {
		job_free(j);
		return NULL;
	}
	for (uint32_t i = 0; i < j->n; i++)
		j->first[i] = (struct agg_first_seen){ .x = { NR_MON_NONE, NR_MON_NONE } };
	agg_mon_init(j, now_ns);
	return j;
}

int agg_engine_job_add(struct agg_engine *e, uint32_t id, const struct nr_job_spec *spec,
		      uint64_t now_ns, uint32_t *credits, char *err, size_t errlen)
{
	struct agg_job *j;
	unsigned slot = NR_MAX_JOBS;
	int rc;

	rc = nr_job_spec_validate(spec, err, errlen);
	if (rc)
		return rc;
	if (nr_job_channels(spec) != 1) {
		snprintf(err, errlen, "job %u: %u channels; an engine runs one channel as a job "
			 "(add each with nr_job_channel_spec)", id, nr_job_channels(spec));
		return -EINVAL;
	}
	if (job_find(e, id, NULL)) {
		snprintf(err, errlen, "job %u: id already in use on this engine", id);
		return -EEXIST;
	}
	for (unsigned k = 0; k < NR_MAX_JOBS; k++) {
		if (!e->jobs[k]) {
			slot = k;
			break;
		}
	}
	if (slot == NR_MAX_JOBS) {
		snprintf(err, errlen, "job %u: engine already runs %u jobs; destroy one first",
			 id, NR_MAX_JOBS);
		return -ENOSPC;
	}
	j = job_alloc(spec, id, now_ns);
	if (!j) {
		snprintf(err, errlen, "job %u: out of memory for %llu bytes of pool", id,
			 (unsigned long long)nr_job_mem_bytes(spec));
		return -ENOMEM;
	}
	rc = lkp_rebuild(e, j, slot);
	if (rc) {
		if (rc == -EEXIST)
			snprintf(err, errlen,
				 "job %u: a connection (IP, QPN) is already registered by another job",
				 id);
		else
			snprintf(err, errlen, "job %u: out of memory for the lookup table", id);
		job_free(j);
		return rc;
	}
	e->jobs[slot] = j;
	if (credits)
		*credits = spec->pool_msgs / 2;
	return 0;
}

int agg_engine_job_del(struct agg_engine *e, uint32_t id)
{
	unsigned k;
	struct agg_job *j = job_find(e, id, &k);

	if (!j)
		return -ENOENT;
	job_free_handles(e, j);
	for (unsigned c = 0; c < NR_ECTR_MAX; c++)
		e->ctr[c] += j->ctr[c];
	e->jobs[k] = NULL;
	/* Rebuilding without a job cannot clash; on ENOMEM drop the stale
	 * entries in place (lookups of a NULL job are treated as unknown). */
	if (lkp_rebuild(e, NULL, NR_MAX_JOBS))
		for (uint32_t i = 0; i <= e->lkp_mask; i++)
			if (e->lkp[i].job == k)
				e->lkp[i].job = NR_LKP_EMPTY - 1;
	job_free(j);
	return 0;
}

int agg_engine_job_stats(const struct agg_engine *e, uint32_t id, struct nr_job_stats *st)
{
	const struct agg_job *j = job_find(e, id, NULL);

	if (!j)
		return -ENOENT;
	memset(st, 0, sizeof(*st));
	st->state = j->state;
	snprintf(st->reason, sizeof(st->reason), "%s", j->reason);
	st->next_emit = (uint32_t)(j->next_emit & NR_PSN_MASK);
	st->next_release = (uint32_t)(j->next_release & NR_PSN_MASK);
	st->completed = j->completed;
	st->slots = j->pool;
	/* filling or complete, and emitted but not yet ACKed by every receiver */
	st->slots_busy = j->busy + (uint32_t)(j->next_emit - j->next_release);
	memcpy(st->ctr, j->ctr, sizeof(st->ctr));
	memcpy(st->left_out, j->left_out, j->n * sizeof(st->left_out[0]));
	memcpy(st->short_why, j->short_why, sizeof(st->short_why));
	memcpy(st->short_cls, j->short_cls, sizeof(st->short_cls));
	st->tol_pkts = j->tol_pkts;
	st->de_pkts = j->de_pkts;
	st->short_de = j->short_de;
	return 0;
}

void agg_engine_counters(const struct agg_engine *e, uint64_t ctr[NR_ECTR_MAX])
{
	memcpy(ctr, e->ctr, sizeof(e->ctr));
	for (unsigned k = 0; k < NR_MAX_JOBS; k++)
		if (e->jobs[k])
			for (unsigned c = 0; c < NR_ECTR_MAX; c++)
				ctr[c] += e->jobs[k]->ctr[c];
}

int agg_engine_set_kernel(struct agg_engine *e, enum agg_sum_kernel k)
{
	const struct agg_sum_ops *o = agg_sum_get(k);

	if (!o)
		return -ENOTSUP;
	e->sum = o;
	return 0;
}

const char *agg_engine_kernel_name(const struct agg_engine *e)
{
	return e->sum->name;
}

/* ---- failure and progress timeout ---------------------------------------- */

void agg_job_fail(struct agg_engine *e, struct agg_job *j, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (j->state == NR_JOB_FAILED)
		return;
	n = snprintf(j->reason, sizeof(j->reason), "job %u: ", j->id);
	va_start(ap, fmt);
	vsnprintf(j->reason + n, sizeof(j->reason) - n, fmt, ap);
	va_end(ap);
	j->state = NR_JOB_FAILED;
	job_free_handles(e, j);
	job_free_pool(j);
	j->busy = 0;
}

static bool job_outstanding(const struct agg_job *j)
{
	return j->busy > 0 || j->next_emit != j->next_release;
}

/* "slot g=77 has 3 of 4 contributions (missing: connection 2 ...)" */
static void job_describe_stall(const struct agg_job *j, char *buf, size_t len)
{
	char c[96];
	size_t n;

	if (j->next_release != j->next_emit) {
		n = snprintf(buf, len, "slot g=%u emitted, waiting for ACK from",
			     (uint32_t)(j->next_release & NR_PSN_MASK));
		for (uint32_t i = 0, shown = 0; i < j->n && n < len; i++) {
			if (j->acked[i] > j->next_release)
				continue;
			if (shown++ == 4) {
				n += snprintf(buf + n, len - n, " ...");
				break;
			}
			agg_conn_describe(j, i, c, sizeof(c));
			n += snprintf(buf + n, len - n, " %s", c);
		}
		return;
	}
	const struct agg_slot *s = &j->slots[j->emit_slot];
	const uint64_t *bits = &j->bits[(size_t)j->emit_slot * j->words];
	bool mine = s->state == NR_SLOT_FILLING && s->x == j->next_emit;
	uint32_t have = mine ? s->count : 0;

	n = snprintf(buf, len, "slot g=%u has %u of %u contributions (missing:",
		     (uint32_t)(j->next_emit & NR_PSN_MASK), have, j->n);
	for (uint32_t i = 0, shown = 0; i < j->n && n < len; i++) {
		if (mine && (bits[i / 64] >> (i % 64) & 1))
			continue;
		if (shown++ == 3) {
			n += snprintf(buf + n, len - n, " ...");
			break;
		}
		agg_conn_describe(j, i, c, sizeof(c));
		n += snprintf(buf + n, len - n, "%s %s", shown > 1 ? "," : "", c);
	}
	if (n < len)
		snprintf(buf + n, len - n, ")");
}

unsigned agg_engine_poll(struct agg_engine *e, uint64_t now_ns)
{
	unsigned failed = 0;
	char what[200];

	for (unsigned k = 0; k < NR_MAX_JOBS; k++) {
		struct agg_job *j = e->jobs[k];

		if (!j || j->state != NR_JOB_ACTIVE)
			continue;
		agg_mon_poll(e, j, now_ns);
		if (!job_outstanding(j))
			continue;
		if (now_ns - j->last_progress_ns < (uint64_t)j->timeout_ms * 1000000ull ||
		    now_ns < j->last_progress_ns)
			continue;
		job_describe_stall(j, what, sizeof(what));
		j->ctr[NR_ECTR_JOB_TIMEOUTS]++;
		agg_job_fail(e, j, "no progress for %u ms: %s", j->timeout_ms, what);
		failed++;
	}
	return failed;
}

void agg_conn_describe(const struct agg_job *j, uint32_t i, char *buf, size_t len)
{
	char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
	const struct nr_conn_spec *c = &j->conns[i];

	snprintf(buf, len, "connection %u (%s -> %s qpn 0x%x)", i, nr_ip4_str(c->src_ip, a),
		 nr_ip4_str(c->dst_ip, b), c->dst_qpn);
}
