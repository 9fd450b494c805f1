/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs transport: rdma-core RC QPs on a real RNIC or rdma_rxe, in the manner
 * of libibverbs/examples/rc_pingpong.c.  One context owns the device, PD, CQ
 * and completion channel; setup unwinds through cleanup labels that
 * verbs_close mirrors; one function per QP state change.  The device and its
 * RoCEv2 GID are the ones whose IPv4-mapped address is cfg->local_ip
 * (ibv_query_gid_ex over every device); the port must be active, its MTU at
 * least the job's (no silent clamp: the box expects packets of the MTU the
 * job was registered with) and its max_msg_sz at least a message.
 *
 * Threading: one thread drives a transport object (nr_transport.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/random.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_internal.h"
#include "proto/nr_text.h"

#define CQ_DEPTH 4096
#define MAX_SEND_WR 1024
#define MAX_RECV_WR 1024
/* The RNR NAK timer our responders ask for when no receive is posted: code 12, 0.64 ms. */
#define VERBS_MIN_RNR_TIMER 12

struct verbs_tp {
	struct nr_tp base;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *channel;
	struct ibv_cq *cq;
	uint8_t port;
	int gid_index;
	union ibv_gid gid;
	enum ibv_mtu mtu;
	uint8_t timeout, retry_cnt, rnr_retry, tclass;
	uint32_t max_msg_sz;         /* the port's: longer writes are refused at post */
	uint32_t local_ip;
	struct verbs_qp **qps;       /* to find our QP object from a completion's qp_num */
	size_t nqps;
};

struct verbs_qp {
	struct nr_tp_qp base;
	struct verbs_tp *vt;
	struct ibv_qp *qp;
	uint32_t psn;
	struct nr_qp_info remote;
	bool sends;                  /* a requester (writes posted); else a responder */
	char err[160];
};

/* The IB enum of a path MTU in bytes, 0 when it is none. */
static enum ibv_mtu to_ibv_mtu(uint32_t mtu)
{
	switch (mtu) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	default: return 0;
	}
}

static uint32_t mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}

