/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control server over real sockets: a UNIX socket in a temp dir and TCP
 * on 127.0.0.1 with an ephemeral port; run once per backend (argv[1]: sw,
 * an in-process engine, or fpga, the driver on the device model).  Every bad input gets its error and the server still answers a
 * good request afterwards.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/control/ctl_testlib.h"

#define TOKEN "s3cret-token-for-tests"

static const char *kind = "sw";

struct fx {
	struct tb tb;
	struct nr_ctl *c;
	struct nr_ctl_server *s;
	char dir[64], path[100];
	int port;
};

struct conn {
	int fd;
	char buf[1 << 17];
	size_t len;
};

static void start(struct fx *f, struct nr_ctl_server_cfg cfg)
{
	char err[256] = "";

	cfg.unix_path = f->path;
	cfg.tcp_addr = "127.0.0.1:0";
	cfg.token = TOKEN;
	f->s = nr_ctl_server_start(f->c, &cfg, err, sizeof(err));
	if (!f->s)
		print_error("server: %s\n", err);
	assert_non_null(f->s);
	f->port = nr_ctl_server_tcp_port(f->s);
	assert_true(f->port > 0);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct nr_backend *b;

	if (!f || tb_tmpdir(f->dir, sizeof(f->dir)))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/ctl.sock", f->dir);
	b = tb_backend(&f->tb, kind);
	f->c = b ? nr_ctl_create(b) : NULL;
	*state = f;
	return f->c ? 0 : -1;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	nr_ctl_server_stop(f->s);
	nr_ctl_destroy(f->c);
	tb_cleanup(&f->tb);
	rmdir(f->dir);
	free(f);
	return 0;
}

static struct conn *dial_fd(int fd)
{
	struct conn *k = calloc(1, sizeof(*k));

	assert_non_null(k);
	k->fd = fd;
	return k;
}

static struct conn *dial_unix(struct fx *f)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return dial_fd(fd);
}

static struct conn *dial_tcp(struct fx *f)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)f->port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return dial_fd(fd);
}

static void hang_up(struct conn *k)
{
	close(k->fd);
	free(k);
}

static void send_all(struct conn *k, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = send(k->fd, c, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		assert_true(w > 0);
		c += w;
		n -= (size_t)w;
	}
}

static void send_str(struct conn *k, const char *s)
{
	send_all(k, s, strlen(s));
}

/* One reply line within timeout_ms, parsed; NULL on EOF or timeout. */
static json_t *recv_reply(struct conn *k, int timeout_ms)
{
	for (;;) {
		char *nl = memchr(k->buf, '\n', k->len);
		struct pollfd p = { .fd = k->fd, .events = POLLIN };
		ssize_t r;

		if (nl) {
			json_t *j = json_loadb(k->buf, (size_t)(nl - k->buf), 0, NULL);
			size_t used = (size_t)(nl - k->buf) + 1;

			memmove(k->buf, k->buf + used, k->len - used);
			k->len -= used;
			assert_non_null(j);
			return j;
		}
		if (poll(&p, 1, timeout_ms) <= 0)
			return NULL;
		r = recv(k->fd, k->buf + k->len, sizeof(k->buf) - k->len, 0);
		if (r <= 0)
			return NULL;
		k->len += (size_t)r;
	}
}

static bool at_eof(struct conn *k, int timeout_ms)
{
	struct pollfd p = { .fd = k->fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, timeout_ms) <= 0)
		return false;
	return recv(k->fd, &c, 1, 0) == 0;
}

static void expect_error(struct conn *k, const char *want)
{
	json_t *r = recv_reply(k, 5000);
	const char *e = json_string_value(json_object_get(r, "error"));

	assert_non_null(r);
	assert_true(json_is_false(json_object_get(r, "ok")));
	if (!e || !strstr(e, want)) {
		print_error("error \"%s\" lacks \"%s\"\n", e ? e : "(none)", want);
		fail();
	}
	json_decref(r);
}

