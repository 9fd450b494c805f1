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
#include "proto/nr_elem.h"
#include "proto/nr_job.h"

#define NR_ERRLEN 512
/*
 * A job striped over several boxes (NR_BOX "ip:port,ip:port,..."): box k sums
 * the job's channels k, k + K, ... (host/README.md, "Several boxes").
 */
#define NR_MAX_BOXES    8
#define NR_BOX_ADDR_LEN 48    /* "ip:port", "[v6]:port" */
#define NR_RECV_DEPTH 128   /* receives kept posted on every receiving QP */
#define NR_BACKLOG_MAX (1 << 20)  /* completions kept for the next collective, at most */

/*
 * The rings of a communicator: the plain ring, then each element type's box
 * job (the fp32 one registered at init, a 16-bit type's at its first
 * nr_allreduce, nr_comm.c nr_box_set_open): its channel k is ring
 * nr_box_ring(t, k), a ring of QPs of its own, registered with the box as
 * channel k of type t's job.
 */
enum { NR_RING_PLAIN = 0, NR_RING_BOX = 1 };
/*
 * The box jobs a communicator may hold, c->box[t]: one per element type, and
 * the all-gather's (nr_allgather): a job of reduce "bor" on 32-bit words,
 * opened at the first all-gather.  t names its rings, nr_box_ring(t, k).
 */
#define NR_BOX_BOR   NR_ELEM_TYPES
#define NR_BOX_KINDS (NR_ELEM_TYPES + 1)
#define NR_RINGS_MAX (NR_RING_BOX + NR_BOX_KINDS * NR_MAX_CHANNELS)

/* "fp32", "bf16", "fp16" (the element types' jobs), "bor" (the all-gather's) */
static inline const char *nr_box_kind_name(unsigned t)
{
	return t == NR_BOX_BOR ? "bor" : nr_elem_name(t);
}

static inline int nr_box_ring(unsigned t, unsigned k)
{
	return NR_RING_BOX + (int)(t * NR_MAX_CHANNELS + k);
}

/* The public element types are the job contract's (proto/nr_elem.h), number for number. */
_Static_assert(NR_FLOAT32 == (int)NR_ELEM_FP32 && NR_BF16 == (int)NR_ELEM_BF16 &&
	       NR_FP16 == (int)NR_ELEM_FP16, "enum nr_dtype is enum nr_elem_type");

/* "NR_FLOAT32", "NR_BF16", "NR_FP16" (messages); bytes of an element */
static inline const char *nr_dtype_name(enum nr_dtype d)
{
	return d == NR_BF16 ? "NR_BF16" : d == NR_FP16 ? "NR_FP16" : "NR_FLOAT32";
}

static inline size_t nr_dtype_size(enum nr_dtype d)
{
	return nr_elem_size((unsigned)d);
}

static inline const char *nr_ring_name(int ring) { return ring >= NR_RING_BOX ? "box" : "plain"; }

/* A box ring's channel (nr_box_ring's k). */
static inline unsigned nr_ring_chan(int ring)
{
	return (unsigned)(ring - NR_RING_BOX) % NR_MAX_CHANNELS;
}

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
	uint64_t *de;                /* box: each send slot's drop-eligible packets (the
				      * collective's, made at its first marked op); NULL */
};

/*
 * One element type's box job: rank 0 registered it (nr_box_client.c) and a
 * thread renews its lease while the communicator lives; every rank keeps
 * what its messages need (credits, result key, sequence).  Over several
 * boxes (NR_BOX a list of K) the job is K box jobs, one a box: box k sums
 * the job's channels k, k + K, ... (its own channels 0, 1, ... in that
 * order), each its own key, lease, credits and result key.
 */
struct nr_tls_conn; /* control/tls/nr_tls.h */

/* A connection to the box's control listener: TCP (fd -1: none), TLS over it with NR_TLS_CA. */
struct nr_box_conn {
	int fd;
	struct nr_tls_conn *tls;
};

struct nr_box_job;

/* One box's part of a job: what that box registered and the renewal of its lease. */
struct nr_box_part {
	struct nr_box_job *owner;
	const char *addr;        /* the box's control address (c->boxes[k]) */
	struct nr_box_conn conn; /* the part's control connection, kept open for its
				      * renewals and its destroy (fd -1: none); rank 0's */
	uint32_t job;            /* the box's job id; rank 0's */
	char key[64];            /* its key ("" : not registered); rank 0's */
	uint32_t credits;
	uint32_t result_key; /* every rank's: the immediates of the box's results */
	uint32_t lease_ms;   /* the box's; renewed every third of it */
	bool renewing;       /* the renew thread runs */
	bool stop;           /* under lock: the thread ends */
	pthread_t renew_th;
	pthread_mutex_t lock;
	pthread_cond_t wake;
};

struct nr_box_job {
	struct nr_comm *comm;
	uint8_t dtype;               /* enum nr_elem_type, or NR_BOX_BOR (its words fp32's) */
	bool open;                   /* its rings are connected and the job registered */
	bool refused;                /* the box refused or could not register it, as rank 0
				      * told every rank: the all-gather's (NR_BOX_BOR) fails
				      * at once from then on, the communicator goes on */
	char why[256];               /* refused: the error of the first try */
	struct nr_box_part part[NR_MAX_BOXES]; /* c->n_boxes of them */
	uint32_t credits;                      /* the fewest of its parts' */
	uint8_t seq;                 /* op sequence on its rings (imm tag high byte) */
	uint64_t msgs;               /* messages sent on its rings since they opened, all
				      * channels: message G goes on channel G mod n_channels */
	/* with priority classes: each op on one channel, its own sequence and count */
	uint8_t ch_seq[NR_MAX_CHANNELS];
	uint64_t ch_msgs[NR_MAX_CHANNELS];
};

