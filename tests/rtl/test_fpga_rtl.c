/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fpga driver (control/fpga/backend_fpga.c) on the aggregator's RTL, at the
 * register level: what JOB_LOAD leaves in the job and connection tables, read
 * back over AXI-Lite, equals the spec; JOB_UNLOAD clears it; the device's own
 * refusals (a dangling entry, a clash, no pool, disabled) come back as the
 * driver's errors; CTRL.RESET empties the tables.  tests/control/test_fpga.c
 * does the same against the C register model.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "control/fpga/fpga_regs.h"
#include "control/api/nr_control.h"
#include "nr_rtl.h"

struct fx {
	struct nr_rtl *r;
	struct nr_fpga_io io;
	struct nr_backend *b;
	char path[64];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct nr_fpga_opts o = { .io = &f->io, .cmd_timeout_ms = 2000 };
	char err[256];
	int fd;

	f->r = nr_rtl_create(err, sizeof(err));
	if (!f->r)
		return -1;
	f->io = (struct nr_fpga_io){ nr_rtl_io_read32, nr_rtl_io_write32, f->r };
	snprintf(f->path, sizeof(f->path), "/tmp/nr-rtl-regs-XXXXXX");
	fd = mkstemp(f->path);
	if (fd < 0 || ftruncate(fd, NR_FPGA_REGS_SIZE) < 0)
		return -1;
	close(fd);
	f->b = nr_backend_fpga_open(f->path, &o, err, sizeof(err));
	if (!f->b) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	f->b->ops->destroy(f->b);
	nr_rtl_destroy(f->r);
	unlink(f->path);
	free(f);
	return 0;
}

static uint32_t rd(struct fx *f, uint32_t off)
{
	return nr_rtl_read32(f->r, off);
}

static struct nr_job_spec *spec(unsigned n, unsigned net)
{
	struct nr_job_spec *s = calloc(1, sizeof(*s) + n * sizeof(s->conns[0]));

	s->n_conns = n;
	s->mtu = 1024;
	s->msg_size = 4096;
	s->pool_msgs = 6;
	s->timeout_ms = 700;
	s->mode = NR_SUM_STREAMING;
	s->result_key = 0xabc00000u | n;
	for (unsigned i = 0; i < n; i++) {
		s->conns[i].src_ip = htonl(0x0a000000u | net << 16 | (i + 1));
		s->conns[i].dst_ip = htonl(0x0a000000u | net << 16 | ((i + 1) % n + 1));
		s->conns[i].src_qpn = 0x100 + 2 * i;
		s->conns[i].dst_qpn = 0x101 + 2 * ((i + 1) % n);
		s->conns[i].ipsn = 1000 * i + 7;
		s->conns[i].src_mac[0] = 2;
		s->conns[i].src_mac[5] = (uint8_t)(i + 1);
		s->conns[i].dst_mac[0] = 2;
		s->conns[i].dst_mac[5] = (uint8_t)((i + 1) % n + 1);
	}
	return s;
}

/* The slot whose TAG is id, or -1. */
static int slot_of(struct fx *f, uint32_t id)
{
	uint32_t jobs = rd(f, NR_FPGA_CAP_MAX_JOBS);

	for (uint32_t j = 0; j < jobs; j++)
		if (rd(f, NR_FPGA_JOB(j, NR_FPGA_J_STATE)) != NR_FPGA_JS_FREE &&
		    rd(f, NR_FPGA_JOB(j, NR_FPGA_J_TAG)) == id)
			return (int)j;
	return -1;
}

static unsigned valid_entries(struct fx *f)
{
	uint32_t conns = rd(f, NR_FPGA_CAP_MAX_CONNS);
	unsigned n = 0;

	for (uint32_t e = 0; e < conns; e++)
		n += !!(rd(f, NR_FPGA_CONN(e, NR_FPGA_C_CTRL)) & NR_FPGA_C_VALID);
	return n;
}

