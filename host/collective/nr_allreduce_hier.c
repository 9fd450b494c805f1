/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * All-reduce on hosts with several ranks (host/README.md, "Hosts with
 * several ranks"): H hosts of P local ranks, ranks numbered host by host.
 *
 *   parallel      the P local ranks reduce-scatter through shared memory
 *                 (local rank p sums share p, 1/P of the buffer), local rank
 *                 p all-reduces its share with local rank p of every other
 *                 host through the box on its own connection (the P
 *                 "column" communicators are P box jobs of H ranks), then an
 *                 all-gather through shared memory;
 *   hierarchical  local rank 0 reduces the whole buffer, all-reduces it
 *                 through the box (one job of H ranks, column 0), then the
 *                 others copy it (broadcast through shared memory).
 * Both sum element i as ((L_0 + L_1) + ...) + L_{H-1} over hosts in host
 * order, L_h = ((x_{h,0} + x_{h,1}) + ...) + x_{h,P-1} in local-rank order:
 * bit-identical to each other.  nr_ring_allreduce on such a communicator
 * is the parallel scheme with the columns' plain rings instead of the box;
 * share p of it is then summed over hosts in the ring's order (netreduce.h).
 *
 * Init: the layout's rendezvous (every rank's address); rank 0 picks the
 * variant (NR_HIER, or auto: the cost model of nr_topo.c with NR_INTRA_GBPS,
 * NR_INTER_GBPS or what it measures) and a nonce naming the hosts' shared
 * segments, and hands both to every rank; each host's shared segment; the
 * columns (column p registers a box job when the variant is parallel or p is
 * 0, the others have only their plain ring).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host/comm/nr_bootstrap.h"
#include "host/comm/nr_topo.h"
#include "host/comm/nr_util.h"
#include "nr_allreduce_box.h"
#include "nr_allreduce_hier.h"
#include "nr_allreduce_ring.h"
#include "nr_local.h"

/* Rank 0's choice: the forced variant, or the cost model's. */
static int pick_variant(const struct nr_config *cfg, int hosts, double *intra, double *inter)
{
	*intra = cfg->intra_gbps > 0 ? cfg->intra_gbps : nr_topo_measure_intra_gbps();
	if (cfg->shm_pace_gbps > 0 && cfg->shm_pace_gbps < *intra)
		*intra = cfg->shm_pace_gbps;
	*inter = cfg->inter_gbps > 0 ? cfg->inter_gbps : nr_link_gbps(cfg->addr);
	if (cfg->hier && !strcmp(cfg->hier, "parallel"))
		return NR_HIER_PARALLEL;
	if (cfg->hier && !strcmp(cfg->hier, "hierarchical"))
		return NR_HIER_HIERARCHICAL;
	return nr_topo_choose(hosts, cfg->local_size, *intra / *inter);
}

/* Variant and nonce from rank 0; every rank checks that its layout is rank 0's. */
static int agree(struct nr_comm *w, const struct nr_config *cfg, uint64_t *nonce)
{
	struct nr_topo *t = w->topo;
	uint64_t v = 0, layout = (uint64_t)cfg->local_size << 8;
	double intra = 0, inter = 0;
	int rc;

	if (w->rank == 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		*nonce = ((uint64_t)getpid() * 2654435761u ^ (uint64_t)ts.tv_nsec) & 0x7fffffffu;
		v = (uint64_t)pick_variant(cfg, t->hosts, &intra, &inter) | layout | *nonce << 32;
	}
	rc = nr_barrier_bcast(w, "choosing the all-reduce variant", &v);
	if (rc)
		return rc;
	if ((v & 0xffff00) != layout)
		return nr_fail(w, NR_ERR_CONFIG, "rank %d: NR_LOCAL_SIZE %d, rank 0 has %d: every rank "
			       "must use the same", w->rank, cfg->local_size, (int)((v >> 8) & 0xffff));
	t->variant = v & 0xff;
	*nonce = v >> 32;
	if (w->rank == 0 && getenv("NR_DEBUG_TOPO"))
		fprintf(stderr, "netreduce: %d hosts x %d ranks: intra %.3g Gbit/s, inter %.3g "
			"Gbit/s (ratio %.3g): %s\n", t->hosts, t->local_size, intra, inter,
			intra / inter, t->variant == NR_HIER_PARALLEL ? "parallel" : "hierarchical");
	return 0;
}

