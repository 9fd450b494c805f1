/* SPDX-License-Identifier: BSD-3-Clause */
/* Configuration from the environment and from the struct; single-rank communicators. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "host/netreduce.h"
#include "host/comm/nr_config.h"
#include "host/comm/nr_util.h"
#include "host/transport/nr_transport.h"

/* clang-format off */
static const char *const vars[] = {
	"NR_RANK", "NR_WORLD", "NR_ROOT", "NR_BOX", "NR_SWITCH", "NR_TOKEN", "NR_TRANSPORT", "NR_DEVICE",
	"NR_ADDR", "NR_MTU", "NR_MSG_SIZE", "NR_TIMEOUT_MS", "NR_POOL_MSGS", "NR_RING_WINDOW",
	"NR_UDP_PORT", "NR_GID_INDEX", "NR_LOCAL_SIZE", "NR_LOCAL_RANK", "NR_HIER", "NR_INTRA_GBPS",
	"NR_INTER_GBPS", "NR_SHM_PACE_GBPS", "NR_RACKS", "NR_RACK_AGENTS",
	"NR_CHANNELS", "NR_SOFT_PROFILE", "NR_TCLASS", "NR_SOFT_WINDOW", "NR_SOFT_ACKREQ", "NR_BOOTSTRAP_TIMEOUT_MS",
	"NR_REDUCE", "NR_SHORT_PPM", "NR_SHORT_DSCP", "NR_SHORT_SCALE", "NR_SPRAY_PORTS",
	"NR_SPRAY_REORDER", "NR_PRIO_CLASSES", "NR_DE_THRESH", "NR_RAILS",
};
/* clang-format on */

static int clear_env(void **state)
{
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	return 0;
}

static void set_good(void)
{
	setenv("NR_RANK", "2", 1);
	setenv("NR_WORLD", "4", 1);
	setenv("NR_ROOT", "10.0.0.1:29500", 1);
	setenv("NR_ADDR", "10.0.0.3", 1);
}

/* NR_SWITCH, NR_BOX's old name, is still read; two different boxes are an error. */
static void test_box_alias(void **state)
{
	struct nr_config cfg;

	(void)state;
	set_good();
	setenv("NR_TOKEN", "s3cret", 1);
	setenv("NR_SWITCH", "10.0.0.254:7000", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	assert_string_equal(cfg.switch_addr, "10.0.0.254:7000");
	setenv("NR_BOX", "10.0.0.254:7000", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	setenv("NR_BOX", "10.0.0.253:7000", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "NR_SWITCH is the old name of NR_BOX"));
	unsetenv("NR_SWITCH");
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	assert_string_equal(cfg.switch_addr, "10.0.0.253:7000");
}

/* The one splitter of NR_BOX's, NR_RACKS' and NR_RAILS' lists. */
static void test_list_split(void **state)
{
	static const struct {
		const char *s;
		int n;
	} cases[] = {
		{ "eth1", 1 },     { "eth1,eth2", 2 },
		{ "abc,abcd", 2 }, /* 4 = width - 1 */
		{ "a,b,c", 3 },    { "", -1 },
		{ ",", -1 },       { "eth1,", -1 },
		{ ",eth1", -1 },   { "eth1,,eth2", -1 },
		{ "abcde", -1 },   /* width */ { "a,b,c,d", -1 }, /* max 3 */
	};
	char out[3][5];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(out, 'x', sizeof(out));
		printf("\"%s\": %d\n", cases[i].s, nr_list_split(cases[i].s, out[0], 5, 3));
		assert_int_equal(nr_list_split(cases[i].s, out[0], 5, 3), cases[i].n);
	}
	assert_int_equal(nr_list_split(NULL, out[0], 5, 3), -1);
	assert_int_equal(nr_list_split("eth1,eth2", out[0], 5, 3), 2);
	assert_string_equal(out[0], "eth1");
	assert_string_equal(out[1], "eth2");
}

/*
 * NR_BOX as a list: up to 8 boxes a job is striped over, each ip:port once;
 * NR_CHANNELS then a multiple of their count (1: one a box).
 */
