/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control-API suite, one source run against each backend:
 *   test_ctl_api sw     an in-process engine behind a test channel
 *   test_ctl_api fpga   the FPGA driver on a register file + device model
 * Same requests, same expected replies: both backends share validation.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "tests/control/ctl_testlib.h"

static const char *kind = "sw";

struct fx {
	struct tb tb;
	struct nr_ctl *c;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct nr_backend *b;

	if (!f)
		return -1;
	b = tb_backend(&f->tb, kind);
	if (!b) {
		free(f);
		return -1;
	}
	f->c = nr_ctl_create(b);
	*state = f;
	return f->c ? 0 : -1;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	nr_ctl_destroy(f->c);
	tb_cleanup(&f->tb);
	free(f);
	return 0;
}

static void assert_ok(json_t *r)
{
	if (!json_is_true(json_object_get(r, "ok"))) {
		char *s = json_dumps(r, 0);

		print_error("expected ok, got %s\n", s ? s : "(null)");
		free(s);
		fail();
	}
}

/* The reply is an error whose message contains want. */
static void assert_err(json_t *r, const char *want)
{
	const char *e = json_string_value(json_object_get(r, "error"));

	assert_non_null(r);
	assert_true(json_is_false(json_object_get(r, "ok")));
	assert_non_null(e);
	if (!strstr(e, want)) {
		print_error("error \"%s\" does not contain \"%s\"\n", e, want);
		fail();
	}
}

struct created {
	uint32_t id;
	char key[33];
	uint32_t credits;
	uint32_t result_key;
};

static void create(struct fx *f, json_t *spec, struct created *out)
{
	json_t *r = tb_call(f->c, json_pack("{s:s,s:o}", "op", "job_create", "spec", spec), false);
	const char *key;

	assert_ok(r);
	out->id = (uint32_t)json_integer_value(json_object_get(r, "job"));
	key = json_string_value(json_object_get(r, "key"));
	assert_non_null(key);
	assert_int_equal(strlen(key), 32);
	assert_int_equal(strspn(key, "0123456789abcdef"), 32);
	snprintf(out->key, sizeof(out->key), "%s", key);
	out->credits = (uint32_t)json_integer_value(json_object_get(r, "credits"));
	out->result_key = (uint32_t)json_integer_value(json_object_get(r, "result_key"));
	assert_true(out->id >= 1);
	assert_int_not_equal(out->result_key, 0);
	json_decref(r);
}

static json_t *job_req(const char *op, uint32_t id, const char *key)
{
	json_t *req = json_pack("{s:s,s:I}", "op", op, "job", (json_int_t)id);

	if (key)
		json_object_set_new(req, "key", json_string(key));
	return req;
}

static size_t n_jobs(struct fx *f)
{
	json_t *r = tb_call(f->c, json_pack("{s:s}", "op", "job_list"), true);
	size_t n;

	assert_ok(r);
	n = json_array_size(json_object_get(r, "jobs"));
	json_decref(r);
	return n;
}

/* ---- create, show, destroy ---------------------------------------------- */

static void test_create_show_destroy(void **state)
{
	struct fx *f = *state;
	json_t *spec = tb_spec(4, 1, 0x100), *r, *job, *echo;
	struct created j;

	json_object_set_new(spec, "pool_msgs", json_integer(16));
	json_object_set_new(spec, "mode", json_string("streaming"));
	/* the FPGA's register map has sum only (test_fpga.c, test_ctl_server.c) */
	json_object_set_new(spec, "reduce", json_string(strcmp(kind, "sw") ? "sum" : "max"));
	json_object_set_new(spec, "mtu", json_integer(4096));
	json_object_set_new(spec, "msg_size", json_integer(8192));
	json_object_set_new(spec, "timeout_ms", json_integer(2500));
	/* echoed whatever was asked; the fpga model and the RTL sum bf16 (CAP_FLAGS), the
	 * box's max is FP32 only */
	json_object_set_new(spec, "dtype", json_string(strcmp(kind, "sw") ? "bf16" : "fp32"));
	create(f, json_deep_copy(spec), &j);
	assert_int_equal(j.credits, 8);

	r = tb_call(f->c, job_req("job_status", j.id, j.key), false);
	assert_ok(r);
	job = json_object_get(r, "job");
	assert_int_equal(json_integer_value(json_object_get(job, "id")), j.id);
	assert_string_equal(json_string_value(json_object_get(job, "state")), "active");
	assert_int_equal(json_integer_value(json_object_get(job, "ranks")), 4);
	assert_int_equal(json_integer_value(json_object_get(job, "credits")), 8);
	assert_int_equal(json_integer_value(json_object_get(job, "result_key")), j.result_key);
	assert_int_equal(json_integer_value(json_object_get(job, "completed")), 0);
	assert_int_equal(json_object_size(json_object_get(job, "counters")), NR_ECTR_MAX);
	echo = json_object_get(job, "spec");
	/* The echo equals the request: every field, every connection, the MACs. */
	if (!json_equal(echo, spec)) {
		char *a = json_dumps(echo, JSON_SORT_KEYS), *b = json_dumps(spec, JSON_SORT_KEYS);

		print_error("spec echo %s\n  != request %s\n", a, b);
		free(a);
		free(b);
		fail();
	}
	json_decref(r);
	assert_int_equal(n_jobs(f), 1);

	r = tb_call(f->c, job_req("job_destroy", j.id, j.key), false);
	assert_ok(r);
	json_decref(r);
	assert_int_equal(n_jobs(f), 0);
	/* Gone: same answer as a wrong key over TCP; admin is told plainly. */
	r = tb_call(f->c, job_req("job_status", j.id, j.key), false);
	assert_err(r, "wrong or missing key");
	json_decref(r);
	r = tb_call(f->c, job_req("job_status", j.id, NULL), true);
	assert_err(r, "no such job");
	json_decref(r);
	json_decref(spec);
}

static void test_defaults(void **state)
{
	struct fx *f = *state;
	json_t *r, *s;
	struct created j;

	create(f, tb_spec(2, 2, 0x300), &j);
	assert_int_equal(j.credits, 4);
	r = tb_call(f->c, job_req("job_status", j.id, NULL), true);
	assert_ok(r);
	s = json_object_get(json_object_get(r, "job"), "spec");
	assert_int_equal(json_integer_value(json_object_get(s, "mtu")), 1024);
	assert_int_equal(json_integer_value(json_object_get(s, "msg_size")), 65536);
	assert_int_equal(json_integer_value(json_object_get(s, "pool_msgs")), 8);
	assert_int_equal(json_integer_value(json_object_get(s, "timeout_ms")), 5000);
	assert_string_equal(json_string_value(json_object_get(s, "mode")), "ordered");
	assert_string_equal(json_string_value(json_object_get(s, "reduce")), "sum");
	json_decref(r);
}

