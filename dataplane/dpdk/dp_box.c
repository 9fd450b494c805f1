/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The box: mempool, ports, worker lcores and their engines, start and stop.
 * See dp_state.h for the threading model.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <inttypes.h>

#include <rte_mbuf.h>
#include <rte_random.h>
#include <rte_ring.h>

#include "dataplane/dpdk/dp_box.h"
#include "dataplane/dpdk/dp_l2_static.h"
#include "dataplane/dpdk/dp_steer.h"

/*
 * Configure and start port id: an RX queue per worker when the device has
 * that many (RSS spreads what no steering rule claims), else one; a TX queue
 * per worker.  Then what steering it gets (dp_steer.c).
 */
/* The seed of the box's hashes (dp_l2.h): random, so that no host can aim
 * frames at one bucket of its tables.  getrandom(2), rte_rand as a last resort. */
static uint32_t box_secret(void)
{
	uint32_t s;

	if (getrandom(&s, sizeof(s), 0) == (ssize_t)sizeof(s))
		return s;
	return (uint32_t)rte_rand();
}

static int port_setup(struct dp_box *b, struct dp_port *dp, uint16_t id, char *err, size_t errlen)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	uint16_t nrx, ntx = (uint16_t)b->n_workers;
	uint16_t rxd = b->cfg.rx_desc, txd = b->cfg.tx_desc;
	int rc;

	if (!rte_eth_dev_is_valid_port(id) || id >= DP_MAX_PORTS) {
		snprintf(err, errlen, "port %u: no such port (or id >= %d)", id, DP_MAX_PORTS);
		return -ENODEV;
	}
	rc = rte_eth_dev_info_get(id, &info);
	if (rc) {
		snprintf(err, errlen, "port %u: cannot read device info: %s", id, rte_strerror(-rc));
		return rc;
	}
	dp->id = id;
	rte_eth_dev_get_name_by_port(id, dp->name);
	snprintf(dp->driver, sizeof(dp->driver), "%s", info.driver_name ? info.driver_name : "?");
	nrx = info.max_rx_queues >= b->n_workers ? (uint16_t)b->n_workers : 1;
	if (info.max_tx_queues < ntx) {
		snprintf(err, errlen, "port %u (%s): %u TX queues needed (one per worker lcore), driver %s offers %u; "
			 "use fewer worker lcores (or qpairs=N for net_af_packet)",
			 id, dp->name, ntx, dp->driver, info.max_tx_queues);
		return -EINVAL;
	}
	if (nrx > 1 && (info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP))) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = info.flow_type_rss_offloads &
						   (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP);
	}
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE)
		conf.txmode.offloads = 0; /* flood copies share mbufs: no fast free */
	rc = rte_eth_dev_configure(id, nrx, ntx, &conf);
	if (rc) {
		snprintf(err, errlen, "port %u (%s): configure failed: %s", id, dp->name, rte_strerror(-rc));
		return rc;
	}
	rte_eth_dev_adjust_nb_rx_tx_desc(id, &rxd, &txd);
	if (b->cfg.mtu) {
		rc = rte_eth_dev_set_mtu(id, (uint16_t)b->cfg.mtu);
		if (rc)
			DP_LOG(WARNING, "port %u (%s): cannot set MTU %u: %s; keeping the port's",
			       id, dp->name, b->cfg.mtu, rte_strerror(-rc));
	}
	for (uint16_t q = 0; q < nrx; q++) {
		rc = rte_eth_rx_queue_setup(id, q, rxd, rte_eth_dev_socket_id(id), NULL, b->pool);
		if (rc) {
			snprintf(err, errlen, "port %u (%s): RX queue %u setup failed: %s", id, dp->name, q,
				 rte_strerror(-rc));
			return rc;
		}
	}
	dp->n_rxq = nrx;
	for (uint16_t q = 0; q < ntx; q++) {
		rc = rte_eth_tx_queue_setup(id, q, txd, rte_eth_dev_socket_id(id), NULL);
		if (rc) {
			snprintf(err, errlen, "port %u (%s): TX queue %u setup failed: %s",
				 id, dp->name, q, rte_strerror(-rc));
			return rc;
		}
	}
	rc = rte_eth_dev_start(id);
	if (rc) {
		snprintf(err, errlen, "port %u (%s): start failed: %s", id, dp->name, rte_strerror(-rc));
		return rc;
	}
	if (b->cfg.promisc) {
		rc = rte_eth_promiscuous_enable(id);
		if (rc && rc != -ENOTSUP)
			DP_LOG(WARNING, "port %u (%s): promiscuous mode: %s", id, dp->name, rte_strerror(-rc));
	}
	rte_eth_macaddr_get(id, &dp->mac);
	dp_steer_probe(b, dp);
	return 0;
}

