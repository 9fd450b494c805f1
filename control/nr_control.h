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

#include <stdbool.h>
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

/* ---- the API core: validation, ids, keys, tenancy, request handling ---- */

struct nr_ctl;

struct nr_ctl *nr_ctl_create(struct nr_backend *b);
void nr_ctl_destroy(struct nr_ctl *c);     /* destroys the backend too */

/*
 * Handle one request line (without the newline).  admin is true for the UNIX
 * socket (no token, may list and touch every job), false for TCP (token
 * required, job operations require the job's key).  Returns a malloc'd reply
 * line without newline; never NULL except on allocation failure.
 */
char *nr_ctl_handle(struct nr_ctl *c, const char *line, size_t len, bool admin);

/* ---- the server --------------------------------------------------------- */

struct nr_ctl_server_cfg {
	const char *unix_path;     /* NULL: no UNIX socket */
	const char *tcp_addr;      /* "IP:PORT" or NULL: no TCP listener */
	const char *token;         /* required when tcp_addr is set */
	unsigned max_conns;        /* 0: 64 */
	unsigned idle_timeout_ms;  /* 0: 30000 */
	size_t max_line;           /* 0: 65536 */
};

struct nr_ctl_server;

/* Starts a control thread serving both listeners; NULL and err on failure. */
struct nr_ctl_server *nr_ctl_server_start(struct nr_ctl *c, const struct nr_ctl_server_cfg *cfg,
					  char *err, size_t errlen);
void nr_ctl_server_stop(struct nr_ctl_server *s);

#endif /* NR_CONTROL_H */
