/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control-plane security (control/PROTOCOL.md, docs/bad-input.md), as an attacker on the
 * TCP listener sees it: a real server (UNIX + TCP on loopback) over an
 * in-process engine.  Each case checks the answer is a clear error and that
 * the server keeps serving everyone else afterwards.
 *
 *   tenant_isolation   a tenant with the shared token but not the job's key
 *                      cannot see or destroy another tenant's job (no key,
 *                      wrong key, near-miss keys, other job's key, id sweep)
 *   tokens             wrong, missing, truncated, extended, non-string tokens
 *   oversize_and_slow  a line over max_line, a client trickling one request a
 *                      byte at a time, a client that never sends a newline
 *   admin_lockout      (run apart, see meson.build) unauthenticated TCP
 *                      connections must not use up the admin's UNIX socket
 *   tenant_addresses   a tenant registering another's addresses (IPs, MACs) is
 *                      refused by name and counted; its own job is fine and the
 *                      victim's untouched; no error names another tenant's job
 *   tenant_conn_cap    a tenant past its max_conns is refused and counted while
 *                      another tenant still gets in; a connection serves one tenant
 *   dual_stack         (run apart, in a network namespace of its own: root) a
 *                      listener on [::]: IPv4-mapped peers counted per IPv4
 *                      source, ::1 as its own source
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cmocka.h>
#include <jansson.h>

#include "control/api/nr_control.h"
#include "dataplane/engine/agg_engine.h"

#define TOKEN "nrz-shared-token-0123456789"

struct srv {
	struct agg_engine *eng;
	struct nr_ctl *ctl;
	struct nr_ctl_server *s;
	char dir[32], path[64];
	int port;
};

/* ---- an in-process sw backend ------------------------------------------------ */

static int ch_add(struct nr_backend *b, uint32_t id, const struct nr_job_spec *spec, uint32_t *credits,
		  char *err, size_t errlen)
{
	return agg_engine_job_add(b->priv, id, spec, 1, credits, err, errlen);
}

static int ch_del(struct nr_backend *b, uint32_t id)
{
	return agg_engine_job_del(b->priv, id);
}

static int ch_stats(struct nr_backend *b, uint32_t id, struct nr_job_stats *st)
{
	return agg_engine_job_stats(b->priv, id, st);
}

static const struct nr_backend_ops engine_backend_ops = {
	.name = "sw", .job_create = ch_add, .job_destroy = ch_del, .job_status = ch_stats,
};

/* A server of cfg (its UNIX path filled in here), with the tenants of the file
 * text tenants (NULL: none) loaded first. */
static void srv_start_cfg(struct srv *v, struct nr_ctl_server_cfg cfg, const char *tenants)
{
	char err[256];

	memset(v, 0, sizeof(*v));
	snprintf(v->dir, sizeof(v->dir), "/tmp/nrz-ctl-XXXXXX");
	assert_non_null(mkdtemp(v->dir));
	snprintf(v->path, sizeof(v->path), "%s/ctl.sock", v->dir);
	cfg.unix_path = v->path;
	v->eng = agg_engine_create(&(struct agg_engine_ops){ 0 });
	assert_non_null(v->eng);
	v->ctl = nr_ctl_create(nr_backend_new(&engine_backend_ops, v->eng));
	assert_non_null(v->ctl);
	if (tenants) {
		char tp[96];
		FILE *f;

		snprintf(tp, sizeof(tp), "%s/tenants.json", v->dir);
		f = fopen(tp, "w");
		assert_non_null(f);
		fputs(tenants, f);
		fclose(f);
		assert_int_equal(chmod(tp, 0600), 0);
		if (nr_ctl_tenants_load(v->ctl, tp, err, sizeof(err)) < 0)
			fail_msg("tenants: %s", err);
		unlink(tp);
	}
	v->s = nr_ctl_server_start(v->ctl, &cfg, err, sizeof(err));
	if (!v->s)
		fail_msg("server: %s", err);
	v->port = nr_ctl_server_tcp_port(v->s);
	assert_true(v->port > 0);
}

static void srv_start(struct srv *v, unsigned max_conns, unsigned idle_ms, size_t max_line)
{
	struct nr_ctl_server_cfg cfg = {
		.tcp_addr = "127.0.0.1:0", .token = TOKEN, .max_conns = max_conns,
		.idle_timeout_ms = idle_ms, .max_line = max_line, .rate_per_sec = 1000,
		.rate_burst = 1000,
	};

	srv_start_cfg(v, cfg, NULL);
}

static void srv_stop(struct srv *v)
{
	nr_ctl_server_stop(v->s);
	nr_ctl_destroy(v->ctl);
	agg_engine_destroy(v->eng);
	unlink(v->path);
	rmdir(v->dir);
}

/* ---- clients --------------------------------------------------------------------- */

static int conn_tcp(const struct srv *v)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)v->port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static int conn_unix(const struct srv *v)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", v->path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static void send_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t r = send(fd, s, n, MSG_NOSIGNAL);

		if (r <= 0)
			return;     /* the server may have closed on us: the reply says why */
		s += r;
		n -= (size_t)r;
	}
}

/* One reply line (parsed), or NULL on EOF/timeout. */
static json_t *recv_reply(int fd, int timeout_ms)
{
	char buf[65536];
	size_t n = 0;

	while (n + 1 < sizeof(buf)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, timeout_ms) <= 0)
			return NULL;
		r = recv(fd, buf + n, 1, 0);
		if (r <= 0)
			return NULL;
		if (buf[n] == '\n')
			return json_loadb(buf, n, 0, NULL);
		n++;
	}
	return NULL;
}