static void expect_ok(struct conn *k)
{
	json_t *r = recv_reply(k, 5000);

	assert_non_null(r);
	if (!json_is_true(json_object_get(r, "ok"))) {
		char *s = json_dumps(r, 0);

		print_error("not ok: %s\n", s);
		free(s);
		fail();
	}
	json_decref(r);
}

/* A good request on a fresh connection gets a good answer. */
static void still_serving(struct fx *f, bool tcp)
{
	struct conn *k = tcp ? dial_tcp(f) : dial_unix(f);

	send_str(k, tcp ? "{\"op\":\"backend_info\",\"token\":\"" TOKEN "\"}\n"
			: "{\"op\":\"backend_info\"}\n");
	expect_ok(k);
	hang_up(k);
}

static json_int_t ctl_counter(struct fx *f, const char *name)
{
	json_t *r = tb_call_text(f->c, "{\"op\":\"stats\"}", true);
	json_int_t v = json_integer_value(json_object_get(json_object_get(json_object_get(r, "stats"),
									   "control"), name));

	json_decref(r);
	return v;
}

/* ---- tests -------------------------------------------------------------- */

static void test_unix_socket_0600(void **state)
{
	struct fx *f = *state;
	struct conn *k;
	struct stat st;

	start(f, (struct nr_ctl_server_cfg){ 0 });
	assert_int_equal(stat(f->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	k = dial_unix(f);
	send_str(k, "{\"op\":\"job_create\",\"spec\":");
	{
		json_t *spec = tb_spec(3, 1, 0x100);
		char *s = json_dumps(spec, JSON_COMPACT);

		send_str(k, s);
		free(s);
		json_decref(spec);
	}
	send_str(k, "}\n{\"op\":\"job_list\"}\n");
	expect_ok(k);
	expect_ok(k);
	hang_up(k);
	nr_ctl_server_stop(f->s);
	f->s = NULL;
	assert_int_equal(access(f->path, F_OK), -1);     /* unlinked at stop */
}

static void test_token(void **state)
{
	struct fx *f = *state;
	struct conn *k;

	static const char *const bad[] = {
		"{\"op\":\"stats\"}\n",
		"{\"op\":\"stats\",\"token\":\"wrong\"}\n",
		"{\"op\":\"stats\",\"token\":\"s3cret-token-for-tesTS\"}\n",    /* same length */
		"{\"op\":\"stats\",\"token\":\"" TOKEN "x\"}\n",
		"{\"op\":\"stats\",\"token\":7}\n",
		"{\"op\":\"stats\",\"token\":\"\"}\n",
	};

	start(f, (struct nr_ctl_server_cfg){ 0 });
	/* each wrong one is answered and its connection closed */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		k = dial_tcp(f);
		send_str(k, bad[i]);
		expect_error(k, "bad or missing token");
		assert_true(at_eof(k, 3000));
		hang_up(k);
	}
	/* The right token keeps a connection. */
	k = dial_tcp(f);
	send_str(k, "{\"op\":\"stats\",\"token\":\"" TOKEN "\"}\n");
	expect_ok(k);
	/* job_list is admin-only even with the token. */
	send_str(k, "{\"op\":\"job_list\",\"token\":\"" TOKEN "\"}\n");
	expect_error(k, "admin only");
	hang_up(k);
	assert_int_equal(ctl_counter(f, "bad_token"), 6);
	/* UNIX needs no token. */
	still_serving(f, false);
}

/*
 * A job of reduce max: the box (sw) runs it; the FPGA's register map and so
 * the RTL have sum only, and refuse it at job_create with the reason.
 */
static void test_reduce_max(void **state)
{
	struct fx *f = *state;
	json_t *spec = tb_spec(2, 1, 0x100), *req;
	struct conn *k;
	char *line;

	json_object_set_new(spec, "reduce", json_string("max"));
	req = json_pack("{s:s,s:o}", "op", "job_create", "spec", spec);
	line = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	start(f, (struct nr_ctl_server_cfg){ 0 });
	k = dial_unix(f);
	send_str(k, line);
	send_str(k, "\n");
	if (!strcmp(kind, "sw"))
		expect_ok(k);
	else
		expect_error(k, "reduce max: the aggregator's register map has sum only");
	hang_up(k);
	free(line);
	still_serving(f, false);
}

static void test_oversize_line(void **state)
{
	struct fx *f = *state;
	size_t n = 70000;
	char *big = malloc(n + 2);
	struct conn *k;

	assert_non_null(big);
	start(f, (struct nr_ctl_server_cfg){ 0 });
	/* Without a newline. */
	memset(big, 'x', n);
	k = dial_tcp(f);
	send_all(k, big, n);
	expect_error(k, "request longer than 65536 bytes");
	assert_true(at_eof(k, 5000));
	hang_up(k);
	still_serving(f, true);
	/* With one, over UNIX. */
	big[n] = '\n';
	k = dial_unix(f);
	send_all(k, big, n + 1);
	expect_error(k, "request longer than 65536 bytes");
	assert_true(at_eof(k, 5000));
	hang_up(k);
	/* Exactly 65536 bytes is fine. */
	memset(big, ' ', 65536);
	memcpy(big, "{\"op\":\"stats\"}", 14);
	big[65536] = '\n';
	k = dial_unix(f);
	send_all(k, big, 65537);
	expect_ok(k);
	hang_up(k);
	free(big);
	assert_int_equal(ctl_counter(f, "oversize"), 2);
	still_serving(f, false);
}

static void test_malformed_json(void **state)
{
	static const char *const bad[] = { "{{{\n", "not json at all\n", "[1,2,3]\n",
					   "{\"op\":\"stats\"\n", "\xff\xfe\x00\x01\n",
					   "{\"op\":\"stats\",\"op\":\"stats\"}\n" };
	struct fx *f = *state;
	struct conn *k;

	start(f, (struct nr_ctl_server_cfg){ 0 });
	k = dial_unix(f);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		send_all(k, bad[i], i == 4 ? 5 : strlen(bad[i]));
		expect_error(k, i == 2 ? "expected a JSON object" : "malformed JSON");
	}
	send_str(k, "{\"op\":\"stats\"}\r\n");          /* CRLF is fine too */
	expect_ok(k);
	hang_up(k);
	still_serving(f, true);
}

