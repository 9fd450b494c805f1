/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nr-allreduce-perf: an nccl-tests-style sweep of all-reduce sizes, through
 * the box (--algo netreduce) or over the plain ring (--algo ring).  Run one
 * process per rank with the NR_* environment (or the options below); rank 0
 * prints.  Exit status: 0 all fine, 1 wrong elements, 2 an error.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "netreduce.h"
#include "proto/nr_text.h"

struct opts {
	size_t min, max;
	double factor;
	int iters, warmup;
	bool ring, check, json, algo_set;
	int local;           /* ranks per host (NR_LOCAL_SIZE), for the reference */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: nr-allreduce-perf [options]\n"
"  -b, --minbytes SIZE   smallest size in bytes (K, M, G suffixes; default 4)\n"
"  -e, --maxbytes SIZE   largest size (default 4M)\n"
"  -f, --stepfactor F    multiply the size by F each step (default 2)\n"
"  -n, --iters N         timed iterations per size (default 20)\n"
"  -w, --warmup N        untimed iterations per size (default 5)\n"
"  -a, --algo A          netreduce (through the box, needs NR_SWITCH) or ring\n"
"                        (default: netreduce when NR_SWITCH is set, else ring)\n"
"  -c, --check           after the timed iterations, run once more with data\n"
"                        derived from (rank, index, size) and count the elements\n"
"                        that differ from the reference (the documented order of\n"
"                        netreduce.h: rank order for netreduce, the ring's own\n"
"                        order for ring; with NR_LOCAL_SIZE > 1 the hosts'\n"
"                        local sums in those orders), over all ranks\n"
"  -J, --json            one JSON line per size instead of the table:\n"
"                        {\"algo\",\"variant\",\"ranks\",\"local\",\"bytes\",\"time_us\",\n"
"                        \"algbw_gbps\",\"busbw_gbps\",\"wrong\"} (variant: nr_comm_algo;\n"
"                        local: ranks per host)\n"
"                        (bandwidths in GB/s = 1e9 bytes/s, as in the table)\n"
"      --rank R --world N --root IP:PORT --switch IP:PORT --token T\n"
"      --transport soft|verbs --device DEV --addr IP --msg-size B --timeout-ms T\n"
"                        override NR_RANK, NR_WORLD, NR_ROOT, NR_SWITCH, NR_TOKEN,\n"
"                        NR_TRANSPORT, NR_DEVICE, NR_ADDR, NR_MSG_SIZE, NR_TIMEOUT_MS\n"
"  -h, --help\n"
"time: median over the iterations of one call, on rank 0; algbw = bytes / time;\n"
"busbw = algbw * 2(N-1)/N.  Exit status 0: fine, 1: wrong elements, 2: error.\n");
}

static int parse_uint(const char *s, long max, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 0);
	return errno || *end || end == s || *out < 0 || *out > max ? -1 : 0;
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Element i of rank r's data for check number `salt`: mixed magnitudes, exact in FP32. */
static float value(uint64_t salt, int rank, size_t i)
{
	uint64_t h = mix(salt ^ mix(((uint64_t)rank << 40) ^ i));
	static const float scale[4] = { 1.0f, 1e-3f, 1e3f, 3.14159f };

	return (float)((int64_t)(h % 2000001) - 1000000) / 1024.0f * scale[(h >> 32) & 3];
}

/* Terms t[start], t[start+1], ... summed round the n of them. */
static float ring_sum(const float *t, int n, int start)
{
	float acc = t[start];

	for (int j = 1; j < n; j++)
		acc = acc + t[(start + j) % n];
	return acc;
}

/* The chunk of index k when len elements are cut into n (the first len % n one more). */
static int chunk_of(size_t k, size_t len, int n)
{
	size_t base = len / n, rem = len % n, big = rem * (base + 1);

	return k < big ? (int)(k / (base + 1)) : (int)(rem + (k - big) / base);
}

/*
 * The documented summation order (netreduce.h), for H = world / local hosts
 * of `local` ranks, ranks host by host: the local sum of host h is
 * ((x_{h,0} + x_{h,1}) + ...) (with one rank per host, x_h itself); through
 * the box the hosts' sums are added in host order; on the ring the buffer is
 * cut into `local` shares and share p's element k is summed round the hosts
 * from the host whose ring chunk holds k.
 */