static json_t *call(int fd, const char *line)
{
	send_all(fd, line, strlen(line));
	send_all(fd, "\n", 1);
	return recv_reply(fd, 3000);
}

/* One request on fd with token tok: the reply (NULL: none). */
static json_t *stats_as(int fd, const char *tok)
{
	char line[128];

	snprintf(line, sizeof(line), "{\"op\":\"stats\",\"token\":\"%s\"}", tok);
	return call(fd, line);
}

static void expect_ok(json_t *r)
{
	assert_non_null(r);
	if (!json_is_true(json_object_get(r, "ok")))
		fail_msg("expected ok, got error: %s",
			 json_string_value(json_object_get(r, "error")));
}

/* An error with a message naming what (contains needle, case-sensitive). */
static void expect_err(json_t *r, const char *needle)
{
	const char *e;

	assert_non_null(r);
	assert_true(json_is_false(json_object_get(r, "ok")));
	e = json_string_value(json_object_get(r, "error"));
	assert_non_null(e);
	if (needle && !strstr(e, needle))
		fail_msg("error '%s' does not mention '%s'", e, needle);
	json_decref(r);
}

static char *spec_line(unsigned net, const char *op_extra)
{
	char *s;

	assert_true(asprintf(&s,
		"{\"op\":\"job_create\",\"token\":\"" TOKEN "\"%s,\"spec\":{\"mtu\":1024,"
		"\"msg_size\":4096,\"conns\":["
		"{\"src_ip\":\"10.%u.0.1\",\"dst_ip\":\"10.%u.0.2\",\"src_qpn\":17,\"dst_qpn\":18,\"ipsn\":0},"
		"{\"src_ip\":\"10.%u.0.2\",\"dst_ip\":\"10.%u.0.1\",\"src_qpn\":19,\"dst_qpn\":20,\"ipsn\":100}]}}",
		op_extra, net, net, net, net) > 0);
	return s;
}

/* ---- cases ---------------------------------------------------------------------------- */

