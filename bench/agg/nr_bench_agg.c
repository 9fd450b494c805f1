/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nr-bench-agg: throughput of the aggregation engine on one core, driven
 * through its real API (agg_engine_input with pre-built, pre-parsed frames;
 * ACKs fed so slots release), next to memcpy of the same volume over a
 * working set of the same size.  Prints figures; never fails on speed.
 *
 *   gbps  gradient input bytes per second (N * payload per slot) * 8 / 1e9
 *   mpps  input packets per second / 1e6
 * Each figure is the median of several repetitions.  Payload floats are
 * zeros (FP add speed does not depend on the values, except denormals).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_util.h"
#include "dataplane/engine/agg_engine.h"
#include "dataplane/engine/agg_sum.h"
#include "proto/roce_build.h"
#include "proto/roce_pkt.h"

#define WINDOW   64u     /* messages of pool (2W), also frames per connection */
#define ACK_EVERY 8u     /* receivers ACK every 8 messages (coalesced) */
#define BENCH_TAG 0x01000000u   /* ImmDt of every contribution */

struct frame {
	uint8_t *buf;
	struct nr_pkt p;
};

struct bench {
	uint32_t n, payload;
	struct nr_job_spec *spec;
	struct frame *data;      /* [WINDOW][n] */
	struct frame *acks;      /* [n] */
	uint64_t emitted;
	/* the arrival order of every row (a slot's N packets, order rotated by
	 * g), rows back to back: rows g .. g+k-1 are one burst, as the box
	 * hands the engine an rx burst with its parse records in a side array */
	struct nr_pkt **pk;         /* [WINDOW * n] */
	uint8_t **fr;
	void **hd;
	enum agg_verdict vd[64];
};

/* The box's way: a slot's results in one call (dp_engine_emit_slot). */
static void on_emit_slot(void *ctx, const struct agg_emit_slot *s)
{
	struct bench *b = ctx;

	b->emitted += s->n;
}

static void on_free(void *ctx, void *h)
{
	(void)ctx;
	(void)h;
}

/*
 * Thread CPU time by default: on a shared machine a wall clock also counts
 * the time other processes ran on this core.  --wall switches to
 * CLOCK_MONOTONIC (right on a dedicated core).
 */
static clockid_t bench_clock = CLOCK_THREAD_CPUTIME_ID;

static double now_s(void)
{
	return nr_bench_seconds(bench_clock);
}

static struct nr_job_spec *make_spec(uint32_t n, uint32_t payload, uint8_t mode)
{
	struct nr_job_spec *s = calloc(1, sizeof(*s) + n * sizeof(s->conns[0]));

	s->n_conns = n;
	s->mtu = payload;
	s->msg_size = payload;
	s->pool_msgs = WINDOW;
	s->timeout_ms = 3600000;
	s->mode = mode;
	s->result_key = 0x6e720001;   /* as the control API sets one: results' ImmDt rewritten */
	for (uint32_t i = 0; i < n; i++) {
		s->conns[i].src_ip = htonl(0x0A000001u + i);
		s->conns[i].dst_ip = htonl(0x0A000001u + (i + 1) % n);
		s->conns[i].src_qpn = 0x100 + i;
		s->conns[i].dst_qpn = 0x200 + (i + 1) % n;
		s->conns[i].ipsn = (0xFFFF00u + i * 977) & NR_PSN_MASK;
	}
	return s;
}

static int build(struct frame *f, const struct nr_flow *fl, const struct nr_build_args *a,
		 const void *pay, uint32_t len)
{
	int n;

	f->buf = aligned_alloc(64, (len + 128 + 63) / 64 * 64);
	if (!f->buf)
		return -ENOMEM;
	n = nr_build_frame(f->buf, len + 128, fl, a, pay, len);
	if (n < 0 || nr_parse(f->buf, (uint32_t)n, &f->p) != NR_PKT_ROCE)
		return -EINVAL;
	return 0;
}

