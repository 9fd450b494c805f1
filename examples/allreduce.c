/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allreduce: the whole libnetreduce API in one program.  Run one process per
 * rank; the settings come from the environment (host/README.md):
 *
 *   NR_RANK=0 NR_WORLD=2 NR_ROOT=127.0.0.10:29500 NR_ADDR=127.0.0.10 ./nr-example-allreduce &
 *   NR_RANK=1 NR_WORLD=2 NR_ROOT=127.0.0.10:29500 NR_ADDR=127.0.0.11 ./nr-example-allreduce
 *
 * With NR_BOX (and NR_TOKEN) the all-reduces go through the box; without,
 * over the library's ring.  Each rank sums a float32 buffer whose element i is
 * rank + i, then a bfloat16 one, and checks the result against what every
 * rank can compute alone.  Build: cc allreduce.c $(pkg-config --cflags --libs
 * libnetreduce).  Exit 0 when every element is right.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netreduce.h>

#define COUNT 100000

/* bfloat16 of a float that has one (small integers do), and back */
static uint16_t to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return (uint16_t)(u >> 16);
}

static float from_bf16(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* One call: its name and libnetreduce's message when it fails. */
static int check(struct nr_comm *comm, int rc, const char *what)
{
	if (rc)
		fprintf(stderr, "allreduce: %s: %s: %s\n", what, nr_strerror(rc),
			nr_comm_last_error(comm));
	return rc;
}

static int run(struct nr_comm *comm)
{
	int rank = nr_comm_rank(comm), world = nr_comm_world(comm), wrong = 0;
	/* the ranks' element i summed: world * i + 0 + 1 + ... + (world - 1) */
	float base = (float)world * (world - 1) / 2;
	float *x = malloc(COUNT * sizeof(*x));
	uint16_t *h = malloc(COUNT * sizeof(*h));
	struct nr_comm_stats st;
	int rc;

	if (!x || !h)
		return -1;
	for (int i = 0; i < COUNT; i++)
		x[i] = (float)(rank + i % 64);
	/* through the box when the communicator has one, else the ring */
	rc = getenv("NR_BOX") ? nr_allreduce(comm, x, x, COUNT, NR_FLOAT32, NR_SUM)
			      : nr_ring_allreduce(comm, x, x, COUNT, NR_FLOAT32, NR_SUM);
	if (check(comm, rc, "float32 all-reduce"))
		goto out;
	for (int i = 0; i < COUNT; i++)
		wrong += x[i] != base + (float)(world * (i % 64));
	/* 16 bits a gradient: summed in FP32, rounded once through the box */
	for (int i = 0; i < COUNT; i++)
		h[i] = to_bf16((float)(rank + i % 8));
	rc = getenv("NR_BOX") ? nr_allreduce(comm, h, h, COUNT, NR_BF16, NR_SUM)
			      : nr_ring_allreduce(comm, h, h, COUNT, NR_BF16, NR_SUM);
	if (check(comm, rc, "bfloat16 all-reduce"))
		goto out;
	for (int i = 0; i < COUNT; i++)
		wrong += from_bf16(h[i]) != base + (float)(world * (i % 8));
	nr_comm_stats(comm, &st);
	printf("rank %d of %d (%s, %u box channels): %llu all-reduces (%llu bf16), %llu bytes, "
	       "%d wrong elements\n", rank, world, nr_comm_algo(comm), nr_comm_channels(comm),
	       (unsigned long long)(st.box_calls + st.ring_calls),
	       (unsigned long long)st.bf16_calls,
	       (unsigned long long)(st.box_bytes + st.ring_bytes), wrong);
	rc = wrong ? -1 : 0;
out:
	free(x);
	free(h);
	return rc;
}

int main(void)
{
	struct nr_config cfg;
	struct nr_comm *comm;
	int rc;

	rc = nr_config_from_env(&cfg);   /* defaults, then NR_* */
	if (rc == 0)
		rc = nr_comm_init(&cfg, &comm);   /* collective: every rank calls it */
	if (rc) {
		fprintf(stderr, "allreduce: %s: %s\n", nr_strerror(rc), nr_comm_last_error(NULL));
		return 2;
	}
	rc = run(comm);
	nr_comm_destroy(comm);   /* collective while healthy */
	return rc ? 1 : 0;
}
