/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The FPGA's RTL against the software box, frame for frame (rtl_pair.h):
 *   generated traces (rtl_gen.h): N = 2..8, every path of the engine, every
 *   opcode, both sum modes and kernels, two jobs at once, a chaos trace;
 *   bf16 and fp16 jobs (N = 1..8, both modes, messages that end in half a
 *   word, special values and ties), one beside an FP32 job;
 *   the real RoCEv2 captures of $NR_VECTORS (../shared/vectors/roce), each
 *   replayed twice: with no job (every frame forwarded or dropped as the box
 *   does), and with a one-rank job on the capture's first RC WRITE
 *   connection (its WRITEs come back as results, rewritten by both).
 * Identical output frames in the same order, equal counters.  NR_TEST_SEED
 * reproduces a run; NR_RTL_LONG=1 runs longer traces.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <cmocka.h>
#include <pcap/pcap.h>

#include "proto/roce_pkt.h"
#include "tests/engine/eng_rand.h"
#include "tests/rtl/rtl_gen.h"

static uint64_t seed;
static unsigned scale = 1;

static void run(const struct gen_cfg *c)
{
	struct gen_cfg k = *c;

	for (unsigned j = 0; j < k.n_jobs; j++)
		k.jobs[j].nmsg *= scale;
	if (k.kernel == NR_KERNEL_AVX512 && !agg_sum_avx512_supported())
		k.kernel = NR_KERNEL_SCALAR;
	gen_run(&k, seed ^ (uint64_t)(uintptr_t)c->name[0] << 32 ^ strlen(c->name));
}

/*                       n  mtu   msg   pool nmsg mode key         ipsn      vlan */
static const struct gen_cfg cfgs[] = {
	{ "N=2 mtu 256 short last", { { 2, 256, 1000, 4, 8, 0, 0x5a5a5a5a, 0xFFFFF0, false } }, 1,
	  false, NR_KERNEL_AVX512 },
	{ "N=3 streaming ONLY", { { 3, 512, 512, 4, 10, 1, 0, 0x123456, true } }, 1,
	  false, NR_KERNEL_SCALAR },
	{ "N=4 + N=2 streaming", { { 4, 1024, 2500, 4, 6, 0, 0x01020304, 0xFFFFFA, true },
				    { 2, 256, 768, 6, 6, 1, 0xdeadbeef, 77, false } }, 2,
	  false, NR_KERNEL_AVX512 },
	{ "N=5 mtu 4096", { { 5, 4096, 4096, 4, 5, 0, 0x11, 0, false } }, 1,
	  false, NR_KERNEL_SCALAR },
	{ "N=6 streaming 12/msg", { { 6, 256, 3072, 4, 4, 1, 0x42, 0xFFFFFF, true } }, 1,
	  false, NR_KERNEL_AVX512 },
	{ "N=7 mtu 2048", { { 7, 2048, 6000, 4, 4, 0, 0x7, 0x800000, false } }, 1,
	  false, NR_KERNEL_AVX512 },
	{ "N=8 mtu 1024", { { 8, 1024, 4096, 4, 4, 0, 0x88888888, 0xFFFFE0, true } }, 1,
	  false, NR_KERNEL_SCALAR },
	{ "N=4 chaos (len, tag)", { { 4, 512, 1536, 4, 12, 0, 0x99, 5, true } }, 1,
	  true, NR_KERNEL_AVX512 },
	{ "N=2 chaos", { { 2, 1024, 2048, 4, 16, 0, 0x98, 0xFFFFF1, false } }, 1,
	  true, NR_KERNEL_AVX512 },
	{ "N=3 streaming chaos", { { 3, 256, 512, 4, 8, 1, 0, 0xFFFFF8, false } }, 1,
	  true, NR_KERNEL_SCALAR },
	/* 16-bit: widened, summed in FP32, rounded once (last field: dtype) */
	{ "bf16 N=4 2050 B", { { 4, 1024, 2050, 4, 4, 0, 0x16161616, 0xFFFFF4, true, NR_ELEM_BF16 } }, 1,
	  false, NR_KERNEL_AVX512 },
	{ "bf16 N=3 streaming", { { 3, 512, 1534, 4, 5, 1, 0xb16, 0x234567, true, NR_ELEM_BF16 } }, 1,
	  false, NR_KERNEL_SCALAR },
	{ "bf16 N=1 streaming", { { 1, 256, 510, 4, 8, 1, 0x1, 0xFFFFFE, false, NR_ELEM_BF16 } }, 1,
	  false, NR_KERNEL_AVX512 },
	{ "bf16 N=8 1026 B", { { 8, 512, 1026, 4, 3, 0, 0x8b, 0x10, false, NR_ELEM_BF16 } }, 1,
	  false, NR_KERNEL_SCALAR },
	{ "fp16 N=5 1002 B", { { 5, 256, 1002, 4, 4, 0, 0xf16, 0xFFFFF9, true, NR_ELEM_FP16 } }, 1,
	  false, NR_KERNEL_AVX512 },
	{ "fp16 N=1 1022 B", { { 1, 512, 1022, 4, 6, 0, 0x1f16, 0x800001, false, NR_ELEM_FP16 } }, 1,
	  false, NR_KERNEL_SCALAR },
	{ "fp16 N=2 mtu 4096 streaming", { { 2, 4096, 4098, 4, 3, 1, 0x2f16, 0x400, false, NR_ELEM_FP16 } }, 1,
	  false, NR_KERNEL_SCALAR },
	{ "fp32 N=3 + fp16 N=2", { { 3, 512, 1024, 4, 4, 0, 0x32, 0xFFFFF0, false },
				   { 2, 256, 766, 6, 4, 1, 0x16, 99, true, NR_ELEM_FP16 } }, 2,
	  false, NR_KERNEL_AVX512 },
	{ "bf16 N=3 chaos", { { 3, 512, 1026, 4, 10, 0, 0xc4a05, 0xFFFFF2, false, NR_ELEM_BF16 } }, 1,
	  true, NR_KERNEL_AVX512 },
};