static void test_tenant_isolation(void **state)
{
	struct srv v;
	char line[512], *s;
	json_t *r;
	json_int_t ida, idb;
	char keya[64], keyb[64];
	int a, b, adm;

	(void)state;
	srv_start(&v, 16, 30000, 65536);
	a = conn_tcp(&v);
	b = conn_tcp(&v);
	s = spec_line(81, "");
	r = call(a, s);
	free(s);
	expect_ok(r);
	ida = json_integer_value(json_object_get(r, "job"));
	snprintf(keya, sizeof(keya), "%s", json_string_value(json_object_get(r, "key")));
	json_decref(r);
	s = spec_line(82, "");
	r = call(b, s);
	free(s);
	expect_ok(r);
	idb = json_integer_value(json_object_get(r, "job"));
	snprintf(keyb, sizeof(keyb), "%s", json_string_value(json_object_get(r, "key")));
	json_decref(r);
	assert_int_equal(strlen(keya), 32);

	/* tenant b against job a: every guess is refused the same way */
	char nearmiss[64], shorter[64], longer[80];

	snprintf(nearmiss, sizeof(nearmiss), "%s", keya);
	nearmiss[31] = nearmiss[31] == '0' ? '1' : '0';
	snprintf(shorter, sizeof(shorter), "%.31s", keya);
	snprintf(longer, sizeof(longer), "%s0", keya);
	const char *keys[] = { NULL, "", keyb, nearmiss, shorter, longer,
			       "00000000000000000000000000000000", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz" };
	const char *ops[] = { "job_status", "job_destroy" };

	for (unsigned o = 0; o < 2; o++) {
		for (unsigned k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			if (keys[k])
				snprintf(line, sizeof(line),
					 "{\"op\":\"%s\",\"token\":\"" TOKEN "\",\"job\":%lld,\"key\":\"%s\"}",
					 ops[o], (long long)ida, keys[k]);
			else
				snprintf(line, sizeof(line),
					 "{\"op\":\"%s\",\"token\":\"" TOKEN "\",\"job\":%lld}",
					 ops[o], (long long)ida);
			r = call(b, line);
			assert_non_null(r);
			assert_true(json_is_false(json_object_get(r, "ok")));
			json_decref(r);
		}
	}
	/* an id sweep with b's own key finds nothing but b's job */
	for (json_int_t id = 0; id < 64; id++) {
		snprintf(line, sizeof(line),
			 "{\"op\":\"job_status\",\"token\":\"" TOKEN "\",\"job\":%lld,\"key\":\"%s\"}",
			 (long long)id, keyb);
		r = call(b, line);
		assert_non_null(r);
		assert_true(json_is_true(json_object_get(r, "ok")) == (id == idb));
		json_decref(r);
	}
	/* a tenant cannot list jobs */
	expect_err(call(b, "{\"op\":\"job_list\",\"token\":\"" TOKEN "\"}"), NULL);
	/* job a is untouched and its owner still reaches it; the admin sees both */
	snprintf(line, sizeof(line),
		 "{\"op\":\"job_status\",\"token\":\"" TOKEN "\",\"job\":%lld,\"key\":\"%s\"}",
		 (long long)ida, keya);
	r = call(a, line);
	expect_ok(r);
	json_decref(r);
	adm = conn_unix(&v);
	r = call(adm, "{\"op\":\"job_list\"}");
	expect_ok(r);
	assert_int_equal(json_array_size(json_object_get(r, "jobs")), 2);
	json_decref(r);
	close(a);
	close(b);
	close(adm);
	srv_stop(&v);
}

static void test_tokens(void **state)
{
	static const char *const bad[] = {
		"{\"op\":\"stats\"}",
		"{\"op\":\"stats\",\"token\":\"\"}",
		"{\"op\":\"stats\",\"token\":\"nrz-shared-token-012345678\"}",
		"{\"op\":\"stats\",\"token\":\"nrz-shared-token-01234567890\"}",
		"{\"op\":\"stats\",\"token\":\"NRZ-SHARED-TOKEN-0123456789\"}",
		"{\"op\":\"stats\",\"token\":null}",
		"{\"op\":\"stats\",\"token\":12345}",
		"{\"op\":\"stats\",\"token\":[\"" TOKEN "\"]}",
		"{\"op\":\"stats\",\"token\":\"nrz-shared-token-0123456789\\u0000x\"}",
	};
	struct srv v;
	json_t *r;
	int t;

	(void)state;
	srv_start(&v, 16, 30000, 65536);
	/* the last one is refused as JSON already (a NUL inside a string); each
	 * wrong request closes its connection: only a token keeps one */
	for (unsigned k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		char c;

		t = conn_tcp(&v);
		expect_err(call(t, bad[k]), k + 1 < sizeof(bad) / sizeof(bad[0]) ? "token" : NULL);
		assert_int_equal(recv(t, &c, 1, 0), 0);      /* closed by the box */
		close(t);
	}
	/* an authenticated connection is kept, even across a bad line */
	t = conn_tcp(&v);
	r = call(t, "{\"op\":\"stats\",\"token\":\"" TOKEN "\"}");
	expect_ok(r);
	json_decref(r);
	expect_err(call(t, "not json"), NULL);
	r = call(t, "{\"op\":\"stats\",\"token\":\"" TOKEN "\"}");
	expect_ok(r);
	json_decref(r);
	close(t);
	srv_stop(&v);
}

static void test_oversize_and_slow(void **state)
{
	struct srv v;
	char *big;
	json_t *r;
	int o, slow, never, good;
	const char *req = "{\"op\":\"stats\",\"token\":\"" TOKEN "\"}\n";

	(void)state;
	srv_start(&v, 16, 400, 1024);
	/* a line over max_line: a clear error, then the connection is closed */
	o = conn_tcp(&v);
	big = malloc(8192);
	assert_non_null(big);
	memset(big, 'x', 8192);
	send_all(o, big, 8192);
	expect_err(recv_reply(o, 3000), "longer");
	free(big);
	/* a request trickled a byte every 50 ms never completes in time: closed */
	slow = conn_tcp(&v);
	never = conn_tcp(&v);
	send_all(never, "{\"op\":", 6);
	for (size_t k = 0; k < 20; k++) {
		send_all(slow, req + k, 1);
		usleep(50000);
	}
	r = recv_reply(slow, 2000);
	expect_err(r, "idle");
	expect_err(recv_reply(never, 2000), "idle");
	/* meanwhile and after, others are served */
	good = conn_tcp(&v);
	r = call(good, "{\"op\":\"stats\",\"token\":\"" TOKEN "\"}");
	expect_ok(r);
	json_decref(r);
	close(o);
	close(slow);
	close(never);
	close(good);
	srv_stop(&v);
}

static void test_admin_lockout(void **state)
{
	struct srv v;
	int t[4], adm;
	json_t *r;

	(void)state;
	srv_start(&v, 4, 30000, 65536);
	/* four connections from the network, no token, no request */
	for (unsigned k = 0; k < 4; k++)
		t[k] = conn_tcp(&v);
	usleep(100000);
	/* the operator on the box must still get in */
	adm = conn_unix(&v);
	r = call(adm, "{\"op\":\"job_list\"}");
	for (unsigned k = 0; k < 4; k++)
		close(t[k]);
	close(adm);
	srv_stop(&v);
	if (!r || !json_is_true(json_object_get(r, "ok")))
		fail_msg("admin locked out by %u unauthenticated TCP connections: %s", 4u,
			 r ? json_string_value(json_object_get(r, "error")) : "no reply");
	json_decref(r);
}

/* A TCP connection from 127.0.0.(1 + host): loopback takes any 127/8 source. */
static int conn_tcp_from(const struct srv *v, unsigned host)
{
	struct sockaddr_in me = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK + host) };
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)v->port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static uint64_t ctl_counter(int adm, const char *name)
{
	json_t *r = call(adm, "{\"op\":\"stats\"}");
	json_t *v = json_object_get(json_object_get(json_object_get(r, "stats"), "control"), name);
	uint64_t n;

	if (!json_is_integer(v))
		fail_msg("stats: no control counter %s", name);
	n = (uint64_t)json_integer_value(v);
	json_decref(r);
	return n;
}

/*
 * 64 clients (the whole TCP table) from 64 addresses hold their connections
 * without a token: idle, trickling a partial line, or sending a junk line
 * now and then.  A host library connecting afterwards is served at once, every
 * time; one address holds at most max_conns / 4 connections.
 */
