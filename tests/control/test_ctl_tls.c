/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TLS on the control server's TCP listener and what guards the tokens
 * (docs/trust.md): certificates made by the openssl CLI at test time
 * (tb_tls_make), the client of control/tls/nr_tls.h as the host library and
 * netreducectl use it.  A good client is served; a wrong CA, an expired
 * certificate, a wrong IP and a plain-text client are each refused with
 * a message that says so, on both sides (the server's counters); a stalled
 * handshake does not hold the loop; a short token is refused at start;
 * failed authentication is throttled per source.  Also prints what TLS adds
 * to a job_create + job_destroy (median of 200, each on fresh connections
 * as the library makes them); never fails on speed.
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "control/tls/nr_tls.h"
#include "tests/control/ctl_testlib.h"

#define TOKEN "tls-test-token-0123456789"

struct fx {
	struct tb tb;
	struct tb_tls tls;
	struct nr_ctl *c;
	struct nr_ctl_server *s;
	int port;
};

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void start(struct fx *f, struct nr_ctl_server_cfg cfg)
{
	char err[256] = "";

	cfg.tcp_addr = "127.0.0.1:0";
	cfg.token = TOKEN;
	f->s = nr_ctl_server_start(f->c, &cfg, err, sizeof(err));
	if (!f->s)
		print_error("server: %s\n", err);
	assert_non_null(f->s);
	f->port = nr_ctl_server_tcp_port(f->s);
}

static void start_tls(struct fx *f, const char *cert)
{
	start(f, (struct nr_ctl_server_cfg){ .tls_cert = cert, .tls_key = f->tls.key });
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct nr_backend *b;

	if (!f || tb_tls_make(&f->tls))
		return -1;
	b = tb_backend(&f->tb, "sw");
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
	tb_tls_remove(&f->tls);
	free(f);
	return 0;
}

static json_int_t ctl_counter(struct fx *f, const char *name)
{
	json_t *r = tb_call_text(f->c, "{\"op\":\"stats\"}", true);
	json_int_t v = json_integer_value(json_object_get(json_object_get(json_object_get(r, "stats"),
									   "control"), name));

	json_decref(r);
	return v;
}

/* The counter reaches want within 2 s (the server counts on its own thread). */
static void await_counter(struct fx *f, const char *name, json_int_t want)
{
	for (int i = 0; i < 200 && ctl_counter(f, name) < want; i++)
		usleep(10000);
	assert_int_equal(ctl_counter(f, name), want);
}

/* A TCP connection to the server from src (0: the route's). */
static int dial_from(struct fx *f, uint32_t src)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)f->port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in me = { .sin_family = AF_INET, .sin_addr.s_addr = src };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	if (src)
		assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* One request line over a connection (TLS when t), its reply; NULL when the
 * connection ended first. */
static json_t *call(int fd, struct nr_tls_conn *t, const char *line)
{
	char buf[1 << 16], err[256];
	size_t len = 0;

	if (t)
		assert_int_equal(nr_tls_send(t, line, strlen(line), 5000, err, sizeof(err)), 0);
	else
		assert_int_equal(send(fd, line, strlen(line), MSG_NOSIGNAL), (ssize_t)strlen(line));
	for (;;) {
		char *nl = memchr(buf, '\n', len);
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (nl)
			return json_loadb(buf, (size_t)(nl - buf), 0, NULL);
		if (t) {
			r = nr_tls_recv(t, buf + len, sizeof(buf) - len, 5000, err, sizeof(err));
		} else {
			if (poll(&p, 1, 5000) <= 0)
				return NULL;
			r = recv(fd, buf + len, sizeof(buf) - len, 0);
		}
		if (r <= 0)
			return NULL;
		len += (size_t)r;
	}
}