/* A job that stops making progress fails on both, by its timeout. */
static void timeouts(void)
{
	struct gen_cfg c = { "N=3 timeout", { { 3, 256, 256, 4, 2, 0, 0x5, 0, false } }, 1,
			     false, NR_KERNEL_AUTO };

	struct gen_cfg d = { "N=3 refused contributions", { { 3, 256, 512, 4, 1, 0, 0x77, 0, false } },
			     1, false, NR_KERNEL_AUTO };

	/* bf16: a message of 255 elements (its last packet half a word short) */
	struct gen_cfg h = { "bf16 N=3 refused", { { 3, 256, 510, 4, 1, 0, 0x78, 0, false, NR_ELEM_BF16 } },
			     1, false, NR_KERNEL_AUTO };

	gen_timeout_run(&c, seed);
	gen_cases_run(&d, seed);
	gen_conflict_run(&d, seed);
	gen_cases_run(&h, seed);
	gen_conflict_run(&h, seed);
}

static void test_generated(void **state)
{
	uint64_t e[NR_ECTR_MAX], d[NR_FPGA_D_MAX];
	bool missing = false;

	(void)state;
	for (unsigned i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++)
		run(&cfgs[i]);
	timeouts();
	/* the traces must have reached every outcome the engine and the box count */
	rp_coverage(e, d);
	for (unsigned i = 0; i < NR_ECTR_MAX; i++)
		if (!e[i] && rp_rtl_keeps(i)) {    /* the status monitor is software only */
			printf("coverage: no trace moved engine counter %s\n", nr_engine_ctr_names[i]);
			missing = true;
		}
	for (unsigned i = 0; i < NR_FPGA_D_MAX; i++)
		if (!d[i] && i != NR_FPGA_D_OVERSIZE) {
			printf("coverage: no trace moved dataplane counter %s\n", rp_dctr_names[i]);
			missing = true;
		}
	assert_false(missing);
}

/* ---- the real captures ---------------------------------------------------- */

struct cap {
	unsigned n;
	uint32_t *len;
	uint8_t **b;
};

static bool cap_load(const char *path, struct cap *c)
{
	char eb[PCAP_ERRBUF_SIZE];
	pcap_t *p;
	struct pcap_pkthdr *h;
	const u_char *d;

	memset(c, 0, sizeof(*c));
	p = pcap_open_offline(path, eb);
	if (!p)
		return false;
	while (pcap_next_ex(p, &h, &d) == 1) {
		c->len = realloc(c->len, (c->n + 1) * sizeof(*c->len));
		c->b = realloc(c->b, (c->n + 1) * sizeof(*c->b));
		c->len[c->n] = h->caplen;
		c->b[c->n] = malloc(h->caplen ? h->caplen : 1);
		memcpy(c->b[c->n], d, h->caplen);
		c->n++;
	}
	pcap_close(p);
	return true;
}