static int bench_setup(struct bench *b, uint32_t n, uint32_t payload, uint8_t mode)
{
	static const float zeros[1024];
	uint32_t i, m;

	memset(b, 0, sizeof(*b));
	b->n = n;
	b->payload = payload;
	b->spec = make_spec(n, payload, mode);
	b->data = calloc((size_t)WINDOW * n, sizeof(*b->data));
	b->acks = calloc(n, sizeof(*b->acks));
	for (m = 0; m < WINDOW; m++) {
		for (i = 0; i < n; i++) {
			const struct nr_conn_spec *c = &b->spec->conns[i];
			struct nr_flow fl = { .saddr = c->src_ip, .daddr = c->dst_ip,
					      .dqpn = c->dst_qpn, .sport = 49152,
					      .frag_off = NR_IPV4_DF };
			struct nr_build_args a = { .opcode = NR_OP_RC_WRITE_ONLY_IMM,
						   .psn = c->ipsn, .imm = BENCH_TAG,
						   .dma_len = payload };

			if (build(&b->data[m * n + i], &fl, &a, zeros, payload))
				return -1;
		}
	}
	b->pk = calloc((size_t)WINDOW * n, sizeof(*b->pk));
	b->fr = calloc((size_t)WINDOW * n, sizeof(*b->fr));
	b->hd = calloc((size_t)WINDOW * n, sizeof(*b->hd));
	if (!b->pk || !b->fr || !b->hd)
		return -1;
	for (m = 0; m < WINDOW; m++) {
		for (uint32_t r = 0, k = m * n; r < n; r++, k++) {
			struct frame *f = &b->data[m * n + (m + r) % n];

			b->pk[k] = &f->p;
			b->fr[k] = f->buf;
			b->hd[k] = f;
		}
	}
	for (i = 0; i < n; i++) {
		const struct nr_conn_spec *c = &b->spec->conns[i];
		struct nr_flow fl = { .saddr = c->dst_ip, .daddr = c->src_ip, .dqpn = c->src_qpn,
				      .sport = 49152, .frag_off = NR_IPV4_DF };
		struct nr_build_args a = { .opcode = NR_OP_RC_ACK, .psn = c->ipsn };

		if (build(&b->acks[i], &fl, &a, NULL, 0))
			return -1;
	}
	return 0;
}

static void bench_teardown(struct bench *b)
{
	free(b->spec);
	for (size_t k = 0; k < (size_t)WINDOW * b->n; k++)
		free(b->data[k].buf);
	for (uint32_t i = 0; i < b->n; i++)
		free(b->acks[i].buf);
	free(b->data);
	free(b->acks);
	free(b->pk);
	free(b->fr);
	free(b->hd);
}

/* The parse records of sequence g as the box's parser would write them for
 * new packets: the PSN, and the ImmDt the engine rewrote in the last use. */
static void set_psns(struct bench *b, uint64_t g)
{
	struct frame *row = &b->data[(g % WINDOW) * b->n];
	uint32_t g24 = (uint32_t)(g & NR_PSN_MASK);

	for (uint32_t i = 0; i < b->n; i++) {
		row[i].p.psn = nr_psn_add(b->spec->conns[i].ipsn, g24);
		row[i].p.imm = BENCH_TAG;
	}
}

