/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Backend "rtl": the fpga driver on the RTL model (nr_rtl_backend.h).  The
 * driver maps a register file and checks it is one; the model answers every
 * access through nr_rtl_io_read32/write32, so the file is an anonymous
 * memory file of the register map's size that nothing reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "control/fpga/fpga_regs.h"
#include "dataplane/rtl/nr_rtl_backend.h"

struct rtl_be {
	struct nr_rtl *r;
	struct nr_fpga_io io;
	struct nr_backend *fpga;     /* the driver, on the model */
	struct nr_rtl_backend_opts o;
};

static int be_job_create(struct nr_backend *b, uint32_t id, const struct nr_job_spec *spec,
			 uint32_t *credits, char *err, size_t errlen)
{
	struct rtl_be *p = b->priv;

	return p->fpga->ops->job_create(p->fpga, id, spec, credits, err, errlen);
}

static int be_job_destroy(struct nr_backend *b, uint32_t id)
{
	struct rtl_be *p = b->priv;

	return p->fpga->ops->job_destroy(p->fpga, id);
}

static int be_job_status(struct nr_backend *b, uint32_t id, struct nr_job_stats *st)
{
	struct rtl_be *p = b->priv;

	return p->fpga->ops->job_status(p->fpga, id, st);
}

/* o gets the members of what f(ctx) returns (if anything). */
static json_t *merged(json_t *o, json_t *(*f)(void *), void *ctx)
{
	json_t *more = f ? f(ctx) : NULL;

	if (!json_is_object(o)) {
		json_decref(o);
		o = json_object();
	}
	if (json_is_object(more))
		json_object_update(o, more);
	json_decref(more);
	return o;
}

static json_t *model_json(struct rtl_be *p)
{
	return json_pack("{s:s,s:s,s:I}", "top", "nr_agg_top", "simulator", "verilator",
			 "cycles", (json_int_t)nr_rtl_cycles(p->r));
}

/* The driver's {"device": {counters, dataplane, pool}}, the model's clock, the ports. */
static json_t *be_stats(struct nr_backend *b)
{
	struct rtl_be *p = b->priv;
	json_t *o = merged(p->fpga->ops->stats(p->fpga), p->o.ports_stats, p->o.ctx);

	json_object_set_new(o, "model", model_json(p));
	return o;
}

static json_t *be_info(struct nr_backend *b)
{
	struct rtl_be *p = b->priv;
	json_t *o = merged(p->fpga->ops->info(p->fpga), p->o.ports_info, p->o.ctx);

	json_object_set_new(o, "device", json_string("the aggregator's RTL (nr_agg_top) on Verilator"));
	json_object_set_new(o, "model", model_json(p));
	return o;
}

static void be_destroy(struct nr_backend *b)
{
	struct rtl_be *p = b->priv;

	nr_backend_destroy(p->fpga);   /* unloads the jobs the driver loaded */
	free(p);
}

static const struct nr_backend_ops rtl_backend_ops = {
	.name = "rtl", .job_create = be_job_create, .job_destroy = be_job_destroy,
	.job_status = be_job_status, .stats = be_stats, .info = be_info, .destroy = be_destroy,
};

struct nr_backend *nr_rtl_backend_create(struct nr_rtl *r, const struct nr_rtl_backend_opts *o,
					 char *err, size_t errlen)
{
	struct rtl_be *p = calloc(1, sizeof(*p));
	struct nr_fpga_opts fo = { 0 };
	struct nr_backend *b;
	char path[64];
	int fd;

	if (p == NULL) {
		snprintf(err, errlen, "rtl: out of memory");
		return NULL;
	}
	if (o)
		p->o = *o;
	p->r = r;
	p->io = (struct nr_fpga_io){ .read32 = nr_rtl_io_read32, .write32 = nr_rtl_io_write32,
				     .ctx = r };
	fd = memfd_create("nr-rtl-regs", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, NR_FPGA_REGS_SIZE) != 0) {
		snprintf(err, errlen, "rtl: cannot make the driver's register file (memfd_create): %s",
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		free(p);
		return NULL;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	fo.io = &p->io;
	fo.cmd_timeout_ms = p->o.cmd_timeout_ms ? p->o.cmd_timeout_ms : 2000;
	p->fpga = nr_backend_fpga_open(path, &fo, err, errlen);
	close(fd);                     /* the driver holds its own descriptor */
	if (p->fpga == NULL) {
		free(p);
		return NULL;
	}
	b = nr_backend_new(&rtl_backend_ops, p);
	if (b == NULL) {
		snprintf(err, errlen, "rtl: out of memory");
		nr_backend_destroy(p->fpga);
		free(p);
	}
	return b;
}
