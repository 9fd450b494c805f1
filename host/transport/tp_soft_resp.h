/* SPDX-License-Identifier: BSD-3-Clause */
/* Soft transport, responder side (tp_soft_resp.c). */
#ifndef NR_TP_SOFT_RESP_H
#define NR_TP_SOFT_RESP_H

#include <stdint.h>

#include "tp_soft_types.h"

void soft_resp_rx(struct soft_qp *qp, const uint8_t *pkt, const struct nr_pkt *p);
/* qp owes an ACK: it joins the transport's ACK list (one ACK per QP and batch). */
void soft_resp_ack_owed(struct soft_qp *qp);
/* SR: when the expected PSN, missing, is to be named again (0: not). */
uint64_t soft_resp_sr_due(const struct soft_qp *qp);
/* SR: name the expected PSN again if it is due (soft_resp_sr_due). */
void soft_resp_sr_timer(struct soft_qp *qp);
/* Send the ACKs owed (after each receive batch). */
void soft_resp_flush_acks(struct soft_tp *tp);

#endif /* NR_TP_SOFT_RESP_H */