static void test_slow_client_idle(void **state)
{
	struct fx *f = *state;
	struct conn *slow, *fast;
	struct timespec t0, t1;
	double ms;

	start(f, (struct nr_ctl_server_cfg){ .idle_timeout_ms = 300 });
	slow = dial_tcp(f);
	fast = dial_tcp(f);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	send_str(slow, "{\"op\":\"st");       /* and nothing more */
	/* Others are served meanwhile. */
	send_str(fast, "{\"op\":\"stats\",\"token\":\"" TOKEN "\"}\n");
	expect_ok(fast);
	/* A trickle does not keep it alive.  Sent only while the connection is
	 * surely still open: on a loaded machine serving 'fast' can take longer
	 * than the idle timeout, and bytes sent to a closed socket are answered
	 * with a reset that discards the error line unread. */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 150)
		send_str(slow, "a");
	expect_error(slow, "idle timeout");
	assert_true(at_eof(slow, 3000));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	print_message("  idle client closed after %.0f ms\n", ms);
	assert_true(ms >= 250 && ms < 3000);
	hang_up(slow);
	hang_up(fast);
	assert_true(ctl_counter(f, "idle_closed") >= 1);
	still_serving(f, true);
}

static void test_too_many_conns(void **state)
{
	struct fx *f = *state;
	struct conn *a, *b, *c, *adm;
	json_t *r = NULL;

	start(f, (struct nr_ctl_server_cfg){ .max_conns = 2 });
	a = dial_tcp(f);
	b = dial_tcp(f);
	send_str(a, "{\"op\":\"stats\",\"token\":\"" TOKEN "\"}\n");
	expect_ok(a);
	send_str(b, "{\"op\":\"stats\",\"token\":\"" TOKEN "\"}\n");
	expect_ok(b);
	c = dial_tcp(f);
	expect_error(c, "too many connections");
	assert_true(at_eof(c, 3000));
	hang_up(c);
	assert_int_equal(ctl_counter(f, "conns_refused"), 1);
	/* The network used up its connections; the admin socket still gets in. */
	adm = dial_unix(f);
	send_str(adm, "{\"op\":\"stats\"}\n");
	expect_ok(adm);
	hang_up(adm);
	hang_up(a);
	/* Room again once the server has seen a go. */
	for (int i = 0; i < 50; i++) {
		c = dial_tcp(f);
		send_str(c, "{\"op\":\"stats\",\"token\":\"" TOKEN "\"}\n");
		r = recv_reply(c, 2000);
		hang_up(c);
		if (json_is_true(json_object_get(r, "ok")))
			break;
		json_decref(r);
		r = NULL;
		usleep(20000);
	}
	assert_non_null(r);
	json_decref(r);
	hang_up(b);
}

