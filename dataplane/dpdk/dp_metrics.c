/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The box's metrics (Prometheus text format) and health over HTTP
 * (dp_metrics.h).  Families, labels in braces:
 *
 *   netreduce_build_info{version,backend,mode,kernel}, netreduce_healthy,
 *   netreduce_start_time_seconds, netreduce_metrics_partial
 *   netreduce_port_*{port,name}      rte_eth_stats (packets, bytes, missed,
 *                                    errors, rx_nombuf), link up, speed; _info
 *   netreduce_worker_*{worker,lcore} every counter of dp_ctr.h
 *                                    (netreduce_worker_<name>_frames_total,
 *                                    busy_seconds_total, ...), malformed and
 *                                    engine drops by reason, heartbeat age,
 *                                    polling
 *   netreduce_engine_*_total         the engine counters summed over workers
 *                                    (aggregation, loss recovery: NAKs,
 *                                    repairs, resends, short slots, ...)
 *   netreduce_pool_*, netreduce_held_frames, netreduce_admission_*
 *                                    the mbuf pool, what the engines hold, the
 *                                    admission budget
 *   the control API's (ctl_metrics.c): netreduce_job_*{job,name,tenant},
 *   netreduce_tenant_*{tenant}, netreduce_control_*
 *
 * Served by control/http/ctl_http.c on an EAL control thread (the cores outside
 * the workers' lcores: the main lcore's with -l 0,1).  Each scrape renders
 * anew from the workers' counter blocks and what they published (dp_snap.h);
 * nothing on the data path changes for it.  The job and tenant families are
 * the admin scope's alone (dp_metrics.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include "control/http/ctl_http.h"
#include "dataplane/dpdk/dp_health.h"
#include "dataplane/dpdk/dp_jobs.h"
#include "dataplane/dpdk/dp_metrics.h"
#include "dataplane/dpdk/dp_snap.h"
#include "dataplane/dpdk/dp_stats.h"
#include "dataplane/dpdk/dp_steer.h"

#ifndef NR_VERSION
#define NR_VERSION "unknown"
#endif

struct dp_metrics_server {
	struct dp_box *b;
	struct nr_ctl *ctl;
	struct nr_http *http;
	double start_s;            /* the Unix time the listener started */
};

/* ---- ports ---------------------------------------------------------------- */

/* rte_eth_stats fields (DP_FOREACH_PORT_STAT) as metric names and help. */
static const struct {
	const char *name, *help;
} port_ctr[] = {
	{ "netreduce_port_rx_packets_total", "frames the port received (ipackets)" },
	{ "netreduce_port_tx_packets_total", "frames the port sent (opackets)" },
	{ "netreduce_port_rx_bytes_total", "bytes the port received (ibytes)" },
	{ "netreduce_port_tx_bytes_total", "bytes the port sent (obytes)" },
	{ "netreduce_port_rx_missed_packets_total",
	  "frames the port dropped, its RX queues full: the workers fell behind (imissed)" },
	{ "netreduce_port_rx_errors_total", "erroneous frames received (ierrors)" },
	{ "netreduce_port_tx_errors_total", "frames the port failed to send (oerrors)" },
	{ "netreduce_port_rx_nombuf_total", "RX mbuf allocation failures: the pool ran dry (rx_nombuf)" },
};

