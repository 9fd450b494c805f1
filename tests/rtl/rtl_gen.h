/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Generated traffic for the RTL-versus-software comparison: the jobs of a
 * trace and the frames the box would see, as hosts of an all-reduce ring send
 * them (rank i writes message k to rank i+1, packet g = k x packets + p,
 * receivers ACK), with what a network does to them: loss and retransmission,
 * duplicates (before and after emission, after release), reordering within
 * the credit window, ECN marks, VLAN tags, IPv4 options, Ethernet trailers;
 * and the frames a box must not aggregate: every opcode on registered and
 * unregistered QPs, NAKs, spoofed sources, runts, truncations, bad ICRCs,
 * IPv6 RoCE, non-RoCE frames.  A chaos trace adds contributions of the
 * wrong length or tag (the job then stalls or fails, identically on both).
 * Jobs of a 16-bit element type (bf16, fp16) get payloads whose elements
 * reach every class (NaN payloads, Inf, subnormals, zeros, the largest
 * finite) and columns built to round on a tie, overflow or cancel once the
 * ranks' values are summed in FP32; messages may end in half a word.
 */
#ifndef NR_RTL_GEN_H
#define NR_RTL_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "tests/rtl/rtl_pair.h"

struct gen_job {
	uint32_t n, mtu, msg, pool_msgs, nmsg;
	uint8_t mode;
	uint32_t key;
	uint32_t ipsn_base;     /* near 2^24: PSN wrap inside the trace */
	bool vlan_some;         /* some frames tagged */
	uint8_t dtype;          /* enum nr_elem_type (0: fp32) */
};

struct gen_cfg {
	const char *name;
	struct gen_job jobs[2];
	unsigned n_jobs;
	bool chaos;
	enum agg_sum_kernel kernel;
};

/* Run one trace through both boxes (rtl_pair.h), counters checked at the end. */
void gen_run(const struct gen_cfg *c, uint64_t seed);
/* One of each contribution the engine refuses (a two-packet message). */
void gen_cases_run(const struct gen_cfg *c, uint64_t seed);
/* Two different frames for one held contribution (ordered mode): both fail the job.
 * (16-bit jobs first: a duplicate of a message's last packet, odd in elements,
 * that differs in its pad bytes only is the same contribution: dup_dropped.) */
void gen_conflict_run(const struct gen_cfg *c, uint64_t seed);
/* A slot left incomplete, then time passes: both fail the job by its timeout. */
void gen_timeout_run(const struct gen_cfg *c, uint64_t seed);

#endif