/* The GID of port whose RoCE v2 IPv4-mapped address is ip, or -1. */
static int find_gid(struct ibv_context *ctx, uint8_t port, uint32_t ip, int gid_tbl_len)
{
	for (int i = 0; i < gid_tbl_len; i++) {
		struct ibv_gid_entry e;
		const uint8_t *raw;

		if (ibv_query_gid_ex(ctx, port, i, &e, 0))
			continue;
		if (e.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		raw = e.gid.raw;
		/* ::ffff:a.b.c.d */
		if (!memcmp(raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) && !memcmp(raw + 12, &ip, 4))
			return i;
	}
	return -1;
}

/*
 * Open the device that carries cfg->local_ip: the one named by cfg->device,
 * else the first whose port has a RoCE v2 GID for that address (an explicit
 * gid_index takes the named or the first device as it is).  Fills vt->ctx,
 * vt->gid_index, *pattr; the error names every device it looked at.
 */
static int open_device(struct verbs_tp *vt, const struct nr_tp_config *cfg,
		       struct ibv_device **list, int n, struct ibv_port_attr *pattr,
		       char *err, size_t errlen)
{
	char ip[INET_ADDRSTRLEN], seen[160] = "";
	size_t used = 0;
	bool named = false;

	nr_ip4_str(cfg->local_ip, ip);
	for (int i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(list[i]);

		if (cfg->device && strcmp(name, cfg->device))
			continue;
		named = true;
		vt->ctx = ibv_open_device(list[i]);
		if (!vt->ctx) {
			used += (size_t)snprintf(seen + used, used < sizeof(seen) ? sizeof(seen) - used : 0,
						 "%s%s (cannot open: %s)", used ? ", " : "", name,
						 strerror(errno));
			continue;
		}
		if (ibv_query_port(vt->ctx, vt->port, pattr)) {
			used += (size_t)snprintf(seen + used, used < sizeof(seen) ? sizeof(seen) - used : 0,
						 "%s%s (no port %u)", used ? ", " : "", name, vt->port);
		} else {
			vt->gid_index = cfg->gid_index >= 0 ? cfg->gid_index
					: find_gid(vt->ctx, vt->port, cfg->local_ip, pattr->gid_tbl_len);
			if (vt->gid_index >= 0 &&
			    !ibv_query_gid(vt->ctx, vt->port, vt->gid_index, &vt->gid))
				return 0;
			used += (size_t)snprintf(seen + used, used < sizeof(seen) ? sizeof(seen) - used : 0,
						 "%s%s", used ? ", " : "", name);
		}
		ibv_close_device(vt->ctx);
		vt->ctx = NULL;
	}
	if (cfg->device && !named)
		snprintf(err, errlen, "verbs: RDMA device \"%s\" not found (NR_DEVICE; try "
			 "ibv_devices)", cfg->device);
	else
		snprintf(err, errlen, "verbs: no RDMA device has a RoCE v2 GID for %s on port %u "
			 "(looked at: %s; is the address on the RDMA device's netdev? NR_DEVICE and "
			 "NR_GID_INDEX override)", ip, vt->port, seen);
	return -1;
}

/* The port must carry the job's packets as they were registered with the box. */
static int check_port(const struct verbs_tp *vt, const struct nr_tp_config *cfg,
		      const struct ibv_port_attr *pattr, char *err, size_t errlen)
{
	const char *name = ibv_get_device_name(vt->ctx->device);

	if (pattr->state != IBV_PORT_ACTIVE) {
		snprintf(err, errlen, "verbs: %s port %u is not active (state %s): check the link",
			 name, vt->port, ibv_port_state_str(pattr->state));
		return -1;
	}
	if (mtu_bytes(pattr->active_mtu) < cfg->mtu) {
		snprintf(err, errlen, "verbs: %s port %u: active MTU %u is below the path MTU %u "
			 "(NR_MTU) the job is registered with, so the box would see packets of "
			 "another size: set NR_MTU=%u or raise the MTU of the device's netdev",
			 name, vt->port, mtu_bytes(pattr->active_mtu), cfg->mtu,
			 mtu_bytes(pattr->active_mtu));
		return -1;
	}
	if (cfg->max_msg && pattr->max_msg_sz < cfg->max_msg) {
		snprintf(err, errlen, "verbs: %s port %u: largest message %u bytes (max_msg_sz) is "
			 "below the %u bytes a write carries (NR_MSG_SIZE): lower NR_MSG_SIZE", name,
			 vt->port, pattr->max_msg_sz, cfg->max_msg);
		return -1;
	}
	return 0;
}

/* nr_tp_tune: the RNIC keeps its own window; its retries do not back off */
static void verbs_tune(struct nr_tp_config *cfg, const struct nr_tp_wish *wish)
{
	cfg->timeout = nr_tp_wish_timeout(wish, 8);
}

static struct nr_tp *verbs_open(const struct nr_tp_config *cfg, char *err, size_t errlen)
{
	struct verbs_tp *vt = calloc(1, sizeof(*vt));
	struct ibv_device **list = NULL;
	struct ibv_port_attr pattr;
	int n = 0;

	if (!vt) {
		snprintf(err, errlen, "verbs: out of memory");
		return NULL;
	}
	vt->base.ops = &nr_tp_verbs_ops;
	vt->port = cfg->ib_port ? cfg->ib_port : 1;
	vt->mtu = to_ibv_mtu(cfg->mtu ? cfg->mtu : 1024);
	vt->timeout = cfg->timeout ? cfg->timeout : 14;
	vt->retry_cnt = cfg->retry_cnt ? cfg->retry_cnt : 7;
	vt->rnr_retry = cfg->rnr_retry ? cfg->rnr_retry : 7;
	vt->tclass = cfg->tclass;
	vt->local_ip = cfg->local_ip;
	if (!vt->mtu) {
		snprintf(err, errlen, "verbs: mtu %u is not an IB path MTU (use 256, 512, 1024, "
			 "2048 or 4096)", cfg->mtu);
		goto err_list;
	}
	if (vt->timeout > 31 || vt->retry_cnt > 7 || vt->rnr_retry > 7) {
		snprintf(err, errlen, "verbs: timeout %u / retry_cnt %u / rnr_retry %u out of range "
			 "(1..31 / 1..7 / 1..7)", vt->timeout, vt->retry_cnt, vt->rnr_retry);
		goto err_list;
	}
	vt->max_msg_sz = UINT32_MAX;

	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		snprintf(err, errlen, "verbs: no RDMA device found (load rdma_rxe or use "
			 "NR_TRANSPORT=soft)");
		goto err_list;
	}
	if (open_device(vt, cfg, list, n, &pattr, err, errlen))
		goto err_list;
	if (check_port(vt, cfg, &pattr, err, errlen))
		goto err_ctx;
	vt->max_msg_sz = pattr.max_msg_sz;
	vt->pd = ibv_alloc_pd(vt->ctx);
	if (!vt->pd) {
		snprintf(err, errlen, "verbs: ibv_alloc_pd failed");
		goto err_ctx;
	}
	vt->channel = ibv_create_comp_channel(vt->ctx);
	if (!vt->channel) {
		snprintf(err, errlen, "verbs: ibv_create_comp_channel failed");
		goto err_pd;
	}
	vt->cq = ibv_create_cq(vt->ctx, CQ_DEPTH, NULL, vt->channel, 0);
	if (!vt->cq) {
		snprintf(err, errlen, "verbs: ibv_create_cq(%d) failed", CQ_DEPTH);
		goto err_channel;
	}
	ibv_free_device_list(list);
	return &vt->base;

err_channel:
	ibv_destroy_comp_channel(vt->channel);
err_pd:
	ibv_dealloc_pd(vt->pd);
err_ctx:
	ibv_close_device(vt->ctx);
err_list:
	if (list)
		ibv_free_device_list(list);
	free(vt);
	return NULL;
}