/*
 * reduce "bor" (the all-gather's job: the OR of 32-bit words) round trips on the
 * box, echoed as "bor" with dtype fp32; the FPGA's register map has sum only, so
 * the fpga and rtl backends refuse it at job_create, naming the op.
 */
static void test_reduce_bor(void **state)
{
	struct fx *f = *state;
	json_t *spec = tb_spec(3, 1, 0x100), *r, *s;
	struct created j;

	json_object_set_new(spec, "reduce", json_string("bor"));
	json_object_set_new(spec, "dtype", json_string("fp32"));
	if (strcmp(kind, "sw")) {
		r = tb_call(f->c, json_pack("{s:s,s:o}", "op", "job_create", "spec", spec), false);
		assert_err(r, "reduce bor: the aggregator's register map has sum only");
		json_decref(r);
		assert_int_equal(n_jobs(f), 0);
		return;
	}
	create(f, spec, &j);
	r = tb_call(f->c, job_req("job_status", j.id, j.key), false);
	assert_ok(r);
	s = json_object_get(json_object_get(r, "job"), "spec");
	assert_string_equal(json_string_value(json_object_get(s, "reduce")), "bor");
	assert_string_equal(json_string_value(json_object_get(s, "dtype")), "fp32");
	json_decref(r);
	r = tb_call(f->c, job_req("job_destroy", j.id, j.key), false);
	assert_ok(r);
	json_decref(r);
}

/*
 * selective (the job's requesters are selective repeat, proto/nr_job.h): the box
 * takes it, asked as true or as 1, and echoes it as true; false is not echoed.  The
 * FPGA and the RTL have no status monitor to send or answer selective NAKs, so the
 * fpga and rtl backends refuse it at job_create, naming it.
 */
static void test_selective(void **state)
{
	struct fx *f = *state;
	json_t *spec = tb_spec(3, 1, 0x100), *r, *s;
	struct created j;

	json_object_set_new(spec, "selective", json_integer(1));
	if (strcmp(kind, "sw")) {
		r = tb_call(f->c, json_pack("{s:s,s:o}", "op", "job_create", "spec", spec), false);
		assert_err(r, "fpga: selective: the aggregator (FPGA.md, the RTL) has no status "
			      "monitor to send or answer selective NAKs");
		json_decref(r);
		assert_int_equal(n_jobs(f), 0);
		return;
	}
	create(f, spec, &j);
	r = tb_call(f->c, job_req("job_status", j.id, j.key), false);
	assert_ok(r);
	s = json_object_get(json_object_get(r, "job"), "spec");
	assert_true(json_is_true(json_object_get(s, "selective")));
	json_decref(r);
	r = tb_call(f->c, job_req("job_destroy", j.id, j.key), false);
	assert_ok(r);
	json_decref(r);
	spec = tb_spec(3, 1, 0x100);
	json_object_set_new(spec, "selective", json_false());
	create(f, spec, &j);
	r = tb_call(f->c, job_req("job_status", j.id, j.key), false);
	assert_ok(r);
	s = json_object_get(json_object_get(r, "job"), "spec");
	assert_null(json_object_get(s, "selective"));
	json_decref(r);
}

/* ---- every malformed or out-of-range field ------------------------------ */

struct bad_case {
	const char *path;      /* field of the spec ("" = the spec itself) */
	const char *value;     /* JSON text, NULL = delete the field */
	const char *path2, *value2;
	const char *want;      /* substring of the error */
};

