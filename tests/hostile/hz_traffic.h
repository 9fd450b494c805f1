/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile traffic for the box (docs/bad-input.md), shared by the engine-level
 * suite (test_hostile_engine.c, unit) and the EAL suite (test_hostile_eal.c):
 * a job of N ranks with a known workload whose every result is checked bit for
 * bit against the rank-ordered sum, plus generators of hostile frames.  No
 * DPDK and no engine in here: only the wire library.
 */
#ifndef NRZ_HZ_TRAFFIC_H
#define NRZ_HZ_TRAFFIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataplane/engine/agg_engine.h"
#include "proto/roce_build.h"
#include "proto/roce_pkt.h"

#define HZ_MAXN      8
#define HZ_FRAME_MAX 9216

enum hz_values {
	HZ_VAL_PLAIN = 0,     /* fractions: rounding depends on order */
	HZ_VAL_SPECIAL = 1,   /* NaN, -NaN, +-Inf, -0, denormals, FLT_MAX mixed in */
};

struct hz_job {
	unsigned n;                        /* ranks = connections */
	uint32_t mtu, msg_size, ppm, msgs; /* msgs messages in the workload */
	uint32_t ip[HZ_MAXN];              /* rank r's address, network order */
	uint8_t mac[HZ_MAXN][6];
	struct nr_job_spec *spec;          /* pool 2 messages per credit, ordered */
	float *val;                        /* [g][rank][mtu / 4] contributions */
	uint8_t *seen;                     /* [g][conn] results seen */
	uint32_t results;                  /* correct results seen */
	uint32_t wrong;                    /* results with a wrong sum, length, address */
	uint32_t dup_results;              /* a (g, conn) result seen again (resends) */
	uint32_t unsigned_imm;             /* results whose ImmDt was not tag ^ key */
	uint32_t naks_out;                 /* NAKs and RNR NAKs to the job's QPs that left the box */
	uint32_t seed;
};

/* ips/macs of the N ranks; values as above.  0 or -ENOMEM. */
int hz_job_init(struct hz_job *j, unsigned n, const uint32_t *ips, const uint8_t (*macs)[6],
		uint32_t mtu, uint32_t msg_size, uint32_t msgs, enum hz_values values,
		uint32_t seed);
void hz_job_fini(struct hz_job *j);
static inline uint32_t hz_packets(const struct hz_job *j) { return j->ppm * j->msgs; }

/* The valid data frame of rank r (connection r) for sequence g; its length. */
int hz_data(const struct hz_job *j, unsigned r, uint32_t g, uint8_t *buf, size_t cap);
/* The ACK that rank r+1 returns to rank r for sequence g (syn 0x1F: ACK). */
int hz_ack(const struct hz_job *j, unsigned r, uint32_t g, uint8_t syn, uint8_t *buf, size_t cap);
/* A response (ACK opcode, syndrome syn) from rank r to the receiving QP of
 * connection r (the receiver's QP as a requester, its peer answering). */
int hz_resp(const struct hz_job *j, unsigned r, uint32_t g, uint8_t syn, uint8_t *buf, size_t cap);

/*
 * Look at a frame that left the box.  Returns 1 if it is a result of this job
 * (checked: payload = rank-ordered sum bit for bit, any NaN equals any NaN,
 * ImmDt = tag ^ result_key, ICRC when check_icrc), 0 if it is not a data frame
 * of this job.  Wrong results count in j->wrong and print what differs; NAKs
 * and RNR NAKs to the job's QPs in j->naks_out.
 */
int hz_result(struct hz_job *j, const uint8_t *frame, uint32_t len, bool check_icrc);
/* Every (g, conn) result seen: true when complete (prints what is missing). */
bool hz_all_results(const struct hz_job *j);

/* ---- hostile frames --------------------------------------------------------- */

/* xorshift32; never returns 0 */
uint32_t hz_rand(uint32_t *s);
/* len random bytes (len 0..HZ_FRAME_MAX). */
void hz_random_frame(uint32_t *s, uint8_t *buf, uint32_t len);
/*
 * len bytes starting with the headers of a valid data frame of the job
 * (Ethernet/IPv4/UDP 4791/BTH/RETH) and random bytes after: IP and UDP lengths
 * then lie about the frame.
 */
void hz_roce_prefixed(const struct hz_job *j, uint32_t *s, uint8_t *buf, uint32_t len);

/* Fix the IPv4 header checksum and the ICRC of a (modified) RoCE frame. */
void hz_refresh(uint8_t *frame, uint32_t len);

/* Opcodes IBTA does not define (count in *n). */
const uint8_t *hz_undefined_opcodes(unsigned *n);

#endif /* NRZ_HZ_TRAFFIC_H */
