/* SPDX-License-Identifier: BSD-3-Clause */
/* The TCP rendezvous at rank 0 (nr_bootstrap.c). */
#ifndef NR_BOOTSTRAP_H
#define NR_BOOTSTRAP_H

#include "comm_internal.h"

/* Exchange endpoints; rank 0 registers the box ring as a job first (with a box). */
int nr_bootstrap(struct nr_comm *c);
/* All ranks: tell rank 0 (va, rkey) of our plain ring region; learn rank+1's. */
int nr_exchange_plain_region(struct nr_comm *c);
/*
 * Element type t's box rings (created, not connected) exchanged over the
 * rendezvous sockets: every rank sends its rings' endpoints, rank 0 checks
 * that every rank asked for type t (else every rank fails, the message
 * naming the rank and its type), registers the job (nr_box_job_create) and
 * sends the table back; c->peers[] and c->box[t] then hold what connecting
 * needs.  Collective.
 */
int nr_exchange_box_set(struct nr_comm *c, unsigned t);
/* Barrier over the bootstrap sockets. */
int nr_barrier(struct nr_comm *c, const char *what);
/* A barrier that also hands rank 0's *value (< 2^63) to every rank. */
int nr_barrier_bcast(struct nr_comm *c, const char *what, uint64_t *value);
void nr_bootstrap_close(struct nr_comm *c);

#endif /* NR_BOOTSTRAP_H */