static void test_box_list(void **state)
{
	static const struct {
		const char *box, *channels;
		bool ok;
	} cases[] = {
		{ "10.0.0.254:7100,10.0.0.253:7100", NULL, true },
		{ "10.0.0.254:7100,10.0.0.253:7100", "4", true },
		{ "10.0.0.254:7100,10.0.0.253:7100", "1", true },
		{ "10.0.0.254:7100,10.0.0.253:7100", "auto", true },
		{ "10.0.0.254:7100,10.0.0.253:7100", "3", false },
		{ "10.0.0.254:7100,10.0.0.253:7100,10.0.0.252:7100", "6", true },
		{ "10.0.0.254:7100,", NULL, false },
		{ ",10.0.0.254:7100", NULL, false },
		{ "10.0.0.254:7100,,10.0.0.253:7100", NULL, false },
		{ "10.0.0.254:7100,10.0.0.254:7100", NULL, false }, /* a box twice */
		{ "10.0.0.254:7100,10.0.0.253", NULL, false },
		{ "1.0.0.1:1,1.0.0.2:1,1.0.0.3:1,1.0.0.4:1,1.0.0.5:1,1.0.0.6:1,1.0.0.7:1,1.0.0.8:1",
		  "8", true },
		{ "1.0.0.1:1,1.0.0.2:1,1.0.0.3:1,1.0.0.4:1,1.0.0.5:1,1.0.0.6:1,1.0.0.7:1,1.0.0.8:1,"
		  "1.0.0.9:1",
		  NULL, false }, /* 9 */
	};
	struct nr_config cfg;

	(void)state;
	set_good();
	setenv("NR_TOKEN", "s3cret", 1);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		setenv("NR_BOX", cases[i].box, 1);
		if (cases[i].channels)
			setenv("NR_CHANNELS", cases[i].channels, 1);
		else
			unsetenv("NR_CHANNELS");
		rc = nr_config_from_env(&cfg);
		printf("NR_BOX=%s NR_CHANNELS=%s: %s\n", cases[i].box,
		       cases[i].channels ? cases[i].channels : "(unset)",
		       rc ? nr_comm_last_error(NULL) : "ok");
		assert_int_equal(rc, cases[i].ok ? NR_OK : NR_ERR_CONFIG);
		if (!cases[i].ok)
			assert_non_null(strstr(nr_comm_last_error(NULL),
					       cases[i].channels ? "NR_CHANNELS" : "NR_BOX"));
	}
}

