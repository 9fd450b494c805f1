/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DPDK telemetry commands of the box:
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

#include "dataplane/dpdk/dp_jobs.h"
#include "dataplane/dpdk/dp_stats.h"
#include "dataplane/dpdk/dp_telemetry.h"

/* Telemetry callbacks get no context: they read the registered box. */
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
#define DP_PORT_TEL(f) rte_tel_data_add_dict_u64(c, #f, st.f);
			DP_FOREACH_PORT_STAT(DP_PORT_TEL)
#undef DP_PORT_TEL
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
		rte_tel_data_add_dict_u64(d, "channels", st->n_channels);
		for (unsigned i = 0; i < NR_ECTR_MAX; i++)
			rte_tel_data_add_dict_u64(d, nr_engine_ctr_names[i], st->ctr[i]);
	}
	free(st);
	return rc;
}

static const struct {
	const char *cmd;
	telemetry_cb fn;
	const char *help;
} tel_cmds[] = {
	{ "/netreduce/stats", tel_stats, "Box-wide counters of netreduce-switch (sums over lcores). No parameters" },
	{ "/netreduce/lcore", tel_lcore, "Counters of one worker. Parameter: worker index" },
	{ "/netreduce/ports", tel_ports, "Per-port statistics of netreduce-switch. No parameters" },
	{ "/netreduce/engine", tel_engine, "Aggregation engine counters (sums over workers). No parameters" },
	{ "/netreduce/jobs", tel_jobs, "Ids of the jobs on the box. No parameters" },
	{ "/netreduce/job", tel_job, "State and counters of one job. Parameter: job id" },
};

/* Every command comes here: tel_lock keeps the box alive while its handler runs. */
static int tel_dispatch(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int rc = -EINVAL;

	pthread_mutex_lock(&tel_lock);
	for (unsigned i = 0; i < RTE_DIM(tel_cmds); i++)
		if (strcmp(cmd, tel_cmds[i].cmd) == 0)
			rc = tel_cmds[i].fn(cmd, params, d);
	pthread_mutex_unlock(&tel_lock);
	return rc;
}

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
	for (unsigned i = 0; i < RTE_DIM(tel_cmds); i++)
		rc |= rte_telemetry_register_cmd(tel_cmds[i].cmd, tel_dispatch, tel_cmds[i].help);
	return rc ? -EINVAL : 0;
}