static void verbs_close(struct nr_tp *tp)
{
	struct verbs_tp *vt = (struct verbs_tp *)tp;

	ibv_destroy_cq(vt->cq);
	ibv_destroy_comp_channel(vt->channel);
	ibv_dealloc_pd(vt->pd);
	ibv_close_device(vt->ctx);
	free(vt->qps);
	free(vt);
}

static int verbs_reg_mr(struct nr_tp *tp, void *addr, size_t len, struct nr_tp_mr *mr)
{
	struct verbs_tp *vt = (struct verbs_tp *)tp;
	struct ibv_mr *m = ibv_reg_mr(vt->pd, addr, len, IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_WRITE);

	if (!m)
		return errno ? -errno : -ENOMEM;
	*mr = (struct nr_tp_mr){ .addr = addr, .len = len, .va = (uintptr_t)addr,
				 .rkey = m->rkey, .lkey = m->lkey, .priv = m };
	return 0;
}

static void verbs_dereg_mr(struct nr_tp *tp, struct nr_tp_mr *mr)
{
	if (mr->priv)
		ibv_dereg_mr(mr->priv);
	mr->priv = NULL;
}

static int verbs_qp_create(struct nr_tp *tp, struct nr_tp_qp **qpp, struct nr_qp_info *info)
{
	struct verbs_tp *vt = (struct verbs_tp *)tp;
	struct ibv_qp_init_attr attr = {
		.send_cq = vt->cq,
		.recv_cq = vt->cq,
		.cap = { .max_send_wr = MAX_SEND_WR, .max_recv_wr = MAX_RECV_WR,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct verbs_qp *q = calloc(1, sizeof(*q));
	struct verbs_qp **grown = realloc(vt->qps, (vt->nqps + 1) * sizeof(*grown));

	if (!q || !grown) {
		free(q);
		if (grown)
			vt->qps = grown;
		return -ENOMEM;
	}
	vt->qps = grown;
	q->qp = ibv_create_qp(vt->pd, &attr);
	if (!q->qp) {
		int e = errno ? errno : ENOMEM;

		free(q);
		return -e;
	}
	q->base.ops = &nr_tp_verbs_ops;
	q->base.tp = tp;
	q->vt = vt;
	if (getrandom(&q->psn, sizeof(q->psn), 0) != sizeof(q->psn))
		q->psn = (uint32_t)(uintptr_t)q ^ q->qp->qp_num;
	q->psn &= 0xFFFFFF;
	vt->qps[vt->nqps++] = q;
	*info = (struct nr_qp_info){ .ip = vt->local_ip, .qpn = q->qp->qp_num, .psn = q->psn,
				     .udp_port = 4791 };
	*qpp = &q->base;
	return 0;
}

static int qp_to_init(struct verbs_qp *q)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = q->vt->port,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE,
	};

	return ibv_modify_qp(q->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     IBV_QP_ACCESS_FLAGS);
}

