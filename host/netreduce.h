/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libnetreduce: all-reduce for training hosts, through a netreduce box or as a
 * plain ring.  Link with `pkg-config --cflags --libs libnetreduce`.
 *
 *   struct nr_config cfg;
 *   nr_config_default(&cfg);            // or nr_config_from_env(&cfg)
 *   cfg.rank = r; cfg.world = n; cfg.root = "10.0.0.1:29500"; cfg.addr = "10.0.0.2";
 *   struct nr_comm *c;
 *   if (nr_comm_init(&cfg, &c)) { fprintf(stderr, "%s\n", nr_comm_last_error(NULL)); ... }
 *   nr_allreduce(c, grad, grad, n, NR_FLOAT32, NR_SUM);     // through the box
 *   nr_ring_allreduce(c, in, out, n, NR_FLOAT32, NR_SUM);   // plain ring, no box
 *   nr_comm_destroy(c);
 *
 * Every rank calls the same sequence of collectives with the same count.  A
 * call returns 0 or a negative enum nr_err; nr_comm_last_error() then says
 * what failed, naming the rank, peer or box that stopped answering.  No call
 * waits longer than timeout_ms without progress.  A communicator is used by
 * one thread at a time (with the soft transport the library runs one progress
 * thread per communicator that keeps answering peers between calls).  A
 * process may hold several communicators (a framework's world group and its
 * subgroups), each its own box job, used from threads of their own; with the
 * soft transport those on one address share its UDP socket, as an RNIC's
 * contexts share port 4791.  After an error other than NR_ERR_INVALID the
 * communicator is broken: destroy it.
 */
#ifndef NETREDUCE_H
#define NETREDUCE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What libnetreduce.so exports: these calls and nothing else (host/shared/libnetreduce.map). */
#ifndef NR_API
#define NR_API __attribute__((visibility("default")))
#endif

enum nr_err {
	NR_OK = 0,
	NR_ERR_CONFIG = -1,  /* bad or missing configuration */
	NR_ERR_INVALID = -2, /* bad argument to a call (NULL buffer, dtype, op) */
	NR_ERR_NOMEM = -3,
	NR_ERR_BOOTSTRAP = -4,    /* TCP rendezvous failed */
	NR_ERR_BOX = -5,          /* box refused or lost the job, or is unreachable */
	NR_ERR_TRANSPORT = -6,    /* transport could not be opened or failed locally */
	NR_ERR_PEER = -7,         /* a peer stopped answering (retry limit) or errored */
	NR_ERR_TIMEOUT = -8,      /* no progress within timeout_ms */
	NR_ERR_BROKEN = -9,       /* communicator failed earlier; destroy it */
	NR_ERR_UNSUPPORTED = -10, /* the box takes no job for this call (nr_allgather on a box
				   * without reduce bor); the communicator goes on */
};

/*
 * Element types.  NR_BF16 (bfloat16) and NR_FP16 (IEEE binary16) are summed
 * in FP32 and rounded once to the type (round to nearest even) through the
 * box: the box widens every rank's element, adds them in FP32 in rank order
 * and rounds the sum once (nr_allreduce).  The ring (nr_ring_allreduce)
 * rounds at every hop, as NCCL's and Gloo's 16-bit rings do: it sends 16-bit
 * partial sums.  NR_SUM of every type; NR_MAX of NR_FLOAT32 only.
 */
enum nr_dtype { NR_FLOAT32 = 0, NR_BF16 = 1, NR_FP16 = 2 };
/* NR_MAX: element-wise max, m = (x_r > m) ? x_r : m in rank order (a NaN of a rank
 * after the first is passed over); through the box only on a communicator whose
 * box job computes it (reduce "max"), on the ring always. */
enum nr_op { NR_SUM = 0, NR_MAX = 1 };

/*
 * The configuration grows by fields appended at the end; size, its first
 * field, is sizeof(struct nr_config) as the caller was compiled, set by
 * nr_config_default() and nr_config_from_env() (macros: they pass the
 * caller's sizeof).  The library reads and writes only size bytes of it and
 * takes the defaults for fields the caller's version does not have, so a
 * program built against an older netreduce.h keeps working with a newer
 * library (host/README.md, "ABI").  Always start from one of those two.
 */
