/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control API's "sw" backend over an in-process engine, for the control
 * targets (fuzz_control.c, fuzz_ctlserver.c): job_create is
 * agg_engine_job_add, job_destroy agg_engine_job_del, and so on, one engine job
 * per control job, no dataplane.
 */
#ifndef NRZ_BACKEND_H
#define NRZ_BACKEND_H

#include <stdint.h>

#include "control/api/nr_control.h"
#include "dataplane/engine/agg_engine.h"

struct nrz_backend {
	struct agg_engine *eng;
	uint64_t now;            /* the engine's clock (ns) at job creation */
	unsigned jobs;           /* jobs the engine holds */
};

/*
 * A new engine in nb (nb->now set) and the backend over it; traps when either
 * cannot be made.  nr_ctl_destroy destroys the backend; destroy the engine
 * after it with agg_engine_destroy(nb->eng).
 */
struct nr_backend *nrz_backend_new(struct nrz_backend *nb);

#endif /* NRZ_BACKEND_H */
