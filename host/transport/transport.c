/* SPDX-License-Identifier: BSD-3-Clause */
/* Transport dispatch: nr_tp_* calls go to the implementation that opened the object. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tp_internal.h"

/*
 * Strong references (declared in tp_internal.h): a weak one would not pull the
 * transport's object out of the static libnetreduce.a.  Every build carries
 * both: tp_verbs.c, or tp_verbs_none.c whose open explains it lacks rdma-core.
 */

static const struct nr_tp_ops *ops_of(const char *kind)
{
	const struct nr_tp_ops *const transports[] = { &nr_tp_soft_ops, &nr_tp_verbs_ops };

	for (size_t i = 0; i < sizeof(transports) / sizeof(transports[0]); i++)
		if (strcmp(transports[i]->kind, kind ? kind : NR_TP_KIND_DEFAULT) == 0)
			return transports[i];
	return NULL;
}

struct nr_tp *nr_tp_open(const struct nr_tp_config *cfg, char *err, size_t errlen)
{
	const struct nr_tp_ops *ops = ops_of(cfg->kind);

	if (!ops) {
		snprintf(err, errlen, "transport \"%s\" unknown (use soft or verbs)", cfg->kind);
		return NULL;
	}
	return ops->open(cfg, err, errlen);
}

int nr_tp_tune(struct nr_tp_config *cfg, const struct nr_tp_wish *wish, char *err, size_t errlen)
{
	/* clang-format off */
	static const struct { const char *name; enum nr_tp_profile profile; } profiles[] = {
		{ "rnic", NR_TP_PROFILE_RNIC },
		{ "rxe", NR_TP_PROFILE_RXE },
		{ "legacy", NR_TP_PROFILE_LEGACY },
		{ "sr", NR_TP_PROFILE_SR },
	};
	/* clang-format on */
	const struct nr_tp_ops *ops = ops_of(cfg->kind);
	const char *name = wish->profile ? wish->profile : NR_TP_PROFILE_DEFAULT_NAME;
	size_t i = 0;

	if (!ops) {
		snprintf(err, errlen, "transport \"%s\" unknown (use soft or verbs)", cfg->kind);
		return -ENOENT;
	}
	while (i < sizeof(profiles) / sizeof(profiles[0]) && strcmp(profiles[i].name, name))
		i++;
	if (i == sizeof(profiles) / sizeof(profiles[0])) {
		snprintf(err, errlen, "profile \"%s\" unknown (use rnic, rxe, legacy or sr)", name);
		return -EINVAL;
	}
	if (wish->spray_ports > 1 && !ops->spray) {
		snprintf(err, errlen, "%s: a QP's packets leave from one UDP source port (only a "
			 "transport that builds its own packets sprays)", cfg->kind);
		return -ENOTSUP;
	}
	/* the same property: only a transport that builds its own packets chooses
	 * how it resends them (an RNIC's retransmission is its firmware's) */
	if (profiles[i].profile == NR_TP_PROFILE_SR && !ops->spray) {
		snprintf(err, errlen,
			 "%s: profile sr (selective repeat) is the soft transport's; an "
			 "RNIC resends as its firmware is set (unset NR_SOFT_PROFILE)",
			 cfg->kind);
		return -ENOTSUP;
	}
	if (wish->msg_tclass && !ops->wr_tclass) {
		snprintf(err, errlen, "%s: a QP's traffic class is one for all its messages (only a "
			 "transport that builds its own packets marks a message's)", cfg->kind);
		return -ENOTSUP;
	}
	cfg->profile = profiles[i].profile;
	if (ops->tune)
		ops->tune(cfg, wish);
	return 0;
}

void nr_tp_close(struct nr_tp *tp)
{
	if (tp)
		tp->ops->close(tp);
}

const char *nr_tp_kind(const struct nr_tp *tp) { return tp->ops->kind; }

uint16_t nr_tp_pkey(const struct nr_tp *tp) { return tp->ops->pkey; }

int nr_tp_reg_mr(struct nr_tp *tp, void *addr, size_t len, struct nr_tp_mr *mr)
{
	return tp->ops->reg_mr(tp, addr, len, mr);
}

