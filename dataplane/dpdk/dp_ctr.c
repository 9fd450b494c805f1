/* SPDX-License-Identifier: BSD-3-Clause */
/* The box's counter names (see dp_ctr.h). */
#include <rte_common.h>

#include "dataplane/dpdk/dp_ctr.h"

const char *const dp_ctr_names[DP_CTR_MAX] = { DP_FOREACH_CTR(NR_CTR_NAME) };
#define DP_CTR_UNIT(e, n, u, d) [e] = u,
#define DP_CTR_HELP(e, n, u, d) [e] = d,
const char *const dp_ctr_units[DP_CTR_MAX] = { DP_FOREACH_CTR(DP_CTR_UNIT) };
const char *const dp_ctr_help[DP_CTR_MAX] = { DP_FOREACH_CTR(DP_CTR_HELP) };
#undef DP_CTR_UNIT
#undef DP_CTR_HELP

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