static void assert_tables(struct fx *f, unsigned slot, const struct nr_job_spec *s)
{
	uint32_t conns = rd(f, NR_FPGA_CAP_MAX_CONNS);
	unsigned seen = 0;

	assert_int_equal(rd(f, NR_FPGA_JOB(slot, NR_FPGA_J_STATE)), NR_FPGA_JS_ACTIVE);
	assert_int_equal(rd(f, NR_FPGA_JOB(slot, NR_FPGA_J_N_CONNS)), s->n_conns);
	assert_int_equal(rd(f, NR_FPGA_JOB(slot, NR_FPGA_J_MTU)), s->mtu);
	assert_int_equal(rd(f, NR_FPGA_JOB(slot, NR_FPGA_J_MSG_SIZE)), s->msg_size);
	assert_int_equal(rd(f, NR_FPGA_JOB(slot, NR_FPGA_J_POOL_MSGS)), s->pool_msgs);
	assert_int_equal(rd(f, NR_FPGA_JOB(slot, NR_FPGA_J_TIMEOUT_MS)), s->timeout_ms);
	assert_int_equal(rd(f, NR_FPGA_JOB(slot, NR_FPGA_J_MODE)), s->mode);
	assert_int_equal(rd(f, NR_FPGA_JOB(slot, NR_FPGA_J_RESULT_KEY)), s->result_key);
	assert_int_equal(rd(f, NR_FPGA_JOB(slot, NR_FPGA_J_DTYPE)), s->dtype);
	for (uint32_t e = 0; e < conns; e++) {
		uint32_t c = rd(f, NR_FPGA_CONN(e, NR_FPGA_C_CTRL)), r;
		const struct nr_conn_spec *cs;

		if (!(c & NR_FPGA_C_VALID) || (c & NR_FPGA_C_JOB_MASK) != slot)
			continue;
		r = rd(f, NR_FPGA_CONN(e, NR_FPGA_C_RANK));
		assert_true(r < s->n_conns);
		cs = &s->conns[r];
		assert_int_equal(rd(f, NR_FPGA_CONN(e, NR_FPGA_C_SRC_IP)), ntohl(cs->src_ip));
		assert_int_equal(rd(f, NR_FPGA_CONN(e, NR_FPGA_C_DST_IP)), ntohl(cs->dst_ip));
		assert_int_equal(rd(f, NR_FPGA_CONN(e, NR_FPGA_C_SRC_QPN)), cs->src_qpn);
		assert_int_equal(rd(f, NR_FPGA_CONN(e, NR_FPGA_C_DST_QPN)), cs->dst_qpn);
		assert_int_equal(rd(f, NR_FPGA_CONN(e, NR_FPGA_C_IPSN)), cs->ipsn);
		assert_int_equal(rd(f, NR_FPGA_CONN(e, NR_FPGA_C_SRC_MAC_LO)), cs->src_mac[5]);
		assert_int_equal(rd(f, NR_FPGA_CONN(e, NR_FPGA_C_DST_MAC_HI)), (uint32_t)cs->dst_mac[0] << 8);
		seen++;
	}
	assert_int_equal(seen, s->n_conns);
}

