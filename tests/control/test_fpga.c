/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The FPGA driver against the register-level device model: the tables the
 * model decodes equal the spec; destroy clears them; the device's own
 * checks (dangling or out-of-range entries, pool, clashes) come back as
 * clear errors; a silent device is a bounded timeout; a foreign or short
 * register file is refused; the model as a thread on a shared file mapping.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/control/ctl_testlib.h"

struct fx {
	char dir[64], path[96];
	void *map;
	struct fpga_model m;
	struct nr_backend *b;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	int fd;

	if (!f || tb_tmpdir(f->dir, sizeof(f->dir)))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/bar0", f->dir);
	fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, NR_FPGA_REGS_SIZE) < 0)
		return -1;
	f->map = mmap(NULL, NR_FPGA_REGS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (f->map == MAP_FAILED)
		return -1;
	fpga_model_init(&f->m, f->map, NULL);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	if (f->b)
		nr_backend_destroy(f->b);
	fpga_model_fini(&f->m);
	munmap(f->map, NR_FPGA_REGS_SIZE);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

static struct nr_backend *open_sync(struct fx *f)
{
	struct nr_fpga_opts o = { .io = fpga_model_io(&f->m) };
	char err[256] = "";

	f->b = nr_backend_fpga_open(f->path, &o, err, sizeof(err));
	if (!f->b)
		print_error("open: %s\n", err);
	assert_non_null(f->b);
	return f->b;
}

static struct nr_job_spec *spec_of(unsigned n, unsigned net, uint32_t qpn_base)
{
	json_t *j = tb_spec(n, net, qpn_base);
	char err[256];
	struct nr_job_spec *s;

	json_object_set_new(j, "mode", json_string("streaming"));
	json_object_set_new(j, "msg_size", json_integer(16384));
	json_object_set_new(j, "pool_msgs", json_integer(6));
	s = nr_ctl_spec_from_json(j, err, sizeof(err));
	json_decref(j);
	assert_non_null(s);
	s->result_key = 0x5eed0000u + n;
	return s;
}

static void assert_spec_equal(const struct nr_job_spec *a, const struct nr_job_spec *b)
{
	assert_int_equal(a->n_conns, b->n_conns);
	assert_int_equal(a->mtu, b->mtu);
	assert_int_equal(a->msg_size, b->msg_size);
	assert_int_equal(a->pool_msgs, b->pool_msgs);
	assert_int_equal(a->timeout_ms, b->timeout_ms);
	assert_int_equal(a->mode, b->mode);
	assert_int_equal(a->result_key, b->result_key);
	assert_int_equal(a->dtype, b->dtype);
	for (uint32_t i = 0; i < a->n_conns; i++) {
		assert_int_equal(a->conns[i].src_ip, b->conns[i].src_ip);
		assert_int_equal(a->conns[i].dst_ip, b->conns[i].dst_ip);
		assert_int_equal(a->conns[i].src_qpn, b->conns[i].src_qpn);
		assert_int_equal(a->conns[i].dst_qpn, b->conns[i].dst_qpn);
		assert_int_equal(a->conns[i].ipsn, b->conns[i].ipsn);
		assert_memory_equal(a->conns[i].src_mac, b->conns[i].src_mac, 6);
		assert_memory_equal(a->conns[i].dst_mac, b->conns[i].dst_mac, 6);
	}
}

static void test_tables_match_spec(void **state)
{
	struct fx *f = *state;
	struct nr_backend *b = open_sync(f);
	struct nr_job_spec *s1 = spec_of(5, 1, 0x100), *s2 = spec_of(3, 2, 0x100), *d;
	uint32_t credits = 0;
	char err[256];
	int slot1, slot2;

	assert_int_equal(b->ops->job_create(b, 7, s1, &credits, err, sizeof(err)), 0);
	assert_int_equal(credits, 3);
	assert_int_equal(b->ops->job_create(b, 9, s2, &credits, err, sizeof(err)), 0);
	slot1 = fpga_model_slot_of(&f->m, 7);
	slot2 = fpga_model_slot_of(&f->m, 9);
	assert_true(slot1 >= 0 && slot2 >= 0 && slot1 != slot2);
	d = fpga_model_decode(&f->m, (unsigned)slot1);
	assert_non_null(d);
	assert_spec_equal(d, s1);
	free(d);
	d = fpga_model_decode(&f->m, (unsigned)slot2);
	assert_spec_equal(d, s2);
	free(d);
	assert_int_equal(fpga_model_valid_entries(&f->m), 8);
	/* ranks x pool packets x MTU: 6 messages of 16 packets of 1 KiB */
	assert_int_equal(fpga_model_rd(&f->m, NR_FPGA_POOL_USED), (5 + 3) * 6 * 16 * 1024);
	assert_int_equal(fpga_model_rd(&f->m, NR_FPGA_JOBS_LOADED), 2);
	assert_int_equal(f->m.cmd_errors, 0);
	/* Raw layout spot checks, as FPGA.md writes them. */
	assert_int_equal(fpga_model_rd(&f->m, NR_FPGA_JOB(slot1, NR_FPGA_J_MODE)), NR_SUM_STREAMING);

	/* Destroy one: its slot and entries are clear, the other job untouched. */
	assert_int_equal(b->ops->job_destroy(b, 7), 0);
	assert_int_equal(fpga_model_rd(&f->m, NR_FPGA_JOB(slot1, NR_FPGA_J_STATE)), NR_FPGA_JS_FREE);
	assert_null(fpga_model_decode(&f->m, (unsigned)slot1));
	assert_int_equal(fpga_model_valid_entries(&f->m), 3);
	d = fpga_model_decode(&f->m, (unsigned)slot2);
	assert_spec_equal(d, s2);
	free(d);
	assert_int_equal(fpga_model_rd(&f->m, NR_FPGA_POOL_USED), 3 * 6 * 16 * 1024);
	assert_int_equal(b->ops->job_destroy(b, 7), -ENOENT);
	assert_int_equal(b->ops->job_destroy(b, 9), 0);
	assert_int_equal(fpga_model_valid_entries(&f->m), 0);
	assert_int_equal(fpga_model_rd(&f->m, NR_FPGA_POOL_USED), 0);
	assert_int_equal(fpga_model_rd(&f->m, NR_FPGA_JOBS_LOADED), 0);
	free(s1);
	free(s2);
}

static void test_counters_64bit(void **state)
{
	struct fx *f = *state;
	struct nr_backend *b = open_sync(f);
	struct nr_job_spec *s = spec_of(4, 1, 0x100);
	struct nr_job_stats st;
	uint64_t n = 5000000000ull;     /* crosses 2^32 */
	uint32_t credits;
	char err[256];
	json_t *stats;

	assert_int_equal(b->ops->job_create(b, 1, s, &credits, err, sizeof(err)), 0);
	fpga_model_traffic(&f->m, (unsigned)fpga_model_slot_of(&f->m, 1), n);
	assert_int_equal(b->ops->job_status(b, 1, &st), 0);
	assert_int_equal(st.state, NR_JOB_ACTIVE);
	assert_true(st.completed == n);
	assert_true(st.ctr[NR_ECTR_AGGREGATED] == 4 * n);
	assert_true(st.ctr[NR_ECTR_EMITTED] == 4 * n);
	assert_int_equal(st.next_emit, n & 0xffffff);
	stats = b->ops->stats(b);
	assert_true((uint64_t)json_integer_value(json_object_get(json_object_get(
		json_object_get(stats, "device"), "counters"), "aggregated")) == 4 * n);
	json_decref(stats);
	free(s);
}

static void test_device_rejects_bad_entry(void **state)
{
	struct fx *f = *state;
	struct nr_backend *b = open_sync(f);
	struct nr_job_spec *s = spec_of(2, 1, 0x100);
	uint32_t credits;
	char err[256] = "";

	/* A stray valid entry at the top of the table naming job slot 200. */
	fpga_model_wr(&f->m, NR_FPGA_CONN(NR_FPGA_CONN_SLOTS - 1, NR_FPGA_C_CTRL), NR_FPGA_C_VALID | 200);
	assert_int_not_equal(b->ops->job_create(b, 1, s, &credits, err, sizeof(err)), 0);
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "connection entry invalid"));
	assert_non_null(strstr(err, "(connection entry 511)"));
	assert_int_equal(f->m.last_err, NR_FPGA_ERR_BAD_CONN);
	/* The driver took its own entries back: only the stray one is left. */
	assert_int_equal(fpga_model_valid_entries(&f->m), 1);
	/* A stray entry naming a free (not loaded) slot is refused the same way. */
	fpga_model_wr(&f->m, NR_FPGA_CONN(NR_FPGA_CONN_SLOTS - 1, NR_FPGA_C_CTRL), NR_FPGA_C_VALID | 5);
	assert_int_not_equal(b->ops->job_create(b, 1, s, &credits, err, sizeof(err)), 0);
	assert_int_equal(f->m.last_err, NR_FPGA_ERR_BAD_CONN);
	fpga_model_wr(&f->m, NR_FPGA_CONN(NR_FPGA_CONN_SLOTS - 1, NR_FPGA_C_CTRL), 0);
	assert_int_equal(b->ops->job_create(b, 1, s, &credits, err, sizeof(err)), 0);
	free(s);
}

