/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shared-memory local layer (host/comm/nr_shm.c, host/collective/nr_local.c) between P
 * forked processes: reduce-scatter and all-gather with P shares (parallel)
 * and one share (hierarchical), counts from 0 to many rounds, every element
 * bit-identical to the sum in local-rank order on every rank; the segment's
 * name gone once all are in; a rank that fails, exits or never comes named
 * by the others within bounds; mismatched sizes refused; pacing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "host/netreduce.h"
#include "host/collective/nr_local.h"
#include "host/comm/nr_shm.h"
#include "ranks.h"

struct out {
	char msg[RANKS_MAX][NR_SHM_ERRLEN];
	int rc[RANKS_MAX];
	uint64_t ms[RANKS_MAX];
};

struct shm_case {
	char name[64];
	int area_elems;         /* per share and round with nshares = P: small, many rounds */
	int fail_rank;          /* -1, or the rank that fails / exits / never comes */
	int fail_how;           /* 0 nr_shm_fail, 1 _exit mid-operation, 2 never attaches */
	uint32_t timeout_ms;
	double pace_gbps;
	size_t pace_count;
	struct out *out;
};

static const size_t counts[] = { 0, 1, 2, 3, 5, 7, 8, 31, 1000, 4099, 100003 };

static struct out *shared_out(void)
{
	struct out *o = mmap(NULL, sizeof(*o), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			     -1, 0);

	assert_true(o != MAP_FAILED);
	memset(o, 0, sizeof(*o));
	return o;
}

static int report(struct shm_case *t, int rank, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->out->msg[rank], sizeof(t->out->msg[rank]), fmt, ap);
	va_end(ap);
	return code;
}

static struct nr_shm_config case_config(const struct shm_case *t, int rank, int world)
{
	return (struct nr_shm_config){ .name = t->name, .size = world, .rank = rank,
				       .area_bytes = (size_t)4 * t->area_elems * world,
				       .timeout_ms = t->timeout_ms ? t->timeout_ms : 20000,
				       .pace_bytes_per_s = t->pace_gbps * 1e9 };
}

/* Local-rank-order sum of element i (seed s). */
static float local_ref(uint64_t s, int world, size_t i)
{
	float acc = ranks_value(s, 0, i);

	for (int r = 1; r < world; r++)
		acc = acc + ranks_value(s, r, i);
	return acc;
}

/* One all-reduce inside the host: reduce-scatter then all-gather with nshares. */
static int local_allreduce(struct nr_shm *s, const float *src, float *dst, size_t count,
			   int nshares, float *share)
{
	int rc = nr_local_reduce_scatter(s, src, count, nshares, share);

	return rc ? rc : nr_local_all_gather(s, share, count, nshares, dst);
}

static int exact_child(int rank, int world, void *arg)
{
	struct shm_case *t = arg;
	struct nr_shm_config cfg = case_config(t, rank, world);
	size_t big = counts[sizeof(counts) / sizeof(counts[0]) - 1];
	float *src = malloc(big * 4), *dst = malloc(big * 4), *share = malloc(big * 4);
	char err[NR_SHM_ERRLEN];
	struct nr_shm *s;
	int rc;

	rc = nr_shm_open(&cfg, &s, err, sizeof(err));
	if (rc)
		return report(t, rank, 2, "open: %s", err);
	for (int nshares = world; nshares >= 1; nshares = nshares == 1 ? 0 : 1) {
		for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
			size_t n = counts[k];
			uint64_t seed = 77 + n * 3 + nshares;

			ranks_fill(seed, rank, src, n);
			memset(dst, 0xA5, big * 4);
			rc = local_allreduce(s, src, dst, n, nshares, rank < nshares ? share : NULL);
			if (rc)
				return report(t, rank, 3, "count %zu, %d shares: %s", n, nshares,
					      nr_shm_error(s));
			for (size_t i = 0; i < n; i++) {
				float want = local_ref(seed, world, i);

				if (memcmp(&dst[i], &want, 4))
					return report(t, rank, 4, "count %zu, %d shares: element %zu "
						      "is %.9g, local-rank order gives %.9g", n,
						      nshares, i, dst[i], want);
			}
			if (n < big && memcmp(&dst[n], (uint8_t[4]){ 0xA5, 0xA5, 0xA5, 0xA5 }, 4))
				return report(t, rank, 5, "count %zu: wrote past the end", n);
		}
	}
	/* in place: src == dst */
	ranks_fill(9, rank, dst, 4099);
	rc = local_allreduce(s, dst, dst, 4099, world, rank < world ? share : NULL);
	for (size_t i = 0; !rc && i < 4099; i++) {
		float want = local_ref(9, world, i);

		if (memcmp(&dst[i], &want, 4))
			return report(t, rank, 6, "in place: element %zu wrong", i);
	}
	nr_shm_close(s);
	free(src);
	free(dst);
	free(share);
	return rc ? report(t, rank, 7, "in place: %d", rc) : 0;
}