/* clang-format off */
static const struct bad_case bad_cases[] = {
	{ "mtu", "\"1024\"", 0, 0, "spec.mtu: expected an integer, got a string" },
	{ "mtu", "1024.0", 0, 0, "spec.mtu: expected an integer, got a real number" },
	{ "mtu", "true", 0, 0, "spec.mtu: expected an integer, got a boolean" },
	{ "mtu", "null", 0, 0, "spec.mtu: expected an integer, got null" },
	{ "mtu", "-1", 0, 0, "spec.mtu: -1 is out of range (256..4096)" },
	{ "mtu", "8192", 0, 0, "spec.mtu: 8192 is out of range" },
	{ "mtu", "1000", 0, 0, "spec.mtu: 1000 is not a RoCE path MTU" },
	{ "mtu", "99999999999999", 0, 0, "spec.mtu: 99999999999999 is out of range" },
	{ "msg_size", "0", 0, 0, "spec.msg_size: 0 is out of range" },
	{ "msg_size", "-4", 0, 0, "spec.msg_size: -4 is out of range" },
	{ "msg_size", "1002", 0, 0, "spec.msg_size: 1002 must be a multiple of 4 between 4 and "
	  "1073741824 bytes (fp32 elements)" },
	{ "msg_size", "1001", "dtype", "\"bf16\"", "spec.msg_size: 1001 must be a multiple of 2" },
	{ "dtype", "\"fp64\"", 0, 0, "spec.dtype: \"fp64\" is not an element type (fp32, bf16 or fp16)" },
	{ "dtype", "16", 0, 0, "spec.dtype: expected a string, got an integer" },
	{ "dtype", "\"bf16\"", "reduce", "\"max\"", "spec.reduce: max of bf16 elements is not built" },
	{ "dtype", "\"bf16\"", "reduce", "\"bor\"", "spec.reduce: bor of bf16 elements is not built "
	  "(bor ORs 32-bit words, whatever they hold): use dtype fp32" },
	{ "dtype", "\"fp16\"", "reduce", "\"bor\"", "spec.reduce: bor of fp16 elements is not built" },
	{ "msg_size", "4294967296", 0, 0, "spec.msg_size: 4294967296 is out of range" },
	{ "msg_size", "[]", 0, 0, "spec.msg_size: expected an integer, got an array" },
	{ "pool_msgs", "7", 0, 0, "spec.pool_msgs: 7 is odd" },
	{ "pool_msgs", "0", 0, 0, "spec.pool_msgs: 0 is out of range" },
	{ "pool_msgs", "1000000", 0, 0, "spec.pool_msgs: 1000000 is out of range" },
	{ "pool_msgs", "\"8\"", 0, 0, "spec.pool_msgs: expected an integer" },
	{ "pool_msgs", "65536", "msg_size", "1048576", "spec.pool_msgs" },
	{ "timeout_ms", "0", 0, 0, "spec.timeout_ms: 0 is out of range" },
	{ "timeout_ms", "-5", 0, 0, "spec.timeout_ms: -5 is out of range" },
	{ "timeout_ms", "3600001", 0, 0, "spec.timeout_ms: 3600001 is out of range" },
	{ "timeout_ms", "{}", 0, 0, "spec.timeout_ms: expected an integer, got an object" },
	{ "mode", "\"fast\"", 0, 0, "spec.mode: \"fast\" is not a sum mode (ordered or streaming)" },
	{ "mode", "1", 0, 0, "spec.mode: expected a string" },
	{ "reduce", "\"min\"", 0, 0, "spec.reduce: \"min\" is not a reduce op (sum, max or bor)" },
	{ "reduce", "\"or\"", 0, 0, "spec.reduce: \"or\" is not a reduce op (sum, max or bor)" },
	{ "reduce", "1", 0, 0, "spec.reduce: expected a string" },
	{ "short_ppm", "500001", 0, 0, "spec.short_ppm: 500001 is out of range" },
	{ "short_ppm", "-1", 0, 0, "spec.short_ppm: -1 is out of range" },
	{ "short_dscp", "64", 0, 0, "spec.short_dscp: 64 is out of range" },
	{ "short_scale", "1", 0, 0, "spec.short_scale: expected true or false, got an integer" },
	{ "short_scale", "true", "reduce", "\"max\"", "short_scale: 1: 0 or 1, and 1 only with reduce sum" },
	{ "short_scale", "true", "reduce", "\"bor\"", "short_scale: 1: 0 or 1, and 1 only with reduce sum" },
	{ "short_first", "1", 0, 0, "spec.short_first: expected true or false, got an integer" },
	{ "selective", "2", 0, 0, "spec.selective: 2 is out of range (0..1)" },
	{ "selective", "-1", 0, 0, "spec.selective: -1 is out of range" },
	{ "selective", "\"yes\"", 0, 0, "spec.selective: expected true or false (or 0 or 1), got a string" },
	{ "selective", "null", 0, 0, "spec.selective: expected true or false (or 0 or 1), got null" },
	{ "prio_classes", "5", 0, 0, "spec.prio_classes: 5 is out of range" },
	{ "prio_classes", "4", "short_dscp", "40", "prio_classes: 4 classes from short_dscp 40 reach DSCP 66" },
	{ "spray_ports", "0", 0, 0, "spec.spray_ports: 0 is out of range" },
	{ "spray_ports", "65", 0, 0, "spec.spray_ports: 65 is out of range" },
	{ "reorder_pkts", "1025", 0, 0, "spec.reorder_pkts: 1025 is out of range" },
	{ "reorder_pkts", "1000", 0, 0, "reorder_pkts: 1000 must stay below 1025 and half the pool" },
	{ "colour", "1", 0, 0, "spec.colour: unknown field" },
	{ "conns", NULL, 0, 0, "spec.conns: missing" },
	{ "conns", "{}", 0, 0, "spec.conns: expected an array, got an object" },
	{ "conns", "[]", 0, 0, "spec.conns: 0 connections, expected 1..256" },
	{ "conns[1]", "5", 0, 0, "spec.conns[1]: expected an object, got an integer" },
	{ "conns[2].dst_qpn", "16777216", 0, 0,
	  "spec.conns[2].dst_qpn: 16777216 is not a 24-bit QPN (1..16777215)" },
	{ "conns[2].dst_qpn", "0", 0, 0, "spec.conns[2].dst_qpn: 0 is not a 24-bit QPN" },
	{ "conns[0].src_qpn", "-17", 0, 0, "spec.conns[0].src_qpn: -17 is not a 24-bit QPN" },
	{ "conns[0].src_qpn", "\"17\"", 0, 0, "spec.conns[0].src_qpn: expected an integer, got a string" },
	{ "conns[1].ipsn", "16777216", 0, 0, "spec.conns[1].ipsn: 16777216 is not a 24-bit PSN" },
	{ "conns[1].ipsn", "-1", 0, 0, "spec.conns[1].ipsn: -1 is not a 24-bit PSN" },
	{ "conns[1].ipsn", NULL, 0, 0, "spec.conns[1].ipsn: missing" },
	{ "conns[3].dst_qpn", NULL, 0, 0, "spec.conns[3].dst_qpn: missing" },
	{ "conns[0].src_ip", NULL, 0, 0, "spec.conns[0].src_ip: missing" },
	{ "conns[0].src_ip", "\"10.0.0\"", 0, 0, "spec.conns[0].src_ip: \"10.0.0\" is not an IPv4 address" },
	{ "conns[0].src_ip", "\"10.0.0.256\"", 0, 0, "spec.conns[0].src_ip: \"10.0.0.256\" is not an IPv4" },
	{ "conns[0].src_ip", "\"fe80::1\"", 0, 0, "spec.conns[0].src_ip: \"fe80::1\" is not an IPv4" },
	{ "conns[0].src_ip", "167772161", 0, 0, "spec.conns[0].src_ip: expected an IPv4 address string" },
	{ "conns[2].dst_ip", "\"0.0.0.0\"", 0, 0, "spec.conns[2].dst_ip: 0.0.0.0 is not a unicast" },
	{ "conns[2].dst_ip", "\"224.0.0.1\"", 0, 0, "spec.conns[2].dst_ip: 224.0.0.1 is not a unicast" },
	{ "conns[3].dst_mac", "\"02:00:00:00:00\"", 0, 0, "spec.conns[3].dst_mac: \"02:00:00:00:00\" is not a MAC" },
	{ "conns[3].dst_mac", "\"02:00:00:00:00:zz\"", 0, 0, "spec.conns[3].dst_mac: \"02:00:00:00:00:zz\" is not a MAC" },
	{ "conns[3].src_mac", "\"01:00:5e:00:00:01\"", 0, 0, "spec.conns[3].src_mac: 01:00:5e:00:00:01 is a multicast MAC" },
	{ "conns[3].src_mac", "5", 0, 0, "spec.conns[3].src_mac: expected a MAC address string" },
	{ "conns[0].qos", "1", 0, 0, "spec.conns[0].qos: unknown field" },
	{ "conns[1].dst_ip", "\"10.9.0.2\"", "conns[1].dst_qpn", "259", "spec.conns[1]: receiver 10.9.0.2 qpn 259 repeats spec.conns[0]" },
	{ "conns[2].src_ip", "\"10.9.0.1\"", "conns[2].src_qpn", "256", "spec.conns[2]: sender 10.9.0.1 qpn 256 repeats spec.conns[0]" },
	{ "conns[1].src_qpn", "259", 0, 0, "spec.conns[1]" },     /* engine: QP used to send and receive */
	{ "", "[]", 0, 0, "spec: expected an object, got an array" },
	{ "", NULL, 0, 0, "spec: missing" },
};
/* clang-format on */

