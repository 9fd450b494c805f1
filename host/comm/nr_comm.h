/* SPDX-License-Identifier: BSD-3-Clause */
/* The communicator (nr_comm.c): what the collectives use of it. */
#ifndef NR_COMM_H
#define NR_COMM_H

#include <stdbool.h>

#include "comm_internal.h"

/*
 * A communicator of cfg->world ranks in one ring (cfg checked by the caller):
 * transport, both rings, rendezvous (registering the box ring with the box
 * when cfg->switch_addr is set), connect, barrier.  tcp_only: the rendezvous
 * alone (every rank's address, barriers), no transport.  0 or an nr_err with
 * nr_comm_last_error(NULL) set.
 */
int nr_flat_init(const struct nr_config *cfg, bool tcp_only, struct nr_comm **comm);
/*
 * Element type t's box job, at the first nr_allreduce of that type
 * (collective; the FP32 one opens at init): its rings' QPs and regions,
 * the rows exchanged and the job registered with the box (rank 0: every rank
 * must ask for the same type, nr_exchange_box_set), rings connected,
 * barrier.  0 or an nr_err with the message set.
 */
int nr_box_set_open(struct nr_comm *c, unsigned t);
/* Barrier (when healthy), the jobs destroyed on the box (rank 0), everything closed. */
void nr_flat_destroy(struct nr_comm *c);

/* Keep NR_RECV_DEPTH receives posted on r's receiving QP. */
int nr_post_recvs(struct nr_comm *c, struct nr_ring *r);

#endif /* NR_COMM_H */
