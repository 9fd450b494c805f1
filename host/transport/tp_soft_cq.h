/* SPDX-License-Identifier: BSD-3-Clause */
/* Soft transport, completions and QP errors (tp_soft_cq.c). */
#ifndef NR_TP_SOFT_CQ_H
#define NR_TP_SOFT_CQ_H

#include <stddef.h>
#include <stdint.h>

#include "tp_soft_types.h"

/* Grow a ring of free-running indices to twice its size, keeping its order. */
int soft_ring_grow(void **ring, uint32_t *cap, uint32_t head, uint32_t tail, size_t elsz);
void soft_cq_push(struct soft_tp *tp, struct soft_qp *qp, uint64_t wr_id, uint8_t op,
		  uint8_t status, uint32_t imm, uint32_t byte_len);
/* sq_status: first outstanding send WR; rq_status: first posted receive; the rest flush. */
void soft_qp_to_error(struct soft_qp *qp, uint8_t sq_status, uint8_t rq_status,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif /* NR_TP_SOFT_CQ_H */