/* Set or delete "field", "conns[i]" or "conns[i].field" in spec. */
static void mutate(json_t *req, const char *path, const char *value)
{
	json_t *spec = json_object_get(req, "spec"), *parent = spec, *v = NULL;
	char field[64];
	unsigned idx;
	int n = 0;

	if (value) {
		v = json_loads(value, JSON_DECODE_ANY, NULL);
		assert_non_null(v);
	}
	if (!path[0]) {
		if (v)
			json_object_set_new(req, "spec", v);
		else
			json_object_del(req, "spec");
		return;
	}
	if (sscanf(path, "conns[%u]%n", &idx, &n) == 1 && n > 0) {
		json_t *conns = json_object_get(spec, "conns");

		if (!path[n]) {
			json_array_set_new(conns, idx, v);
			return;
		}
		parent = json_array_get(conns, idx);
		snprintf(field, sizeof(field), "%s", path + n + 1);
	} else {
		snprintf(field, sizeof(field), "%s", path);
	}
	if (v)
		json_object_set_new(parent, field, v);
	else
		json_object_del(parent, field);
}

static void test_bad_fields(void **state)
{
	struct fx *f = *state;
	size_t i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *bc = &bad_cases[i];
		json_t *req = json_pack("{s:s,s:o}", "op", "job_create", "spec", tb_spec(4, 9, 0x100));
		json_t *r;

		mutate(req, bc->path, bc->value);
		if (bc->path2)
			mutate(req, bc->path2, bc->value2);
		r = tb_call(f->c, req, false);
		print_message("  %-20s %-22s -> %s\n", bc->path[0] ? bc->path : "(spec)",
			      bc->value ? bc->value : "(deleted)",
			      json_string_value(json_object_get(r, "error")) ?: "(ok!)");
		assert_err(r, bc->want);
		json_decref(r);
	}
	assert_int_equal(n_jobs(f), 0);
}

static void test_too_many_conns(void **state)
{
	struct fx *f = *state;
	json_t *r;

	r = tb_call(f->c, json_pack("{s:s,s:o}", "op", "job_create", "spec", tb_spec(257, 5, 0x1000)), false);
	assert_err(r, "spec.conns: 257 connections, expected 1..256");
	json_decref(r);
	assert_int_equal(n_jobs(f), 0);
}

static void test_bad_requests(void **state)
{
	static const struct { const char *line, *want; } cases[] = {
		{ "", "malformed JSON" },
		{ "{", "malformed JSON" },
		{ "[1,2]", "request: expected a JSON object, got an array" },
		{ "\"stats\"", "malformed JSON" },
		{ "{\"op\":\"stats\",\"op\":\"stats\"}", "malformed JSON" },   /* duplicate key */
		{ "{\"op\":\"stats\"} trailing", "malformed JSON" },
		{ "{}", "op: missing" },
		{ "{\"op\":5}", "op: expected a string, got an integer" },
		{ "{\"op\":\"job_explode\"}", "op: \"job_explode\" is not an operation" },
		{ "{\"op\":\"stats\",\"verbose\":true}", "stats: verbose: unknown field" },
		{ "{\"op\":\"job_create\"}", "spec: missing" },
		{ "{\"op\":\"job_status\"}", "job: missing" },
		{ "{\"op\":\"job_status\",\"job\":\"3\"}", "job: expected an integer job id, got a string" },
		{ "{\"op\":\"job_status\",\"job\":0}", "job: 0 is not a job id" },
		{ "{\"op\":\"job_status\",\"job\":-1}", "job: -1 is not a job id" },
		{ "{\"op\":\"job_destroy\",\"job\":3,\"key\":5}", "key: expected the 32-hex-digit string" },
		{ "{\"op\":\"job_destroy\",\"job\":3,\"spec\":{}}", "job_destroy: spec: unknown field" },
		{ "{\"op\":\"job_status\",\"job\":99999999999999999999}", "malformed JSON" },
	};
	struct fx *f = *state;
	char *deep;
	json_t *r;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = tb_call_text(f->c, cases[i].line, false);
		assert_err(r, cases[i].want);
		json_decref(r);
	}
	/* Quoted text cut inside a UTF-8 character still makes a valid reply. */
	r = tb_call_text(f->c, "{\"op\":\"a\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
			 "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\"}", false);
	assert_err(r, "is not an operation");
	json_decref(r);
	/* Embedded NUL and deep nesting: an error, not a crash. */
	r = NULL;
	{
		char *out = nr_ctl_handle(f->c, "{\"op\":\0\"stats\"}", 16, 0);

		assert_non_null(out);
		r = json_loads(out, 0, NULL);
		free(out);
		assert_err(r, "malformed JSON");
		json_decref(r);
	}
	deep = malloc(20001);
	assert_non_null(deep);
	memset(deep, '[', 10000);
	memset(deep + 10000, ']', 10000);
	deep[20000] = '\0';
	r = tb_call_text(f->c, deep, true);
	assert_err(r, "malformed JSON");
	json_decref(r);
	free(deep);
	/* Still serving. */
	r = tb_call(f->c, json_pack("{s:s}", "op", "backend_info"), false);
	assert_ok(r);
	json_decref(r);
}

/* ---- tenancy -------------------------------------------------------------- */

/*
 * A job of channels: each its own ring of QPs with source ports.  sw runs it
 * (status lists the channels, the spec comes back as given, no QP of any
 * channel may join another job); fpga and rtl (the same driver) refuse it
 * naming why.
 */
static void test_channels(void **state)
{
	struct fx *f = *state;
	json_t *spec = tb_spec_channels(4, 3, 9, 0x100), *r, *job, *chans, *back;
	struct created c;

	if (strcmp(kind, "sw")) {
		r = tb_call(f->c, json_pack("{s:s,s:o}", "op", "job_create", "spec", spec), false);
		assert_err(r, "fpga: 3 channels; the device runs one channel a job");
		json_decref(r);
		return;
	}
	create(f, json_deep_copy(spec), &c);
	assert_int_equal(c.credits, 4);
	r = tb_call(f->c, job_req("job_status", c.id, c.key), false);
	assert_ok(r);
	job = json_object_get(r, "job");
	chans = json_object_get(job, "channels");
	assert_int_equal(json_array_size(chans), 3);
	for (unsigned k = 0; k < 3; k++) {
		assert_int_equal(json_integer_value(json_object_get(json_array_get(chans, k), "channel")), k);
		assert_string_equal(json_string_value(json_object_get(json_array_get(chans, k), "state")), "active");
	}
	back = json_object_get(json_object_get(job, "spec"), "channels");
	assert_true(json_equal(back, json_object_get(spec, "channels")));
	json_decref(r);
	/* a QP of channel 2 in another job */
	r = tb_call(f->c, json_pack("{s:s,s:o}", "op", "job_create", "spec", tb_spec(4, 9, 0x300)), false);
	assert_err(r, "spec.conns[0]: receiver 10.9.0.2 qpn 771 belongs to another job");
	json_decref(r);
	r = tb_call(f->c, job_req("job_destroy", c.id, c.key), false);
	assert_ok(r);
	json_decref(r);
	/* every channel is gone: the same QPs register again */
	create(f, spec, &c);
	assert_int_equal(n_jobs(f), 1);
}

