/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The operator's static MAC -> port map of switch mode (--l2-static FILE;
 * dp_l2.h, "Static entries"): one "MAC PORT" a line, PORT a DPDK port id of
 * the box, '#' to the end of a line a comment, blank lines ignored.
 */
#ifndef NR_DP_L2_STATIC_H
#define NR_DP_L2_STATIC_H

#include <stddef.h>
#include <stdint.h>

#include "dataplane/dpdk/dp_l2.h"

/*
 * Every entry of path into t, each port checked against is_port (a port of
 * the box): how many, or -1 with err naming the file, the line and what to
 * do.  Entries of a file refused part-way stay (the box does not start).
 */
int dp_l2_static_load(struct dp_l2 *t, const char *path, uint32_t now,
		      int (*is_port)(void *arg, uint16_t port), void *arg, char *err, size_t errlen);

#endif /* NR_DP_L2_STATIC_H */
