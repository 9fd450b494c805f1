/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft transport: the completion queue and the rings of work requests
 * (rings of free-running indices that grow), and a QP's move to error, which
 * flushes its outstanding work requests into the completion queue.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_soft_cq.h"

/* Grow a ring of free-running indices to twice its size, keeping its order. */
int soft_ring_grow(void **ring, uint32_t *cap, uint32_t head, uint32_t tail, size_t elsz)
{
	uint32_t ncap = *cap ? *cap * 2 : 64;
	uint8_t *n = malloc((size_t)ncap * elsz), *o = *ring;

	if (!n)
		return -ENOMEM;
	for (uint32_t k = head; k != tail; k++)
		memcpy(n + (size_t)(k & (ncap - 1)) * elsz, o + (size_t)(k & (*cap - 1)) * elsz, elsz);
	free(o);
	*ring = n;
	*cap = ncap;
	return 0;
}

void soft_cq_push(struct soft_tp *tp, struct soft_qp *qp, uint64_t wr_id, uint8_t op,
		  uint8_t status, uint32_t imm, uint32_t byte_len)
{
	if (tp->cq_tail - tp->cq_head == tp->cq_cap &&
	    soft_ring_grow((void **)&tp->cq, &tp->cq_cap, tp->cq_head, tp->cq_tail,
			   sizeof(*tp->cq))) {
		fprintf(stderr, "soft: out of memory for the completion queue: completion of "
			"wr_id %llu lost\n", (unsigned long long)wr_id);
		return;
	}
	tp->cq[tp->cq_tail++ & (tp->cq_cap - 1)] = (struct nr_wc){
		.wr_id = wr_id, .qp = &qp->base, .op = op, .status = status,
		.imm = imm, .byte_len = byte_len,
	};
}

void soft_qp_to_error(struct soft_qp *qp, uint8_t sq_status, uint8_t rq_status,
		      const char *fmt, ...)
{
	struct soft_tp *tp = qp->tp;
	va_list ap;

	if (qp->state == SOFT_QP_ERR)
		return;
	va_start(ap, fmt);
	vsnprintf(qp->err, sizeof(qp->err), fmt, ap);
	va_end(ap);
	qp->state = SOFT_QP_ERR;
	tp->st.qp_errors++;
	for (; qp->sq_head != qp->sq_tail; qp->sq_head++, sq_status = NR_WC_FLUSHED)
		soft_cq_push(tp, qp, qp->sq[qp->sq_head & (qp->sq_cap - 1)].wr_id, NR_WC_SEND,
			     sq_status, 0, 0);
	for (; qp->rq_head != qp->rq_tail; qp->rq_head++, rq_status = NR_WC_FLUSHED)
		soft_cq_push(tp, qp, qp->rq[qp->rq_head & (qp->rq_cap - 1)], NR_WC_RECV,
			     rq_status, 0, 0);
	qp->sq_cur = qp->sq_head;
	qp->er_head = qp->er_tail;
	qp->ack_deadline = 0;
}
