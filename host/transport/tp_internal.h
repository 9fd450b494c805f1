/* SPDX-License-Identifier: BSD-3-Clause */
/* Transport implementations plug in here (see nr_transport.h). */
#ifndef NR_TP_INTERNAL_H
#define NR_TP_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "nr_transport.h"

struct nr_tp_ops {
	const char *kind;
	bool polled;           /* progress only inside poll (nr_tp_polled) */
	bool wr_tclass;        /* a traffic class per message (nr_tp_wr_tclass) */
	bool spray;            /* a QP's packets from several UDP source ports (qp_spray) */
	uint16_t pkey;         /* the P_Key of its packets, 0 unknown (nr_tp_pkey) */
	/* cfg->max_inflight, ackreq_every, timeout from *wish (profile already in cfg) */
	void (*tune)(struct nr_tp_config *cfg, const struct nr_tp_wish *wish);
	struct nr_tp *(*open)(const struct nr_tp_config *cfg, char *err, size_t errlen);
	void (*close)(struct nr_tp *tp);
	int (*reg_mr)(struct nr_tp *tp, void *addr, size_t len, struct nr_tp_mr *mr);
	void (*dereg_mr)(struct nr_tp *tp, struct nr_tp_mr *mr);
	int (*qp_create)(struct nr_tp *tp, struct nr_tp_qp **qp, struct nr_qp_info *info);
	int (*qp_connect)(struct nr_tp_qp *qp, const struct nr_qp_info *remote);
	void (*qp_destroy)(struct nr_tp_qp *qp);
	int (*post_write_imm)(struct nr_tp_qp *qp, uint64_t wr_id, const struct nr_tp_mr *lmr,
			      const void *laddr, uint32_t len, uint64_t remote_va,
			      uint32_t rkey, uint32_t imm, const struct nr_tp_mark *mark);
	int (*post_recv)(struct nr_tp_qp *qp, uint64_t wr_id);
	int (*poll)(struct nr_tp *tp, struct nr_wc *wc, int max, int timeout_ms);
	const char *(*qp_error)(const struct nr_tp_qp *qp);
	void (*qp_state)(const struct nr_tp_qp *qp, char *buf, size_t len);
	void (*qp_acks_lag)(struct nr_tp_qp *qp);
	int (*qp_spray)(struct nr_tp_qp *qp, unsigned ports, struct nr_qp_info *info);
	int (*qp_rail)(struct nr_tp_qp *qp, const char *ifname);
};

/*
 * The ops table of a transport whose functions are named after its prefix:
 * prefix_open, prefix_close, prefix_reg_mr, ... prefix_qp_state, prefix_qp_acks_lag,
 * prefix_qp_spray, prefix_qp_rail; prefix_tune; is_polled, has_wr_tclass and can_spray: the
 * flags nr_tp_polled and nr_tp_wr_tclass report and nr_tp_tune checks a wish
 * against; pkey_of: nr_tp_pkey's answer.
 */
/* clang-format off */
#define NR_TP_OPS(name, prefix, is_polled, has_wr_tclass, can_spray, pkey_of) {           \
	.kind = name, .polled = is_polled, .wr_tclass = has_wr_tclass, .spray = can_spray, \
	.pkey = pkey_of,                                                                   \
	.tune = prefix##_tune, .open = prefix##_open, .close = prefix##_close,          \
	.reg_mr = prefix##_reg_mr, .dereg_mr = prefix##_dereg_mr,                       \
	.qp_create = prefix##_qp_create, .qp_connect = prefix##_qp_connect,             \
	.qp_destroy = prefix##_qp_destroy, .post_write_imm = prefix##_post_write_imm,   \
	.post_recv = prefix##_post_recv, .poll = prefix##_poll, .qp_error = prefix##_qp_error, \
	.qp_state = prefix##_qp_state, .qp_acks_lag = prefix##_qp_acks_lag,                \
	.qp_spray = prefix##_qp_spray, .qp_rail = prefix##_qp_rail }
/* clang-format on */

/*
 * Every transport object and QP starts with these, so the dispatcher finds its
 * ops.  err: why the last failed call on the transport failed (nr_tp_error),
 * naming what it tried; set with nr_tp_set_error.
 */
struct nr_tp {
	const struct nr_tp_ops *ops;
	char err[256];
};

/* Here, below every transport file, so that each may set it. */
static inline __attribute__((format(printf, 2, 3)))
void nr_tp_set_error(struct nr_tp *tp, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tp->err, sizeof(tp->err), fmt, ap);
	va_end(ap);
}

/*
 * The local ACK timeout exponent (4.096 us * 2^t) whose `tries` timeouts take
 * at most budget_ms, one at most 1.07 s (t = 18), at least t = 10.  Generous
 * on purpose: on the box ring a message is acknowledged only once every rank
 * contributed it, so rank skew and a loaded box must not look like a dead
 * peer.  A QP that fails after 8 timeouts (retry_cnt 7) gets budget_ms / 8
 * each; the soft legacy profile doubles the timeout per retry (backoff), so
 * its 8 tries span 255 base timeouts: a lost packet is resent after
 * budget_ms / 255 (39 ms for 10 s).
 */
static inline uint8_t nr_tp_timeout_exp(uint32_t budget_ms, double tries)
{
	uint8_t t = 10;

	while (t < 18 && tries * 4.096e-3 * (double)(1u << (t + 1)) <= budget_ms)
		t++;
	return t;
}

/* The ACK timeout exponent of *wish: the user's, or nr_tp_timeout_exp's. */
static inline uint8_t nr_tp_wish_timeout(const struct nr_tp_wish *wish, double tries)
{
	return wish->ack_timeout ? wish->ack_timeout : nr_tp_timeout_exp(wish->budget_ms, tries);
}

struct nr_tp_qp {
	const struct nr_tp_ops *ops;
	struct nr_tp *tp;
};

extern const struct nr_tp_ops nr_tp_soft_ops;
extern const struct nr_tp_ops nr_tp_verbs_ops;   /* NULL open when built without rdma-core */

#endif /* NR_TP_INTERNAL_H */
