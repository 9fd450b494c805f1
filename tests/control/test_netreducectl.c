/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The netreducectl binary (argv[1]) against a control server started here
 * (sw backend on an in-process engine): human and --json output, and the
 * exit codes scripts rely on: 0 ok, 1 error reply, 2 usage, 3 cannot connect.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/control/ctl_testlib.h"

#define TOKEN "cli-test-token-0123"

static const char *ctl_bin;

struct fx {
	struct tb tb;
	struct nr_ctl *c;
	struct nr_ctl_server *s;
	char dir[64], sock[100], addr[64], spec[128];
};

struct run {
	int code;
	char out[65536];
	char err[8192];
};

static int setup(void **state)
{
	struct nr_ctl_server_cfg cfg = { .tcp_addr = "127.0.0.1:0", .token = TOKEN };
	struct fx *f = calloc(1, sizeof(*f));
	struct nr_backend *b;
	char err[256] = "";
	json_t *spec;

	if (!f || tb_tmpdir(f->dir, sizeof(f->dir)))
		return -1;
	snprintf(f->sock, sizeof(f->sock), "%s/nr.sock", f->dir);
	snprintf(f->spec, sizeof(f->spec), "%s/job.json", f->dir);
	b = tb_backend(&f->tb, "sw");
	f->c = b ? nr_ctl_create(b) : NULL;
	if (!f->c)
		return -1;
	cfg.unix_path = f->sock;
	f->s = nr_ctl_server_start(f->c, &cfg, err, sizeof(err));
	if (!f->s) {
		fprintf(stderr, "server: %s\n", err);
		return -1;
	}
	snprintf(f->addr, sizeof(f->addr), "127.0.0.1:%d", nr_ctl_server_tcp_port(f->s));
	spec = tb_spec(4, 1, 0x100);
	json_object_set_new(spec, "mode", json_string("streaming"));
	if (json_dump_file(spec, f->spec, JSON_INDENT(2)))
		return -1;
	json_decref(spec);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	nr_ctl_server_stop(f->s);
	nr_ctl_destroy(f->c);
	tb_cleanup(&f->tb);
	unlink(f->spec);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void slurp(int fd, char *buf, size_t cap)
{
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	n = read(fd, buf, cap - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

/*
 * Run netreducectl with the NULL-terminated arguments; stdin_text (or
 * /dev/null), env_sock sets NETREDUCE_SOCKET, env_token NETREDUCE_TOKEN.
 */
static void run_ctl(struct run *r, const char *stdin_text, const char *env_sock,
		    const char *env_token, ...)
{
	char *argv[32];
	int n = 0, fo, fe, fi, st;
	FILE *o = tmpfile(), *e = tmpfile(), *i = tmpfile();
	va_list ap;
	pid_t pid;

	assert_true(o && e && i);
	argv[n++] = (char *)ctl_bin;
	va_start(ap, env_token);
	while (n < 31 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	if (stdin_text)
		fputs(stdin_text, i);
	fflush(i);
	rewind(i);
	fo = dup(fileno(o));
	fe = dup(fileno(e));
	fi = dup(fileno(i));
	fclose(o);
	fclose(e);
	fclose(i);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fi, 0);
		dup2(fo, 1);
		dup2(fe, 2);
		unsetenv("NETREDUCE_SOCKET");
		unsetenv("NETREDUCE_TOKEN");
		unsetenv("NETREDUCE_TLS_CA");
		if (env_sock)
			setenv("NETREDUCE_SOCKET", env_sock, 1);
		if (env_token)
			setenv("NETREDUCE_TOKEN", env_token, 1);
		execv(ctl_bin, argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	r->code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	slurp(fo, r->out, sizeof(r->out));
	slurp(fe, r->err, sizeof(r->err));
	close(fi);
	print_message("  $ netreducectl");
	for (int k = 1; k < n; k++)
		print_message(" %s", argv[k]);
	print_message("  -> %d%s%s", r->code, r->err[0] ? "  stderr: " : "\n", r->err);
	if (getenv("NR_TEST_SHOW_OUTPUT"))
		print_message("%s", r->out);
}

static void expect_in(const char *hay, const char *needle)
{
	if (!strstr(hay, needle)) {
		print_error("\"%s\" not found in:\n%s\n", needle, hay);
		fail();
	}
}

static json_t *parse_out(struct run *r)
{
	json_error_t je;
	json_t *j = json_loads(r->out, 0, &je);

	if (!j)
		print_error("--json output is not JSON (%s):\n%s\n", je.text, r->out);
	assert_non_null(j);
	return j;
}

static void test_human_create_show_destroy(void **state)
{
	struct fx *f = *state;
	struct run *r = calloc(1, sizeof(*r));
	char key[33] = "", *p;

	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "job", "create", f->spec, "--name",
		"resnet.50", NULL);
	assert_int_equal(r->code, 0);
	expect_in(r->out, "job 1 created");
	expect_in(r->out, "credits     4");
	p = strstr(r->out, "key         ");
	assert_non_null(p);
	memcpy(key, p + 12, 32);
	assert_int_equal(strspn(key, "0123456789abcdef"), 32);

	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "jobs", NULL);
	assert_int_equal(r->code, 0);
	expect_in(r->out, "ID  NAME       TENANT  STATE   RANKS  MODE       DTYPE  MSG_SIZE  CREDITS  COMPLETED");
	expect_in(r->out, "1   resnet.50  admin   active  4      streaming  fp32   65536     4        0");

	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "job", "show", "1", NULL);
	assert_int_equal(r->code, 0);
	expect_in(r->out, "state ");
	expect_in(r->out, "active");
	expect_in(r->out, "resnet.50");
	expect_in(r->out, "connections:");
	expect_in(r->out, "dtype ");
	expect_in(r->out, "RANK  SRC_IP    SRC_QPN  DST_IP    DST_QPN  IPSN");
	expect_in(r->out, "0     10.1.0.1  256      10.1.0.2  259      0");
	expect_in(r->out, "counters:");
	expect_in(r->out, "aggregated");

	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "job", "destroy", "1", "--key", key, NULL);
	assert_int_equal(r->code, 0);
	expect_in(r->out, "job 1 destroyed");
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "job", "show", "1", NULL);
	assert_int_equal(r->code, 1);
	expect_in(r->err, "netreducectl: job 1: no such job");
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "jobs", NULL);
	assert_int_equal(r->code, 0);
	expect_in(r->out, "no jobs");
	free(r);
}

