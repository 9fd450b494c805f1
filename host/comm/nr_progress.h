/* SPDX-License-Identifier: BSD-3-Clause */
/* Progress of a communicator's transport (nr_progress.c). */
#ifndef NR_PROGRESS_H
#define NR_PROGRESS_H

#include "comm_internal.h"

/* Let the transport run (ACKs, retransmissions) while waiting for something else. */
void nr_idle_progress(struct nr_comm *c);
/* Poll the transport: backlog first. Returns completions, 0, or an nr_err. */
int nr_poll(struct nr_comm *c, struct nr_wc *wc, int max, int timeout_ms);
/* Keep a completion of the next collective (a faster peer already started it). */
int nr_defer(struct nr_comm *c, const struct nr_wc *wc);
/* The progress thread (soft transport, world > 1): started at init, stopped at destroy. */
void nr_progress_start(struct nr_comm *c);
void nr_progress_stop(struct nr_comm *c);
/* Held by a public call for its whole duration: keeps the progress thread off the transport. */
void nr_comm_lock(struct nr_comm *c);
void nr_comm_unlock(struct nr_comm *c);

#endif /* NR_PROGRESS_H */
