/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters out: box-wide sums, the JSON the control API returns (stats,
 * info) and the --stats-interval line.  DPDK telemetry: dp_telemetry.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include <rte_ethdev.h>

#include "dataplane/dpdk/dp_jobs.h"
#include "dataplane/dpdk/dp_stats.h"
#include "dataplane/dpdk/dp_steer.h"

void dp_box_counters(const struct dp_box *b, struct dp_ctr *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned i = 0; i < b->n_workers; i++) {
		struct dp_ctr one;

		dp_ctr_read(&b->workers[i]->ctr, &one);
		dp_ctr_add(sum, &one);
	}
}

static json_t *ctr_json(const struct dp_ctr *c)
{
	json_t *o = json_object(), *mal = json_object(), *ed = json_object();

	for (unsigned i = 0; i < DP_CTR_MAX; i++)
		json_object_set_new(o, dp_ctr_names[i], json_integer((json_int_t)c->c[i]));
	for (unsigned i = 1; i < NR_BAD_MAX; i++)
		json_object_set_new(mal, dp_malformed_names[i], json_integer((json_int_t)c->malformed[i]));
	for (unsigned i = 0; i < NR_ECTR_MAX; i++)
		if (c->engine_drop[i])
			json_object_set_new(ed, nr_engine_ctr_names[i], json_integer((json_int_t)c->engine_drop[i]));
	json_object_set_new(o, "malformed_by_reason", mal);
	json_object_set_new(o, "engine_drop_by_reason", ed);
	return o;
}

static json_t *port_json(const struct dp_port *p)
{
	struct rte_eth_stats st;
	char mac[RTE_ETHER_ADDR_FMT_SIZE];
	json_t *o = json_object();

	rte_ether_format_addr(mac, sizeof(mac), &p->mac);
	json_object_set_new(o, "port", json_integer(p->id));
	json_object_set_new(o, "name", json_string(p->name));
	json_object_set_new(o, "driver", json_string(p->driver));
	json_object_set_new(o, "mac", json_string(mac));
	json_object_set_new(o, "rx_queues", json_integer(p->n_rxq));
	json_object_set_new(o, "steering", json_string(dp_steer_name(p->steer)));
	if (rte_eth_stats_get(p->id, &st) == 0) {
#define DP_PORT_JSON(f) json_object_set_new(o, #f, json_integer((json_int_t)st.f));
		DP_FOREACH_PORT_STAT(DP_PORT_JSON)
#undef DP_PORT_JSON
	}
	return o;
}

/*
 * What the box holds right now: packet buffers out of the pool (in rx/tx
 * rings, held by the engine, in flight between stages) and contributions the
 * engine holds.  At idle both return to their level before the first job; the
 * soak test checks that after every job.
 */
static json_t *memory_json(const struct dp_box *b, const struct dp_ctr *sum)
{
	json_t *o = json_object();

	json_object_set_new(o, "mbufs", json_integer(b->pool ? (json_int_t)b->pool->size : 0));
	json_object_set_new(o, "mbufs_in_use",
			    json_integer(b->pool ? (json_int_t)rte_mempool_in_use_count(b->pool) : 0));
	json_object_set_new(o, "held_now",
			    json_integer((json_int_t)(sum->c[DP_CTR_HELD] - sum->c[DP_CTR_RESULTS] -
						      sum->c[DP_CTR_FREED_HELD])));
	return o;
}

/* The L2 table: its pins (jobs' and static) and the pins it refused, by why (dp_l2.h). */
static json_t *l2_json(struct dp_box *b)
{
	json_t *o;

	pthread_mutex_lock(&b->ctl_lock);
	o = json_pack("{s:i,s:i,s:I,s:I,s:I}", "pinned", (int)dp_l2_pinned(&b->l2), "pin_cap",
		      (int)b->l2.pin_cap, "pins_refused_owner", (json_int_t)b->l2.refused_owner,
		      "pins_refused_cap", (json_int_t)b->l2.refused_cap, "pins_refused_full",
		      (json_int_t)b->l2.refused_full);
	pthread_mutex_unlock(&b->ctl_lock);
	return o;
}