/* One repetition: `slots` slots through a fresh job; returns seconds. */
static double run_engine(struct bench *b, enum agg_sum_kernel k, uint64_t slots)
{
	struct agg_engine_ops ops = { .emit_slot = on_emit_slot, .free = on_free, .ctx = b };
	struct agg_engine *e = agg_engine_create(&ops);
	char err[256];
	double t0, t1;
	uint32_t n = b->n, rows = n >= 32 ? 1 : 32 / n;

	if (!e || agg_engine_set_kernel(e, k) ||
	    agg_engine_job_add(e, 1, b->spec, 0, NULL, err, sizeof(err))) {
		fprintf(stderr, "nr-bench-agg: engine setup failed\n");
		exit(1);
	}
	b->emitted = 0;
	t0 = now_s();
	/* rows go in as bursts of up to 32 packets (WINDOW is a multiple of
	 * rows, so a burst never wraps); each row's PSNs are written first */
	for (uint64_t g = 0; g < slots; g += rows) {
		uint64_t end = g + rows < slots ? g + rows : slots;
		size_t base = (size_t)(g % WINDOW) * n;

		for (uint64_t h = g; h < end; h++)
			set_psns(b, h);
		agg_engine_input_burst(e, &b->pk[base], &b->fr[base], &b->hd[base],
				      (unsigned)((end - g) * n), 0, b->vd, NULL);
		for (uint64_t h = g; h < end; h++) {
			if (h % ACK_EVERY != ACK_EVERY - 1)
				continue;
			for (uint32_t i = 0; i < n; i++) {
				struct frame *a = &b->acks[i];

				a->p.psn = nr_psn_add(b->spec->conns[i].ipsn, (uint32_t)(h & NR_PSN_MASK));
				agg_engine_input(e, &a->p, a->buf, NULL, 0, NULL);
			}
		}
	}
	t1 = now_s();
	if (b->emitted != slots * n) {
		fprintf(stderr, "nr-bench-agg: emitted %llu of %llu results\n",
			(unsigned long long)b->emitted, (unsigned long long)(slots * n));
		exit(1);
	}
	agg_engine_destroy(e);
	return t1 - t0;
}

/* memcpy of N * payload bytes per slot over the same working set. */
static double run_memcpy(struct bench *b, uint8_t *dst, uint64_t slots)
{
	uint32_t n = b->n;
	double t0 = now_s();

	for (uint64_t g = 0; g < slots; g++) {
		struct frame *row = &b->data[(g % WINDOW) * n];
		uint8_t *d = dst + (g % WINDOW) * (size_t)n * b->payload;

		for (uint32_t i = 0; i < n; i++)
			memcpy(d + (size_t)i * b->payload, row[i].buf + row[i].p.pay_off, b->payload);
		__asm__ volatile("" ::: "memory");
	}
	return now_s() - t0;
}

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown CPU");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && c) {
			snprintf(buf, len, "%s", c + 2);
			buf[strcspn(buf, "\n")] = 0;
			break;
		}
	}
	fclose(f);
}

/* name is one of the comma list's items */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