static void test_tables(void **state)
{
	struct fx *f = *state;
	struct nr_job_spec *s1 = spec(5, 1), *s2 = spec(3, 2);
	uint32_t credits = 0;
	char err[256];
	int slot1, slot2;

	assert_int_equal(rd(f, NR_FPGA_MAGIC_REG), NR_FPGA_MAGIC);
	assert_int_equal(rd(f, NR_FPGA_STATUS), NR_FPGA_ST_READY | NR_FPGA_ST_ENABLED);
	assert_int_equal(f->b->ops->job_create(f->b, 7, s1, &credits, err, sizeof(err)), 0);
	assert_int_equal(credits, 3);
	assert_int_equal(f->b->ops->job_create(f->b, 9, s2, &credits, err, sizeof(err)), 0);
	slot1 = slot_of(f, 7);
	slot2 = slot_of(f, 9);
	assert_true(slot1 >= 0 && slot2 >= 0 && slot1 != slot2);
	assert_tables(f, (unsigned)slot1, s1);
	assert_tables(f, (unsigned)slot2, s2);
	assert_int_equal(valid_entries(f), 8);
	/* ranks x pool packets x MTU: 6 messages of 4 packets of 1 KiB */
	assert_int_equal(rd(f, NR_FPGA_POOL_USED), (5 + 3) * 6 * 4 * 1024);
	assert_int_equal(rd(f, NR_FPGA_JOBS_LOADED), 2);

	assert_int_equal(f->b->ops->job_destroy(f->b, 7), 0);
	assert_int_equal(rd(f, NR_FPGA_JOB(slot1, NR_FPGA_J_STATE)), NR_FPGA_JS_FREE);
	assert_int_equal(rd(f, NR_FPGA_JOB(slot1, NR_FPGA_J_N_CONNS)), 0);
	assert_int_equal(valid_entries(f), 3);
	assert_tables(f, (unsigned)slot2, s2);
	assert_int_equal(rd(f, NR_FPGA_POOL_USED), 3 * 6 * 4 * 1024);
	/* the freed region is taken again (first fit) */
	assert_int_equal(f->b->ops->job_create(f->b, 11, s1, &credits, err, sizeof(err)), 0);
	assert_int_equal(rd(f, NR_FPGA_JOBS_LOADED), 2);
	free(s1);
	free(s2);
}

static void test_refusals(void **state)
{
	struct fx *f = *state;
	struct nr_job_spec *s = spec(2, 1), *big;
	uint32_t conns = rd(f, NR_FPGA_CAP_MAX_CONNS), credits;
	char err[256] = "", want[64];

	/* a stray valid entry at the top of the table naming job slot 200 */
	nr_rtl_write32(f->r, NR_FPGA_CONN(conns - 1, NR_FPGA_C_CTRL), NR_FPGA_C_VALID | 200);
	assert_int_not_equal(f->b->ops->job_create(f->b, 1, s, &credits, err, sizeof(err)), 0);
	print_message("  %s\n", err);
	snprintf(want, sizeof(want), "(connection entry %u)", conns - 1);
	assert_non_null(strstr(err, "connection entry invalid"));
	assert_non_null(strstr(err, want));
	assert_int_equal(valid_entries(f), 1);      /* the driver took its own back */
	/* naming a free slot: dangling, refused the same way */
	nr_rtl_write32(f->r, NR_FPGA_CONN(conns - 1, NR_FPGA_C_CTRL), NR_FPGA_C_VALID | 3);
	assert_int_not_equal(f->b->ops->job_create(f->b, 1, s, &credits, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "connection entry invalid"));
	nr_rtl_write32(f->r, NR_FPGA_CONN(conns - 1, NR_FPGA_C_CTRL), 0);
	assert_int_equal(f->b->ops->job_create(f->b, 1, s, &credits, err, sizeof(err)), 0);

	/* the same QPs again: the device refuses the clash */
	assert_int_equal(f->b->ops->job_create(f->b, 2, s, &credits, err, sizeof(err)), -EEXIST);
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "connection already used by a loaded job"));

	/* more pool than the device has: the driver's check */
	big = spec(8, 3);
	big->mtu = 4096;
	big->msg_size = 1u << 20;
	big->pool_msgs = 16;
	assert_int_equal(f->b->ops->job_create(f->b, 3, big, &credits, err, sizeof(err)), -ENOSPC);
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "bytes of pool (ranks x pool packets x mtu)"));
	free(big);

	/* disabled: the device says so */
	nr_rtl_write32(f->r, NR_FPGA_CTRL, 0);
	assert_int_equal(rd(f, NR_FPGA_STATUS) & NR_FPGA_ST_ENABLED, 0);
	big = spec(2, 4);
	assert_int_not_equal(f->b->ops->job_create(f->b, 4, big, &credits, err, sizeof(err)), 0);
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "device not enabled"));
	free(big);

	/* RESET: tables, pool and counters clear, READY, not enabled */
	nr_rtl_write32(f->r, NR_FPGA_CTRL, NR_FPGA_CTRL_RESET);
	assert_int_equal(rd(f, NR_FPGA_CTRL) & NR_FPGA_CTRL_RESET, 0);
	assert_int_equal(rd(f, NR_FPGA_STATUS), NR_FPGA_ST_READY);
	assert_int_equal(valid_entries(f), 0);
	assert_int_equal(rd(f, NR_FPGA_POOL_USED), 0);
	assert_int_equal(rd(f, NR_FPGA_JOBS_LOADED), 0);
	assert_int_equal(slot_of(f, 1), -1);
	free(s);
}

