/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hosts with several ranks (NR_LOCAL_SIZE) on loopback, every rank its own
 * address, the soft transport: nr_ring_allreduce on H hosts x P ranks runs
 * the local reduce-scatter, the columns' plain rings and the local
 * all-gather, and every element must be bit-identical to the documented
 * order (ranks.h, ranks_hier_reference).  Also: the variant picked (forced,
 * or auto from the intra/inter ratio, rank 0's figures for all), nr_allreduce
 * without a box, a mismatched NR_LOCAL_SIZE, and a rank killed mid-operation.
 * The box variants run on the namespace testbed (tests/e2e, scenario hier4x2).
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
	uint64_t fail_ms[RANKS_MAX];
	int started[RANKS_MAX];
};

struct hier_case {
	struct ranks_env env;
	int hosts, local;
	const char *hier;            /* NR_HIER */
	double intra, inter;         /* NR_INTRA_GBPS / NR_INTER_GBPS of rank 0 (others: 1, 1) */
	int odd_rank, odd_local;     /* odd_rank believes in NR_LOCAL_SIZE odd_local */
	int victim;                  /* -1, or the rank killed mid-operation */
	uint32_t timeout_ms;
	uint64_t seed;
	struct out *out;
};

static int child_fail(struct hier_case *t, int rank, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->out->msg[rank], sizeof(t->out->msg[rank]), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rank %d: %s\n", rank, t->out->msg[rank]);
	return code;
}

static int init(struct hier_case *t, int rank, struct nr_comm **c)
{
	int world = t->hosts * t->local;
	struct nr_config cfg;
	int rc;

	ranks_config(&t->env, rank, world, &cfg);
	cfg.timeout_ms = t->timeout_ms ? t->timeout_ms : 20000;
	cfg.local_size = rank == t->odd_rank ? t->odd_local : t->local;
	cfg.hier = t->hier;
	cfg.intra_gbps = rank == 0 ? t->intra : 1;
	cfg.inter_gbps = rank == 0 ? t->inter : 1;
	rc = nr_comm_init(&cfg, c);
	if (rc)
		return child_fail(t, rank, 2, "init: %s: %s", nr_strerror(rc), nr_comm_last_error(NULL));
	snprintf(t->out->algo[rank], sizeof(t->out->algo[rank]), "%s", nr_comm_algo(*c));
	return 0;
}

static int check_count(struct hier_case *t, struct nr_comm *c, int rank, size_t count,
		       int inplace)
{
	size_t bytes = count ? count * 4 : 4;
	float *send = malloc(bytes), *recv = malloc(bytes), *ref = malloc(bytes);
	uint64_t seed = t->seed + count * 7 + inplace;
	int rc;

	ranks_fill(seed, rank, send, count);
	ranks_hier_reference(seed, t->hosts, t->local, 1, ref, count);
	memset(recv, 0xA5, bytes);
	if (inplace)
		memcpy(recv, send, count * 4);
	rc = nr_ring_allreduce(c, inplace ? recv : send, recv, count, NR_FLOAT32, NR_SUM);
	if (rc)
		rc = child_fail(t, rank, 3, "count %zu: %s: %s", count, nr_strerror(rc),
				nr_comm_last_error(c));
	for (size_t i = 0; !rc && i < count; i++)
		if (memcmp(&recv[i], &ref[i], 4))
			rc = child_fail(t, rank, 4, "count %zu%s: element %zu is %.9g, the documented "
					"order gives %.9g", count, inplace ? " in place" : "", i,
					recv[i], ref[i]);
	free(send);
	free(recv);
	free(ref);
	return rc;
}

static int exact_child(int rank, int world, void *arg)
{
	static const size_t counts[] = { 0, 1, 2, 5, 1023, 65537, (1 << 20) + 3 };
	struct hier_case *t = arg;
	struct nr_comm *c;
	float x = 1, y;
	int rc = init(t, rank, &c);

	if (rc)
		return rc;
	if (nr_comm_world(c) != world || nr_comm_rank(c) != rank)
		rc = child_fail(t, rank, 5, "world %d rank %d", nr_comm_world(c), nr_comm_rank(c));
	for (size_t k = 0; !rc && k < sizeof(counts) / sizeof(counts[0]); k++)
		for (int inplace = 0; !rc && inplace < 2; inplace++)
			rc = check_count(t, c, rank, counts[k], inplace);
	/* no box here: nr_allreduce says so and leaves the communicator usable */
	if (!rc && nr_allreduce(c, &x, &y, 1, NR_FLOAT32, NR_SUM) != NR_ERR_CONFIG)
		rc = child_fail(t, rank, 6, "nr_allreduce without a box did not fail");
	if (!rc && !strstr(nr_comm_last_error(c), "no box configured"))
		rc = child_fail(t, rank, 6, "nr_allreduce without a box: %s", nr_comm_last_error(c));
	if (!rc)
		rc = check_count(t, c, rank, 4099, 0);
	nr_comm_destroy(c);
	return rc;
}