/* The register map has sum only: a job of reduce max or bor is refused, naming
 * the op and why. */
static void test_refuses_reduce_max(void **state)
{
	struct fx *f = *state;
	struct nr_backend *b = open_sync(f);
	struct nr_job_spec *s = spec_of(2, 1, 0x100);
	uint32_t credits;
	char err[256] = "";

	s->reduce = NR_REDUCE_MAX;
	assert_int_equal(b->ops->job_create(b, 1, s, &credits, err, sizeof(err)), -EINVAL);
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "reduce max: the aggregator's register map has sum only"));
	assert_int_equal(fpga_model_valid_entries(&f->m), 0);
	s->reduce = NR_REDUCE_BOR;
	err[0] = 0;
	assert_int_equal(b->ops->job_create(b, 1, s, &credits, err, sizeof(err)), -EINVAL);
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "reduce bor: the aggregator's register map has sum only"));
	assert_int_equal(fpga_model_valid_entries(&f->m), 0);
	s->reduce = NR_REDUCE_SUM;
	assert_int_equal(b->ops->job_create(b, 1, s, &credits, err, sizeof(err)), 0);
	free(s);
}

/* No short slots, no class order and no status monitor in the aggregator: a job that
 * asks for short slots, classes or selective-repeat requesters is refused, naming why. */
