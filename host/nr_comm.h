/* SPDX-License-Identifier: BSD-3-Clause */
/* The communicator (nr_comm.c): what the collectives use of it. */
#ifndef NR_COMM_H
#define NR_COMM_H

#include "comm_internal.h"

/* Keep NR_RECV_DEPTH receives posted on r's receiving QP. */
int nr_post_recvs(struct nr_comm *c, struct nr_ring *r);

#endif /* NR_COMM_H */
