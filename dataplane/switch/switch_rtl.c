/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * netreduce-switch --backend rtl (switch_rtl.h): the RTL model (nr_rtl.h) as
 * the device of the box's worker (struct dp_dev_ops) and as the control
 * API's backend "rtl", whose stats and info add the box's ports.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "dataplane/switch/switch_rtl.h"

#ifdef NR_HAVE_RTL
#include "dataplane/rtl/nr_rtl_backend.h"

struct switch_rtl {
	struct nr_rtl *r;
};

static int rtl_frame_in(void *ctx, uint16_t port, const uint8_t *frame, uint32_t len)
{
	if (port > UINT8_MAX)
		return -EINVAL;      /* the model's ports are 8 bits (tuser) */
	return nr_rtl_send(ctx, (uint8_t)port, frame, len);
}

static int rtl_frame_out(void *ctx, uint8_t *buf, uint32_t cap, uint32_t *len, uint16_t *port,
			 enum dp_dev_kind *kind)
{
	uint8_t p = 0, k = 0;

	if (!nr_rtl_recv(ctx, buf, cap, len, &p, &k))
		return 0;
	*port = p;
	*kind = k == NR_RTL_RESULT ? DP_DEV_RESULT : k == NR_RTL_RESEND ? DP_DEV_RESEND : DP_DEV_FORWARD;
	return 1;
}

static void rtl_tick_ms(void *ctx, unsigned ms)
{
	nr_rtl_tick_ms(ctx, ms);
}

static const char *rtl_error(void *ctx)
{
	return nr_rtl_error(ctx);
}

static const struct dp_dev_ops rtl_dev_ops = {
	.frame_in = rtl_frame_in, .frame_out = rtl_frame_out, .tick_ms = rtl_tick_ms,
	.error = rtl_error,
};

/* The box's stats without its engines' counters: they stay idle here. */
static json_t *box_stats(void *ctx)
{
	json_t *o = dp_stats_json(ctx);

	json_object_del(o, "engine");
	return o;
}

/* The box's mode, lcores and ports (capacities are the device's). */
static json_t *box_info(void *ctx)
{
	json_t *all = dp_info_json(ctx);
	json_t *o = json_pack("{s:O,s:O,s:O}", "mode", json_object_get(all, "mode"),
			      "lcores", json_object_get(all, "lcores"),
			      "ports", json_object_get(all, "ports"));

	json_decref(all);
	return o;
}

struct switch_rtl *switch_rtl_attach(struct dp_box *b, struct nr_backend **be, char *err,
				     size_t errlen)
{
	struct nr_rtl_backend_opts o = { .ports_stats = box_stats, .ports_info = box_info,
					 .ctx = b };
	struct switch_rtl *s = calloc(1, sizeof(*s));

	*be = NULL;
	if (s == NULL) {
		snprintf(err, errlen, "--backend rtl: out of memory");
		return NULL;
	}
	s->r = nr_rtl_create(err, (unsigned)errlen);
	if (s->r == NULL)
		goto fail;
	*be = nr_rtl_backend_create(s->r, &o, err, errlen);
	if (*be == NULL)
		goto fail;
	if (dp_box_set_dev(b, &rtl_dev_ops, s->r, err, errlen) != 0) {
		nr_backend_destroy(*be);
		*be = NULL;
		goto fail;
	}
	return s;
fail:
	nr_rtl_destroy(s->r);
	free(s);
	return NULL;
}

void switch_rtl_detach(struct switch_rtl *s)
{
	if (s == NULL)
		return;
	nr_rtl_destroy(s->r);
	free(s);
}

#else /* a build without verilator: no model to run */

struct switch_rtl *switch_rtl_attach(struct dp_box *b, struct nr_backend **be, char *err,
				     size_t errlen)
{
	(void)b;
	*be = NULL;
	snprintf(err, errlen, "--backend rtl: this netreduce-switch was built without the "
		 "aggregator's RTL model (install verilator, then meson setup --reconfigure "
		 "and rebuild)");
	return NULL;
}

void switch_rtl_detach(struct switch_rtl *s)
{
	(void)s;
}

#endif
