/* SPDX-License-Identifier: BSD-3-Clause */
/* The EAL suite's harness (see eal_harness.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sched.h>
#include <limits.h>
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "eal_harness.h"
#include "dataplane/dpdk/dp_state.h"

struct rte_mempool *h_pool;
struct harness *h_current;

int h_eal_init(void)
{
	static char prefix[64], lcores[64];
	char *argv[] = {
		"nr-test-eal", "--lcores", lcores, "--no-huge", "-m", "512", "--no-pci",
		"--file-prefix", prefix, "--log-level", "lib.eal:error",
		"--log-level", "netreduce.dp:warning", NULL,
	};
	int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;

	cpu_set_t set;
	int cpu[2] = { 0, 0 }, k = 0;

	/* lcore 0 (the test) on the first CPU we may use, lcores 1 and 2 (box
	 * workers) on the second, or all on one CPU when there is only one */
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
			if (CPU_ISSET(c, &set))
				cpu[k++] = c;
	if (k == 1)
		cpu[1] = cpu[0];
	snprintf(lcores, sizeof(lcores), "0@%d,1@%d,2@%d", cpu[0], cpu[1], cpu[1]);
	snprintf(prefix, sizeof(prefix), "nrb-eal-%d", (int)getpid());
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "EAL init failed: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	if (rte_lcore_count() < 3) {
		fprintf(stderr, "need 3 lcores (--lcores 0@0,1@1,2@1)\n");
		return -1;
	}
	h_pool = rte_pktmbuf_pool_create("nrb_test_pool", 8191, 0, 0, DP_MBUF_DATAROOM, rte_socket_id());
	if (h_pool == NULL) {
		fprintf(stderr, "pool: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

/* rte_eal_cleanup() leaves the runtime directory (/var/run/dpdk/<prefix>): remove it. */
void h_eal_fini(void)
{
	char dir[PATH_MAX];
	DIR *d;
	struct dirent *e;

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	d = opendir(dir);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[PATH_MAX + 256];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

int h_group_setup(void **state)
{
	(void)state;
	return h_eal_init();
}

int h_group_teardown(void **state)
{
	(void)state;
	rte_mempool_free(h_pool);
	h_eal_fini();
	return 0;
}

bool h_eal_ok;

int h_run_box_group(const char *name, const struct CMUnitTest *tests, size_t n)
{
	int failed;

	h_eal_ok = h_eal_init() == 0;
	if (!h_eal_ok)
		printf("# EAL could not start (needs root for --no-huge memory and ring ports): "
		       "box cases skipped\n");
	failed = _cmocka_run_group_tests(name, tests, n, NULL, NULL);
	if (h_eal_ok)
		h_eal_fini();
	return failed;
}

int h_case_teardown(void **state)
{
	(void)state;
	if (h_current && h_current->box)
		h_teardown(h_current);
	return 0;
}

void h_host_mac(unsigned r, uint8_t mac[6])
{
	const uint8_t m[6] = { 0x02, 0x4e, 0x52, 0x00, 0x00, (uint8_t)(r + 1) };

	memcpy(mac, m, 6);
}

uint32_t h_host_ip(unsigned r)
{
	return htonl(0x0A4E0000u | (r + 1));   /* 10.78.0.r+1 */
}

int h_setup(struct harness *h, unsigned n_ports, enum dp_mode mode)
{
	return h_setup_workers(h, n_ports, mode, 1);
}

int h_setup_workers(struct harness *h, unsigned n_ports, enum dp_mode mode, unsigned n_workers)
{
	return h_setup_tuned(h, n_ports, mode, n_workers, NULL);
}

int h_setup_tuned(struct harness *h, unsigned n_ports, enum dp_mode mode, unsigned n_workers,
		  void (*tune)(struct dp_cfg *cfg))
{
	static unsigned seq;
	struct dp_cfg cfg;
	unsigned lcores[2] = { 1, 2 };
	char err[256];

	memset(h, 0, sizeof(*h));
	h_current = h;
	h->pool = h_pool;
	h->n_ports = n_ports;
	for (unsigned i = 0; i < n_ports; i++) {
		char name[64];
		int id;

		snprintf(name, sizeof(name), "nrbr%u_%u", seq, i);
		h->rx[i] = rte_ring_create(name, 4096, SOCKET_ID_ANY, 0);
		snprintf(name, sizeof(name), "nrbt%u_%u", seq, i);
		h->tx[i] = rte_ring_create(name, 8192, SOCKET_ID_ANY, 0);
		if (h->rx[i] == NULL || h->tx[i] == NULL)
			return -1;
		snprintf(name, sizeof(name), "nrbp%u_%u", seq, i);
		{
			/* one TX queue per worker, all into the host's (multi-producer) ring */
			struct rte_ring *txq[2] = { h->tx[i], h->tx[i] };

			id = rte_eth_from_rings(name, &h->rx[i], 1, txq, n_workers, SOCKET_ID_ANY);
		}
		if (id < 0)
			return -1;
		h->port_id[i] = (uint16_t)id;
	}
	seq++;
	dp_cfg_defaults(&cfg);
	cfg.mode = mode;
	cfg.idle_sleep_us = 20;
	cfg.idle_polls = 200;
	if (tune)
		tune(&cfg);
	if (n_workers < 1 || n_workers > 2 || rte_lcore_count() < n_workers + 1) {
		fprintf(stderr, "h_setup: %u workers need lcores 1..%u\n", n_workers, n_workers);
		return -1;
	}
	h->box = dp_box_create(&cfg, h->port_id, n_ports, lcores, n_workers, h->pool, err, sizeof(err));
	if (h->box == NULL) {
		fprintf(stderr, "box: %s\n", err);
		return -1;
	}
	return dp_box_launch(h->box);
}

void h_clear_out(struct harness *h)
{
	for (unsigned i = 0; i < h->n_out; i++)
		free(h->out[i].data);
	h->n_out = 0;
}

void h_collect(struct harness *h)
{
	for (unsigned i = 0; i < h->n_ports; i++) {
		void *objs[64];
		unsigned n;

		while ((n = rte_ring_dequeue_burst(h->tx[i], objs, 64, NULL)) > 0) {
			for (unsigned k = 0; k < n; k++) {
				struct rte_mbuf *m = objs[k];
				struct h_out *o;

				if (h->n_out < H_MAX_OUT) {
					o = &h->out[h->n_out++];
					o->port = (uint16_t)i;
					o->len = (uint16_t)rte_pktmbuf_pkt_len(m);
					o->data = malloc(o->len);
					/* a chained frame: copy every segment, not past the first */
					const void *src = rte_pktmbuf_read(m, 0, o->len, o->data);

					if (src && src != o->data)
						memcpy(o->data, src, o->len);
				}
				rte_pktmbuf_free(m);
			}
		}
	}
}

void h_teardown(struct harness *h)
{
	if (h == NULL)
		return;
	h_current = NULL;
	if (h->box)
		dp_box_destroy(h->box, true);
	h->box = NULL;
	h_collect(h);
	h_clear_out(h);
	for (unsigned i = 0; i < h->n_ports; i++) {
		void *obj;

		while (rte_ring_dequeue(h->rx[i], &obj) == 0)
			rte_pktmbuf_free(obj);
		rte_ring_free(h->rx[i]);
		rte_ring_free(h->tx[i]);
	}
}

void h_inject(struct harness *h, unsigned i, const uint8_t *frame, unsigned len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(h->pool);
	char *d;

	if (m == NULL) {
		fprintf(stderr, "h_inject: pool empty\n");
		abort();
	}
	d = rte_pktmbuf_append(m, (uint16_t)len);
	if (d == NULL)
		abort();
	memcpy(d, frame, len);
	while (rte_ring_enqueue(h->rx[i], m) != 0) {
		h_collect(h);
		usleep(10);
	}
	h->injected++;
}

void h_inject_burst(struct harness *h, unsigned i, uint8_t *const frames[], const unsigned lens[],
		    unsigned n)
{
	struct rte_mbuf *m[H_MAX_BURST];

	if (n > H_MAX_BURST || rte_pktmbuf_alloc_bulk(h->pool, m, n) != 0) {
		fprintf(stderr, "h_inject_burst: %u frames: pool empty or over %d\n", n, H_MAX_BURST);
		abort();
	}
	for (unsigned k = 0; k < n; k++) {
		char *d = rte_pktmbuf_append(m[k], (uint16_t)lens[k]);

		if (d == NULL)
			abort();
		memcpy(d, frames[k], lens[k]);
	}
	/* all or none: the loop's next rx burst on the port takes them together */
	while (rte_ring_enqueue_bulk(h->rx[i], (void **)m, n, NULL) != n) {
		h_collect(h);
		usleep(10);
	}
	h->injected += n;
}

void h_inject_chain(struct harness *h, unsigned i, const uint8_t *frame, unsigned len, unsigned cut)
{
	struct rte_mbuf *head = NULL;
	unsigned off = 0;

	if (cut == 0 || cut >= len)
		abort();
	while (off < len) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(h->pool);
		unsigned n = len - off < cut ? len - off : cut;

		if (m == NULL)
			abort();
		memcpy(rte_pktmbuf_append(m, (uint16_t)n), frame + off, n);
		off += n;
		if (head == NULL)
			head = m;
		else if (rte_pktmbuf_chain(head, m) != 0)
			abort();
	}
	while (rte_ring_enqueue(h->rx[i], head) != 0) {
		h_collect(h);
		usleep(10);
	}
	h->injected++;
}

static uint64_t total_tx(struct harness *h)
{
	struct dp_ctr s;

	dp_box_counters(h->box, &s);
	return s.c[DP_CTR_TX] + s.c[DP_CTR_TX_DROPPED];
}

/* Every frame the box received has been dealt with: the box's accounting
 * (dataplane/README.md, "Counters") balances and no frame waits in a
 * hand-off ring.  RX is counted when a burst begins, so a worker the kernel
 * preempts in the middle of one leaves it unbalanced for as long as that
 * lasts. */
static bool box_balanced(const struct dp_ctr *s)
{
	uint64_t in = s->c[DP_CTR_RX] + s->c[DP_CTR_HANDOFF_IN];
	uint64_t out = s->c[DP_CTR_FORWARDED] + s->c[DP_CTR_FLOODED] + s->c[DP_CTR_FILTERED] +
		       s->c[DP_CTR_HANDOFF_OUT] + s->c[DP_CTR_HELD] + s->c[DP_CTR_RESENT] +
		       s->c[DP_CTR_DROPPED];

	return in == out && s->c[DP_CTR_HANDOFF_IN] == s->c[DP_CTR_HANDOFF_OUT];
}

/* Nothing waits in a worker's TX buffers (flushed every 100 us while the
 * worker runs; a preempted worker may sit on them for milliseconds). */
static bool box_tx_empty(const struct dp_box *b)
{
	for (unsigned w = 0; w < b->n_workers; w++)
		for (unsigned p = 0; p < DP_MAX_PORTS; p++)
			if (__atomic_load_n(&b->workers[w]->tx[p].n, __ATOMIC_RELAXED) != 0)
				return false;
	return true;
}

void h_settle(struct harness *h)
{
	uint64_t deadline = rte_get_tsc_cycles() + rte_get_tsc_hz() * 5;
	uint64_t last_tx = UINT64_MAX;
	unsigned stable = 0;

	for (;;) {
		struct dp_ctr s;
		bool rings_empty = true;

		h_collect(h);
		for (unsigned i = 0; i < h->n_ports; i++)
			rings_empty &= rte_ring_count(h->rx[i]) == 0;
		dp_box_counters(h->box, &s);
		if (rings_empty && s.c[DP_CTR_RX] >= h->injected && box_balanced(&s) &&
		    box_tx_empty(h->box)) {
			uint64_t tx = total_tx(h);

			stable = tx == last_tx ? stable + 1 : 0;
			last_tx = tx;
			if (stable >= 3)  /* 3 x 1 ms > the 100 us TX drain */
				break;
		}
		if (rte_get_tsc_cycles() > deadline) {
			fprintf(stderr, "h_settle: box did not settle (rx %lu of %u injected, RX rings %s, "
				"accounting %s, TX buffers %s)\n", s.c[DP_CTR_RX], h->injected,
				rings_empty ? "empty" : "not empty",
				box_balanced(&s) ? "balanced" : "not balanced",
				box_tx_empty(h->box) ? "empty" : "not empty");
			break;
		}
		usleep(1000);
	}
	h_collect(h);
}