struct nr_config {
	uint32_t size;           /* sizeof(struct nr_config) of the caller (set by the above) */
	int rank;                /* 0..world-1 */
	int world;               /* number of ranks, >= 1 */
	const char *root;        /* "ip:port" of the TCP rendezvous that rank 0 listens on */
	const char *switch_addr; /* "ip:port" of the box's TCP control listener; NULL: no box */
	const char *token;       /* shared token for the box's control API */
	const char *transport;   /* "soft" (default) or "verbs" */
	const char *device;      /* verbs: RDMA device name (NULL: first one) */
	const char *addr;        /* this host's IPv4 address on the data path (required if world > 1) */
	uint32_t mtu;            /* RoCE path MTU: 256, 512, 1024, 2048, 4096, the same on every
				    rank; 0 (default): the largest the interface of addr carries
				    (4096 from an IP MTU of 4192, 1024 from 1500) */
	uint32_t msg_size;       /* bytes per message, multiple of mtu; default 65536 */
	uint32_t timeout_ms;     /* bound on any wait without progress; default 10000 */
	uint32_t pool_msgs;      /* box slot pool per job in messages (even); default 8, W = 4
				    (per channel) */
	uint32_t channels;       /* box channels: rings of QPs the messages are striped over, each
				    one channel of the box's job (a box with several workers runs
				    them on several cores); 1..16, default 1; 0: as many as the box
				    has workers (asked at init) */
	uint32_t ring_window;    /* ring: messages in flight per rank, 1..64; default 16 */
	uint16_t udp_port;       /* soft: UDP port of every rank's data socket; default 4791 */
	int gid_index;           /* verbs: -1 (default) finds the device and RoCEv2 GID of addr */
	uint8_t ack_timeout;     /* local ACK timeout exponent, 4.096 us * 2^t (1..31); 0 (default):
				    the 8 tries of the retry limit span up to timeout_ms, t <= 18 */
	/* Hosts with several ranks (host/README.md, "Hosts with several ranks"). */
	int local_size;          /* ranks per host, 1..64: ranks h*local_size .. h*local_size +
				    local_size - 1 share host h's memory; default 1 */
	int local_rank;          /* this rank's place on its host; -1 (default): rank % local_size,
				    which any other value must equal */
	const char *hier;        /* "auto" (default), "parallel" or "hierarchical" */
	double intra_gbps;       /* Gbit/s of one rank's reads from the other ranks of its host;
				    0 (default): measured at init */
	double inter_gbps;       /* Gbit/s of the host link; 0 (default): the link's speed */
	double shm_pace_gbps;    /* cap each rank's reads from its host's other ranks at this many
				    Gbit/s, emulating a slower intra-host link (benchmarks); 0: off */
	/* Jobs across racks (host/README.md, "Jobs across racks"). */
	const char *racks;       /* hosts per rack, "4,4": ranks rack-major, a box per rack
				    (switch_addr of this rank's rack; NULL: a rack without a box);
				    NULL (default): one rack */
	int rack_agents;         /* hosts of each rack that carry the racks' sums between racks,
				    1/rack_agents of the buffer each: 1 (Rina's one agent) up to
				    the smallest rack's size; 0 (default): that size */
	/* later additions, at the end so that bindings of the fields above keep their offsets */
	const char *soft_profile; /* soft: "rnic" (default: as ConnectX RC QPs behave, adaptive
				     ACK timeout), "rxe" (fixed ACK timeout, as rxe), "legacy"
				     or "sr" (selective repeat, every rank; host/transport/README.md,
				     "The soft transport's RNIC profile", "Selective repeat") */
	uint8_t tclass;          /* IP traffic class of the data path, DSCP << 2 | ECN (verbs:
				    the GRH traffic class; soft: IP_TOS); default 0 */
	uint16_t soft_ackreq;    /* soft rnic: AckReq at least every N packets; 0: window / 4 */
	uint32_t soft_window;    /* soft: packets in flight per QP at most; 0: the link's
				    1.3 ms, at least 16 KiB, at most 128 packets */
	uint32_t bootstrap_timeout_ms; /* rendezvous: how long ranks wait for each other to join
				    (a rank may start late); default 300000 */
	const char *reduce;      /* what the box job computes, so what nr_allreduce's op must be:
				    "sum" (default, NULL) or "max" (NR_MAX); nr_ring_allreduce
				    takes either op on any communicator */
	/* Bounded loss: tolerant messages (NR_MSG_TOLERANT; host/README.md, "Tolerant messages") */
	uint32_t short_ppm;      /* the box may complete a packet of a tolerant message with one
				    rank's contribution missing, at most this many packets per
				    million of the message (0..500000); 0 (default): never */
	uint8_t short_dscp;      /* DSCP (0..63) of tolerant messages' packets, the mark the box
				    goes by; default 10 (AF11, a low-priority class) */
	uint8_t short_scale;     /* 1: the box scales a short packet's sum by N/(N-1) (sum
				    only); 0 (default): the sum of the others as it is */
	/* Spraying (host/README.md, "Spraying"): the box ring's packets over several paths */
	uint8_t spray_ports;     /* soft: UDP source ports each box-ring QP sends from in turn,
				    1..64, for ECMP to spread them over as many paths; 0 or 1
				    (default): one */
	uint16_t spray_reorder;  /* packets a sprayed stream may arrive out of order before
				    the box takes a gap for a loss (its job's reorder_pkts),
				    0..1024; default (0): 2 x (spray_ports - 1) */
	/* Priority classes (docs/short-slots.md, "Priority") */
	uint8_t prio_classes;    /* soft, with a box: tolerant messages in this many classes
				    (NR_MSG_CLASS), each on a box channel of its own with a DSCP of
				    its own, exact ones on one above them all (so prio_classes + 1
				    channels), 2..4; 0 or 1 (default): none */
	/* The rendezvous' secret (host/README.md, NR_JOB_SECRET; docs/trust.md) */
	const char *job_secret;  /* every hello and every reply of the rendezvous proves it
				    (HMAC-SHA256): 32 or more hex digits, or the path (starting
				    with / or .) of a file whose bytes are it, 16 or more; the
				    same on every rank.  NULL (default): a key derived from token,
				    else none (the rendezvous admits anyone who reaches it) */
	/* Drop-eligible packets (docs/short-slots.md, "Magnitude") */
	double de_thresh;        /* soft, with short_ppm: a packet of a tolerant all-reduce whose
				    every element's magnitude is below de_thresh x the RMS of the
				    whole buffer leaves drop-eligible (its class's DSCP + 2), for the
				    fabric to drop and the box to leave out first; 0..100, 0
				    (default): none */
};

