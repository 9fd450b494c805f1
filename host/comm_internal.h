/* SPDX-License-Identifier: BSD-3-Clause */
/* libnetreduce internals shared by nr_comm.c, nr_bootstrap.c, nr_box.c, nr_allreduce.c, nr_ring.c. */
#ifndef NR_COMM_INTERNAL_H
#define NR_COMM_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netreduce.h"
#include "nr_transport.h"
#include "proto/nr_text.h"

#define NR_ERRLEN 512
#define NR_RECV_DEPTH 128   /* receives kept posted on every receiving QP */
#define NR_BACKLOG_MAX (1 << 20)  /* completions kept for the next collective, at most */

/* What one rank tells the others about itself (bootstrap table row). */
struct nr_peer {
	uint32_t ip;                 /* network order */
	uint8_t mac[6];
	struct nr_qp_info send[2];   /* per ring (NR_RING_BOX, NR_RING_PLAIN): its send QP */
	struct nr_qp_info recv[2];   /* its receive QP */
	uint64_t va[2];              /* its receive region per ring */
	uint32_t rkey[2];
};

enum { NR_RING_BOX = 0, NR_RING_PLAIN = 1 };

/* One ring of a communicator: a send QP to rank+1, a receive QP from rank-1. */
struct nr_ring {
	struct nr_tp_qp *sqp;
	struct nr_tp_qp *rqp;
	struct nr_qp_info sinfo, rinfo;
	struct nr_tp_mr mr;          /* this rank's region (receive staging and send/work area) */
	void *mem;
	size_t cap;                  /* box: slots; plain: bytes per section */
	uint64_t peer_va;            /* rank+1's region */
	uint32_t peer_rkey;
	uint32_t posted;             /* receives posted on rqp */
};

/* Rank 0's connection to the box's control listener. */
struct nr_box {
	int fd;
	uint32_t job;
	char key[64];
	uint32_t credits;
	uint32_t result_key;
};

struct nr_comm {
	struct nr_config cfg;
	char root[64], switch_addr[64], token[128], transport[16], device[64], addr[32];
	int rank, world;
	struct nr_tp *tp;
	struct nr_peer *peers;       /* world rows */
	struct nr_ring ring[2];
	/* bootstrap sockets: rank 0 holds world-1 (index = rank), others hold fds[0] */
	int *fds;
	int lfd;
	struct nr_box box;
	bool has_box;
	bool broken;
	uint8_t box_seq, ring_seq;   /* op sequence per ring (imm tag high byte) */
	uint64_t box_msgs;           /* messages sent on the box ring since init */
	/* completions of the next collective seen early: backlog[head..nbacklog) */
	struct nr_wc *backlog;
	int nbacklog, head, capbacklog;
	bool hold_backlog;           /* set while the backlog holds the next op's completions */
	/*
	 * soft transport: a progress thread keeps answering (ACKs, retransmissions)
	 * between collectives, as an RNIC would.  lock: held by every public call
	 * for its whole duration and by the thread around each poll.
	 */
	pthread_mutex_t lock;
	pthread_t progress;
	bool has_progress;
	volatile bool stop;
	char err[NR_ERRLEN];
};

/* nr_config.c */
int nr_config_check_env(const struct nr_config *cfg, bool env);

/* nr_comm.c */
int nr_fail(struct nr_comm *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void nr_set_tls_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t nr_now_ms(void);
int nr_post_recvs(struct nr_comm *c, struct nr_ring *r);
/* Let the transport run (ACKs, retransmissions) while waiting for something else. */
void nr_idle_progress(struct nr_comm *c);
/* Poll the transport: backlog first. Returns completions, 0, or an nr_err. */
int nr_poll(struct nr_comm *c, struct nr_wc *wc, int max, int timeout_ms);
/* Keep a completion of the next collective (a faster peer already started it). */
int nr_defer(struct nr_comm *c, const struct nr_wc *wc);
/* Turn a failed completion into NR_ERR_PEER naming the peer. */
int nr_wc_fail(struct nr_comm *c, const struct nr_wc *wc, int ring);
int nr_progress_fail(struct nr_comm *c, const char *what, int ring, bool waiting_recv);

/*
 * One collective in flight on one ring, as nr_drive() runs it: post what the
 * window allows, poll, count send completions, hand receives to the op, keep
 * receives of the next collective for later, fail with a message when nothing
 * moves for timeout_ms.
 */
struct nr_drive {
	const char *name;               /* "nr_allreduce", for messages */
	int ring;                       /* NR_RING_BOX or NR_RING_PLAIN */
	void *op;
	const uint64_t *recvd;          /* messages received so far (recv bumps it) */
	uint64_t nrecv;                 /* ... of this many */
	uint64_t *acked;                /* send completions so far (nr_drive bumps it) */
	uint64_t nsend;                 /* ... of this many */
	int (*post)(struct nr_comm *c, void *op);
	int (*recv)(struct nr_comm *c, void *op, const struct nr_wc *wc);
	bool (*waiting_recv)(const void *op);   /* stalled on a receive (for the message) */
};

int nr_drive(struct nr_comm *c, const struct nr_drive *d);

void nr_comm_lock(struct nr_comm *c);
void nr_comm_unlock(struct nr_comm *c);

/* nr_bootstrap.c */
int nr_parse_hostport(const char *s, uint32_t *ip, uint16_t *port);
int nr_tcp_connect(const char *addr, uint32_t timeout_ms, int *fd, char *err, size_t errlen);
int nr_send_json_line(int fd, void *json /* json_t */, char *err, size_t errlen);
/* Read one line within deadline; polls the transport of c (if non-NULL) meanwhile. */
int nr_recv_json_line(struct nr_comm *c, int fd, uint64_t deadline, void **json,
		      char *err, size_t errlen);
int nr_bootstrap(struct nr_comm *c);
/* All ranks: tell rank 0 (va, rkey) of our plain ring region; learn rank+1's. */
int nr_exchange_plain_region(struct nr_comm *c);
/* Barrier over the bootstrap sockets. */
int nr_barrier(struct nr_comm *c, const char *what);
void nr_bootstrap_close(struct nr_comm *c);

/* nr_box.c */
int nr_box_job_create(struct nr_comm *c);
void nr_box_job_destroy(struct nr_comm *c);

/* nr_allreduce.c, nr_ring.c */
/* 1: the call is over (done, or error in *rc); 0: go on with the collective. */
int nr_check_args(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		  enum nr_dtype dtype, enum nr_op op, const char *fn, int *rc);
int nr_box_region_init(struct nr_comm *c);
int nr_plain_region_init(struct nr_comm *c, size_t bytes);

#endif /* NR_COMM_INTERNAL_H */
