/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The EAL suite's simulated jobs: RoCEv2 traffic of N connections built with
 * the wire library (contributions, impairments, ACKs, hostile frames) and the
 * checks applied to every frame that leaves the box (eal_sim.c).
 */
#ifndef NR_EAL_SIM_H
#define NR_EAL_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eal_harness.h"
#include "proto/roce_build.h"
#include "proto/roce_pkt.h"

#define MAX_G       512
#define MAX_EXPECT  4096

extern uint64_t rng_state;

struct sim {
	struct harness *h;
	struct sim *peer;          /* another job on the same box: its results are fine too */
	uint32_t qpn_base;
	unsigned n;                /* ranks = connections */
	unsigned mtu, msg_size, pkts_per_msg, pool_msgs, w;
	uint32_t job_id;
	uint32_t result_key;       /* XORed into results' ImmDt (0: none; a job_create's) */
	uint32_t ipsn[H_MAX_HOSTS];
	struct nr_flow data[H_MAX_HOSTS];   /* conn r: rank r -> r+1 */
	struct nr_flow ack[H_MAX_HOSTS];    /* its ACKs: rank r+1 -> r */
	uint32_t seed;
	bool ce[H_MAX_HOSTS][MAX_G];        /* contribution carried ECN-CE */
	unsigned next_first[H_MAX_HOSTS];   /* next g expected as a first delivery */
	unsigned delivered[H_MAX_HOSTS][MAX_G];
	unsigned sent[H_MAX_HOSTS][MAX_G];
	unsigned results_seen, resends_seen;
	unsigned acked_g[H_MAX_HOSTS];      /* conn r's receiver acknowledged every g below */
	unsigned naks_seen;                 /* NAKs the box sent senders on their receivers' behalf */
	unsigned dup_data;                  /* duplicate data packets injected */
	unsigned gaps;                      /* data packets sent behind a lost one of their
					     * connection (the box sees a gap in its stream) */
	unsigned spoofed, malformed, runts, unknown_conn, bad_icrc, garbage_roce;
	/* frames expected to leave unchanged: (port, bytes) */
	unsigned n_expect;
	struct { uint16_t port, len; bool hit; uint8_t *data; } expect[MAX_EXPECT];
};

#define conn_dst_qpn(r, n) (s->qpn_base + 0x200 + ((r) + 1) % (n))
#define conn_src_qpn(r) (s->qpn_base + 0x100 + (r))

struct impair {
	double loss, dup, noise;
};

int build_data(const struct sim *s, unsigned r, unsigned g, const float *pay, bool ce,
		      uint8_t *buf, size_t cap);
void expected_result(const struct sim *s, unsigned r, unsigned g, uint8_t *buf,
			    int *len);
void sim_init(struct sim *s, struct harness *h, unsigned n, unsigned mtu,
		     unsigned msg_size, unsigned pool_msgs);
uint64_t rnd(void);
double frand(void);
/* Seeds the generator from NR_SEED or the clock and prints the seed. */
uint64_t test_seed(const char *name);
int build_data(const struct sim *s, unsigned r, unsigned g, const float *pay, bool ce,
	       uint8_t *buf, size_t cap);
void expected_result(const struct sim *s, unsigned r, unsigned g, uint8_t *buf, int *len);
void sim_init(struct sim *s, struct harness *h, unsigned n, unsigned mtu,
	      unsigned msg_size, unsigned pool_msgs);
/* QPs of their own for another job on the same hosts (after sim_init). */
void sim_set_qpn_base(struct sim *s, uint32_t base);
struct nr_job_spec *sim_spec(const struct sim *s);
void sim_job_add(struct sim *s, uint32_t id);
void expect_fwd(struct sim *s, unsigned port, const uint8_t *f, int len);
void check_outputs(struct sim *s);
/* Whether o is the result exp, but for AckReq the status monitor may set on one it resends. */
bool same_result(const struct h_out *o, const struct nr_pkt *p, const uint8_t *exp, int len);
void check_expect_all_hit(struct sim *s);
void send_data(struct sim *s, unsigned r, unsigned g);
void send_plain(struct sim *s, unsigned a, unsigned b);
void send_unregistered(struct sim *s, unsigned a, unsigned b);
void send_spoofed(struct sim *s, unsigned r, unsigned g);
void send_garbage(struct sim *s, unsigned r, unsigned g);
void send_acks(struct sim *s, unsigned g_end, bool twice);
void learn_all(struct sim *s, unsigned n_ports);
void run_window(struct sim *s, unsigned g0, unsigned g1, const struct impair *im, bool acks);
void check_accounting(struct sim *s, unsigned total_g);

#endif /* NR_EAL_SIM_H */
