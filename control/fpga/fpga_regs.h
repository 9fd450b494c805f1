/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Register map of the netreduce aggregator FPGA (FPGA.md documents it in
 * prose).  The register file is BAR 0 of the device (sysfs resource0), or a
 * regular file of at least NR_FPGA_REGS_SIZE bytes in simulation.
 *
 * Every register is 32 bits wide, little-endian (PCIe byte order), at a
 * 4-byte aligned byte offset, accessed only with single 32-bit loads and
 * stores.  64-bit counters are lo/hi pairs: read hi, lo, hi again and retry
 * if hi moved.  IPv4 addresses are stored as numbers (10.0.0.1 = 0x0a000001),
 * MACs as a 16-bit hi half (bytes 0-1) and a 32-bit lo half (bytes 2-5).
 *
 *   0x00000  header and global control
 *   0x00040  command doorbell
 *   0x01000  job table          NR_FPGA_JOB_SLOTS  x 0x40
 *   0x02000  connection table   NR_FPGA_CONN_SLOTS x 0x40
 *   0x0f000  global counters    one lo/hi pair per engine counter
 *   0x0f100  dataplane counters one lo/hi pair per NR_FOREACH_FPGA_DCTR
 *   0x10000  per-job counters   NR_FPGA_JOB_SLOTS  x 0x100
 *
 * The capability registers say how much of the tables a device implements
 * (CAP_MAX_JOBS <= NR_FPGA_JOB_SLOTS, CAP_MAX_CONNS <= NR_FPGA_CONN_SLOTS).
 */
#ifndef NR_FPGA_REGS_H
#define NR_FPGA_REGS_H

#include <assert.h>
#include <stdint.h>

#include "proto/nr_ctr.h"
#include "proto/nr_job.h"

#define NR_FPGA_MAGIC            0x4146524eu   /* bytes 'N' 'R' 'F' 'A' */
#define NR_FPGA_VERSION_MAJOR    1u
#define NR_FPGA_VERSION_MINOR    1u            /* 1.1: J_DTYPE, CAPF_BF16/FP16 */
#define NR_FPGA_VERSION          ((NR_FPGA_VERSION_MAJOR << 16) | NR_FPGA_VERSION_MINOR)
#define NR_FPGA_REGS_SIZE        0x20000u      /* 128 KiB BAR */

/* ---- header (read-only) ------------------------------------------------- */
#define NR_FPGA_MAGIC_REG        0x000
#define NR_FPGA_VERSION_REG      0x004         /* major << 16 | minor */
#define NR_FPGA_CAP_MAX_JOBS     0x008         /* job slots implemented */
#define NR_FPGA_CAP_MAX_CONNS    0x00c         /* connection entries implemented */
#define NR_FPGA_CAP_POOL_BYTES   0x010         /* pool memory, bytes */
#define NR_FPGA_CAP_MAX_RANKS    0x014         /* connections per job */
#define NR_FPGA_CAP_MAX_MTU      0x018
#define NR_FPGA_CAP_FLAGS        0x01c
#define   NR_FPGA_CAPF_ORDERED     (1u << 0)   /* sum mode ordered */
#define   NR_FPGA_CAPF_STREAMING   (1u << 1)   /* sum mode streaming */
#define   NR_FPGA_CAPF_BF16        (1u << 2)   /* J_DTYPE bf16: widened, summed in FP32, rounded once */
#define   NR_FPGA_CAPF_FP16        (1u << 3)   /* J_DTYPE fp16: the same */
#define NR_FPGA_STATUS           0x020
#define   NR_FPGA_ST_READY         (1u << 0)   /* out of reset, tables clear */
#define   NR_FPGA_ST_ENABLED       (1u << 1)   /* datapath running */
#define   NR_FPGA_ST_FATAL         (1u << 2)   /* internal error: reset needed */
#define NR_FPGA_CTRL             0x024         /* read/write */
#define   NR_FPGA_CTRL_ENABLE      (1u << 0)
#define   NR_FPGA_CTRL_RESET       (1u << 1)   /* self-clearing: clears all tables */
#define NR_FPGA_POOL_USED        0x028         /* pool bytes held by loaded jobs (RO) */
#define NR_FPGA_JOBS_LOADED      0x02c         /* loaded job slots (RO) */

