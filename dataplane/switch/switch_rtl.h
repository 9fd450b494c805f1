/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * netreduce-switch --backend rtl: the box's ports around the aggregator's
 * RTL model (switch_rtl.c).  The box hands every frame to the model
 * (dataplane/dpdk/dp_dev.c) and the control API drives the model through the
 * fpga driver's register access (backend "rtl", dataplane/rtl/).
 */
#ifndef NR_SWITCH_RTL_H
#define NR_SWITCH_RTL_H

#include <stddef.h>

#include "control/api/nr_control.h"
#include "dataplane/dpdk/dp_box.h"

struct switch_rtl;

/*
 * Before dp_box_launch: make the model, open backend "rtl" on it (the
 * device is reset and enabled) into *be, and attach the model to the box's
 * worker.  NULL and err on failure (also when this build has no model).
 */
struct switch_rtl *switch_rtl_attach(struct dp_box *b, struct nr_backend **be, char *err,
				     size_t errlen);
/* After the workers stopped and the backend is destroyed: the model goes. */
void switch_rtl_detach(struct switch_rtl *s);

#endif /* NR_SWITCH_RTL_H */
