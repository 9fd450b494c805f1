/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The topology of a communicator whose ranks are not one per host behind
 * one box (nr_topo.c): hosts with several ranks (nr_allreduce_hier.c) and
 * jobs across racks (nr_allreduce_rack.c).  The communicator the application
 * holds is then the rendezvous of the layout (TCP only: every rank's
 * address, barriers); the data moves on sub-communicators, each an ordinary
 * ring of ranks (nr_comm.c), and, inside a host, through shared memory.
 *
 * Rendezvous ports: the layout at NR_ROOT (ip:port); sub-communicator i at
 * port + 1 + i on the address of its rank 0:
 *   hosts   i = p: the column of local rank p (the H ranks of local rank p)
 *   racks   i = k < R: rack k; i = R + j: the agents j of the R racks
 */
#ifndef NR_TOPO_H
#define NR_TOPO_H

#include <stddef.h>
#include <stdint.h>

#include "comm_internal.h"
#include "nr_config.h"
#include "nr_shm.h"

enum nr_hier_variant {
	NR_HIER_PARALLEL = 1,        /* local reduce-scatter, P box jobs of 1/P, local all-gather */
	NR_HIER_HIERARCHICAL = 2,    /* local reduce to local rank 0, one box job, local broadcast */
};

struct nr_topo {
	bool racks;                  /* jobs across racks (else: hosts with several ranks) */
	bool has_box;                /* this rank was given a box (NR_BOX) */
	/* hosts with several ranks */
	int hosts, local_size, host, local;
	int variant;                 /* enum nr_hier_variant, the same on every rank */
	struct nr_comm *col;         /* the column: local rank `local` of every host */
	char col_name[24];           /* "column p" */
	struct nr_shm *shm;
	/* racks */
	int nracks, rack, rack_rank, agents;
	int rack_sizes[NR_RACKS_MAX];
	bool rack_box;               /* this rank's rack has a box */
	struct nr_comm *rack_comm;   /* the ranks of this rack */
	struct nr_comm *agent;       /* rack-local rank j < agents: agents j of every rack; else NULL */
	char rack_name[24], agent_name[24];   /* "rack k", "agents j" */
	/* a work buffer */
	float *buf;
	size_t cap;
};

/*
 * The layout's rendezvous: a communicator of every rank with no transport
 * (cfg checked by the caller), with an empty topology attached.  0 or an
 * nr_err with nr_comm_last_error(NULL) set.
 */
int nr_topo_layout_init(const struct nr_config *cfg, struct nr_comm **w);
/*
 * Sub-communicator `index` of w, named `name` in messages ("column 1"):
 * `world` ranks, this one `rank`, its rank 0 being rank `root` of w;
 * switch_addr (NULL: no box); the soft transport's UDP port udp_port.  0 or
 * an nr_err with w's message set.
 */
int nr_topo_sub_init(struct nr_comm *w, const char *name, int index, int rank, int world,
		     int root, const char *switch_addr, uint16_t udp_port, struct nr_comm **sub);
/*
 * The end of a topology's init: with rc 0 a barrier (what: for messages),
 * then *comm = w; else (or if the barrier fails) the message goes to this
 * thread's last error and w is torn down.  Returns rc.
 */
int nr_topo_init_end(struct nr_comm *w, int rc, const char *what, struct nr_comm **comm);
/*
 * A sub-communicator's failure becomes w's (message naming the rank of w and
 * the sub-communicator, broken state); returns rc.
 */
int nr_topo_sub_fail(struct nr_comm *w, const char *name, struct nr_comm *sub, int rc);
/* The topology's work buffer, at least n floats: 0 or NR_ERR_NOMEM with w's message set. */
int nr_topo_buf(struct nr_comm *w, size_t n);
/* Sub-communicators closed (without waiting for peers when w is broken), shared memory, w. */
void nr_topo_destroy(struct nr_comm *w);

/*
 * The cost model (host/README.md, "Choosing the variant"): time of an
 * all-reduce of S bytes in units of S / B_inter, for H hosts of P ranks
 * whose intra-host bandwidth is ratio * B_inter.
 */
double nr_topo_cost_parallel(int hosts, int local, double ratio);
double nr_topo_cost_hierarchical(int hosts, int local, double ratio);
double nr_topo_cost_flat_ring(int hosts, int local, double ratio);
/* The variant for auto: hierarchical when it costs at most 10% more than parallel. */
int nr_topo_choose(int hosts, int local, double ratio);
/* One core's copy bandwidth in Gbit/s (the intra-host figure when none is given). */
double nr_topo_measure_intra_gbps(void);

#endif /* NR_TOPO_H */