static void test_idle_clients_no_lockout(void **state)
{
	struct srv v;
	int t[64], lib, adm, extra[17];
	json_t *r;
	char c;

	(void)state;
	srv_start(&v, 64, 30000, 65536);
	adm = conn_unix(&v);
	for (unsigned k = 0; k < 64; k++) {
		t[k] = conn_tcp_from(&v, 2 + k);
		if (k % 3 == 1)
			send_all(t[k], "{\"op\":", 6);        /* a line that never ends */
	}
	usleep(200000);
	for (unsigned round = 0; round < 3; round++) {
		/* junk lines reset nothing: they close their connection */
		for (unsigned k = 2; k < 64; k += 3)
			if (t[k] >= 0) {
				send_all(t[k], "x\n", 2);
				expect_err(recv_reply(t[k], 2000), NULL);
				assert_int_equal(recv(t[k], &c, 1, 0), 0);
				close(t[k]);
				t[k] = conn_tcp_from(&v, 2 + k);   /* and comes back */
			}
		lib = conn_tcp_from(&v, 0);
		r = call(lib, "{\"op\":\"stats\",\"token\":\"" TOKEN "\"}");
		if (!r || !json_is_true(json_object_get(r, "ok")))
			fail_msg("round %u: a host library was kept out by 64 unauthenticated clients: %s",
				 round, r ? json_string_value(json_object_get(r, "error")) : "no reply");
		json_decref(r);
		close(lib);
	}
	printf("# evicted %llu, refused %llu\n", (unsigned long long)ctl_counter(adm, "conns_evicted"),
	       (unsigned long long)ctl_counter(adm, "conns_refused"));
	/* the first library took an unauthenticated client's place; later ones the place
	 * the library before them left */
	assert_true(ctl_counter(adm, "conns_evicted") >= 1);
	/* one address: 16 of 64 (the library's own address now holds none); the
	 * 17th takes the place of its address's oldest, which the box closes */
	{
		uint64_t evicted = ctl_counter(adm, "conns_evicted");

		for (unsigned k = 0; k < 17; k++)
			extra[k] = conn_tcp_from(&v, 200);
		assert_null(recv_reply(extra[16], 150));       /* kept: nothing comes */
		assert_int_equal(recv(extra[0], &c, 1, 0), 0); /* closed */
		/* the 17th took its own address's oldest place (before it, some
		 * took one of the 64 others': the table is full) */
		assert_true(ctl_counter(adm, "conns_evicted") >= evicted + 1);
		r = stats_as(extra[16], TOKEN);
		expect_ok(r);
		json_decref(r);
	}
	for (unsigned k = 0; k < 17; k++)
		close(extra[k]);
	for (unsigned k = 0; k < 64; k++)
		if (t[k] >= 0)
			close(t[k]);
	close(adm);
	srv_stop(&v);
}

/* ---- tenants: addresses and connections ------------------------------------------------ */

#define TOK_A "tenant-a-token-0123456789"
#define TOK_B "tenant-b-token-9876543210"

/* A job_create of tenant tok: two ranks a.b.c.1 <-> .2 of net (e.g. "10.1.0"), QPNs from
 * qpn, MACs 02:00:00:00:00:m1 and :m2 (0: none). */
static char *create_line(const char *tok, const char *net_src, const char *net_dst, unsigned qpn,
			 unsigned m1, unsigned m2)
{
	char macs[2][64] = { "", "" };
	char *s;

	if (m1)
		snprintf(macs[0], sizeof(macs[0]), ",\"src_mac\":\"02:00:00:00:00:%02x\","
			 "\"dst_mac\":\"02:00:00:00:00:%02x\"", m1, m2);
	if (m1)
		snprintf(macs[1], sizeof(macs[1]), ",\"src_mac\":\"02:00:00:00:00:%02x\","
			 "\"dst_mac\":\"02:00:00:00:00:%02x\"", m2, m1);
	assert_true(asprintf(&s,
		"{\"op\":\"job_create\",\"token\":\"%s\",\"spec\":{\"mtu\":1024,\"msg_size\":4096,\"conns\":["
		"{\"src_ip\":\"%s.1\",\"dst_ip\":\"%s.2\",\"src_qpn\":%u,\"dst_qpn\":%u,\"ipsn\":0%s},"
		"{\"src_ip\":\"%s.2\",\"dst_ip\":\"%s.1\",\"src_qpn\":%u,\"dst_qpn\":%u,\"ipsn\":0%s}]}}",
		tok, net_src, net_dst, qpn, qpn + 1, macs[0], net_dst, net_src, qpn + 2, qpn + 3,
		macs[1]) > 0);
	return s;
}

/* The error of a refused request, which must not name job id (no other tenant's job). */
static void expect_refused_no_job(json_t *r, const char *needle, json_int_t id)
{
	char job[32];
	const char *e;

	assert_non_null(r);
	e = json_string_value(json_object_get(r, "error"));
	snprintf(job, sizeof(job), "job %lld", (long long)id);
	if (e && strstr(e, job))
		fail_msg("error '%s' names another tenant's %s", e, job);
	expect_err(r, needle);
}

static json_t *tenant_row(int adm, const char *name)
{
	json_t *r = call(adm, "{\"op\":\"stats\"}");
	json_t *rows = json_object_get(json_object_get(json_object_get(r, "stats"), "control"), "tenants");

	for (size_t i = 0; i < json_array_size(rows); i++)
		if (!strcmp(json_string_value(json_object_get(json_array_get(rows, i), "name")), name)) {
			json_t *row = json_incref(json_array_get(rows, i));

			json_decref(r);
			return row;
		}
	fail_msg("stats: no tenant %s", name);
	return NULL;
}