/* ---- command doorbell --------------------------------------------------- */
/*
 * CMD_INFO after an error: BAD_FIELD the field's offset in the job slot,
 * BAD_CONN and CONN_CLASH the entry, CONN_COUNT the entries found, NO_POOL
 * the pool bytes free.
 *
 * Write CMD = op | tag << 8 | index << 16.  The device services it and then
 * writes CMD_STATUS = state | error << 8 | tag << 16 (tag echoed, so a stale
 * status of the previous command is never mistaken for this one's) and
 * CMD_INFO (which entry or field was refused).
 */
#define NR_FPGA_CMD              0x040
#define   NR_FPGA_CMD_OP_MASK      0xffu
#define   NR_FPGA_CMD_TAG_SHIFT    8
#define   NR_FPGA_CMD_IDX_SHIFT    16
#define NR_FPGA_CMD_STATUS       0x044
#define   NR_FPGA_CS_STATE_MASK    0x3u
#define   NR_FPGA_CS_IDLE          0u
#define   NR_FPGA_CS_BUSY          1u
#define   NR_FPGA_CS_DONE          2u
#define   NR_FPGA_CS_ERROR         3u
#define   NR_FPGA_CS_ERR_SHIFT     8
#define   NR_FPGA_CS_TAG_SHIFT     16
#define NR_FPGA_CMD_INFO         0x048

#define NR_FPGA_OP_JOB_LOAD      0x01  /* index = job slot: check and activate */
#define NR_FPGA_OP_JOB_UNLOAD    0x02  /* index = job slot: stop, free pool, clear its entries */

/*
 * Code lists, each the one source of its enum and of the driver's messages:
 * _(ENUM, code, "meaning"[, what NR_FPGA_CMD_INFO holds, as a format]).
 */
#define NR_FPGA_CODE_ENUM(e, v, ...) e = v,
#define NR_FPGA_CODE_STR(e, v, s, ...) [v] = s,

/* Command errors (NR_FPGA_CS_ERR); CMD_INFO names what was refused. */
#define NR_FPGA_FOREACH_CMD_ERR(_)                                                                        \
	_(NR_FPGA_ERR_NONE, 0, "no error", "")                                                            \
	_(NR_FPGA_ERR_BAD_OP, 1, "unknown command", "")                                                   \
	_(NR_FPGA_ERR_BAD_INDEX, 2, "job slot index out of range", "")                                    \
	_(NR_FPGA_ERR_SLOT_BUSY, 3, "job slot already loaded", "")                                        \
	_(NR_FPGA_ERR_SLOT_FREE, 4, "job slot not loaded", "")                                            \
	_(NR_FPGA_ERR_BAD_FIELD, 5, "job field out of range", " (job register 0x%02x)")                   \
	_(NR_FPGA_ERR_BAD_CONN, 6, "connection entry invalid", " (connection entry %u)")                  \
	_(NR_FPGA_ERR_CONN_COUNT, 7, "connection entries do not match N_CONNS", " (%u entries found)")    \
	_(NR_FPGA_ERR_NO_POOL, 8, "not enough pool memory", " (%u bytes free)")                           \
	_(NR_FPGA_ERR_CONN_CLASH, 9, "connection already used by a loaded job", " (connection entry %u)") \
	_(NR_FPGA_ERR_DISABLED, 10, "device not enabled", "")

enum nr_fpga_cmd_err { NR_FPGA_FOREACH_CMD_ERR(NR_FPGA_CODE_ENUM) };

