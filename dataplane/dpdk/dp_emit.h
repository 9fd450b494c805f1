/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where frames leave the box (dp_emit.c): the one exit of results, the
 * switching of every other frame (L2 learning and flooding, or one-armed),
 * and the buffered TX queues of a worker.  Each call is made on the worker's
 * own lcore.
 */
#ifndef NR_DP_EMIT_H
#define NR_DP_EMIT_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "dataplane/dpdk/dp_state.h"

/* Switch one frame unchanged (switch mode: L2 learning and flooding; one-armed). */
void dp_forward(struct dp_worker *w, struct rte_mbuf *m);
/* A result frame that is ready as it is (a device's): routed as a result,
 * which may leave by its ingress port (mbuf->port). */
void dp_result_route(struct dp_worker *w, struct rte_mbuf *m);
/* A duplicate the engine answered (NR_V_RESEND): out as a result; its record goes back. */
void dp_result_resend(struct dp_worker *w, struct rte_mbuf *m, const struct nr_pkt *p);
/* Engine callbacks: a slot's results to fix up and send, a held frame to free. */
void dp_engine_emit_slot(void *ctx, const struct agg_emit_slot *s);
void dp_engine_free(void *ctx, void *handle);
/* Engine callbacks: a frame it made (a NAK) to send; where a packet came from. */
void dp_engine_send(void *ctx, const uint8_t *frame, uint32_t len, uint16_t origin);
uint16_t dp_engine_origin(void *ctx, void *handle);
/* Shared-payload ICRCs for results of len bytes (at job add; up to DP_CRC_SHIFTS). */
void dp_crc_shift_add(struct dp_worker *w, uint32_t len);

/* Queue one frame on (port) of this worker; flushes at burst size. */
void dp_tx_one(struct dp_worker *w, uint16_t port, struct rte_mbuf *m);
void dp_tx_flush(struct dp_worker *w, uint16_t port);
/* Flush every port's buffer (the loop's TSC timer, before sleeping, at exit). */
void dp_tx_drain(struct dp_worker *w);

#endif /* NR_DP_EMIT_H */