/*
 * Tenant a holds 10.1.0.0/16 and two MACs; tenant b 10.2.0.0/16.  b registering
 * a's job's connections (the very same), a's receivers from b's senders, or a
 * squatting address; a naming a MAC not its own: each refused, naming the
 * connection, the address and the tenant, counted, and a's job untouched.
 * b's own job is created.  No error tells b the id of a's job.
 */
static void test_tenant_addresses(void **state)
{
	static const char tenants[] =
		"{\"tenants\": [\n"
		" {\"name\": \"a\", \"token\": \"" TOK_A "\", \"ips\": [\"10.1.0.0/16\"],\n"
		"  \"macs\": [\"02:00:00:00:00:0a\", \"02:00:00:00:00:0b\"]},\n"
		" {\"name\": \"b\", \"token\": \"" TOK_B "\", \"ips\": [\"10.2.0.0/16\", \"10.3.0.7\"]}]}\n";
	struct nr_ctl_server_cfg cfg = { .tcp_addr = "127.0.0.1:0", .rate_per_sec = 1000,
					 .rate_burst = 1000 };
	struct srv v;
	char line[512], keya[64], *s;
	json_int_t ida;
	json_t *r, *row;
	int a, b, adm;

	(void)state;
	srv_start_cfg(&v, cfg, tenants);
	a = conn_tcp(&v);
	b = conn_tcp(&v);
	adm = conn_unix(&v);
	s = create_line(TOK_A, "10.1.0", "10.1.0", 17, 0x0a, 0x0b);
	r = call(a, s);
	free(s);
	expect_ok(r);
	ida = json_integer_value(json_object_get(r, "job"));
	snprintf(keya, sizeof(keya), "%s", json_string_value(json_object_get(r, "key")));
	json_decref(r);

	/* b, a's very connections: refused on the address before anything else */
	s = create_line(TOK_B, "10.1.0", "10.1.0", 17, 0, 0);
	expect_refused_no_job(call(b, s), "job_create: spec.conns[0].src_ip: 10.1.0.1 is not tenant "
			      "b's address (its ips: 10.2.0.0/16, 10.3.0.7/32)", ida);
	free(s);
	/* b's senders to a's receivers (its results into a's hosts) */
	s = create_line(TOK_B, "10.2.0", "10.1.0", 40, 0, 0);
	expect_refused_no_job(call(b, s), "spec.conns[0].dst_ip: 10.1.0.2 is not tenant b's address",
			      ida);
	free(s);
	/* one address past b's /32 */
	s = create_line(TOK_B, "10.2.0", "10.3.0", 50, 0, 0);
	expect_refused_no_job(call(b, s), "spec.conns[0].dst_ip: 10.3.0.2 is not tenant b's address",
			      ida);
	free(s);
	/* a with its own IPs but a MAC it was not given (another host's, one-armed) */
	s = create_line(TOK_A, "10.1.1", "10.1.1", 60, 0x0a, 0x0c);
	expect_refused_no_job(call(a, s), "spec.conns[0].dst_mac: 02:00:00:00:00:0c is not tenant a's "
			      "MAC (not among the 2 macs", ida);
	free(s);
	assert_int_equal(ctl_counter(adm, "addr_refused"), 4);
	row = tenant_row(adm, "b");
	assert_int_equal(json_integer_value(json_object_get(row, "addr_refused")), 3);
	json_decref(row);
	row = tenant_row(adm, "a");
	assert_int_equal(json_integer_value(json_object_get(row, "addr_refused")), 1);
	json_decref(row);

	/* b's own job: created; a second one on the same QPs is told "another job", no id */
	s = create_line(TOK_B, "10.2.0", "10.2.0", 17, 0, 0);
	r = call(b, s);
	expect_ok(r);
	json_decref(r);
	expect_refused_no_job(call(b, s), "belongs to another job; a QP serves one job", ida);
	expect_refused_no_job(call(b, s), NULL, ida + 1);
	free(s);
	/* a's job: untouched, still a's */
	snprintf(line, sizeof(line), "{\"op\":\"job_status\",\"token\":\"" TOK_A "\",\"job\":%lld,"
		 "\"key\":\"%s\"}", (long long)ida, keya);
	r = call(a, line);
	expect_ok(r);
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "job"), "state")),
			    "active");
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "job"), "tenant")), "a");
	json_decref(r);
	assert_int_equal(ctl_counter(adm, "jobs"), 2);
	close(a);
	close(b);
	close(adm);
	srv_stop(&v);
}

/*
 * Tenant a (max_conns 3) opens connections from 8 addresses: the 4th and later
 * are refused at their first request, naming the tenant and its max_conns,
 * counted, and closed; tenant b (the server's default cap) gets in beside
 * them, and a connection a closes makes room for a new one of a's.  A
 * connection of a that brings b's token is closed: one tenant a connection.
 */