/* Channel specs that are wrong, each refused naming the field. */
static void test_bad_channels(void **state)
{
	static const struct { const char *json, *want; } cases[] = {
		{ "{\"channels\":[]}", "spec.channels: 0 channels, expected 1..16" },
		{ "{\"channels\":{}}", "spec.channels: expected an array, got an object" },
		{ "{\"channels\":[5]}", "spec.channels[0]: expected an object, got an integer" },
		{ "{\"channels\":[{}]}", "spec.channels[0].conns: missing" },
		{ "{\"channels\":[{\"conns\":[],\"x\":1}]}", "spec.channels[0].x: unknown field" },
	};
	struct fx *f = *state;
	json_t *spec, *r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		spec = json_loads(cases[i].json, 0, NULL);
		assert_non_null(spec);
		r = tb_call(f->c, json_pack("{s:s,s:o}", "op", "job_create", "spec", spec), false);
		assert_err(r, cases[i].want);
		json_decref(r);
	}
	/* conns and channels together */
	spec = tb_spec_channels(4, 2, 9, 0x100);
	json_object_set_new(spec, "conns", json_array());
	r = tb_call(f->c, json_pack("{s:s,s:o}", "op", "job_create", "spec", spec), false);
	assert_err(r, "spec: conns and channels both given");
	json_decref(r);
	/* a channel with another number of ranks */
	spec = tb_spec_channels(4, 2, 9, 0x100);
	json_array_remove(json_object_get(json_array_get(json_object_get(spec, "channels"), 1), "conns"), 3);
	r = tb_call(f->c, json_pack("{s:s,s:o}", "op", "job_create", "spec", spec), false);
	assert_err(r, "spec.channels[1].conns: 3 connections, channel 0 has 4");
	json_decref(r);
	/* a QP in two channels */
	spec = tb_spec_channels(4, 2, 9, 0x100);
	json_object_set_new(json_array_get(json_object_get(json_array_get(json_object_get(spec, "channels"), 1),
							    "conns"), 2), "dst_qpn", json_integer(0x100 + 7));
	r = tb_call(f->c, json_pack("{s:s,s:o}", "op", "job_create", "spec", spec), false);
	assert_err(r, "spec.channels[1].conns[2]: receiver 10.9.0.4 qpn 263 repeats spec.channels[0].conns[2]");
	json_decref(r);
	/* a source port out of range */
	spec = tb_spec_channels(4, 2, 9, 0x100);
	json_object_set_new(json_array_get(json_object_get(json_array_get(json_object_get(spec, "channels"), 0),
							    "conns"), 1), "src_sport", json_integer(70000));
	r = tb_call(f->c, json_pack("{s:s,s:o}", "op", "job_create", "spec", spec), false);
	assert_err(r, "spec.channels[0].conns[1].src_sport: 70000 is not a UDP port (1..65535)");
	json_decref(r);
	/* 17 channels */
	spec = tb_spec_channels(2, 17, 9, 0x100);
	r = tb_call(f->c, json_pack("{s:s,s:o}", "op", "job_create", "spec", spec), false);
	assert_err(r, "spec.channels: 17 channels, expected 1..16");
	json_decref(r);
	assert_int_equal(n_jobs(f), 0);
}

static void test_two_jobs_isolated(void **state)
{
	struct fx *f = *state;
	json_t *r, *spec_c;
	struct created a, b, c;
	char msg[64];

	create(f, tb_spec(4, 1, 0x100), &a);
	create(f, tb_spec(4, 2, 0x100), &b);        /* other hosts, same QPN numbers */
	assert_int_not_equal(a.id, b.id);
	assert_string_not_equal(a.key, b.key);

	/* A job sharing one QP with job a is refused, naming a. */
	spec_c = tb_spec(3, 3, 0x500);
	json_object_set_new(json_array_get(json_object_get(spec_c, "conns"), 1), "dst_ip",
			    json_string("10.1.0.2"));
	json_object_set_new(json_array_get(json_object_get(spec_c, "conns"), 1), "dst_qpn",
			    json_integer(0x100 + 3));
	r = tb_call(f->c, json_pack("{s:s,s:O}", "op", "job_create", "spec", spec_c), false);
	/* a tenant is not told which job: only that another holds the QP */
	assert_err(r, "spec.conns[1]: receiver 10.1.0.2 qpn 259 belongs to another job");
	json_decref(r);
	/* the admin is */
	r = tb_call(f->c, json_pack("{s:s,s:O}", "op", "job_create", "spec", spec_c), true);
	snprintf(msg, sizeof(msg), "belongs to job %u", a.id);
	assert_err(r, msg);
	assert_err(r, "spec.conns[1]: receiver 10.1.0.2 qpn 259");
	json_decref(r);
	/* Cross roles too: c's sender is a's receiving QP. */
	r = tb_call(f->c, json_pack("{s:s,s:o}", "op", "job_create", "spec",
				    json_pack("{s:[{s:s,s:s,s:i,s:i,s:i}]}", "conns", "src_ip", "10.1.0.2",
					      "dst_ip", "10.7.0.1", "src_qpn", 0x100 + 3, "dst_qpn", 77,
					      "ipsn", 0)), false);
	assert_err(r, "spec.conns[0]: sender 10.1.0.2 qpn 259 belongs to another job");
	json_decref(r);

	/* b's key does not open a; no key, a malformed key, an unknown id: same answer. */
	r = tb_call(f->c, job_req("job_destroy", a.id, b.key), false);
	snprintf(msg, sizeof(msg), "job %u: wrong or missing key", a.id);
	assert_err(r, msg);
	json_decref(r);
	r = tb_call(f->c, job_req("job_status", a.id, NULL), false);
	assert_err(r, msg);
	json_decref(r);
	r = tb_call(f->c, job_req("job_status", a.id, "zz"), false);
	assert_err(r, msg);
	json_decref(r);
	r = tb_call(f->c, job_req("job_status", 999, a.key), false);
	assert_err(r, "job 999: wrong or missing key");
	json_decref(r);
	/* Admin with a wrong key is refused too. */
	r = tb_call(f->c, job_req("job_destroy", a.id, b.key), true);
	assert_err(r, msg);
	json_decref(r);
	assert_int_equal(n_jobs(f), 2);

	/* Destroying b leaves a untouched. */
	r = tb_call(f->c, job_req("job_destroy", b.id, b.key), false);
	assert_ok(r);
	json_decref(r);
	r = tb_call(f->c, job_req("job_status", a.id, a.key), false);
	assert_ok(r);
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "job"), "state")), "active");
	json_decref(r);
	r = tb_call(f->c, job_req("job_destroy", b.id, b.key), false);
	snprintf(msg, sizeof(msg), "job %u: wrong or missing key", b.id);
	assert_err(r, msg);
	json_decref(r);

	/* Once a is gone its QPs are free for c. */
	r = tb_call(f->c, job_req("job_destroy", a.id, NULL), true);
	assert_ok(r);
	json_decref(r);
	create(f, spec_c, &c);
	assert_true(c.id > b.id);
	assert_int_equal(n_jobs(f), 1);
}