static void reference(bool ring, uint64_t salt, int world, int local, float *ref, size_t count)
{
	int hosts = world / local;
	float *l = malloc(hosts * sizeof(float));

	for (size_t i = 0; i < count; i++) {
		for (int h = 0; h < hosts; h++) {
			l[h] = value(salt, h * local, i);
			for (int p = 1; p < local; p++)
				l[h] = l[h] + value(salt, h * local + p, i);
		}
		if (ring) {
			int p = chunk_of(i, count, local);
			size_t rem = count % local, off = p * (count / local) + ((size_t)p < rem ? (size_t)p : rem);

			ref[i] = ring_sum(l, hosts, chunk_of(i - off, count / local + ((size_t)p < rem),
							     hosts));
		} else {
			ref[i] = ring_sum(l, hosts, 0);
		}
	}
	free(l);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int run_op(struct nr_comm *c, bool ring, const float *s, float *r, size_t count)
{
	return ring ? nr_ring_allreduce(c, s, r, count, NR_FLOAT32, NR_SUM)
		    : nr_allreduce(c, s, r, count, NR_FLOAT32, NR_SUM);
}

static int fail(struct nr_comm *c, int rank, int rc)
{
	fprintf(stderr, "nr-allreduce-perf: rank %d: %s: %s\n", rank, nr_strerror(rc),
		nr_comm_last_error(c));
	return 2;
}

/* Wrong elements of this rank, summed over all ranks (plain ring: exact for counts < 2^24). */
static int check_size(struct nr_comm *c, const struct opts *o, float *send, float *recv,
		      float *ref, size_t count, int rank, int world, double *wrong_all)
{
	uint64_t salt = 0x5eed0000ull + count;
	float wrong = 0, total;
	int rc;

	for (size_t i = 0; i < count; i++)
		send[i] = value(salt, rank, i);
	reference(o->ring, salt, world, o->local, ref, count);
	memset(recv, 0xff, count * 4);
	rc = run_op(c, o->ring, send, recv, count);
	if (rc)
		return rc;
	for (size_t i = 0; i < count; i++)
		wrong += memcmp(&recv[i], &ref[i], 4) != 0;
	rc = nr_ring_allreduce(c, &wrong, &total, 1, NR_FLOAT32, NR_SUM);
	*wrong_all = total;
	return rc;
}

static int sweep(struct nr_comm *c, const struct opts *o, int rank, int world)
{
	size_t maxcount = o->max / 4 ? o->max / 4 : 1;
	float *send = malloc(maxcount * 4), *recv = malloc(maxcount * 4);
	float *ref = o->check ? malloc(maxcount * 4) : NULL;
	double *t = malloc(sizeof(double) * (o->iters ? o->iters : 1));
	const char *algo = o->ring ? "ring" : "netreduce";
	int status = 0, rc = 0;

	if (!send || !recv || !t || (o->check && !ref)) {
		fprintf(stderr, "nr-allreduce-perf: rank %d: cannot allocate %zu bytes\n", rank,
			maxcount * 4);
		return 2;
	}
	for (size_t i = 0; i < maxcount; i++)
		send[i] = value(1, rank, i);
	if (rank == 0 && !o->json)
		printf("# nr-allreduce-perf: algo %s (%s), %d ranks, %d per host, credits %u\n"
		       "# %12s %12s %12s %12s %12s %8s\n", algo, nr_comm_algo(c), world, o->local,
		       nr_comm_credits(c), "size(B)", "count", "time(us)", "algbw(GB/s)",
		       "busbw(GB/s)", "#wrong");
	for (size_t bytes = o->min; bytes <= o->max; ) {
		size_t count = bytes / 4;
		double wrong = 0, med, algbw, busbw;

		for (int i = 0; i < o->warmup && !rc; i++)
			rc = run_op(c, o->ring, send, recv, count);
		for (int i = 0; i < o->iters && !rc; i++) {
			double t0 = now_us();

			rc = run_op(c, o->ring, send, recv, count);
			t[i] = now_us() - t0;
		}
		if (!rc && o->check)
			rc = check_size(c, o, send, recv, ref, count, rank, world, &wrong);
		if (rc) {
			status = fail(c, rank, rc);
			break;
		}
		qsort(t, o->iters, sizeof(double), cmp_double);
		med = o->iters ? (o->iters % 2 ? t[o->iters / 2]
				  : (t[o->iters / 2 - 1] + t[o->iters / 2]) / 2) : 0;
		algbw = med > 0 ? count * 4 / med / 1e3 : 0;
		busbw = algbw * 2 * (world - 1) / world;
		if (wrong > 0)
			status = 1;
		if (rank == 0 && o->json)
			printf("{\"algo\":\"%s\",\"variant\":\"%s\",\"ranks\":%d,\"local\":%d,"
			       "\"bytes\":%zu,\"time_us\":%.2f,\"algbw_gbps\":%.6g,\"busbw_gbps\":%.6g,"
			       "\"wrong\":%.0f}\n", algo, nr_comm_algo(c), world, o->local, count * 4, med,
			       algbw, busbw, wrong);
		else if (rank == 0)
			printf("  %12zu %12zu %12.2f %12.4f %12.4f %8.0f\n", count * 4, count, med,
			       algbw, busbw, wrong);
		fflush(stdout);
		size_t next = (size_t)ceil(bytes * o->factor);
		bytes = next > bytes ? next : bytes + 4;
	}
	free(send);
	free(recv);
	free(ref);
	free(t);
	return status;
}

static int parse_args(int argc, char **argv, struct opts *o, struct nr_config *cfg)
{
	enum { O_RANK = 256, O_WORLD, O_ROOT, O_SWITCH, O_TOKEN, O_TRANSPORT, O_DEVICE, O_ADDR,
	       O_MSG, O_TIMEOUT };
	static const struct option lo[] = {
		{ "minbytes", 1, 0, 'b' }, { "maxbytes", 1, 0, 'e' }, { "stepfactor", 1, 0, 'f' },
		{ "iters", 1, 0, 'n' }, { "warmup", 1, 0, 'w' }, { "algo", 1, 0, 'a' },
		{ "check", 0, 0, 'c' }, { "json", 0, 0, 'J' }, { "help", 0, 0, 'h' },
		{ "rank", 1, 0, O_RANK }, { "world", 1, 0, O_WORLD }, { "root", 1, 0, O_ROOT },
		{ "switch", 1, 0, O_SWITCH }, { "token", 1, 0, O_TOKEN },
		{ "transport", 1, 0, O_TRANSPORT }, { "device", 1, 0, O_DEVICE },
		{ "addr", 1, 0, O_ADDR }, { "msg-size", 1, 0, O_MSG }, { "timeout-ms", 1, 0, O_TIMEOUT },
		{ 0, 0, 0, 0 },
	};
	int ch;
	long v;

	while ((ch = getopt_long(argc, argv, "b:e:f:n:w:a:cJh", lo, NULL)) != -1) {
		switch (ch) {
		case 'b': if (nr_size_parse(optarg, &o->min)) goto bad; break;
		case 'e': if (nr_size_parse(optarg, &o->max)) goto bad; break;
		case 'f': o->factor = strtod(optarg, NULL); if (!(o->factor >= 1)) goto bad; break;
		case 'n': if (parse_uint(optarg, 1000000, &v)) goto bad; o->iters = v; break;
		case 'w': if (parse_uint(optarg, 1000000, &v)) goto bad; o->warmup = v; break;
		case 'a':
			if (strcmp(optarg, "ring") && strcmp(optarg, "netreduce"))
				goto bad;
			o->ring = !strcmp(optarg, "ring");
			o->algo_set = true;
			break;
		case 'c': o->check = true; break;
		case 'J': o->json = true; break;
		case 'h': usage(stdout); exit(0);
		case O_RANK: if (parse_uint(optarg, 1 << 20, &v)) goto bad; cfg->rank = v; break;
		case O_WORLD: if (parse_uint(optarg, 1 << 20, &v)) goto bad; cfg->world = v; break;
		case O_ROOT: cfg->root = optarg; break;
		case O_SWITCH: cfg->switch_addr = optarg; break;
		case O_TOKEN: cfg->token = optarg; break;
		case O_TRANSPORT: cfg->transport = optarg; break;
		case O_DEVICE: cfg->device = optarg; break;
		case O_ADDR: cfg->addr = optarg; break;
		case O_MSG: if (parse_uint(optarg, 1 << 30, &v)) goto bad; cfg->msg_size = v; break;
		case O_TIMEOUT: if (parse_uint(optarg, 3600000, &v)) goto bad; cfg->timeout_ms = v; break;
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nr-allreduce-perf: unexpected argument \"%s\"\n", argv[optind]);
		return -1;
	}
	if (o->min < 4 || o->min > o->max) {
		fprintf(stderr, "nr-allreduce-perf: sizes: need 4 <= -b <= -e (got %zu, %zu)\n",
			o->min, o->max);
		return -1;
	}
	if (!o->algo_set)
		o->ring = cfg->switch_addr == NULL;
	o->local = cfg->local_size > 0 ? cfg->local_size : 1;
	return 0;
bad:
	fprintf(stderr, "nr-allreduce-perf: bad value \"%s\" for -%c (see -h)\n", optarg,
		ch < 256 ? ch : '-');
	return -1;
}

int main(int argc, char **argv)
{
	struct opts o = { .min = 4, .max = 4 << 20, .factor = 2, .iters = 20, .warmup = 5 };
	struct nr_config cfg;
	struct nr_comm *c;
	int rc;

	rc = nr_config_from_env(&cfg);
	if (rc) {
		fprintf(stderr, "nr-allreduce-perf: %s\n", nr_comm_last_error(NULL));
		return 2;
	}
	if (parse_args(argc, argv, &o, &cfg))
		return 2;
	if (!o.ring && !cfg.switch_addr) {
		fprintf(stderr, "nr-allreduce-perf: --algo netreduce needs the box: set NR_SWITCH "
			"(and NR_TOKEN) or use --algo ring\n");
		return 2;
	}
	rc = nr_comm_init(&cfg, &c);
	if (rc) {
		fprintf(stderr, "nr-allreduce-perf: rank %d: %s: %s\n", cfg.rank, nr_strerror(rc),
			nr_comm_last_error(NULL));
		return 2;
	}
	rc = sweep(c, &o, cfg.rank, cfg.world);
	nr_comm_destroy(c);
	return rc;
}