static void test_refuses_short_slots(void **state)
{
	struct fx *f = *state;
	struct nr_backend *b = open_sync(f);
	struct nr_job_spec *s = spec_of(2, 1, 0x100);
	uint32_t credits;
	char err[256] = "";

	s->short_ppm = 10000;
	s->short_dscp = 10;
	assert_int_equal(b->ops->job_create(b, 1, s, &credits, err, sizeof(err)), -EINVAL);
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "short_ppm 10000: the aggregator (FPGA.md, the RTL) has no short slots"));
	assert_int_equal(fpga_model_valid_entries(&f->m), 0);
	s->short_ppm = 0;
	s->prio_classes = 3;
	assert_int_equal(b->ops->job_create(b, 1, s, &credits, err, sizeof(err)), -EINVAL);
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "prio_classes 3: the aggregator (FPGA.md, the RTL) emits"));
	assert_int_equal(fpga_model_valid_entries(&f->m), 0);
	s->prio_classes = 0;
	s->selective = 1;
	assert_int_equal(b->ops->job_create(b, 1, s, &credits, err, sizeof(err)), -EINVAL);
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "fpga: selective: the aggregator (FPGA.md, the RTL) has no "
				    "status monitor to send or answer selective NAKs"));
	assert_int_equal(fpga_model_valid_entries(&f->m), 0);
	s->selective = 0;
	assert_int_equal(b->ops->job_create(b, 1, s, &credits, err, sizeof(err)), 0);
	free(s);
}