/* ---- job table ---------------------------------------------------------- */
#define NR_FPGA_JOB_BASE         0x1000
#define NR_FPGA_JOB_STRIDE       0x40
#define NR_FPGA_JOB_SLOTS        64
#define NR_FPGA_JOB(slot, reg)   (NR_FPGA_JOB_BASE + (slot) * NR_FPGA_JOB_STRIDE + (reg))
#define NR_FPGA_J_STATE          0x00  /* RO: enum nr_fpga_job_state */
#define NR_FPGA_J_N_CONNS        0x04
#define NR_FPGA_J_MTU            0x08
#define NR_FPGA_J_MSG_SIZE       0x0c
#define NR_FPGA_J_POOL_MSGS      0x10
#define NR_FPGA_J_TIMEOUT_MS     0x14
#define NR_FPGA_J_MODE           0x18  /* enum nr_sum_mode */
#define NR_FPGA_J_RESULT_KEY     0x1c
#define NR_FPGA_J_TAG            0x20  /* the control plane's job id (display only) */
#define NR_FPGA_J_NEXT_EMIT      0x24  /* RO */
#define NR_FPGA_J_NEXT_RELEASE   0x28  /* RO */
#define NR_FPGA_J_FAIL_CODE      0x2c  /* RO: enum nr_fpga_fail */
#define NR_FPGA_J_COMPLETED_LO   0x30  /* RO */
#define NR_FPGA_J_COMPLETED_HI   0x34  /* RO */
#define NR_FPGA_J_DTYPE          0x38  /* enum nr_elem_type: 0 fp32, 1 bf16, 2 fp16 (a 16-bit
				       * type only where CAP_FLAGS has it; a 1.0 device has no
				       * such register and sums FP32) */

enum nr_fpga_job_state {
	NR_FPGA_JS_FREE = 0,
	NR_FPGA_JS_ACTIVE = 1,
	NR_FPGA_JS_FAILED = 2,
};

#define NR_FPGA_FOREACH_FAIL(_)                                                                       \
	_(NR_FPGA_FAIL_NONE, 0, "no failure")                                                         \
	_(NR_FPGA_FAIL_TIMEOUT, 1, "no progress within the job's timeout")                            \
	_(NR_FPGA_FAIL_TAG_MISMATCH, 2, "immediate tags of one message disagree (hosts out of step)") \
	_(NR_FPGA_FAIL_LEN_MISMATCH, 3, "contributions of one slot differ in length")                 \
	_(NR_FPGA_FAIL_POOL_ECC, 4, "uncorrectable pool memory error")                                \
	_(NR_FPGA_FAIL_PSN_CONFLICT, 5, "two different frames for one held contribution (a forged or corrupted frame)")

enum nr_fpga_fail { NR_FPGA_FOREACH_FAIL(NR_FPGA_CODE_ENUM) };

/* ---- connection table --------------------------------------------------- */
#define NR_FPGA_CONN_BASE        0x2000
#define NR_FPGA_CONN_STRIDE      0x40
#define NR_FPGA_CONN_SLOTS       512
#define NR_FPGA_CONN(ent, reg)   (NR_FPGA_CONN_BASE + (ent) * NR_FPGA_CONN_STRIDE + (reg))
#define NR_FPGA_C_CTRL           0x00  /* VALID | job slot */
#define   NR_FPGA_C_VALID          (1u << 31)
#define   NR_FPGA_C_JOB_MASK       0xffffu
#define NR_FPGA_C_RANK           0x04  /* connection index in its job (0..N-1) */
#define NR_FPGA_C_SRC_IP         0x08
#define NR_FPGA_C_DST_IP         0x0c
#define NR_FPGA_C_SRC_QPN        0x10  /* 24 bits */
#define NR_FPGA_C_DST_QPN        0x14  /* 24 bits */
#define NR_FPGA_C_IPSN           0x18  /* 24 bits */
#define NR_FPGA_C_SRC_MAC_HI     0x1c  /* bytes 0-1 in bits 15:0 */
#define NR_FPGA_C_SRC_MAC_LO     0x20  /* bytes 2-5 */
#define NR_FPGA_C_DST_MAC_HI     0x24
#define NR_FPGA_C_DST_MAC_LO     0x28

