// SPDX-License-Identifier: BSD-3-Clause
/*
 * Backend "sw": the DPDK dataplane, reached through the struct nr_sw_channel
 * the box provides (command rings to its lcores).  Nothing is decided here:
 * nr_ctl has validated the spec and chosen the id; the engine on the lcore
 * has the final word (-EEXIST, -ENOMEM) and the channel reports it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/nr_control.h"

struct sw_priv {
	struct nr_sw_channel ch;
};

static struct nr_sw_channel *chan(struct nr_backend *b)
{
	return &((struct sw_priv *)b->priv)->ch;
}

static int sw_job_create(struct nr_backend *b, uint32_t id, const struct nr_job_spec *spec,
			 uint32_t *credits, char *err, size_t errlen)
{
	struct nr_sw_channel *ch = chan(b);
	int rc;

	if (!ch->job_add) {
		snprintf(err, errlen, "sw: the dataplane channel cannot add jobs");
		return -ENOTSUP;
	}
	if (errlen)
		err[0] = '\0';
	rc = ch->job_add(ch->ctx, id, spec, credits, err, errlen);
	if (rc && errlen && !err[0])
		snprintf(err, errlen, "sw: dataplane refused job %u: %s", id, strerror(rc < 0 ? -rc : rc));
	return rc > 0 ? -rc : rc;
}

static int sw_job_destroy(struct nr_backend *b, uint32_t id)
{
	struct nr_sw_channel *ch = chan(b);

	return ch->job_del ? ch->job_del(ch->ctx, id) : -ENOTSUP;
}

static int sw_job_status(struct nr_backend *b, uint32_t id, struct nr_job_stats *st)
{
	struct nr_sw_channel *ch = chan(b);

	return ch->job_stats ? ch->job_stats(ch->ctx, id, st) : -ENOTSUP;
}

static json_t *sw_stats(struct nr_backend *b)
{
	struct nr_sw_channel *ch = chan(b);

	return ch->stats ? ch->stats(ch->ctx) : json_object();
}

static json_t *sw_info(struct nr_backend *b)
{
	struct nr_sw_channel *ch = chan(b);

	return ch->info ? ch->info(ch->ctx) : json_object();
}

static void sw_destroy(struct nr_backend *b)
{
	free(b->priv);
	free(b);
}

static const struct nr_backend_ops sw_ops = {
	.name = "sw",
	.job_create = sw_job_create,
	.job_destroy = sw_job_destroy,
	.job_status = sw_job_status,
	.stats = sw_stats,
	.info = sw_info,
	.destroy = sw_destroy,
};

struct nr_backend *nr_backend_sw_create(const struct nr_sw_channel *ch)
{
	struct nr_backend *b;
	struct sw_priv *p;

	if (!ch)
		return NULL;
	b = calloc(1, sizeof(*b));
	p = calloc(1, sizeof(*p));
	if (!b || !p) {
		free(b);
		free(p);
		return NULL;
	}
	p->ch = *ch;
	b->ops = &sw_ops;
	b->priv = p;
	return b;
}
