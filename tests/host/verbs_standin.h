/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A stand-in libibverbs for tests on machines without an RDMA device: the
 * entry points host/transport/tp_verbs.c calls (rdma-core 44's exported functions, and
 * a context whose ops serve the inline ibv_post_send, ibv_post_recv,
 * ibv_poll_cq and ibv_req_notify_cq of verbs.h), over devices the test
 * describes, recording every ibv_modify_qp (attributes and mask) and every
 * posted send.  Linked instead of libibverbs (link time: the test executable
 * links the stand-in and not -libverbs).
 *
 * What it models: devices with one port (state, active MTU, max_msg_sz, a GID
 * table with RoCE v1/v2 entries); QP state changes as the mask asks (no
 * checks beyond the state order RESET -> INIT -> RTR -> RTS); a posted send
 * completes successfully at once.  Not a transport: nothing is delivered.
 */
#ifndef NR_VERBS_STANDIN_H
#define NR_VERBS_STANDIN_H

#include <stdint.h>

#include <infiniband/verbs.h>

#define STANDIN_MAX_DEVICES 4
#define STANDIN_MAX_GIDS 8
#define STANDIN_MAX_LOG 64

struct standin_gid {
	union ibv_gid gid;
	enum ibv_gid_type gid_type;   /* IBV_GID_TYPE_ROCE_V1 / _V2 (_IB: empty) */
};

struct standin_device {
	char name[64];
	enum ibv_port_state state;    /* 0: IBV_PORT_ACTIVE */
	enum ibv_mtu active_mtu;
	uint32_t max_msg_sz;
	int ngids;
	struct standin_gid gids[STANDIN_MAX_GIDS];
};

struct standin_modify {
	uint32_t qp_num;
	struct ibv_qp_attr attr;
	int mask;
};

/* Forget everything; no devices. */
void standin_reset(void);
/* Add a device; returns its index. */
int standin_add_device(const struct standin_device *d);
/* The GID ::ffff:ip (RoCE v2 when v2, else v1), ip a dotted IPv4 address. */
struct standin_gid standin_gid_v4(const char *ip, int v2);

/* What was done: ibv_modify_qp calls in order, sends posted, devices opened. */
unsigned standin_nmodify(void);
const struct standin_modify *standin_modify_at(unsigned i);
unsigned standin_nsend(void);
const struct ibv_send_wr *standin_send_at(unsigned i);  /* sg_list is not kept */
int standin_opened(const char *name);   /* times ibv_open_device opened it */
int standin_open_count(void);           /* contexts open now */

#endif /* NR_VERBS_STANDIN_H */