/* A job with short slots: the spec's bound, the counters and left_out per rank shown. */
static void test_short_slots_shown(void **state)
{
	struct fx *f = *state;
	struct run *r = calloc(1, sizeof(*r));
	json_t *spec = tb_spec(4, 1, 0x300);
	char *text;

	json_object_set_new(spec, "short_ppm", json_integer(20000));
	json_object_set_new(spec, "short_dscp", json_integer(10));
	json_object_set_new(spec, "prio_classes", json_integer(3));
	text = json_dumps(spec, 0);
	run_ctl(r, text, NULL, NULL, "--socket", f->sock, "job", "create", "-", NULL);
	assert_int_equal(r->code, 0);
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "job", "show", "1", NULL);
	assert_int_equal(r->code, 0);
	expect_in(r->out, "short_ppm");
	expect_in(r->out, "20000");
	expect_in(r->out, "short_dscp");
	expect_in(r->out, "IPSN  LEFT_OUT");
	expect_in(r->out, "short_slots");
	expect_in(r->out, "short_denied");
	expect_in(r->out, "short_denied by reason:");
	expect_in(r->out, "first_unseen");
	expect_in(r->out, "short_slots by priority class (0 the lowest): 0 0 0");
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "job", "show", "1", "--json", NULL);
	{
		json_t *j = parse_out(r);
		json_t *lo = json_object_get(json_object_get(j, "job"), "left_out");

		assert_int_equal(json_array_size(lo), 4);
		assert_int_equal(json_integer_value(json_array_get(lo, 3)), 0);
		assert_int_equal(json_object_size(json_object_get(json_object_get(j, "job"), "short_why")),
				 NR_SHORT_WHY_MAX);
		assert_int_equal(json_array_size(json_object_get(json_object_get(j, "job"),
							       "short_by_class")), 3);
		json_decref(j);
	}
	free(text);
	json_decref(spec);
	free(r);
}