void nr_tp_dereg_mr(struct nr_tp *tp, struct nr_tp_mr *mr) { tp->ops->dereg_mr(tp, mr); }

int nr_tp_qp_create(struct nr_tp *tp, struct nr_tp_qp **qp, struct nr_qp_info *info)
{
	int r;

	tp->err[0] = '\0';
	r = tp->ops->qp_create(tp, qp, info);
	if (r && !tp->err[0])
		nr_tp_set_error(tp, "%s: cannot create a QP: %s", tp->ops->kind, strerror(-r));
	return r;
}

const char *nr_tp_error(const struct nr_tp *tp) { return tp->err; }

int nr_tp_qp_connect(struct nr_tp_qp *qp, const struct nr_qp_info *remote)
{
	return qp->ops->qp_connect(qp, remote);
}

void nr_tp_qp_destroy(struct nr_tp_qp *qp)
{
	if (qp)
		qp->ops->qp_destroy(qp);
}

int nr_tp_post_write_imm(struct nr_tp_qp *qp, uint64_t wr_id, const struct nr_tp_mr *lmr,
			 const void *laddr, uint32_t len, uint64_t remote_va, uint32_t rkey,
			 uint32_t imm)
{
	return qp->ops->post_write_imm(qp, wr_id, lmr, laddr, len, remote_va, rkey, imm, NULL);
}

int nr_tp_post_write_imm_tc(struct nr_tp_qp *qp, uint64_t wr_id, const struct nr_tp_mr *lmr,
			    const void *laddr, uint32_t len, uint64_t remote_va, uint32_t rkey,
			    uint32_t imm, const struct nr_tp_mark *mark)
{
	if (mark && (mark->tclass < -1 || mark->tclass > 255 ||
		     (mark->de && (mark->de_tclass < -1 || mark->de_tclass > 255))))
		return -EINVAL;
	return qp->ops->post_write_imm(qp, wr_id, lmr, laddr, len, remote_va, rkey, imm, mark);
}

bool nr_tp_wr_tclass(const struct nr_tp *tp)
{
	return tp->ops->wr_tclass;
}

int nr_tp_post_recv(struct nr_tp_qp *qp, uint64_t wr_id) { return qp->ops->post_recv(qp, wr_id); }

int nr_tp_poll(struct nr_tp *tp, struct nr_wc *wc, int max, int timeout_ms)
{
	return tp->ops->poll(tp, wc, max, timeout_ms);
}

const char *nr_tp_qp_error(const struct nr_tp_qp *qp) { return qp->ops->qp_error(qp); }

const char *nr_tp_qp_state(const struct nr_tp_qp *qp, char *buf, size_t len)
{
	if (len)
		buf[0] = 0;
	if (qp && len)
		qp->ops->qp_state(qp, buf, len);
	return buf;
}

bool nr_tp_polled(const struct nr_tp *tp)
{
	return tp->ops->polled;
}

void nr_tp_qp_acks_lag(struct nr_tp_qp *qp)
{
	if (qp && qp->ops->qp_acks_lag)
		qp->ops->qp_acks_lag(qp);
}

int nr_tp_qp_spray(struct nr_tp_qp *qp, unsigned ports, struct nr_qp_info *info)
{
	if (!qp || !info || ports < 1)
		return -EINVAL;
	if (!qp->ops->qp_spray)
		return ports > 1 ? -ENOTSUP : 0;
	return qp->ops->qp_spray(qp, ports, info);
}

int nr_tp_qp_rail(struct nr_tp_qp *qp, const char *ifname)
{
	if (!qp || !ifname || !*ifname)
		return -EINVAL;
	return qp->ops->qp_rail(qp, ifname);
}

const char *nr_wc_status_str(enum nr_wc_status s)
{
	switch (s) {
	case NR_WC_OK: return "success";
	case NR_WC_RETRY_EXCEEDED: return "transport retry counter exceeded";
	case NR_WC_REMOTE_ERROR: return "remote error (NAK)";
	case NR_WC_FLUSHED: return "flushed: QP in error";
	case NR_WC_LOCAL_ERROR: return "local error";
	}
	return "unknown status";
}