static void test_env_good(void **state)
{
	struct nr_config cfg;

	set_good();
	setenv("NR_BOX", "10.0.0.254:7000", 1);
	setenv("NR_TOKEN", "s3cret", 1);
	setenv("NR_TRANSPORT", "verbs", 1);
	setenv("NR_DEVICE", "rxe0", 1);
	setenv("NR_MTU", "4096", 1);
	setenv("NR_MSG_SIZE", "0x20000", 1);
	setenv("NR_TIMEOUT_MS", "2500", 1);
	setenv("NR_POOL_MSGS", "16", 1);
	setenv("NR_UDP_PORT", "4792", 1);
	setenv("NR_LOCAL_SIZE", "2", 1);
	setenv("NR_LOCAL_RANK", "0", 1);
	setenv("NR_HIER", "parallel", 1);
	setenv("NR_INTRA_GBPS", "80", 1);
	setenv("NR_INTER_GBPS", "12.5", 1);
	setenv("NR_SHM_PACE_GBPS", "0.5", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	assert_int_equal(cfg.local_size, 2);
	assert_int_equal(cfg.local_rank, 0);
	assert_string_equal(cfg.hier, "parallel");
	assert_true(cfg.intra_gbps == 80 && cfg.inter_gbps == 12.5 && cfg.shm_pace_gbps == 0.5);
	assert_null(cfg.racks);
	setenv("NR_CHANNELS", "4", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	assert_int_equal(cfg.channels, 4);
	setenv("NR_SOFT_PROFILE", "rnic", 1);
	setenv("NR_TCLASS", "0x6a", 1);
	setenv("NR_SOFT_WINDOW", "256", 1);
	setenv("NR_SOFT_ACKREQ", "16", 1);
	setenv("NR_BOOTSTRAP_TIMEOUT_MS", "90000", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	assert_int_equal(cfg.bootstrap_timeout_ms, 90000);
	assert_int_equal(cfg.soft_window, 256);
	assert_int_equal(cfg.soft_ackreq, 16);
	assert_int_equal(cfg.tclass, 0x6a);
	assert_string_equal(cfg.soft_profile, "rnic");
	setenv("NR_SOFT_PROFILE", "rxe", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	assert_string_equal(cfg.soft_profile, "rxe");
	assert_int_equal(cfg.rank, 2);
	assert_int_equal(cfg.world, 4);
	assert_string_equal(cfg.root, "10.0.0.1:29500");
	assert_string_equal(cfg.switch_addr, "10.0.0.254:7000");
	assert_string_equal(cfg.token, "s3cret");
	assert_string_equal(cfg.transport, "verbs");
	assert_string_equal(cfg.device, "rxe0");
	assert_string_equal(cfg.addr, "10.0.0.3");
	assert_int_equal(cfg.mtu, 4096);
	assert_int_equal(cfg.msg_size, 131072);
	assert_int_equal(cfg.timeout_ms, 2500);
	assert_int_equal(cfg.pool_msgs, 16);
	assert_int_equal(cfg.udp_port, 4792);
	setenv("NR_CHANNELS", "auto", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	assert_int_equal(cfg.channels, 0);
}

static void test_env_defaults(void **state)
{
	struct nr_config cfg;

	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	assert_int_equal(cfg.rank, 0);
	assert_int_equal(cfg.world, 1);
	assert_string_equal(cfg.transport, "soft");
	assert_null(cfg.switch_addr);
	assert_int_equal(cfg.mtu, 0);            /* the largest NR_ADDR's interface carries */
	assert_int_equal(cfg.msg_size, 65536);
	assert_int_equal(cfg.timeout_ms, 10000);
	assert_int_equal(cfg.local_size, 1);
	assert_int_equal(cfg.local_rank, -1);
	assert_null(cfg.hier);
	assert_null(cfg.racks);
	assert_int_equal(cfg.channels, 1);
	assert_int_equal(cfg.bootstrap_timeout_ms, 300000);
	/* no bound: every message exact; tolerant ones would carry AF11 */
	assert_int_equal(cfg.short_ppm, 0);
	assert_int_equal(cfg.short_dscp, 10);
	assert_int_equal(cfg.short_scale, 0);
	assert_int_equal(cfg.spray_ports, 0);    /* one port */
	assert_int_equal(cfg.spray_reorder, 0);
}

/* Priority classes: up to 4, within the DSCPs, the soft transport's, their own channels. */
static void test_prio_classes(void **state)
{
	struct nr_config cfg;

	set_good();
	setenv("NR_PRIO_CLASSES", "3", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	assert_int_equal(cfg.prio_classes, 3);
	setenv("NR_PRIO_CLASSES", "5", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "NR_PRIO_CLASSES=5: at most 4"));
	setenv("NR_PRIO_CLASSES", "4", 1);
	setenv("NR_SHORT_DSCP", "40", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "NR_PRIO_CLASSES=4 from NR_SHORT_DSCP=40"));
	unsetenv("NR_SHORT_DSCP");
	setenv("NR_TRANSPORT", "verbs", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "NR_PRIO_CLASSES=4 with NR_TRANSPORT=verbs: verbs: a QP's "
			       "traffic class is one for all its messages"));
	unsetenv("NR_TRANSPORT");
	setenv("NR_CHANNELS", "2", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);
	printf("%s\n", nr_comm_last_error(NULL));
	assert_non_null(strstr(nr_comm_last_error(NULL), "the classes take 5 channels"));
	setenv("NR_CHANNELS", "5", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
}

/* Drop-eligible packets: a multiple of the RMS, of tolerant messages, below DSCP 64. */
static void test_de_thresh(void **state)
{
	struct nr_config cfg;

	set_good();
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	assert_true(cfg.de_thresh == 0);
	setenv("NR_DE_THRESH", "0.25", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "NR_DE_THRESH=0.25 without NR_SHORT_PPM"));
	setenv("NR_SHORT_PPM", "10000", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	assert_true(cfg.de_thresh == 0.25);
	setenv("NR_DE_THRESH", "much", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL),
			       "NR_DE_THRESH=\"much\": not a multiple of the buffer's RMS (0..100)"));
	setenv("NR_DE_THRESH", "101", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);
	setenv("NR_DE_THRESH", "1", 1);
	setenv("NR_SHORT_DSCP", "62", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "the drop-eligible DSCP"));
	/* the struct's own check names the field */
	unsetenv("NR_SHORT_DSCP");
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	cfg.de_thresh = -1;
	assert_int_equal(nr_config_check(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "de_thresh=-1: a multiple"));
}

/* Spraying: the soft transport's, up to 64 ports, a reordering only with spraying. */
static void test_spray(void **state)
{
	struct nr_config cfg;

	set_good();
	setenv("NR_SPRAY_PORTS", "4", 1);
	setenv("NR_SPRAY_REORDER", "12", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	assert_int_equal(cfg.spray_ports, 4);
	assert_int_equal(cfg.spray_reorder, 12);
	setenv("NR_SPRAY_PORTS", "65", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "NR_SPRAY_PORTS=65: at most 64"));
	setenv("NR_SPRAY_PORTS", "4", 1);
	setenv("NR_TRANSPORT", "verbs", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL),
			       "NR_SPRAY_PORTS=4 with NR_TRANSPORT=verbs: verbs: a QP's packets "
			       "leave from one UDP source port"));
	unsetenv("NR_TRANSPORT");
	setenv("NR_SPRAY_REORDER", "1025", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "NR_SPRAY_REORDER=1025: at most 1024"));
	setenv("NR_SPRAY_REORDER", "3", 1);
	unsetenv("NR_SPRAY_PORTS");
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL),
			       "NR_SPRAY_REORDER=3 without NR_SPRAY_PORTS"));
	/* the struct, named by its fields */
	nr_config_default(&cfg);
	cfg.spray_ports = 2;
	assert_int_equal(nr_config_check(&cfg), NR_OK);
	cfg.spray_ports = 100;
	assert_int_equal(nr_config_check(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "spray_ports=100"));
}

