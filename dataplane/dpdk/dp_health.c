/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The box's health (dp_health.h): up (its workers launched), ports linked,
 * workers polling.  A worker is polling while its heartbeat, which its loop
 * stores every DP_HOUSEKEEP_ITERS iterations and before each idle sleep
 * (dp_loop.c), is younger than --stall-ms plus one idle sleep; a worker
 * stuck in a frame, a command or a device call stops it.  Nothing here
 * waits on a worker or takes a lock the loop could hold.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "dataplane/dpdk/dp_health.h"

/* Append "; what" (or "what" first) to the reason. */
static void why(struct dp_health *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why(struct dp_health *h, const char *fmt, ...)
{
	size_t n = strlen(h->reason);
	va_list ap;

	if (n + 3 >= sizeof(h->reason))
		return;
	if (n) {
		memcpy(h->reason + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(h->reason + n, sizeof(h->reason) - n, fmt, ap);
	va_end(ap);
}

void dp_health_check(struct dp_box *b, struct dp_health *h)
{
	const uint64_t now = rte_get_tsc_cycles(), ms_tsc = b->tsc_hz / 1000 ? b->tsc_hz / 1000 : 1;
	const bool started = __atomic_load_n(&b->started, __ATOMIC_ACQUIRE);

	memset(h, 0, sizeof(*h));
	h->n_ports = b->n_ports;
	h->n_workers = b->n_workers;
	h->bound_ms = b->cfg.stall_ms + b->cfg.idle_sleep_us / 1000;
	for (unsigned i = 0; i < b->n_ports; i++) {
		struct rte_eth_link l;

		memset(&l, 0, sizeof(l));
		if (rte_eth_link_get_nowait(b->ports[i].id, &l) == 0 && l.link_status == RTE_ETH_LINK_UP) {
			h->port[i].up = true;
			h->port[i].speed_mbps = l.link_speed;
			h->ports_up++;
		} else {
			why(h, "port %u (%s): link down (cable, peer or switch port; ip link / ethtool on "
			    "the peer)", b->ports[i].id, b->ports[i].name);
		}
	}
	if (!started)
		why(h, "the workers have not been launched (the box is starting or stopping)");
	for (unsigned i = 0; i < b->n_workers; i++) {
		const struct dp_worker *w = b->workers[i];
		uint64_t beat = __atomic_load_n(&w->beat_tsc, __ATOMIC_RELAXED);
		bool running = __atomic_load_n(&w->running, __ATOMIC_ACQUIRE);

		h->worker[i].age_ms = beat && now > beat ? (now - beat) / ms_tsc : 0;
		if (!started)
			continue;
		if (!running || beat == 0) {
			why(h, "worker %u (lcore %u): its loop is not running", i, w->lcore);
		} else if (h->worker[i].age_ms > h->bound_ms) {
			why(h, "worker %u (lcore %u): stuck, its loop has not gone round for %" PRIu64
			    " ms (bound %" PRIu64 " ms, --stall-ms)", i, w->lcore, h->worker[i].age_ms,
			    h->bound_ms);
		} else {
			h->worker[i].polling = true;
			h->workers_polling++;
		}
	}
	h->workers_ok = started && h->workers_polling == b->n_workers;
	h->healthy = h->workers_ok && h->ports_up == b->n_ports;
}

json_t *dp_health_json(const struct dp_box *b, const struct dp_health *h)
{
	json_t *o = json_object(), *ports = json_array(), *workers = json_array();

	for (unsigned i = 0; i < h->n_ports; i++)
		json_array_append_new(ports, json_pack("{s:I,s:s,s:b,s:I}", "port", (json_int_t)b->ports[i].id,
			"name", b->ports[i].name, "link_up", h->port[i].up,
			"speed_mbps", (json_int_t)h->port[i].speed_mbps));
	for (unsigned i = 0; i < h->n_workers; i++)
		json_array_append_new(workers, json_pack("{s:I,s:I,s:b,s:I}", "worker", (json_int_t)i,
			"lcore", (json_int_t)b->workers[i]->lcore, "polling", h->worker[i].polling,
			"heartbeat_age_ms", (json_int_t)h->worker[i].age_ms));
	json_object_set_new(o, "healthy", json_boolean(h->healthy));
	json_object_set_new(o, "reason", json_string(h->reason));
	json_object_set_new(o, "ports_up", json_integer(h->ports_up));
	json_object_set_new(o, "workers_polling", json_integer(h->workers_polling));
	json_object_set_new(o, "stall_bound_ms", json_integer((json_int_t)h->bound_ms));
	json_object_set_new(o, "ports", ports);
	json_object_set_new(o, "workers", workers);
	return o;
}