static void test_json_output(void **state)
{
	struct fx *f = *state;
	struct run *r = calloc(1, sizeof(*r));
	json_t *j;

	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "--json", "job", "create", f->spec, NULL);
	assert_int_equal(r->code, 0);
	j = parse_out(r);
	assert_true(json_is_true(json_object_get(j, "ok")));
	assert_int_equal(json_integer_value(json_object_get(j, "job")), 1);
	assert_int_equal(json_integer_value(json_object_get(j, "credits")), 4);
	json_decref(j);
	run_ctl(r, NULL, NULL, NULL, "--json", "--socket", f->sock, "jobs", NULL);
	j = parse_out(r);
	assert_int_equal(json_array_size(json_object_get(j, "jobs")), 1);
	json_decref(j);
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "job", "show", "1", "--json", NULL);
	j = parse_out(r);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "job"), "state")), "active");
	json_decref(j);
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "--json", "stats", NULL);
	j = parse_out(r);
	assert_true(json_is_object(json_object_get(json_object_get(j, "stats"), "control")));
	json_decref(j);
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "--json", "backend", NULL);
	j = parse_out(r);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "backend"), "name")), "sw");
	json_decref(j);
	/* An error reply: exit 1, the reply on stdout, the message on stderr. */
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "--json", "job", "destroy", "9", NULL);
	assert_int_equal(r->code, 1);
	j = parse_out(r);
	assert_true(json_is_false(json_object_get(j, "ok")));
	json_decref(j);
	expect_in(r->err, "netreducectl: job 9: no such job");
	free(r);
}

/* health: exit 0 and "healthy" while the backend says so, exit 1 and its reason when not. */
static void test_health(void **state)
{
	struct fx *f = *state;
	struct run *r = calloc(1, sizeof(*r));
	json_t *j;

	tb_sw_unhealthy = NULL;
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "health", NULL);
	assert_int_equal(r->code, 0);
	expect_in(r->out, "healthy: 0 ports linked, 2 workers polling");
	tb_sw_unhealthy = "worker 1 (lcore 2): stuck, its loop has not gone round for 1500 ms";
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "health", NULL);
	assert_int_equal(r->code, 1);
	expect_in(r->out, "unhealthy: worker 1 (lcore 2): stuck");
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "--json", "health", NULL);
	assert_int_equal(r->code, 1);
	j = parse_out(r);
	assert_true(json_is_false(json_object_get(json_object_get(j, "health"), "healthy")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "health"), "backend")), "sw");
	json_decref(j);
	tb_sw_unhealthy = NULL;
	/* a name that is no name: refused, naming the field */
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "job", "create", f->spec, "--name",
		"two words", NULL);
	assert_int_equal(r->code, 1);
	expect_in(r->err, "name: \"two words\" is not a job name");
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "stats", "--name", "x", NULL);
	assert_int_equal(r->code, 2);
	expect_in(r->err, "--name goes with job create");
	free(r);
}

static void test_usage_errors(void **state)
{
	struct fx *f = *state;
	struct run *r = calloc(1, sizeof(*r));

	run_ctl(r, NULL, NULL, NULL, NULL);
	assert_int_equal(r->code, 2);
	expect_in(r->err, "missing command");
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "bogus", NULL);
	assert_int_equal(r->code, 2);
	expect_in(r->err, "unknown command: bogus");
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "job", "show", "abc", NULL);
	assert_int_equal(r->code, 2);
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "job", NULL);
	assert_int_equal(r->code, 2);
	run_ctl(r, NULL, NULL, NULL, "--frobnicate", "stats", NULL);
	assert_int_equal(r->code, 2);
	expect_in(r->err, "unknown option: --frobnicate");
	run_ctl(r, NULL, NULL, NULL, "--connect", f->addr, "stats", NULL);
	assert_int_equal(r->code, 2);
	expect_in(r->err, "--connect needs --token");
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "job", "create", "/nonexistent/job.json", NULL);
	assert_int_equal(r->code, 2);
	expect_in(r->err, "/nonexistent/job.json");
	run_ctl(r, "{\"conns\": [", NULL, NULL, "--socket", f->sock, "job", "create", "-", NULL);
	assert_int_equal(r->code, 2);
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "backend", "--watch", NULL);
	assert_int_equal(r->code, 2);
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "static", "add", "02:00:00:00:00:01", NULL);
	assert_int_equal(r->code, 2);
	expect_in(r->err, "static takes nothing, add MAC PORT, or remove MAC");
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "static", "add", "02:00:00:00:00:01", "x",
		NULL);
	assert_int_equal(r->code, 2);
	expect_in(r->err, "not a port id (0..65535): x");
	/* a box without an L2 table (this backend: no ports) says so */
	run_ctl(r, NULL, NULL, NULL, "--socket", f->sock, "static", "remove", "02:00:00:00:00:01",
		NULL);
	assert_int_equal(r->code, 1);
	expect_in(r->err, "l2_static: backend ");
	expect_in(r->err, "has no L2 table");
	run_ctl(r, NULL, NULL, NULL, "--help", NULL);
	assert_int_equal(r->code, 0);
	expect_in(r->out, "usage: netreducectl");
	expect_in(r->out, "static add MAC PORT");
	expect_in(r->out, "exit codes");
	free(r);
}

