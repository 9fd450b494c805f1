/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit suite: the operators' side of the control library, without a box.
 *   nr_log:   "<N>" first exactly when stderr is the stream JOURNAL_STREAM
 *             names; one line a call; NR_LOG_RL's burst, then the count of
 *             lines it left out.
 *   metrics:  label values escaped; the control API's families over the sw
 *             test backend: a tenant's named job by id, name and tenant, the
 *             tenant's quota refusals, no token or key anywhere; without
 *             status no per-job counters.
 *   nr_http:  GET, HEAD, other methods refused, bad and oversize heads, a
 *             silent client that does not hold up the next one.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "control/http/ctl_http.h"
#include "control/api/ctl_log.h"
#include "control/api/ctl_metrics.h"
#include "tests/control/ctl_testlib.h"

#define TOKEN "speech-token-0123456789abcdef"

static void expect_in(const char *hay, const char *needle)
{
	if (!strstr(hay, needle)) {
		print_error("\"%s\" not found in:\n%.4000s\n", needle, hay);
		fail();
	}
}

/* ---- nr_log ---------------------------------------------------------------- */

/* Run fn with stderr on a temp file; that file's text (malloc'd). */
static char *with_stderr(void (*fn)(const char *js), bool journal, bool wrong_ino)
{
	char path[] = "/tmp/nr-log-XXXXXX", js[64], *text = calloc(1, 1 << 16);
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	struct stat st;
	FILE *f;

	assert_true(fd >= 0 && saved >= 0 && text);
	assert_int_equal(fstat(fd, &st), 0);
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + (wrong_ino ? 1 : 0));
	if (journal)
		setenv("JOURNAL_STREAM", js, 1);
	else
		unsetenv("JOURNAL_STREAM");
	dup2(fd, STDERR_FILENO);
	fn(js);
	dup2(saved, STDERR_FILENO);
	close(saved);
	unsetenv("JOURNAL_STREAM");
	f = fopen(path, "r");
	assert_non_null(f);
	assert_true(fread(text, 1, (1 << 16) - 1, f) < (1 << 16));
	fclose(f);
	close(fd);
	unlink(path);
	return text;
}

static void log_some(const char *js)
{
	nr_log(LOG_WARNING, "netreduce control: %s: lease lapsed", "job=7 name=a tenant=b");
	nr_log(LOG_ERR, "two\nlines");
}

static void test_log_priorities(void **state)
{
	char *t = with_stderr(log_some, true, false);

	assert_string_equal(t, "<4>netreduce control: job=7 name=a tenant=b: lease lapsed\n<3>two lines\n");
	free(t);
	/* not the journal: no prefix, whatever the environment says */
	t = with_stderr(log_some, false, false);
	assert_string_equal(t, "netreduce control: job=7 name=a tenant=b: lease lapsed\ntwo lines\n");
	free(t);
	t = with_stderr(log_some, true, true);
	assert_string_equal(t, "netreduce control: job=7 name=a tenant=b: lease lapsed\ntwo lines\n");
	free(t);
}

/* One call site: a burst passes, 5 more are left out, a second later one passes. */
static void log_flood(const char *js)
{
	for (int i = 0; i < NR_LOG_RL_BURST + 6; i++) {
		if (i == NR_LOG_RL_BURST + 5)
			usleep(1100000);
		NR_LOG_RL(LOG_NOTICE, "event %d", i);
	}
}

static void test_log_rate_limit(void **state)
{
	char *t = with_stderr(log_flood, false, false), *p;
	unsigned lines = 0;

	for (p = t; (p = strchr(p, '\n')); p++)
		lines++;
	assert_int_equal(lines, NR_LOG_RL_BURST + 1);
	expect_in(t, "event 19\n");
	assert_null(strstr(t, "event 20\n"));
	expect_in(t, "event 25 (5 similar lines left out)\n");
	free(t);
}

/* ---- metrics --------------------------------------------------------------- */

