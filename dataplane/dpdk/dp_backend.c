/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The box as the control API's backend "sw" (struct nr_backend_ops of
 * control/api/nr_control.h): each operation goes to the box's jobs (dp_jobs.c),
 * which reach the owning lcore through its command ring, or to its stats
 * (dp_stats.c).  Nothing is decided here: the control API has validated the
 * spec and chosen the id; the engine on the lcore has the last word.
 */
#include "dataplane/dpdk/dp_backend.h"
#include "dataplane/dpdk/dp_health.h"
#include "dataplane/dpdk/dp_jobs.h"
#include "dataplane/dpdk/dp_snap.h"
#include "dataplane/dpdk/dp_stats.h"
#include "proto/nr_text.h"

static int be_job_create(struct nr_backend *be, uint32_t id, const struct nr_job_spec *spec,
			 uint32_t *credits, char *err, size_t errlen)
{
	return dp_job_add(be->priv, id, spec, credits, err, errlen);
}

static int be_job_destroy(struct nr_backend *be, uint32_t id)
{
	return dp_job_del(be->priv, id);
}

static int be_job_status(struct nr_backend *be, uint32_t id, struct nr_job_stats *st)
{
	return dp_job_stats(be->priv, id, st);
}

static json_t *be_stats(struct nr_backend *be)
{
	return dp_stats_json(be->priv);
}

static json_t *be_info(struct nr_backend *be)
{
	return dp_info_json(be->priv);
}

static json_t *be_health(struct nr_backend *be)
{
	struct dp_health h;

	dp_health_check(be->priv, &h);
	return dp_health_json(be->priv, &h);
}

/* What the tenants' reservations share out: NR_MAX_JOBS channels a worker
 * (dp_jobs.c place) and the admission budget in mbufs (admit). */
static void be_capacity(struct nr_backend *be, struct nr_backend_cap *cap)
{
	const struct dp_box *b = be->priv;

	cap->channels = NR_MAX_JOBS * b->n_workers;
	if (cap->channels > DP_MAX_CHANS)
		cap->channels = DP_MAX_CHANS;
	cap->mbufs = b->mbuf_budget;
}

static void be_job_published(struct nr_backend *be, const uint32_t *ids, unsigned n,
			     struct nr_job_stats *const *st, int *rc)
{
	dp_snap_jobs(be->priv, ids, n, st, rc);
}

static void static_row(void *arg, const uint8_t mac[6], uint16_t port, unsigned job_pins)
{
	char m[NR_MAC_STRLEN];

	json_array_append_new(arg, json_pack("{s:s,s:i,s:i}", "mac", nr_mac_str(mac, m), "port",
					     (int)port, "job_pins", (int)job_pins));
}

static int be_l2_static(struct nr_backend *be, const uint8_t *mac, int port, json_t **list,
			char *err, size_t errlen)
{
	struct dp_box *b = be->priv;

	if (mac)
		return dp_box_l2_static(b, mac, port, err, errlen);
	*list = json_array();
	pthread_mutex_lock(&b->ctl_lock);
	dp_l2_static_each(&b->l2, static_row, *list);
	pthread_mutex_unlock(&b->ctl_lock);
	return 0;
}

static const struct nr_backend_ops dp_backend_ops = {
	.name = "sw",
	.job_create = be_job_create,
	.job_destroy = be_job_destroy,
	.job_status = be_job_status,
	.stats = be_stats,
	.info = be_info,
	.health = be_health,
	.capacity = be_capacity,
	.job_published = be_job_published,
	.l2_static = be_l2_static,
};

struct nr_backend *dp_backend_create(struct dp_box *b)
{
	return nr_backend_new(&dp_backend_ops, b);
}