static void test_cannot_connect(void **state)
{
	struct fx *f = *state;
	struct run *r = calloc(1, sizeof(*r));
	char none[128];

	snprintf(none, sizeof(none), "%s/none.sock", f->dir);
	run_ctl(r, NULL, NULL, NULL, "--socket", none, "stats", NULL);
	assert_int_equal(r->code, 3);
	expect_in(r->err, "netreducectl: cannot connect to ");
	expect_in(r->err, none);
	run_ctl(r, NULL, none, NULL, "jobs", NULL);      /* $NETREDUCE_SOCKET */
	assert_int_equal(r->code, 3);
	expect_in(r->err, none);
	run_ctl(r, NULL, NULL, NULL, "--connect", "127.0.0.1:1", "--token", "x", "stats", NULL);
	assert_int_equal(r->code, 3);
	expect_in(r->err, "127.0.0.1:1");
	free(r);
}

static void test_tcp_token_and_key(void **state)
{
	struct fx *f = *state;
	struct run *r = calloc(1, sizeof(*r));
	json_t *j;
	char key[40];

	run_ctl(r, NULL, NULL, NULL, "--connect", f->addr, "--token", TOKEN, "--json", "job", "create",
		f->spec, NULL);
	assert_int_equal(r->code, 0);
	j = parse_out(r);
	snprintf(key, sizeof(key), "%s", json_string_value(json_object_get(j, "key")));
	json_decref(j);
	run_ctl(r, NULL, NULL, TOKEN, "--connect", f->addr, "job", "show", "1", "--key", key, NULL);
	assert_int_equal(r->code, 0);
	expect_in(r->out, "active");
	run_ctl(r, NULL, NULL, TOKEN, "--connect", f->addr, "job", "show", "1", NULL);
	assert_int_equal(r->code, 1);
	expect_in(r->err, "netreducectl: job 1: wrong or missing key");
	run_ctl(r, NULL, NULL, NULL, "--connect", f->addr, "--token", "nope", "stats", NULL);
	assert_int_equal(r->code, 1);
	expect_in(r->err, "netreducectl: bad or missing token");
	run_ctl(r, NULL, NULL, TOKEN, "--connect", f->addr, "jobs", NULL);
	assert_int_equal(r->code, 1);
	expect_in(r->err, "admin only");
	run_ctl(r, NULL, NULL, TOKEN, "--connect", f->addr, "job", "destroy", "1", "--key", key, NULL);
	assert_int_equal(r->code, 0);
	free(r);
}

/*
 * --tls-ca: the same requests over TLS to a box with a certificate; a wrong
 * CA (exit 3), no TLS to a TLS box (1, the box's word), TLS to a plain box
 * (3) and an unreadable CA file (2) each say what is wrong.
 */