/* Fill the size bytes of cfg with the defaults (rank 0, world 1, soft transport, no box). */
NR_API void nr_config_init(struct nr_config *cfg, size_t size);
/* nr_config_init, then the environment (nr_config_from_env). */
NR_API int nr_config_init_env(struct nr_config *cfg, size_t size);

/* Fill cfg with defaults (rank 0, world 1, soft transport, no box): the caller's sizeof. */
#define nr_config_default(cfg) nr_config_init((cfg), sizeof(*(cfg)))

/*
 * Defaults, then NR_RANK, NR_WORLD, NR_ROOT, NR_BOX, NR_TOKEN, NR_TRANSPORT,
 * NR_SOFT_PROFILE, NR_SOFT_WINDOW, NR_SOFT_ACKREQ, NR_TCLASS, NR_DEVICE, NR_ADDR, NR_MTU,
 * NR_MSG_SIZE, NR_TIMEOUT_MS, NR_BOOTSTRAP_TIMEOUT_MS, NR_POOL_MSGS, NR_RING_WINDOW,
 * NR_UDP_PORT, NR_GID_INDEX, NR_ACK_TIMEOUT, NR_LOCAL_SIZE, NR_LOCAL_RANK, NR_HIER,
 * NR_INTRA_GBPS, NR_INTER_GBPS, NR_SHM_PACE_GBPS, NR_RACKS, NR_REDUCE, NR_SHORT_PPM,
 * NR_SHORT_DSCP, NR_SHORT_SCALE, NR_SPRAY_PORTS, NR_SPRAY_REORDER, NR_PRIO_CLASSES,
 * NR_JOB_SECRET, NR_DE_THRESH, NR_CHANNELS (a number, or "auto" for 0) from the
 * environment.  Strings
 * point into the environment.  NR_ERR_CONFIG on a bad value; the message
 * (nr_comm_last_error(NULL)) names the variable.
 */