static void cap_free(struct cap *c)
{
	for (unsigned i = 0; i < c->n; i++)
		free(c->b[i]);
	free(c->b);
	free(c->len);
}

/* A one-rank job on the first RC WRITE connection of a capture, or NULL. */
static struct nr_job_spec *cap_job(const struct cap *c)
{
	struct nr_job_spec *s = NULL;
	struct nr_pkt p;

	for (unsigned i = 0; i < c->n && !s; i++) {
		if (nr_parse(c->b[i], c->len[i], &p) != NR_PKT_ROCE || p.ipver != 4 ||
		    p.opcode < NR_OP_RC_WRITE_FIRST || p.opcode > NR_OP_RC_WRITE_ONLY_IMM)
			continue;
		s = calloc(1, sizeof(*s) + sizeof(s->conns[0]));
		s->n_conns = 1;
		s->mtu = 4096;
		s->msg_size = 65536;
		s->pool_msgs = 4;
		s->timeout_ms = 5000;
		s->mode = 0;
		s->result_key = 0x1234abcd;
		s->conns[0].src_ip = p.saddr;
		s->conns[0].dst_ip = p.daddr;
		s->conns[0].dst_qpn = p.qpn;
		s->conns[0].ipsn = p.psn;
		s->conns[0].src_qpn = 0xabcde;
		/* the sender's QP: DestQP of the ACKs coming back to it */
		for (unsigned k = 0; k < c->n; k++) {
			struct nr_pkt a;

			if (nr_parse(c->b[k], c->len[k], &a) == NR_PKT_ROCE && a.ipver == 4 &&
			    a.opcode == NR_OP_RC_ACK && a.daddr == p.saddr && a.saddr == p.daddr) {
				s->conns[0].src_qpn = a.qpn;
				break;
			}
		}
	}
	return s;
}

static void replay(const char *dir, const char *name)
{
	char path[1024];
	struct cap c;
	uint64_t frames, outputs, results, cycles;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!cap_load(path, &c))
		fail_msg("cannot read capture %s", path);
	for (int with_job = 0; with_job < 2; with_job++) {
		struct nr_job_spec *s = with_job ? cap_job(&c) : NULL;
		struct rp *r;

		if (with_job && !s)
			continue;
		r = rp_create(NR_KERNEL_AUTO);
		if (s)
			rp_job_add(r, 7, s);
		for (unsigned i = 0; i < c.n; i++)
			rp_frame(r, (uint8_t)(c.b[i][c.len[i] > 11 ? 11 : 0] & 7), c.b[i], c.len[i]);
		rp_check_counters(r);
		rp_stats(r, &frames, &outputs, &results, &cycles);
		printf("  %-58s %s %5llu frames, %5llu out (%4llu results): identical\n", name,
		       s ? "job   " : "no job", (unsigned long long)frames,
		       (unsigned long long)outputs, (unsigned long long)results);
		rp_destroy(r);
		free(s);
	}
	cap_free(&c);
}

static void replay_dir(const char *dir, unsigned *files)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *names[64];
	unsigned n = 0;

	if (!d)
		return;
	while ((de = readdir(d)) && n < 64)
		if (strstr(de->d_name, ".pcap"))
			names[n++] = strdup(de->d_name);
	closedir(d);
	for (unsigned i = 0; i < n; i++) {
		replay(dir, names[i]);
		free(names[i]);
	}
	*files += n;
}

static void test_captures(void **state)
{
	const char *dir = getenv("NR_VECTORS");
	char sub[1024];
	unsigned files = 0;
	DIR *d;

	(void)state;
	if (!dir || !(d = opendir(dir))) {
		printf("captures: %s is not there (NR_VECTORS; the real captures live in "
		       "../shared/vectors/roce): skipped\n", dir ? dir : "(unset)");
		skip();
	}
	closedir(d);
	replay_dir(dir, &files);
	snprintf(sub, sizeof(sub), "%s/icrc_unverifiable", dir);
	replay_dir(sub, &files);
	assert_true(files > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generated),
		cmocka_unit_test(test_captures),
	};
	const char *l = getenv("NR_RTL_LONG");

	seed = eng_seed("test_rtl_trace");
	if (l && atoi(l) > 0)
		scale = 8;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