static void test_tls(void **state)
{
	struct fx *f = *state;
	struct run *r = calloc(1, sizeof(*r));
	struct tb_tls certs;
	struct nr_ctl_server_cfg cfg = { .tcp_addr = "127.0.0.1:0", .token = TOKEN };
	struct nr_ctl_server *s;
	char addr[64], key[40], err[256];
	json_t *j;

	assert_int_equal(tb_tls_make(&certs), 0);
	cfg.tls_cert = certs.cert;
	cfg.tls_key = certs.key;
	s = nr_ctl_server_start(f->c, &cfg, err, sizeof(err));
	assert_non_null(s);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", nr_ctl_server_tcp_port(s));
	run_ctl(r, NULL, NULL, NULL, "--connect", addr, "--tls-ca", certs.ca, "--token", TOKEN,
		"--json", "job", "create", f->spec, NULL);
	assert_int_equal(r->code, 0);
	j = parse_out(r);
	snprintf(key, sizeof(key), "%s", json_string_value(json_object_get(j, "key")));
	json_decref(j);
	run_ctl(r, NULL, NULL, TOKEN, "--connect", addr, "--tls-ca", certs.ca, "job", "show", "1",
		"--key", key, NULL);
	assert_int_equal(r->code, 0);
	expect_in(r->out, "active");
	run_ctl(r, NULL, NULL, TOKEN, "--connect", addr, "--tls-ca", certs.ca, "stats", "--watch",
		"0.1", "--count", "2", NULL);
	assert_int_equal(r->code, 0);
	run_ctl(r, NULL, NULL, TOKEN, "--connect", addr, "--tls-ca", certs.ca, "job", "destroy", "1",
		"--key", key, NULL);
	assert_int_equal(r->code, 0);
	run_ctl(r, NULL, NULL, TOKEN, "--connect", addr, "--tls-ca", certs.other_ca, "stats", NULL);
	assert_int_equal(r->code, 3);
	expect_in(r->err, "does not verify against the CA file");
	expect_in(r->err, "unable to get local issuer certificate");
	run_ctl(r, NULL, NULL, TOKEN, "--connect", addr, "stats", NULL);
	assert_int_equal(r->code, 1);
	expect_in(r->err, "netreducectl: this box wants TLS on its control listener");
	run_ctl(r, NULL, NULL, TOKEN, "--connect", f->addr, "--tls-ca", certs.ca, "stats", NULL);
	assert_int_equal(r->code, 3);
	expect_in(r->err, "does not speak TLS");
	run_ctl(r, NULL, NULL, TOKEN, "--connect", addr, "--tls-ca", "/nonexistent/ca.pem", "stats",
		NULL);
	assert_int_equal(r->code, 2);
	expect_in(r->err, "cannot read the CA file /nonexistent/ca.pem");
	nr_ctl_server_stop(s);
	tb_tls_remove(&certs);
	free(r);
}

static void test_stats_watch_backend_stdin(void **state)
{
	struct fx *f = *state;
	struct run *r = calloc(1, sizeof(*r));
	char *spec_text;
	json_t *spec;
	int rounds = 0;

	run_ctl(r, NULL, f->sock, NULL, "stats", "--watch", "0.1", "--count", "3", NULL);
	assert_int_equal(r->code, 0);
	for (const char *p = r->out; (p = strstr(p, "--- ")); p++)
		rounds++;
	assert_int_equal(rounds, 3);
	expect_in(r->out, "control.requests");
	run_ctl(r, NULL, f->sock, NULL, "backend", NULL);
	assert_int_equal(r->code, 0);
	expect_in(r->out, "name");
	expect_in(r->out, "sw");
	spec = tb_spec(2, 7, 0x40);
	spec_text = json_dumps(spec, 0);
	json_decref(spec);
	run_ctl(r, spec_text, f->sock, NULL, "job", "create", "-", NULL);
	free(spec_text);
	assert_int_equal(r->code, 0);
	expect_in(r->out, "created");
	/* A bad spec: the box's message, naming the field, exit 1. */
	run_ctl(r, "{\"mtu\":1000,\"conns\":[]}", f->sock, NULL, "job", "create", "-", NULL);
	assert_int_equal(r->code, 1);
	expect_in(r->err, "netreducectl: spec.");
	free(r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_human_create_show_destroy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_slots_shown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_output, setup, teardown),
		cmocka_unit_test_setup_teardown(test_health, setup, teardown),
		cmocka_unit_test_setup_teardown(test_usage_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cannot_connect, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_token_and_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats_watch_backend_stdin, setup, teardown),
	};

	if (argc < 2 || access(argv[1], X_OK)) {
		fprintf(stderr, "usage: %s PATH/TO/netreducectl\n", argv[0]);
		return 2;
	}
	ctl_bin = argv[1];
	return cmocka_run_group_tests_name("netreducectl", tests, NULL, NULL);
}