/* The reply's error contains want. */
static void expect_error(json_t *r, const char *want)
{
	const char *e = json_string_value(json_object_get(r, "error"));

	assert_non_null(r);
	assert_true(json_is_false(json_object_get(r, "ok")));
	if (!e || !strstr(e, want)) {
		print_error("error \"%s\" lacks \"%s\"\n", e ? e : "(none)", want);
		fail();
	}
	json_decref(r);
}

static void expect_ok(json_t *r)
{
	assert_non_null(r);
	if (!json_is_true(json_object_get(r, "ok"))) {
		char *s = json_dumps(r, 0);

		print_error("not ok: %s\n", s);
		free(s);
		fail();
	}
}

/* A TLS connection with CA ca checking host; NULL with err. */
static struct nr_tls_conn *tls_dial(struct fx *f, const char *ca, const char *host, int *fd,
				    char *err, size_t errlen)
{
	struct nr_tls_client *t = nr_tls_client_new(ca, err, errlen);
	struct nr_tls_conn *k;

	assert_non_null(t);
	*fd = dial_from(f, 0);
	k = nr_tls_connect(t, *fd, host, 5000, err, errlen);
	nr_tls_client_free(t);    /* a connection outlives its client context */
	if (!k)
		close(*fd);
	return k;
}

static void tls_hang_up(struct nr_tls_conn *k, int fd)
{
	nr_tls_close(k);
	close(fd);
}

/* ---- tests -------------------------------------------------------------- */

/* A client with the box's CA is served: backend_info, a job created and destroyed. */
static void test_tls_served(void **state)
{
	struct fx *f = *state;
	struct nr_tls_conn *k;
	char err[512], line[4096], *spec;
	json_t *r, *s = tb_spec(3, 1, 0x100);
	int fd;

	start_tls(f, f->tls.cert);
	k = tls_dial(f, f->tls.ca, "127.0.0.1", &fd, err, sizeof(err));
	if (!k)
		print_error("%s\n", err);
	assert_non_null(k);
	r = call(fd, k, "{\"op\":\"backend_info\",\"token\":\"" TOKEN "\"}\n");
	expect_ok(r);
	json_decref(r);
	spec = json_dumps(s, JSON_COMPACT);
	snprintf(line, sizeof(line), "{\"op\":\"job_create\",\"token\":\"%s\",\"spec\":%s}\n", TOKEN,
		 spec);
	r = call(fd, k, line);
	expect_ok(r);
	snprintf(line, sizeof(line), "{\"op\":\"job_destroy\",\"token\":\"%s\",\"job\":%lld,"
		 "\"key\":\"%s\"}\n", TOKEN, (long long)json_integer_value(json_object_get(r, "job")),
		 json_string_value(json_object_get(r, "key")));
	json_decref(r);
	r = call(fd, k, line);
	expect_ok(r);
	json_decref(r);
	tls_hang_up(k, fd);
	free(spec);
	json_decref(s);
	assert_int_equal(ctl_counter(f, "jobs_created"), 1);
	assert_int_equal(ctl_counter(f, "jobs_destroyed"), 1);
	assert_int_equal(ctl_counter(f, "tls_failed"), 0);
	assert_int_equal(ctl_counter(f, "tls_plaintext"), 0);
}

/* A plain-text client of a TLS box is told the box wants TLS, counted, closed. */
static void test_plaintext_refused(void **state)
{
	struct fx *f = *state;
	int fd;

	start_tls(f, f->tls.cert);
	fd = dial_from(f, 0);
	expect_error(call(fd, NULL, "{\"op\":\"backend_info\",\"token\":\"" TOKEN "\"}\n"),
		     "this box wants TLS");
	assert_null(call(fd, NULL, "{\"op\":\"backend_info\"}\n"));   /* closed */
	close(fd);
	assert_int_equal(ctl_counter(f, "tls_plaintext"), 1);
	assert_int_equal(ctl_counter(f, "bad_token"), 0);    /* the token was never looked at */
}

