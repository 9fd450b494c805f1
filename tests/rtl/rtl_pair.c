/* SPDX-License-Identifier: BSD-3-Clause */
/* Two boxes, one input: see rtl_pair.h. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "control/fpga/fpga_regs.h"
#include "control/api/nr_control.h"
#include "dataplane/engine/agg_sum.h"
#include "dataplane/rtl/nr_rtl_backend.h"
#include "tests/rtl/rtl_pair.h"
#include "proto/roce_icrc.h"
#include "proto/roce_pkt.h"

#define FRAME_CAP 16384
#define MAX_OUT 4096
#define MAX_JOBS 8

const char *const rp_dctr_names[NR_FPGA_D_MAX] = { NR_FOREACH_FPGA_DCTR(NR_CTR_NAME) };

struct sw_pkt {
	struct nr_pkt p;
	uint32_t len;
	uint8_t port;
	uint8_t frame[FRAME_CAP];
};

struct out {
	uint8_t kind, port;
	uint32_t len;
	uint8_t *bytes;
};

struct rp {
	/* software box */
	struct agg_engine *e;
	uint64_t dctr[NR_FPGA_D_MAX];
	struct out sw_out[MAX_OUT];
	unsigned n_sw_out;
	/* RTL box */
	struct nr_rtl *rtl;
	struct nr_backend *fpga;     /* backend "rtl": the fpga driver on the model */
	/* jobs */
	uint32_t job_ids[MAX_JOBS];
	unsigned n_jobs;
	uint64_t frames, outputs, results;
	uint64_t now_ns;
};

static uint64_t cov_e[NR_ECTR_MAX], cov_d[NR_FPGA_D_MAX];

static void sw_out(struct rp *r, uint8_t kind, uint8_t port, const uint8_t *f, uint32_t len)
{
	struct out *o;

	assert_true(r->n_sw_out < MAX_OUT);
	o = &r->sw_out[r->n_sw_out++];
	o->kind = kind;
	o->port = port;
	o->len = len;
	o->bytes = malloc(len);
	assert_non_null(o->bytes);
	memcpy(o->bytes, f, len);
}

/*
 * dp_emit.c result_masked: ECN-CE when due on an ECN-capable frame (proto's
 * nr_frame_set_ce, IPv4 checksum fixed; never on Not-ECT), UDP checksum 0.
 */
static void result_masked(struct rp *r, uint8_t *frame, const struct nr_pkt *p, bool ecn_ce,
			  bool count)
{
	if (ecn_ce && nr_frame_set_ce(frame, p) && count)
		r->dctr[NR_FPGA_D_ECN_MARKED]++;
	memset(frame + p->l4_off + 6, 0, 2);
}

/* dp_emit.c dp_engine_emit_slot: each result trimmed at its ICRC, new ICRC, masked fields. */
static void sw_emit_slot(void *ctx, const struct agg_emit_slot *s)
{
	struct rp *r = ctx;

	for (uint32_t i = 0; i < s->n; i++) {
		struct sw_pkt *k = s->held[i].handle;

		nr_icrc_update(k->frame, &k->p);
		result_masked(r, k->frame, &k->p, s->ecn_ce, true);
		r->dctr[NR_FPGA_D_RESULTS]++;
		r->dctr[NR_FPGA_D_TX]++;
		sw_out(r, NR_RTL_RESULT, k->port, k->frame, k->p.end);
		free(k);
	}
}

static void sw_free(void *ctx, void *handle)
{
	(void)ctx;
	free(handle);
}

/* dp_loop.c: runt, parse, malformed, ICRC check, engine verdicts. */
static void sw_frame(struct rp *r, uint8_t port, const uint8_t *frame, uint32_t len)
{
	struct sw_pkt *k;
	enum nr_engine_ctr ctr = NR_ECTR_MAX;
	enum agg_verdict v;

	r->dctr[NR_FPGA_D_RX]++;
	if (len < 14) {
		r->dctr[NR_FPGA_D_RUNT]++;
		return;
	}
	k = calloc(1, sizeof(*k));
	assert_non_null(k);
	assert_true(len <= FRAME_CAP);
	memcpy(k->frame, frame, len);
	k->len = len;
	k->port = port;
	nr_parse(k->frame, len, &k->p);
	if (k->p.kind == NR_PKT_OTHER) {
		r->dctr[NR_FPGA_D_FORWARDED]++;
		r->dctr[NR_FPGA_D_TX]++;
		sw_out(r, NR_RTL_FORWARD, port, k->frame, len);
		free(k);
		return;
	}
	if (k->p.kind == NR_PKT_MALFORMED) {
		r->dctr[NR_FPGA_D_MALFORMED]++;
		free(k);
		return;
	}
	if (!nr_icrc_check(k->frame, &k->p)) {
		r->dctr[NR_FPGA_D_BAD_ICRC]++;
		free(k);
		return;
	}
	v = agg_engine_input(r->e, &k->p, k->frame, k, r->now_ns, &ctr);
	switch (v) {
	case NR_V_FORWARD:
		r->dctr[NR_FPGA_D_FORWARDED]++;
		r->dctr[NR_FPGA_D_TX]++;
		sw_out(r, NR_RTL_FORWARD, port, k->frame, len);
		free(k);
		break;
	case NR_V_HELD:
		r->dctr[NR_FPGA_D_HELD]++;
		break;
	case NR_V_RESEND:
		r->dctr[NR_FPGA_D_RESENT]++;
		r->dctr[NR_FPGA_D_TX]++;
		nr_icrc_update(k->frame, &k->p);
		result_masked(r, k->frame, &k->p, false, false);
		sw_out(r, NR_RTL_RESEND, port, k->frame, k->p.end);
		free(k);
		break;
	default:
		r->dctr[NR_FPGA_D_ENGINE_DROP]++;
		free(k);
		break;
	}
}

