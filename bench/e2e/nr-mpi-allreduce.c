/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nr-mpi-allreduce: the MPI_Allreduce baseline of the end-to-end testbed.
 *
 * Same sweep, check and output as nr-allreduce-perf, with "algo":"mpi", so
 * tests/testbed/run can put OpenMPI next to netreduce and the ring:
 *
 *   nr-mpi-allreduce -b 1M -e 64M -f 2 --iters 5 --warmup 1 --check --json
 *
 * JSON line per size, printed by rank 0:
 *   {"algo":"mpi","ranks":N,"bytes":B,"time_us":T,"algbw_gbps":X,
 *    "busbw_gbps":Y,"wrong":K}
 * As nr-allreduce-perf: time_us is the median over the iterations of one
 * call, on rank 0; algbw = bytes / time in GB/s (1e9 bytes/s); busbw =
 * algbw * 2(N-1)/N.
 *
 * --check: MPI does not define the order in which it sums the ranks'
 * contributions, so unlike netreduce's ordered mode the result cannot be
 * compared bit for bit with a rank-ordered reference.  An element counts as
 * wrong when it differs from the rank-ordered reference by more than
 * 1e-5 * (sum of |contributions|) (a few ulps of FP32 rounding for up to
 * hundreds of ranks), or when it differs from rank 0's result (all ranks must
 * agree).
 *
 * Exit: 0 all results right, 1 some element wrong, 2 error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "bench/bench_util.h"
#include "proto/nr_text.h"

#define REL_TOL 1e-5

struct opts {
	size_t min_bytes;
	size_t max_bytes;
	double factor;
	int iters;
	int warmup;
	int check;
	int json;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nr-mpi-allreduce [-b MIN] [-e MAX] [-f FACTOR] [--iters N] [--warmup N]\n"
		"                        [--check] [--json]\n"
		"  sizes in bytes with K/M/G suffixes, rounded down to whole floats (min 4)\n"
		"  --check  compare with the rank-ordered reference within %.0e relative\n"
		"           tolerance (MPI's summation order is not defined) and across ranks\n",
		REL_TOL);
}