/* The bound on tolerant messages from the environment and from the struct. */
static void test_short(void **state)
{
	struct nr_config cfg;

	set_good();
	setenv("NR_SHORT_PPM", "150000", 1);
	setenv("NR_SHORT_DSCP", "12", 1);
	setenv("NR_SHORT_SCALE", "1", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	assert_int_equal(cfg.short_ppm, 150000);
	assert_int_equal(cfg.short_dscp, 12);
	assert_int_equal(cfg.short_scale, 1);
	/* only a sum is scaled */
	setenv("NR_REDUCE", "max", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);
	printf("%s\n", nr_comm_last_error(NULL));
	assert_non_null(strstr(nr_comm_last_error(NULL), "NR_SHORT_SCALE=1 with NR_REDUCE=max"));
	setenv("NR_SHORT_SCALE", "0", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	/* the struct, named by its fields */
	nr_config_default(&cfg);
	assert_int_equal(cfg.short_dscp, 10);
	cfg.short_ppm = 500001;
	assert_int_equal(nr_config_check(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "short_ppm=500001: at most 500000"));
	cfg.short_ppm = 500000;
	cfg.short_dscp = 64;
	assert_int_equal(nr_config_check(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "short_dscp=64: a DSCP is 0..63"));
	cfg.short_dscp = 0;
	cfg.short_scale = 2;
	assert_int_equal(nr_config_check(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "short_scale=2"));
	cfg.short_scale = 1;
	assert_int_equal(nr_config_check(&cfg), NR_OK);
}

/* Each bad value fails with NR_ERR_CONFIG and a message naming the variable. */
static void test_env_bad(void **state)
{
	static const struct {
		const char *var, *val, *named;
	} bad[] = {
		{ "NR_RANK", "-1", "NR_RANK" },
		{ "NR_RANK", "4", "NR_RANK" },
		{ "NR_RANK", "two", "NR_RANK" },
		{ "NR_WORLD", "0", "NR_WORLD" },
		{ "NR_WORLD", "3x", "NR_WORLD" },
		{ "NR_ROOT", "10.0.0.1", "NR_ROOT" },
		{ "NR_ROOT", "host:1", "NR_ROOT" },
		{ "NR_ROOT", "10.0.0.1:70000", "NR_ROOT" },
		{ "NR_ADDR", "10.0.0", "NR_ADDR" },
		{ "NR_BOX", "10.0.0.9", "NR_BOX" },
		{ "NR_TRANSPORT", "tcp", "NR_TRANSPORT" },
		{ "NR_SOFT_PROFILE", "cx7", "NR_SOFT_PROFILE" },
		{ "NR_TCLASS", "256", "NR_TCLASS" },
		{ "NR_SOFT_WINDOW", "-1", "NR_SOFT_WINDOW" },
		{ "NR_SOFT_ACKREQ", "65536", "NR_SOFT_ACKREQ" },
		{ "NR_BOOTSTRAP_TIMEOUT_MS", "5", "NR_BOOTSTRAP_TIMEOUT_MS" },
		{ "NR_MTU", "1500", "NR_MTU" },
		{ "NR_MTU", "99999", "NR_MTU" },
		{ "NR_MSG_SIZE", "1000", "NR_MSG_SIZE" },
		{ "NR_MSG_SIZE", "", NULL }, /* empty = unset: default */
		{ "NR_TIMEOUT_MS", "5", "NR_TIMEOUT_MS" },
		{ "NR_POOL_MSGS", "7", "NR_POOL_MSGS" },
		{ "NR_RING_WINDOW", "65", "NR_RING_WINDOW" }, /* past the receives posted */
		{ "NR_RING_WINDOW", "64", NULL },
		{ "NR_UDP_PORT", "65536", "NR_UDP_PORT" },
		{ "NR_LOCAL_SIZE", "3", "NR_LOCAL_SIZE" }, /* does not divide NR_WORLD=4 */
		{ "NR_LOCAL_SIZE", "0", "NR_LOCAL_SIZE" },
		{ "NR_LOCAL_SIZE", "2", NULL },
		{ "NR_LOCAL_RANK", "1", "NR_LOCAL_RANK" }, /* rank 2 of 1 per host is local 0 */
		{ "NR_HIER", "ring", "NR_HIER" },
		{ "NR_HIER", "hierarchical", NULL },
		{ "NR_INTRA_GBPS", "-1", "NR_INTRA_GBPS" },
		{ "NR_INTER_GBPS", "fast", "NR_INTER_GBPS" },
		{ "NR_SHM_PACE_GBPS", "1e9", "NR_SHM_PACE_GBPS" },
		{ "NR_INTER_GBPS", "2.5", NULL },
		{ "NR_RACKS", "2,1", "NR_RACKS" }, /* 3 hosts, NR_WORLD=4 */
		{ "NR_RACKS", "2,", "NR_RACKS" },
		{ "NR_RACKS", "x", "NR_RACKS" },
		{ "NR_RACKS", "1,3", NULL },
		{ "NR_RACK_AGENTS", "-1", "NR_RACK_AGENTS" },
		{ "NR_CHANNELS", "0", "NR_CHANNELS" },
		{ "NR_CHANNELS", "17", "NR_CHANNELS" },
		{ "NR_CHANNELS", "many", "NR_CHANNELS" },
		{ "NR_REDUCE", "min", "NR_REDUCE" },
		{ "NR_REDUCE", "max", NULL },
		{ "NR_REDUCE", "sum", NULL },
		{ "NR_SHORT_PPM", "500001", "NR_SHORT_PPM" },
		{ "NR_SHORT_PPM", "-1", "NR_SHORT_PPM" },
		{ "NR_SHORT_PPM", "some", "NR_SHORT_PPM" },
		{ "NR_SHORT_PPM", "500000", NULL },
		{ "NR_SHORT_DSCP", "64", "NR_SHORT_DSCP" },
		{ "NR_SHORT_DSCP", "0", NULL },
		{ "NR_SHORT_SCALE", "2", "NR_SHORT_SCALE" },
		{ "NR_SHORT_SCALE", "yes", "NR_SHORT_SCALE" },
	};
	struct nr_config cfg;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		clear_env(NULL);
		set_good();
		setenv(bad[i].var, bad[i].val, 1);
		int rc = nr_config_from_env(&cfg);

		printf("%s=\"%s\": %s\n", bad[i].var, bad[i].val, rc ? nr_comm_last_error(NULL) : "ok");
		if (!bad[i].named) {
			assert_int_equal(rc, NR_OK);
			continue;
		}
		assert_int_equal(rc, NR_ERR_CONFIG);
		assert_non_null(strstr(nr_comm_last_error(NULL), bad[i].named));
	}
	/* reduce max: one rank per host, one rack (their phases sum) */
	clear_env(NULL);
	set_good();
	setenv("NR_REDUCE", "max", 1);
	setenv("NR_LOCAL_SIZE", "2", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "NR_REDUCE=max: hosts with several ranks"));
	/* the box needs the token */
	clear_env(NULL);
	set_good();
	setenv("NR_BOX", "10.0.0.9:7000", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "NR_TOKEN"));
	/* NR_WORLD unset (a framework gives the world later): the layout waits for the world */
	clear_env(NULL);
	setenv("NR_LOCAL_SIZE", "2", 1);
	setenv("NR_LOCAL_RANK", "1", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	cfg.world = 4;
	cfg.rank = 3;
	cfg.root = "127.0.0.1:1";
	cfg.addr = "127.0.0.1";
	assert_int_equal(nr_config_check(&cfg), NR_OK);
	cfg.world = 3;
	cfg.rank = 1;
	assert_int_equal(nr_config_check(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "local_size"));
	clear_env(NULL);
	setenv("NR_RACKS", "2,2", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	cfg.world = 4;
	cfg.rank = 1;
	cfg.root = "127.0.0.1:1";
	cfg.addr = "127.0.0.1";
	assert_int_equal(nr_config_check(&cfg), NR_OK);
	cfg.world = 5;
	assert_int_equal(nr_config_check(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "racks"));
	setenv("NR_RACKS", "2,x", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);   /* malformed: at once */
	/* NR_RACK_AGENTS: 1 up to the smallest rack */
	setenv("NR_RACKS", "3,2", 1);
	setenv("NR_RACK_AGENTS", "2", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_OK);
	assert_int_equal(cfg.rack_agents, 2);
	setenv("NR_RACK_AGENTS", "3", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "NR_RACK_AGENTS=3: 1..2"));
	/* world > 1 needs NR_ROOT and NR_ADDR */
	clear_env(NULL);
	setenv("NR_WORLD", "2", 1);
	assert_int_equal(nr_config_from_env(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "NR_ROOT"));
}

