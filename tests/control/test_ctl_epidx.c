/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The index of the QPs the control API's jobs hold (control/api/ctl_epidx.c)
 * against a brute-force model: jobs of random specs added and deleted in a
 * random order (QPs drawn from a small space, so they collide and runs
 * wrap the table's end), after each step every QP of the space found in the
 * slot the model says, or nowhere.  Then the cost a lookup at the most QPs
 * the control API holds (64 jobs of 256 ranks x 16 channels, both ends).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "control/api/ctl_epidx.h"

#define JOBS 24
#define IPS  6
#define QPNS 40

static uint32_t rng = 0x2545F491u;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

static struct nr_job_spec *spec_of(uint32_t conns, bool taken[IPS][QPNS])
{
	struct nr_job_spec *s = calloc(1, nr_job_spec_size(conns));

	s->n_conns = conns;
	s->n_channels = 1;
	for (uint32_t i = 0; i < conns; i++) {
		struct nr_conn_spec *c = &s->conns[i];
		uint32_t a, b, tries = 0;

		/* free QPs only: job_create refuses a taken one before the index sees it */
		do {
			a = rnd() % IPS;
			b = rnd() % QPNS;
		} while (taken[a][b] && ++tries < 1000);
		taken[a][b] = true;
		c->src_ip = 0x0A000001u + a;
		c->src_qpn = 0x100 + b;
		c->dst_ip = 0x0A000001u + rnd() % IPS; /* the other end: also taken */
		do {
			a = (c->dst_ip - 0x0A000001u);
			b = rnd() % QPNS;
		} while (taken[a][b] && ++tries < 2000);
		taken[a][b] = true;
		c->dst_qpn = 0x100 + b;
	}
	return s;
}

static void test_model(void **state)
{
	struct ctl_epidx x = { 0 };
	struct nr_job_spec *jobs[JOBS] = { 0 };
	bool taken[IPS][QPNS] = { { false } };
	int owner[IPS][QPNS];

	(void)state;
	memset(owner, -1, sizeof(owner));
	for (unsigned step = 0; step < 4000; step++) {
		unsigned j = rnd() % JOBS;

		if (jobs[j]) {
			struct nr_job_spec *s = jobs[j];

			ctl_epidx_del(&x, s, j);
			for (uint32_t i = 0; i < s->n_conns; i++) {
				owner[s->conns[i].src_ip - 0x0A000001u][s->conns[i].src_qpn - 0x100] =
					-1;
				owner[s->conns[i].dst_ip - 0x0A000001u][s->conns[i].dst_qpn - 0x100] =
					-1;
				taken[s->conns[i].src_ip - 0x0A000001u][s->conns[i].src_qpn - 0x100] =
					false;
				taken[s->conns[i].dst_ip - 0x0A000001u][s->conns[i].dst_qpn - 0x100] =
					false;
			}
			free(s);
			jobs[j] = NULL;
		} else {
			bool t2[IPS][QPNS];
			struct nr_job_spec *s;
			bool fits = true;

			memcpy(t2, taken, sizeof(t2));
			s = spec_of(1 + rnd() % 6, t2);
			/* a spec that could not find free QPs is dropped, as job_create would */
			for (uint32_t i = 0; i < s->n_conns && fits; i++)
				fits = owner[s->conns[i].src_ip - 0x0A000001u]
					    [s->conns[i].src_qpn - 0x100] < 0 &&
				       owner[s->conns[i].dst_ip - 0x0A000001u]
					    [s->conns[i].dst_qpn - 0x100] < 0;
			if (!fits) {
				free(s);
				continue;
			}
			assert_int_equal(ctl_epidx_reserve(&x, 2 * s->n_conns), 0);
			ctl_epidx_add(&x, s, j);
			memcpy(taken, t2, sizeof(t2));
			for (uint32_t i = 0; i < s->n_conns; i++) {
				owner[s->conns[i].src_ip - 0x0A000001u][s->conns[i].src_qpn - 0x100] =
					(int)j;
				owner[s->conns[i].dst_ip - 0x0A000001u][s->conns[i].dst_qpn - 0x100] =
					(int)j;
			}
			jobs[j] = s;
		}
		for (int a = 0; a < IPS; a++)
			for (int b = 0; b < QPNS; b++)
				if (ctl_epidx_find(&x, 0x0A000001u + a, 0x100 + b) != owner[a][b])
					fail_msg("step %u: (%d, %d) found in %d, the model says %d",
						 step, a, b,
						 ctl_epidx_find(&x, 0x0A000001u + a, 0x100 + b),
						 owner[a][b]);
	}
	for (unsigned j = 0; j < JOBS; j++)
		free(jobs[j]);
	ctl_epidx_free(&x);
}

/* A lookup among the most QPs the API holds: what a job_create's check costs a QP. */
static void test_full_cost(void **state)
{
	enum { RANKS = 256, CH = 16, N = 64 };
	struct ctl_epidx x = { 0 };
	struct nr_job_spec *s = calloc(1, nr_job_spec_size(RANKS * CH));
	struct timespec t0, t1;
	volatile int hits = 0;
	double ns;

	(void)state;
	s->n_conns = RANKS;
	s->n_channels = CH;
	for (unsigned j = 0; j < N; j++) {
		for (uint32_t i = 0; i < RANKS * CH; i++) {
			s->conns[i] = (struct nr_conn_spec){
				.src_ip = 0x0A000000u + j * 256 + i % RANKS,
				.src_qpn = 0x1000 + 2 * i,
				.dst_ip = 0x0A000000u + j * 256 + (i + 1) % RANKS,
				.dst_qpn = 0x1001 + 2 * i
			};
		}
		assert_int_equal(ctl_epidx_reserve(&x, 2 * RANKS * CH), 0);
		ctl_epidx_add(&x, s, j);
	}
	assert_int_equal(x.n, 2u * N * RANKS * CH);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t i = 0; i < RANKS * CH; i++)
		hits += ctl_epidx_find(&x, s->conns[i].dst_ip, s->conns[i].dst_qpn) == N - 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	printf("# %u QPs held (%d jobs of %d ranks x %d channels): a spec of %d connections "
	       "checked in %.2f ms (%.0f ns a QP); the loop it replaces compared %.2g pairs\n",
	       x.n, N, RANKS, CH, RANKS * CH, ns / 1e6, ns / (RANKS * CH),
	       (double)N * RANKS * CH * RANKS * CH);
	assert_int_equal(hits, RANKS * CH);
	ctl_epidx_free(&x);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_full_cost),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