static int open_shm(struct nr_comm *w, uint64_t nonce)
{
	struct nr_topo *t = w->topo;
	char name[64], err[NR_SHM_ERRLEN];
	struct nr_shm_config sc = {
		.name = name, .size = t->local_size, .rank = t->local,
		.timeout_ms = w->cfg.timeout_ms, .pace_bytes_per_s = w->cfg.shm_pace_gbps * 1e9 / 8,
	};
	int rc;

	snprintf(name, sizeof(name), "/netreduce-%08llx-h%d", (unsigned long long)nonce, t->host);
	rc = nr_shm_open(&sc, &t->shm, err, sizeof(err));
	return rc ? nr_fail(w, rc, "rank %d (host %d): %s", w->rank, t->host, err) : 0;
}

int nr_hier_init(const struct nr_config *cfg, struct nr_comm **comm)
{
	struct nr_comm *w;
	struct nr_topo *t;
	uint64_t nonce = 0;
	int rc, p;

	rc = nr_topo_layout_init(cfg, &w);
	if (rc)
		return rc;
	t = w->topo;
	t->local_size = cfg->local_size;
	t->hosts = w->world / t->local_size;
	t->host = w->rank / t->local_size;
	t->local = p = w->rank % t->local_size;
	t->has_box = cfg->switch_addr != NULL;
	rc = agree(w, cfg, &nonce);
	if (!rc)
		rc = open_shm(w, nonce);
	snprintf(t->col_name, sizeof(t->col_name), "column %d", p);
	if (!rc)
		rc = nr_topo_sub_init(w, t->col_name, p, t->host, t->hosts, p,
				      t->variant == NR_HIER_PARALLEL || p == 0 ? cfg->switch_addr : NULL,
				      cfg->udp_port, &t->col);
	return nr_topo_init_end(w, rc, "connecting the columns", comm);
}

/* Local reduce-scatter, the share through the column (box or plain ring), local all-gather. */
int nr_hier_allreduce(struct nr_comm *w, const float *src, float *dst, size_t count, bool ring)
{
	struct nr_topo *t = w->topo;
	int nshares = ring || t->variant == NR_HIER_PARALLEL ? t->local_size : 1;
	bool owner = t->local < nshares;
	size_t off, len = 0;
	int rc;

	if (owner)
		nr_local_share(count, nshares, t->local, &off, &len);
	rc = nr_topo_buf(w, len ? len : 1);
	if (rc)
		return nr_shm_fail(t->shm, rc, "%s", w->err);
	rc = nr_local_reduce_scatter(t->shm, src, count, nshares, t->buf);
	if (rc)
		return nr_fail(w, rc, "rank %d: %s", w->rank, nr_shm_error(t->shm));
	if (owner) {
		nr_shm_busy(t->shm, true);
		rc = ring ? nr_ring_allreduce_flat(t->col, t->buf, t->buf, len, NR_FLOAT32, NR_SUM)
			  : nr_box_allreduce(t->col, t->buf, t->buf, len, NR_FLOAT32, NR_SUM, 0);
		nr_shm_busy(t->shm, false);
		if (rc) {
			nr_topo_sub_fail(w, t->col_name, t->col, rc);
			return nr_shm_fail(t->shm, rc, "%s", w->err);
		}
	}
	rc = nr_local_all_gather(t->shm, t->buf, count, nshares, dst);
	if (rc)
		return nr_fail(w, rc, "rank %d: %s", w->rank, nr_shm_error(t->shm));
	return 0;
}

const char *nr_hier_variant_name(const struct nr_comm *w)
{
	return w->topo->variant == NR_HIER_PARALLEL ? "parallel" : "hierarchical";
}
