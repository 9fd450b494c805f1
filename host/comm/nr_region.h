/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The registered regions of a communicator's rings (nr_region.c).  User
 * buffers are never registered: the collectives copy through these.
 *   box channel [staging slots | send slots], each slots * msg_size bytes,
 *               slots = clamp(pool_msgs, 16, 64); r->cap = slots
 *   plain ring  [stage0 | stage1 | work], each r->cap bytes
 */
#ifndef NR_REGION_H
#define NR_REGION_H

#include <stddef.h>

#include "comm_internal.h"

/* The region of box channel ring (NR_RING_BOX + k). */
int nr_box_region_init(struct nr_comm *c, int ring);
/* (Re)make the plain ring's region with sections of cap bytes (the old one goes). */
int nr_plain_region_init(struct nr_comm *c, size_t cap);

#endif /* NR_REGION_H */