/*
 * 16-bit jobs need the device's CAP_FLAGS bit (FPGA.md): a device without it
 * (a 1.0 register map sums FP32 only) is refused at creation, naming why.
 */
static void test_16bit_needs_capability(void **state)
{
	struct fx *f = *state;
	struct fpga_model_caps caps;
	struct nr_backend *b;
	struct nr_job_spec *s = spec_of(2, 1, 0x100);
	uint32_t credits;
	char err[256] = "";

	fpga_model_default_caps(&caps);
	caps.flags = NR_FPGA_CAPF_ORDERED | NR_FPGA_CAPF_STREAMING;
	fpga_model_fini(&f->m);
	fpga_model_init(&f->m, f->map, &caps);
	b = open_sync(f);
	for (uint8_t t = NR_ELEM_BF16; t <= NR_ELEM_FP16; t++) {
		char want[128];

		s->dtype = t;
		assert_int_equal(b->ops->job_create(b, 1, s, &credits, err, sizeof(err)), -EINVAL);
		print_message("  %s\n", err);
		snprintf(want, sizeof(want), "fpga: dtype %s: this device does not sum %s elements "
			 "(CAP_FLAGS 0x3 lacks bit %u, FPGA.md)", nr_elem_name(t), nr_elem_name(t),
			 t == NR_ELEM_BF16 ? 2u : 3u);
		assert_non_null(strstr(err, want));
		assert_int_equal(fpga_model_valid_entries(&f->m), 0);
		assert_int_equal(f->m.cmds, 0);          /* refused before the device saw it */
	}
	s->dtype = NR_ELEM_FP32;
	assert_int_equal(b->ops->job_create(b, 1, s, &credits, err, sizeof(err)), 0);
	assert_int_equal(fpga_model_rd(&f->m, NR_FPGA_JOB(fpga_model_slot_of(&f->m, 1), NR_FPGA_J_DTYPE)),
			 NR_ELEM_FP32);
	free(s);
}

/*
 * A device with bf16 and fp16 loads them: J_DTYPE written, msg_size a whole
 * number of 2-byte elements, a one-rank streaming 16-bit job's pool doubled
 * (its FP32 accumulator); the device's own check refuses a type it lacks.
 */
static void test_16bit_loads(void **state)
{
	struct fx *f = *state;
	struct nr_backend *b = open_sync(f);
	struct nr_job_spec *s = spec_of(2, 1, 0x100), *one = spec_of(1, 2, 0x100), *d;
	uint32_t credits, used;
	char err[256] = "";
	json_t *info;

	info = b->ops->info(b);
	assert_true(json_is_true(json_object_get(json_object_get(info, "capacity"), "bf16")));
	assert_true(json_is_true(json_object_get(json_object_get(info, "capacity"), "fp16")));
	json_decref(info);

	s->dtype = NR_ELEM_BF16;
	s->mode = NR_SUM_ORDERED;
	s->msg_size = 16382;                        /* 8191 elements: not whole floats */
	assert_int_equal(b->ops->job_create(b, 1, s, &credits, err, sizeof(err)), 0);
	d = fpga_model_decode(&f->m, (unsigned)fpga_model_slot_of(&f->m, 1));
	assert_spec_equal(d, s);
	free(d);
	/* ranks x pool packets x MTU, as for FP32: 2 x 6 x 16 x 1 KiB */
	assert_int_equal(fpga_model_rd(&f->m, NR_FPGA_POOL_USED), 2 * 6 * 16 * 1024);

	one->dtype = NR_ELEM_FP16;                  /* streaming, one rank: two buffers a packet */
	assert_int_equal(b->ops->job_create(b, 2, one, &credits, err, sizeof(err)), 0);
	d = fpga_model_decode(&f->m, (unsigned)fpga_model_slot_of(&f->m, 2));
	assert_spec_equal(d, one);
	free(d);
	assert_int_equal(fpga_model_rd(&f->m, NR_FPGA_POOL_USED), (2 + 2) * 6 * 16 * 1024);
	assert_int_equal(f->m.cmd_errors, 0);
	assert_int_equal(b->ops->job_destroy(b, 2), 0);
	assert_int_equal(fpga_model_rd(&f->m, NR_FPGA_POOL_USED), 2 * 6 * 16 * 1024);

	/* the device checks J_DTYPE against its own CAP_FLAGS, and MSG_SIZE by it */
	f->m.caps.flags &= ~NR_FPGA_CAPF_FP16;
	assert_int_equal(b->ops->job_create(b, 2, one, &credits, err, sizeof(err)), -EIO);
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "job field out of range (job register 0x38)"));
	assert_int_equal(f->m.last_err, NR_FPGA_ERR_BAD_FIELD);
	assert_int_equal(f->m.last_info, NR_FPGA_J_DTYPE);
	one->dtype = NR_ELEM_FP32;
	one->msg_size = 16382;                      /* FP32: not whole elements */
	assert_int_equal(b->ops->job_create(b, 2, one, &credits, err, sizeof(err)), -EIO);
	assert_int_equal(f->m.last_info, NR_FPGA_J_MSG_SIZE);
	assert_int_equal(fpga_model_valid_entries(&f->m), 2);
	used = fpga_model_rd(&f->m, NR_FPGA_POOL_USED);
	assert_int_equal(used, 2 * 6 * 16 * 1024);
	free(s);
	free(one);
}