static void test_labels_escaped(void **state)
{
	char b[128];

	nr_mx_labels(b, sizeof(b), "job", "7", "name", "a\"b\\c\nd", NULL);
	assert_string_equal(b, "job=\"7\",name=\"a\\\"b\\\\c\\nd\"");
	nr_mx_labels(b, 12, "job", "1234567890", NULL);     /* does not fit: nothing, not half */
	assert_string_equal(b, "");
}

static void test_ctl_families(void **state)
{
	struct tb tb;
	struct nr_ctl *c = nr_ctl_create(tb_backend(&tb, "sw"));
	struct nr_ctl_tenant_cfg tc = { .name = "speech", .token = TOKEN, .max_jobs = 1 };
	struct nr_mtext t = { 0 };
	char err[256], key[40];
	json_t *req, *r;
	int who;

	assert_non_null(c);
	who = nr_ctl_tenant_add(c, &tc, err, sizeof(err));
	assert_true(who >= 0);
	req = json_pack("{s:s,s:o,s:s}", "op", "job_create", "spec", tb_spec(3, 1, 0x100), "name",
			"asr:bf16");
	r = nr_ctl_handle_json(c, req, who);
	json_decref(req);
	assert_true(json_is_true(json_object_get(r, "ok")));
	snprintf(key, sizeof(key), "%s", json_string_value(json_object_get(r, "key")));
	json_decref(r);
	req = json_pack("{s:s,s:o}", "op", "job_create", "spec", tb_spec(2, 2, 0x200));
	r = nr_ctl_handle_json(c, req, who);      /* over max_jobs */
	json_decref(req);
	assert_true(json_is_false(json_object_get(r, "ok")));
	json_decref(r);
	req = json_pack("{s:s,s:o,s:s}", "op", "job_create", "spec", tb_spec(2, 2, 0x200), "name",
			"bad name");
	r = nr_ctl_handle_json(c, req, NR_CTL_ADMIN);
	json_decref(req);
	expect_in(json_string_value(json_object_get(r, "error")), "name: \"bad name\" is not a job name");
	json_decref(r);

	assert_int_equal(nr_ctl_metrics(c, &t, NR_MX_ADMIN | NR_MX_STATUS), 0);
	expect_in(t.buf, "# TYPE netreduce_job_ranks gauge\n"
		  "netreduce_job_ranks{job=\"1\",name=\"asr:bf16\",tenant=\"speech\"} 3\n");
	expect_in(t.buf, "# TYPE netreduce_job_aggregated_total counter\n"
		  "netreduce_job_aggregated_total{job=\"1\",name=\"asr:bf16\",tenant=\"speech\"} 0\n");
	expect_in(t.buf, "\nnetreduce_job_failed{job=\"1\",name=\"asr:bf16\",tenant=\"speech\"} 0\n");
	expect_in(t.buf, "\nnetreduce_tenant_jobs{tenant=\"speech\"} 1\n");
	expect_in(t.buf, "\nnetreduce_tenant_quota_refused_total{tenant=\"speech\"} 1\n");
	expect_in(t.buf, "\nnetreduce_control_quota_refused_total 1\n");
	expect_in(t.buf, "\nnetreduce_control_jobs 1\n");
	assert_null(strstr(t.buf, TOKEN));
	assert_null(strstr(t.buf, key));
	nr_mtext_free(&t);
	/* without the backend's status: who, not what */
	assert_int_equal(nr_ctl_metrics(c, &t, NR_MX_ADMIN), 0);
	expect_in(t.buf, "netreduce_job_ranks{job=\"1\",name=\"asr:bf16\",tenant=\"speech\"} 3\n");
	assert_null(strstr(t.buf, "netreduce_job_aggregated_total"));
	nr_mtext_free(&t);
	nr_ctl_destroy(c);
	tb_cleanup(&tb);
}

/* ---- nr_http --------------------------------------------------------------- */

static void handler(void *ctx, const char *path, const char *query, bool admin,
		    struct nr_http_reply *r)
{
	if (strcmp(path, "/metrics") == 0)
		nr_mtext_printf(&r->body, "x 1\nquery %s\nscope %s\n", query,
				admin ? "admin" : "box");
	else {
		r->status = 404;
		nr_mtext_printf(&r->body, "no\n");
	}
}

