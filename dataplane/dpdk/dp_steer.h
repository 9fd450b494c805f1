/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Steering (dp_steer.c): every frame of a channel should arrive on the RX
 * queue of the worker that runs the channel, so that no worker hands it
 * over.  With several workers each port has an RX queue per worker where it
 * can (worker w polls queue w of every port).  A port whose PMD has rte_flow
 * gets, per connection of every channel, a rule ETH / IPV4 (src, dst) /
 * UDP (src port, dst 4791) -> QUEUE of the owner, for the data (the sender's
 * source port) and for the ACKs (the receiver's); every other port, and any
 * connection whose source ports the hosts did not report, falls back to the
 * owner map's hand-off through the owner's ring (counted: handoff_out,
 * handoff_in).  Called on the control side (dp_box.c at port setup, dp_jobs.c
 * under box->ctl_lock); the loop never calls it.
 */
#ifndef NR_DP_STEER_H
#define NR_DP_STEER_H

#include "dataplane/dpdk/dp_state.h"

/* What steering port p gets (p->steer and p->steer_why), after its queues are set up. */
void dp_steer_probe(struct dp_box *b, struct dp_port *p);
/* The rules of channel ch on every rte_flow port; failures are logged, the hand-off remains. */
void dp_steer_add(struct dp_box *b, struct dp_chan *ch);
/* Remove the rules of channel ch. */
void dp_steer_del(struct dp_box *b, struct dp_chan *ch);
/* "rte_flow", "software", "none". */
const char *dp_steer_name(enum dp_steer s);

#endif /* NR_DP_STEER_H */
