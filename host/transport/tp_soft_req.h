/* SPDX-License-Identifier: BSD-3-Clause */
/* Soft transport, requester side (tp_soft_req.c). */
#ifndef NR_TP_SOFT_REQ_H
#define NR_TP_SOFT_REQ_H

#include <stdbool.h>
#include <stdint.h>

#include "tp_soft_types.h"

/* Packets of a write of len bytes at this MTU (at least 1). */
uint32_t soft_npkts(uint32_t len, uint32_t mtu);
/* Send what the window allows. */
void soft_req_tx(struct soft_qp *qp);
bool soft_req_can_send(const struct soft_qp *qp);
/* SR: selective resends are queued and may go now. */
bool soft_req_resend_due(const struct soft_qp *qp);
void soft_req_rx_ack(struct soft_qp *qp, const struct nr_pkt *p);
/* Local ACK timeout: go back to the oldest unacknowledged PSN, or give up. */
void soft_req_timer(struct soft_qp *qp);
/* Transmit again from psn, which lies in [snd_una, snd_hi]. */
void soft_req_rewind(struct soft_qp *qp, uint32_t psn);

#endif /* NR_TP_SOFT_REQ_H */
