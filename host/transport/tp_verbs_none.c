/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs transport of a build without rdma-core: open explains why it cannot work. */
#include <stdio.h>

#include "tp_internal.h"

/* as tp_verbs.c tunes: the RNIC keeps its own window */
static void verbs_tune(struct nr_tp_config *cfg, const struct nr_tp_wish *wish)
{
	cfg->timeout = nr_tp_wish_timeout(wish, 8);
}

static struct nr_tp *verbs_open(const struct nr_tp_config *cfg, char *err, size_t errlen)
{
	snprintf(err, errlen, "verbs: built without rdma-core (install libibverbs-dev and "
		 "rebuild, or use NR_TRANSPORT=soft)");
	return NULL;
}

const struct nr_tp_ops nr_tp_verbs_ops = {
	.kind = "verbs",
	.tune = verbs_tune,
	.open = verbs_open,
};
