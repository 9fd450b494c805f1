/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control API: one API, two backends (DESIGN.md section 5).
 *
 *   nr_ctl          validation, job ids and keys, tenancy, the JSON request
 *                   handler (ctl_api.c); speaks to one backend.
 *   backend "sw"    the DPDK dataplane, reached through a struct nr_sw_channel
 *                   that the box implements with command rings to its lcores
 *                   (and tests implement with an in-process engine).
 *   backend "fpga"  an aggregator FPGA programmed through its register map
 *                   (fpga_regs.h), mapped from a PCIe BAR or a file.
 *   nr_ctl_server   UNIX socket (0600, admin, no token) and TCP (hosts, shared
 *                   token) listeners serving JSON lines (PROTOCOL.md).
 */
#ifndef NR_CONTROL_H
#define NR_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "dataplane/agg_engine.h"

struct nr_backend;

struct nr_backend_ops {
	const char *name;
	/* id is chosen by nr_ctl; spec already validated. */
	int (*job_create)(struct nr_backend *b, uint32_t id, const struct nr_job_spec *spec,
			  uint32_t *credits, char *err, size_t errlen);
	int (*job_destroy)(struct nr_backend *b, uint32_t id);
	int (*job_status)(struct nr_backend *b, uint32_t id, struct nr_job_stats *st);
	/* Backend-wide statistics (ports, lcores, drop reasons) as a JSON object. */
	json_t *(*stats)(struct nr_backend *b);
	/* {"backend":"sw", ...}: kernel, lcores, ports / device, capacity. */
	json_t *(*info)(struct nr_backend *b);
	void (*destroy)(struct nr_backend *b);
};

struct nr_backend {
	const struct nr_backend_ops *ops;
	void *priv;
};

/*
 * How the sw backend reaches the dataplane.  Every call is synchronous from
 * the control thread's point of view; the box implements it by posting a
 * command on an lcore's ring and waiting for the reply (no lock in the loop).
 */
struct nr_sw_channel {
	int (*job_add)(void *ctx, uint32_t id, const struct nr_job_spec *spec,
		       uint32_t *credits, char *err, size_t errlen);
	int (*job_del)(void *ctx, uint32_t id);
	int (*job_stats)(void *ctx, uint32_t id, struct nr_job_stats *st);
	json_t *(*stats)(void *ctx);
	json_t *(*info)(void *ctx);
	void *ctx;
};

struct nr_backend *nr_backend_sw_create(const struct nr_sw_channel *ch);
/* path: sysfs resource0 of the device, or a regular file (simulation). */
struct nr_backend *nr_backend_fpga_create(const char *path, char *err, size_t errlen);

#endif /* NR_CONTROL_H */