static int parse_opts(int argc, char **argv, struct opts *o, int rank)
{
	static const struct option lo[] = {
		{ "minbytes", required_argument, NULL, 'b' },
		{ "maxbytes", required_argument, NULL, 'e' },
		{ "stepfactor", required_argument, NULL, 'f' },
		{ "iters", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "check", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ .min_bytes = 4, .max_bytes = 1 << 20, .factor = 2,
			    .iters = 5, .warmup = 1 };
	while ((c = getopt_long(argc, argv, "b:e:f:n:w:h", lo, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (nr_size_parse(optarg, &o->min_bytes))
				goto bad;
			break;
		case 'e':
			if (nr_size_parse(optarg, &o->max_bytes))
				goto bad;
			break;
		case 'f':
			o->factor = atof(optarg);
			if (o->factor <= 1.0)
				goto bad;
			break;
		case 'n':
			o->iters = atoi(optarg);
			if (o->iters < 1)
				goto bad;
			break;
		case 'w':
			o->warmup = atoi(optarg);
			if (o->warmup < 0)
				goto bad;
			break;
		case 'c': o->check = 1; break;
		case 'j': o->json = 1; break;
		case 'h':
			if (rank == 0)
				usage(stdout);
			return 1;
		default:
			goto bad;
		}
	}
	if (optind != argc)
		goto bad;
	if (o->min_bytes < 4)
		o->min_bytes = 4;
	if (o->max_bytes < o->min_bytes)
		o->max_bytes = o->min_bytes;
	return 0;
bad:
	if (rank == 0) {
		fprintf(stderr, "nr-mpi-allreduce: bad option or value%s%s\n",
			optind <= argc && optind > 0 ? " near " : "",
			optind <= argc && optind > 0 ? argv[optind - 1] : "");
		usage(stderr);
	}
	return -EINVAL;
}

/* Deterministic, rank- and index-dependent values with rounding in the sums. */
static float elem(int rank, size_t i)
{
	uint32_t x = (uint32_t)(i * 2654435761u) ^ (uint32_t)(rank * 40503u + 1);

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return ((float)(x & 0xffffff) / (float)0x1000000 - 0.5f) * 3.0f + 0.001f * rank;
}

static void fill(float *buf, size_t count, int rank)
{
	for (size_t i = 0; i < count; i++)
		buf[i] = elem(rank, i);
}

/* Elements out of tolerance against the rank-ordered sum or rank 0's result. */
static uint64_t check_result(const float *got, const float *root_got, size_t count,
			     int world)
{
	uint64_t wrong = 0;

	for (size_t i = 0; i < count; i++) {
		float ref = 0.0f;
		double mag = 0.0;

		for (int r = 0; r < world; r++) {
			float v = elem(r, i);

			ref += v;
			mag += fabs(v);
		}
		if (fabs((double)got[i] - (double)ref) > REL_TOL * mag + 1e-30 ||
		    memcmp(&got[i], &root_got[i], sizeof(float)) != 0)
			wrong++;
	}
	return wrong;
}

static int run_size(const struct opts *o, size_t count, float *send, float *recv,
		    float *root_recv, double *t, int rank, int world, uint64_t *wrong_total)
{
	size_t bytes = count * sizeof(float);
	uint64_t wrong = 0, wrong_all = 0;
	double med;
	int rc;

	fill(send, count, rank);
	for (int i = 0; i < o->warmup; i++) {
		rc = MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		if (rc != MPI_SUCCESS)
			return -EIO;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < o->iters; i++) {
		double t0 = nr_bench_seconds(CLOCK_MONOTONIC);

		rc = MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		if (rc != MPI_SUCCESS)
			return -EIO;
		t[i] = nr_bench_seconds(CLOCK_MONOTONIC) - t0;
	}
	med = nr_bench_median(t, (unsigned)o->iters);

	if (o->check) {
		memcpy(root_recv, recv, bytes);
		MPI_Bcast(root_recv, (int)count, MPI_FLOAT, 0, MPI_COMM_WORLD);
		wrong = check_result(recv, root_recv, count, world);
		MPI_Reduce(&wrong, &wrong_all, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	}
	if (rank == 0) {
		double algbw = bytes / med / 1e9;
		double busbw = algbw * 2.0 * (world - 1) / world;

		if (o->json)
			printf("{\"algo\":\"mpi\",\"ranks\":%d,\"bytes\":%zu,\"time_us\":%.2f,"
			       "\"algbw_gbps\":%.6g,\"busbw_gbps\":%.6g,\"wrong\":%" PRIu64 "}\n",
			       world, bytes, med * 1e6, algbw, busbw, wrong_all);
		else
			printf("%12zu %12zu %12.2f %12.4f %12.4f %8" PRIu64 "\n",
			       bytes, count, med * 1e6, algbw, busbw, wrong_all);
		fflush(stdout);
		*wrong_total += wrong_all;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	float *send, *recv, *root_recv;
	double *t;
	uint64_t wrong_total = 0;
	size_t max_count;
	int rank, world, rc;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &world);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

	rc = parse_opts(argc, argv, &o, rank);
	if (rc) {
		MPI_Finalize();
		return rc > 0 ? 0 : 2;
	}
	max_count = o.max_bytes / sizeof(float);
	send = malloc(max_count * sizeof(float));
	recv = malloc(max_count * sizeof(float));
	root_recv = malloc(max_count * sizeof(float));
	t = malloc(sizeof(double) * (size_t)o.iters);
	if (!send || !recv || !root_recv || !t) {
		fprintf(stderr, "nr-mpi-allreduce: rank %d: cannot allocate 3 x %zu bytes; "
			"lower -e\n", rank, o.max_bytes);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (rank == 0 && !o.json)
		printf("# nr-mpi-allreduce: %d ranks, MPI_Allreduce float sum\n"
		       "%12s %12s %12s %12s %12s %8s\n", world,
		       "size(B)", "count", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");

	for (double b = (double)o.min_bytes; b <= (double)o.max_bytes * 1.0000001;
	     b *= o.factor) {
		size_t count = (size_t)b / sizeof(float);

		if (count == 0)
			count = 1;
		if (run_size(&o, count, send, recv, root_recv, t, rank, world, &wrong_total)) {
			fprintf(stderr, "nr-mpi-allreduce: rank %d: MPI_Allreduce of %zu floats "
				"failed\n", rank, count);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	free(send);
	free(recv);
	free(root_recv);
	free(t);
	MPI_Bcast(&wrong_total, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return wrong_total ? 1 : 0;
}