static void test_device_refuses_clash_and_pool(void **state)
{
	struct fx *f = *state;
	struct nr_backend *b = open_sync(f);
	struct nr_job_spec *s = spec_of(2, 1, 0x100), *big;
	uint32_t credits;
	char err[256] = "";

	assert_int_equal(b->ops->job_create(b, 1, s, &credits, err, sizeof(err)), 0);
	/* nr_ctl refuses overlaps first; the device is the second line. */
	assert_int_equal(b->ops->job_create(b, 2, s, &credits, err, sizeof(err)), -EEXIST);
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "connection already used by a loaded job"));
	assert_int_equal(fpga_model_valid_entries(&f->m), 2);

	/* every rank's packets are kept: 2 ranks x 6 messages x 16 packets x 1 KiB */
	assert_int_equal(fpga_model_rd(&f->m, NR_FPGA_POOL_USED), 2 * 6 * 16 * 1024);

	big = spec_of(2, 3, 0x100);
	big->msg_size = 1u << 24;
	big->pool_msgs = 8;                     /* 256 MiB > 64 MiB of pool */
	assert_int_equal(b->ops->job_create(b, 3, big, &credits, err, sizeof(err)), -ENOSPC);
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "bytes of pool"));
	free(big);

	/* 16 MiB of messages (pool_msgs x msg_size) but 8 ranks keep 128 MiB:
	 * refused by the driver, as the device would */
	big = spec_of(8, 4, 0x300);
	big->mtu = 4096;
	big->msg_size = 1u << 20;
	big->pool_msgs = 16;
	assert_int_equal(b->ops->job_create(b, 4, big, &credits, err, sizeof(err)), -ENOSPC);
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "job needs 134217728 bytes of pool (ranks x pool packets x mtu)"));
	free(s);
	free(big);
}

