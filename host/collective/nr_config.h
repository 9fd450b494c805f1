/* SPDX-License-Identifier: BSD-3-Clause */
/* Configuration checks (nr_config.c; the rest of its API is netreduce.h). */
#ifndef NR_CONFIG_H
#define NR_CONFIG_H

#include <stdbool.h>

#include "host/netreduce.h"

/* ring_window at most: the ring keeps NR_RECV_DEPTH (128) receives posted, and its
 * window of messages must stay below them (nr_allreduce_ring.c) */
#define NR_RING_WINDOW_MAX 64

/* nr_config_check, naming env variables (true) or struct fields (false) in messages. */
/* The soft transport's profile when soft_profile is NULL (host/README.md). */
#define NR_SOFT_PROFILE_DEFAULT "rnic"

int nr_config_check_env(const struct nr_config *cfg, bool env);

/* short_dscp's default: AF11, a low-priority class (tolerant messages' packets). */
#define NR_SHORT_DSCP_DEFAULT 10

#define NR_RACKS_MAX 64
/* "4,4" into sizes (at most max): the number of racks, or -1 when malformed. */
int nr_racks_parse(const char *s, int *sizes, int max);

#endif /* NR_CONFIG_H */