static int dial(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* Send raw bytes, read the answer to the end (malloc'd). */
static char *ask(int port, const char *raw, size_t len)
{
	char *buf = calloc(1, 1 << 16);
	size_t n = 0;
	ssize_t r;
	int fd = dial(port);

	for (size_t off = 0; off < len;) {
		r = send(fd, raw + off, len - off, MSG_NOSIGNAL);
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	while ((r = recv(fd, buf + n, (1 << 16) - 1 - n, 0)) > 0)
		n += (size_t)r;
	close(fd);
	return buf;
}

static char *ask_s(int port, const char *raw)
{
	return ask(port, raw, strlen(raw));
}

static void test_http(void **state)
{
	struct nr_http_cfg cfg = { .addr = "127.0.0.1:0", .handler = handler };
	struct nr_http *h;
	char err[256], *a, *big;
	int port, idle;
	struct timespec t0, t1;

	h = nr_http_start(&cfg, err, sizeof(err));
	assert_non_null(h);
	port = nr_http_port(h);
	a = ask_s(port, "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n");
	expect_in(a, "HTTP/1.1 200 OK\r\n");
	expect_in(a, "Content-Length: 26\r\n");
	expect_in(a, "Connection: close\r\n");
	expect_in(a, "\r\n\r\nx 1\nquery x=1\nscope admin\n"); /* no token: the admin's */
	free(a);
	a = ask_s(port, "HEAD /metrics HTTP/1.0\n\n");
	expect_in(a, "HTTP/1.1 200 OK\r\n");
	assert_null(strstr(a, "x 1"));
	free(a);
	a = ask_s(port, "GET /nope HTTP/1.1\r\n\r\n");
	expect_in(a, "HTTP/1.1 404 Not Found\r\n");
	free(a);
	a = ask_s(port, "DELETE /metrics HTTP/1.1\r\n\r\n");
	expect_in(a, "HTTP/1.1 405 Method Not Allowed\r\n");
	expect_in(a, "Allow: GET, HEAD\r\n");
	free(a);
	a = ask_s(port, "GET metrics\r\n\r\n");
	expect_in(a, "HTTP/1.1 400 Bad Request\r\n");
	free(a);
	a = ask_s(port, "GET /metrics HTTP/2.0\r\n\r\n");
	expect_in(a, "HTTP/1.1 505 ");
	free(a);
	big = malloc(10000);
	memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
	memset(big + 26, 'a', 10000 - 26);
	a = ask(port, big, 10000);
	expect_in(a, "HTTP/1.1 431 ");
	free(a);
	free(big);
	/* a client that connects and says nothing does not hold up the next one */
	idle = dial(port);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	a = ask_s(port, "GET /metrics HTTP/1.1\r\n\r\n");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	expect_in(a, "HTTP/1.1 200 OK\r\n");
	assert_true((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 1000);
	free(a);
	close(idle);
	nr_http_stop(h);
	/* a busy or foreign address: the error names it */
	cfg.addr = "192.0.2.77:1";
	assert_null(nr_http_start(&cfg, err, sizeof(err)));
	expect_in(err, "metrics listener 192.0.2.77:1: ");
	cfg.addr = "nonsense";
	assert_null(nr_http_start(&cfg, err, sizeof(err)));
	expect_in(err, "expected IP:PORT");
}

/*
 * Bound beyond loopback the listener needs a bearer token, and then every
 * request must carry it: none, another scheme, a wrong or a longer token get
 * 401 with a challenge and never reach the handler; the right one is served.
 */
static void test_http_bearer(void **state)
{
	static const char tok[] = "0123456789abcdef0123";
	struct nr_http_cfg cfg = { .addr = "0.0.0.0:0", .handler = handler };
	struct nr_http *h;
	char err[512], *a;
	int port;

	(void)state;
	/* every address of the machine, no token: refused, saying what to do */
	assert_null(nr_http_start(&cfg, err, sizeof(err)));
	expect_in(err, "answers beyond loopback");
	expect_in(err, "--metrics-token-file");
	cfg.bearer = "short";
	assert_null(nr_http_start(&cfg, err, sizeof(err)));
	expect_in(err, "at least 16 are needed");
	/* with a token (asked here over loopback) */
	cfg.addr = "127.0.0.1:0";
	cfg.bearer = tok;
	h = nr_http_start(&cfg, err, sizeof(err));
	assert_non_null(h);
	port = nr_http_port(h);
	a = ask_s(port, "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n");
	expect_in(a, "HTTP/1.1 401 Unauthorized\r\n");
	expect_in(a, "WWW-Authenticate: Bearer realm=\"netreduce\"\r\n");
	assert_null(strstr(a, "x 1"));
	free(a);
	a = ask_s(port,
		  "GET /metrics HTTP/1.1\r\nAuthorization: Basic MDEyMzQ1Njc4OWFiY2RlZjAxMjM=\r\n\r\n");
	expect_in(a, "HTTP/1.1 401 ");
	free(a);
	a = ask_s(port,
		  "GET /metrics HTTP/1.1\r\nAuthorization: Bearer 0123456789abcdef0124\r\n\r\n");
	expect_in(a, "HTTP/1.1 401 ");
	free(a);
	a = ask_s(port,
		  "GET /healthz HTTP/1.1\r\nAuthorization: Bearer 0123456789abcdef01234\r\n\r\n");
	expect_in(a, "HTTP/1.1 401 ");
	free(a);
	assert_int_equal(nr_http_unauthorized(h), 4);
	a = ask_s(port,
		  "GET /metrics HTTP/1.1\r\nhost: a\r\nauthorization: Bearer 0123456789abcdef0123\r\n\r\n");
	expect_in(a, "HTTP/1.1 200 OK\r\n");
	expect_in(a, "x 1\n");
	free(a);
	assert_int_equal(nr_http_unauthorized(h), 4);
	nr_http_stop(h);
	/* every address with a token: starts */
	cfg.addr = "0.0.0.0:0";
	h = nr_http_start(&cfg, err, sizeof(err));
	assert_non_null(h);
	nr_http_stop(h);
	/* two scopes: the admin's token, the box scope's; each its own */
	cfg.bearer_box = tok;
	assert_null(nr_http_start(&cfg, err, sizeof(err)));
	expect_in(err, "the admin's token and the box scope's are the same");
	cfg.bearer_box = "box-scope-token-0123";
	cfg.addr = "127.0.0.1:0";
	h = nr_http_start(&cfg, err, sizeof(err));
	assert_non_null(h);
	port = nr_http_port(h);
	a = ask_s(port,
		  "GET /metrics HTTP/1.1\r\nAuthorization: Bearer box-scope-token-0123\r\n\r\n");
	expect_in(a, "HTTP/1.1 200 OK\r\n");
	expect_in(a, "scope box\n");
	free(a);
	a = ask_s(port,
		  "GET /metrics HTTP/1.1\r\nAuthorization: Bearer 0123456789abcdef0123\r\n\r\n");
	expect_in(a, "scope admin\n");
	free(a);
	a = ask_s(port, "GET /metrics HTTP/1.1\r\n\r\n");
	expect_in(a, "HTTP/1.1 401 ");
	free(a);
	nr_http_stop(h);
	/* the box scope's token alone beyond loopback: starts (no admin scope there) */
	cfg.bearer = NULL;
	cfg.addr = "0.0.0.0:0";
	h = nr_http_start(&cfg, err, sizeof(err));
	assert_non_null(h);
	nr_http_stop(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log_priorities), cmocka_unit_test(test_log_rate_limit),
		cmocka_unit_test(test_labels_escaped), cmocka_unit_test(test_ctl_families),
		cmocka_unit_test(test_http),           cmocka_unit_test(test_http_bearer),
	};

	return cmocka_run_group_tests_name("ctl_ops", tests, NULL, NULL);
}
