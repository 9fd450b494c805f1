/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two boxes fed the same frames: the software box (the engine, with what
 * dataplane/dpdk/dp_loop.c and dp_emit.c do around it: runt, malformed and ICRC
 * drops, the result rewrite) and the RTL model (dataplane/rtl/nr_rtl.h, jobs
 * loaded through its control backend "rtl", the fpga driver of
 * control/fpga/backend_fpga.c on the model).  Every frame
 * goes through both; their output frames must be identical, byte for byte,
 * in the same order, with the same kind and port, and at the end every
 * counter must agree: engine counters box-wide and per job, job state and
 * progress, and the dataplane counters.
 */
#ifndef NR_RTL_PAIR_H
#define NR_RTL_PAIR_H

#include <stdbool.h>
#include <stdint.h>

#include "control/fpga/fpga_regs.h"
#include "dataplane/engine/agg_engine.h"

struct rp;

/* kernel: NR_KERNEL_SCALAR or NR_KERNEL_AVX512 (the software sum), AUTO = best. */
struct rp *rp_create(enum agg_sum_kernel kernel);
void rp_destroy(struct rp *r);

/* The same job on both boxes (id chosen by the caller). */
void rp_job_add(struct rp *r, uint32_t id, const struct nr_job_spec *spec);

/* One frame into both; outputs compared (a mismatch fails the test with a
 * hexdump of both frames). */
void rp_frame(struct rp *r, uint8_t port, const uint8_t *frame, uint32_t len);

/* Every counter, every job's status. */
void rp_check_counters(struct rp *r);

/*
 * Advance both boxes' clocks by ms milliseconds: the engine polls for
 * progress timeouts at the new time, the RTL gets ms ticks.
 */
void rp_advance_ms(struct rp *r, unsigned ms);

/* Counters summed over every pair destroyed so far (what the traces covered). */
void rp_coverage(uint64_t ectr[NR_ECTR_MAX], uint64_t dctr[NR_FPGA_D_MAX]);
/* Whether the RTL keeps engine counter i (the status monitor's and the
 * bindings' it does not). */
bool rp_rtl_keeps(unsigned i);
extern const char *const rp_dctr_names[NR_FPGA_D_MAX];

/* Totals for the log line. */
void rp_stats(const struct rp *r, uint64_t *frames, uint64_t *outputs, uint64_t *results,
	      uint64_t *cycles);

#endif