/*
 * 16-bit element types: the RTL has bf16 and fp16 (CAP_FLAGS, register map
 * 1.1); J_DTYPE reads back; MSG_SIZE is checked in the job's elements; a
 * one-rank streaming 16-bit job takes two MTU buffers a packet; a DTYPE the
 * device does not know is refused at JOB_LOAD (job register 0x38).
 */
static void test_dtype(void **state)
{
	struct fx *f = *state;
	struct nr_job_spec *s = spec(2, 1), *one = spec(1, 2);
	uint32_t credits;
	char err[256] = "";
	int slot;

	assert_int_equal(rd(f, NR_FPGA_VERSION_REG), NR_FPGA_VERSION);
	assert_int_equal(rd(f, NR_FPGA_CAP_FLAGS), NR_FPGA_CAPF_ORDERED | NR_FPGA_CAPF_STREAMING |
			 NR_FPGA_CAPF_BF16 | NR_FPGA_CAPF_FP16);
	s->dtype = NR_ELEM_BF16;
	s->mode = NR_SUM_ORDERED;
	s->msg_size = 4094;                         /* 2047 elements */
	assert_int_equal(f->b->ops->job_create(f->b, 1, s, &credits, err, sizeof(err)), 0);
	slot = slot_of(f, 1);
	assert_true(slot >= 0);
	assert_tables(f, (unsigned)slot, s);
	assert_int_equal(rd(f, NR_FPGA_POOL_USED), 2 * 6 * 4 * 1024);
	one->dtype = NR_ELEM_FP16;                  /* streaming, one rank */
	assert_int_equal(f->b->ops->job_create(f->b, 2, one, &credits, err, sizeof(err)), 0);
	assert_tables(f, (unsigned)slot_of(f, 2), one);
	assert_int_equal(rd(f, NR_FPGA_POOL_USED), (2 + 2) * 6 * 4 * 1024);
	assert_int_equal(f->b->ops->job_destroy(f->b, 2), 0);
	assert_int_equal(rd(f, NR_FPGA_POOL_USED), 2 * 6 * 4 * 1024);

	one->dtype = 3;                             /* no such type: the device refuses it */
	assert_int_equal(f->b->ops->job_create(f->b, 2, one, &credits, err, sizeof(err)), -EIO);
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "job field out of range (job register 0x38)"));
	one->dtype = NR_ELEM_FP32;
	one->msg_size = 4094;                       /* not whole floats */
	assert_int_equal(f->b->ops->job_create(f->b, 2, one, &credits, err, sizeof(err)), -EIO);
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "job field out of range (job register 0x0c)"));
	one->dtype = NR_ELEM_BF16;
	one->msg_size = 4095;                       /* not whole bf16 elements */
	assert_int_equal(f->b->ops->job_create(f->b, 2, one, &credits, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "job field out of range (job register 0x0c)"));
	assert_int_equal(valid_entries(f), 2);
	assert_int_equal(rd(f, NR_FPGA_JOBS_LOADED), 1);
	free(s);
	free(one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tables, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dtype, setup, teardown),
	};

	return cmocka_run_group_tests_name("fpga_driver_rtl", tests, NULL, NULL);
}