static void test_struct_check(void **state)
{
	struct nr_config cfg;
	struct nr_comm *c = (void *)1;

	nr_config_default(&cfg);
	cfg.world = 2;
	assert_int_equal(nr_comm_init(&cfg, &c), NR_ERR_CONFIG);
	assert_null(c);
	assert_non_null(strstr(nr_comm_last_error(NULL), "root"));
	cfg.root = "127.0.0.1:1";
	cfg.addr = "127.0.0.1";
	cfg.msg_size = 1000;
	assert_int_equal(nr_config_check(&cfg), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(NULL), "msg_size"));
	cfg.msg_size = 4096;
	assert_int_equal(nr_config_check(&cfg), NR_OK);
}

/* The struct's size: set by nr_config_default; a config never filled is refused. */
static void test_config_size(void **state)
{
	struct nr_config cfg;
	struct nr_comm *c = (struct nr_comm *)&cfg;

	nr_config_default(&cfg);
	assert_int_equal(cfg.size, sizeof(cfg));
	memset(&cfg, 0, sizeof(cfg));
	assert_int_equal(nr_comm_init(&cfg, &c), NR_ERR_CONFIG);
	assert_null(c);
	assert_non_null(strstr(nr_comm_last_error(NULL), "struct nr_config: size 0"));
	assert_int_equal(nr_config_check(&cfg), NR_ERR_CONFIG);
}