static void test_rate_limit(void **state)
{
	struct fx *f = *state;
	unsigned ok = 0, limited = 0;
	char req[4096] = "";
	struct conn *k;

	start(f, (struct nr_ctl_server_cfg){ .rate_per_sec = 10, .rate_burst = 5 });
	for (int i = 0; i < 40; i++)
		strcat(req, "{\"op\":\"stats\"}\n");
	k = dial_unix(f);
	send_str(k, req);
	for (int i = 0; i < 40; i++) {
		json_t *r = recv_reply(k, 5000);

		assert_non_null(r);
		if (json_is_true(json_object_get(r, "ok")))
			ok++;
		else if (strstr(json_string_value(json_object_get(r, "error")) ?: "", "rate limit"))
			limited++;
		json_decref(r);
	}
	print_message("  40 requests at once: %u answered, %u rate-limited\n", ok, limited);
	assert_int_equal(ok + limited, 40);
	assert_true(ok >= 5 && ok <= 15);   /* burst 5, plus what refills while they arrive */
	/* The bucket refills. */
	usleep(300000);
	send_str(k, "{\"op\":\"stats\"}\n");
	expect_ok(k);
	hang_up(k);
}

static void test_pipelined_and_split(void **state)
{
	struct fx *f = *state;
	struct conn *k;
	json_t *r;

	start(f, (struct nr_ctl_server_cfg){ 0 });
	k = dial_tcp(f);
	send_str(k, "{\"op\":\"backend_info\",\"token\":\"" TOKEN "\"}\n{\"op\":\"nope\",\"token\":\""
		 TOKEN "\"}\n");
	r = recv_reply(k, 5000);
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "backend"), "name")), kind);
	json_decref(r);
	expect_error(k, "op: \"nope\" is not an operation");
	send_str(k, "{\"op\":");
	usleep(50000);
	send_str(k, "\"stats\",\"tok");
	usleep(50000);
	send_str(k, "en\":\"" TOKEN "\"}");
	usleep(50000);
	send_str(k, "\n");
	expect_ok(k);
	hang_up(k);
}

/* A backend that runs nothing (a control API that never gets a job). */
static const struct nr_backend_ops no_ops = { .name = "none" };

