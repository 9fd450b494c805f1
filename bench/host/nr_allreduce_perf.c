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
#include <unistd.h>

#include "host/netreduce.h"
#include "proto/nr_elem.h"
#include "proto/nr_text.h"

#define NR_PERF_RACKS 64
#define NR_PERF_CLASSES 4        /* --classes: at most NR_PRIO_CLASSES' 4 */

struct opts {
	size_t min, max;
	double factor;
	int iters, warmup;
	int late_rank;           /* this rank enters its first collective late_s late; -1: none */
	unsigned late_s;
	unsigned hold_ms;        /* --hold: the communicator (its box job) lives on this long */
	int idle_comms;          /* --idle-comms K: K more communicators, idle, beside it */
	bool ring, check, json, algo_set;
	bool tolerant;           /* --tolerant: nr_allreduce_flags(NR_MSG_TOLERANT) */
	bool rs;                 /* --reduce-scatter: nr_reduce_scatter of each size */
	bool ag;                 /* --allgather: nr_allgather, sizes the bytes gathered */
	int classes;             /* --classes K: each call K tolerant pieces of classes 0..K-1
				  * and an exact one, through nr_allreduce_multi */
	int rank;
	enum nr_op op;           /* --op: NR_SUM (default) or NR_MAX */
	enum nr_dtype dtype;     /* --dtype: NR_FLOAT32 (default), NR_BF16, NR_FP16 */
	size_t es;               /* bytes of an element */
	int local;           /* ranks per host (NR_LOCAL_SIZE), for the reference */
	int nracks;          /* NR_RACKS: racks (0: none), their sizes, which have a box */
	int rack_agents;     /* NR_RACK_AGENTS (0: the smallest rack) */
	int rack_sizes[NR_PERF_RACKS], rack_boxes[NR_PERF_RACKS];
	const char *boxes_arg;
};