/* ---- counters: one lo/hi pair per engine counter (NR_FOREACH_ENGINE_CTR) - */
#define NR_FPGA_GCTR_BASE        0xf000
#define NR_FPGA_JCTR_BASE        0x10000
#define NR_FPGA_JCTR_STRIDE      0x100
#define NR_FPGA_GCTR(i)          (NR_FPGA_GCTR_BASE + (i) * 8)
#define NR_FPGA_JCTR(slot, i)    (NR_FPGA_JCTR_BASE + (slot) * NR_FPGA_JCTR_STRIDE + (i) * 8)

/*
 * Dataplane counters at 0xf100, the box's names for the same events
 * (dataplane/README.md): every received frame lands in one of
 * rx = forwarded + held + resent + runt + oversize + malformed + bad_icrc
 *      + engine_drop.  _(ENUM, "name"), each after its meaning.
 */
#define NR_FPGA_DCTR_BASE        0xf100
#define NR_FPGA_DCTR(i)          (NR_FPGA_DCTR_BASE + (i) * 8)
#define NR_FOREACH_FPGA_DCTR(_)                                                 \
	/* frames received */                                                   \
	_(NR_FPGA_D_RX, "rx")                                                   \
	/* frames sent */                                                       \
	_(NR_FPGA_D_TX, "tx")                                                   \
	/* frames sent on unchanged */                                          \
	_(NR_FPGA_D_FORWARDED, "forwarded")                                     \
	/* contributions kept (they leave as results) */                        \
	_(NR_FPGA_D_HELD, "held")                                               \
	/* duplicates answered with the stored result */                        \
	_(NR_FPGA_D_RESENT, "resent")                                           \
	/* result frames sent */                                                \
	_(NR_FPGA_D_RESULTS, "results")                                         \
	/* frames shorter than an Ethernet header */                            \
	_(NR_FPGA_D_RUNT, "runt")                                               \
	/* frames longer than the device takes */                               \
	_(NR_FPGA_D_OVERSIZE, "oversize")                                       \
	/* UDP/4791 frames that are not valid RoCEv2 */                         \
	_(NR_FPGA_D_MALFORMED, "malformed")                                     \
	/* RoCEv2 frames with a wrong ICRC */                                   \
	_(NR_FPGA_D_BAD_ICRC, "bad_icrc")                                       \
	/* frames the engine dropped (the engine counter says why) */           \
	_(NR_FPGA_D_ENGINE_DROP, "engine_drop")                                 \
	/* results given ECN-CE */                                              \
	_(NR_FPGA_D_ECN_MARKED, "ecn_marked")

enum nr_fpga_dctr { NR_FOREACH_FPGA_DCTR(NR_CTR_ENUM) NR_FPGA_D_MAX };

static_assert(NR_ECTR_MAX * 8 <= NR_FPGA_JCTR_STRIDE, "engine counters fit a job's counter block");
static_assert(NR_FPGA_CONN(NR_FPGA_CONN_SLOTS, 0) <= NR_FPGA_GCTR_BASE, "conn table fits");
static_assert(NR_FPGA_GCTR(NR_ECTR_MAX) <= NR_FPGA_DCTR_BASE, "engine counters end before the dataplane's");
static_assert(NR_FPGA_DCTR(NR_FPGA_D_MAX) <= NR_FPGA_JCTR_BASE, "dataplane counters fit");
static_assert(NR_FPGA_JOB(NR_FPGA_JOB_SLOTS, 0) <= NR_FPGA_CONN_BASE, "job table fits");
static_assert(NR_FPGA_JCTR(NR_FPGA_JOB_SLOTS, 0) <= NR_FPGA_REGS_SIZE, "counters fit the BAR");

#endif /* NR_FPGA_REGS_H */
