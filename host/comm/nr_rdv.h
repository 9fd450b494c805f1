/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rendezvous' wire (nr_rdv.c), shared by the rendezvous (nr_bootstrap.c)
 * and the exchanges after it (nr_exchange.c).
 */
#ifndef NR_RDV_H
#define NR_RDV_H

#include <jansson.h>
#include <stdbool.h>

#include "comm_internal.h"

/* Endpoint i of p: {"send":QP,"recv":QP,"va","rkey"}. */
json_t *nr_ep_json(const struct nr_peer *p, int i);
/* Our row, or a peer's, with the c->n_channels box channels of every rank. */
json_t *nr_row_json(const struct nr_comm *c, const struct nr_peer *p);
/* v within 0..max: a number outside its field makes a row malformed, never cut to fit. */
bool nr_json_in_range(json_int_t v, json_int_t max);
/* Endpoint i of p from ep: 0, or -1 when it is malformed. */
int nr_ep_parse(json_t *ep, struct nr_peer *p, int i);
/* A row (nr_row_json's) into p: 0, or -1 when it is malformed. */
int nr_row_parse(const struct nr_comm *c, json_t *row, struct nr_peer *p);
/*
 * Rank 0's word on box job t, which a member's messages need: {"ok":true,
 * "credits":W,"result_key":K}, and over several boxes "result_keys":[K0,
 * K1, ...] (box k's, K = K0).  The caller adds the rest.
 */
json_t *nr_box_word_json(const struct nr_comm *c, unsigned t);
/* Its credits and result keys into c->box[t]: 0, or -1 when it is malformed. */
int nr_box_word_parse(struct nr_comm *c, unsigned t, json_t *msg);
/* Rank 0: msg to every member still connected (a member gone is learnt elsewhere). */
void nr_rdv_broadcast(struct nr_comm *c, json_t *msg);
/* The progress a wait on the rendezvous' sockets keeps up (nr_idle_progress). */
void nr_rdv_idle(void *c);

/*
 * Rank 0's reply msg to this member: 0 when {"ok":true}; else this rank fails
 * with rank 0's error code (NR_ERR_BOOTSTRAP when it gives none) and message,
 * msg is freed and the code returned.
 */
int nr_rdv_reply_ok(struct nr_comm *c, json_t *msg);

#endif /* NR_RDV_H */