static void port_families(struct dp_box *b, struct nr_mtext *t, const struct dp_health *h)
{
	struct rte_eth_stats st[DP_MAX_PORTS];
	bool have[DP_MAX_PORTS];
	char lb[DP_MAX_PORTS][160];

	for (unsigned i = 0; i < b->n_ports; i++) {
		char id[8];

		snprintf(id, sizeof(id), "%u", b->ports[i].id);
		nr_mx_labels(lb[i], sizeof(lb[i]), "port", id, "name", b->ports[i].name, NULL);
		have[i] = rte_eth_stats_get(b->ports[i].id, &st[i]) == 0;
	}
	nr_mx_family(t, "netreduce_port_info", "gauge",
		     "a port of the box: its driver, MAC and how channels' frames reach their worker (1)");
	for (unsigned i = 0; i < b->n_ports; i++) {
		char mac[RTE_ETHER_ADDR_FMT_SIZE], id[8], l[320];

		rte_ether_format_addr(mac, sizeof(mac), &b->ports[i].mac);
		snprintf(id, sizeof(id), "%u", b->ports[i].id);
		nr_mx_labels(l, sizeof(l), "port", id, "name", b->ports[i].name, "driver", b->ports[i].driver,
			     "mac", mac, "steering", dp_steer_name(b->ports[i].steer), NULL);
		nr_mx_u64(t, "netreduce_port_info", l, 1);
	}
	nr_mx_family(t, "netreduce_port_link_up", "gauge", "1 when the port's link is up");
	for (unsigned i = 0; i < b->n_ports; i++)
		nr_mx_u64(t, "netreduce_port_link_up", lb[i], h->port[i].up);
	nr_mx_family(t, "netreduce_port_speed_bytes", "gauge",
		     "the link's speed in bytes a second (0: unknown or down)");
	for (unsigned i = 0; i < b->n_ports; i++)
		nr_mx_u64(t, "netreduce_port_speed_bytes", lb[i], (uint64_t)h->port[i].speed_mbps * 125000);
	for (unsigned f = 0; f < RTE_DIM(port_ctr); f++) {
		nr_mx_family(t, port_ctr[f].name, "counter", port_ctr[f].help);
		for (unsigned i = 0; i < b->n_ports; i++) {
			const uint64_t v[] = { st[i].ipackets, st[i].opackets, st[i].ibytes, st[i].obytes,
					       st[i].imissed, st[i].ierrors, st[i].oerrors, st[i].rx_nombuf };

			if (have[i])
				nr_mx_u64(t, port_ctr[f].name, lb[i], v[f]);
		}
	}
}

/* ---- workers --------------------------------------------------------------- */

static void worker_families(struct dp_box *b, struct nr_mtext *t, const struct dp_health *h)
{
	struct dp_ctr *c = calloc(b->n_workers, sizeof(*c));
	char lb[DP_MAX_WORKERS][64], name[128], help[256];

	if (c == NULL) {
		t->oom = true;
		return;
	}
	for (unsigned i = 0; i < b->n_workers; i++) {
		char w[8], lc[8];

		snprintf(w, sizeof(w), "%u", i);
		snprintf(lc, sizeof(lc), "%u", b->workers[i]->lcore);
		nr_mx_labels(lb[i], sizeof(lb[i]), "worker", w, "lcore", lc, NULL);
		dp_ctr_read(&b->workers[i]->ctr, &c[i]);
	}
	for (unsigned k = 0; k < DP_CTR_MAX; k++) {
		const bool cycles = strcmp(dp_ctr_units[k], "cycles") == 0;

		if (cycles) {       /* TSC cycles as seconds, the base unit */
			snprintf(name, sizeof(name), "netreduce_worker_busy_seconds_total");
			snprintf(help, sizeof(help), "time spent in loop iterations that found work");
		} else {
			snprintf(name, sizeof(name), "netreduce_worker_%s%s%s_total", dp_ctr_names[k],
				 dp_ctr_units[k][0] ? "_" : "", dp_ctr_units[k]);
			snprintf(help, sizeof(help), "%s", dp_ctr_help[k]);
		}
		nr_mx_family(t, name, "counter", help);
		for (unsigned i = 0; i < b->n_workers; i++) {
			if (cycles)
				nr_mx_f64(t, name, lb[i], (double)c[i].c[k] / (double)b->tsc_hz);
			else
				nr_mx_u64(t, name, lb[i], c[i].c[k]);
		}
	}
	nr_mx_family(t, "netreduce_worker_malformed_reason_frames_total", "counter",
		     "malformed UDP/4791 frames dropped, by reason");
	for (unsigned i = 0; i < b->n_workers; i++)
		for (unsigned r = 1; r < NR_BAD_MAX; r++) {
			char l[160];

			snprintf(l, sizeof(l), "%s,reason=\"%s\"", lb[i], dp_malformed_names[r]);
			nr_mx_u64(t, "netreduce_worker_malformed_reason_frames_total", l, c[i].malformed[r]);
		}
	nr_mx_family(t, "netreduce_worker_engine_drop_reason_frames_total", "counter",
		     "frames the engine dropped, by its counter (the engine counters' meanings)");
	for (unsigned i = 0; i < b->n_workers; i++)
		for (unsigned r = 0; r < NR_ECTR_MAX; r++) {
			char l[160];

			snprintf(l, sizeof(l), "%s,reason=\"%s\"", lb[i], nr_engine_ctr_names[r]);
			nr_mx_u64(t, "netreduce_worker_engine_drop_reason_frames_total", l,
				  c[i].engine_drop[r]);
		}
	nr_mx_family(t, "netreduce_worker_heartbeat_age_seconds", "gauge",
		     "time since the worker's loop last went round (stuck past --stall-ms)");
	for (unsigned i = 0; i < b->n_workers; i++)
		nr_mx_f64(t, "netreduce_worker_heartbeat_age_seconds", lb[i],
			  (double)h->worker[i].age_ms / 1e3);
	nr_mx_family(t, "netreduce_worker_polling", "gauge",
		     "1 while the worker's loop goes round (its heartbeat within --stall-ms)");
	for (unsigned i = 0; i < b->n_workers; i++)
		nr_mx_u64(t, "netreduce_worker_polling", lb[i], h->worker[i].polling);
	free(c);
}