/* ---- tenants ------------------------------------------------------------ */

/* A request as tenant who (tb_call speaks as admin or tenant 0 only). */
static json_t *call_as(struct fx *f, int who, json_t *req)
{
	char *line = json_dumps(req, JSON_COMPACT), *out;
	json_t *r;

	json_decref(req);
	out = nr_ctl_handle(f->c, line, strlen(line), who);
	r = out ? json_loads(out, 0, NULL) : NULL;
	free(line);
	free(out);
	return r;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	assert_int_equal(chmod(path, mode), 0);
}

/*
 * Tenants: names and tokens are unique; a tenants file is all or nothing,
 * every error naming the entry; each tenant's max_jobs holds for it alone,
 * and a job is reached by its own tenant (with its key) and the admin only.
 */
/* nr_ctl_tenants_load of path into c, which must load n tenants: what it logged. */
static char *stderr_of_load(struct nr_ctl *c, const char *path, int n)
{
	char tmp[] = "/tmp/nr-log-XXXXXX", err[256] = "", *text = calloc(1, 1 << 14);
	int fd = mkstemp(tmp), saved = dup(STDERR_FILENO);
	ssize_t got;

	assert_true(fd >= 0 && saved >= 0 && text);
	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	assert_int_equal(nr_ctl_tenants_load(c, path, err, sizeof(err)), n);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	got = pread(fd, text, (1 << 14) - 1, 0);
	assert_true(got > 0);
	close(fd);
	unlink(tmp);
	return text;
}

