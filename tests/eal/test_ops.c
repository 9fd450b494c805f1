/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EAL suite: what an operator reads off the running box (its loop on lcore
 * 1, ring-backed ports).
 *   metrics: every family with its HELP and TYPE once, before its samples,
 *            names as Prometheus' naming guide asks; the workers' counters
 *            as dp_box_counters sums them; a job labelled by id, name and
 *            tenant, the tenant's families, never a key or a token; the same
 *            text over HTTP (GET /metrics) and nothing but GET and HEAD.
 *   health:  healthy; a port whose link goes down named, healthy again when
 *            it comes back; a worker stuck in its device (a frame_in that
 *            does not return) named within --stall-ms, while /metrics still
 *            answers at once (engine and job families left out, partial 1);
 *            healthy again when it returns.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "control/api/ctl_metrics.h"
#include "control/api/nr_control.h"
#include "dataplane/dpdk/dp_backend.h"
#include "dataplane/dpdk/dp_health.h"
#include "dataplane/dpdk/dp_metrics.h"
#include "dataplane/dpdk/dp_snap.h"
#include "eal_harness.h"

#define TOKEN "vision-token-0123456789abcdef"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void expect_in(const char *hay, const char *needle)
{
	if (!strstr(hay, needle)) {
		print_error("\"%s\" not found in:\n%.3000s\n", needle, hay);
		fail();
	}
}