/* ---- engines, pool, admission ---------------------------------------------- */

static void engine_families(struct dp_box *b, struct nr_mtext *t)
{
	uint64_t e[NR_ECTR_MAX];
	char name[96];

	if (dp_snap_engine(b, e) != 0)
		return;
	for (unsigned k = 0; k < NR_ECTR_MAX; k++) {
		snprintf(name, sizeof(name), "netreduce_engine_%s_total", nr_engine_ctr_names[k]);
		nr_mx_family(t, name, "counter", nr_engine_ctr_help[k]);
		nr_mx_u64(t, name, "", e[k]);
	}
}

/* The box's control lock within ms, or false: a job operation waiting on a stuck worker holds it. */
static bool lock_within(pthread_mutex_t *m, unsigned ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)ms * 1000000;
	ts.tv_sec += ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	return pthread_mutex_timedlock(m, &ts) == 0;
}

/* The pool, held frames, the admission budget: false when the jobs' part was left out. */
static bool pool_families(struct dp_box *b, struct nr_mtext *t)
{
	uint64_t committed = 0, refused = 0, held = 0;
	unsigned jobs = 0;
	bool locked = lock_within(&b->ctl_lock, NR_CTL_METRICS_WAIT_MS);

	if (locked) {
		for (unsigned i = 0; i < b->n_chans; i++) {
			committed += nr_job_held_frames(b->chans[i].spec);
			jobs += b->chans[i].ch == 0;
		}
		refused = b->mbufs_refused;
		pthread_mutex_unlock(&b->ctl_lock);
	}
	for (unsigned i = 0; i < b->n_workers; i++) {
		struct dp_ctr c;

		dp_ctr_read(&b->workers[i]->ctr, &c);
		/* read apart, the three may be a frame out of step: never below 0 */
		if (c.c[DP_CTR_HELD] > c.c[DP_CTR_RESULTS] + c.c[DP_CTR_FREED_HELD])
			held += c.c[DP_CTR_HELD] - c.c[DP_CTR_RESULTS] - c.c[DP_CTR_FREED_HELD];
	}
	nr_mx_family(t, "netreduce_pool_mbufs", "gauge", "mbufs in the box's packet pool (--pool-mbufs)");
	nr_mx_u64(t, "netreduce_pool_mbufs", "", b->pool->size);
	nr_mx_family(t, "netreduce_pool_mbufs_free", "gauge", "mbufs of the pool free now");
	nr_mx_u64(t, "netreduce_pool_mbufs_free", "", rte_mempool_avail_count(b->pool));
	nr_mx_family(t, "netreduce_held_frames", "gauge",
		     "contributions the engines hold now (held, not yet results or freed)");
	nr_mx_u64(t, "netreduce_held_frames", "", held);
	nr_mx_family(t, "netreduce_admission_budget_mbufs", "gauge",
		     "frames the jobs may hold together (--admit-mbufs)");
	nr_mx_u64(t, "netreduce_admission_budget_mbufs", "", b->mbuf_budget);
	if (!locked)
		return false;
	nr_mx_family(t, "netreduce_admission_committed_mbufs", "gauge",
		     "frames the admitted jobs could hold together (ranks x channels x pool packets)");
	nr_mx_u64(t, "netreduce_admission_committed_mbufs", "", committed);
	nr_mx_family(t, "netreduce_admission_refused_jobs_total", "counter",
		     "job_creates refused for want of the mbuf budget");
	nr_mx_u64(t, "netreduce_admission_refused_jobs_total", "", refused);
	nr_mx_family(t, "netreduce_dataplane_jobs", "gauge", "jobs on the box's workers");
	nr_mx_u64(t, "netreduce_dataplane_jobs", "", jobs);
	return true;
}

