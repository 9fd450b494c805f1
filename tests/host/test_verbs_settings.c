/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs transport's settings, against the stand-in libibverbs
 * (verbs_standin.h) since this machine has no RDMA device: which device and
 * GID it takes for its address, what it refuses (an active MTU below the
 * job's, a max_msg_sz below a message, a port that is down), and every
 * attribute it hands ibv_modify_qp (path MTU, GRH traffic class, GID index,
 * timeouts, retry counts, RNR timer) with its mask.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "host/transport/nr_transport.h"
#include "verbs_standin.h"

static uint32_t ip4(const char *s)
{
	uint32_t a;

	inet_pton(AF_INET, s, &a);
	return a;
}

/* Two devices: mlx5_0 carries 10.0.0.9, mlx5_1 carries 10.0.0.3 (v1 at 0, v2 at 3). */
static int two_devices(void **state)
{
	struct standin_device d0 = { .name = "mlx5_0", .active_mtu = IBV_MTU_4096,
				     .max_msg_sz = 1u << 31, .ngids = 2 };
	struct standin_device d1 = { .name = "mlx5_1", .active_mtu = IBV_MTU_4096,
				     .max_msg_sz = 1u << 31, .ngids = 4 };

	standin_reset();
	d0.gids[0] = standin_gid_v4("10.0.0.9", 0);
	d0.gids[1] = standin_gid_v4("10.0.0.9", 1);
	d1.gids[0] = standin_gid_v4("10.0.0.3", 0);
	d1.gids[1] = standin_gid_v4("10.0.0.77", 1);
	d1.gids[3] = standin_gid_v4("10.0.0.3", 1);
	standin_add_device(&d0);
	standin_add_device(&d1);
	return 0;
}

static struct nr_tp_config cfg_for(const char *ip)
{
	return (struct nr_tp_config){ .kind = "verbs", .local_ip = ip4(ip), .gid_index = -1,
				      .mtu = 1024 };
}

static struct nr_tp *open_ok(const struct nr_tp_config *c)
{
	char err[512] = "";
	struct nr_tp *tp = nr_tp_open(c, err, sizeof(err));

	if (!tp)
		fail_msg("nr_tp_open: %s", err);
	return tp;
}

static void open_fails(const struct nr_tp_config *c, const char *const *want)
{
	char err[512] = "";

	assert_null(nr_tp_open(c, err, sizeof(err)));
	printf("# %s\n", err);
	for (; *want; want++)
		if (!strstr(err, *want))
			fail_msg("error \"%s\" does not name \"%s\"", err, *want);
	assert_int_equal(standin_open_count(), 0);     /* nothing left open */
}

/* Connect one QP to a peer at 10.0.0.4; the three ibv_modify_qp calls are logged. */
static void connect_one(struct nr_tp *tp, struct nr_tp_qp **qp)
{
	struct nr_qp_info me, peer = { .ip = ip4("10.0.0.4"), .qpn = 0x1234, .psn = 0x777 };
	char st[128], want[96];

	assert_int_equal(nr_tp_qp_create(tp, qp, &me), 0);
	assert_int_equal(nr_tp_qp_connect(*qp, &peer), 0);
	assert_int_equal(standin_nmodify(), 3);
	/* what a stall's message says of it: the RNIC's own view (ibv_query_qp) */
	snprintf(want, sizeof(want), "state RTS, expects psn 0x777, sends psn 0x%x next", me.psn);
	assert_string_equal(nr_tp_qp_state(*qp, st, sizeof(st)), want);
}

static const struct standin_modify *modify(enum ibv_qp_state to)
{
	for (unsigned i = 0; i < standin_nmodify(); i++)
		if (standin_modify_at(i)->attr.qp_state == to)
			return standin_modify_at(i);
	fail_msg("no ibv_modify_qp to state %d", to);
	return NULL;
}

/* The device and the RoCE v2 GID index are the ones of the address. */
static void test_device_and_gid_by_address(void **state)
{
	struct nr_tp_config c = cfg_for("10.0.0.3");
	struct nr_tp *tp = open_ok(&c);
	struct nr_tp_qp *qp;
	const struct standin_modify *rtr;
	uint8_t dgid[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 4 };

	assert_int_equal(standin_opened("mlx5_0"), 1);   /* looked at, no GID: closed */
	assert_int_equal(standin_opened("mlx5_1"), 1);
	assert_int_equal(standin_open_count(), 1);
	connect_one(tp, &qp);
	rtr = modify(IBV_QPS_RTR);
	assert_int_equal(rtr->attr.ah_attr.grh.sgid_index, 3);    /* the v2 GID, not the v1 */
	assert_true(rtr->attr.ah_attr.is_global);
	assert_memory_equal(rtr->attr.ah_attr.grh.dgid.raw, dgid, 16);
	assert_int_equal(rtr->attr.dest_qp_num, 0x1234);
	assert_int_equal(rtr->attr.rq_psn, 0x777);
	assert_true(rtr->mask & IBV_QP_AV);
	nr_tp_qp_destroy(qp);
	nr_tp_close(tp);
	assert_int_equal(standin_open_count(), 0);
}

/* The other address: the first device. */
static void test_first_device_when_it_matches(void **state)
{
	struct nr_tp_config c = cfg_for("10.0.0.9");
	struct nr_tp *tp = open_ok(&c);
	struct nr_tp_qp *qp;

	assert_int_equal(standin_opened("mlx5_1"), 0);
	connect_one(tp, &qp);
	assert_int_equal(modify(IBV_QPS_RTR)->attr.ah_attr.grh.sgid_index, 1);
	nr_tp_qp_destroy(qp);
	nr_tp_close(tp);
}

static void test_no_gid_names_devices(void **state)
{
	struct nr_tp_config c = cfg_for("10.0.0.5");
	const char *const want[] = { "10.0.0.5", "mlx5_0", "mlx5_1", "NR_GID_INDEX", NULL };

	open_fails(&c, want);
}

static void test_named_device(void **state)
{
	struct nr_tp_config c = cfg_for("10.0.0.3");
	const char *const missing[] = { "mlx5_7", "NR_DEVICE", NULL };
	const char *const no_gid[] = { "10.0.0.3", "mlx5_0", NULL };

	c.device = "mlx5_7";
	open_fails(&c, missing);
	c.device = "mlx5_0";        /* exists, but does not carry 10.0.0.3 */
	open_fails(&c, no_gid);
	assert_int_equal(standin_opened("mlx5_1"), 0);
}

/* An explicit GID index is taken as it is, on the named device. */
static void test_explicit_gid_index(void **state)
{
	struct nr_tp_config c = cfg_for("10.0.0.3");
	struct nr_tp *tp;
	struct nr_tp_qp *qp;

	c.device = "mlx5_1";
	c.gid_index = 1;
	tp = open_ok(&c);
	connect_one(tp, &qp);
	assert_int_equal(modify(IBV_QPS_RTR)->attr.ah_attr.grh.sgid_index, 1);
	nr_tp_qp_destroy(qp);
	nr_tp_close(tp);
}

/* An active MTU below the job's is refused, not clamped. */
static void test_mtu_below_job(void **state)
{
	struct standin_device d = { .name = "rxe0", .active_mtu = IBV_MTU_1024,
				    .max_msg_sz = 1u << 31, .ngids = 1 };
	struct nr_tp_config c = cfg_for("10.0.0.3");
	const char *const want[] = { "rxe0", "active MTU 1024", "4096", "NR_MTU=1024", NULL };
	struct nr_tp *tp;
	struct nr_tp_qp *qp;

	standin_reset();
	d.gids[0] = standin_gid_v4("10.0.0.3", 1);
	standin_add_device(&d);
	c.mtu = 4096;
	open_fails(&c, want);
	c.mtu = 1024;
	tp = open_ok(&c);
	connect_one(tp, &qp);
	assert_int_equal(modify(IBV_QPS_RTR)->attr.path_mtu, IBV_MTU_1024);
	assert_true(modify(IBV_QPS_RTR)->mask & IBV_QP_PATH_MTU);
	nr_tp_qp_destroy(qp);
	nr_tp_close(tp);
	c.mtu = 1000;
	{
		const char *const bad[] = { "mtu 1000 is not an IB path MTU", NULL };

		open_fails(&c, bad);
	}
}

static void test_port_down(void **state)
{
	struct standin_device d = { .name = "mlx5_2", .state = IBV_PORT_DOWN,
				    .active_mtu = IBV_MTU_4096, .max_msg_sz = 1u << 31, .ngids = 1 };
	struct nr_tp_config c = cfg_for("10.0.0.3");
	const char *const want[] = { "mlx5_2", "not active", NULL };

	standin_reset();
	d.gids[0] = standin_gid_v4("10.0.0.3", 1);
	standin_add_device(&d);
	open_fails(&c, want);
}

/* max_msg_sz: refused at open below a message, and a longer write at post. */
static void test_max_msg_sz(void **state)
{
	struct standin_device d = { .name = "mlx5_3", .active_mtu = IBV_MTU_4096,
				    .max_msg_sz = 65536, .ngids = 1 };
	struct nr_tp_config c = cfg_for("10.0.0.3");
	const char *const want[] = { "mlx5_3", "max_msg_sz", "65536", "131072", "NR_MSG_SIZE", NULL };
	static uint8_t buf[65537];
	struct nr_tp_mr mr;
	struct nr_tp *tp;
	struct nr_tp_qp *qp;
	struct nr_wc wc[2];

	standin_reset();
	d.gids[0] = standin_gid_v4("10.0.0.3", 1);
	standin_add_device(&d);
	c.max_msg = 131072;
	open_fails(&c, want);
	c.max_msg = 65536;
	tp = open_ok(&c);
	connect_one(tp, &qp);
	assert_int_equal(nr_tp_reg_mr(tp, buf, sizeof(buf), &mr), 0);
	assert_int_equal(nr_tp_post_write_imm(qp, 1, &mr, buf, 65537, 0x1000, 7, 5), -EMSGSIZE);
	assert_int_equal(nr_tp_post_write_imm(qp, 2, &mr, buf, 65536, 0x1000, 7, 0x01020304), 0);
	assert_int_equal(standin_nsend(), 1);
	assert_int_equal(standin_send_at(0)->opcode, IBV_WR_RDMA_WRITE_WITH_IMM);
	assert_int_equal(standin_send_at(0)->imm_data, htonl(0x01020304));
	assert_int_equal(standin_send_at(0)->wr.rdma.remote_addr, 0x1000);
	assert_int_equal(nr_tp_poll(tp, wc, 2, 0), 1);
	assert_int_equal(wc[0].wr_id, 2);
	assert_int_equal(wc[0].status, NR_WC_OK);
	/* a traffic class per message: not on verbs (the QP's address vector has one); the
	 * write goes as any other, with the QP's */
	assert_false(nr_tp_wr_tclass(tp));
	assert_int_equal(nr_tp_post_write_imm_tc(qp, 3, &mr, buf, 64, 0x1000, 7, 6,
						 &(struct nr_tp_mark){ .tclass = 0x2a }), 0);
	assert_int_equal(standin_nsend(), 2);
	assert_int_equal(standin_send_at(1)->imm_data, htonl(6));
	assert_int_equal(nr_tp_poll(tp, wc, 2, 0), 1);
	assert_int_equal(nr_tp_post_write_imm_tc(qp, 4, &mr, buf, 64, 0x1000, 7, 6,
						 &(struct nr_tp_mark){ .tclass = 256 }), -EINVAL);
	nr_tp_dereg_mr(tp, &mr);
	nr_tp_qp_destroy(qp);
	nr_tp_close(tp);
}

/* Traffic class, timeouts, retry counts and the RNR timer, with their masks. */
static void test_qp_attributes(void **state)
{
	struct nr_tp_config c = cfg_for("10.0.0.3");
	struct nr_tp *tp;
	struct nr_tp_qp *qp;
	const struct standin_modify *init, *rtr, *rts;

	c.tclass = 26 << 2 | 2;      /* DSCP 26 (AF31), ECT(0): as the ConnectX captures */
	c.timeout = 16;
	c.retry_cnt = 5;
	tp = open_ok(&c);
	connect_one(tp, &qp);
	init = modify(IBV_QPS_INIT);
	rtr = modify(IBV_QPS_RTR);
	rts = modify(IBV_QPS_RTS);
	assert_int_equal(init->attr.port_num, 1);
	assert_int_equal(init->attr.qp_access_flags, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE);
	assert_int_equal(init->mask, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			 IBV_QP_ACCESS_FLAGS);
	assert_int_equal(rtr->attr.ah_attr.grh.traffic_class, 26 << 2 | 2);
	assert_int_equal(rtr->attr.ah_attr.grh.hop_limit, 64);
	assert_int_equal(rtr->attr.min_rnr_timer, 12);
	assert_int_equal(rtr->mask, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	assert_int_equal(rts->attr.timeout, 16);
	assert_int_equal(rts->attr.retry_cnt, 5);
	assert_int_equal(rts->attr.rnr_retry, 7);
	assert_int_equal(rts->mask, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			 IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	nr_tp_qp_destroy(qp);
	nr_tp_close(tp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_device_and_gid_by_address, two_devices),
		cmocka_unit_test_setup(test_first_device_when_it_matches, two_devices),
		cmocka_unit_test_setup(test_no_gid_names_devices, two_devices),
		cmocka_unit_test_setup(test_named_device, two_devices),
		cmocka_unit_test_setup(test_explicit_gid_index, two_devices),
		cmocka_unit_test(test_mtu_below_job),
		cmocka_unit_test(test_port_down),
		cmocka_unit_test(test_max_msg_sz),
		cmocka_unit_test_setup(test_qp_attributes, two_devices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
