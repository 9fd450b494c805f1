/* SPDX-License-Identifier: BSD-3-Clause */
/* A stand-in libibverbs (see verbs_standin.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "verbs_standin.h"

#define CQ_RING 4096

struct sdev {
	struct ibv_device dev;         /* first: ibv_device * is a struct sdev * */
	struct standin_device d;
	int opened;
};

struct sctx {
	struct ibv_context ctx;        /* first */
	struct sdev *sd;
};

struct scq {
	struct ibv_cq cq;              /* first */
	struct ibv_wc ring[CQ_RING];
	unsigned head, tail;
};

static struct sdev devs[STANDIN_MAX_DEVICES];
static int ndevs;
static struct standin_modify mlog[STANDIN_MAX_LOG];
static unsigned nmlog;
static struct ibv_send_wr slog[STANDIN_MAX_LOG];
static unsigned nslog;
static int nopen;
static uint32_t next_qpn = 0x100;

void standin_reset(void)
{
	memset(devs, 0, sizeof(devs));
	ndevs = 0;
	nmlog = nslog = 0;
	nopen = 0;
}

int standin_add_device(const struct standin_device *d)
{
	struct sdev *s = &devs[ndevs];

	if (ndevs == STANDIN_MAX_DEVICES)
		return -1;
	memset(s, 0, sizeof(*s));
	s->d = *d;
	snprintf(s->dev.name, sizeof(s->dev.name), "%s", d->name);
	s->dev.node_type = IBV_NODE_CA;
	s->dev.transport_type = IBV_TRANSPORT_IB;
	return ndevs++;
}

struct standin_gid standin_gid_v4(const char *ip, int v2)
{
	struct standin_gid g = { .gid_type = v2 ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1 };

	g.gid.raw[10] = g.gid.raw[11] = 0xff;
	inet_pton(AF_INET, ip, g.gid.raw + 12);
	return g;
}

unsigned standin_nmodify(void) { return nmlog; }
const struct standin_modify *standin_modify_at(unsigned i) { return i < nmlog ? &mlog[i] : NULL; }
unsigned standin_nsend(void) { return nslog; }
const struct ibv_send_wr *standin_send_at(unsigned i) { return i < nslog ? &slog[i] : NULL; }
int standin_open_count(void) { return nopen; }

int standin_opened(const char *name)
{
	for (int i = 0; i < ndevs; i++)
		if (!strcmp(devs[i].d.name, name))
			return devs[i].opened;
	return -1;
}

static struct sdev *sdev_of(struct ibv_context *ctx) { return ((struct sctx *)ctx)->sd; }

/* ---- devices ---------------------------------------------------------- */

struct ibv_device **ibv_get_device_list(int *num)
{
	struct ibv_device **l = calloc((size_t)ndevs + 1, sizeof(*l));

	if (!l)
		return NULL;
	for (int i = 0; i < ndevs; i++)
		l[i] = &devs[i].dev;
	if (num)
		*num = ndevs;
	return l;
}

void ibv_free_device_list(struct ibv_device **list) { free(list); }

const char *ibv_get_device_name(struct ibv_device *device) { return device->name; }

/* ---- context ops (what verbs.h's inline functions call) --------------------- */

static void cq_push(struct scq *c, const struct ibv_wc *wc)
{
	if (c->tail - c->head < CQ_RING)
		c->ring[c->tail++ % CQ_RING] = *wc;
}

static int op_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	for (; wr; wr = wr->next) {
		struct ibv_wc wc = { .wr_id = wr->wr_id, .status = IBV_WC_SUCCESS,
				     .opcode = IBV_WC_RDMA_WRITE, .qp_num = qp->qp_num };

		if (qp->state != IBV_QPS_RTS) {
			*bad = wr;
			return EINVAL;
		}
		if (nslog < STANDIN_MAX_LOG) {
			slog[nslog] = *wr;
			slog[nslog].sg_list = NULL;
			slog[nslog++].next = NULL;
		}
		cq_push((struct scq *)qp->send_cq, &wc);
	}
	return 0;
}

static int op_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	return 0;
}

static int op_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct scq *c = (struct scq *)cq;
	int k = 0;

	while (k < n && c->head != c->tail)
		wc[k++] = c->ring[c->head++ % CQ_RING];
	return k;
}

static int op_req_notify_cq(struct ibv_cq *cq, int solicited_only) { return 0; }

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct sctx *c = calloc(1, sizeof(*c));

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->sd = (struct sdev *)device;
	c->sd->opened++;
	c->ctx.device = device;
	c->ctx.cmd_fd = c->ctx.async_fd = -1;
	c->ctx.ops.post_send = op_post_send;
	c->ctx.ops.post_recv = op_post_recv;
	c->ctx.ops.poll_cq = op_poll_cq;
	c->ctx.ops.req_notify_cq = op_req_notify_cq;
	nopen++;
	return &c->ctx;
}

int ibv_close_device(struct ibv_context *context)
{
	nopen--;
	free(context);
	return 0;
}