static void test_tenant_conn_cap(void **state)
{
	static const char tenants[] =
		"{\"tenants\": [\n"
		" {\"name\": \"a\", \"token\": \"" TOK_A "\", \"ips\": [\"10.1.0.0/16\"], \"max_conns\": 3},\n"
		" {\"name\": \"b\", \"token\": \"" TOK_B "\", \"ips\": [\"10.2.0.0/16\"]}]}\n";
	struct nr_ctl_server_cfg cfg = { .tcp_addr = "127.0.0.1:0", .max_conns = 32,
					 .max_conns_per_tenant = 6, .rate_per_sec = 1000,
					 .rate_burst = 1000 };
	struct srv v;
	int fa[8], fb[6], adm, extra;
	json_t *r, *row;
	char c;

	(void)state;
	srv_start_cfg(&v, cfg, tenants);
	adm = conn_unix(&v);
	for (unsigned k = 0; k < 8; k++) {
		fa[k] = conn_tcp_from(&v, 10 + k);
		r = stats_as(fa[k], TOK_A);
		if (k < 3) {
			expect_ok(r);
			json_decref(r);
			continue;
		}
		expect_err(r, "tenant a holds 3 control connections, its max_conns: connection closed");
		assert_int_equal(recv(fa[k], &c, 1, 0), 0);       /* closed by the box */
	}
	assert_int_equal(ctl_counter(adm, "tenant_conns_refused"), 5);
	row = tenant_row(adm, "a");
	assert_int_equal(json_integer_value(json_object_get(row, "conns_refused")), 5);
	assert_int_equal(json_integer_value(json_object_get(row, "max_conns")), 3);
	json_decref(row);
	/* b beside it: its own cap (the server's 6), nothing of a's */
	for (unsigned k = 0; k < 6; k++) {
		fb[k] = conn_tcp_from(&v, 30 + k);
		r = stats_as(fb[k], TOK_B);
		expect_ok(r);
		json_decref(r);
	}
	extra = conn_tcp_from(&v, 40);
	expect_err(stats_as(extra, TOK_B), "tenant b holds 6 control connections, its max_conns "
		   "(the box's default)");
	close(extra);
	/* a's held connections still serve a; one of them with b's token is closed */
	r = stats_as(fa[0], TOK_A);
	expect_ok(r);
	json_decref(r);
	expect_err(stats_as(fa[1], TOK_B), "a connection serves one tenant");
	assert_int_equal(recv(fa[1], &c, 1, 0), 0);
	/* that made room: a gets a connection again */
	usleep(100000);
	close(fa[1]);
	fa[1] = conn_tcp_from(&v, 50);
	r = stats_as(fa[1], TOK_A);
	expect_ok(r);
	json_decref(r);
	for (unsigned k = 0; k < 8; k++)
		close(fa[k]);
	for (unsigned k = 0; k < 6; k++)
		close(fb[k]);
	close(adm);
	srv_stop(&v);
}

/* A TCP connection to port from src (AF_INET or AF_INET6 text) to dst. */
static int conn_any(int port, const char *src, const char *dst)
{
	struct sockaddr_storage me = { 0 }, to = { 0 };
	bool v6 = strchr(dst, ':') != NULL;
	socklen_t len = v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&me, *b = (struct sockaddr_in6 *)&to;

		a->sin6_family = b->sin6_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, src, &a->sin6_addr), 1);
		assert_int_equal(inet_pton(AF_INET6, dst, &b->sin6_addr), 1);
		b->sin6_port = htons((uint16_t)port);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&me, *b = (struct sockaddr_in *)&to;

		a->sin_family = b->sin_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, src, &a->sin_addr), 1);
		assert_int_equal(inet_pton(AF_INET, dst, &b->sin_addr), 1);
		b->sin_port = htons((uint16_t)port);
	}
	assert_int_equal(bind(fd, (struct sockaddr *)&me, len), 0);
	if (connect(fd, (struct sockaddr *)&to, len))
		fail_msg("connect %s -> %s port %d: %s", src, dst, port, strerror(errno));
	return fd;
}

/*
 * A dual-stack listener ([::], in this test's own network namespace), two
 * unauthenticated connections a source: IPv4 clients arrive as
 * ::ffff:127.0.0.x and are counted per IPv4 source, ::1 as a source of its
 * own.  (Counting on the first bytes of a struct sockaddr_in made every
 * client of an IPv6 listener one source: the third connection of all was
 * refused.)  Authenticated connections count against their tenant, not
 * their source: two tenants behind one address (SNAT) do not lock each
 * other out.
 */
static void test_dual_stack(void **state)
{
	struct nr_ctl_server_cfg cfg = { .tcp_addr = "[::]:0", .token = TOKEN, .max_conns = 16,
					 .max_conns_per_source = 2, .rate_per_sec = 1000,
					 .rate_burst = 1000 };
	static const char *const src[] = { "127.0.0.2", "127.0.0.2", "::1", "::1", "127.0.0.3",
					   "127.0.0.3" };
	struct srv v;
	int fd[6], more;
	json_t *r;

	(void)state;
	srv_start_cfg(&v, cfg, NULL);
	for (unsigned k = 0; k < 6; k++) {
		fd[k] = conn_any(v.port, src[k], strchr(src[k], ':') ? "::1" : "127.0.0.1");
		r = stats_as(fd[k], TOKEN);
		if (!r || !json_is_true(json_object_get(r, "ok")))
			fail_msg("connection %u from %s refused: %s", k, src[k],
				 r ? json_string_value(json_object_get(r, "error")) : "no reply");
		json_decref(r);
	}
	/* the authenticated ones hold no place of their source: two unauthenticated
	 * ones more from each, and a third is one too many */
	{
		int idle[6];

		for (unsigned k = 0; k < 6; k++)
			idle[k] = conn_any(v.port, src[k], strchr(src[k], ':') ? "::1" : "127.0.0.1");
		for (unsigned k = 0; k < 6; k++) { /* kept: no refusal comes */
			json_t *no = recv_reply(idle[k], 150);

			if (no)
				fail_msg("an unauthenticated connection from %s beside two authenticated "
					 "ones refused: %s",
					 src[k], json_string_value(json_object_get(no, "error")));
		}
		for (unsigned k = 0; k < 6; k += 2) { /* a third: its source's oldest goes */
			char c;

			more = conn_any(v.port, src[k], strchr(src[k], ':') ? "::1" : "127.0.0.1");
			if (recv(idle[k], &c, 1, 0) != 0)
				fail_msg("the oldest unauthenticated connection from %s kept "
					 "beside a third",
					 src[k]);
			assert_null(recv_reply(more, 150));
			close(more);
		}
		for (unsigned k = 0; k < 6; k++)
			close(idle[k]);
	}
	for (unsigned k = 0; k < 6; k++)
		close(fd[k]);
	srv_stop(&v);
}