/* World size 1: both collectives copy; nr_allreduce without a box is refused. */
static void test_world_one(void **state)
{
	struct nr_config cfg;
	struct nr_comm *c;
	float in[5] = { 1, -2, 3.5f, 4, 1e30f }, out[5] = { 0 };

	nr_config_default(&cfg);
	assert_int_equal(nr_comm_init(&cfg, &c), NR_OK);
	assert_int_equal(nr_comm_world(c), 1);
	assert_int_equal(nr_ring_allreduce(c, in, out, 5, NR_FLOAT32, NR_SUM), NR_OK);
	assert_memory_equal(in, out, sizeof(in));
	assert_int_equal(nr_ring_allreduce(c, in, in, 5, NR_FLOAT32, NR_SUM), NR_OK);
	assert_int_equal(nr_ring_allreduce(c, NULL, NULL, 0, NR_FLOAT32, NR_SUM), NR_OK);
	assert_int_equal(nr_ring_allreduce(c, in, out, 5, 7, NR_SUM), NR_ERR_INVALID);
	assert_non_null(strstr(nr_comm_last_error(c), "dtype 7 is not a netreduce type (NR_FLOAT32, "
			       "NR_BF16, NR_FP16)"));
	assert_int_equal(nr_ring_allreduce(c, in, out, 5, NR_BF16, NR_MAX), NR_ERR_INVALID);
	assert_non_null(strstr(nr_comm_last_error(c), "NR_MAX of NR_FLOAT32 only"));
	/* 16-bit: count elements of 2 bytes copied, not 4 */
	memset(out, 0, sizeof(out));
	assert_int_equal(nr_ring_allreduce(c, in, out, 3, NR_FP16, NR_SUM), NR_OK);
	assert_memory_equal(in, out, 6);
	assert_int_equal(((const uint8_t *)out)[6], 0);
	assert_int_equal(nr_ring_allreduce(c, NULL, out, 5, NR_FLOAT32, NR_SUM), NR_ERR_INVALID);
	assert_int_equal(nr_allreduce(c, in, out, 5, NR_FLOAT32, NR_SUM), NR_ERR_CONFIG);
	assert_non_null(strstr(nr_comm_last_error(c), "no box configured (NR_BOX)"));
	/* a refused call does not break the communicator */
	assert_int_equal(nr_ring_allreduce(c, in, out, 5, NR_FLOAT32, NR_SUM), NR_OK);
	/* reduce-scatter of one rank: its share is the whole; no box: over the ring */
	memset(out, 0, sizeof(out));
	assert_int_equal(nr_reduce_scatter(c, in, out, 5, NR_FLOAT32, NR_SUM), NR_OK);
	assert_memory_equal(in, out, sizeof(in));
	assert_int_equal(nr_reduce_scatter(c, NULL, NULL, 0, NR_FLOAT32, NR_SUM), NR_OK);
	assert_int_equal(nr_reduce_scatter(c, in, in + 1, 2, NR_FLOAT32, NR_SUM), NR_ERR_INVALID);
	assert_non_null(strstr(nr_comm_last_error(c), "nr_reduce_scatter: recvbuf overlaps sendbuf"));
	assert_int_equal(nr_reduce_scatter(c, in, out, 5, 9, NR_SUM), NR_ERR_INVALID);
	assert_non_null(strstr(nr_comm_last_error(c), "dtype 9 is not a netreduce type"));
	assert_int_equal(nr_reduce_scatter(NULL, in, out, 5, NR_FLOAT32, NR_SUM), NR_ERR_INVALID);
	nr_comm_destroy(c);

	cfg.switch_addr = "127.0.0.1:9";
	cfg.token = "t";
	cfg.short_ppm = 150000;
	assert_int_equal(nr_comm_init(&cfg, &c), NR_OK);
	memset(out, 0, sizeof(out));
	assert_int_equal(nr_allreduce(c, in, out, 5, NR_FLOAT32, NR_SUM), NR_OK);
	assert_memory_equal(in, out, sizeof(in));
	/* one rank: nothing on the wire, a tolerant call is an exact copy */
	memset(out, 0, sizeof(out));
	assert_int_equal(nr_allreduce_flags(c, in, out, 5, NR_FLOAT32, NR_SUM, NR_MSG_TOLERANT),
			 NR_OK);
	assert_memory_equal(in, out, sizeof(in));
	assert_int_equal(nr_allreduce_flags(c, in, out, 5, NR_FLOAT32, NR_SUM, 0x2), NR_ERR_INVALID);
	assert_non_null(strstr(nr_comm_last_error(c), "flags 0x2: the flags are NR_MSG_TOLERANT"));
	assert_int_equal(nr_allreduce_flags(c, in, out, 5, NR_FLOAT32, NR_SUM,
					    NR_MSG_TOLERANT | NR_MSG_CLASS(4)), NR_ERR_INVALID);
	assert_non_null(strstr(nr_comm_last_error(c), "NR_MSG_CLASS(4): classes are 0..3"));
	assert_int_equal(nr_allreduce_flags(c, in, out, 5, NR_FLOAT32, NR_SUM, 0), NR_OK);
	/* several at once: one rank copies each, counted each */
	{
		float out2[5];
		struct nr_allreduce_req q[2] = {
			{ .sendbuf = in, .recvbuf = out, .count = 5, .dtype = NR_FLOAT32, .op = NR_SUM,
			  .flags = NR_MSG_TOLERANT | NR_MSG_CLASS(1) },
			{ .sendbuf = in, .recvbuf = out2, .count = 5, .dtype = NR_FLOAT32, .op = NR_SUM },
		};

		uint64_t done[2] = { 0, 0 }, t0 = 0;
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		t0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		memset(out, 0, sizeof(out));
		assert_int_equal(nr_allreduce_multi(c, q, 2, done), NR_OK);
		assert_memory_equal(in, out, sizeof(in));
		assert_memory_equal(in, out2, sizeof(in));
		/* each one's time, on the monotonic clock, in the order they ran */
		assert_true(done[0] >= t0 && done[1] >= done[0]);
		memset(out, 0, sizeof(out));
		assert_int_equal(nr_allreduce_multi(c, q, 2, NULL), NR_OK);
		assert_memory_equal(in, out, sizeof(in));
		q[1].flags = 0x100;
		assert_int_equal(nr_allreduce_multi(c, q, 2, NULL), NR_ERR_INVALID);
		assert_non_null(strstr(nr_comm_last_error(c), "nr_allreduce_multi: flags 0x100"));
	}
	struct nr_comm_stats st;

	nr_comm_stats(c, &st);
	assert_int_equal(st.box_calls, 7);   /* the two multi calls count 2 each */
	assert_int_equal(st.failed_calls, 2);
	assert_int_equal(st.tolerant_calls, 0);
	assert_int_equal(st.tolerant_bytes, 0);
	assert_int_equal(st.tolerant_exact_calls, 3);
	/* _ex: a caller built with the first six fields gets those and not a byte more;
	 * one built with a longer struct gets zeros past this library's */
	{
		unsigned char old[offsetof(struct nr_comm_stats, tolerant_calls) + 8];
		unsigned char newer[sizeof(struct nr_comm_stats) + 16];
		struct nr_comm_stats ex;

		memset(old, 0xAB, sizeof(old));
		assert_int_equal(nr_comm_stats_ex(c, (struct nr_comm_stats *)(void *)old,
						  offsetof(struct nr_comm_stats, tolerant_calls)),
				 NR_OK);
		memcpy(&ex, old, offsetof(struct nr_comm_stats, tolerant_calls));
		assert_int_equal(ex.box_calls, 7);
		assert_int_equal(ex.failed_calls, 2);
		for (size_t i = offsetof(struct nr_comm_stats, tolerant_calls); i < sizeof(old); i++)
			assert_int_equal(old[i], 0xAB);
		memset(newer, 0xAB, sizeof(newer));
		assert_int_equal(nr_comm_stats_ex(c, (struct nr_comm_stats *)(void *)newer,
						  sizeof(newer)),
				 NR_OK);
		assert_memory_equal(newer, &st, sizeof(st));
		for (size_t i = sizeof(st); i < sizeof(newer); i++)
			assert_int_equal(newer[i], 0);
		assert_int_equal(nr_comm_stats_ex(c, &ex, 0), NR_ERR_INVALID);
		assert_non_null(strstr(nr_comm_last_error(NULL), "give sizeof(struct nr_comm_stats)"));
	}
	/* a single rank registers no job: no counters to ask for; no QPs to fail */
	struct nr_box_counters bc;
	uint64_t lo[2];

	assert_int_equal(nr_comm_box_counters(c, &bc, lo, 2), NR_ERR_INVALID);
	assert_non_null(strstr(nr_comm_last_error(NULL), "holds no box job"));
	assert_int_equal(nr_comm_box_counters_ex(c, &bc, sizeof(bc), lo, 2), NR_ERR_INVALID);
	assert_int_equal(nr_comm_box_counters_ex(c, &bc, 0, lo, 2), NR_ERR_INVALID);
	assert_non_null(strstr(nr_comm_last_error(NULL), "give sizeof(struct nr_box_counters)"));
	assert_int_equal(nr_comm_qp_errors(c, NULL, 0), 0);
	nr_comm_destroy(c);
}