/* Tenants sharing a range or a MAC load, and the log names each pair. */
static void test_tenant_overlap(void **state)
{
	struct fx *f = *state;
	char dir[64], path[96], *log;

	assert_int_equal(tb_tmpdir(dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/tenants.json", dir);
	write_file(path,
		   "{\"tenants\": ["
		   "{\"name\": \"c\", \"token\": \"cccccccccccccccccccc\", \"ips\": [\"10.0.0.0/8\"],"
		   " \"macs\": [\"02:00:00:00:00:01\"]},"
		   "{\"name\": \"d\", \"token\": \"dddddddddddddddddddd\", \"ips\": [\"10.1.0.0/16\"]},"
		   "{\"name\": \"e\", \"token\": \"eeeeeeeeeeeeeeeeeeee\", \"ips\": [\"10.1.2.3\"]},"
		   "{\"name\": \"g\", \"token\": \"gggggggggggggggggggg\", \"ips\": [\"20.0.0.0/8\"],"
		   " \"macs\": [\"02:00:00:00:00:01\"]},"
		   "{\"name\": \"h\", \"token\": \"hhhhhhhhhhhhhhhhhhhh\", \"ips\": [\"0.0.0.0/0\"]},"
		   "{\"name\": \"k\", \"token\": \"kkkkkkkkkkkkkkkkkkkk\", \"ips\": [\"30.0.0.0/8\"]}]}",
		   0600);
	log = stderr_of_load(f->c, path, 6);
	assert_non_null(strstr(log, "tenants c and d share addresses (10.0.0.0/8 and 10.1.0.0/16)"));
	assert_non_null(strstr(log, "tenants d and e share addresses (10.1.0.0/16 and 10.1.2.3/32)"));
	assert_non_null(strstr(log, "tenants c and g share a MAC (02:00:00:00:00:01)"));
	assert_null(strstr(log, "and h share")); /* every address, on purpose */
	assert_null(strstr(log, "and k share"));
	free(log);
	unlink(path);
	rmdir(dir);
}

static void test_tenants(void **state)
{
	static const struct { const char *text; const char *want; } bad[] = {
		{ "{\"tenants\": [", "line 1" },
		{ "[]", "expected {\"tenants\"" },
		{ "{\"tenants\": [{\"name\": \"c\", \"token\": \"short\"}]}", "tenants[0].token: at least 16" },
		{ "{\"tenants\": [{\"name\": \"c\", \"token\": \"cccccccccccccccccccc\", \"max_job\": 1}]}",
		  "tenants[0]: max_job: unknown field" },
		{ "{\"tenants\": [{\"name\": \"c\", \"token\": \"cccccccccccccccccccc\", \"max_jobs\": 0}]}",
		  "tenants[0].max_jobs: an integer 1..64" },
		{ "{\"tenants\": [{\"token\": \"cccccccccccccccccccc\"}]}", "\"name\" and \"token\" are required" },
		{ "{\"tenants\": [{\"name\": \"c\", \"token\": \"cccccccccccccccccccc\", \"ips\": [\"10.0.0.0/8\"]},"
		  " {\"name\": \"a\", \"token\": \"dddddddddddddddddddd\", \"ips\": [\"10.0.0.0/8\"]}]}",
		  "tenant a: defined twice" },
		{ "{\"tenants\": [{\"name\": \"c d\", \"token\": \"cccccccccccccccccccc\", \"ips\": [\"10.0.0.0/8\"]}]}",
		  "tenant name \"c d\"" },
		/* no default that opens every address: the file says which */
		{ "{\"tenants\": [{\"name\": \"c\", \"token\": \"cccccccccccccccccccc\"}]}",
		  "tenants[0] (c): \"ips\" is required" },
		{ "{\"tenants\": [{\"name\": \"c\", \"token\": \"cccccccccccccccccccc\", \"ips\": []}]}",
		  "tenants[0].ips: a list of 1..256" },
		{ "{\"tenants\": [{\"name\": \"c\", \"token\": \"cccccccccccccccccccc\", \"ips\": \"10.0.0.0/8\"}]}",
		  "tenants[0].ips: a list of 1..256" },
		{ "{\"tenants\": [{\"name\": \"c\", \"token\": \"cccccccccccccccccccc\", \"ips\": [\"10.0.0.0/33\"]}]}",
		  "tenant c: ips[0]: \"10.0.0.0/33\" is not an IPv4 range (a.b.c.d/len" },
		{ "{\"tenants\": [{\"name\": \"c\", \"token\": \"cccccccccccccccccccc\", \"ips\": [\"10.0.0.0/8\", \"10.1.2.3/16\"]}]}",
		  "tenant c: ips[1]: \"10.1.2.3/16\" is not an IPv4 range (bits set past its length" },
		{ "{\"tenants\": [{\"name\": \"c\", \"token\": \"cccccccccccccccccccc\", \"ips\": [7]}]}",
		  "tenants[0].ips[0]: expected a string" },
		{ "{\"tenants\": [{\"name\": \"c\", \"token\": \"cccccccccccccccccccc\", \"ips\": [\"10.0.0.0/8\"],"
		  " \"macs\": [\"01:00:5e:00:00:01\"]}]}", "tenant c: macs[0]: \"01:00:5e:00:00:01\" is not a unicast MAC" },
		{ "{\"tenants\": [{\"name\": \"c\", \"token\": \"cccccccccccccccccccc\", \"ips\": [\"10.0.0.0/8\"],"
		  " \"max_conns\": 0}]}", "tenants[0].max_conns: an integer 1..4096" },
	};
	struct fx *f = *state;
	struct nr_ctl_tenant_cfg ta = { .name = "a", .token = "token-of-tenant-a", .max_jobs = 1 };
	struct nr_ctl_tenant_cfg tb = { .name = "b", .token = "token-of-tenant-b" };
	char dir[64], path[96], err[256];
	json_t *r, *spec;
	json_int_t idb;
	char keyb[40];

	assert_int_equal(nr_ctl_tenant_add(f->c, &ta, err, sizeof(err)), 0);
	assert_int_equal(nr_ctl_tenant_add(f->c, &tb, err, sizeof(err)), 1);
	tb.name = "b2";
	assert_int_equal(nr_ctl_tenant_add(f->c, &tb, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "same token as tenant b"));
	assert_int_equal(nr_ctl_tenants(f->c), 2);
	assert_int_equal(nr_ctl_authenticate(f->c, "token-of-tenant-b", 17), 1);
	assert_int_equal(nr_ctl_authenticate(f->c, "token-of-tenant-", 16), -1);
	assert_int_equal(nr_ctl_authenticate(f->c, "token-of-tenant-bb", 18), -1);

	assert_int_equal(tb_tmpdir(dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/tenants.json", dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(path, bad[i].text, 0600);
		assert_true(nr_ctl_tenants_load(f->c, path, err, sizeof(err)) < 0);
		if (!strstr(err, bad[i].want))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err, bad[i].want);
		assert_int_equal(nr_ctl_tenants(f->c), 2);    /* none of a bad file */
	}
	write_file(path, "{\"tenants\": [{\"name\": \"c\", \"token\": \"cccccccccccccccccccc\", "
		   "\"ips\": [\"10.0.0.0/8\"], \"macs\": [\"02:00:00:00:00:01\"], \"max_conns\": 4}]}", 0640);
	assert_true(nr_ctl_tenants_load(f->c, path, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "chmod 600"));
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(nr_ctl_tenants_load(f->c, path, err, sizeof(err)), 1);
	assert_int_equal(nr_ctl_authenticate(f->c, "cccccccccccccccccccc", 20), 2);
	unlink(path);
	rmdir(dir);

	/* a: one job, then its quota; b unaffected */
	spec = tb_spec(2, 3, 0x100);
	r = call_as(f, 0, json_pack("{s:s,s:o}", "op", "job_create", "spec", spec));
	assert_ok(r);
	json_decref(r);
	r = call_as(f, 0, json_pack("{s:s,s:o}", "op", "job_create", "spec", tb_spec(2, 4, 0x100)));
	assert_err(r, "tenant a is at its quota: 1 jobs of max_jobs 1");
	json_decref(r);
	r = call_as(f, 1, json_pack("{s:s,s:o}", "op", "job_create", "spec", tb_spec(2, 4, 0x100)));
	assert_ok(r);
	idb = json_integer_value(json_object_get(r, "job"));
	snprintf(keyb, sizeof(keyb), "%s", json_string_value(json_object_get(r, "key")));
	json_decref(r);
	/* b's key in a's hands opens nothing; b and the admin see it */
	r = call_as(f, 0, job_req("job_status", (uint32_t)idb, keyb));
	assert_err(r, "wrong or missing key");
	json_decref(r);
	r = call_as(f, 1, job_req("job_status", (uint32_t)idb, keyb));
	assert_ok(r);
	json_decref(r);
	r = call_as(f, NR_CTL_ADMIN, json_pack("{s:s}", "op", "job_list"));
	assert_ok(r);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(r, "jobs"), 1),
							      "tenant")), "b");
	json_decref(r);
	assert_int_equal(nr_ctl_counter(f->c, NR_CCTR_QUOTA_REFUSED), 1);

	/* a box that pins MACs for tenants (switch mode), shared by three: a
	 * tenant names only the MACs the file gives it, one without macs none */
	nr_ctl_set_mac_pinning(f->c, true);
	r = call_as(f, 1, json_pack("{s:s,s:o}", "op", "job_create", "spec", tb_spec(2, 5, 0x100)));
	assert_err(r,
		   "spec.conns[0].src_mac: 02:00:00:05:00:01: tenant b has no macs in the "
		   "tenants file, and a box shared by 3 tenants pins only the MACs the file gives each");
	json_decref(r);
	r = call_as(f, 2, json_pack("{s:s,s:o}", "op", "job_create", "spec", tb_spec(2, 0, 0x200)));
	assert_err(r, "02:00:00:00:00:02 is not tenant c's MAC");
	json_decref(r);
	nr_ctl_set_mac_pinning(f->c, false);
	r = call_as(f, 1, json_pack("{s:s,s:o}", "op", "job_create", "spec", tb_spec(2, 5, 0x100)));
	assert_ok(r);
	json_decref(r);
}

static void test_job_list_admin_only(void **state)
{
	struct fx *f = *state;
	json_t *r = tb_call(f->c, json_pack("{s:s}", "op", "job_list"), false);

	assert_err(r, "job_list: admin only");
	json_decref(r);
}

