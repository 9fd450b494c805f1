/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The state of a communicator (struct nr_comm) and its parts, which every
 * file of libnetreduce above the transports works on; types only.  The files,
 * bottom up, each calling only the ones above it: host/README.md, "Files".
 */
#ifndef NR_COMM_INTERNAL_H
#define NR_COMM_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/netreduce.h"
#include "host/transport/nr_transport.h"
#include "proto/nr_job.h"

#define NR_ERRLEN 512
#define NR_RECV_DEPTH 128   /* receives kept posted on every receiving QP */
#define NR_BACKLOG_MAX (1 << 20)  /* completions kept for the next collective, at most */

/*
 * The rings of a communicator: the plain ring, then the box ring's channels
 * (channel k is ring NR_RING_BOX + k, 1..NR_MAX_CHANNELS of them): each a
 * ring of QPs of its own, registered with the box as one channel of the job.
 */
enum { NR_RING_PLAIN = 0, NR_RING_BOX = 1 };
#define NR_RINGS_MAX (NR_RING_BOX + NR_MAX_CHANNELS)

static inline const char *nr_ring_name(int ring) { return ring >= NR_RING_BOX ? "box" : "plain"; }

/* What one rank tells the others about itself (bootstrap table row). */
struct nr_peer {
	uint32_t ip;                 /* network order */
	uint8_t mac[6];
	struct nr_qp_info send[NR_RINGS_MAX];   /* per ring: its send QP */
	struct nr_qp_info recv[NR_RINGS_MAX];   /* its receive QP */
	uint64_t va[NR_RINGS_MAX];              /* its receive region per ring */
	uint32_t rkey[NR_RINGS_MAX];
};

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

/* The job rank 0 registered with the box (nr_box_client.c), and the thread
 * that renews its lease while the communicator lives. */
struct nr_box_job {
	int fd;
	uint32_t job;
	char key[64];
	uint32_t credits;
	uint32_t result_key;
	uint32_t lease_ms;           /* the box's; renewed every third of it */
	bool renewing;               /* the renew thread runs */
	bool stop;                   /* under lock: the thread ends */
	pthread_t renew_th;
	pthread_mutex_t lock;
	pthread_cond_t wake;
};

struct nr_topo;   /* hosts with several ranks, racks: nr_topo.h */

struct nr_comm {
	struct nr_config cfg;
	char root[64], switch_addr[64], token[128], transport[16], soft_profile[16], device[64],
	     addr[32];
	int rank, world;
	struct nr_tp *tp;
	struct nr_peer *peers;       /* world rows */
	unsigned n_channels;         /* box channels, 1..NR_MAX_CHANNELS */
	unsigned n_rings;            /* NR_RING_BOX + n_channels */
	struct nr_ring ring[NR_RINGS_MAX];
	/* bootstrap sockets: rank 0 holds world-1 (index = rank), others hold fds[0] */
	int *fds;
	int lfd;
	struct nr_box_job box;
	bool has_box;
	uint8_t reduce;              /* enum nr_op the box job computes (cfg.reduce) */
	int short_tos;               /* traffic class of tolerant messages on the box ring: the
				      * job's short DSCP, cfg.tclass's ECN bits; -1: they go exact
				      * (no bound, no box, a transport without a class per message) */
	bool broken;
	uint8_t box_seq, ring_seq;   /* op sequence per ring (imm tag high byte) */
	uint64_t box_msgs;           /* messages sent on the box ring since init, all channels:
				      * message G goes on channel G mod n_channels */
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
	struct nr_comm_stats stats;  /* the public calls on this comm (nr_api.c) */
	/*
	 * Set on the communicator the application holds when its ranks span
	 * hosts with several ranks or racks: this one is then the rendezvous of
	 * the layout (no transport) and the collectives run on the topology's
	 * sub-communicators (nr_api.c dispatches).
	 */
	struct nr_topo *topo;
};

#endif /* NR_COMM_INTERNAL_H */
