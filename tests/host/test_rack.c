/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Jobs across racks (NR_RACKS, docs/racks.md) on loopback with no box at all:
 * every rack is a rack without a box (incremental deployment), so both
 * nr_allreduce and nr_ring_allreduce sum each rack on its ring, the agents'
 * rings across racks, and hand the total back; every element must be
 * bit-identical to the documented order (ranks.h, ranks_rack_reference).
 * Layouts: equal racks, unequal racks (2 agents per rack), three racks, a
 * one-host rack, one rack, and 3 hosts per rack with one agent
 * (NR_RACK_AGENTS=1).  The racks with boxes run on the namespace
 * testbed (tests/e2e, scenario racks2x2).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "ranks.h"

struct out {
	char msg[RANKS_MAX][512];
	char algo[RANKS_MAX][16];
};

struct rack_case {
	struct ranks_env env;
	const char *racks;
	int agents;   /* NR_RACK_AGENTS (0: the smallest rack) */
	int sizes[RANKS_MAX], nracks, world;
	uint64_t seed;
	struct out *out;
};

static int child_fail(struct rack_case *t, int rank, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->out->msg[rank], sizeof(t->out->msg[rank]), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rank %d: %s\n", rank, t->out->msg[rank]);
	return code;
}

static int check_count(struct rack_case *t, struct nr_comm *c, int rank, size_t count, int ring)
{
	static const int no_box[RANKS_MAX];
	size_t bytes = count ? count * 4 : 4;
	float *send = malloc(bytes), *recv = malloc(bytes), *ref = malloc(bytes);
	uint64_t seed = t->seed + count * 3 + ring;
	int rc;

	ranks_fill(seed, rank, send, count);
	ranks_rack_reference(seed, t->sizes, t->nracks, no_box, t->agents, ref, count);
	memset(recv, 0xA5, bytes);
	rc = ring ? nr_ring_allreduce(c, send, recv, count, NR_FLOAT32, NR_SUM)
		  : nr_allreduce(c, send, recv, count, NR_FLOAT32, NR_SUM);
	if (rc)
		rc = child_fail(t, rank, 3, "count %zu: %s: %s", count, nr_strerror(rc),
				nr_comm_last_error(c));
	for (size_t i = 0; !rc && i < count; i++)
		if (memcmp(&recv[i], &ref[i], 4))
			rc = child_fail(t, rank, 4, "count %zu (%s): element %zu is %.9g, the documented "
					"order gives %.9g", count, ring ? "ring" : "nr_allreduce", i,
					recv[i], ref[i]);
	free(send);
	free(recv);
	free(ref);
	return rc;
}

static int rack_child(int rank, int world, void *arg)
{
	static const size_t counts[] = { 0, 1, 2, 5, 7, 1023, 65537, (1 << 20) + 3 };
	struct rack_case *t = arg;
	struct nr_config cfg;
	struct nr_comm *c;
	int rc;

	ranks_config(&t->env, rank, world, &cfg);
	cfg.timeout_ms = 20000;
	cfg.racks = t->racks;
	cfg.rack_agents = t->agents;
	rc = nr_comm_init(&cfg, &c);
	if (rc)
		return child_fail(t, rank, 2, "init: %s: %s", nr_strerror(rc), nr_comm_last_error(NULL));
	snprintf(t->out->algo[rank], sizeof(t->out->algo[rank]), "%s", nr_comm_algo(c));
	for (size_t k = 0; !rc && k < sizeof(counts) / sizeof(counts[0]); k++)
		for (int ring = 0; !rc && ring < 2; ring++)
			rc = check_count(t, c, rank, counts[k], ring);
	nr_comm_destroy(c);
	return rc;
}

static void racks(const char *layout, int agents, unsigned salt)
{
	struct rack_case t = { .racks = layout, .agents = agents };
	pid_t pids[RANKS_MAX];
	int status[RANKS_MAX];

	for (const char *p = layout; *p; p++)
		if (*p != ',')
			t.sizes[t.nracks++] = *p - '0';
	for (int k = 0; k < t.nracks; k++)
		t.world += t.sizes[k];
	t.seed = (uint64_t)time(NULL) * 1000003u + salt;
	ranks_env_init(&t.env, salt);
	t.out = mmap(NULL, sizeof(*t.out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	assert_true(t.out != MAP_FAILED);
	memset(t.out, 0, sizeof(*t.out));
	printf("racks %s, %d agents: seed %llu\n", layout, agents, (unsigned long long)t.seed);
	ranks_fork(t.world, rack_child, &t, pids);
	ranks_wait(t.world, pids, status, 150000, NULL);
	for (int r = 0; r < t.world; r++) {
		if (status[r])
			fail_msg("rank %d: exit %d: %s", r, status[r], t.out->msg[r]);
		assert_string_equal(t.out->algo[r], "racks");
	}
	munmap(t.out, sizeof(*t.out));
}

static void test_2_2(void **state) { racks("2,2", 0, 11); }
static void test_3_2(void **state) { racks("3,2", 0, 12); }
static void test_2_2_2(void **state) { racks("2,2,2", 0, 13); }
static void test_1_3(void **state) { racks("1,3", 0, 14); }
static void test_one_rack(void **state) { racks("3", 0, 15); }
static void test_3_3_one_agent(void **state) { racks("3,3", 1, 16); }   /* Rina's one agent */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_2_2),
		cmocka_unit_test(test_3_2),
		cmocka_unit_test(test_2_2_2),
		cmocka_unit_test(test_1_3),
		cmocka_unit_test(test_one_rack),
		cmocka_unit_test(test_3_3_one_agent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