/* A TLS client of a plain box: the box says so in plain text, the client
 * reports a box that does not speak TLS. */
static void test_tls_client_plain_box(void **state)
{
	struct fx *f = *state;
	char err[512];
	int fd;

	start(f, (struct nr_ctl_server_cfg){ 0 });
	assert_null(tls_dial(f, f->tls.ca, "127.0.0.1", &fd, err, sizeof(err)));
	if (!strstr(err, "does not speak TLS")) {
		print_error("%s\n", err);
		fail();
	}
}

/* The client's CA did not sign the box's certificate: refused, both sides know. */
static void test_wrong_ca(void **state)
{
	struct fx *f = *state;
	char err[512];
	int fd;

	start_tls(f, f->tls.cert);
	assert_null(tls_dial(f, f->tls.other_ca, "127.0.0.1", &fd, err, sizeof(err)));
	if (!strstr(err, "does not verify against the CA file") ||
	    !strstr(err, "unable to get local issuer certificate")) {
		print_error("%s\n", err);
		fail();
	}
	await_counter(f, "tls_failed", 1);
}

static void test_expired_cert(void **state)
{
	struct fx *f = *state;
	char err[512];
	int fd;

	start_tls(f, f->tls.expired);
	assert_null(tls_dial(f, f->tls.ca, "127.0.0.1", &fd, err, sizeof(err)));
	if (!strstr(err, "certificate has expired")) {
		print_error("%s\n", err);
		fail();
	}
	await_counter(f, "tls_failed", 1);
}

/* A certificate for 127.0.0.1 does not vouch for another address. */
static void test_wrong_ip(void **state)
{
	struct fx *f = *state;
	char err[512];
	int fd;

	start_tls(f, f->tls.cert);
	assert_null(tls_dial(f, f->tls.ca, "127.0.0.2", &fd, err, sizeof(err)));
	if (!strstr(err, "IP address mismatch")) {
		print_error("%s\n", err);
		fail();
	}
}

/* A client that starts a handshake and stalls holds nothing but its own slot. */
static void test_stalled_handshake(void **state)
{
	struct fx *f = *state;
	static const unsigned char part[] = { 0x16, 0x03, 0x01, 0x02 };
	struct nr_tls_conn *k;
	char err[512];
	int stall[4], fd;
	json_t *r;

	start_tls(f, f->tls.cert);
	for (int i = 0; i < 4; i++) {
		stall[i] = dial_from(f, 0);
		assert_int_equal(send(stall[i], part, sizeof(part), 0), (ssize_t)sizeof(part));
	}
	k = tls_dial(f, f->tls.ca, "127.0.0.1", &fd, err, sizeof(err));
	assert_non_null(k);
	r = call(fd, k, "{\"op\":\"backend_info\",\"token\":\"" TOKEN "\"}\n");
	expect_ok(r);
	json_decref(r);
	tls_hang_up(k, fd);
	for (int i = 0; i < 4; i++)
		close(stall[i]);
}

/*
 * Clients that send requests and go without reading the replies: the box's
 * first reply draws a reset, the next ones meet a closed socket.  OpenSSL
 * writes without MSG_NOSIGNAL: the server must take that as EPIPE, not die of
 * SIGPIPE (with this test process around it), and serve the next client.
 */
static void test_client_gone_no_sigpipe(void **state)
{
	struct fx *f = *state;
	const char *line = "{\"op\":\"backend_info\",\"token\":\"" TOKEN "\"}\n";
	struct nr_tls_client *t = nr_tls_client_new(f->tls.ca, NULL, 0);
	struct nr_tls_conn *k;
	char err[256];
	int fd;
	json_t *r;

	start_tls(f, f->tls.cert);
	for (int i = 0; i < 20; i++) {
		fd = dial_from(f, 0);
		k = nr_tls_connect(t, fd, "127.0.0.1", 5000, err, sizeof(err));
		assert_non_null(k);
		/* pipelined: the box writes reply after reply into the reset */
		for (int j = 0; j < 30; j++)
			assert_int_equal(nr_tls_send(k, line, strlen(line), 5000, err, sizeof(err)), 0);
		nr_tls_close(k);
		close(fd);
	}
	usleep(200000);
	fd = dial_from(f, 0);
	k = nr_tls_connect(t, fd, "127.0.0.1", 5000, err, sizeof(err));
	assert_non_null(k);
	r = call(fd, k, line);
	expect_ok(r);
	json_decref(r);
	tls_hang_up(k, fd);
	nr_tls_client_free(t);
}