/* The job is registered with its box(es) (rank 0 holds its keys). */
static inline bool nr_box_job_made(const struct nr_box_job *b)
{
	return b->part[0].key[0] != 0;
}

struct nr_topo;   /* hosts with several ranks, racks: nr_topo.h */
struct nr_tls_client; /* control/tls/nr_tls.h */

/* The rendezvous' key, and its sizes (the proofs: nr_auth.h). */
#define NR_AUTH_KEY_BYTES 32
#define NR_AUTH_NONCE_BYTES 32      /* rank 0's, one per rendezvous */
#define NR_AUTH_MNONCE_BYTES 16     /* a member's, one per connection */
#define NR_AUTH_PROOF_HEX 64
#define NR_AUTH_SECRET_MIN 16       /* bytes of a job secret, at least */
#define NR_AUTH_SECRET_MAX 1024     /* characters of job_secret (hex or a path) */

struct nr_auth {
	bool on;                     /* a key: every line carries a proof */
	uint8_t key[NR_AUTH_KEY_BYTES];
	char src[NR_AUTH_SECRET_MAX + 48];   /* where the secret comes from, for messages */
};

/* One rendezvous connection, as its lines' proofs see it (nr_auth.h). */
struct nr_link {
	uint8_t mnonce[NR_AUTH_MNONCE_BYTES];  /* the member's nonce (in its hello) */
	uint32_t ip;                 /* the member end: address (network order), */
	uint16_t port;               /* TCP port */
	uint32_t tx, rx;             /* lines sent and received on it */
};

struct nr_comm {
	struct nr_config cfg;
	char root[64], switch_addr[NR_MAX_BOXES * NR_BOX_ADDR_LEN], token[128], transport[16],
		tp_profile[16], device[64], addr[32];
	/* NR_BOX's boxes, and NR_RAILS' interfaces (soft: channel c's QPs send out
	 * rails[c mod n_rails]; 0: the routing table's) */
	char boxes[NR_MAX_BOXES][NR_BOX_ADDR_LEN];
	unsigned n_boxes;
	/* the transport resends selectively (NR_SOFT_PROFILE=sr): the box job says so */
	bool selective;
	char rails[NR_MAX_BOXES][16];
	unsigned n_rails;
	char tenant[32]; /* NR_TENANT: the tenant the box's requests name, "" none */
	int rank, world;
	struct nr_tp *tp;
	uint32_t tp_window;          /* the transport's window per QP and path (0: its own) */
	struct nr_peer *peers;       /* world rows */
	unsigned n_channels;         /* box channels of every job, 1..NR_MAX_CHANNELS */
	struct nr_ring ring[NR_RINGS_MAX];   /* unused ones all zero */
	/* bootstrap sockets: rank 0 holds world-1 (index = rank), others hold fds[0] */
	int *fds;
	int lfd;
	struct nr_link *links;       /* beside fds: each connection's proofs */
	struct nr_auth auth;         /* the key (auth.on) the lines prove */
	uint8_t nonce[NR_AUTH_NONCE_BYTES];   /* rank 0's, of this rendezvous */
	char job_secret[NR_AUTH_SECRET_MAX + 1];   /* cfg's, for sub-communicators */
	struct nr_box_job box[NR_BOX_KINDS];       /* by element type, then NR_BOX_BOR;
						 * [NR_ELEM_FP32] at init */
	struct nr_tls_client *box_tls;   /* NR_TLS_CA: TLS to the box (rank 0; NULL: plain) */
	bool has_box;
	uint8_t reduce;              /* enum nr_op the box job computes (cfg.reduce) */
	int short_tos;               /* traffic class of tolerant messages on the box ring: the
				      * job's short DSCP, cfg.tclass's ECN bits; -1: they go exact
				      * (no bound, no box, a transport without a class per message) */
	/* priority classes (cfg.prio_classes > 1, with short_tos): the box channels are
	 * classes + 1, channel k < classes class k's (its traffic class class_tos[k]),
	 * channel classes the exact messages' (class_tos[classes], above them all) */
	unsigned classes;            /* 0: none (ops striped over the channels) */
	int class_tos[NR_MAX_CLASSES + 1];
	bool broken;
	uint8_t ring_seq;            /* op sequence on the plain ring (imm tag high byte) */
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

/* The box that sums channel ch of every job: box ch mod K (K: NR_BOX's count). */
static inline unsigned nr_chan_box(const struct nr_comm *c, unsigned ch)
{
	return c->n_boxes > 1 ? ch % c->n_boxes : 0;
}

/* The control address of the box a ring's traffic goes through: its channel's
 * box for a box ring, NR_BOX (all of it) for the plain ring. */
static inline const char *nr_ring_box_addr(const struct nr_comm *c, int ring)
{
	return ring >= NR_RING_BOX && c->n_boxes > 1 ? c->boxes[nr_chan_box(c, nr_ring_chan(ring))]
						     : c->switch_addr;
}

#endif /* NR_COMM_INTERNAL_H */
