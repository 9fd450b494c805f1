/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A register-level model of the netreduce aggregator FPGA (control/fpga/FPGA.md).
 * It owns nothing but a register file (a mapping of NR_FPGA_REGS_SIZE bytes)
 * and services it the way the hardware would: CTRL reset/enable, and the
 * command doorbell (JOB_LOAD / JOB_UNLOAD), checking what the driver wrote
 * exactly as the device checks it.  Two ways to run it:
 *   synchronous: pass fpga_model_io() to the driver; a write to CMD or CTRL
 *                services the command before the write returns;
 *   thread:      fpga_model_start() polls the register file (e.g. a shared
 *                file mapping the driver maps too) until fpga_model_stop().
 * Tests decode the job and connection tables to check the driver's work.
 */
#ifndef NR_TEST_FPGA_MODEL_H
#define NR_TEST_FPGA_MODEL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "control/fpga/fpga_regs.h"
#include "control/api/nr_control.h"

struct fpga_model_caps {
	uint32_t jobs, conns, pool_bytes, ranks, mtu, flags;
};

struct fpga_model {
	volatile uint32_t *regs;
	struct fpga_model_caps caps;
	uint8_t last_tag;
	bool stall;                    /* ignore the doorbell (timeout tests) */
	unsigned cmds, cmd_errors;
	uint32_t last_err, last_info;
	uint32_t pool[NR_FPGA_JOB_SLOTS];
	pthread_mutex_t lock;
	pthread_t th;
	bool running;
	struct nr_fpga_io io;
};

/* Default capabilities: 16 jobs, 512 entries, 64 MiB pool, 256 ranks, MTU 4096, both modes,
 * bf16 and fp16. */
void fpga_model_default_caps(struct fpga_model_caps *c);
/* Power-on: write the header, clear everything (not ready until reset). */
void fpga_model_init(struct fpga_model *m, void *regs, const struct fpga_model_caps *caps);
void fpga_model_fini(struct fpga_model *m);
/* Service CTRL and a pending doorbell, if any. */
void fpga_model_service(struct fpga_model *m);
/* Accessor for the driver: plain accesses, service on CMD/CTRL writes. */
const struct nr_fpga_io *fpga_model_io(struct fpga_model *m);
int fpga_model_start(struct fpga_model *m);
void fpga_model_stop(struct fpga_model *m);

/* Inspection: the job loaded under the driver's tag (job id), or -1. */
int fpga_model_slot_of(struct fpga_model *m, uint32_t tag);
/* Decode job slot + its entries (by rank) into a malloc'd spec; NULL if free. */
struct nr_job_spec *fpga_model_decode(struct fpga_model *m, unsigned slot);
unsigned fpga_model_valid_entries(struct fpga_model *m);
uint32_t fpga_model_rd(struct fpga_model *m, uint32_t off);
void fpga_model_wr(struct fpga_model *m, uint32_t off, uint32_t v);

/* Pretend traffic: n slots of the job completed (all counters move). */
void fpga_model_traffic(struct fpga_model *m, unsigned slot, uint64_t n);
/* Fail a job as the hardware would (enum nr_fpga_fail). */
void fpga_model_fail(struct fpga_model *m, unsigned slot, uint32_t code);

#endif