/* A job of n ranks (the harness's hosts), as a tenant would create it. */
static json_t *job_spec(unsigned n)
{
	json_t *conns = json_array();

	for (unsigned r = 0; r < n; r++) {
		char src[16], dst[16], sm[18], dm[18];
		uint8_t a[6], b[6];
		uint32_t ipa = h_host_ip(r), ipb = h_host_ip((r + 1) % n);

		h_host_mac(r, a);
		h_host_mac((r + 1) % n, b);
		inet_ntop(AF_INET, &ipa, src, sizeof(src));
		inet_ntop(AF_INET, &ipb, dst, sizeof(dst));
		snprintf(sm, sizeof(sm), "%02x:%02x:%02x:%02x:%02x:%02x", a[0], a[1], a[2], a[3], a[4], a[5]);
		snprintf(dm, sizeof(dm), "%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5]);
		json_array_append_new(conns, json_pack("{s:s,s:s,s:i,s:i,s:i,s:s,s:s}", "src_ip", src,
			"dst_ip", dst, "src_qpn", 0x100 + 2 * r, "dst_qpn", 0x101 + 2 * ((r + 1) % n),
			"ipsn", 0, "src_mac", sm, "dst_mac", dm));
	}
	return json_pack("{s:i,s:i,s:i,s:o}", "mtu", 1024, "msg_size", 4096, "pool_msgs", 4, "conns", conns);
}

/*
 * The text's structure: every sample's family announced by HELP and TYPE
 * before it, each family once, names of [a-z0-9_] starting netreduce_,
 * counters ending in _total.  Returns the number of families.
 */
static unsigned check_format(const char *text)
{
	char (*seen)[128] = calloc(1024, sizeof(*seen));
	char cur[128] = "", type[16] = "";
	unsigned n = 0;
	const char *p = text;

	assert_non_null(seen);
	while (*p) {
		const char *e = strchr(p, '\n');
		char line[1024], name[128];
		size_t len = e ? (size_t)(e - p) : strlen(p);

		assert_true(len < sizeof(line));
		memcpy(line, p, len);
		line[len] = '\0';
		p += len + (e ? 1 : 0);
		if (strncmp(line, "# HELP ", 7) == 0) {
			assert_int_equal(sscanf(line + 7, "%127s", name), 1);
			for (unsigned i = 0; i < n; i++)
				if (strcmp(seen[i], name) == 0) {
					print_error("family %s twice\n", name);
					fail();
				}
			assert_true(n < 1024);
			snprintf(seen[n++], sizeof(seen[0]), "%s", name);
			snprintf(cur, sizeof(cur), "%s", name);
			assert_int_equal(strncmp(name, "netreduce_", 10), 0);
			assert_int_equal(strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_"), strlen(name));
			type[0] = '\0';
		} else if (strncmp(line, "# TYPE ", 7) == 0) {
			assert_int_equal(sscanf(line + 7, "%127s %15s", name, type), 2);
			assert_string_equal(name, cur);
			assert_true(!strcmp(type, "counter") || !strcmp(type, "gauge"));
			if (!strcmp(type, "counter"))
				assert_int_equal(strcmp(name + strlen(name) - 6, "_total"), 0);
		} else if (line[0]) {
			size_t k = strcspn(line, "{ ");

			assert_true(type[0] != '\0');      /* TYPE before the samples */
			if (k != strlen(cur) || strncmp(line, cur, k) != 0) {
				print_error("sample \"%s\" outside its family (current %s)\n", line, cur);
				fail();
			}
		}
	}
	free(seen);
	return n;
}

/* A sample's value ("" labels: none), or -1 when absent. */
static double sample(const char *text, const char *name, const char *labels)
{
	char want[512];
	const char *p;

	snprintf(want, sizeof(want), "\n%s%s%s%s ", name, labels[0] ? "{" : "", labels, labels[0] ? "}" : "");
	p = strstr(text, want);
	return p ? strtod(p + strlen(want), NULL) : -1;
}

static char *render(struct dp_box *b, struct nr_ctl *c)
{
	struct nr_mtext t = { 0 };

	nr_mtext_printf(&t, "\n");    /* sample() finds the first line too */
	assert_int_equal(dp_metrics_render(b, c, &t, true), 0);
	return t.buf;
}

/* GET (or another method) of path on 127.0.0.1:port with bearer tok (NULL:
 * none): the whole answer, malloc'd. */
static char *http_as(int port, const char *method, const char *path, const char *tok)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	char req[256], *buf = calloc(1, 1 << 20);
	size_t len = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ssize_t r;

	assert_non_null(buf);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: x\r\n%s%s%s\r\n", method, path,
		 tok ? "Authorization: Bearer " : "", tok ? tok : "", tok ? "\r\n" : "");
	assert_int_equal(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
	while ((r = recv(fd, buf + len, (1 << 20) - 1 - len, 0)) > 0)
		len += (size_t)r;
	close(fd);
	return buf;
}

static char *http(int port, const char *method, const char *path)
{
	return http_as(port, method, path, NULL);
}

static void test_metrics(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct nr_ctl_tenant_cfg tc = { .name = "vision", .token = TOKEN, .max_jobs = 1 };
	struct dp_metrics_server *ms;
	struct nr_ctl *c;
	struct dp_ctr sum;
	char err[256], lb[128], *text, *ans, key[40];
	json_t *req, *r;
	int tenant;
	uint8_t f[60] = { 0 };

	assert_int_equal(h_setup(h, 3, DP_MODE_SWITCH), 0);
	c = nr_ctl_create(dp_backend_create(h->box));
	assert_non_null(c);
	tenant = nr_ctl_tenant_add(c, &tc, err, sizeof(err));
	assert_true(tenant >= 0);
	req = json_pack("{s:s,s:o,s:s}", "op", "job_create", "spec", job_spec(3), "name", "resnet-50");
	r = nr_ctl_handle_json(c, req, tenant);
	json_decref(req);
	assert_true(json_is_true(json_object_get(r, "ok")));
	snprintf(key, sizeof(key), "%s", json_string_value(json_object_get(r, "key")));
	json_decref(r);
	/* traffic: runts and plain frames, so the counters are not all 0 */
	for (unsigned i = 0; i < 20; i++)
		h_inject(h, i % 3, f, i % 2 ? 10 : sizeof(f));
	h_settle(h);
	h_collect(h);
	h_clear_out(h);
	/* the job's and the engines' families are what the worker publishes
	 * (dp_snap.h), which the metrics listener turns on: without it, none */
	text = render(h->box, c);
	assert_true(sample(text, "netreduce_job_ranks",
			   "job=\"1\",name=\"resnet-50\",tenant=\"vision\"") == 3);
	assert_true(sample(text, "netreduce_job_slots",
			   "job=\"1\",name=\"resnet-50\",tenant=\"vision\"") < 0);
	assert_true(sample(text, "netreduce_engine_aggregated_total", "") < 0);
	free(text);
	dp_snap_enable(h->box, true);
	usleep(3 * DP_SNAP_NS / 1000);

	text = render(h->box, c);
	printf("  %u families, %zu bytes\n", check_format(text + 1), strlen(text));
	dp_box_counters(h->box, &sum);
	assert_int_equal(sample(text, "netreduce_worker_rx_frames_total", "worker=\"0\",lcore=\"1\""),
			 (double)sum.c[DP_CTR_RX]);
	assert_int_equal(sum.c[DP_CTR_RX], 20);
	assert_int_equal(sample(text, "netreduce_worker_runt_frames_total", "worker=\"0\",lcore=\"1\""), 10);
	assert_true(sample(text, "netreduce_worker_busy_seconds_total", "worker=\"0\",lcore=\"1\"") >= 0);
	assert_int_equal(sample(text, "netreduce_worker_polling", "worker=\"0\",lcore=\"1\""), 1);
	nr_mx_labels(lb, sizeof(lb), "job", "1", "name", "resnet-50", "tenant", "vision", NULL);
	assert_int_equal(sample(text, "netreduce_job_ranks", lb), 3);
	assert_int_equal(sample(text, "netreduce_job_failed", lb), 0);
	assert_int_equal(sample(text, "netreduce_job_aggregated_total", lb), 0);
	assert_int_equal(sample(text, "netreduce_job_slots", lb), 16);    /* 4 messages of 4 packets */
	assert_int_equal(sample(text, "netreduce_job_slots_busy", lb), 0);
	assert_true(sample(text, "netreduce_job_lease_remaining_seconds", lb) > 0);
	assert_int_equal(sample(text, "netreduce_tenant_jobs", "tenant=\"vision\""), 1);
	assert_int_equal(sample(text, "netreduce_tenant_max_jobs", "tenant=\"vision\""), 1);
	assert_int_equal(sample(text, "netreduce_tenant_quota_refused_total", "tenant=\"vision\""), 0);
	assert_int_equal(sample(text, "netreduce_control_jobs_created_total", ""), 1);
	assert_int_equal(sample(text, "netreduce_dataplane_jobs", ""), 1);
	assert_int_equal(sample(text, "netreduce_healthy", ""), 1);
	assert_int_equal(sample(text, "netreduce_metrics_partial", ""), 0);
	snprintf(err, sizeof(err), "%u", h->port_id[0]);
	nr_mx_labels(lb, sizeof(lb), "port", err, "name", h->box->ports[0].name, NULL);
	assert_int_equal(sample(text, "netreduce_port_link_up", lb), 1);
	assert_true(sample(text, "netreduce_port_rx_packets_total", lb) >= 7);
	assert_true(sample(text, "netreduce_admission_committed_mbufs", "") > 0);
	assert_true(sample(text, "netreduce_engine_aggregated_total", "") >= 0);
	/* no secret in any label or value */
	assert_null(strstr(text, key));
	assert_null(strstr(text, TOKEN));
	free(text);

	/* over its quota: refused, counted for the tenant */
	req = json_pack("{s:s,s:o}", "op", "job_create", "spec", job_spec(3));
	r = nr_ctl_handle_json(c, req, tenant);
	json_decref(req);
	assert_true(json_is_false(json_object_get(r, "ok")));
	expect_in(json_string_value(json_object_get(r, "error")), "at its quota");
	json_decref(r);
	text = render(h->box, c);
	assert_int_equal(sample(text, "netreduce_tenant_quota_refused_total", "tenant=\"vision\""), 1);
	assert_int_equal(sample(text, "netreduce_control_quota_refused_total", ""), 1);
	free(text);

	/* the same over HTTP, and nothing but reading */
	ms = dp_metrics_start(h->box, c, "127.0.0.1:0", NULL, NULL, err, sizeof(err));
	assert_non_null(ms);
	ans = http(dp_metrics_port(ms), "GET", "/metrics");
	expect_in(ans, "HTTP/1.1 200 OK\r\n");
	expect_in(ans, "Content-Type: text/plain; version=0.0.4");
	expect_in(ans, "\nnetreduce_job_ranks{job=\"1\",name=\"resnet-50\",tenant=\"vision\"} 3\n");
	check_format(strstr(ans, "\r\n\r\n") + 4);
	free(ans);
	ans = http(dp_metrics_port(ms), "GET", "/healthz");
	expect_in(ans, "HTTP/1.1 200 OK\r\n");
	expect_in(ans, "ok: 3 of 3 ports linked, 1 of 1 workers polling");
	free(ans);
	ans = http(dp_metrics_port(ms), "POST", "/metrics");
	expect_in(ans, "HTTP/1.1 405 Method Not Allowed\r\n");
	expect_in(ans, "Allow: GET, HEAD");
	free(ans);
	ans = http(dp_metrics_port(ms), "GET", "/etc/passwd");
	expect_in(ans, "HTTP/1.1 404 Not Found\r\n");
	free(ans);
	ans = http(dp_metrics_port(ms), "HEAD", "/metrics");
	expect_in(ans, "HTTP/1.1 200 OK\r\n");
	assert_null(strstr(ans, "# HELP"));
	free(ans);
	dp_metrics_stop(ms);

	/* two scopes: the admin's token reads every family, the box scope's
	 * none that names a job or a tenant; no token, or another, gets 401 */
	ms = dp_metrics_start(h->box, c, "127.0.0.1:0", "admin-token-0123456789",
			      "box-scope-token-0123456789", err, sizeof(err));
	assert_non_null(ms);
	usleep(3 * DP_SNAP_NS / 1000);
	ans = http_as(dp_metrics_port(ms), "GET", "/metrics", "admin-token-0123456789");
	expect_in(ans, "HTTP/1.1 200 OK\r\n");
	expect_in(ans, "\nnetreduce_job_slots{job=\"1\",name=\"resnet-50\",tenant=\"vision\"} 16\n");
	expect_in(ans, "\nnetreduce_tenant_max_jobs{tenant=\"vision\"} 1\n");
	free(ans);
	ans = http_as(dp_metrics_port(ms), "GET", "/metrics", "box-scope-token-0123456789");
	expect_in(ans, "HTTP/1.1 200 OK\r\n");
	expect_in(ans, "\nnetreduce_control_jobs 1\n");
	expect_in(ans, "\nnetreduce_engine_aggregated_total ");
	assert_null(strstr(ans, "netreduce_job_"));
	assert_null(strstr(ans, "netreduce_tenant_"));
	assert_null(strstr(ans, "resnet-50"));
	assert_null(strstr(ans, "vision"));
	check_format(strstr(ans, "\r\n\r\n") + 4);
	free(ans);
	ans = http(dp_metrics_port(ms), "GET", "/metrics");
	expect_in(ans, "HTTP/1.1 401 ");
	free(ans);
	dp_metrics_stop(ms);
	nr_ctl_destroy(c);      /* its jobs and the backend with it */
	h_teardown(h);
	free(h);
}

static void test_health_link(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct dp_health hl;
	char want[128], *text, lb[96];

	assert_int_equal(h_setup(h, 3, DP_MODE_SWITCH), 0);
	dp_health_check(h->box, &hl);
	assert_true(hl.healthy);
	assert_string_equal(hl.reason, "");
	assert_int_equal(hl.ports_up, 3);
	assert_int_equal(rte_eth_dev_set_link_down(h->port_id[1]), 0);
	dp_health_check(h->box, &hl);
	assert_false(hl.healthy);
	assert_true(hl.workers_ok);      /* a link down is no reason to restart the box */
	snprintf(want, sizeof(want), "port %u (%s): link down", h->port_id[1], h->box->ports[1].name);
	expect_in(hl.reason, want);
	printf("  %s\n", hl.reason);
	text = render(h->box, NULL);
	snprintf(want, sizeof(want), "%u", h->port_id[1]);
	nr_mx_labels(lb, sizeof(lb), "port", want, "name", h->box->ports[1].name, NULL);
	assert_int_equal(sample(text, "netreduce_port_link_up", lb), 0);
	assert_int_equal(sample(text, "netreduce_healthy", ""), 0);
	free(text);
	assert_int_equal(rte_eth_dev_set_link_up(h->port_id[1]), 0);
	dp_health_check(h->box, &hl);
	assert_true(hl.healthy);
	h_teardown(h);
	free(h);
}

/* A device whose frame_in does not return until released: a stuck worker. */
static int dev_release;

static int stuck_in(void *ctx, uint16_t port, const uint8_t *frame, uint32_t len)
{
	while (!__atomic_load_n(&dev_release, __ATOMIC_ACQUIRE))
		usleep(1000);
	return 0;
}

static int stuck_out(void *ctx, uint8_t *buf, uint32_t cap, uint32_t *len, uint16_t *port,
		     enum dp_dev_kind *kind)
{
	return 0;
}

static void stuck_tick(void *ctx, unsigned ms) {}
static const char *stuck_error(void *ctx) { return "none"; }

static const struct dp_dev_ops stuck_dev = {
	.frame_in = stuck_in, .frame_out = stuck_out, .tick_ms = stuck_tick, .error = stuck_error,
};

static void test_health_stuck_worker(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct dp_health hl;
	struct nr_ctl *c;
	char err[256], *text;
	uint8_t f[60] = { 0 };
	double t0, t;

	assert_int_equal(h_setup(h, 2, DP_MODE_SWITCH), 0);
	dp_box_stop(h->box);
	assert_int_equal(dp_box_set_dev(h->box, &stuck_dev, NULL, err, sizeof(err)), 0);
	h->box->cfg.stall_ms = 200;
	assert_int_equal(dp_box_launch(h->box), 0);
	c = nr_ctl_create(dp_backend_create(h->box));
	usleep(50000);
	dp_health_check(h->box, &hl);
	assert_true(hl.healthy);
	assert_int_equal(hl.bound_ms, 200);      /* idle sleeps of 20 us add nothing */
	/* a frame: the worker goes into the device and does not come back */
	__atomic_store_n(&dev_release, 0, __ATOMIC_RELEASE);
	h_inject(h, 0, f, sizeof(f));
	t0 = now_s();
	do {
		usleep(20000);
		dp_health_check(h->box, &hl);
	} while (hl.healthy && now_s() - t0 < 5);
	t = now_s() - t0;
	printf("  stuck after %.0f ms: %s\n", t * 1e3, hl.reason);
	assert_false(hl.healthy);
	assert_false(hl.workers_ok);
	assert_true(t < 1.0);
	expect_in(hl.reason, "worker 0 (lcore 1): stuck, its loop has not gone round for");
	/* metrics answer at once: nothing waits on the stuck worker's command ring */
	t0 = now_s();
	text = render(h->box, c);
	t = now_s() - t0;
	printf("  metrics with a stuck worker in %.1f ms\n", t * 1e3);
	assert_true(t < 0.5);
	assert_int_equal(sample(text, "netreduce_metrics_partial", ""), 1);
	assert_int_equal(sample(text, "netreduce_worker_polling", "worker=\"0\",lcore=\"1\""), 0);
	assert_true(sample(text, "netreduce_worker_heartbeat_age_seconds", "worker=\"0\",lcore=\"1\"") > 0.2);
	assert_null(strstr(text, "netreduce_engine_aggregated_total"));
	free(text);
	/* it comes back: healthy again */
	__atomic_store_n(&dev_release, 1, __ATOMIC_RELEASE);
	t0 = now_s();
	do {
		usleep(10000);
		dp_health_check(h->box, &hl);
	} while (!hl.healthy && now_s() - t0 < 5);
	assert_true(hl.healthy);
	nr_ctl_destroy(c);
	h_teardown(h);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_health_link),
		cmocka_unit_test(test_health_stuck_worker),
	};

	return cmocka_run_group_tests_name("eal_ops", tests, h_group_setup, h_group_teardown);
}
