/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs transport of a build without rdma-core: open explains why it cannot work. */
#include <stdio.h>

#include "tp_internal.h"

static struct nr_tp *verbs_open(const struct nr_tp_config *cfg, char *err, size_t errlen)
{
	snprintf(err, errlen, "verbs: built without rdma-core (install libibverbs-dev and "
		 "rebuild, or use NR_TRANSPORT=soft)");
	return NULL;
}

const struct nr_tp_ops nr_tp_verbs_ops = {
	.kind = "verbs",
	.open = verbs_open,
};
