/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs transport.  Needs an RDMA device (a real RNIC or rdma_rxe); where
 * there is none, every test is skipped with the transport's own reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <cmocka.h>

#include "host/netreduce.h"
#include "host/transport/nr_transport.h"

static int no_device;

struct vstate {
	struct nr_tp *tp;
	uint32_t ip;
	char why[256];
};

static const char *test_addr(void)
{
	const char *a = getenv("NR_TEST_VERBS_ADDR");   /* an IPv4 on the RDMA device's netdev */

	return a ? a : "127.0.0.1";
}

static int setup(void **state)
{
	static struct vstate st;
	struct nr_tp_config cfg = { .kind = "verbs", .gid_index = -1, .mtu = 1024, .retry_cnt = 7,
				    .device = getenv("NR_DEVICE") };

	inet_pton(AF_INET, test_addr(), &st.ip);
	cfg.local_ip = st.ip;
	st.tp = nr_tp_open(&cfg, st.why, sizeof(st.why));
	if (!st.tp) {
		printf("verbs transport unavailable: %s\n", st.why);
		no_device = 1;
	}
	*state = &st;
	return 0;
}

static int teardown(void **state)
{
	struct vstate *st = *state;

	nr_tp_close(st->tp);
	return 0;
}

#define NEED_DEVICE(st)                                                              \
	do {                                                                         \
		if (!(st)->tp) {                                                     \
			printf("SKIP: %s\n", (st)->why);                             \
			skip();                                                      \
		}                                                                    \
	} while (0)

/* Without a device the reason must say what to do. */
static void test_open_reason(void **state)
{
	struct vstate *st = *state;

	if (st->tp) {
		assert_string_equal(nr_tp_kind(st->tp), "verbs");
		return;
	}
	assert_true(strstr(st->why, "no RDMA device found") ||
		    strstr(st->why, "built without rdma-core") || strstr(st->why, "GID") ||
		    strstr(st->why, "not found"));
	NEED_DEVICE(st);
}

/* Two QPs of one device connected to each other: WRITE WITH IMM both ways. */
static void test_loopback_write_imm(void **state)
{
	struct vstate *st = *state;
	struct nr_tp_qp *a, *b;
	struct nr_qp_info ia, ib;
	struct nr_tp_mr mra, mrb;
	static uint8_t bufa[1 << 16], bufb[1 << 16];
	struct nr_wc wc[4];
	int got_send = 0, got_recv = 0;

	NEED_DEVICE(st);
	for (size_t i = 0; i < sizeof(bufa); i++)
		bufa[i] = (uint8_t)(i * 7 + 1);
	memset(bufb, 0, sizeof(bufb));
	assert_int_equal(nr_tp_reg_mr(st->tp, bufa, sizeof(bufa), &mra), 0);
	assert_int_equal(nr_tp_reg_mr(st->tp, bufb, sizeof(bufb), &mrb), 0);
	assert_int_equal(nr_tp_qp_create(st->tp, &a, &ia), 0);
	assert_int_equal(nr_tp_qp_create(st->tp, &b, &ib), 0);
	assert_int_equal(nr_tp_qp_connect(a, &ib), 0);
	assert_int_equal(nr_tp_qp_connect(b, &ia), 0);
	assert_int_equal(nr_tp_post_recv(b, 7), 0);
	assert_int_equal(nr_tp_post_write_imm(a, 5, &mra, bufa, 40000, mrb.va, mrb.rkey,
					      0x01000002), 0);
	for (int tries = 0; tries < 100 && (!got_send || !got_recv); tries++) {
		int n = nr_tp_poll(st->tp, wc, 4, 100);

		assert_true(n >= 0);
		for (int i = 0; i < n; i++) {
			assert_int_equal(wc[i].status, NR_WC_OK);
			if (wc[i].op == NR_WC_SEND) {
				assert_true(wc[i].qp == a);
				assert_int_equal(wc[i].wr_id, 5);
				got_send = 1;
			} else {
				assert_true(wc[i].qp == b);
				assert_int_equal(wc[i].imm, 0x01000002);
				assert_int_equal(wc[i].byte_len, 40000);
				got_recv = 1;
			}
		}
	}
	assert_true(got_send && got_recv);
	assert_memory_equal(bufa, bufb, 40000);
	nr_tp_qp_destroy(a);
	nr_tp_qp_destroy(b);
	nr_tp_dereg_mr(st->tp, &mra);
	nr_tp_dereg_mr(st->tp, &mrb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_reason),
		cmocka_unit_test(test_loopback_write_imm),
	};

	int failed = cmocka_run_group_tests(tests, setup, teardown);

	/* nothing could run: tell meson it is a skip (exit 77), not a pass */
	return failed == 0 && no_device ? 77 : failed;
}