#define nr_config_from_env(cfg) nr_config_init_env((cfg), sizeof(*(cfg)))

/* Check a configuration without starting anything; message as above. */
NR_API int nr_config_check(const struct nr_config *cfg);

struct nr_comm;

/*
 * Rendezvous with the other ranks, connect both rings, register the box ring
 * as a job with the box (when switch_addr is set), barrier.  Collective.
 */
NR_API int nr_comm_init(const struct nr_config *cfg, struct nr_comm **comm);
/* Destroy the job on the box (rank 0), close everything.  Collective when healthy. */
NR_API void nr_comm_destroy(struct nr_comm *comm);

/*
 * Sum count floats of every rank's sendbuf into every rank's recvbuf, through
 * the box.  Every rank gets the same bits.  Summation order: rank order,
 * ((x_0 + x_1) + x_2) + ... + x_{world-1}.  With local_size P > 1 (H hosts of
 * P ranks, ranks host by host): L_h = ((x_{hP} + x_{hP+1}) + ...) +
 * x_{hP+P-1} in local-rank order inside host h, then ((L_0 + L_1) + ...) +
 * L_{H-1} through the box, whichever variant runs (nr_comm_algo).  Across
 * racks (racks set): docs/racks.md, "Summation order".
 */
NR_API int nr_allreduce(struct nr_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
		 enum nr_dtype dtype, enum nr_op op);

/*
 * NR_MSG_TOLERANT: the box may complete this message's packets short, within
 * the job's bound (short_ppm: a packet summed without one rank's contribution,
 * which that rank lost on its way to the box; docs/short-slots.md); every
 * other message is exact.  Its packets carry DSCP short_dscp.  A tolerant
 * call is exact all the same where it cannot be marked: short_ppm 0, no box,
 * hosts with several ranks, racks, one rank, or the verbs transport (the RNIC
 * sets the traffic class per QP, not per message); nr_comm_stats counts
 * which way each went.  For gradients, whose training absorbs a few short
 * sums; never for what must add up (losses, counts, parameters).
 */
#define NR_MSG_TOLERANT 0x1u

/*
 * NR_MSG_CLASS(c), with NR_MSG_TOLERANT: the message's priority class, 0 (the
 * lowest) .. prio_classes - 1 (docs/short-slots.md, "Priority"; a DDP
 * bucket's: the input side's highest).  Where the communicator has classes
 * the call goes on its class's box channel, its packets with the class's
 * DSCP (short_dscp + 8c), and the box and a fabric that serves the classes
 * by priority send a higher class's first; a tolerant message without a
 * class is class 0, one beyond prio_classes - 1 the highest; an exact
 * message takes the channel and DSCP above every class.  Without classes
 * the bits change nothing.
 */
#define NR_MSG_CLASS(c) ((((unsigned)(c) & 0x7u) + 1u) << 4)
#define NR_MSG_CLASS_MASK 0xF0u

/* nr_allreduce with flags (NR_MSG_*; 0: nr_allreduce); another bit: NR_ERR_INVALID. */
NR_API int nr_allreduce_flags(struct nr_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
		       enum nr_dtype dtype, enum nr_op op, unsigned flags);

/* One all-reduce of nr_allreduce_multi: nr_allreduce_flags's arguments. */
struct nr_allreduce_req {
	const void *sendbuf;
	void *recvbuf;
	size_t count;
	enum nr_dtype dtype;
	enum nr_op op;
	unsigned flags;
};
/*
 * The n all-reduces of reqs: where the communicator has priority classes,
 * at once, each on its class's channel (flags), those of one channel one
 * after the other in the order given, so a higher class's need not wait for
 * a lower one's; else one after the other.  Every rank must give the
 * all-reduces of one class in the same order (it may group them otherwise).
 * done_ns (NULL, or n entries): when each one's result was in its recvbuf,
 * CLOCK_MONOTONIC nanoseconds (a class's before the call returns).  0, or the
 * first failure (the communicator is then broken).
 */
NR_API int nr_allreduce_multi(struct nr_comm *comm, const struct nr_allreduce_req *reqs,
			      unsigned n, uint64_t *done_ns);