static void test_device_timeout(void **state)
{
	struct fx *f = *state;
	struct nr_backend *b = open_sync(f);
	struct nr_job_spec *s = spec_of(2, 1, 0x100);
	struct timespec t0, t1;
	uint32_t credits;
	char err[256] = "";
	double ms;

	f->m.stall = true;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(b->ops->job_create(b, 1, s, &credits, err, sizeof(err)), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	print_message("  %s (after %.0f ms)\n", err, ms);
	assert_non_null(strstr(err, "fpga: device did not complete command 0x01 within 100 ms"));
	assert_true(ms >= 100 && ms < 2000);
	assert_int_equal(fpga_model_valid_entries(&f->m), 0);
	f->m.stall = false;
	assert_int_equal(b->ops->job_create(b, 1, s, &credits, err, sizeof(err)), 0);
	free(s);
}

static void expect_open_error(const char *path, const struct nr_fpga_opts *o, const char *want)
{
	char err[256] = "";
	struct nr_backend *b = nr_backend_fpga_open(path, o, err, sizeof(err));

	assert_null(b);
	print_message("  %s\n", err);
	if (!strstr(err, want)) {
		print_error("\"%s\" lacks \"%s\"\n", err, want);
		fail();
	}
}

static void test_open_refusals(void **state)
{
	struct fx *f = *state;
	struct nr_fpga_opts o = { .io = fpga_model_io(&f->m) };
	char small[128];
	int fd;

	expect_open_error("/nonexistent/resource0", NULL, "cannot open /nonexistent/resource0");
	expect_open_error("/dev/null", NULL, "/dev/null is not a register file");
	snprintf(small, sizeof(small), "%s/small", f->dir);
	fd = open(small, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 100), 0);
	close(fd);
	expect_open_error(small, NULL, "is 100 bytes, the register map needs 131072");
	unlink(small);
	fpga_model_wr(&f->m, NR_FPGA_MAGIC_REG, 0);
	expect_open_error(f->path, &o, "magic 0x00000000, expected 0x4146524e");
	fpga_model_wr(&f->m, NR_FPGA_MAGIC_REG, NR_FPGA_MAGIC);
	fpga_model_wr(&f->m, NR_FPGA_VERSION_REG, 2u << 16);
	expect_open_error(f->path, &o, "register map version 2.0, this driver speaks 1.x");
	fpga_model_wr(&f->m, NR_FPGA_VERSION_REG, NR_FPGA_VERSION);
	/* A device that never leaves reset (no model behind the plain mapping). */
	expect_open_error(f->path, NULL, "did not come out of reset within 100 ms");
}

/* The model as a thread on its own mapping; the driver on the plain mapping. */
static void test_thread_model_shared_file(void **state)
{
	struct fx *f = *state;
	struct nr_fpga_opts o = { .cmd_timeout_ms = 5000 };
	struct nr_job_spec *s = spec_of(4, 1, 0x100), *d;
	struct nr_backend *b, *b2;
	struct nr_job_stats st;
	uint32_t credits;
	char err[256] = "";
	json_t *info;

	assert_int_equal(fpga_model_start(&f->m), 0);
	b = nr_backend_fpga_open(f->path, &o, err, sizeof(err));
	if (!b)
		print_error("%s\n", err);
	assert_non_null(b);
	assert_int_equal(b->ops->job_create(b, 42, s, &credits, err, sizeof(err)), 0);
	d = fpga_model_decode(&f->m, (unsigned)fpga_model_slot_of(&f->m, 42));
	assert_non_null(d);
	assert_spec_equal(d, s);
	free(d);
	fpga_model_traffic(&f->m, (unsigned)fpga_model_slot_of(&f->m, 42), 12);
	assert_int_equal(b->ops->job_status(b, 42, &st), 0);
	assert_true(st.completed == 12);
	info = b->ops->info(b);
	assert_true(json_is_true(json_object_get(json_object_get(info, "status"), "enabled")));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(info, "capacity"), "jobs")), 16);
	json_decref(info);

	/* A second driver opening the device resets it: the old job is gone. */
	b2 = nr_backend_fpga_open(f->path, &o, err, sizeof(err));
	assert_non_null(b2);
	assert_int_equal(fpga_model_valid_entries(&f->m), 0);
	assert_int_equal(b->ops->job_status(b, 42, &st), -ENOENT);
	assert_int_equal(b2->ops->job_create(b2, 1, s, &credits, err, sizeof(err)), 0);
	assert_int_equal(b2->ops->job_destroy(b2, 1), 0);
	nr_backend_destroy(b2);
	nr_backend_destroy(b);
	fpga_model_stop(&f->m);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tables_match_spec, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counters_64bit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_rejects_bad_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_reduce_max, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_short_slots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_16bit_needs_capability, setup, teardown),
		cmocka_unit_test_setup_teardown(test_16bit_loads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_refuses_clash_and_pool, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_model_shared_file, setup, teardown),
	};

	return cmocka_run_group_tests_name("fpga_driver_model", tests, NULL, NULL);
}