struct rp *rp_create(enum agg_sum_kernel kernel)
{
	struct rp *r = calloc(1, sizeof(*r));
	struct agg_engine_ops ops = { .emit_slot = sw_emit_slot, .free = sw_free };
	char err[256] = "";

	assert_non_null(r);
	ops.ctx = r;
	r->e = agg_engine_create(&ops);
	assert_non_null(r->e);
	if (kernel != NR_KERNEL_AUTO)
		assert_int_equal(agg_engine_set_kernel(r->e, kernel), 0);
	r->rtl = nr_rtl_create(err, sizeof(err));
	if (!r->rtl)
		fail_msg("%s", err);
	r->fpga = nr_rtl_backend_create(r->rtl, NULL, err, sizeof(err));
	if (!r->fpga)
		fail_msg("backend rtl (the fpga driver on the RTL model): %s", err);
	return r;
}

void rp_destroy(struct rp *r)
{
	uint64_t e[NR_ECTR_MAX];

	agg_engine_counters(r->e, e);
	for (unsigned i = 0; i < NR_ECTR_MAX; i++)
		cov_e[i] += e[i];
	for (unsigned i = 0; i < NR_FPGA_D_MAX; i++)
		cov_d[i] += r->dctr[i];
	for (unsigned i = 0; i < r->n_sw_out; i++)
		free(r->sw_out[i].bytes);
	nr_backend_destroy(r->fpga);
	nr_rtl_destroy(r->rtl);
	agg_engine_destroy(r->e);
	free(r);
}

void rp_job_add(struct rp *r, uint32_t id, const struct nr_job_spec *spec)
{
	uint32_t c1 = 0, c2 = 0;
	char err[256] = "";

	assert_true(r->n_jobs < MAX_JOBS);
	if (agg_engine_job_add(r->e, id, spec, r->now_ns, &c1, err, sizeof(err)))
		fail_msg("engine job_add: %s", err);
	if (r->fpga->ops->job_create(r->fpga, id, spec, &c2, err, sizeof(err)))
		fail_msg("rtl job_create: %s", err);
	assert_int_equal(c1, c2);
	r->job_ids[r->n_jobs++] = id;
}

static uint64_t rtl64(struct rp *r, uint32_t off);

/* Both boxes' counters side by side, after a mismatch. */
static void dump_counters(struct rp *r)
{
	uint64_t sw[NR_ECTR_MAX];

	agg_engine_counters(r->e, sw);
	fprintf(stderr, "counters (software / RTL):");
	for (unsigned i = 0; i < NR_ECTR_MAX; i++)
		fprintf(stderr, " %s %llu/%llu", nr_engine_ctr_names[i], (unsigned long long)sw[i],
			(unsigned long long)rtl64(r, NR_FPGA_GCTR(i)));
	for (unsigned i = 0; i < NR_FPGA_D_MAX; i++)
		fprintf(stderr, " %s %llu/%llu", rp_dctr_names[i], (unsigned long long)r->dctr[i],
			(unsigned long long)rtl64(r, NR_FPGA_DCTR(i)));
	fprintf(stderr, "\n");
}

static void hexdump(const char *what, const uint8_t *b, uint32_t len)
{
	fprintf(stderr, "%s (%u bytes):", what, len);
	for (uint32_t i = 0; i < len; i++)
		fprintf(stderr, "%s%02x", i % 32 ? " " : "\n  ", b[i]);
	fprintf(stderr, "\n");
}