static void run_case(struct shm_case *t, int world, ranks_fn fn, uint64_t deadline_ms)
{
	pid_t pids[RANKS_MAX];
	int st[RANKS_MAX];
	uint64_t t0 = ranks_now_ms(), exit_ms[RANKS_MAX];

	snprintf(t->name, sizeof(t->name), "/nr-test-%d-%d", (int)getpid(), world);
	t->out = shared_out();
	ranks_fork(world, fn, t, pids);
	ranks_wait(world, pids, st, deadline_ms, exit_ms);
	for (int r = 0; r < world; r++) {
		t->out->rc[r] = st[r];
		t->out->ms[r] = exit_ms[r] - t0;
	}
}

static void check_exact(int world, int area_elems)
{
	struct shm_case t = { .area_elems = area_elems, .fail_rank = -1 };
	char path[96];

	run_case(&t, world, exact_child, 120000);
	for (int r = 0; r < world; r++) {
		if (t.out->rc[r])
			fail_msg("P=%d rank %d: exit %d: %s", world, r, t.out->rc[r], t.out->msg[r]);
	}
	snprintf(path, sizeof(path), "/dev/shm%s", t.name);
	assert_int_equal(access(path, F_OK), -1);   /* the name went once all were in */
	munmap(t.out, sizeof(*t.out));
}

static void test_exact_p2(void **state) { check_exact(2, 5); }
static void test_exact_p3(void **state) { check_exact(3, 7); }
static void test_exact_p4(void **state) { check_exact(4, 64); }
static void test_exact_p8_one_round(void **state) { check_exact(8, 1 << 14); }

/* A rank that fails (0), exits mid-operation (1) or never attaches (2). */
static int failing_child(int rank, int world, void *arg)
{
	struct shm_case *t = arg;
	struct nr_shm_config cfg = case_config(t, rank, world);
	float src[64], dst[64], share[64];
	char err[NR_SHM_ERRLEN];
	struct nr_shm *s;
	int rc;

	if (rank == t->fail_rank && t->fail_how == 2)
		return 0;
	rc = nr_shm_open(&cfg, &s, err, sizeof(err));
	if (rc)
		return report(t, rank, 2, "%s", err);
	ranks_fill(1, rank, src, 64);
	rc = local_allreduce(s, src, dst, 64, world, share);
	if (rc)
		return report(t, rank, 3, "first: %s", nr_shm_error(s));
	if (rank == t->fail_rank && t->fail_how == 0) {
		nr_shm_fail(s, NR_ERR_BOX, "rank %d: the box went away", rank);
		return 9;
	}
	if (rank == t->fail_rank)
		_exit(9);
	rc = local_allreduce(s, src, dst, 64, world, share);
	return report(t, rank, rc == 0 ? 0 : 3, "%s", rc ? nr_shm_error(s) : "");
}

static void check_failure(int how, const char *expect, uint32_t timeout_ms, uint64_t bound_ms)
{
	struct shm_case t = { .area_elems = 4, .fail_rank = 2, .fail_how = how,
			      .timeout_ms = timeout_ms };

	run_case(&t, 4, failing_child, 60000);
	for (int r = 0; r < 4; r++) {
		if (r == t.fail_rank)
			continue;
		if (how == 2 && r != 0 && t.out->rc[r] == 2)
			continue;   /* rank 0 unlinked at its timeout: a late opener times out too */
		if (t.out->rc[r] == 0 || !strstr(t.out->msg[r], expect))
			fail_msg("rank %d: exit %d, message \"%s\", expected one naming \"%s\"", r,
				 t.out->rc[r], t.out->msg[r], expect);
		if (t.out->ms[r] > bound_ms)
			fail_msg("rank %d took %lu ms to fail (bound %lu)", r,
				 (unsigned long)t.out->ms[r], (unsigned long)bound_ms);
	}
	munmap(t.out, sizeof(*t.out));
}

static void test_rank_fails(void **state)
{
	check_failure(0, "local rank 2 failed: rank 2: the box went away", 20000, 10000);
}

static void test_rank_exits(void **state)
{
	/* found dead at once, long before the 20 s timeout */
	check_failure(1, "2 (its process exited)", 20000, 10000);
}

static void test_rank_never_comes(void **state)
{
	check_failure(2, "2 (never attached) did not arrive within 1500 ms", 1500, 15000);
}

