/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_engine's shadow model, its state apart from the script (fuzz_engine.c):
 * each slot's record and reference sum, and the jobs: their shapes from the
 * input's header, their registration with the engine and the script's job
 * operations (delete, re-add, duplicate, invalid).
 */
#include <arpa/inet.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/engine/agg_engine.h"
#include "proto/roce_pkt.h"
#include "tests/engine/eng_bits.h"

#include "nrz_fuzz.h"
#include "fuzz_engine.h"

/* ---- shadow records ------------------------------------------------------- */

struct rec *nrz_rec_find(struct sjob *j, uint32_t g, bool create)
{
	for (size_t k = 0; k < j->nrecs; k++)
		if (j->recs[k].g == g)
			return &j->recs[k];
	if (!create)
		return NULL;
	if (j->nrecs == j->caprecs) {
		j->caprecs = j->caprecs ? 2 * j->caprecs : 16;
		j->recs = realloc(j->recs, j->caprecs * sizeof(*j->recs));
		NRZ_CHECK(j->recs != NULL, "realloc");
	}
	struct rec *r = &j->recs[j->nrecs++];

	memset(r, 0, sizeof(*r));
	r->g = g;
	return r;
}

void nrz_recs_clear(struct sjob *j)
{
	for (size_t k = 0; k < j->nrecs; k++) {
		for (unsigned i = 0; i < NRZ_MAXN; i++)
			free(j->recs[k].c[i].pay);
		free(j->recs[k].want);
	}
	free(j->recs);
	j->recs = NULL;
	j->nrecs = j->caprecs = 0;
}

/*
 * The reference sum: rank order (ordered mode) or arrival order (streaming)
 * of the contributions in (N, or a short slot's N - 1), times N/(N-1) in
 * FP32 for a short slot of a job with short_scale.
 */
void nrz_rec_compute(struct sjob *j, struct rec *r)
{
	uint32_t n = j->spec->n_conns, nf = r->len / 4;
	bool streaming = j->spec->mode == NR_SUM_STREAMING;
	bool scale = r->shorted && j->spec->short_scale;
	float f = (float)n / (float)(n - 1 + (n == 1));
	uint8_t who[NRZ_MAXN];
	uint32_t m = 0;

	for (uint32_t k = 0; k < (streaming ? r->count : n); k++)
		if (streaming || r->c[k].have)
			who[m++] = streaming ? r->order[k] : (uint8_t)k;
	r->want = malloc(r->len ? r->len : 1);
	NRZ_CHECK(r->want != NULL, "malloc");
	for (uint32_t e = 0; e < nf; e++) {
		volatile float acc;
		float v;

		memcpy(&v, r->c[who[0]].pay + 4 * e, 4);
		acc = v;
		for (uint32_t k = 1; k < m; k++) {
			memcpy(&v, r->c[who[k]].pay + 4 * e, 4);
			acc = acc + v;
		}
		if (scale)
			acc = acc * f;
		r->want[e] = acc;
	}
}

void nrz_check_payload(const struct rec *r, const uint8_t *pay, const char *what, uint32_t conn)
{
	for (uint32_t e = 0; e < r->len / 4u; e++) {
		float got;

		memcpy(&got, pay + 4 * e, 4);
		NRZ_CHECK(eng_same_float(got, r->want[e]),
			  "%s g=%u conn %u element %u: got %a, rank/arrival-order sum %a",
			  what, r->g, conn, e, got, r->want[e]);
	}
}

/* ---- jobs ----------------------------------------------------------------------- */

uint32_t nrz_ip4(unsigned a, unsigned b, unsigned c, unsigned d)
{
	return htonl(a << 24 | b << 16 | c << 8 | d);
}

/*
 * A job from its header bytes; sb (when b0's bit 7 is set): short slots,
 * short_ppm choice | short_dscp choice << 3 | short_scale << 5 | a progress
 * timeout of 1 s instead of 50 ms << 6 (long enough for the monitor to hold
 * the senders of a slot that waits for a late rank).  Of the
 * short_ppm choices, 500000 allows one short slot in a message of 2 or 3
 * packets, 333334 and 499999 one in 3 packets only, 250000 and 125000 one
 * only when a first packet's RETH claims 4 or 8 packets or more, 1 one in a
 * message of 10^6 packets, 0 none (and data ops still lose and mark).
 */