static int qp_to_rtr(struct verbs_qp *q, const struct nr_qp_info *remote)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = q->vt->mtu,
		.dest_qp_num = remote->qpn,
		.rq_psn = remote->psn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = VERBS_MIN_RNR_TIMER,
		.ah_attr = {
			.is_global = 1,
			.port_num = q->vt->port,
			.sl = 0,
			.grh = {
				.sgid_index = q->vt->gid_index,
				.hop_limit = 64,
				.traffic_class = q->vt->tclass,
			},
		},
	};

	/* the peer's GID is its IPv4-mapped address */
	memset(attr.ah_attr.grh.dgid.raw, 0, 10);
	memset(attr.ah_attr.grh.dgid.raw + 10, 0xff, 2);
	memcpy(attr.ah_attr.grh.dgid.raw + 12, &remote->ip, 4);
	return ibv_modify_qp(q->qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
}

static int qp_to_rts(struct verbs_qp *q)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTS,
		.timeout = q->vt->timeout,
		.retry_cnt = q->vt->retry_cnt,
		.rnr_retry = q->vt->rnr_retry,   /* 7, infinite: a box holding a late rank's
						  * slot answers RNR NAK (docs/architecture.md) */
		.sq_psn = q->psn,
		.max_rd_atomic = 1,
	};

	return ibv_modify_qp(q->qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int verbs_qp_connect(struct nr_tp_qp *qp, const struct nr_qp_info *remote)
{
	struct verbs_qp *q = (struct verbs_qp *)qp;
	int rc;

	q->remote = *remote;
	rc = qp_to_init(q);
	if (!rc)
		rc = qp_to_rtr(q, remote);
	if (!rc)
		rc = qp_to_rts(q);
	if (rc) {
		snprintf(q->err, sizeof(q->err), "modify QP 0x%x: %s", q->qp->qp_num, strerror(rc));
		return -rc;
	}
	return 0;
}

static void verbs_qp_destroy(struct nr_tp_qp *qp)
{
	struct verbs_qp *q = (struct verbs_qp *)qp;
	struct verbs_tp *vt = q->vt;

	for (size_t i = 0; i < vt->nqps; i++)
		if (vt->qps[i] == q)
			vt->qps[i] = vt->qps[--vt->nqps];
	ibv_destroy_qp(q->qp);
	free(q);
}

/*
 * mark: ignored.  The traffic class is the QP's (its address vector's GRH,
 * set at RTR), not a work request's; moving a QP through SQD to change it
 * per message would stall its send queue (nr_tp_wr_tclass is false).
 */
static int verbs_post_write_imm(struct nr_tp_qp *qp, uint64_t wr_id, const struct nr_tp_mr *lmr,
				const void *laddr, uint32_t len, uint64_t remote_va,
				uint32_t rkey, uint32_t imm, const struct nr_tp_mark *mark)
{
	struct verbs_qp *q = (struct verbs_qp *)qp;
	struct ibv_sge sge = { .addr = (uintptr_t)laddr, .length = len, .lkey = lmr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = len ? 1 : 0,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(imm),
		.wr.rdma = { .remote_addr = remote_va, .rkey = rkey },
	};
	struct ibv_send_wr *bad;

	if (len > q->vt->max_msg_sz)
		return -EMSGSIZE;
	q->sends = true;
	return -ibv_post_send(q->qp, &wr, &bad);
}

static int verbs_post_recv(struct nr_tp_qp *qp, uint64_t wr_id)
{
	struct verbs_qp *q = (struct verbs_qp *)qp;
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = NULL, .num_sge = 0 };
	struct ibv_recv_wr *bad;

	return -ibv_post_recv(q->qp, &wr, &bad);
}

static struct verbs_qp *find_qp(struct verbs_tp *vt, uint32_t qpn)
{
	for (size_t i = 0; i < vt->nqps; i++)
		if (vt->qps[i]->qp->qp_num == qpn)
			return vt->qps[i];
	return NULL;
}

