/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test backends for the control suites: "sw" (an in-process agg_engine
 * registered as a backend, no EAL; a job's channels are engine jobs, as the
 * box adds them; it claims 2 workers), "fpga" (the driver on a temp register
 * file, the register-level device model serviced synchronously) and "rtl"
 * (the backend "rtl": the same driver on the aggregator's RTL,
 * dataplane/rtl/nr_rtl_backend.h, when the tree was built with verilator).
 */
#ifndef NR_TEST_CTL_TESTLIB_H
#define NR_TEST_CTL_TESTLIB_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "control/api/nr_control.h"
#include "dataplane/engine/agg_engine.h"
#include "tests/control/fpga_model.h"

struct tb {
	char kind[8];
	/* sw */
	struct agg_engine *eng;
	uint8_t frame[2048];
	struct nr_pkt pkt;       /* frame's parse record, kept by the engine while held */
	/* fpga */
	char dir[64];
	char path[96];
	void *map;
	struct fpga_model model;
	bool have_model;
	/* rtl */
	struct nr_rtl *rtl;
};

/* sw: channels of the last job created, how many source ports (src and dst) its conns
 * named; jobs created of each dtype. */
extern uint32_t tb_sw_last_channels, tb_sw_last_sports, tb_sw_last_pkey, tb_sw_dtype_jobs[NR_ELEM_TYPES];
/* sw: NULL healthy, else the reason its health op gives for being unhealthy. */
extern const char *tb_sw_unhealthy;
/* A backend of the given kind ("sw", "fpga" or "rtl"); NULL on failure (printed). */
struct nr_backend *tb_backend(struct tb *t, const char *kind);
/* After nr_ctl_destroy (which destroyed the backend): free the rest. */
void tb_cleanup(struct tb *t);
/*
 * Make the backend report job id (spec: its JSON spec, msg_size <= mtu) as
 * failed for lack of progress, as its dataplane would: sw feeds rank 0's
 * first packet to the engine and polls past the timeout; fpga has the model
 * fail the slot; rtl sends the packet to the RTL and ticks past the timeout.
 */
void tb_fail_job(struct tb *t, uint32_t id, const json_t *spec);

/*
 * A ring of n connections: rank i at 10.<net>.0.(i+1), QPNs base+2i (send)
 * and base+2i+1 (receive), ipsn 1000*i, MACs 02:00:00:<net>:00:(i+1).
 */
json_t *tb_spec(unsigned n, unsigned net, uint32_t qpn_base);
/* k channels of tb_spec(n, net, ...), channel c with QPNs from qpn_base + 0x100 c and source ports. */
json_t *tb_spec_channels(unsigned n, unsigned k, unsigned net, uint32_t qpn_base);
/* Send a request (object, stolen) through nr_ctl_handle; returns the reply. */
json_t *tb_call(struct nr_ctl *c, json_t *req, bool admin);
/* Same on raw text. */
json_t *tb_call_text(struct nr_ctl *c, const char *line, bool admin);
/* Make a temp dir; path written into buf. */
int tb_tmpdir(char *buf, size_t len);

/*
 * Certificates for the TLS tests, made by the openssl CLI in a temp dir: a
 * CA, the box's certificate for IP 127.0.0.1 signed by it (key mode 0600),
 * an expired one of the same CA and key, and another CA that signed nothing
 * of the box's.  0, or -1 (printed).
 */
struct tb_tls {
	char dir[64];
	char ca[96], other_ca[96], cert[96], key[96], expired[96];
};
int tb_tls_make(struct tb_tls *t);
/* Removes the directory and everything in it. */
void tb_tls_remove(struct tb_tls *t);

#endif