/* The key must be its owner's alone; TLS needs a key, a certificate and a TCP listener. */
static void test_tls_config_checks(void **state)
{
	struct fx *f = *state;
	struct nr_ctl_server_cfg cfg = { .tcp_addr = "127.0.0.1:0", .token = TOKEN,
					 .tls_cert = f->tls.cert, .tls_key = f->tls.key };
	char err[256];

	assert_int_equal(chmod(f->tls.key, 0640), 0);
	assert_null(nr_ctl_server_start(f->c, &cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "open to others than its owner; chmod 600"));
	assert_int_equal(chmod(f->tls.key, 0600), 0);
	cfg.tls_key = NULL;
	assert_null(nr_ctl_server_start(f->c, &cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "--tls-key"));
	cfg.tls_key = f->tls.cert;   /* not the key of the certificate */
	assert_null(nr_ctl_server_start(f->c, &cfg, err, sizeof(err)));
	assert_non_null(strstr(err, f->tls.cert));
	cfg = (struct nr_ctl_server_cfg){ .unix_path = "/tmp/nr-tls-test-no.sock",
					  .tls_cert = f->tls.cert, .tls_key = f->tls.key };
	assert_null(nr_ctl_server_start(f->c, &cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "TLS is for the TCP listener"));
}

/* A token shorter than NR_CTL_TOKEN_MIN is refused at start, by name. */
static void test_short_token(void **state)
{
	struct fx *f = *state;
	struct nr_ctl_server_cfg cfg = { .tcp_addr = "127.0.0.1:0", .token = "0123456789abcde" };
	struct nr_ctl_server *s;
	char err[256];

	assert_null(nr_ctl_server_start(f->c, &cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "a token of 15 characters; tokens are 16..255"));
	cfg.token = "0123456789abcdef";
	s = nr_ctl_server_start(f->c, &cfg, err, sizeof(err));
	assert_non_null(s);
	nr_ctl_server_stop(s);
}

/*
 * auth_fail_max bad tokens from one source block it for auth_block_ms: its
 * next connection is refused even with the right token, another source is
 * not; after the block it is served again.  Over TLS the refusal comes after
 * the handshake, readable.
 */
static void throttle_case(struct fx *f, bool tls)
{
	const char *bad = "{\"op\":\"backend_info\",\"token\":\"not-the-token-0123456789\"}\n";
	const char *good = "{\"op\":\"backend_info\",\"token\":\"" TOKEN "\"}\n";
	struct nr_tls_client *t = tls ? nr_tls_client_new(f->tls.ca, NULL, 0) : NULL;
	uint32_t other = htonl(0x7f000002);   /* 127.0.0.2 */
	int fd;

	start(f, (struct nr_ctl_server_cfg){ .auth_fail_max = 3, .auth_fail_window_ms = 10000,
					     .auth_block_ms = 700,
					     .tls_cert = tls ? f->tls.cert : NULL,
					     .tls_key = tls ? f->tls.key : NULL });
#define CALL(src, line, out)                                                                 \
	do {                                                                                 \
		char _e[256];                                                                \
		struct nr_tls_conn *_k;                                                      \
		fd = dial_from(f, src);                                                      \
		_k = t ? nr_tls_connect(t, fd, "127.0.0.1", 5000, _e, sizeof(_e)) : NULL;    \
		assert_true(!t || _k);                                                       \
		out = call(fd, _k, line);                                                    \
		nr_tls_close(_k);                                                            \
		close(fd);                                                                   \
	} while (0)
	json_t *r;

	for (int i = 0; i < 3; i++) {
		CALL(0, bad, r);
		expect_error(r, "bad or missing token");
	}
	CALL(0, good, r);
	expect_error(r, "too many failed authentications from this address");
	assert_int_equal(ctl_counter(f, "auth_throttled"), 1);
	CALL(other, good, r);                /* another source is not blocked */
	expect_ok(r);
	json_decref(r);
	usleep(800000);
	CALL(0, good, r);                    /* the block is over */
	expect_ok(r);
	json_decref(r);
	assert_int_equal(ctl_counter(f, "auth_throttled"), 1);
	assert_int_equal(ctl_counter(f, "bad_token"), 3);
#undef CALL
	nr_tls_client_free(t);
}

