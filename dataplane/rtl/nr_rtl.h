/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The aggregator's RTL (nr_agg_top.v) as a C library: a Verilated model
 * stepped one clock at a time behind a mutex.
 *
 *   registers   nr_rtl_read32/nr_rtl_write32 are AXI4-Lite transactions;
 *               nr_rtl_io_read32/nr_rtl_io_write32 have the shape of
 *               struct nr_fpga_io's accessors (control/api/nr_control.h), so the
 *               fpga driver runs on the model:
 *                 struct nr_fpga_io io = { nr_rtl_io_read32, nr_rtl_io_write32, r };
 *   frames      nr_rtl_send streams one frame in and runs the model until it
 *               has dealt with it (results and forwards queued); nr_rtl_recv
 *               takes the queued output frames in order
 *   time        nr_rtl_tick_ms: the device's millisecond tick (progress
 *               timeouts)
 * Capacities are the model's build parameters; read them from the
 * capability registers (control/fpga/FPGA.md).
 */
#ifndef NR_RTL_H
#define NR_RTL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nr_rtl;

/* What an output frame is (the model's tx_tuser kind). */
enum nr_rtl_kind {
	NR_RTL_FORWARD = 0,    /* a received frame, unchanged */
	NR_RTL_RESULT = 1,     /* a result (a connection's own packet, payload = sum) */
	NR_RTL_RESEND = 2,     /* a duplicate answered with its stored result */
};

/* NULL on allocation failure; err says why. */
struct nr_rtl *nr_rtl_create(char *err, unsigned errlen);
void nr_rtl_destroy(struct nr_rtl *r);

uint32_t nr_rtl_read32(struct nr_rtl *r, uint32_t off);
void nr_rtl_write32(struct nr_rtl *r, uint32_t off, uint32_t val);
uint32_t nr_rtl_io_read32(void *r, uint32_t off);
void nr_rtl_io_write32(void *r, uint32_t off, uint32_t val);

/*
 * One frame in on port.  Returns 0, -EINVAL for an empty frame or one longer
 * than 16 KiB, -EIO when the model did not take it or did not settle within
 * its cycle bound (a hang: err of nr_rtl_error() says where).
 */
int nr_rtl_send(struct nr_rtl *r, uint8_t port, const uint8_t *frame, uint32_t len);
/*
 * The next output frame: copies up to cap bytes, sets *len (the whole
 * length), *port and *kind.  1 when a frame was taken, 0 when none is queued.
 */
int nr_rtl_recv(struct nr_rtl *r, uint8_t *buf, uint32_t cap, uint32_t *len, uint8_t *port,
		uint8_t *kind);
/* Output frames queued. */
unsigned nr_rtl_pending(struct nr_rtl *r);

void nr_rtl_tick_ms(struct nr_rtl *r, unsigned ms);
/* Clock cycles run so far. */
uint64_t nr_rtl_cycles(struct nr_rtl *r);
/* The last error, "" when none. */
const char *nr_rtl_error(struct nr_rtl *r);

#ifdef __cplusplus
}
#endif

#endif /* NR_RTL_H */