static struct dp_worker *worker_new(struct dp_box *b, unsigned idx, unsigned lcore,
				    char *err, size_t errlen)
{
	struct agg_engine_ops ops = { .emit_slot = dp_engine_emit_slot, .free = dp_engine_free,
				     .send = dp_engine_send, .origin = dp_engine_origin };
	struct dp_worker *w = rte_zmalloc("nr_worker", sizeof(*w), RTE_CACHE_LINE_SIZE);
	char name[RTE_RING_NAMESIZE];
	static unsigned seq;

	if (w == NULL) {
		snprintf(err, errlen, "worker %u: out of memory (try -m with more MB)", idx);
		return NULL;
	}
	w->box = b;
	w->idx = idx;
	w->lcore = lcore;
	ops.ctx = w;
	w->eng = agg_engine_create(&ops);
	if (w->eng == NULL) {
		snprintf(err, errlen, "worker %u: cannot create its engine (out of memory)", idx);
		goto fail;
	}
	if (b->cfg.kernel != NR_KERNEL_AUTO && agg_engine_set_kernel(w->eng, b->cfg.kernel) != 0) {
		snprintf(err, errlen, "sum kernel %d not available on this CPU", b->cfg.kernel);
		goto fail;
	}
	snprintf(name, sizeof(name), "nr_cmd_%u_%u", idx, __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	w->cmd = rte_ring_create(name, 64, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "nr_hoff_%u_%u", idx, __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	w->handoff = rte_ring_create(name, DP_HANDOFF_RING, SOCKET_ID_ANY, RING_F_SC_DEQ);
	if (w->cmd == NULL || w->handoff == NULL) {
		snprintf(err, errlen, "worker %u: cannot create its rings: %s", idx, rte_strerror(rte_errno));
		goto fail;
	}
	/* where a frame's record index rides in its mbuf: a dynamic field, not
	 * hash.usr, which a PMD may write (flow director, RSS) */
	{
		static const struct rte_mbuf_dynfield rec_field = {
			.name = DP_REC_DYNFIELD,
			.size = sizeof(uint32_t),
			.align = __alignof__(uint32_t),
		};

		w->rec_off = rte_mbuf_dynfield_register(&rec_field);
		if (w->rec_off < 0) {
			snprintf(err, errlen, "worker %u: cannot register the mbuf field %s: %s",
				 idx, DP_REC_DYNFIELD, rte_strerror(rte_errno));
			goto fail;
		}
	}
	/* a record for every mbuf of the pool that could be held here, and a burst */
	w->rec_cap = (b->pool ? b->pool->size : b->cfg.pool_mbufs) + DP_MAX_BURST;
	if (w->rec_cap < DP_MIN_RECORDS)
		w->rec_cap = DP_MIN_RECORDS;
	w->recs = rte_malloc("nr_recs", (size_t)w->rec_cap * sizeof(*w->recs), RTE_CACHE_LINE_SIZE);
	w->rec_free = rte_malloc("nr_rec_free", (size_t)w->rec_cap * sizeof(*w->rec_free), 0);
	if (w->recs == NULL || w->rec_free == NULL) {
		snprintf(err, errlen, "worker %u: out of memory for %u parse records (try -m with more MB)",
			 idx, w->rec_cap);
		goto fail;
	}
	for (w->rec_top = 0; w->rec_top < w->rec_cap; w->rec_top++)
		w->rec_free[w->rec_top] = w->rec_cap - 1 - w->rec_top;
	return w;
fail:
	rte_free(w->recs);
	rte_free(w->rec_free);
	if (w->eng)
		agg_engine_destroy(w->eng);
	rte_ring_free(w->cmd);
	rte_ring_free(w->handoff);
	rte_free(w->snap);
	rte_free(w);
	return NULL;
}

static void worker_free(struct dp_worker *w)
{
	void *obj;

	if (w == NULL)
		return;
	while (rte_ring_dequeue(w->handoff, &obj) == 0)
		rte_pktmbuf_free(obj);
	agg_engine_destroy(w->eng);   /* held mbufs come back through dp_engine_free */
	rte_free(w->recs);
	rte_free(w->rec_free);
	for (unsigned i = 0; i < DP_MAX_PORTS; i++) {
		rte_pktmbuf_free_bulk(w->tx[i].m, w->tx[i].n);
		w->tx[i].n = 0;
	}
	for (unsigned j = 0; j < w->n_jobs; j++)
		free(w->jobs[j].ep);
	for (unsigned i = 0; i < w->n_crc_shift; i++)
		rte_free(w->crc_shift[i]);
	rte_ring_free(w->cmd);
	rte_ring_free(w->handoff);
	rte_free(w);
}

/*
 * What the jobs may hold together (dp_jobs.c admits each against it): the
 * mbufs the ports left free (their RX rings took theirs), less a quarter
 * for what is in flight (bursts, TX queues, the lcores' caches); or
 * --admit-mbufs, which must fit in what is free.  A job that could hold
 * more than is left is refused, so no tenant's job can drain the pool.
 */
static int admission_budget(struct dp_box *b, char *err, size_t errlen)
{
	uint64_t avail = rte_mempool_avail_count(b->pool);

	b->mbuf_budget = b->cfg.admit_mbufs ? b->cfg.admit_mbufs : avail * 3 / 4;
	if (b->mbuf_budget > avail) {
		snprintf(err, errlen, "--admit-mbufs %u: the pool has %" PRIu64 " mbufs free after the "
			 "ports took theirs (raise --pool-mbufs)", b->cfg.admit_mbufs, avail);
		return -EINVAL;
	}
	return 0;
}

/* Whether port is one of the box's (dp_l2_static_load's check). */
static int box_has_port(void *arg, uint16_t port)
{
	const struct dp_box *b = arg;

	for (unsigned i = 0; i < b->n_ports; i++)
		if (b->ports[i].id == port)
			return 1;
	return 0;
}

struct dp_box *dp_box_create(const struct dp_cfg *cfg, const uint16_t *ports, unsigned n_ports,
			     const unsigned *lcores, unsigned n_lcores, struct rte_mempool *pool,
			     char *err, size_t errlen)
{
	struct dp_box *b;
	static unsigned seq;

	if (n_ports == 0 || n_ports > DP_MAX_PORTS) {
		snprintf(err, errlen, "%u ports: the box needs 1 to %d ports (EAL -a/--vdev)", n_ports, DP_MAX_PORTS);
		return NULL;
	}
	if (n_lcores == 0 || n_lcores > DP_MAX_WORKERS) {
		snprintf(err, errlen, "%u worker lcores: need 1 to %d (EAL -l)", n_lcores, DP_MAX_WORKERS);
		return NULL;
	}
	if (cfg->mode == DP_MODE_ONE_ARMED && n_ports != 1) {
		snprintf(err, errlen, "one-armed mode takes exactly one port, %u given", n_ports);
		return NULL;
	}
	if (cfg->burst == 0 || cfg->burst > DP_MAX_BURST) {
		snprintf(err, errlen, "burst %u: must be 1..%d", cfg->burst, DP_MAX_BURST);
		return NULL;
	}
	b = rte_zmalloc("nr_box", sizeof(*b), RTE_CACHE_LINE_SIZE);
	if (b == NULL) {
		snprintf(err, errlen, "out of memory for the box (EAL -m)");
		return NULL;
	}
	b->cfg = *cfg;
	pthread_mutex_init(&b->ctl_lock, NULL);
	b->tsc_hz = rte_get_tsc_hz();
	b->cmd_timeout_ms = DP_CMD_TIMEOUT_MS;
	b->ns_mult = (uint64_t)(((unsigned __int128)1000000000ull << 32) / b->tsc_hz);
	dp_l2_init(&b->l2, box_secret(), cfg->l2_port_cap, cfg->l2_age_s, cfg->l2_pin_cap);
	b->l2.sticky = cfg->l2_sticky;
	{
		/* every connection (two keys) of every channel the workers can hold */
		uint32_t keys = n_lcores * NR_MAX_JOBS * NR_MAX_CONNS * 2;
		void *mem = rte_malloc("nr_owners", dp_owner_bytes(keys), RTE_CACHE_LINE_SIZE);

		if (mem == NULL) {
			snprintf(err, errlen, "out of memory for the owner map, %zu bytes (EAL -m)",
				 dp_owner_bytes(keys));
			goto fail;
		}
		b->owners = dp_owner_init(mem, keys, box_secret());
	}
	b->pool = pool;
	if (pool == NULL) {
		char name[RTE_MEMPOOL_NAMESIZE];

		snprintf(name, sizeof(name), "nr_pool_%u", __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
		b->pool = rte_pktmbuf_pool_create(name, cfg->pool_mbufs, 256, 0,
						  (uint16_t)cfg->mbuf_dataroom, rte_socket_id());
		if (b->pool == NULL) {
			snprintf(err, errlen, "cannot create a pool of %u mbufs of %u bytes: %s "
				 "(raise EAL -m or lower --pool-mbufs)",
				 cfg->pool_mbufs, cfg->mbuf_dataroom, rte_strerror(rte_errno));
			goto fail;
		}
		b->own_pool = true;
	}
	b->n_workers = n_lcores;
	for (unsigned i = 0; i < n_lcores; i++) {
		b->workers[i] = worker_new(b, i, lcores[i], err, errlen);
		if (b->workers[i] == NULL)
			goto fail;
	}
	b->kernel_name = agg_engine_kernel_name(b->workers[0]->eng);
	/* worker w polls queue w of every port that has a queue per worker; the
	 * other ports' one queue goes round robin */
	for (unsigned i = 0, rr = 0; i < n_ports; i++) {
		if (port_setup(b, &b->ports[i], ports[i], err, errlen) != 0)
			goto fail;
		b->n_ports = i + 1;
		for (unsigned q = 0; q < b->ports[i].n_rxq; q++) {
			struct dp_worker *w = b->workers[b->ports[i].n_rxq > 1 ? q : rr++ % n_lcores];

			w->rxq[w->n_rxq].port = ports[i];
			w->rxq[w->n_rxq].queue = (uint16_t)q;
			w->n_rxq++;
		}
	}
	if (admission_budget(b, err, errlen) != 0)
		goto fail;
	if (cfg->l2_static_file) {
		int n = dp_l2_static_load(&b->l2, cfg->l2_static_file, 0, box_has_port, b, err,
					  errlen);

		if (n < 0)
			goto fail;
		DP_LOG(INFO, "--l2-static %s: %d MACs on their ports for good", cfg->l2_static_file,
		       n);
	}
	return b;
fail:
	dp_box_destroy(b, false);
	return NULL;
}

int dp_box_set_dev(struct dp_box *b, const struct dp_dev_ops *ops, void *ctx, char *err,
		   size_t errlen)
{
	if (b->started) {
		snprintf(err, errlen, "a device can only be attached before the workers start");
		return -EBUSY;
	}
	if (b->n_workers != 1) {
		snprintf(err, errlen, "a device in the engines' place takes one worker lcore, %u given "
			 "(EAL -l with one or two lcores)", b->n_workers);
		return -EINVAL;
	}
	b->dev = ops;
	b->dev_ctx = ctx;
	return 0;
}

int dp_box_launch(struct dp_box *b)
{
	__atomic_store_n(&b->quit, 0, __ATOMIC_RELEASE);
	b->started = true;
	for (unsigned i = 0; i < b->n_workers; i++) {
		struct dp_worker *w = b->workers[i];
		int rc;

		if (w->lcore == rte_lcore_id())
			continue;   /* the caller runs dp_worker_main() itself */
		rc = rte_eal_remote_launch(dp_worker_main, w, w->lcore);
		if (rc == 0)
			w->launched = true;
		if (rc) {
			DP_LOG(ERR, "cannot launch worker %u on lcore %u: %s (is it an EAL worker lcore? -l)",
			       i, w->lcore, rte_strerror(-rc));
			dp_box_stop(b);
			return rc;
		}
	}
	/* Wait until every loop runs so commands go through the rings. */
	for (unsigned i = 0; i < b->n_workers; i++)
		while (b->workers[i]->launched &&
		       !__atomic_load_n(&b->workers[i]->running, __ATOMIC_ACQUIRE))
			rte_pause();
	return 0;
}

void dp_box_stop(struct dp_box *b)
{
	__atomic_store_n(&b->quit, 1, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < b->n_workers; i++)
		if (b->workers[i]->launched) {
			rte_eal_wait_lcore(b->workers[i]->lcore);
			b->workers[i]->launched = false;
		}
	pthread_mutex_lock(&b->ctl_lock);
	b->started = false;
	pthread_mutex_unlock(&b->ctl_lock);
}

void dp_box_destroy(struct dp_box *b, bool close_ports)
{
	if (b == NULL)
		return;
	dp_telemetry_forget(b);
	if (b->started)
		dp_box_stop(b);
	for (unsigned i = 0; i < b->n_ports; i++) {
		int rc = rte_eth_dev_stop(b->ports[i].id);

		if (rc)
			DP_LOG(WARNING, "port %u: stop: %s", b->ports[i].id, rte_strerror(-rc));
	}
	for (unsigned i = 0; i < b->n_workers; i++)
		worker_free(b->workers[i]);
	if (close_ports)
		for (unsigned i = 0; i < b->n_ports; i++)
			rte_eth_dev_close(b->ports[i].id);
	for (unsigned i = 0; i < b->n_chans; i++) {
		free(b->chans[i].spec);
		free(b->chans[i].flows);   /* the rules go with the ports */
	}
	if (b->own_pool)
		rte_mempool_free(b->pool);
	rte_free(b->owners);
	pthread_mutex_destroy(&b->ctl_lock);
	rte_free(b);
}