/* ---- port and GIDs ---------------------------------------------------- */

/* verbs.h's ibv_query_port falls back to this one: our contexts are not extended. */
int (ibv_query_port)(struct ibv_context *context, uint8_t port_num,
		     struct _compat_ibv_port_attr *port_attr)
{
	const struct sdev *s = sdev_of(context);
	struct ibv_port_attr *a = (struct ibv_port_attr *)port_attr;

	if (port_num != 1)
		return EINVAL;
	memset(a, 0, sizeof(*a));
	a->state = s->d.state ? s->d.state : IBV_PORT_ACTIVE;
	a->max_mtu = IBV_MTU_4096;
	a->active_mtu = s->d.active_mtu;
	a->gid_tbl_len = STANDIN_MAX_GIDS;
	a->max_msg_sz = s->d.max_msg_sz;
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	return 0;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	const struct sdev *s = sdev_of(context);

	if (port_num != 1 || index < 0 || index >= STANDIN_MAX_GIDS)
		return -1;
	*gid = index < s->d.ngids ? s->d.gids[index].gid : (union ibv_gid){ 0 };
	return 0;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	const struct sdev *s = sdev_of(context);

	if (port_num != 1 || gid_index >= (uint32_t)s->d.ngids)
		return ENODATA;
	memset(entry, 0, entry_size);
	entry->gid = s->d.gids[gid_index].gid;
	entry->gid_index = gid_index;
	entry->port_num = port_num;
	entry->gid_type = s->d.gids[gid_index].gid_type;
	return 0;
}

/* ---- PD, MR, CQ, channel ---------------------------------------------- */

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct ibv_pd *pd = calloc(1, sizeof(*pd));

	if (pd)
		pd->context = context;
	return pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	free(pd);
	return 0;
}

struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	static uint32_t key = 0x1000;
	struct ibv_mr *mr = calloc(1, sizeof(*mr));

	if (!mr)
		return NULL;
	*mr = (struct ibv_mr){ .context = pd->context, .pd = pd, .addr = addr, .length = length,
			       .lkey = key, .rkey = key };
	key++;
	return mr;
}

/* What ibv_reg_mr's inline wrapper calls for non-constant access flags (and at -O0). */
struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	return (ibv_reg_mr)(pd, addr, length, (int)access);
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	free(mr);
	return 0;
}

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct ibv_comp_channel *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return NULL;
	ch->context = context;
	ch->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ch->fd < 0) {
		free(ch);
		return NULL;
	}
	return ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	close(channel->fd);
	free(channel);
	return 0;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	struct scq *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->cq.context = context;
	c->cq.channel = channel;
	c->cq.cq_context = cq_context;
	c->cq.cqe = cqe;
	return &c->cq;
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	free(cq);
	return 0;
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	return -1;     /* nothing ever signals the channel: polls see completions at once */
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents) {}

/* ---- QPs -------------------------------------------------------------- */

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp *qp = calloc(1, sizeof(*qp));

	if (!qp)
		return NULL;
	qp->context = pd->context;
	qp->pd = pd;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->qp_num = next_qpn++;
	qp->state = IBV_QPS_RESET;
	qp->qp_type = attr->qp_type;
	return qp;
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	static const int next[] = { [IBV_QPS_RESET] = IBV_QPS_INIT, [IBV_QPS_INIT] = IBV_QPS_RTR,
				    [IBV_QPS_RTR] = IBV_QPS_RTS };

	if (nmlog < STANDIN_MAX_LOG)
		mlog[nmlog++] = (struct standin_modify){ .qp_num = qp->qp_num, .attr = *attr,
							 .mask = attr_mask };
	if (attr_mask & IBV_QP_STATE) {
		if (qp->state > IBV_QPS_RTR || (int)attr->qp_state != next[qp->state])
			return EINVAL;
		qp->state = attr->qp_state;
	}
	return 0;
}

/* The state, and the PSNs the last modifications of this QP set. */
int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr)
{
	memset(attr, 0, sizeof(*attr));
	memset(init_attr, 0, sizeof(*init_attr));
	attr->qp_state = qp->state;
	for (unsigned i = 0; i < nmlog; i++) {
		if (mlog[i].qp_num != qp->qp_num)
			continue;
		if (mlog[i].mask & IBV_QP_RQ_PSN)
			attr->rq_psn = mlog[i].attr.rq_psn;
		if (mlog[i].mask & IBV_QP_SQ_PSN)
			attr->sq_psn = mlog[i].attr.sq_psn;
	}
	return 0;
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	free(qp);
	return 0;
}

const char *ibv_port_state_str(enum ibv_port_state port_state)
{
	return port_state == IBV_PORT_ACTIVE ? "PORT_ACTIVE" : port_state == IBV_PORT_DOWN ?
	       "PORT_DOWN" : "PORT_OTHER";
}

const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	return status == IBV_WC_SUCCESS ? "success" : "error";
}
