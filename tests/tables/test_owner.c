/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The QPN owner map (dataplane/dpdk/dp_qp_owner.h), no EAL:
 *   - churn: thousands of jobs' keys set and cleared in random order against a
 *     shadow model; the map must answer every live key with its worker, miss
 *     every other, keep its count exact, and end empty: deletions reclaim
 *     their words (a map that left tombstones fills up here and answers
 *     -ENOSPC, or misses);
 *   - full: cap entries fit, one more is -ENOSPC, a freed one takes it;
 *   - readers beside the writer: a thread looks up fixed keys while the
 *     writer sets and clears keys around them (the moves of a deletion
 *     included); it must never miss one or see another worker.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "dataplane/dpdk/dp_qp_owner.h"

static uint32_t xs(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static struct dp_owner_map *map_new(uint32_t keys, uint32_t secret)
{
	void *mem = malloc(dp_owner_bytes(keys));

	assert_non_null(mem);
	return dp_owner_init(mem, keys, secret);
}

/* A job's keys in the shadow: (daddr, qpn) -> worker. */
struct key { uint32_t daddr, qpn; int worker; };

#define CHURN_JOBS   4000     /* jobs created and destroyed */
#define CHURN_LIVE   6        /* at most this many at once */
#define JOB_KEYS_MAX (2 * 256 * 4)

static void test_churn(void **state)
{
	/* sized as a 2-worker box's (dp_box.c): 2 x 64 jobs x 256 connections x 2 keys */
	const uint32_t cap_keys = 2 * 64 * 256 * 2;
	struct dp_owner_map *m = map_new(cap_keys, 0x5eed);
	struct key *live[CHURN_LIVE] = { 0 };
	unsigned n_live[CHURN_LIVE] = { 0 };
	uint32_t s = 0xC0FFEEu, next_qpn = 1, total = 0, live_keys = 0;

	(void)state;
	for (unsigned job = 0; job < CHURN_JOBS; job++) {
		unsigned slot = xs(&s) % CHURN_LIVE, n;

		/* destroy what holds the slot, in random order of its keys */
		for (unsigned i = n_live[slot]; i > 0; i--) {
			unsigned k = xs(&s) % i;
			struct key t = live[slot][k];

			dp_owner_clear(m, t.daddr, t.qpn);
			assert_int_equal(dp_owner_get(m, t.daddr, t.qpn), -1);
			live[slot][k] = live[slot][i - 1];
			live_keys--;
		}
		free(live[slot]);
		/* a new job: 1..256 connections x 1..4 channels, two keys each, on 4 hosts */
		n = 2 * (1 + xs(&s) % 256) * (1 + xs(&s) % 4);
		live[slot] = malloc(n * sizeof(struct key));
		assert_non_null(live[slot]);
		n_live[slot] = n;
		for (unsigned i = 0; i < n; i++) {
			struct key *t = &live[slot][i];

			t->daddr = 0x0a4e0001u + xs(&s) % 4;
			t->qpn = next_qpn++ & 0xFFFFFF;
			t->worker = (int)(job % 2);
			assert_int_equal(dp_owner_set(m, t->daddr, t->qpn, (unsigned)t->worker), 0);
		}
		total += n;
		live_keys += n;
		assert_int_equal(m->used, live_keys);
		/* every live key answers its worker; a few just deleted miss */
		for (unsigned j = 0; j < CHURN_LIVE; j++)
			for (unsigned i = 0; i < n_live[j]; i += 7)
				assert_int_equal(dp_owner_get(m, live[j][i].daddr, live[j][i].qpn),
						 live[j][i].worker);
	}
	for (unsigned j = 0; j < CHURN_LIVE; j++) {
		for (unsigned i = 0; i < n_live[j]; i++)
			dp_owner_clear(m, live[j][i].daddr, live[j][i].qpn);
		free(live[j]);
	}
	printf("# churn: %u jobs, %u keys set and cleared (the map holds %u at most)\n",
	       CHURN_JOBS, total, m->cap);
	assert_true(total > 4 * m->cap);    /* the words were reused many times over */
	assert_int_equal(m->used, 0);
	for (uint32_t i = 0; i <= m->mask; i++)
		assert_int_equal(m->e[i], 0);   /* no tombstone left behind */
	free(m);
}

static void test_full(void **state)
{
	struct dp_owner_map *m = map_new(100, 7);
	uint32_t cap = m->cap;

	(void)state;
	assert_true(cap >= 100);
	for (uint32_t q = 1; q <= cap; q++)
		assert_int_equal(dp_owner_set(m, 0x0a000001u, q, q % 3), 0);
	assert_int_equal(dp_owner_room(m), 0);
	assert_int_equal(dp_owner_set(m, 0x0a000001u, cap + 1, 0), -ENOSPC);
	assert_int_equal(dp_owner_set(m, 0x0a000001u, 5, 1), 0);       /* an update fits */
	assert_int_equal(dp_owner_get(m, 0x0a000001u, 5), 1);
	dp_owner_clear(m, 0x0a000001u, 9);
	assert_int_equal(dp_owner_set(m, 0x0a000001u, cap + 1, 2), 0);
	assert_int_equal(dp_owner_get(m, 0x0a000001u, cap + 1), 2);
	assert_int_equal(dp_owner_get(m, 0x0a000001u, 9), -1);
	for (uint32_t q = 1; q <= cap + 1; q++) {
		int want = q == 5 ? 1 : q == cap + 1 ? 2 : (int)(q % 3);

		if (q != 9)
			assert_int_equal(dp_owner_get(m, 0x0a000001u, q), want);
	}
	free(m);
}

/* ---- a reader beside the writer ------------------------------------------- */

#define STABLE 512

struct race {
	struct dp_owner_map *m;
	volatile int stop;
	unsigned long lookups, wrong;
};

static void *reader(void *arg)
{
	struct race *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
		for (uint32_t q = 1; q <= STABLE; q++) {
			if (dp_owner_get(r->m, 0x0a000002u, q) != (int)(q & 1))
				__atomic_fetch_add(&r->wrong, 1, __ATOMIC_RELAXED);
			r->lookups++;
		}
	return NULL;
}

static void test_readers(void **state)
{
	/* small and two-thirds full of churning keys: long runs, many moves */
	struct race r = { .m = map_new(2048, 0xabcdef) };
	uint32_t s = 99, churn = 0;
	pthread_t t;
	struct timespec t0, t1;

	(void)state;
	for (uint32_t q = 1; q <= STABLE; q++)
		assert_int_equal(dp_owner_set(r.m, 0x0a000002u, q, q & 1), 0);
	assert_int_equal(pthread_create(&t, NULL, reader, &r), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		/* fill around the fixed keys, then clear in random order */
		uint32_t base = 0x100000 + (churn % 64) * 4096, n = 1000 + xs(&s) % 500;

		for (uint32_t i = 0; i < n; i++)
			assert_int_equal(dp_owner_set(r.m, 0x0a000002u, base + i, 0), 0);
		for (uint32_t i = 0; i < n; i++)
			dp_owner_clear(r.m, 0x0a000002u, base + (i * 7919u) % n);
		churn++;
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 1000);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	printf("# readers: %u rounds of the writer, %lu lookups beside it, %lu wrong\n",
	       churn, r.lookups, r.wrong);
	assert_true(r.lookups > 0);
	assert_int_equal(r.wrong, 0);
	assert_int_equal(r.m->used, STABLE);
	free(r.m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_churn),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_readers),
	};
	return cmocka_run_group_tests_name("owner map", tests, NULL, NULL);
}