static void test_strerror(void **state)
{
	for (int e = NR_OK; e >= NR_ERR_BROKEN; e--)
		assert_string_not_equal(nr_strerror(e), "unknown error");
	assert_string_equal(nr_strerror(42), "unknown error");
}

/* The RoCE MTU an interface carries: the kernel's rule (iboe_get_mtu), 96 bytes of headers. */
static void test_roce_mtu(void **state)
{
	static const struct { unsigned ifmtu; uint32_t mtu; } cases[] = {
		{ 65536, 4096 }, { 9000, 4096 }, { 4200, 4096 }, { 4192, 4096 }, { 4191, 2048 },
		{ 2144, 2048 }, { 2143, 1024 }, { 1500, 1024 }, { 1280, 1024 }, { 1120, 1024 },
		{ 1119, 512 }, { 576, 256 }, { 352, 256 }, { 351, 0 }, { 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (nr_roce_mtu(cases[i].ifmtu) != cases[i].mtu)
			fail_msg("IP MTU %u: RoCE MTU %u, expected %u", cases[i].ifmtu,
				 nr_roce_mtu(cases[i].ifmtu), cases[i].mtu);
}

/* The soft RNIC profile's window from the link speed (nr_tp_tune); the user's values stay. */
static void test_soft_window(void **state)
{
	static const struct {
		double gbps;
		uint32_t mtu, window_in;
		uint16_t ackreq_in;
		uint32_t window;
		uint16_t ackreq;
	} cases[] = {
		{ 0.1, 1024, 0, 0, 16, 4 },       /* 15.9 packets in 1.3 ms: the floor */
		{ 0.3, 1024, 0, 0, 47, 11 },
		{ 0.3, 4096, 0, 0, 11, 2 },       /* 11.9 packets of 4 KiB */
		{ 0.1, 4096, 0, 0, 8, 2 },        /* 4 packets: the floor of 8 (16 KiB would be 4) */
		{ 0.1, 2048, 0, 0, 8, 2 },        /* 16 KiB */
		{ 0.1, 256, 0, 0, 64, 16 },       /* 16 KiB of 256-byte packets */
		{ 10, 4096, 0, 0, 128, 32 },      /* 396: the ceiling, in packets */
		{ 1, 1024, 0, 0, 128, 32 },       /* 158: the ceiling */
		{ 100, 1024, 0, 0, 128, 32 },
		{ 0.1, 1024, 20, 0, 20, 5 },      /* NR_SOFT_WINDOW alone: a quarter of it */
		{ 100, 1024, 256, 0, 256, 64 },
		{ 0.1, 1024, 3, 0, 3, 1 },        /* at least 1 */
		{ 0.1, 1024, 0, 2, 16, 2 },       /* NR_SOFT_ACKREQ alone */
		{ 1, 1024, 8, 8, 8, 8 },
		{ 100, 1024, 1u << 22, 0, 1u << 22, 65535 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nr_tp_config t = { .kind = "soft", .mtu = cases[i].mtu };
		struct nr_tp_wish wish = { .link_gbps = cases[i].gbps, .window = cases[i].window_in,
					   .ackreq = cases[i].ackreq_in };
		char err[128];

		assert_int_equal(nr_tp_tune(&t, &wish, err, sizeof(err)), 0);
		if (t.max_inflight != cases[i].window || t.ackreq_every != cases[i].ackreq)
			fail_msg("case %zu: window %u ackreq %u, want %u and %u", i, t.max_inflight,
				 t.ackreq_every, cases[i].window, cases[i].ackreq);
	}
}

/* nr_tp_tune: profiles by name, the ACK timeout from the budget, names it refuses. */
static void test_tp_tune(void **state)
{
	struct nr_tp_config t = { .kind = "soft", .mtu = 1024 };
	struct nr_tp_wish wish = { .profile = "legacy", .link_gbps = 0.1, .budget_ms = 10000 };
	char err[128];

	(void)state;
	/* legacy: the transport's own window, a timeout that backs off over 255 of it */
	assert_int_equal(nr_tp_tune(&t, &wish, err, sizeof(err)), 0);
	assert_int_equal(t.profile, NR_TP_PROFILE_LEGACY);
	assert_int_equal(t.max_inflight, 0);
	assert_int_equal(t.ackreq_every, 0);
	assert_int_equal(t.timeout, 13);       /* 255 x 4.096 us x 2^14 > 10 s */
	wish.profile = NULL;                   /* rnic: 8 tries of at most 2^18 */
	assert_int_equal(nr_tp_tune(&t, &wish, err, sizeof(err)), 0);
	assert_int_equal(t.profile, NR_TP_PROFILE_RNIC);
	assert_int_equal(t.max_inflight, 16);
	assert_int_equal(t.timeout, 18);
	wish.budget_ms = 1000;                 /* 8 x 4.096 us x 2^15 = 1.07 s > 1 s */
	assert_int_equal(nr_tp_tune(&t, &wish, err, sizeof(err)), 0);
	assert_int_equal(t.timeout, 14);
	wish.ack_timeout = 20;                 /* the user's */
	wish.profile = "rxe";
	assert_int_equal(nr_tp_tune(&t, &wish, err, sizeof(err)), 0);
	assert_int_equal(t.profile, NR_TP_PROFILE_RXE);
	assert_int_equal(t.timeout, 20);
	wish.profile = "cx7";
	assert_int_equal(nr_tp_tune(&t, &wish, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "\"cx7\" unknown (use rnic, rxe, legacy or sr)"));
	wish.profile = "sr"; /* selective repeat: the RNIC rules' window */
	wish.ack_timeout = 0;
	wish.budget_ms = 10000;
	assert_int_equal(nr_tp_tune(&t, &wish, err, sizeof(err)), 0);
	assert_int_equal(t.profile, NR_TP_PROFILE_SR);
	assert_int_equal(t.max_inflight, 16);
	assert_int_equal(t.timeout, 18);
	t.kind = "tcp";
	wish.profile = NULL;
	assert_int_equal(nr_tp_tune(&t, &wish, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "\"tcp\" unknown (use soft or verbs)"));
	/* verbs: the RNIC's window stays its own */
	t = (struct nr_tp_config){ .kind = "verbs" };
	wish = (struct nr_tp_wish){ .link_gbps = 100, .budget_ms = 10000 };
	assert_int_equal(nr_tp_tune(&t, &wish, err, sizeof(err)), 0);
	assert_int_equal(t.max_inflight, 0);
	assert_int_equal(t.timeout, 18);
	/* ... and its retransmission too: selective repeat is refused by name */
	wish.profile = "sr";
	assert_int_equal(nr_tp_tune(&t, &wish, err, sizeof(err)), -ENOTSUP);
	assert_non_null(strstr(err, "verbs: profile sr (selective repeat) is the soft transport's"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_env_good, clear_env),
		cmocka_unit_test_setup(test_box_alias, clear_env),
		cmocka_unit_test(test_list_split),
		cmocka_unit_test_setup(test_box_list, clear_env),
		cmocka_unit_test_setup(test_env_defaults, clear_env),
		cmocka_unit_test_setup(test_env_bad, clear_env),
		cmocka_unit_test_setup(test_struct_check, clear_env),
		cmocka_unit_test_setup(test_short, clear_env),
		cmocka_unit_test_setup(test_spray, clear_env),
		cmocka_unit_test_setup(test_prio_classes, clear_env),
		cmocka_unit_test_setup(test_de_thresh, clear_env),
		cmocka_unit_test(test_config_size),
		cmocka_unit_test(test_world_one),
		cmocka_unit_test(test_soft_window),
		cmocka_unit_test(test_tp_tune),
		cmocka_unit_test(test_roce_mtu),
		cmocka_unit_test(test_strerror),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
