/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The topology of a communicator (see nr_topo.h): the layout's rendezvous,
 * sub-communicators, their failures, the work buffer, teardown; and the cost
 * model that picks the variant of an all-reduce on hosts with several ranks.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nr_bootstrap.h"
#include "nr_comm.h"
#include "nr_tcp.h"
#include "nr_topo.h"
#include "nr_util.h"
#include "proto/nr_text.h"

int nr_topo_layout_init(const struct nr_config *cfg, struct nr_comm **w)
{
	struct nr_config lc = *cfg;
	int rc;

	lc.switch_addr = NULL;   /* the layout's rendezvous registers nothing */
	*w = NULL;
	rc = nr_flat_init(&lc, true, w);
	if (rc)
		return rc;
	(*w)->topo = calloc(1, sizeof(struct nr_topo));
	if (!(*w)->topo) {
		nr_flat_destroy(*w);
		*w = NULL;
		nr_set_tls_error("nr_comm_init: out of memory");
		return NR_ERR_NOMEM;
	}
	return 0;
}

int nr_topo_sub_init(struct nr_comm *w, const char *name, int index, int rank, int world,
		     int root, const char *switch_addr, uint16_t udp_port, struct nr_comm **sub)
{
	struct nr_config sc = w->cfg;
	char root_addr[64], ip[INET_ADDRSTRLEN];
	uint32_t rip;
	uint16_t rport;
	int rc;

	*sub = NULL;
	nr_parse_hostport(w->root, &rip, &rport);
	if ((int)rport + 1 + index > 65535)
		return nr_fail(w, NR_ERR_CONFIG, "NR_ROOT %s: port %d + %d is past 65535", w->root,
			       rport, 1 + index);
	snprintf(root_addr, sizeof(root_addr), "%s:%d", nr_ip4_str(w->peers[root].ip, ip),
		 rport + 1 + index);
	sc.rank = rank;
	sc.world = world;
	sc.root = root_addr;
	sc.switch_addr = switch_addr;
	sc.token = w->token;
	sc.job_secret = w->job_secret;
	sc.transport = w->transport;
	sc.device = w->device[0] ? w->device : NULL;
	sc.addr = w->addr;
	sc.udp_port = udp_port;
	sc.local_size = 1;
	sc.local_rank = -1;
	sc.racks = NULL;
	/* a topology's all-reduces are exact (netreduce.h, NR_MSG_TOLERANT): so are its jobs */
	sc.short_ppm = 0;
	sc.prio_classes = 0;
	rc = nr_flat_init(&sc, false, sub);
	if (rc)
		return nr_fail(w, rc, "rank %d, %s (of %d, where it is rank %d): %s", w->rank, name,
			       world, rank, nr_comm_last_error(NULL));
	return 0;
}

int nr_topo_init_end(struct nr_comm *w, int rc, const char *what, struct nr_comm **comm)
{
	if (!rc)
		rc = nr_barrier(w, what);
	if (rc) {
		nr_set_tls_error("%s", w->err);
		w->broken = true;
		nr_topo_destroy(w);
		return rc;
	}
	*comm = w;
	return 0;
}

int nr_topo_sub_fail(struct nr_comm *w, const char *name, struct nr_comm *sub, int rc)
{
	if (rc && rc != NR_ERR_INVALID) {
		w->broken = true;
		nr_fail(w, rc, "rank %d, %s (of %d, where it is rank %d): %s", w->rank, name,
			sub->world, sub->rank, sub->err);
	}
	return rc;
}

int nr_topo_buf(struct nr_comm *w, size_t n)
{
	struct nr_topo *t = w->topo;
	float *b;

	if (n <= t->cap)
		return 0;
	b = realloc(t->buf, n * sizeof(float));
	if (!b)
		return nr_fail(w, NR_ERR_NOMEM, "rank %d: no memory for %zu floats", w->rank, n);
	t->buf = b;
	t->cap = n;
	return 0;
}

static void sub_destroy(struct nr_comm *w, struct nr_comm *sub)
{
	if (sub && w->broken)
		sub->broken = true;   /* no barrier with peers that may be gone */
	nr_flat_destroy(sub);
}

void nr_topo_destroy(struct nr_comm *w)
{
	struct nr_topo *t = w->topo;

	if (t) {
		sub_destroy(w, t->col);
		sub_destroy(w, t->rack_comm);
		sub_destroy(w, t->agent);
		nr_shm_close(t->shm);
		free(t->buf);
		free(t);
		w->topo = NULL;
	}
	nr_flat_destroy(w);
}

/*
 * The cost model, in units of S / B_inter (S: bytes per rank, H hosts of P
 * ranks, r = B_intra / B_inter, B_intra: what one rank reads per second from
 * the others of its host).  Each host link carries S each way in both box
 * variants; they differ inside the host:
 *   parallel      reduce-scatter (P-1)/P S, all-gather (P-1)/P S per rank
 *   hierarchical  reduce (P-1) S by local rank 0, broadcast S per rank
 *   flat ring     2(HP-1)/HP S on every edge, inter- and intra-host alike,
 *                 so it goes at the slower of the two
 */
static double inter(int hosts) { return hosts > 1 ? 1.0 : 0.0; }

double nr_topo_cost_parallel(int hosts, int local, double r)
{
	return inter(hosts) + 2.0 * (local - 1) / local / r;
}

double nr_topo_cost_hierarchical(int hosts, int local, double r)
{
	return inter(hosts) + (local > 1 ? local / r : 0.0);
}

double nr_topo_cost_flat_ring(int hosts, int local, double r)
{
	double n = (double)hosts * local, slowest = local > 1 && r < 1 ? r : 1.0;

	return n > 1 ? 2.0 * (n - 1) / n / slowest : 0.0;
}

int nr_topo_choose(int hosts, int local, double r)
{
	return nr_topo_cost_hierarchical(hosts, local, r) <=
	       1.1 * nr_topo_cost_parallel(hosts, local, r) ? NR_HIER_HIERARCHICAL : NR_HIER_PARALLEL;
}

double nr_topo_measure_intra_gbps(void)
{
	size_t n = 8u << 20;
	char *a = malloc(n), *b = malloc(n);
	double best = 0;

	if (!a || !b) {
		free(a);
		free(b);
		return 10.0;
	}
	memset(a, 1, n);
	memset(b, 2, n);
	for (int i = 0; i < 4; i++) {
		struct timespec t0, t1;
		double s;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		memcpy(i & 1 ? a : b, i & 1 ? b : a, n);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (s > 0 && n * 8 / s / 1e9 > best)
			best = n * 8 / s / 1e9;
	}
	free(a);
	free(b);
	return best > 0 ? best : 10.0;
}