static uint8_t to_status(struct verbs_qp *q, const struct ibv_wc *w)
{
	char ip[INET_ADDRSTRLEN];

	if (w->status == IBV_WC_SUCCESS)
		return NR_WC_OK;
	if (q && !q->err[0]) {
		snprintf(q->err, sizeof(q->err), "%s qpn 0x%x: %s (vendor error 0x%x)", nr_ip4_str(q->remote.ip, ip),
			 q->remote.qpn, ibv_wc_status_str(w->status), w->vendor_err);
	}
	switch (w->status) {
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return NR_WC_RETRY_EXCEEDED;
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_OP_ERR:
		return NR_WC_REMOTE_ERROR;
	case IBV_WC_WR_FLUSH_ERR:
		return NR_WC_FLUSHED;
	default:
		return NR_WC_LOCAL_ERROR;
	}
}

static int poll_once(struct verbs_tp *vt, struct nr_wc *wc, int max)
{
	struct ibv_wc w[32];
	int n = ibv_poll_cq(vt->cq, max < 32 ? max : 32, w);

	if (n < 0)
		return -EIO;
	for (int i = 0; i < n; i++) {
		struct verbs_qp *q = find_qp(vt, w[i].qp_num);

		wc[i] = (struct nr_wc){
			.wr_id = w[i].wr_id,
			.qp = q ? &q->base : NULL,
			.op = (w[i].opcode & IBV_WC_RECV) ? NR_WC_RECV : NR_WC_SEND,
			.status = to_status(q, &w[i]),
			.imm = (w[i].wc_flags & IBV_WC_WITH_IMM) ? ntohl(w[i].imm_data) : 0,
			.byte_len = w[i].byte_len,
		};
		/* an error completion's opcode is undefined: the QP's role says it */
		if (w[i].status != IBV_WC_SUCCESS)
			wc[i].op = q && q->sends ? NR_WC_SEND : NR_WC_RECV;
	}
	return n;
}

static int verbs_poll(struct nr_tp *tp, struct nr_wc *wc, int max, int timeout_ms)
{
	struct verbs_tp *vt = (struct verbs_tp *)tp;
	struct pollfd pfd = { .fd = vt->channel->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int n = poll_once(vt, wc, max);

	if (n != 0 || timeout_ms == 0)
		return n;
	if (ibv_req_notify_cq(vt->cq, 0))
		return -EIO;
	n = poll_once(vt, wc, max);          /* a completion may have raced the arming */
	if (n != 0)
		return n;
	if (poll(&pfd, 1, timeout_ms) <= 0)
		return 0;
	if (ibv_get_cq_event(vt->channel, &ev_cq, &ev_ctx) == 0)
		ibv_ack_cq_events(ev_cq, 1);
	return poll_once(vt, wc, max);
}

static const char *verbs_qp_error(const struct nr_tp_qp *qp)
{
	const struct verbs_qp *q = (const struct verbs_qp *)qp;

	return q->err[0] ? q->err : NULL;
}

static void verbs_qp_state(const struct nr_tp_qp *qp, char *buf, size_t len)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT", [IBV_QPS_RTR] = "RTR",
		[IBV_QPS_RTS] = "RTS", [IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};
	const struct verbs_qp *q = (const struct verbs_qp *)qp;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_RQ_PSN | IBV_QP_SQ_PSN, &ia))
		return;
	snprintf(buf, len, "state %s, expects psn 0x%x, sends psn 0x%x next",
		 (unsigned)a.qp_state < sizeof(names) / sizeof(names[0]) && names[a.qp_state] ?
		 names[a.qp_state] : "unknown", a.rq_psn, a.sq_psn);
}

/* The RNIC's ACK timeout is the RNIC's (adaptive or not, its firmware decides). */
static void verbs_qp_acks_lag(struct nr_tp_qp *qp)
{
}

/* The RNIC picks a QP's UDP source port, one for all its packets. */
static int verbs_qp_spray(struct nr_tp_qp *qp, unsigned ports, struct nr_qp_info *info)
{
	return ports > 1 ? -ENOTSUP : 0;
}

/* A QP is its device's (its port's): rails are devices, not interfaces. */
static int verbs_qp_rail(struct nr_tp_qp *qp, const char *ifname)
{
	(void)qp;
	(void)ifname;
	return -ENOTSUP;
}

const struct nr_tp_ops nr_tp_verbs_ops = NR_TP_OPS("verbs", verbs, false, false, false, 0);
