/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Harness of the EAL suite: a box on ring-backed ports (rte_eth_from_rings),
 * one port per simulated host, its loop running on worker lcore 1.  Frames
 * are injected into a port's RX ring and collected from its TX ring.
 */
#ifndef NR_EAL_HARNESS_H
#define NR_EAL_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "dataplane/dpdk/dp_box.h"
#include "proto/roce_build.h"

#define H_MAX_HOSTS 8
#define H_MAX_OUT   8192
#define H_MAX_BURST 32

struct h_out {
	uint16_t port;        /* index of the host port it left on */
	uint16_t len;
	uint8_t *data;        /* malloc'd copy */
};

struct harness {
	struct rte_mempool *pool;
	unsigned n_ports;
	uint16_t port_id[H_MAX_HOSTS];
	struct rte_ring *rx[H_MAX_HOSTS];   /* host -> box */
	struct rte_ring *tx[H_MAX_HOSTS];   /* box -> host */
	struct dp_box *box;
	unsigned injected;
	unsigned n_out;
	struct h_out out[H_MAX_OUT];
};

extern struct rte_mempool *h_pool;    /* the suite's pool (no per-lcore cache) */
extern struct harness *h_current;     /* set up and not yet torn down */

int h_eal_init(void);
/* rte_eal_cleanup() and removal of the EAL runtime directory. */
void h_eal_fini(void);
/* A CMocka group of EAL tests: h_eal_init, then h_pool freed and h_eal_fini. */
int h_group_setup(void **state);
int h_group_teardown(void **state);
/*
 * A CMocka group of box cases that skip where the EAL cannot start: h_eal_ok
 * says whether it did (a case calls skip() without it), the group runs, then
 * h_eal_fini.  h_case_teardown tears down the box a case left up (after a
 * failed case too: the next one needs lcore 1).  The group's failures.
 */
struct CMUnitTest;
extern bool h_eal_ok;
int h_run_box_group(const char *name, const struct CMUnitTest *tests, size_t n);
int h_case_teardown(void **state);
/* Box in mode with n ports and one worker on lcore 1, launched. */
int h_setup(struct harness *h, unsigned n_ports, enum dp_mode mode);
/* Same with 1 or 2 workers (lcores 1 and 2; lcore 2 shares CPU 1). */
int h_setup_workers(struct harness *h, unsigned n_ports, enum dp_mode mode, unsigned n_workers);
/* The same, tune (when not NULL) changing the box's configuration first. */
int h_setup_tuned(struct harness *h, unsigned n_ports, enum dp_mode mode, unsigned n_workers,
		  void (*tune)(struct dp_cfg *cfg));
void h_teardown(struct harness *h);
/* Inject one frame on host port i. */
void h_inject(struct harness *h, unsigned i, const uint8_t *frame, unsigned len);
/* Inject n frames on host port i at once: the box's next rx burst there
 * takes them all, in this order. */
void h_inject_burst(struct harness *h, unsigned i, uint8_t *const frames[], const unsigned lens[],
		    unsigned n);
/* Inject as an mbuf chain of segments of cut bytes (the last one shorter). */
void h_inject_chain(struct harness *h, unsigned i, const uint8_t *frame, unsigned len, unsigned cut);
/* Wait until the box received everything injected and TX went quiet. */
void h_settle(struct harness *h);
/* Move every frame the box sent into h->out. */
void h_collect(struct harness *h);
void h_clear_out(struct harness *h);

/* Addresses of simulated host r (10.78.0.r+1, 02:4e:52:00:00:r+1). */
void h_host_mac(unsigned r, uint8_t mac[6]);
uint32_t h_host_ip(unsigned r);

#endif /* NR_EAL_HARNESS_H */