void rp_frame(struct rp *r, uint8_t port, const uint8_t *frame, uint32_t len)
{
	static uint8_t buf[FRAME_CAP];
	unsigned n = 0;
	int rc;

	r->frames++;
	r->n_sw_out = 0;
	sw_frame(r, port, frame, len);
	rc = nr_rtl_send(r->rtl, port, frame, len);
	if (rc)
		fail_msg("frame %llu: rtl: %s (rc %d)", (unsigned long long)r->frames,
			 nr_rtl_error(r->rtl), rc);
	for (;;) {
		uint32_t olen = 0;
		uint8_t oport = 0, kind = 0;

		if (!nr_rtl_recv(r->rtl, buf, sizeof(buf), &olen, &oport, &kind))
			break;
		if (n >= r->n_sw_out) {
			hexdump("input", frame, len);
			hexdump("extra RTL output", buf, olen);
			fail_msg("frame %llu: the RTL sent output %u (kind %u), the software box %u outputs",
				 (unsigned long long)r->frames, n, kind, r->n_sw_out);
		}
		const struct out *o = &r->sw_out[n];
		if (o->len != olen || memcmp(o->bytes, buf, olen) != 0 || o->kind != kind ||
		    o->port != oport) {
			hexdump("input", frame, len);
			hexdump("software box", o->bytes, o->len);
			hexdump("RTL", buf, olen);
			dump_counters(r);
			fail_msg("frame %llu: output %u differs (kind sw %u rtl %u, port sw %u rtl %u)",
				 (unsigned long long)r->frames, n, o->kind, kind, o->port, oport);
		}
		n++;
	}
	if (n != r->n_sw_out) {
		hexdump("input", frame, len);
		dump_counters(r);
		fail_msg("frame %llu: the software box sent %u frames, the RTL %u",
			 (unsigned long long)r->frames, r->n_sw_out, n);
	}
	r->outputs += n;
	for (unsigned i = 0; i < r->n_sw_out; i++) {
		r->results += r->sw_out[i].kind == NR_RTL_RESULT;
		free(r->sw_out[i].bytes);
	}
	r->n_sw_out = 0;
}

static uint64_t rtl64(struct rp *r, uint32_t off)
{
	return (uint64_t)nr_rtl_read32(r->rtl, off + 4) << 32 | nr_rtl_read32(r->rtl, off);
}

/*
 * Whether the RTL keeps engine counter i: the status monitor's (nak_*,
 * ack_repeat; docs/architecture.md, rule 11) are software only for now (the
 * software side here has no ops.send, so its monitor only counts).
 */
bool rp_rtl_keeps(unsigned i)
{
	return i < NR_ECTR_NAK_GAP || i == NR_ECTR_PSN_CONFLICT;
}

void rp_check_counters(struct rp *r)
{
	uint64_t sw[NR_ECTR_MAX];
	bool bad = false;

	agg_engine_counters(r->e, sw);
	for (unsigned i = 0; i < NR_ECTR_MAX; i++) {
		uint64_t hw = rtl64(r, NR_FPGA_GCTR(i));

		if (rp_rtl_keeps(i) && hw != sw[i]) {
			fprintf(stderr, "engine counter %s: software %llu, RTL %llu\n",
				nr_engine_ctr_names[i], (unsigned long long)sw[i], (unsigned long long)hw);
			bad = true;
		}
	}
	for (unsigned i = 0; i < NR_FPGA_D_MAX; i++) {
		uint64_t hw = rtl64(r, NR_FPGA_DCTR(i));

		if (hw != r->dctr[i]) {
			fprintf(stderr, "dataplane counter %s: software %llu, RTL %llu\n", rp_dctr_names[i],
				(unsigned long long)r->dctr[i], (unsigned long long)hw);
			bad = true;
		}
	}
	for (unsigned j = 0; j < r->n_jobs; j++) {
		struct nr_job_stats a, b;

		assert_int_equal(agg_engine_job_stats(r->e, r->job_ids[j], &a), 0);
		assert_int_equal(r->fpga->ops->job_status(r->fpga, r->job_ids[j], &b), 0);
		if (a.state != b.state || a.next_emit != b.next_emit ||
		    a.next_release != b.next_release || a.completed != b.completed) {
			fprintf(stderr, "job %u: software state %u next_emit %u next_release %u completed %llu; "
				"RTL state %u next_emit %u next_release %u completed %llu\n",
				r->job_ids[j], a.state, a.next_emit, a.next_release,
				(unsigned long long)a.completed, b.state, b.next_emit, b.next_release,
				(unsigned long long)b.completed);
			bad = true;
		}
		for (unsigned i = 0; i < NR_ECTR_MAX; i++)
			if (rp_rtl_keeps(i) && a.ctr[i] != b.ctr[i]) {
				fprintf(stderr, "job %u counter %s: software %llu, RTL %llu\n", r->job_ids[j],
					nr_engine_ctr_names[i], (unsigned long long)a.ctr[i],
					(unsigned long long)b.ctr[i]);
				bad = true;
			}
	}
	if (bad)
		fail_msg("counters differ between the software box and the RTL");
}

void rp_stats(const struct rp *r, uint64_t *frames, uint64_t *outputs, uint64_t *results,
	      uint64_t *cycles)
{
	*frames = r->frames;
	*outputs = r->outputs;
	*results = r->results;
	*cycles = nr_rtl_cycles(r->rtl);
}

void rp_advance_ms(struct rp *r, unsigned ms)
{
	r->now_ns += (uint64_t)ms * 1000000u;
	agg_engine_poll(r->e, r->now_ns);
	nr_rtl_tick_ms(r->rtl, ms);
}

void rp_coverage(uint64_t ectr[NR_ECTR_MAX], uint64_t dctr[NR_FPGA_D_MAX])
{
	memcpy(ectr, cov_e, sizeof(cov_e));
	memcpy(dctr, cov_d, sizeof(cov_d));
}
