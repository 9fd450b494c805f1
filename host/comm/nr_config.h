/* SPDX-License-Identifier: BSD-3-Clause */
/* Configuration checks (nr_config.c; the rest of its API is netreduce.h). */
#ifndef NR_CONFIG_H
#define NR_CONFIG_H

#include <stdbool.h>

#include "comm_internal.h"
#include "host/netreduce.h"

/* ring_window at most: the ring keeps NR_RECV_DEPTH (128) receives posted, and its
 * window of messages must stay below them (nr_allreduce_ring.c) */
#define NR_RING_WINDOW_MAX 64

/* nr_config_check, naming env variables (true) or struct fields (false) in messages. */

int nr_config_check_env(const struct nr_config *cfg, bool env);

/*
 * The caller's configuration grown to this library's struct nr_config
 * (netreduce.h: its first size bytes, the defaults after them) into full,
 * size sizeof(*full).  0, or NR_ERR_CONFIG with the message set when cfg's
 * size is no version's (not filled by nr_config_default or _from_env).
 */
int nr_config_take(const struct nr_config *cfg, struct nr_config *full);

/* short_dscp's default: AF11, a low-priority class (tolerant messages' packets). */
#define NR_SHORT_DSCP_DEFAULT 10

/*
 * A comma-separated list (NR_BOX's, NR_RACKS', NR_RAILS') into out, max rows
 * of width characters each, NUL-terminated: the number of items, or -1 when
 * there is none, or an empty item, one of width characters or more, more
 * than max, a trailing comma.
 */
int nr_list_split(const char *s, char *out, size_t width, unsigned max);

#define NR_RACKS_MAX 64
/* "4,4" into sizes (at most max): the number of racks, or -1 when malformed. */
int nr_racks_parse(const char *s, int *sizes, int max);

/* NR_BOX's list into out (at most max, each ip:port with a port): the number
 * of boxes, or -1 when malformed (an empty item, one too long, not ip:port). */
int nr_boxes_parse(const char *s, char (*out)[NR_BOX_ADDR_LEN], unsigned max);

#endif /* NR_CONFIG_H */