static struct out *run(struct hier_case *t, ranks_fn fn, unsigned salt, int *status,
		       uint64_t deadline_ms)
{
	pid_t pids[RANKS_MAX];

	t->seed = (uint64_t)time(NULL) * 1000003u + salt;
	ranks_env_init(&t->env, salt);
	t->out = mmap(NULL, sizeof(*t->out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	assert_true(t->out != MAP_FAILED);
	memset(t->out, 0, sizeof(*t->out));
	printf("%d hosts x %d ranks, %s, seed %llu\n", t->hosts, t->local,
	       t->hier ? t->hier : "auto", (unsigned long long)t->seed);
	ranks_fork(t->hosts * t->local, fn, t, pids);
	ranks_wait(t->hosts * t->local, pids, status, deadline_ms, NULL);
	return t->out;
}

static void exact(int hosts, int local, const char *hier, unsigned salt)
{
	struct hier_case t = { .hosts = hosts, .local = local, .hier = hier, .odd_rank = -1,
			       .victim = -1, .intra = 1, .inter = 1 };
	int status[RANKS_MAX];

	run(&t, exact_child, salt, status, 150000);
	for (int r = 0; r < hosts * local; r++) {
		if (status[r])
			fail_msg("rank %d: exit %d: %s", r, status[r], t.out->msg[r]);
		assert_string_equal(t.out->algo[r], hier);
	}
	munmap(t.out, sizeof(*t.out));
}

static void test_2x2(void **state) { exact(2, 2, "parallel", 1); }
static void test_3x2(void **state) { exact(3, 2, "hierarchical", 2); }
static void test_2x3(void **state) { exact(2, 3, "parallel", 3); }
static void test_1x4(void **state) { exact(1, 4, "parallel", 4); }
static void test_4x2(void **state) { exact(4, 2, "parallel", 5); }

static int algo_child(int rank, int world, void *arg)
{
	struct hier_case *t = arg;
	struct nr_comm *c;
	int rc = init(t, rank, &c);

	if (!rc)
		nr_comm_destroy(c);
	return rc;
}

/* auto: rank 0's figures decide for everyone (the others claim a ratio of 1). */
static void pick(double intra, double inter, const char *want)
{
	struct hier_case t = { .hosts = 2, .local = 2, .odd_rank = -1, .victim = -1,
			       .intra = intra, .inter = inter };
	int status[RANKS_MAX];

	run(&t, algo_child, 6, status, 60000);
	for (int r = 0; r < 4; r++) {
		if (status[r])
			fail_msg("rank %d: exit %d: %s", r, status[r], t.out->msg[r]);
		assert_string_equal(t.out->algo[r], want);
	}
	munmap(t.out, sizeof(*t.out));
}

/*
 * P = 2: hierarchical costs 1 + 2/r, parallel 1 + 1/r (units of S/B_inter):
 * within 10% from r = 9 on.
 */
static void test_auto(void **state)
{
	pick(100, 10, "hierarchical");    /* r = 10 */
	pick(80, 10, "parallel");         /* r = 8 */
	pick(2, 1, "parallel");
}

static void test_local_size_mismatch(void **state)
{
	struct hier_case t = { .hosts = 2, .local = 2, .odd_rank = 3, .odd_local = 4,
			       .victim = -1, .intra = 1, .inter = 1, .timeout_ms = 3000 };
	int status[RANKS_MAX];

	run(&t, algo_child, 7, status, 60000);
	assert_int_not_equal(status[3], 0);
	assert_non_null(strstr(t.out->msg[3], "NR_LOCAL_SIZE 4, rank 0 has 2"));
	for (int r = 0; r < 3; r++)
		if (status[r] == 0)
			fail_msg("rank %d went on with a rank of another layout", r);
	munmap(t.out, sizeof(*t.out));
}

static int kill_child(int rank, int world, void *arg)
{
	struct hier_case *t = arg;
	size_t count = 1u << 20;
	float *buf = calloc(count, 4);
	struct nr_comm *c;
	int rc = init(t, rank, &c);

	if (rc)
		return rc;
	for (int i = 0; i < 100000 && !rc; i++) {
		rc = nr_ring_allreduce(c, buf, buf, count, NR_FLOAT32, NR_SUM);
		t->out->started[rank] = 1;
	}
	t->out->fail_ms[rank] = ranks_now_ms();
	child_fail(t, rank, 0, "%s: %s", nr_strerror(rc), nr_comm_last_error(c));
	nr_comm_destroy(c);
	free(buf);
	return rc ? 0 : 8;
}

/* Rank 3 (host 1, local rank 1) killed: its host mate fails at once, the others in bounds. */
static void test_kill(void **state)
{
	struct hier_case t = { .hosts = 2, .local = 2, .odd_rank = -1, .victim = 3,
			       .intra = 1, .inter = 1, .timeout_ms = 2000, .hier = "parallel" };
	pid_t pids[RANKS_MAX];
	int status[RANKS_MAX];
	uint64_t killed;

	t.seed = 1;
	ranks_env_init(&t.env, 8);
	t.out = mmap(NULL, sizeof(*t.out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	assert_true(t.out != MAP_FAILED);
	memset(t.out, 0, sizeof(*t.out));
	ranks_fork(4, kill_child, &t, pids);
	for (uint64_t end = ranks_now_ms() + 60000; !t.out->started[3] && ranks_now_ms() < end; )
		usleep(10000);
	assert_true(t.out->started[3]);
	usleep(300000);
	kill(pids[3], SIGKILL);
	killed = ranks_now_ms();
	ranks_wait(4, pids, status, 60000, NULL);
	for (int r = 0; r < 3; r++) {
		printf("rank %d after %lu ms: %s\n", r, (unsigned long)(t.out->fail_ms[r] - killed),
		       t.out->msg[r]);
		assert_int_equal(status[r], 0);
		assert_true(t.out->fail_ms[r] - killed < 3u * t.timeout_ms + 5000);
	}
	assert_non_null(strstr(t.out->msg[2], "local rank 1 (its process exited)"));
	munmap(t.out, sizeof(*t.out));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_2x2),
		cmocka_unit_test(test_3x2),
		cmocka_unit_test(test_2x3),
		cmocka_unit_test(test_1x4),
		cmocka_unit_test(test_4x2),
		cmocka_unit_test(test_auto),
		cmocka_unit_test(test_local_size_mismatch),
		cmocka_unit_test(test_kill),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
