/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile traffic, engine level (suite unit): the cases of hz_cases.c against
 * the parser and the engine behind a model of the box's per-frame path
 * (dataplane/dpdk/dp_loop.c parse_burst/act_burst): runt -> dropped, OTHER ->
 * forwarded, MALFORMED -> dropped by reason, RoCE with a wrong ICRC -> dropped
 * (bad_icrc, the box's default), RoCE -> the engine's verdict; results and resends get the
 * box's fix-up (ECN-CE, fresh ICRC) and are checked bit for bit.  The eal suite
 * runs the same cases on the real box (test_hostile_eal.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <cmocka.h>

#include "proto/roce_icrc.h"

#include "hz_cases.h"

struct mbox {
	struct agg_engine *eng;
	struct hz_job *job;
	struct hz_acct a;
	uint64_t now;
	uint64_t emitted, freed, live;
};

struct held {
	uint8_t *frame;
	uint32_t len;
	uint16_t port;         /* the rank port it came in on (ops.origin) */
	struct nr_pkt p;       /* the engine keeps it with a held frame */
};

static void fixup(uint8_t *frame, uint32_t len, bool ce)
{
	struct nr_pkt p;

	if (nr_parse(frame, len, &p) != NR_PKT_ROCE)
		return;
	if (ce)
		nr_frame_set_ce(frame, &p);      /* as the box's one exit does */
	nr_icrc_update(frame, &p);
}

static void mb_emit(void *ctx, const struct agg_emit *e)
{
	struct mbox *b = ctx;
	struct held *h = e->handle;

	fixup(h->frame, h->len, e->ecn_ce);
	if (b->job && hz_result(b->job, h->frame, h->len, true) != 1)
		fail_msg("emitted a frame that is not a result of the job");
	b->emitted++;
	b->live--;
	free(h->frame);
	free(h);
}

static void mb_free(void *ctx, void *handle)
{
	struct mbox *b = ctx;
	struct held *h = handle;

	b->freed++;
	b->live--;
	free(h->frame);
	free(h);
}

static uint16_t mb_origin(void *ctx, void *handle)
{
	(void)ctx;
	return ((const struct held *)handle)->port;
}

static int mb_begin(void *ctx)
{
	struct mbox *b = ctx;
	struct agg_engine_ops ops = { .emit = mb_emit, .free = mb_free, .origin = mb_origin, .ctx = b };

	memset(b, 0, sizeof(*b));
	b->now = 1000000000ull;
	b->eng = agg_engine_create(&ops);
	return b->eng ? 0 : -1;
}

static void mb_end(void *ctx)
{
	struct mbox *b = ctx;

	agg_engine_destroy(b->eng);
	b->eng = NULL;
	assert_int_equal(b->live, 0);    /* every held frame came back */
	assert_int_equal(b->emitted + b->freed, b->a.held);
}

static int mb_job_add(void *ctx, struct hz_job *j)
{
	struct mbox *b = ctx;
	char err[256];
	uint32_t credits;
	int rc;

	/* bound to their ports, as the box binds them where it learned the MACs */
	for (unsigned r = 0; r < j->n; r++) {
		j->spec->conns[r].src_ingress = (uint16_t)(r + 1);
		j->spec->conns[r].dst_ingress = (uint16_t)((r + 1) % j->n + 1);
	}
	rc = agg_engine_job_add(b->eng, 1, j->spec, b->now, &credits, err, sizeof(err));

	if (rc)
		fprintf(stderr, "job_add: %s\n", err);
	b->job = j;
	return rc;
}

static void mb_inject(void *ctx, unsigned port, const uint8_t *f, uint32_t len)
{
	struct mbox *b = ctx;
	struct held *h = malloc(sizeof(*h));
	enum nr_engine_ctr c = NR_ECTR_MAX;
	struct nr_pkt *p;

	assert_non_null(h);
	h->frame = malloc(len ? len : 1);     /* exact size: ASan sees any overread */
	assert_non_null(h->frame);
	memcpy(h->frame, f, len);
	p = &h->p;
	h->len = len;
	h->port = (uint16_t)port;
	b->a.rx++;
	b->now += 1000;
	if (len < 14) {                       /* the box's runt check */
		b->a.dropped++;
		b->a.other_drop++;
		goto out;
	}
	switch (nr_parse(h->frame, len, p)) {
	case NR_PKT_MALFORMED:
		b->a.dropped++;
		b->a.malformed[p->bad]++;
		goto out;
	case NR_PKT_OTHER:
		b->a.forwarded++;
		goto out;
	default:
		break;
	}
	if (!nr_icrc_check(h->frame, p)) {     /* the box's bad_icrc drop */
		b->a.dropped++;
		b->a.other_drop++;
		goto out;
	}
	b->live++;
	switch (agg_engine_input(b->eng, p, h->frame, h, b->now, &c)) {
	case NR_V_HELD:
		b->a.held++;
		return;
	case NR_V_RESEND:
		b->live--;
		b->a.resent++;
		fixup(h->frame, len, false);
		if (hz_result(b->job, h->frame, len, true) != 1)
			fail_msg("resent a frame that is not a result of the job");
		break;
	case NR_V_FORWARD:
		b->live--;
		b->a.forwarded++;
		/* a forwarded frame must never be a (raw) data packet of the job */
		if (hz_result(b->job, h->frame, len, false))
			fail_msg("forwarded a data packet of the job (ctr %d)", c);
		break;
	default:
		b->live--;
		b->a.dropped++;
		assert_true(c < NR_ECTR_MAX);
		b->a.edrop[c]++;
		break;
	}
out:
	free(h->frame);
	free(h);
}

static void mb_settle(void *ctx, struct hz_job *j)
{
	struct mbox *b = ctx;

	agg_engine_poll(b->eng, b->now);
}

static void mb_acct(void *ctx, struct hz_acct *a)
{
	struct mbox *b = ctx;

	*a = b->a;
	agg_engine_counters(b->eng, a->ectr);
}

static uint32_t ip_of(unsigned r)
{
	return htonl(0x0A4E0000u | (r + 1));
}

static void mac_of(unsigned r, uint8_t mac[6])
{
	const uint8_t m[6] = { 0x02, 0x4e, 0x52, 0x00, 0x00, (uint8_t)(r + 1) };

	memcpy(mac, m, 6);
}

static struct mbox g_box;

/* after a failed case too */
static int mb_teardown(void **state)
{
	(void)state;
	agg_engine_destroy(g_box.eng);
	g_box.eng = NULL;
	return 0;
}
static struct hz_drv g_drv = {
	.name = "engine",
	.begin = mb_begin, .end = mb_end, .job_add = mb_job_add, .inject = mb_inject,
	.settle = mb_settle, .acct = mb_acct, .max_frame = HZ_FRAME_MAX,
	.ip_of = ip_of, .mac_of = mac_of, .ctx = &g_box,
};

#define CASE(name) \
	static void test_##name(void **state) { (void)state; hz_case_##name(&g_drv); }
CASE(lengths)
CASE(bad_headers)
CASE(pad_and_reth)
CASE(unknown_opcodes)
CASE(nan_inf)
CASE(unknown_qpn_flood)
CASE(spoofed)
CASE(forged)
CASE(duplicates)
CASE(acks_never_sent)
CASE(bad_icrc)

int main(void)
{

	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_lengths, mb_teardown),
		cmocka_unit_test_teardown(test_bad_headers, mb_teardown),
		cmocka_unit_test_teardown(test_pad_and_reth, mb_teardown),
		cmocka_unit_test_teardown(test_unknown_opcodes, mb_teardown),
		cmocka_unit_test_teardown(test_nan_inf, mb_teardown),
		cmocka_unit_test_teardown(test_unknown_qpn_flood, mb_teardown),
		cmocka_unit_test_teardown(test_spoofed, mb_teardown),
		cmocka_unit_test_teardown(test_forged, mb_teardown),
		cmocka_unit_test_teardown(test_duplicates, mb_teardown),
		cmocka_unit_test_teardown(test_acks_never_sent, mb_teardown),
		cmocka_unit_test_teardown(test_bad_icrc, mb_teardown),
	};

	return cmocka_run_group_tests_name("hostile traffic, engine level", tests, NULL, NULL);
}