static void test_failure_reported(void **state)
{
	struct fx *f = *state;
	json_t *spec = tb_spec(2, 4, 0x700), *r, *job;
	struct created j;

	json_object_set_new(spec, "timeout_ms", json_integer(1000));
	json_object_set_new(spec, "msg_size", json_integer(256));
	create(f, json_deep_copy(spec), &j);
	tb_fail_job(&f->tb, j.id, spec);
	json_decref(spec);
	r = tb_call(f->c, job_req("job_status", j.id, j.key), false);
	assert_ok(r);
	job = json_object_get(r, "job");
	assert_string_equal(json_string_value(json_object_get(job, "state")), "failed");
	assert_true(strlen(json_string_value(json_object_get(job, "reason"))) > 0);
	print_message("  failure reason: %s\n", json_string_value(json_object_get(job, "reason")));
	json_decref(r);
	r = tb_call(f->c, json_pack("{s:s}", "op", "job_list"), true);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(r, "jobs"), 0),
								"state")), "failed");
	json_decref(r);
	r = tb_call(f->c, job_req("job_destroy", j.id, j.key), false);
	assert_ok(r);
	json_decref(r);
}

/*
 * A failed job nobody destroys (its rank 0 died) is destroyed by the reaper
 * once it has been failed for the TTL; active jobs never are, and a TTL of 0
 * keeps failed jobs until destroyed.
 */
static void test_failed_jobs_reaped(void **state)
{
	struct fx *f = *state;
	json_t *spec = tb_spec(2, 4, 0x700);
	struct created failed, active;
	json_t *r;

	json_object_set_new(spec, "timeout_ms", json_integer(1000));
	json_object_set_new(spec, "msg_size", json_integer(256));
	create(f, json_deep_copy(spec), &failed);
	tb_fail_job(&f->tb, failed.id, spec);
	json_decref(spec);
	create(f, tb_spec(2, 5, 0x100), &active);
	assert_int_equal(n_jobs(f), 2);

	nr_ctl_set_failed_ttl(f->c, 0);                 /* kept until destroyed */
	assert_int_equal(nr_ctl_reap(f->c, 1000), 0);
	assert_int_equal(nr_ctl_reap(f->c, 1000000000), 0);
	nr_ctl_set_failed_ttl(f->c, 5000);
	assert_int_equal(nr_ctl_reap(f->c, 10000), 0);    /* first seen failed now */
	assert_int_equal(nr_ctl_reap(f->c, 14999), 0);    /* 4.999 s later: kept */
	r = tb_call(f->c, job_req("job_status", failed.id, failed.key), false);
	assert_ok(r);
	json_decref(r);
	assert_int_equal(nr_ctl_reap(f->c, 15000), 1);    /* 5 s: destroyed */
	assert_int_equal(n_jobs(f), 1);
	r = tb_call(f->c, job_req("job_status", failed.id, NULL), true);
	assert_err(r, "no such job");
	json_decref(r);
	assert_int_equal(nr_ctl_counter(f->c, NR_CCTR_JOBS_REAPED), 1);
	/* the active job stays, however long */
	assert_int_equal(nr_ctl_reap(f->c, 1000000000), 0);
	assert_int_equal(n_jobs(f), 1);
	r = tb_call(f->c, job_req("job_status", active.id, active.key), false);
	assert_ok(r);
	json_decref(r);
}

/* Fill the backend: a clear refusal at its limit, room again after destroy. */
static void test_capacity(void **state)
{
	struct fx *f = *state;
	struct created first = { 0 };
	unsigned made = 0, net;
	json_t *r = NULL;

	for (net = 10; net < 10 + NR_MAX_JOBS + 2; net++) {
		json_t *spec = tb_spec(2, net, 0x100);

		json_object_set_new(spec, "msg_size", json_integer(4096));
		r = tb_call(f->c, json_pack("{s:s,s:o}", "op", "job_create", "spec", spec), false);
		if (!json_is_true(json_object_get(r, "ok")))
			break;
		if (!made++)
			first.id = (uint32_t)json_integer_value(json_object_get(r, "job"));
		json_decref(r);
		r = NULL;
	}
	assert_non_null(r);
	print_message("  %u jobs made, then: %s\n", made, json_string_value(json_object_get(r, "error")));
	assert_err(r, "destroy");
	json_decref(r);
	assert_true(made >= 2);
	r = tb_call(f->c, job_req("job_destroy", first.id, NULL), true);
	assert_ok(r);
	json_decref(r);
	r = tb_call(f->c, json_pack("{s:s,s:o}", "op", "job_create", "spec", tb_spec(2, 200, 0x100)), false);
	assert_ok(r);
	json_decref(r);
}

/* ---- backend_info and stats ----------------------------------------------- */

static const json_t *find_counters(const json_t *o)
{
	const char *k;
	json_t *v;

	if (!json_is_object(o))
		return NULL;
	json_object_foreach((json_t *)o, k, v) {
		const json_t *x;

		if (!strcmp(k, "counters") && json_object_get(v, "aggregated"))
			return v;
		if ((x = find_counters(v)))
			return x;
	}
	return NULL;
}

static void test_info_stats_shape(void **state)
{
	struct fx *f = *state;
	const json_t *ctrs, *ctl;
	json_t *r, *b;
	struct created j;

	r = tb_call(f->c, json_pack("{s:s}", "op", "backend_info"), false);
	assert_ok(r);
	b = json_object_get(r, "backend");
	assert_string_equal(json_string_value(json_object_get(b, "name")), kind);
	assert_int_equal(json_integer_value(json_object_get(b, "max_jobs")), NR_MAX_JOBS);
	assert_int_equal(json_integer_value(json_object_get(b, "max_ranks")), NR_MAX_CONNS);
	json_decref(r);

	create(f, tb_spec(3, 6, 0x900), &j);
	r = tb_call(f->c, json_pack("{s:s}", "op", "stats"), false);
	assert_ok(r);
	ctrs = find_counters(json_object_get(r, "stats"));
	assert_non_null(ctrs);
	for (unsigned i = 0; i < NR_ECTR_MAX; i++)
		assert_true(json_is_integer(json_object_get(ctrs, nr_engine_ctr_names[i])));
	ctl = json_object_get(json_object_get(r, "stats"), "control");
	assert_int_equal(json_integer_value(json_object_get(ctl, "jobs")), 1);
	assert_int_equal(json_integer_value(json_object_get(ctl, "jobs_created")), 1);
	assert_true(json_integer_value(json_object_get(ctl, "requests")) >= 3);
	json_decref(r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_show_destroy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reduce_bor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_selective, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_many_conns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_channels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_channels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_jobs_isolated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_list_admin_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tenants, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tenant_overlap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failure_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_jobs_reaped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capacity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_info_stats_shape, setup, teardown),
	};
	char name[32];

	if (argc > 1)
		kind = argv[1];
	if (strcmp(kind, "sw") && strcmp(kind, "fpga") && strcmp(kind, "rtl")) {
		fprintf(stderr, "usage: %s sw|fpga|rtl\n", argv[0]);
		return 2;
	}
	snprintf(name, sizeof(name), "ctl_api_%s", kind);
	return cmocka_run_group_tests_name(name, tests, NULL, NULL);
}