/* Rank 1 is busy (its own network phase) three times the timeout: the others wait. */
static int busy_child(int rank, int world, void *arg)
{
	struct shm_case *t = arg;
	struct nr_shm_config cfg = case_config(t, rank, world);
	char err[NR_SHM_ERRLEN];
	struct nr_shm *s;
	int rc = nr_shm_open(&cfg, &s, err, sizeof(err));

	if (rc)
		return report(t, rank, 2, "%s", err);
	if (rank == 1) {
		nr_shm_busy(s, true);
		usleep(3 * t->timeout_ms * 1000);
		nr_shm_busy(s, false);
	}
	rc = nr_shm_barrier(s, "after the busy phase");
	if (!rc && rank == 2)
		usleep(3 * t->timeout_ms * 1000);   /* not busy: the others give up on it */
	if (!rc)
		rc = nr_shm_barrier(s, "waiting for an idle rank");
	report(t, rank, rc ? 3 : 0, "%s", rc ? nr_shm_error(s) : "");
	nr_shm_close(s);
	return rank == 2 || rc ? 0 : 4;
}

static void test_busy_rank(void **state)
{
	struct shm_case t = { .area_elems = 4, .timeout_ms = 400 };

	run_case(&t, 3, busy_child, 30000);
	for (int r = 0; r < 3; r++)
		if (t.out->rc[r])
			fail_msg("rank %d: exit %d: %s", r, t.out->rc[r], t.out->msg[r]);
	/* the first barrier waited 1.2 s for the busy rank; the second failed on the idle one */
	assert_non_null(strstr(t.out->msg[0], "2 did not arrive within 400 ms"));
	assert_non_null(strstr(t.out->msg[1], "did not arrive within 400 ms"));
	munmap(t.out, sizeof(*t.out));
}

static int mismatch_child(int rank, int world, void *arg)
{
	struct shm_case *t = arg;
	struct nr_shm_config cfg = case_config(t, rank, world);
	char err[NR_SHM_ERRLEN];
	struct nr_shm *s;
	int rc;

	if (rank == 1)
		cfg.size = 3, cfg.area_bytes = 4 * 3 * 4;   /* believes in 3 local ranks */
	rc = nr_shm_open(&cfg, &s, err, sizeof(err));
	if (!rc)
		nr_shm_close(s);
	return report(t, rank, rc ? 3 : 0, "%s", rc ? err : "");
}

static void test_size_mismatch(void **state)
{
	struct shm_case t = { .area_elems = 4, .timeout_ms = 2000 };

	run_case(&t, 2, mismatch_child, 30000);
	assert_int_not_equal(t.out->rc[1], 0);
	assert_non_null(strstr(t.out->msg[1], "every local rank must use the same NR_LOCAL_SIZE"));
	assert_int_not_equal(t.out->rc[0], 0);   /* rank 0 then waits in vain */
	munmap(t.out, sizeof(*t.out));
}

static int pace_child(int rank, int world, void *arg)
{
	struct shm_case *t = arg;
	struct nr_shm_config cfg = case_config(t, rank, world);
	float *src = calloc(t->pace_count, 4), *dst = calloc(t->pace_count, 4);
	float *share = calloc(t->pace_count, 4);
	char err[NR_SHM_ERRLEN];
	struct nr_shm *s;
	int rc = nr_shm_open(&cfg, &s, err, sizeof(err));

	if (rc)
		return report(t, rank, 2, "%s", err);
	rc = local_allreduce(s, src, dst, t->pace_count, world, share);
	nr_shm_close(s);
	return rc ? 3 : 0;
}

/* 8 MB per rank at 0.02 GB/s: 2 ranks each read 4 MB (RS) + 4 MB (AG): >= 0.4 s. */
static void test_pace(void **state)
{
	struct shm_case t = { .area_elems = 1 << 16, .pace_gbps = 0.02, .pace_count = 2 << 20 };

	run_case(&t, 2, pace_child, 60000);
	assert_int_equal(t.out->rc[0], 0);
	assert_int_equal(t.out->rc[1], 0);
	if (t.out->ms[0] < 380 || t.out->ms[1] < 380)
		fail_msg("paced at 0.02 GB/s, 8 MB took only %lu / %lu ms",
			 (unsigned long)t.out->ms[0], (unsigned long)t.out->ms[1]);
	munmap(t.out, sizeof(*t.out));
}

static void test_shares(void **state)
{
	size_t off, len, next = 0;

	for (size_t count = 0; count < 40; count++)
		for (int n = 1; n <= 9; n++, next = 0)
			for (int q = 0; q < n; q++) {
				nr_local_share(count, n, q, &off, &len);
				assert_int_equal(off, next);
				assert_true(len == count / n || len == count / n + 1);
				next = off + len;
				if (q == n - 1)
					assert_int_equal(next, count);
			}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shares),
		cmocka_unit_test(test_exact_p2),
		cmocka_unit_test(test_exact_p3),
		cmocka_unit_test(test_exact_p4),
		cmocka_unit_test(test_exact_p8_one_round),
		cmocka_unit_test(test_rank_fails),
		cmocka_unit_test(test_rank_exits),
		cmocka_unit_test(test_rank_never_comes),
		cmocka_unit_test(test_size_mismatch),
		cmocka_unit_test(test_busy_rank),
		cmocka_unit_test(test_pace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