void nrz_job_shape(struct sjob *j, unsigned idx, uint8_t b0, uint8_t b1, uint8_t b2,
		      uint8_t sb)
{
	static const uint32_t short_ppm[8] = { 500000, 333334, 500000, 0, 250000, 499999, 1, 125000 };
	static const uint8_t short_dscp[4] = { 10, 0, 46, 63 };
	uint32_t n = 1 + (b0 & 7) % NRZ_MAXN;
	uint32_t mtu = 256u << ((b0 >> 3) & 1);
	struct nr_job_spec *s = calloc(1, sizeof(*s) + n * sizeof(s->conns[0]));

	NRZ_CHECK(s != NULL, "calloc");
	j->short_ops = b0 & 0x80;
	if (j->short_ops) {
		s->short_ppm = n >= 2 ? short_ppm[sb & 7] : 0;   /* one rank: nothing to leave out */
		s->short_dscp = short_dscp[(sb >> 3) & 3];
		s->short_scale = (sb >> 5) & 1;
	}
	j->ppm = 1 + b1 % 3;
	j->last_len = 4 * (1 + (b1 >> 2) % (mtu / 4));
	s->n_conns = n;
	s->mtu = mtu;
	s->msg_size = mtu * (j->ppm - 1) + j->last_len;
	s->pool_msgs = 2 + 2 * ((b0 >> 4) & 1);
	s->timeout_ms = j->short_ops && (sb & 0x40) ? 1000 : 50;
	s->mode = (b0 >> 5) & 1 ? NR_SUM_STREAMING : NR_SUM_ORDERED;
	s->result_key = (b0 >> 6) & 1 ? NRZ_KEY | idx : 0;
	for (uint32_t i = 0; i < n; i++) {
		struct nr_conn_spec *c = &s->conns[i];

		c->src_ip = nrz_ip4(10, idx + 1, 0, i + 1);
		c->dst_ip = nrz_ip4(10, idx + 1, 0, (i + 1) % n + 1);
		c->src_qpn = 0x1000 * (idx + 1) + 0x10 + i;
		c->dst_qpn = 0x1000 * (idx + 1) + 0x20 + i;
		/* PSNs near the 24-bit wrap are the interesting ones */
		c->ipsn = (b2 & 0x80) ? (NR_PSN_MASK - (b2 & 0x7F) * (i + 1)) & NR_PSN_MASK
				      : (uint32_t)(b2 * 0x10101u * (i + 1)) & NR_PSN_MASK;
		c->src_mac[0] = c->dst_mac[0] = 0x02;
		c->src_mac[5] = (uint8_t)(i + 1);
		c->dst_mac[5] = (uint8_t)((i + 1) % n + 1);
	}
	j->spec = s;
	j->id = 7 + 1000 * idx;
	j->pool_pkts = j->ppm * s->pool_msgs;
}

static size_t spec_size(const struct nr_job_spec *s)
{
	return sizeof(*s) + s->n_conns * sizeof(s->conns[0]);
}

static void job_reset(struct sjob *j)
{
	nrz_recs_clear(j);
	memset(j->cursor, 0, sizeof(j->cursor));
	memset(j->mark, 0, sizeof(j->mark));
	j->emit_g = j->emit_conn = 0;
	j->failed = false;
	j->emits = j->whole = j->shorts = 0;
	memset(j->left_out, 0, sizeof(j->left_out));
	j->msg_tolerant = false;
	j->msg_left = 0;
	memset(j->last_new, 0, sizeof(j->last_new));
	memset(j->last_short, 0, sizeof(j->last_short));
	memset(j->nak_set, 0, sizeof(j->nak_set));
	j->seen_gap = j->seen_rearm = j->seen_denied = 0;
	j->denied_set = false;
}

void nrz_job_add(struct world *w, struct sjob *j)
{
	char err[256] = "";
	uint32_t credits = 0;
	int rc = agg_engine_job_add(w->eng, j->id, j->spec, w->now, &credits, err, sizeof(err));

	NRZ_CHECK(rc == 0, "job_add of a valid spec: %d (%s)", rc, err);
	NRZ_CHECK(credits == j->spec->pool_msgs / 2, "credits %u", credits);
	job_reset(j);
	j->registered = true;
	j->t_add = w->now;
}

static void job_del(struct world *w, struct sjob *j)
{
	w->deleting = true;
	NRZ_CHECK(agg_engine_job_del(w->eng, j->id) == 0, "job_del of a registered job");
	w->deleting = false;
	NRZ_CHECK(j->held == 0, "job %u deleted with %u handles not returned", j->id, j->held);
	j->registered = false;
	job_reset(j);
}

void nrz_op_jobctl(struct world *w, struct nrz_in *in)
{
	struct sjob *j = &w->jobs[nrz_u8(in) % w->njobs];
	uint8_t b = nrz_u8(in);
	char err[256];
	uint32_t cr;

	if (!j->registered) {
		if (b & 1)    /* come back with other initial PSNs */
			for (uint32_t i = 0; i < j->spec->n_conns; i++)
				j->spec->conns[i].ipsn = nr_psn_add(j->spec->conns[i].ipsn, b * 977u);
		nrz_job_add(w, j);
		return;
	}
	if (b & 2) {
		err[0] = 0;
		NRZ_CHECK(agg_engine_job_add(w->eng, j->id, j->spec, w->now, &cr, err,
					    sizeof(err)) == -EEXIST && err[0],
			  "same id added twice");
	}
	if (b & 4) {   /* another id over the same connections */
		err[0] = 0;
		NRZ_CHECK(agg_engine_job_add(w->eng, j->id + 500, j->spec, w->now, &cr, err,
					    sizeof(err)) == -EEXIST && err[0],
			  "a second job over registered connections");
	}
	if (b & 8) {   /* an invalid spec, one field at a time */
		struct nr_job_spec *bad = malloc(spec_size(j->spec));

		NRZ_CHECK(bad != NULL, "malloc");
		memcpy(bad, j->spec, spec_size(j->spec));
		switch ((b >> 4) % 6) {
		case 0: bad->mtu = 300; break;
		case 1: bad->msg_size = 6; break;
		case 2: bad->pool_msgs = 3; break;
		case 3: bad->conns[0].dst_qpn = 0x1000000; break;
		case 4: bad->timeout_ms = 0; break;
		default: bad->mode = 9; break;
		}
		err[0] = 0;
		NRZ_CHECK(agg_engine_job_add(w->eng, j->id + 600, bad, w->now, &cr, err,
					    sizeof(err)) == -EINVAL && err[0],
			  "invalid spec accepted");
		free(bad);
	}
	if (b & 1)
		job_del(w, j);
}