int dp_metrics_render(struct dp_box *b, struct nr_ctl *ctl, struct nr_mtext *t, bool admin)
{
	struct dp_health *h = malloc(sizeof(*h));
	unsigned what;
	bool whole;
	char l[256];

	if (h == NULL)
		return -ENOMEM;
	dp_health_check(b, h);
	nr_mx_family(t, "netreduce_build_info", "gauge", "the box's version and configuration (1)");
	nr_mx_labels(l, sizeof(l), "version", NR_VERSION, "backend", b->dev ? "device" : "sw",
		     "mode", b->cfg.mode == DP_MODE_SWITCH ? "switch" : "one-armed",
		     "kernel", b->kernel_name ? b->kernel_name : "?", NULL);
	nr_mx_u64(t, "netreduce_build_info", l, 1);
	nr_mx_family(t, "netreduce_healthy", "gauge",
		     "1 when every port's link is up and every worker polls (GET /healthz says why not)");
	nr_mx_u64(t, "netreduce_healthy", "", h->healthy);
	port_families(b, t, h);
	worker_families(b, t, h);
	/* what the workers published: only while they all poll (a stuck one's
	 * is stale); the locks a request waiting on a stuck worker holds: a
	 * bounded wait */
	whole = h->workers_ok;
	if (h->workers_ok)
		engine_families(b, t);
	whole &= pool_families(b, t);
	what = (admin ? NR_MX_ADMIN : 0) | (h->workers_ok ? NR_MX_STATUS : 0);
	if (ctl && nr_ctl_metrics(ctl, t, what) == -EBUSY)
		whole = false;
	nr_mx_family(t, "netreduce_metrics_partial", "gauge",
		     "1 when a stuck worker, or a request waiting on one, kept the engine, job and "
		     "admission families out of this scrape");
	nr_mx_u64(t, "netreduce_metrics_partial", "", !whole);
	free(h);
	return t->oom ? -ENOMEM : 0;
}

/* ---- the listener ------------------------------------------------------------ */

static void handle(void *ctx, const char *path, const char *query, bool admin,
		   struct nr_http_reply *r)
{
	struct dp_metrics_server *s = ctx;

	if (strcmp(path, "/metrics") == 0) {
		r->ctype = "text/plain; version=0.0.4; charset=utf-8";
		nr_mx_family(&r->body, "netreduce_start_time_seconds", "gauge",
			     "Unix time the box's metrics listener started");
		nr_mx_f64(&r->body, "netreduce_start_time_seconds", "", s->start_s);
		dp_metrics_render(s->b, s->ctl, &r->body, admin);
	} else if (strcmp(path, "/healthz") == 0) {
		struct dp_health h;

		dp_health_check(s->b, &h);
		if (h.healthy) {
			nr_mtext_printf(&r->body, "ok: %u of %u ports linked, %u of %u workers polling\n",
					h.ports_up, h.n_ports, h.workers_polling, h.n_workers);
		} else {
			r->status = 503;
			nr_mtext_printf(&r->body, "unhealthy: %s\n", h.reason);
		}
	} else if (strcmp(path, "/") == 0) {
		nr_mtext_printf(&r->body, "netreduce-switch %s: GET /metrics (Prometheus text format), "
				"GET /healthz (200 ok, 503 unhealthy: why)\n", NR_VERSION);
	} else {
		r->status = 404;
		nr_mtext_printf(&r->body, "no %s here: GET /metrics or /healthz\n", path);
	}
}

/* The listener's thread on the EAL's control cores, away from the workers. */
static int spawn_ctrl(pthread_t *th, const char *name, void *(*fn)(void *), void *arg)
{
	return rte_ctrl_thread_create(th, name, NULL, fn, arg);
}

struct dp_metrics_server *dp_metrics_start(struct dp_box *b, struct nr_ctl *ctl, const char *addr,
					   const char *bearer, const char *bearer_box, char *err,
					   size_t errlen)
{
	struct dp_metrics_server *s = calloc(1, sizeof(*s));
	struct nr_http_cfg hc = { .addr = addr,
				  .handler = handle,
				  .spawn = spawn_ctrl,
				  .bearer = bearer,
				  .bearer_box = bearer_box };
	struct timespec ts;

	if (s == NULL) {
		snprintf(err, errlen, "metrics listener: out of memory");
		return NULL;
	}
	s->b = b;
	s->ctl = ctl;
	clock_gettime(CLOCK_REALTIME, &ts);
	s->start_s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	hc.ctx = s;
	s->http = nr_http_start(&hc, err, errlen);
	if (s->http == NULL) {
		free(s);
		return NULL;
	}
	dp_snap_enable(b, true);
	return s;
}

int dp_metrics_port(const struct dp_metrics_server *s)
{
	return s ? nr_http_port(s->http) : -1;
}

void dp_metrics_stop(struct dp_metrics_server *s)
{
	if (s == NULL)
		return;
	nr_http_stop(s->http);
	dp_snap_enable(s->b, false);
	free(s);
}
