/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The aggregator's RTL model (nr_rtl.h) as the control API's backend "rtl"
 * (struct nr_backend_ops of control/api/nr_control.h): jobs go to the model
 * through the fpga driver (control/fpga/backend_fpga.c) on the model's registers,
 * so what the control plane does to the RTL is exactly what it would do to
 * the FPGA.  stats and info add the model's clock, and what the caller says
 * about the ports that feed the model (netreduce-switch --backend rtl: the
 * box's ports).
 */
#ifndef NR_RTL_BACKEND_H
#define NR_RTL_BACKEND_H

#include <stddef.h>

#include <jansson.h>

#include "control/api/nr_control.h"
#include "dataplane/rtl/nr_rtl.h"

struct nr_rtl_backend_opts {
	/* optional: members merged into the stats and info objects (new
	 * references, or NULL), e.g. the ports that feed the model */
	json_t *(*ports_stats)(void *ctx);
	json_t *(*ports_info)(void *ctx);
	void *ctx;
	unsigned cmd_timeout_ms;   /* the driver's command bound; 0: 2000 */
};

/*
 * Open the fpga driver on model r (which resets and enables the device) and
 * register it as backend "rtl"; o may be NULL.  The model stays the
 * caller's: destroy it after the backend (nr_ctl_destroy).  NULL and err on
 * failure.
 */
struct nr_backend *nr_rtl_backend_create(struct nr_rtl *r, const struct nr_rtl_backend_opts *o,
					 char *err, size_t errlen);

#endif /* NR_RTL_BACKEND_H */