/*
 * The same as a ring all-reduce (reduce-scatter then all-gather) over QPs that
 * are not registered with the box.  Element i of chunk c (chunks: count / world
 * elements each, the first count % world chunks one more) is summed in ring
 * order starting at rank c: ((x_c + x_{c+1}) + x_{c+2}) + ... + x_{c+world-1}.
 * With local_size P > 1: the buffer is cut into P shares the same way; element
 * k of share p is L_h (as above) summed in ring order over the H hosts,
 * starting at host c, c being the chunk of k when share p is cut into H.
 */
NR_API int nr_ring_allreduce(struct nr_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
		      enum nr_dtype dtype, enum nr_op op);
/*
 * Reduce-scatter: sendbuf holds recvcount x world elements on every rank;
 * rank r gets elements [r x recvcount, (r + 1) x recvcount) of their
 * reduction in recvbuf (recvcount elements, not overlapping sendbuf), the
 * same values nr_allreduce gives there.  A box is transparent to a
 * connection: every rank still sends and receives the whole, so through the
 * box this is nr_allreduce of sendbuf of which only this rank's share is
 * read out of the library's receive slots, with no buffer of the whole
 * result; with priority classes, several ranks a host or racks, and without
 * a box (over the ring), the all-reduce runs into a buffer of the whole and
 * the share is copied.  Counted as one all-reduce of recvcount x world
 * elements (nr_comm_stats).  NETREDUCE_1.3.
 */
NR_API int nr_reduce_scatter(struct nr_comm *comm, const void *sendbuf, void *recvbuf,
			     size_t recvcount, enum nr_dtype dtype, enum nr_op op);
/*
 * All-gather: rank r's sendbytes bytes of sendbuf land at recvbuf + r x
 * sendbytes on every rank (recvbuf holds world x sendbytes; sendbuf may be
 * this rank's place in it, recvbuf + rank x sendbytes, or apart from it),
 * byte for byte whatever they hold.  Through the box: the all-reduce of a
 * buffer zero outside each rank's bytes under the box's bitwise OR of 32-bit
 * words (a job of reduce "bor", opened at the first call: collective), which
 * gives every rank's bytes back unchanged where a float sum would not
 * (-0.0 + 0 is +0.0, a signalling NaN comes back quiet).  Every rank sends
 * and receives world x sendbytes, a ring's all-gather (world - 1) x sendbytes
 * in world - 1 steps: the box brings one step, and no copying on the hosts
 * but each rank's own.  Without a box NR_ERR_CONFIG (gather with the
 * framework's); on communicators of several ranks a host or across racks
 * NR_ERR_INVALID; a box that takes no job of reduce bor (one older than
 * it, the FPGA and RTL backends) NR_ERR_UNSUPPORTED, naming the box's reason,
 * at this call and every later one, the communicator going on (all-reduces
 * work).  Counted as a box call of world x sendbytes (nr_comm_stats).
 * NETREDUCE_1.3.
 */
NR_API int nr_allgather(struct nr_comm *comm, const void *sendbuf, void *recvbuf, size_t sendbytes);

NR_API int nr_comm_rank(const struct nr_comm *comm);
NR_API int nr_comm_world(const struct nr_comm *comm);
/*
 * What the application's calls on comm did since nr_comm_init: calls of
 * nr_allreduce and nr_ring_allreduce that returned 0 and the bytes of their
 * buffers (count times the element's size), calls that failed, and the time
 * spent inside both.
 * Frameworks compare these with what they believe they sent through the
 * library (netreduce.torch.stats()).  Any thread, any time; not collective.
 */