json_t *dp_stats_json(struct dp_box *b)
{
	json_t *o = json_object(), *ports = json_array(), *lcores = json_array(), *eng = json_object();
	uint64_t ectr[NR_ECTR_MAX];
	struct dp_ctr sum;

	for (unsigned i = 0; i < b->n_ports; i++)
		json_array_append_new(ports, port_json(&b->ports[i]));
	for (unsigned i = 0; i < b->n_workers; i++) {
		struct dp_ctr one;
		json_t *l = json_object();

		dp_ctr_read(&b->workers[i]->ctr, &one);
		json_object_set_new(l, "worker", json_integer(i));
		json_object_set_new(l, "lcore", json_integer(b->workers[i]->lcore));
		json_object_set_new(l, "counters", ctr_json(&one));
		json_array_append_new(lcores, l);
	}
	dp_box_counters(b, &sum);
	if (dp_box_engine_counters(b, ectr) == 0)
		for (unsigned i = 0; i < NR_ECTR_MAX; i++)
			json_object_set_new(eng, nr_engine_ctr_names[i], json_integer((json_int_t)ectr[i]));
	json_object_set_new(o, "ports", ports);
	json_object_set_new(o, "lcores", lcores);
	json_object_set_new(o, "totals", ctr_json(&sum));
	json_object_set_new(o, "engine", eng);
	json_object_set_new(o, "memory", memory_json(b, &sum));
	json_object_set_new(o, "l2", l2_json(b));
	return o;
}

/* The pool and the admission budget (dp_jobs.c): what jobs could hold. */
static json_t *mbufs_json(struct dp_box *b)
{
	uint64_t committed = 0, refused;

	pthread_mutex_lock(&b->ctl_lock);
	for (unsigned i = 0; i < b->n_chans; i++)
		committed += nr_job_held_frames(b->chans[i].spec);
	refused = b->mbufs_refused;
	pthread_mutex_unlock(&b->ctl_lock);
	return json_pack("{s:I,s:I,s:I,s:I,s:I}", "pool", (json_int_t)b->pool->size,
			 "free", (json_int_t)rte_mempool_avail_count(b->pool),
			 "budget", (json_int_t)b->mbuf_budget, "committed", (json_int_t)committed,
			 "jobs_refused", (json_int_t)refused);
}

json_t *dp_info_json(struct dp_box *b)
{
	json_t *o = json_object(), *ports = json_array(), *lcores = json_array();

	for (unsigned i = 0; i < b->n_ports; i++)
		json_array_append_new(ports, port_json(&b->ports[i]));
	for (unsigned i = 0; i < b->n_workers; i++)
		json_array_append_new(lcores, json_integer(b->workers[i]->lcore));
	json_object_set_new(o, "backend", json_string("sw"));
	json_object_set_new(o, "name", json_string("sw"));
	json_object_set_new(o, "mode", json_string(b->cfg.mode == DP_MODE_SWITCH ? "switch" : "one-armed"));
	json_object_set_new(o, "kernel", json_string(b->kernel_name ? b->kernel_name : "?"));
	json_object_set_new(o, "lcores", lcores);
	json_object_set_new(o, "workers", json_integer(b->n_workers));
	json_object_set_new(o, "max_channels", json_integer(NR_MAX_CHANNELS));
	json_object_set_new(o, "ports", ports);
	json_object_set_new(o, "max_jobs", json_integer((json_int_t)NR_MAX_JOBS * b->n_workers));
	json_object_set_new(o, "max_conns", json_integer(NR_MAX_CONNS));
	json_object_set_new(o, "max_mtu", json_integer(NR_MAX_MTU));
	json_object_set_new(o, "mbufs", mbufs_json(b));
	return o;
}

void dp_stats_line(struct dp_box *b, char *buf, size_t len)
{
	uint64_t e[NR_ECTR_MAX];
	struct dp_ctr s;
	int n;

	dp_box_counters(b, &s);
	n = snprintf(buf, len,
		 "rx %lu tx %lu fwd %lu flood %lu held %lu results %lu resent %lu dropped %lu "
		 "(malformed %lu engine %lu tx_dropped %lu) generated %lu",
		 s.c[DP_CTR_RX], s.c[DP_CTR_TX], s.c[DP_CTR_FORWARDED], s.c[DP_CTR_FLOODED],
		 s.c[DP_CTR_HELD], s.c[DP_CTR_RESULTS], s.c[DP_CTR_RESENT], s.c[DP_CTR_DROPPED],
		 s.c[DP_CTR_MALFORMED], s.c[DP_CTR_ENGINE_DROP], s.c[DP_CTR_TX_DROPPED],
		 s.c[DP_CTR_GENERATED]);
	/* the status monitor's NAKs by reason, while the workers serve commands */
	if (n > 0 && (size_t)n < len && dp_box_engine_counters(b, e) == 0)
		snprintf(buf + n, len - (size_t)n, " (nak gap %lu rearm %lu probe %lu hold %lu)",
			 e[NR_ECTR_NAK_GAP], e[NR_ECTR_NAK_REARM], e[NR_ECTR_NAK_PROBE],
			 e[NR_ECTR_NAK_HOLD]);
}