static void test_auth_throttled(void **state)
{
	throttle_case(*state, false);
}

static void test_auth_throttled_tls(void **state)
{
	throttle_case(*state, true);
}

/*
 * TLS handshakes a second from one source, past tls_handshakes_per_sec, are
 * closed before the handshake and counted (tls_throttled); another source is
 * served meanwhile, and the same one the next second.
 */
static void test_tls_handshake_throttled(void **state)
{
	struct fx *f = *state;
	struct nr_tls_client *t;
	uint32_t other = htonl(0x7f000002); /* 127.0.0.2 */
	unsigned ok = 0, closed = 0;
	char err[256];
	int fd;

	start(f, (struct nr_ctl_server_cfg){ .tls_handshakes_per_sec = 3,
					     .tls_cert = f->tls.cert,
					     .tls_key = f->tls.key });
	t = nr_tls_client_new(f->tls.ca, err, sizeof(err));
	assert_non_null(t);
	for (int i = 0; i < 10; i++) {
		struct nr_tls_conn *k;

		fd = dial_from(f, 0);
		k = nr_tls_connect(t, fd, "127.0.0.1", 5000, err, sizeof(err));
		if (k)
			ok++;
		else
			closed++;
		nr_tls_close(k);
		close(fd);
	}
	printf("# 10 handshakes from one source at once: %u served, %u closed (3 a second)\n", ok,
	       closed);
	assert_true(closed >= 1 && ok >= 3);
	await_counter(f, "tls_throttled", closed);
	fd = dial_from(f, other); /* another source: served */
	{
		struct nr_tls_conn *k = nr_tls_connect(t, fd, "127.0.0.1", 5000, err, sizeof(err));

		assert_non_null(k);
		nr_tls_close(k);
	}
	close(fd);
	usleep(1100000); /* the next second: served again */
	fd = dial_from(f, 0);
	{
		struct nr_tls_conn *k = nr_tls_connect(t, fd, "127.0.0.1", 5000, err, sizeof(err));

		if (!k)
			fail_msg("a handshake the next second: %s", err);
		nr_tls_close(k);
	}
	close(fd);
	assert_int_equal(ctl_counter(f, "tls_failed"), 0);
	nr_tls_client_free(t);
}

/* CPU time of this process (client and server threads), us. */
static uint64_t cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One job_create and one job_destroy, each on a connection of its own as the
 * library makes them: the microseconds they took. */