/*
 * Two tenants behind one address (SNAT, 127.0.0.9) and a third party there
 * guessing tokens: three bad ones naming no tenant block (address, none),
 * three naming tenant a block (address, a).  Then a request naming no
 * tenant, or a, is refused from that address, while tenant b, naming
 * itself, still gets in, and a from another address too; a's own token
 * naming b is refused (a claim is checked against the claimed tenant's
 * token alone, and counts as a failure of that claim).  Keyed on the
 * address alone, as the throttle was, b was locked out with the rest.
 */
static void test_shared_address(void **state)
{
	/* clang-format off */
	static const char tenants[] =
		"{\"tenants\": [\n"
		" {\"name\": \"a\", \"token\": \"" TOK_A "\", \"ips\": [\"10.1.0.0/16\"]},\n"
		" {\"name\": \"b\", \"token\": \"" TOK_B "\", \"ips\": [\"10.2.0.0/16\"]}]}\n";
	/* clang-format on */
	struct nr_ctl_server_cfg cfg = { .tcp_addr = "127.0.0.1:0",
					 .max_conns = 32,
					 .rate_per_sec = 1000,
					 .rate_burst = 1000,
					 .auth_fail_max = 3,
					 .auth_block_ms = 60000 };
	static const char *const guess[] = {
		"{\"op\":\"stats\",\"token\":\"guess-0123456789abcdef\"}",
		"{\"op\":\"stats\",\"token\":\"guess-0123456789abcdef\",\"tenant\":\"a\"}",
	};
	struct srv v;
	int adm, fd;
	json_t *r;

	(void)state;
	srv_start_cfg(&v, cfg, tenants);
	adm = conn_unix(&v);
	for (unsigned g = 0; g < 2; g++)
		for (unsigned k = 0; k < 3; k++) {
			fd = conn_tcp_from(&v, 9);
			expect_err(call(fd, guess[g]), "bad or missing token");
			close(fd);
		}
	assert_int_equal(ctl_counter(adm, "bad_token"), 6);
	/* blocked: the address naming nobody, and naming a */
	fd = conn_tcp_from(&v, 9);
	expect_err(stats_as(fd, TOK_A), "too many failed authentications from this address: ");
	close(fd);
	fd = conn_tcp_from(&v, 9);
	expect_err(call(fd, "{\"op\":\"stats\",\"token\":\"" TOK_A "\",\"tenant\":\"a\"}"),
		   "too many failed authentications from this address for tenant a");
	close(fd);
	assert_int_equal(ctl_counter(adm, "auth_throttled"), 2);
	/* b, naming itself, from the same address: in */
	fd = conn_tcp_from(&v, 9);
	r = call(fd, "{\"op\":\"stats\",\"token\":\"" TOK_B "\",\"tenant\":\"b\"}");
	expect_ok(r);
	json_decref(r);
	close(fd);
	/* a from its own address: in */
	fd = conn_tcp_from(&v, 10);
	r = call(fd, "{\"op\":\"stats\",\"token\":\"" TOK_A "\",\"tenant\":\"a\"}");
	expect_ok(r);
	json_decref(r);
	close(fd);
	/* a's token naming b, or a name no tenant can have: refused */
	fd = conn_tcp_from(&v, 11);
	expect_err(call(fd, "{\"op\":\"stats\",\"token\":\"" TOK_A "\",\"tenant\":\"b\"}"),
		   "bad or missing token");
	close(fd);
	fd = conn_tcp_from(&v, 11);
	expect_err(call(fd, "{\"op\":\"stats\",\"token\":\"" TOK_A "\",\"tenant\":7}"),
		   "bad or missing token");
	close(fd);
	assert_int_equal(ctl_counter(adm, "bad_token"), 8);
	assert_int_equal(ctl_counter(adm, "auth_throttled"), 2);
	close(adm);
	srv_stop(&v);
}

/*
 * One tenant's many jobs against another's first: tenant b reserves 2 of the
 * box's 64 jobs.  Tenant a, with no limit of its own, gets 62 and is refused
 * the 63rd, naming b's reservation (reserve_refused); b then gets its two,
 * and the box is full for everyone.  Without the reservation a took all 64
 * and b's first was refused.  Reservations the box cannot honour (the sum
 * past its jobs, one past the tenant's own max_jobs) are refused when the
 * tenants are loaded.
 */