static void usage(FILE *o)
{
	fprintf(o, "usage: nr-bench-agg [--json] [--quick] [-h]\n"
		"  Aggregation engine throughput on one core (N = 2..32 workers, payload 1024\n"
		"  and 4096 B, kernels avx512/scalar, modes ordered/streaming) and memcpy of\n"
		"  the same volume over the same working set.  Figures only; never fails.\n"
		"  --json   one JSON object per line instead of the table\n"
		"  --quick  shorter runs, fewer repetitions\n"
		"  --wall   time with the wall clock (default: thread CPU time, right on a\n"
		"           shared machine; use --wall on a dedicated core)\n"
		"  --dtype LIST  the element types, fp32,bf16 (default), fp16 too: a 16-bit job's\n"
		"           payloads widened, summed in FP32, rounded once (Gbit/s of payload)\n"
		"  --workers N, --payload B, --kernel avx512|scalar, --mode ordered|streaming\n"
		"           run only those (for profiling)\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' }, { "quick", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' }, { "wall", no_argument, NULL, 'w' },
		{ "workers", required_argument, NULL, 'n' },
		{ "payload", required_argument, NULL, 'p' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "mode", required_argument, NULL, 'm' },
		{ "dtype", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	static const uint32_t ns[] = { 2, 4, 8, 16, 32 }, pays[] = { 1024, 4096 };
	bool json = false, quick = false;
	uint32_t only_n = 0, only_pay = 0;
	const char *only_k = NULL, *only_m = NULL, *dtypes = "fp32,bf16";
	unsigned reps;
	uint64_t volume;
	char cpu[128];
	int o;

	while ((o = getopt_long(argc, argv, "jqhwn:p:k:m:d:", lo, NULL)) != -1) {
		switch (o) {
		case 'd': dtypes = optarg; break;
		case 'w': bench_clock = CLOCK_MONOTONIC; break;
		case 'k': only_k = optarg; break;
		case 'm': only_m = optarg; break;
		case 'n': only_n = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'p': only_pay = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'j': json = true; break;
		case 'q': quick = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	reps = quick ? 3 : 5;
	volume = quick ? (16ull << 20) : (256ull << 20);   /* input bytes per repetition */
	cpu_model(cpu, sizeof(cpu));
	if (!json) {
		printf("nr-bench-agg: one core, %s; default kernel %s%s\n", cpu,
		       agg_sum_best()->name,
		       agg_sum_avx512_supported() ? "" : " (avx512: not supported on this CPU)");
		printf("  pool %u messages of one packet, ACK every %u messages, %u reps (median), "
		       "%llu MiB input per rep, %s time\n", WINDOW, ACK_EVERY, reps,
		       (unsigned long long)(volume >> 20),
		       bench_clock == CLOCK_MONOTONIC ? "wall-clock" : "thread CPU");
		printf("  %-7s %-10s %-5s %3s %7s %9s %8s %11s %8s\n", "kernel", "mode", "dtype", "N",
		       "payload", "Gbit/s", "Mpps", "memcpy Gb/s", "ratio");
	}
	for (unsigned pi = 0; pi < 2; pi++) {
		for (unsigned ni = 0; ni < 5; ni++) {
			uint32_t n = ns[ni], pay = pays[pi];
			uint64_t slots = volume / ((uint64_t)n * pay);
			struct bench b;
			double t_[8], mgbps;
			uint8_t *dst;

			if ((only_n && n != only_n) || (only_pay && pay != only_pay))
				continue;
			if (bench_setup(&b, n, pay, NR_SUM_ORDERED)) {
				fprintf(stderr, "nr-bench-agg: frame setup failed\n");
				return 1;
			}
			if (slots < WINDOW)
				slots = WINDOW;
			dst = aligned_alloc(64, (size_t)WINDOW * n * pay);
			memset(dst, 0, (size_t)WINDOW * n * pay);
			run_memcpy(&b, dst, slots / 4 + 1);              /* warm-up */
			for (unsigned r = 0; r < reps; r++)
				t_[r] = run_memcpy(&b, dst, slots);
			mgbps = slots * (double)n * pay * 8 / nr_bench_median(t_, reps) / 1e9;
			free(dst);
			if (json)
				printf("{\"bench\":\"memcpy\",\"workers\":%u,\"payload\":%u,\"gbps\":%.2f}\n",
				       n, pay, mgbps);
			for (int ki = 0; ki < 2; ki++) {
				enum agg_sum_kernel k = ki == 0 ? NR_KERNEL_AVX512 : NR_KERNEL_SCALAR;

				if (!agg_sum_get(k) || (only_k && strcmp(only_k, agg_sum_get(k)->name)))
					continue;
				for (unsigned t = 0; t < NR_ELEM_TYPES; t++)
				for (uint8_t mode = 0; mode < 2; mode++) {
					double s, gbps, mpps;
					const char *mname = mode ? "streaming" : "ordered";

					if ((only_m && strcmp(only_m, mname)) || !listed(dtypes, nr_elem_name(t)))
						continue;

					b.spec->mode = mode;
					b.spec->dtype = (uint8_t)t;
					run_engine(&b, k, slots / 4 + 1);     /* warm-up */
					for (unsigned r = 0; r < reps; r++)
						t_[r] = run_engine(&b, k, slots);
					s = nr_bench_median(t_, reps);
					gbps = slots * (double)n * pay * 8 / s / 1e9;
					mpps = slots * (double)n / s / 1e6;
					if (json)
						printf("{\"bench\":\"engine\",\"kernel\":\"%s\",\"mode\":\"%s\","
						       "\"dtype\":\"%s\",\"workers\":%u,\"payload\":%u,"
						       "\"gbps\":%.2f,\"mpps\":%.3f}\n", agg_sum_get(k)->name,
						       mname, nr_elem_name(t), n, pay, gbps, mpps);
					else
						printf("  %-7s %-10s %-5s %3u %7u %9.2f %8.3f %11.2f %8.2f\n",
						       agg_sum_get(k)->name, mname, nr_elem_name(t), n, pay,
						       gbps, mpps, mgbps, gbps / mgbps);
					fflush(stdout);
				}
			}
			bench_teardown(&b);
		}
	}
	return 0;
}
