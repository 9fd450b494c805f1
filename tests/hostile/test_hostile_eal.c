/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile traffic against the real box (suite eal): the cases of hz_cases.c on
 * netreduce's dataplane (dp_burst and the engine on worker lcore 1) with four
 * ring-backed host ports (tests/eal harness, --no-huge).  Frames longer than
 * one mbuf go in as mbuf chains.  The counters checked are the box's own
 * (dataplane/dpdk/dp_ctr.h): rx = forwarded + flooded + filtered + held + resent +
 * dropped, dropped = malformed.* + engine drops + runt + multiseg + ...
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_mbuf.h>

#include "tests/eal/eal_harness.h"

#include "hz_cases.h"

#define HZ_SEG (DP_MBUF_DATAROOM - RTE_PKTMBUF_HEADROOM)

static struct harness g_h;

static int eb_begin(void *ctx)
{
	return h_setup(ctx, 4, DP_MODE_SWITCH);
}

static void eb_end(void *ctx)
{
	h_teardown(ctx);
}

static int eb_job_add(void *ctx, struct hz_job *j)
{
	struct harness *h = ctx;
	uint32_t credits;
	char err[256] = "";
	int rc = dp_job_add(h->box, 1, j->spec, &credits, err, sizeof(err));

	if (rc)
		fprintf(stderr, "job_add: %s\n", err);
	return rc;
}

/*
 * One frame, as a chain of mbufs when it does not fit one.  mbuf->port is set
 * to the ingress port as a NIC PMD would (net_ring leaves it alone).
 */
static void eb_inject(void *ctx, unsigned port, const uint8_t *f, uint32_t len)
{
	struct harness *h = ctx;
	struct rte_mbuf *head = NULL;
	uint32_t off = 0;

	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(h->pool);
		uint32_t n = len - off < HZ_SEG ? len - off : HZ_SEG;
		char *d;

		assert_non_null(m);
		d = rte_pktmbuf_append(m, (uint16_t)n);
		assert_non_null(d);
		memcpy(d, f + off, n);
		off += n;
		m->port = h->port_id[port];
		if (!head)
			head = m;
		else
			assert_int_equal(rte_pktmbuf_chain(head, m), 0);
	} while (off < len);
	while (rte_ring_enqueue(h->rx[port], head) != 0) {
		h_collect(h);
		usleep(10);
	}
	h->injected++;
}

static void eb_settle(void *ctx, struct hz_job *j)
{
	struct harness *h = ctx;

	h_settle(h);
	for (unsigned i = 0; i < h->n_out; i++)
		hz_result(j, h->out[i].data, h->out[i].len, true);
	h_clear_out(h);
}

static const char *const other_drops[] = {
	"runt", "bad_icrc", "multiseg", "no_record", "handoff_full", "no_route", "l2_pinned",
	"vlan_refused",
};

static void eb_acct(void *ctx, struct hz_acct *a)
{
	struct harness *h = ctx;
	struct dp_ctr s;

	memset(a, 0, sizeof(*a));
	dp_box_counters(h->box, &s);
	a->rx = s.c[DP_CTR_RX];
	a->forwarded = s.c[DP_CTR_FORWARDED] + s.c[DP_CTR_FLOODED] + s.c[DP_CTR_FILTERED];
	a->held = s.c[DP_CTR_HELD];
	a->resent = s.c[DP_CTR_RESENT];
	a->dropped = s.c[DP_CTR_DROPPED];
	memcpy(a->malformed, s.malformed, sizeof(a->malformed));
	memcpy(a->edrop, s.engine_drop, sizeof(a->edrop));
	/* the box's other drop reasons, by name (the list grows) */
	for (unsigned k = 0; k < DP_CTR_MAX; k++)
		for (unsigned n = 0; n < sizeof(other_drops) / sizeof(other_drops[0]); n++)
			if (!strcmp(dp_ctr_names[k], other_drops[n]))
				a->other_drop += s.c[k];
	a->l2_pinned = s.c[DP_CTR_L2_PINNED];
	a->vlan_refused = s.c[DP_CTR_VLAN_REFUSED];
	assert_int_equal(s.c[DP_CTR_HANDOFF_IN], 0);   /* one worker */
	assert_int_equal(dp_box_engine_counters(h->box, a->ectr), 0);
}

static struct hz_drv g_drv = {
	.name = "box",
	.begin = eb_begin, .end = eb_end, .job_add = eb_job_add, .inject = eb_inject,
	.settle = eb_settle, .acct = eb_acct, .max_frame = HZ_FRAME_MAX, .l2_pins = true,
	.seg = HZ_SEG,
	.ip_of = h_host_ip, .mac_of = h_host_mac, .ctx = &g_h,
};

#define CASE(name)                                                            \
	static void test_##name(void **state)                                 \
	{                                                                     \
		(void)state;                                                  \
		if (!h_eal_ok)                                                \
			skip();                                               \
		hz_case_##name(&g_drv);                                       \
	}
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
		cmocka_unit_test_teardown(test_lengths, h_case_teardown),
		cmocka_unit_test_teardown(test_bad_headers, h_case_teardown),
		cmocka_unit_test_teardown(test_pad_and_reth, h_case_teardown),
		cmocka_unit_test_teardown(test_unknown_opcodes, h_case_teardown),
		cmocka_unit_test_teardown(test_nan_inf, h_case_teardown),
		cmocka_unit_test_teardown(test_unknown_qpn_flood, h_case_teardown),
		cmocka_unit_test_teardown(test_spoofed, h_case_teardown),
		cmocka_unit_test_teardown(test_forged, h_case_teardown),
		cmocka_unit_test_teardown(test_duplicates, h_case_teardown),
		cmocka_unit_test_teardown(test_acks_never_sent, h_case_teardown),
		cmocka_unit_test_teardown(test_bad_icrc, h_case_teardown),
	};

	return h_run_box_group("hostile traffic, box", tests, sizeof(tests) / sizeof(tests[0]));
}