static void test_reservations(void **state)
{
	/* clang-format off */
	static const char tenants[] =
		"{\"tenants\": [\n"
		" {\"name\": \"a\", \"token\": \"" TOK_A "\", \"ips\": [\"10.1.0.0/16\"]},\n"
		" {\"name\": \"b\", \"token\": \"" TOK_B "\", \"ips\": [\"10.2.0.0/16\"],"
		"  \"reserve_jobs\": 2}]}\n";
	/* clang-format on */
	struct nr_ctl_server_cfg cfg = {
		.tcp_addr = "127.0.0.1:0", .max_conns = 32, .rate_per_sec = 1000, .rate_burst = 1000
	};
	struct nr_ctl_tenant_cfg big = { .name = "c",
					 .token = "tenant-c-token-0123456789",
					 .reserve_jobs = 63 };
	struct srv v;
	int adm, fa, fb;
	unsigned ok = 0;
	char err[256], *line;
	json_t *r, *row;

	(void)state;
	srv_start_cfg(&v, cfg, tenants);
	adm = conn_unix(&v);
	fa = conn_tcp_from(&v, 10);
	fb = conn_tcp_from(&v, 11);
	for (unsigned k = 0; k < NR_MAX_JOBS; k++) {
		line = create_line(TOK_A, "10.1.0", "10.1.1", 100 + 4 * k, 0, 0);
		r = call(fa, line);
		free(line);
		if (json_is_true(json_object_get(r, "ok"))) {
			ok++;
			json_decref(r);
			continue;
		}
		/* named, but nothing of the other tenants: not their names, not what
		 * they hold (the operator's log says) */
		assert_null(strstr(json_string_value(json_object_get(r, "error")), "(b "));
		expect_err(r, "job_create: the box has no room for the job's 1 jobs beside what "
			      "other tenants reserved (the tenants file's reserve_jobs)");
		break;
	}
	printf("# tenant a: %u jobs, then refused\n", ok);
	assert_int_equal(ok, NR_MAX_JOBS - 2);
	for (unsigned k = 0; k < 2; k++) {
		line = create_line(TOK_B, "10.2.0", "10.2.1", 100 + 4 * k, 0, 0);
		r = call(fb, line);
		free(line);
		expect_ok(r);
		json_decref(r);
	}
	line = create_line(TOK_B, "10.2.0", "10.2.1", 200, 0, 0);
	expect_err(call(fb, line), "64 jobs exist, the most this box holds");
	free(line);
	assert_int_equal(ctl_counter(adm, "reserve_refused"), 1);
	row = tenant_row(adm, "a");
	assert_int_equal(json_integer_value(json_object_get(row, "reserve_refused")), 1);
	json_decref(row);
	row = tenant_row(adm, "b");
	assert_int_equal(json_integer_value(json_object_get(row, "reserve_jobs")), 2);
	assert_int_equal(json_integer_value(json_object_get(row, "jobs")), 2);
	json_decref(row);
	/* what the box cannot honour is refused at load */
	assert_int_equal(nr_ctl_tenant_add(v.ctl, &big, err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, "the tenants' reserve_jobs come to 65, past the 64 jobs"));
	big.reserve_jobs = 4;
	big.max_jobs = 3;
	assert_int_equal(nr_ctl_tenant_add(v.ctl, &big, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "reserve_jobs 4 over its max_jobs 3"));
	big.reserve_jobs = 0;
	big.reserve_channels = 49;
	assert_int_equal(nr_ctl_tenant_add(v.ctl, &big, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "reserve_channels 49 over what its max_jobs 3 can open"));
	big.reserve_channels = 0;
	big.max_pool_bytes = 4096;
	big.reserve_mbufs = 17;
	assert_int_equal(nr_ctl_tenant_add(v.ctl, &big, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "reserve_mbufs 17 over what its max_pool_bytes 4096 can hold"));
	{ /* a range's length is digits alone (strtoul would skip a blank) */
		static const char *const ips[] = { "10.0.0.0/ 8" };

		big.reserve_mbufs = 0;
		big.ips = ips;
		big.n_ips = 1;
		assert_int_equal(nr_ctl_tenant_add(v.ctl, &big, err, sizeof(err)), -EINVAL);
		big.ips = NULL;
		big.n_ips = 0;
	}
	close(fa);
	close(fb);
	close(adm);
	srv_stop(&v);
}

/* This process into a network namespace of its own with lo up: 0, or -1 (not root). */
static int own_netns(void)
{
	struct ifreq ifr = { 0 };
	int fd;

	if (geteuid() != 0 || unshare(CLONE_NEWNET))
		return -1;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr)) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tenant_isolation),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_oversize_and_slow),
		cmocka_unit_test(test_idle_clients_no_lockout),
		cmocka_unit_test(test_tenant_addresses),
		cmocka_unit_test(test_tenant_conn_cap),
		cmocka_unit_test(test_shared_address),
		cmocka_unit_test(test_reservations),
	};
	const struct CMUnitTest lockout[] = {
		cmocka_unit_test(test_admin_lockout),
	};
	const struct CMUnitTest dual[] = {
		cmocka_unit_test(test_dual_stack),
	};

	if (argc > 1 && !strcmp(argv[1], "admin_lockout"))
		return cmocka_run_group_tests_name("control security: admin lockout", lockout,
						   NULL, NULL);
	if (argc > 1 && !strcmp(argv[1], "dual_stack")) {
		if (own_netns()) {
			printf("SKIP: dual_stack: needs root (a network namespace of its own, whose "
			       "[::] the listener binds)\n");
			return 77;
		}
		return cmocka_run_group_tests_name("control security: dual stack", dual, NULL, NULL);
	}
	return cmocka_run_group_tests_name("control security", tests, NULL, NULL);
}