static void usage(FILE *f)
{
	/* clang-format off */
	fprintf(f,
"usage: nr-allreduce-perf [options]\n"
"  -b, --minbytes SIZE   smallest size in bytes (K, M, G suffixes; default 4)\n"
"  -e, --maxbytes SIZE   largest size (default 4M)\n"
"  -f, --stepfactor F    multiply the size by F each step (default 2)\n"
"  -n, --iters N         timed iterations per size (default 20)\n"
"  -w, --warmup N        untimed iterations per size (default 5)\n"
"  -a, --algo A          netreduce (through the box, needs NR_BOX) or ring\n"
"                        (default: netreduce when NR_BOX is set, else ring)\n"
"      --op OP           sum (default) or max; max registers the box job for max\n"
"                        (NR_REDUCE=max) unless NR_REDUCE says otherwise\n"
"      --dtype T         fp32 (default), bf16 or fp16: the elements (sizes stay in\n"
"                        bytes); 16-bit sums are FP32 sums rounded once through the\n"
"                        box, rounded at every hop on the ring (netreduce.h)\n"
"  -c, --check           after the timed iterations, run once more with data\n"
"                        derived from (rank, index, size) and count the elements\n"
"                        that differ from the reference (the documented order of\n"
"                        netreduce.h: rank order for netreduce, the ring's own\n"
"                        order for ring; with NR_LOCAL_SIZE > 1 the hosts'\n"
"                        local sums in those orders; across racks docs/racks.md),\n"
"                        over all ranks\n"
"      --tolerant        netreduce: every call tolerant (nr_allreduce_flags with\n"
"                        NR_MSG_TOLERANT): with NR_SHORT_PPM the box may complete its\n"
"                        packets short, whose elements --check then counts as wrong\n"
"      --classes K       netreduce: each call cut into K + 1 pieces, K tolerant ones of\n"
"                        classes 0..K-1 (NR_MSG_CLASS) and an exact one, given to\n"
"                        nr_allreduce_multi whole on even ranks and a piece a call on\n"
"                        odd ones (at once with NR_PRIO_CLASSES=K; --check holds every\n"
"                        piece to the reference)\n"
"      --reduce-scatter  netreduce: nr_reduce_scatter instead (each size cut to a\n"
"                        multiple of the ranks, each rank's share of it checked)\n"
"      --allgather       netreduce: nr_allgather instead, each size the bytes gathered\n"
"                        (cut to a multiple of the ranks; --check: every rank's bytes,\n"
"                        -0.0 and a signalling NaN among them, back byte for byte)\n"
"      --late R:S        rank R enters its first collective S seconds after the\n"
"                        others (a slow data loader): the others wait in it\n"
"      --hold MS         keep the communicator, and its job on the box, MS ms after\n"
"                        the last collective (a scraper reads the job's last counters)\n"
"      --idle-comms K    K more communicators of the same ranks (rendezvous ports\n"
"                        NR_ROOT's + 1..K), idle while the sizes run: a framework's\n"
"                        subgroups, sharing the soft transport's socket (their\n"
"                        progress threads read it too and pass what is not theirs)\n"
"  -J, --json            one JSON line per size instead of the table:\n"
"                        {\"algo\",\"variant\",\"dtype\",\"ranks\",\"local\",\"bytes\",\"time_us\",\n"
"                        \"algbw_gbps\",\"busbw_gbps\",\"wrong\"} (variant: nr_comm_algo;\n"
"                        local: ranks per host)\n"
"                        (bandwidths in GB/s = 1e9 bytes/s, as in the table)\n"
"      --rack-boxes LIST for --check across racks (NR_RACKS): 1 or 0 per rack, whether\n"
"                        it has a box (default: every rack as this rank's)\n"
"      --rank R --world N --root IP:PORT --switch IP:PORT --token T\n"
"      --transport soft|verbs --device DEV --addr IP --msg-size B --timeout-ms T\n"
"                        override NR_RANK, NR_WORLD, NR_ROOT, NR_BOX, NR_TOKEN,\n"
"                        NR_TRANSPORT, NR_DEVICE, NR_ADDR, NR_MSG_SIZE, NR_TIMEOUT_MS\n"
"  -h, --help\n"
"time: median over the iterations of one call, on rank 0; algbw = bytes / time;\n"
"busbw = algbw * 2(N-1)/N.  Exit status 0: fine, 1: wrong elements, 2: error.\n");
	/* clang-format on */
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

/* Where element i falls when count elements are cut into n: *off, *len of its part. */
static int part_of(size_t i, size_t count, int n, size_t *off, size_t *len)
{
	int p = chunk_of(i, count, n);
	size_t rem = count % n;

	*off = p * (count / n) + ((size_t)p < rem ? (size_t)p : rem);
	*len = count / n + ((size_t)p < rem);
	return p;
}

/*
 * The documented summation orders (netreduce.h, docs/racks.md) of element i.
 * Hosts of `local` ranks (ranks host by host): the local sum of host h is
 * ((x_{h,0} + x_{h,1}) + ...) (with one rank per host, x_h itself); through
 * the box the hosts' sums are added in host order; on the ring the buffer is
 * cut into `local` shares and share p's element k is summed round the hosts
 * from the host whose ring chunk holds k.
 */
static float hosts_order(const struct opts *o, uint64_t salt, int world, size_t i, size_t count,
			 float *l)
{
	int hosts = world / o->local;
	size_t off, len;

	for (int h = 0; h < hosts; h++) {
		l[h] = value(salt, h * o->local, i);
		for (int p = 1; p < o->local; p++)
			l[h] = l[h] + value(salt, h * o->local + p, i);
	}
	if (!o->ring)
		return ring_sum(l, hosts, 0);
	part_of(i, count, o->local, &off, &len);
	return ring_sum(l, hosts, chunk_of(i - off, len, hosts));
}

/*
 * Racks: rack k's sum in rank order (box) or the ring's order (no box, or
 * --algo ring); the m agents per rack (m: NR_RACK_AGENTS, else the smallest
 * rack) cut the buffer into m pieces, piece j's element k summed round the
 * racks from the rack whose chunk holds k.
 */
static float racks_order(const struct opts *o, uint64_t salt, size_t i, size_t count, float *l)
{
	float sums[NR_PERF_RACKS];
	int m = o->rack_sizes[0], first = 0;
	size_t off, len;

	for (int k = 1; k < o->nracks; k++)
		m = o->rack_sizes[k] < m ? o->rack_sizes[k] : m;
	if (o->rack_agents > 0)
		m = o->rack_agents;
	for (int k = 0; k < o->nracks; first += o->rack_sizes[k], k++) {
		for (int r = 0; r < o->rack_sizes[k]; r++)
			l[r] = value(salt, first + r, i);
		sums[k] = ring_sum(l, o->rack_sizes[k], !o->ring && o->rack_boxes[k] ? 0 :
				   chunk_of(i, count, o->rack_sizes[k]));
	}
	part_of(i, count, m, &off, &len);
	return ring_sum(sums, o->nracks, chunk_of(i - off, len, o->nracks));
}

/* max over the ranks (the data has no NaN and no -0: any order gives these bits) */
static float max_of(uint64_t salt, int world, size_t i)
{
	float m = value(salt, 0, i);

	for (int r = 1; r < world; r++) {
		float x = value(salt, r, i);

		m = x > m ? x : m;
	}
	return m;
}

static void reference(const struct opts *o, uint64_t salt, int world, float *ref, size_t count)
{
	float *l = malloc(world * sizeof(float));

	for (size_t i = 0; i < count; i++)
		ref[i] = o->op == NR_MAX ? max_of(salt, world, i)
		       : o->nracks ? racks_order(o, salt, i, count, l)
				   : hosts_order(o, salt, world, i, count, l);
	free(l);
}

/* 16-bit data: value() rounded to the type (scaled down for fp16, whose range is 65504) */
static uint16_t value16(const struct opts *o, uint64_t salt, int rank, size_t i)
{
	float v = value(salt, rank, i) / (o->dtype == NR_FP16 ? 256.0f : 1.0f);

	return o->dtype == NR_BF16 ? nr_bf16_round(v) : nr_fp16_round(v);
}

static float widen16(const struct opts *o, uint16_t h)
{
	return o->dtype == NR_BF16 ? nr_bf16_widen(h) : nr_fp16_widen(h);
}

static uint16_t round16(const struct opts *o, float f)
{
	return o->dtype == NR_BF16 ? nr_bf16_round(f) : nr_fp16_round(f);
}

/*
 * 16-bit references (one rank a host, netreduce.h): through the box the ranks'
 * elements widened and summed in FP32 in rank order, rounded once; on the ring
 * summed round the ring from the rank whose chunk holds the element, rounded
 * at every hop.
 */
static void reference16(const struct opts *o, uint64_t salt, int world, uint16_t *ref,
			size_t count)
{
	for (size_t i = 0; i < count; i++) {
		if (!o->ring) {
			float acc = widen16(o, value16(o, salt, 0, i));

			for (int r = 1; r < world; r++)
				acc = acc + widen16(o, value16(o, salt, r, i));
			ref[i] = round16(o, acc);
		} else {
			int start = chunk_of(i, count, world);
			uint16_t acc = value16(o, salt, start, i);

			for (int j = 1; j < world; j++)
				acc = round16(o, widen16(o, acc) +
					      widen16(o, value16(o, salt, (start + j) % world, i)));
			ref[i] = acc;
		}
	}
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

/*
 * --classes K: the call as K + 1 pieces, piece k < K tolerant of class k,
 * piece K exact; even ranks give them to nr_allreduce_multi at once, odd
 * ranks one a call (a class's pieces come in the same order on every rank).
 */
static int run_classes(struct nr_comm *c, const struct opts *o, const uint8_t *s, uint8_t *r,
		       size_t count)
{
	struct nr_allreduce_req q[NR_PERF_CLASSES + 1];
	unsigned n = (unsigned)o->classes + 1;
	size_t at = 0;
	int rc = 0;

	for (unsigned k = 0; k < n; k++) {
		size_t len = count / n + (k < count % n);

		q[k] = (struct nr_allreduce_req){
			.sendbuf = s + at * o->es, .recvbuf = r + at * o->es, .count = len,
			.dtype = o->dtype, .op = o->op,
			.flags = k < n - 1 ? NR_MSG_TOLERANT | NR_MSG_CLASS(k) : 0,
		};
		at += len;
	}
	if (o->rank % 2 == 0)
		return nr_allreduce_multi(c, q, n, NULL);
	for (unsigned k = 0; !rc && k < n; k++)
		rc = nr_allreduce_multi(c, &q[k], 1, NULL);
	return rc;
}

static int run_op(struct nr_comm *c, const struct opts *o, const void *s, void *r,
		  size_t count)
{
	if (o->ring)
		return nr_ring_allreduce(c, s, r, count, o->dtype, o->op);
	if (o->rs)
		return nr_reduce_scatter(c, s, r, count / (size_t)nr_comm_world(c), o->dtype, o->op);
	if (o->ag) /* count: bytes (o->es 1) */
		return nr_allgather(c, s, r, count / (size_t)nr_comm_world(c));
	if (o->classes)
		return run_classes(c, o, s, r, count);
	return nr_allreduce_flags(c, s, r, count, o->dtype, o->op,
				  o->tolerant ? NR_MSG_TOLERANT : 0);
}

static int fail(struct nr_comm *c, int rank, int rc)
{
	fprintf(stderr, "nr-allreduce-perf: rank %d: %s: %s\n", rank, nr_strerror(rc),
		nr_comm_last_error(c));
	return 2;
}

/* Byte i of rank r's all-gather data for check number salt: words -0.0 and a
 * signalling NaN first (a float sum would change both), then mixed bytes. */
static uint8_t gather_byte(uint64_t salt, int r, size_t i)
{
	static const uint8_t head[8] = { 0x00, 0x00, 0x00, 0x80, 0x01, 0x00, 0x80, 0x7f };

	return i < sizeof(head) ? head[i] : (uint8_t)mix(salt ^ (uint64_t)r << 40 ^ i);
}

/* Wrong bytes of an all-gather of count bytes, this rank's. */
static float check_gather(struct nr_comm *c, const struct opts *o, uint8_t *send, uint8_t *recv,
			  size_t count, int rank, int world, uint64_t salt, int *rc)
{
	size_t sb = count / (size_t)world;
	float wrong = 0;

	for (size_t i = 0; i < sb; i++)
		send[i] = gather_byte(salt, rank, i);
	memset(recv, 0x5a, count);
	*rc = run_op(c, o, send, recv, count);
	for (int r = 0; !*rc && r < world; r++)
		for (size_t i = 0; i < sb; i++)
			wrong += recv[(size_t)r * sb + i] != gather_byte(salt, r, i);
	return wrong;
}

/* Wrong elements of this rank, summed over all ranks (plain ring: exact for counts < 2^24). */
static int check_size(struct nr_comm *c, const struct opts *o, void *send, void *recv,
		      void *ref, size_t count, int rank, int world, double *wrong_all)
{
	uint64_t salt = 0x5eed0000ull + count;
	float wrong = 0, total;
	int rc;

	if (o->ag) {
		wrong = check_gather(c, o, send, recv, count, rank, world, salt, &rc);
		if (rc)
			return rc;
		rc = nr_ring_allreduce(c, &wrong, &total, 1, NR_FLOAT32, NR_SUM);
		*wrong_all = total;
		return rc;
	}
	for (size_t i = 0; i < count; i++)
		if (o->dtype == NR_FLOAT32)
			((float *)send)[i] = value(salt, rank, i);
		else
			((uint16_t *)send)[i] = value16(o, salt, rank, i);
	if (o->dtype == NR_FLOAT32)
		reference(o, salt, world, ref, count);
	else
		reference16(o, salt, world, ref, count);
	memset(recv, 0xff, count * o->es);
	rc = run_op(c, o, send, recv, count);
	if (rc)
		return rc;
	if (o->rs) { /* this rank's share of the reference, the rest of recv untouched */
		size_t share = count / (size_t)world;

		for (size_t i = 0; i < share; i++)
			wrong += memcmp((uint8_t *)recv + i * o->es,
					(uint8_t *)ref + ((size_t)rank * share + i) * o->es,
					o->es) != 0;
		for (size_t i = share * o->es; i < count * o->es; i++)
			wrong += ((uint8_t *)recv)[i] != 0xff;
	} else {
		for (size_t i = 0; i < count; i++)
			wrong += memcmp((uint8_t *)recv + i * o->es, (uint8_t *)ref + i * o->es,
					o->es) != 0;
	}
	rc = nr_ring_allreduce(c, &wrong, &total, 1, NR_FLOAT32, NR_SUM);
	*wrong_all = total;
	return rc;
}

static int sweep(struct nr_comm *c, const struct opts *o, int rank, int world)
{
	/* a reduce-scatter: an element a rank at least */
	size_t least = o->rs || o->ag ? (size_t)world : 1;
	size_t maxcount = o->max / o->es > least ? o->max / o->es : least;
	uint8_t *send = malloc(maxcount * o->es), *recv = malloc(maxcount * o->es);
	uint8_t *ref = o->check ? malloc(maxcount * o->es) : NULL;
	const char *dt = o->dtype == NR_BF16 ? "bf16" : o->dtype == NR_FP16 ? "fp16" : "fp32";
	double *t = malloc(sizeof(double) * (o->iters ? o->iters : 1));
	const char *algo = o->ring ? "ring" : "netreduce";
	int status = 0, rc = 0;

	if (!send || !recv || !t || (o->check && !ref)) {
		fprintf(stderr, "nr-allreduce-perf: rank %d: cannot allocate %zu bytes\n", rank,
			maxcount * o->es);
		return 2;
	}
	for (size_t i = 0; i < maxcount; i++)
		if (o->ag)
			send[i] = gather_byte(1, rank, i);
		else if (o->dtype == NR_FLOAT32)
			((float *)send)[i] = value(1, rank, i);
		else
			((uint16_t *)send)[i] = value16(o, 1, rank, i);
	if (rank == 0 && !o->json)
		printf("# nr-allreduce-perf: algo %s (%s), %s, %d ranks, %d per host, credits %u, "
		       "box channels %u\n"
		       "# %12s %12s %12s %12s %12s %8s\n", algo, nr_comm_algo(c), dt, world, o->local,
		       nr_comm_credits(c), nr_comm_channels(c), "size(B)", "count", "time(us)",
		       "algbw(GB/s)", "busbw(GB/s)", "#wrong");
	for (size_t bytes = o->min; bytes <= o->max; ) {
		size_t count = bytes / o->es;
		double wrong = 0, med, algbw, busbw;

		if (o->rs || o->ag) /* a whole share a rank, at least one element */
			count = count / (size_t)world ? count / (size_t)world * (size_t)world
						      : (size_t)world;

		for (int i = 0; i < o->warmup && !rc; i++)
			rc = run_op(c, o, send, recv, count);
		for (int i = 0; i < o->iters && !rc; i++) {
			double t0 = now_us();

			rc = run_op(c, o, send, recv, count);
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
		algbw = med > 0 ? count * o->es / med / 1e3 : 0;
		busbw = algbw * (o->rs || o->ag ? 1 : 2) * (world - 1) / world;
		if (wrong > 0)
			status = 1;
		if (rank == 0 && o->json)
			printf("{\"algo\":\"%s\",\"variant\":\"%s\",\"dtype\":\"%s\",\"ranks\":%d,"
			       "\"local\":%d,\"channels\":%u,\"bytes\":%zu,\"time_us\":%.2f,"
			       "\"algbw_gbps\":%.6g,\"busbw_gbps\":%.6g,\"wrong\":%.0f%s}\n",
			       algo, nr_comm_algo(c), dt, world, o->local,
			       o->ring ? 0 : nr_comm_channels(c), count * o->es, med, algbw, busbw,
			       wrong,
			       o->rs   ? ",\"coll\":\"reduce_scatter\""
			       : o->ag ? ",\"coll\":\"allgather\""
				       : "");
		else if (rank == 0)
			printf("  %12zu %12zu %12.2f %12.4f %12.4f %8.0f\n", count * o->es, count, med,
			       algbw, busbw, wrong);
		fflush(stdout);
		size_t next = (size_t)ceil(bytes * o->factor);
		bytes = next > bytes ? next : bytes + o->es;
	}
	free(send);
	free(recv);
	free(ref);
	free(t);
	return status;
}

/* NR_RACKS and --rack-boxes (default: every rack as this rank's, box or not). */
static int parse_racks(struct opts *o, const struct nr_config *cfg)
{
	const char *b = o->boxes_arg;
	int k = 0, sum = 0;

	for (const char *s = cfg->racks; s && *s && o->nracks < NR_PERF_RACKS; o->nracks++) {
		o->rack_sizes[o->nracks] = (int)strtol(s, (char **)&s, 10);
		sum += o->rack_sizes[o->nracks];
		s += *s == ',';
	}
	if (cfg->racks && (sum != cfg->world || o->rack_sizes[0] < 1)) {
		fprintf(stderr, "nr-allreduce-perf: NR_RACKS=%s: hosts per rack adding up to the "
			"world size %d\n", cfg->racks, cfg->world);
		return -1;
	}
	o->rack_agents = cfg->rack_agents;
	for (k = 0; k < o->nracks; k++) {
		o->rack_boxes[k] = cfg->switch_addr != NULL;
		if (b && (*b == '0' || *b == '1')) {
			o->rack_boxes[k] = *b++ == '1';
			b += *b == ',';
		} else if (b) {
			break;
		}
	}
	if (b && (k < o->nracks || *b)) {
		fprintf(stderr, "nr-allreduce-perf: --rack-boxes %s: one 0 or 1 per rack of "
			"NR_RACKS=%s\n", o->boxes_arg, cfg->racks ? cfg->racks : "(unset)");
		return -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o, struct nr_config *cfg)
{
	/* clang-format off */
	enum { O_RANK = 256, O_WORLD, O_ROOT, O_SWITCH, O_TOKEN, O_TRANSPORT, O_DEVICE, O_ADDR,
	       O_MSG, O_TIMEOUT, O_BOXES, O_LATE, O_OP, O_TOLERANT, O_DTYPE, O_HOLD, O_CLASSES,
	       O_RS, O_AG, O_IDLE };
	static const struct option lo[] = {
		{ "minbytes", 1, 0, 'b' }, { "maxbytes", 1, 0, 'e' }, { "stepfactor", 1, 0, 'f' },
		{ "iters", 1, 0, 'n' }, { "warmup", 1, 0, 'w' }, { "algo", 1, 0, 'a' },
		{ "check", 0, 0, 'c' }, { "json", 0, 0, 'J' }, { "help", 0, 0, 'h' },
		{ "rank", 1, 0, O_RANK }, { "world", 1, 0, O_WORLD }, { "root", 1, 0, O_ROOT },
		{ "switch", 1, 0, O_SWITCH }, { "token", 1, 0, O_TOKEN },
		{ "transport", 1, 0, O_TRANSPORT }, { "device", 1, 0, O_DEVICE },
		{ "addr", 1, 0, O_ADDR }, { "msg-size", 1, 0, O_MSG }, { "timeout-ms", 1, 0, O_TIMEOUT },
		{ "rack-boxes", 1, 0, O_BOXES }, { "late", 1, 0, O_LATE }, { "op", 1, 0, O_OP },
		{ "tolerant", 0, 0, O_TOLERANT }, { "dtype", 1, 0, O_DTYPE }, { "hold", 1, 0, O_HOLD },
		{ "classes", 1, 0, O_CLASSES }, { "reduce-scatter", 0, 0, O_RS },
		{ "allgather", 0, 0, O_AG }, { "idle-comms", 1, 0, O_IDLE },
		{ 0, 0, 0, 0 },
	};
	/* clang-format on */
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
		case O_BOXES: o->boxes_arg = optarg; break;
		case O_TOLERANT: o->tolerant = true; break;
		case O_RS: o->rs = true; break;
		case O_AG: o->ag = true; break;
		case O_IDLE:
			if (parse_uint(optarg, 8, &v))
				goto bad;
			o->idle_comms = (int)v;
			break;
		case O_HOLD: if (parse_uint(optarg, 3600000, &v)) goto bad; o->hold_ms = (unsigned)v; break;
		case O_CLASSES:
			if (parse_uint(optarg, NR_PERF_CLASSES, &v) || v < 1)
				goto bad;
			o->classes = (int)v;
			break;
		case O_DTYPE:
			if (!strcmp(optarg, "fp32"))
				o->dtype = NR_FLOAT32;
			else if (!strcmp(optarg, "bf16"))
				o->dtype = NR_BF16;
			else if (!strcmp(optarg, "fp16"))
				o->dtype = NR_FP16;
			else
				goto bad;
			break;
		case O_OP:
			if (strcmp(optarg, "sum") && strcmp(optarg, "max"))
				goto bad;
			o->op = strcmp(optarg, "max") ? NR_SUM : NR_MAX;
			if (o->op == NR_MAX && !getenv("NR_REDUCE"))
				cfg->reduce = "max";
			break;
		case O_LATE: {
			unsigned r, sec;
			int n = 0;

			if (sscanf(optarg, "%u:%u%n", &r, &sec, &n) != 2 || optarg[n] || r > (1u << 20) ||
			    sec > 86400)
				goto bad;
			o->late_rank = (int)r;
			o->late_s = sec;
			break;
		}
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nr-allreduce-perf: unexpected argument \"%s\"\n", argv[optind]);
		return -1;
	}
	o->es = o->ag ? 1 : o->dtype == NR_FLOAT32 ? 4 : 2; /* all-gather: bytes */
	if (o->min < o->es || o->min > o->max) {
		fprintf(stderr, "nr-allreduce-perf: sizes: need %zu <= -b <= -e (got %zu, %zu)\n",
			o->es, o->min, o->max);
		return -1;
	}
	if (!o->algo_set)
		o->ring = cfg->switch_addr == NULL;
	if ((o->rs || o->ag) && (o->ring || o->tolerant || o->classes || (o->rs && o->ag))) {
		fprintf(stderr, "nr-allreduce-perf: --reduce-scatter and --allgather run "
				"nr_reduce_scatter and nr_allgather: one of them, not with --algo "
				"ring, --tolerant or --classes\n");
		return -1;
	}
	o->local = cfg->local_size > 0 ? cfg->local_size : 1;
	if (o->dtype != NR_FLOAT32 && o->check && (o->local > 1 || cfg->racks)) {
		fprintf(stderr, "nr-allreduce-perf: --dtype %s with --check: one rank a host, no "
			"racks (the library sums 16-bit types on flat communicators)\n",
			o->dtype == NR_BF16 ? "bf16" : "fp16");
		return -1;
	}
	return parse_racks(o, cfg);
bad:
	fprintf(stderr, "nr-allreduce-perf: bad value \"%s\" for -%c (see -h)\n", optarg,
		ch < 256 ? ch : '-');
	return -1;
}

/* --idle-comms: k more communicators of cfg's ranks, rendezvous at NR_ROOT's port + i. */
static int idle_open(const struct nr_config *cfg, int k, struct nr_comm **idle)
{
	char roots[8][64];

	for (int i = 0; i < k; i++) {
		struct nr_config ci = *cfg;
		const char *colon = cfg->root ? strrchr(cfg->root, ':') : NULL;
		int rc;

		if (!colon) {
			fprintf(stderr, "nr-allreduce-perf: --idle-comms needs NR_ROOT (ip:port)\n");
			return -1;
		}
		snprintf(roots[i], sizeof(roots[i]), "%.*s:%d", (int)(colon - cfg->root), cfg->root,
			 atoi(colon + 1) + i + 1);
		ci.root = roots[i];
		rc = nr_comm_init(&ci, &idle[i]);
		if (rc) {
			fprintf(stderr, "nr-allreduce-perf: rank %d: idle communicator %d: %s: %s\n",
				cfg->rank, i + 1, nr_strerror(rc), nr_comm_last_error(NULL));
			while (i-- > 0)
				nr_comm_destroy(idle[i]);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .min = 4, .max = 4 << 20, .factor = 2, .iters = 20, .warmup = 5,
			  .late_rank = -1 };
	struct nr_config cfg;
	struct nr_comm *c, *idle[8];
	int rc;

	rc = nr_config_from_env(&cfg);
	if (rc) {
		fprintf(stderr, "nr-allreduce-perf: %s\n", nr_comm_last_error(NULL));
		return 2;
	}
	if (parse_args(argc, argv, &o, &cfg))
		return 2;
	if (!o.ring && !cfg.switch_addr && !cfg.racks) {   /* a rack may have no box */
		fprintf(stderr, "nr-allreduce-perf: --algo netreduce needs the box: set NR_BOX "
				"(and NR_TOKEN) or use --algo ring\n");
		return 2;
	}
	rc = nr_comm_init(&cfg, &c);
	if (rc) {
		fprintf(stderr, "nr-allreduce-perf: rank %d: %s: %s\n", cfg.rank, nr_strerror(rc),
			nr_comm_last_error(NULL));
		return 2;
	}
	if (idle_open(&cfg, o.idle_comms, idle)) {
		nr_comm_destroy(c);
		return 2;
	}
	if (cfg.rank == o.late_rank)
		sleep(o.late_s);
	o.rank = cfg.rank;
	rc = sweep(c, &o, cfg.rank, cfg.world);
	if (o.hold_ms)
		usleep(o.hold_ms * 1000u);
	for (int i = o.idle_comms; i-- > 0;)
		nr_comm_destroy(idle[i]);
	nr_comm_destroy(c);
	return rc;
}
