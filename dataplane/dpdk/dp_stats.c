/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters out: names, the JSON the control API returns (stats, info), the
 * --stats-interval line, and the DPDK telemetry commands
 *   /netreduce/stats          box-wide counters (sums over lcores)
 *   /netreduce/lcore,<i>      one worker's counters
 *   /netreduce/ports          per-port rte_eth_stats
 *   /netreduce/engine         engine counters (sums over workers)
 *   /netreduce/jobs           job ids
 *   /netreduce/job,<id>       one job's state and counters
 * read with: dpdk-telemetry.py -f <file-prefix>, then e.g. /netreduce/stats
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "dataplane/dpdk/dp_box.h"

const char *const dp_ctr_names[DP_CTR_MAX] = {
#define DP_CTR_NAME(e, n, d) [DP_CTR_##e] = n,
	DP_FOREACH_CTR(DP_CTR_NAME)
#undef DP_CTR_NAME
};

const char *const dp_ctr_help[DP_CTR_MAX] = {
#define DP_CTR_HELP(e, n, d) [DP_CTR_##e] = d,
	DP_FOREACH_CTR(DP_CTR_HELP)
#undef DP_CTR_HELP
};

/* Lower-case names of the malformed reasons, built from the enum names. */
#define DP_MAL_NAME(n, s) [NR_BAD_##n] = #n,
static const char *const mal_upper[NR_BAD_MAX] = { NR_FOREACH_MALFORMED(DP_MAL_NAME) };
#undef DP_MAL_NAME
static char mal_lower[NR_BAD_MAX][32];
const char *const dp_malformed_names[NR_BAD_MAX] = {
#define DP_MAL_PTR(n, s) [NR_BAD_##n] = mal_lower[NR_BAD_##n],
	NR_FOREACH_MALFORMED(DP_MAL_PTR)
#undef DP_MAL_PTR
};

RTE_INIT(dp_malformed_names_init)
{
	for (unsigned i = 0; i < NR_BAD_MAX; i++) {
		size_t j;

		for (j = 0; mal_upper[i][j] && j + 1 < sizeof(mal_lower[i]); j++)
			mal_lower[i][j] = (char)(mal_upper[i][j] | 0x20);
		mal_lower[i][j] = '\0';
	}
}

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
	if (rte_eth_stats_get(p->id, &st) == 0) {
		json_object_set_new(o, "ipackets", json_integer((json_int_t)st.ipackets));
		json_object_set_new(o, "opackets", json_integer((json_int_t)st.opackets));
		json_object_set_new(o, "ibytes", json_integer((json_int_t)st.ibytes));
		json_object_set_new(o, "obytes", json_integer((json_int_t)st.obytes));
		json_object_set_new(o, "imissed", json_integer((json_int_t)st.imissed));
		json_object_set_new(o, "ierrors", json_integer((json_int_t)st.ierrors));
		json_object_set_new(o, "oerrors", json_integer((json_int_t)st.oerrors));
		json_object_set_new(o, "rx_nombuf", json_integer((json_int_t)st.rx_nombuf));
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
	return o;
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
	json_object_set_new(o, "ports", ports);
	json_object_set_new(o, "max_jobs", json_integer((json_int_t)NR_MAX_JOBS * b->n_workers));
	json_object_set_new(o, "max_conns", json_integer(NR_MAX_CONNS));
	json_object_set_new(o, "max_mtu", json_integer(NR_MAX_MTU));
	return o;
}

void dp_stats_line(struct dp_box *b, char *buf, size_t len)
{
	struct dp_ctr s;

	dp_box_counters(b, &s);
	snprintf(buf, len,
		 "rx %lu tx %lu fwd %lu flood %lu held %lu results %lu resent %lu dropped %lu "
		 "(malformed %lu engine %lu tx_dropped %lu)",
		 s.c[DP_CTR_RX], s.c[DP_CTR_TX], s.c[DP_CTR_FORWARDED], s.c[DP_CTR_FLOODED],
		 s.c[DP_CTR_HELD], s.c[DP_CTR_RESULTS], s.c[DP_CTR_RESENT], s.c[DP_CTR_DROPPED],
		 s.c[DP_CTR_MALFORMED], s.c[DP_CTR_ENGINE_DROP], s.c[DP_CTR_TX_DROPPED]);
}

/* ---- telemetry (callbacks get no context: the registered box) ---------- */

/* The box the telemetry callbacks read; tel_lock keeps it alive while they run. */
static struct dp_box *tel_box;
static pthread_mutex_t tel_lock = PTHREAD_MUTEX_INITIALIZER;

void dp_telemetry_forget(struct dp_box *b)
{
	pthread_mutex_lock(&tel_lock);
	if (tel_box == b)
		tel_box = NULL;
	pthread_mutex_unlock(&tel_lock);
}

#define TEL_WRAP(fn)                                                           \
	static int fn##_locked(const char *cmd, const char *params, struct rte_tel_data *d) \
	{                                                                     \
		int rc;                                                       \
		pthread_mutex_lock(&tel_lock);                                \
		rc = fn(cmd, params, d);                                      \
		pthread_mutex_unlock(&tel_lock);                              \
		return rc;                                                    \
	}

static void tel_ctr(struct rte_tel_data *d, const struct dp_ctr *c)
{
	rte_tel_data_start_dict(d);
	for (unsigned i = 0; i < DP_CTR_MAX; i++)
		rte_tel_data_add_dict_u64(d, dp_ctr_names[i], c->c[i]);
	for (unsigned i = 1; i < NR_BAD_MAX; i++) {
		char name[64];

		snprintf(name, sizeof(name), "malformed.%s", dp_malformed_names[i]);
		rte_tel_data_add_dict_u64(d, name, c->malformed[i]);
	}
	for (unsigned i = 0; i < NR_ECTR_MAX; i++) {
		char name[64];

		snprintf(name, sizeof(name), "engine_drop.%s", nr_engine_ctr_names[i]);
		rte_tel_data_add_dict_u64(d, name, c->engine_drop[i]);
	}
}