static void test_socket_path_checks(void **state)
{
	struct fx *f = *state;
	struct nr_ctl_server_cfg cfg = { .unix_path = f->path };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct nr_ctl_server *s2;
	struct nr_ctl *bare;
	char err[256] = "";
	FILE *fp;
	int fd;

	/* A regular file in the way: refused, left alone. */
	fp = fopen(f->path, "w");
	assert_non_null(fp);
	fclose(fp);
	assert_null(nr_ctl_server_start(f->c, &cfg, err, sizeof(err)));
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "exists and is not a socket"));
	assert_int_equal(access(f->path, F_OK), 0);
	unlink(f->path);
	/* A stale socket of a dead server: replaced. */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	start(f, (struct nr_ctl_server_cfg){ 0 });
	still_serving(f, false);
	/* A live server on the path: refused. */
	s2 = nr_ctl_server_start(f->c, &cfg, err, sizeof(err));
	assert_null(s2);
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "another server is listening"));
	still_serving(f, false);
	/* Configuration errors.  TCP without a token: on a control API with no
	 * tenant (f->c holds "default" since the first start). */
	cfg = (struct nr_ctl_server_cfg){ .tcp_addr = "127.0.0.1:0" };
	bare = nr_ctl_create(nr_backend_new(&no_ops, NULL));
	assert_non_null(bare);
	assert_null(nr_ctl_server_start(bare, &cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "needs a token"));
	nr_ctl_destroy(bare);
	s2 = nr_ctl_server_start(f->c, &cfg, err, sizeof(err));   /* the tenant suffices */
	assert_non_null(s2);
	nr_ctl_server_stop(s2);
	cfg = (struct nr_ctl_server_cfg){ .tcp_addr = "localhost", .token = "t" };
	assert_null(nr_ctl_server_start(f->c, &cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "expected IP:PORT"));
	cfg = (struct nr_ctl_server_cfg){ 0 };
	assert_null(nr_ctl_server_start(f->c, &cfg, err, sizeof(err)));
}

static void test_random_junk(void **state)
{
	struct fx *f = *state;
	unsigned seed = (unsigned)time(NULL);
	char buf[512];
	struct conn *k;

	print_message("  seed %u\n", seed);
	srand(seed);
	start(f, (struct nr_ctl_server_cfg){ .rate_per_sec = 100000, .rate_burst = 100000 });
	for (int round = 0; round < 2; round++) {
		k = round ? NULL : dial_unix(f);
		for (int i = 0; i < 200; i++) {
			/* TCP: junk closes a connection that has not authenticated */
			if (round)
				k = dial_tcp(f);
			size_t n = (size_t)(rand() % (int)(sizeof(buf) - 2)) + 2;

			for (size_t j = 0; j < n; j++) {
				buf[j] = (char)(rand() & 0xff);
				if (buf[j] == '\n')
					buf[j] = '{';
			}
			if (rand() % 4 == 0)
				memcpy(buf, "{\"op\":\"job_create\",\"spec\":{\"conns\":[{", n < 37 ? n : 37);
			if (buf[0] == '\r')
				buf[0] = 'x';
			buf[n - 1] = '\n';
			send_all(k, buf, n);
			json_t *r = recv_reply(k, 5000);

			/* Every (non-blank) line gets an answer, an error here. */
			assert_non_null(r);
			assert_true(json_is_false(json_object_get(r, "ok")));
			json_decref(r);
			if (round) {
				assert_true(at_eof(k, 3000));
				hang_up(k);
			}
		}
		if (!round)
			hang_up(k);
	}
	still_serving(f, true);
	still_serving(f, false);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unix_socket_0600, setup, teardown),
		cmocka_unit_test_setup_teardown(test_token, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversize_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slow_client_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_many_conns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rate_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pipelined_and_split, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket_path_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_junk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reduce_max, setup, teardown),
	};

	char name[32];

	if (argc > 1)
		kind = argv[1];
	if (strcmp(kind, "sw") && strcmp(kind, "fpga") && strcmp(kind, "rtl")) {
		fprintf(stderr, "usage: %s sw|fpga|rtl\n", argv[0]);
		return 2;
	}
	snprintf(name, sizeof(name), "ctl_server_%s", kind);
	return cmocka_run_group_tests_name(name, tests, NULL, NULL);
}