static uint64_t create_destroy_us(struct fx *f, struct nr_tls_client *t, const char *spec)
{
	char line[4096], err[256];
	uint64_t t0 = now_us();
	struct nr_tls_conn *k;
	json_t *r;
	int fd;

	snprintf(line, sizeof(line), "{\"op\":\"job_create\",\"token\":\"%s\",\"spec\":%s}\n", TOKEN,
		 spec);
	fd = dial_from(f, 0);
	k = t ? nr_tls_connect(t, fd, "127.0.0.1", 5000, err, sizeof(err)) : NULL;
	assert_true(!t || k);
	r = call(fd, k, line);
	nr_tls_close(k);
	close(fd);
	expect_ok(r);
	snprintf(line, sizeof(line), "{\"op\":\"job_destroy\",\"token\":\"%s\",\"job\":%lld,"
		 "\"key\":\"%s\"}\n", TOKEN, (long long)json_integer_value(json_object_get(r, "job")),
		 json_string_value(json_object_get(r, "key")));
	json_decref(r);
	fd = dial_from(f, 0);
	k = t ? nr_tls_connect(t, fd, "127.0.0.1", 5000, err, sizeof(err)) : NULL;
	assert_true(!t || k);
	r = call(fd, k, line);
	nr_tls_close(k);
	close(fd);
	expect_ok(r);
	json_decref(r);
	return now_us() - t0;
}

/* What TLS costs a job_create + job_destroy: medians, printed, never judged. */
static void test_tls_latency(void **state)
{
	enum { N = 200 };
	struct fx *f = *state;
	static uint64_t plain[N], tls[N];
	struct nr_ctl_server *ps;
	struct nr_tls_client *t = nr_tls_client_new(f->tls.ca, NULL, 0);
	json_t *s = tb_spec(4, 1, 0x100);
	char *spec = json_dumps(s, JSON_COMPACT), err[256];
	struct nr_ctl_server_cfg cfg = { .tcp_addr = "127.0.0.1:0", .token = TOKEN,
					 .rate_per_sec = 100000, .rate_burst = 1000 };
	uint64_t cpu_plain = 0, cpu_tls = 0, c0;
	int tls_port;

	assert_non_null(t);
	/* a handshake per call, as fast as they go: past the default per-source rate */
	start(f, (struct nr_ctl_server_cfg){ .tls_cert = f->tls.cert,
					     .tls_key = f->tls.key,
					     .tls_handshakes_per_sec = 100000 });
	tls_port = f->port;
	ps = nr_ctl_server_start(f->c, &cfg, err, sizeof(err));
	assert_non_null(ps);
	for (int i = 0; i < N; i++) {     /* interleaved: both see the same machine */
		f->port = nr_ctl_server_tcp_port(ps);
		c0 = cpu_us();
		plain[i] = create_destroy_us(f, NULL, spec);
		cpu_plain += cpu_us() - c0;
		f->port = tls_port;
		c0 = cpu_us();
		tls[i] = create_destroy_us(f, t, spec);
		cpu_tls += cpu_us() - c0;
	}
	qsort(plain, N, sizeof(plain[0]), cmp_u64);
	qsort(tls, N, sizeof(tls[0]), cmp_u64);
	printf("# job_create + job_destroy, a connection each, median of %d: plain %llu us, "
	       "TLS %llu us (+%lld us); p90 plain %llu us, TLS %llu us\n", N,
	       (unsigned long long)plain[N / 2], (unsigned long long)tls[N / 2],
	       (long long)tls[N / 2] - (long long)plain[N / 2],
	       (unsigned long long)plain[N * 9 / 10], (unsigned long long)tls[N * 9 / 10]);
	printf("# CPU (client and server together) per job_create + job_destroy: plain %llu us, "
	       "TLS %llu us\n", (unsigned long long)(cpu_plain / N), (unsigned long long)(cpu_tls / N));
	assert_int_equal(ctl_counter(f, "jobs_created"), 2 * N);
	assert_int_equal(ctl_counter(f, "tls_failed"), 0);
	nr_ctl_server_stop(ps);
	nr_tls_client_free(t);
	free(spec);
	json_decref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tls_served, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plaintext_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tls_client_plain_box, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_ca, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expired_cert, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_ip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stalled_handshake, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_gone_no_sigpipe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tls_config_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_token, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_throttled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_throttled_tls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tls_handshake_throttled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tls_latency, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