struct nr_comm_stats {
	uint64_t box_calls, box_bytes;     /* nr_allreduce, nr_allreduce_flags, nr_reduce_scatter
					    * (its input), nr_allgather (its output) */
	uint64_t ring_calls, ring_bytes;   /* nr_ring_allreduce */
	uint64_t failed_calls;
	uint64_t busy_ns;                  /* inside the calls, failed ones included */
	/* later additions, at the end */
	uint64_t tolerant_calls, tolerant_bytes; /* of box_calls: NR_MSG_TOLERANT ones sent with
						    short_dscp */
	uint64_t tolerant_exact_calls;     /* of box_calls: NR_MSG_TOLERANT ones sent exact (no
					      bound, or a path that cannot mark them) */
	uint64_t bf16_calls, fp16_calls;   /* of box_calls and ring_calls: NR_BF16, NR_FP16 ones */
};
NR_API void nr_comm_stats(const struct nr_comm *comm, struct nr_comm_stats *out);
/*
 * The same into the first size bytes of out (sizeof(struct nr_comm_stats) as
 * the caller was built): a program built against an older header gets the
 * fields it knows and no byte past them, one built against a newer library's
 * header gets zeros in the fields this one lacks.  New code calls this one
 * (as rdma-core's _ex calls): the struct may grow.  0, or NR_ERR_INVALID for
 * a NULL comm or out or a size of 0.
 */
NR_API int nr_comm_stats_ex(const struct nr_comm *comm, struct nr_comm_stats *out, size_t size);
/* Credits W granted by the box, per channel (0 without a box). */
NR_API uint32_t nr_comm_credits(const struct nr_comm *comm);
/*
 * How nr_allreduce runs on comm: "flat" (every rank on one ring through one
 * box), "parallel" or "hierarchical" (hosts with several ranks), "racks".
 */
NR_API const char *nr_comm_algo(const struct nr_comm *comm);
/* Box channels the messages of nr_allreduce are striped over (1 without a box). */
NR_API unsigned nr_comm_channels(const struct nr_comm *comm);

/*
 * The box's counters of comm's job (its job_status): what the bound on
 * tolerant messages did.  The rank that registered the job asks, rank 0 (a
 * TCP exchange with the box of at most timeout_ms; across racks the first
 * rank of each rack, of its rack's box); any other rank, and a communicator
 * without a box, gets NR_ERR_INVALID.  left_out[r] for r < n
 * (n up to the world): the contributions of rank r the box left out of short
 * packets (zeros for a job without a bound).  Any thread, any time, between
 * and during collectives; a failure leaves comm as it was, its message in
 * nr_comm_last_error(NULL).  Hosts with several ranks: the column's job.
 */
struct nr_box_counters {
	uint64_t completed;      /* packets (slots) the box completed whole (every channel) */
	uint64_t short_slots;    /* packets it completed with one contribution missing */
	uint64_t short_denied;   /* packets that waited for a lost contribution instead (over
				    the bound, a message's first packet, or an exact message) */
	uint32_t short_ppm;      /* the bound the box holds for the job (0: none) */
	uint32_t ranks;          /* the job's ranks as the box has them */
};
NR_API int nr_comm_box_counters(const struct nr_comm *comm, struct nr_box_counters *out,
			 uint64_t *left_out, size_t n);
/* The same into the first size bytes of out (sizeof(struct nr_box_counters) as the
 * caller was built), as nr_comm_stats_ex: the struct may grow. */
NR_API int nr_comm_box_counters_ex(const struct nr_comm *comm, struct nr_box_counters *out,
				   size_t size, uint64_t *left_out, size_t n);
/*
 * Everything the box says of comm's jobs: their job_status replies' "job"
 * objects (control/PROTOCOL.md: counters, left_out, short_why, ...) as
 * JSON {"jobs": [...]}, one per element type's job, into buf (len bytes,
 * NUL-terminated).  Who may ask, and failures, as nr_comm_box_counters;
 * NR_ERR_INVALID when buf is too small (the message says how much it takes).
 */
NR_API int nr_comm_box_status(const struct nr_comm *comm, char *buf, size_t len);

/*
 * The QPs of comm (its sub-communicators' with several ranks per host or
 * racks) that went to error, 0 when every one is healthy; the first one's
 * error into buf (may be NULL).  Waits for a call in progress on another thread.
 */
NR_API int nr_comm_qp_errors(struct nr_comm *comm, char *buf, size_t len);

NR_API const char *nr_strerror(int err);
/*
 * Message of the last failure on comm; with comm NULL, the last failure of
 * nr_config_from_env, nr_config_check, nr_comm_init, nr_comm_box_counters or
 * nr_comm_box_status in this thread.
 */
NR_API const char *nr_comm_last_error(const struct nr_comm *comm);

#ifdef __cplusplus
}
#endif

#endif /* NETREDUCE_H */