static int tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct dp_ctr s;

	if (tel_box == NULL)
		return -ENODEV;
	dp_box_counters(tel_box, &s);
	tel_ctr(d, &s);
	return 0;
}

static int tel_lcore(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct dp_ctr s;
	unsigned long i;
	char *end;

	if (tel_box == NULL || params == NULL || *params == '\0')
		return -EINVAL;
	i = strtoul(params, &end, 10);
	if (*end != '\0' || i >= tel_box->n_workers)
		return -EINVAL;
	dp_ctr_read(&tel_box->workers[i]->ctr, &s);
	tel_ctr(d, &s);
	return 0;
}

static int tel_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	if (tel_box == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	for (unsigned i = 0; i < tel_box->n_ports; i++) {
		const struct dp_port *p = &tel_box->ports[i];
		struct rte_tel_data *c = rte_tel_data_alloc();
		struct rte_eth_stats st;

		if (c == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_u64(c, "port", p->id);
		rte_tel_data_add_dict_string(c, "driver", p->driver);
		if (rte_eth_stats_get(p->id, &st) == 0) {
			rte_tel_data_add_dict_u64(c, "ipackets", st.ipackets);
			rte_tel_data_add_dict_u64(c, "opackets", st.opackets);
			rte_tel_data_add_dict_u64(c, "ibytes", st.ibytes);
			rte_tel_data_add_dict_u64(c, "obytes", st.obytes);
			rte_tel_data_add_dict_u64(c, "imissed", st.imissed);
			rte_tel_data_add_dict_u64(c, "ierrors", st.ierrors);
			rte_tel_data_add_dict_u64(c, "oerrors", st.oerrors);
			rte_tel_data_add_dict_u64(c, "rx_nombuf", st.rx_nombuf);
		}
		rte_tel_data_add_dict_container(d, p->name, c, 0);
	}
	return 0;
}

static int tel_engine(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint64_t e[NR_ECTR_MAX];
	int rc;

	if (tel_box == NULL)
		return -ENODEV;
	rc = dp_box_engine_counters(tel_box, e);
	if (rc)
		return rc;
	rte_tel_data_start_dict(d);
	for (unsigned i = 0; i < NR_ECTR_MAX; i++)
		rte_tel_data_add_dict_u64(d, nr_engine_ctr_names[i], e[i]);
	return 0;
}

static int tel_jobs(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint32_t ids[NR_MAX_JOBS * DP_MAX_WORKERS];
	unsigned n;

	if (tel_box == NULL)
		return -ENODEV;
	n = dp_box_jobs(tel_box, ids, NULL, RTE_DIM(ids));
	rte_tel_data_start_array(d, RTE_TEL_U64_VAL);
	for (unsigned i = 0; i < n; i++)
		rte_tel_data_add_array_u64(d, ids[i]);
	return 0;
}

static int tel_job(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct nr_job_stats *st;
	unsigned long id;
	char *end;
	int rc;

	if (tel_box == NULL || params == NULL || *params == '\0')
		return -EINVAL;
	id = strtoul(params, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return -ENOMEM;
	rc = dp_job_stats(tel_box, (uint32_t)id, st);
	if (rc == 0) {
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_u64(d, "id", id);
		rte_tel_data_add_dict_string(d, "state", st->state == NR_JOB_ACTIVE ? "active" : "failed");
		rte_tel_data_add_dict_string(d, "reason", st->reason);
		rte_tel_data_add_dict_u64(d, "next_emit", st->next_emit);
		rte_tel_data_add_dict_u64(d, "next_release", st->next_release);
		rte_tel_data_add_dict_u64(d, "completed", st->completed);
		for (unsigned i = 0; i < NR_ECTR_MAX; i++)
			rte_tel_data_add_dict_u64(d, nr_engine_ctr_names[i], st->ctr[i]);
	}
	free(st);
	return rc;
}

TEL_WRAP(tel_stats)
TEL_WRAP(tel_lcore)
TEL_WRAP(tel_ports)
TEL_WRAP(tel_engine)
TEL_WRAP(tel_jobs)
TEL_WRAP(tel_job)

int dp_telemetry_register(struct dp_box *b)
{
	static bool done;
	int rc = 0;

	pthread_mutex_lock(&tel_lock);
	tel_box = b;
	pthread_mutex_unlock(&tel_lock);
	if (done)
		return 0;
	done = true;
	rc |= rte_telemetry_register_cmd("/netreduce/stats", tel_stats_locked,
					 "Box-wide counters of netreduce-switch (sums over lcores). No parameters");
	rc |= rte_telemetry_register_cmd("/netreduce/lcore", tel_lcore_locked,
					 "Counters of one worker. Parameter: worker index");
	rc |= rte_telemetry_register_cmd("/netreduce/ports", tel_ports_locked,
					 "Per-port statistics of netreduce-switch. No parameters");
	rc |= rte_telemetry_register_cmd("/netreduce/engine", tel_engine_locked,
					 "Aggregation engine counters (sums over workers). No parameters");
	rc |= rte_telemetry_register_cmd("/netreduce/jobs", tel_jobs_locked,
					 "Ids of the jobs on the box. No parameters");
	rc |= rte_telemetry_register_cmd("/netreduce/job", tel_job_locked,
					 "State and counters of one job. Parameter: job id");
	return rc ? -EINVAL : 0;
}
