/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wire identity against real RNIC captures (../shared/vectors/roce, env
 * NR_VECTORS): for every RC RDMA WRITE and ACK packet of the captures, the
 * packet builder the soft transport sends every packet with (proto's
 * nr_build_transport, MigReq set, SE clear) is given the same fields -- addresses,
 * UDP ports, IP ID and flags, DestQP, PSN, AckReq, RETH, ImmDt, AETH, payload
 * -- and must produce the captured UDP payload byte for byte, ICRC included.
 * Packets an RNIC marks differently from us (SE set, MigReq clear) are
 * counted and reported, never compared.
 *
 * The RNIC profile's rules against the same captures: what the RNICs do
 * where the captures show it (every message's last packet asks for an ACK,
 * no middle packet does; ACKs carry an ACK syndrome, MSNs that never go back
 * and count messages) must be what our transport does on the same traffic.
 */
#include "soft_util.h"

#include <unistd.h>
#include <pcap/pcap.h>

#include "host/transport/tp_soft_types.h"
#include "proto/roce_opcode.h"

static const char *vectors;

struct golden_count {
	unsigned compared, skipped;
	unsigned by_op[256];
};

static bool ours(uint8_t op)
{
	return op == NR_OP_RC_ACK || (op >= NR_OP_RC_WRITE_FIRST && op <= NR_OP_RC_WRITE_ONLY_IMM);
}

static void hexdump(const char *what, const uint8_t *b, uint32_t n)
{
	printf("# %s:", what);
	for (uint32_t i = 0; i < n; i++)
		printf("%s%02x", i % 16 ? " " : "\n#   ", b[i]);
	printf("\n");
}

/* Rebuild one captured packet with our writer; compare. */
static void rebuild(const char *file, unsigned idx, const uint8_t *f, const struct nr_pkt *p,
		    struct golden_count *c)
{
	const struct nr_ipv4_hdr *ip = (const struct nr_ipv4_hdr *)(f + p->l3_off);
	const struct nr_udp_hdr *udp = (const struct nr_udp_hdr *)(f + p->l4_off);
	const struct nr_bth *bth = (const struct nr_bth *)(f + p->bth_off);
	struct nr_icrc_ip4 ipx = {
		.saddr = ip->saddr, .daddr = ip->daddr,
		.sport = nr_ld_be16(&udp->sport), .dport = nr_ld_be16(&udp->dport),
		.id = nr_ld_be16(&ip->id), .frag_off = nr_ld_be16(&ip->frag_off),
	};
	const struct nr_build_args a = {
		.opcode = p->opcode, .psn = p->psn, .ackreq = p->ackreq, .migreq = true,
		.va = p->reth_va, .rkey = p->reth_rkey, .dma_len = p->reth_len, .imm = p->imm,
		.syndrome = p->aeth_syn, .msn = p->aeth_msn,
	};
	uint8_t buf[SOFT_PKT_MAX];
	uint32_t want = (uint32_t)(p->end - p->bth_off);
	int n;

	if (nr_bth_se(bth) || !nr_bth_mig(bth) || p->fecn || p->becn ||
	    nr_bth_pkey(bth) != NR_BTH_PKEY_DEFAULT || p->pay_len > SOFT_MAX_MTU) {
		c->skipped++;
		return;
	}
	n = nr_build_transport(buf, sizeof(buf), &ipx, p->qpn, &a, f + p->pay_off, p->pay_len);
	if (n < 0 || (uint32_t)n != want || memcmp(buf, f + p->bth_off, (size_t)n)) {
		hexdump("captured", f + p->bth_off, want);
		if (n > 0)
			hexdump("ours", buf, (uint32_t)n);
		fail_msg("%s packet %u (%s psn %u): our packet differs from the RNIC's", file, idx,
			 nr_opcode_name(p->opcode), p->psn);
	}
	c->compared++;
	c->by_op[p->opcode]++;
}

/* Every whole, well-formed RoCEv2 frame of a capture to fn (idx counts all frames). */
static void each_roce(const char *name, void (*fn)(void *arg, unsigned idx, const uint8_t *f,
						   const struct nr_pkt *p), void *arg)
{
	char path[1024], err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const uint8_t *f;
	unsigned idx = 0;
	pcap_t *pc;

	snprintf(path, sizeof(path), "%s/%s", vectors, name);
	pc = pcap_open_offline(path, err);
	if (!pc)
		fail_msg("cannot read %s: %s", path, err);
	while (pcap_next_ex(pc, &h, &f) == 1) {
		struct nr_pkt p;

		idx++;
		if (h->caplen == h->len && nr_parse(f, h->caplen, &p) == NR_PKT_ROCE)
			fn(arg, idx, f, &p);
	}
	pcap_close(pc);
}

struct golden_arg {
	const char *file;
	struct golden_count *c;
};

static void golden_one(void *arg, unsigned idx, const uint8_t *f, const struct nr_pkt *p)
{
	struct golden_arg *g = arg;

	if (p->ipver == 4 && ours(p->opcode) && nr_icrc_check(f, p))
		rebuild(g->file, idx, f, p, g->c);
}

static void golden_file(const char *name, struct golden_count *c)
{
	struct golden_arg g = { name, c };

	each_roce(name, golden_one, &g);
}

static void test_writer_matches_rnic_captures(void **state)
{
	static const char *const files[] = {
		"magnate3_nvme-discover_rxe-like.pcap",
		"magnate3_02-2-write_ibdump_write_cx.pcap",
		"magnate3_rdma-write-read_ibdump_read2_cx.pcap",
		"magnate3_send_recv-ibdump_send_cx.pcap",
		"magnate3_nvme-discover2_cx.pcap",
		"magnate3_nvme-rdma-25echoTo27_cx.pcap",
		"magnate3_mellanox-doc_rocev2_test_cx.pcap",
	};
	struct golden_count c = { 0 };
	char probe[1024];

	snprintf(probe, sizeof(probe), "%s/SOURCES.md", vectors);
	if (access(probe, R_OK))
		fail_msg("%s: the captures directory has no SOURCES.md", vectors);
	for (unsigned i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		golden_file(files[i], &c);
	printf("# byte-identical: %u packets (WRITE_FIRST %u MIDDLE %u LAST %u ONLY %u ACK %u); "
	       "%u with SE/FECN/BECN or MigReq clear not compared\n", c.compared,
	       c.by_op[NR_OP_RC_WRITE_FIRST], c.by_op[NR_OP_RC_WRITE_MIDDLE],
	       c.by_op[NR_OP_RC_WRITE_LAST], c.by_op[NR_OP_RC_WRITE_ONLY], c.by_op[NR_OP_RC_ACK],
	       c.skipped);
	assert_true(c.by_op[NR_OP_RC_WRITE_FIRST] >= 1);
	assert_true(c.by_op[NR_OP_RC_WRITE_MIDDLE] >= 1);
	assert_true(c.by_op[NR_OP_RC_WRITE_LAST] >= 1);
	assert_true(c.by_op[NR_OP_RC_WRITE_ONLY] >= 1);
	assert_true(c.by_op[NR_OP_RC_ACK] >= 50);
}

/* ---- the RNIC profile's rules, from the captures and from our transport ---- */

struct rules {
	unsigned last, last_ackreq, middle, middle_ackreq, acks, acks_ack_syn, msn_back;
	unsigned nflows;
	struct { uint32_t ip, qpn, msn; bool seen; } flow[64];   /* ACK streams */
};

static bool op_last(uint8_t op)
{
	return op == NR_OP_RC_SEND_LAST || op == NR_OP_RC_SEND_LAST_IMM ||
	       op == NR_OP_RC_SEND_ONLY || op == NR_OP_RC_SEND_ONLY_IMM ||
	       op == NR_OP_RC_WRITE_LAST_IMM || op == NR_OP_RC_WRITE_ONLY_IMM ||
	       op == NR_OP_RC_WRITE_LAST || op == NR_OP_RC_WRITE_ONLY;
}

/* One RC packet (ip: its destination, 0 for our loopback pair). */
static void rules_add(struct rules *r, uint32_t ip, uint8_t op, bool ackreq, uint32_t qpn,
		      uint8_t syn, uint32_t msn)
{
	if (op == NR_OP_RC_ACK) {
		unsigned f = 0;

		r->acks++;
		r->acks_ack_syn += nr_syn_is_ack(syn);
		while (f < r->nflows && (r->flow[f].ip != ip || r->flow[f].qpn != qpn))
			f++;
		if (f == r->nflows && r->nflows < 64)
			r->flow[r->nflows++] = (typeof(r->flow[0])){ .ip = ip, .qpn = qpn };
		if (f < 64) {
			if (r->flow[f].seen && nr_psn_diff(msn, r->flow[f].msn) < 0)
				r->msn_back++;
			r->flow[f].msn = msn;
			r->flow[f].seen = true;
		}
	} else if (op_last(op)) {
		r->last++;
		r->last_ackreq += ackreq;
	} else if (op == NR_OP_RC_SEND_MIDDLE || op == NR_OP_RC_WRITE_MIDDLE) {
		r->middle++;
		r->middle_ackreq += ackreq;
	}
}

static void rules_print(const char *who, const struct rules *r)
{
	printf("# %s: last packets %u (AckReq %u), middle %u (AckReq %u), ACKs %u (ACK syndrome "
	       "%u, MSN going back %u)\n", who, r->last, r->last_ackreq, r->middle,
	       r->middle_ackreq, r->acks, r->acks_ack_syn, r->msn_back);
}

static void rules_check(const char *who, const struct rules *r)
{
	rules_print(who, r);
	assert_true(r->last > 0 && r->middle > 0 && r->acks > 0);
	assert_int_equal(r->last_ackreq, r->last);
	assert_int_equal(r->middle_ackreq, 0);
	assert_int_equal(r->acks_ack_syn, r->acks);
	assert_int_equal(r->msn_back, 0);
}

static void rules_one(void *arg, unsigned idx, const uint8_t *f, const struct nr_pkt *p)
{
	if (p->mask & NR_OPF_RC)
		rules_add(arg, p->daddr, p->opcode, p->ackreq, p->qpn, p->aeth_syn, p->aeth_msn);
}

struct rules_tap {
	struct rules r;
	unsigned ackreq;
};

static int rules_filter(void *arg, enum nr_soft_dir dir, uint8_t *pkt, uint32_t len)
{
	struct rules_tap *t = arg;
	const struct nr_bth *b = (const struct nr_bth *)pkt;
	const struct nr_aeth *ae = (const struct nr_aeth *)(pkt + sizeof(*b));

	if (dir != NR_SOFT_TX)
		return NR_SOFT_PASS;
	t->ackreq += nr_bth_ackreq(b);
	rules_add(&t->r, 0, pkt[0], nr_bth_ackreq(b), nr_bth_qpn(b),
		  pkt[0] == NR_OP_RC_ACK ? nr_aeth_syn(ae) : 0,
		  pkt[0] == NR_OP_RC_ACK ? nr_aeth_msn(ae) : 0);
	return NR_SOFT_PASS;
}

static void test_rnic_profile_matches_captures(void **state)
{
	static const char *const files[] = {
		"magnate3_mellanox-doc_rocev2_test_cx.pcap",
		"magnate3_nvme-rdma-25echoTo27_cx.pcap",
		"magnate3_02-2-write_ibdump_write_cx.pcap",
		"magnate3_nvme-discover2_cx.pcap",
	};
	struct rules cap = { 0 };
	struct rules_tap ours = { 0 };
	struct pair *const pp = &tu_pair;
	uint32_t sizes[40];
	size_t offs[40];
	uint64_t seed = 11;

	for (unsigned i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		each_roce(files[i], rules_one, &cap);
	rules_check("ConnectX captures", &cap);
	/* The captures' shape: messages of 4 MTU-sized packets, several in flight. */
	pair_open(pp, "127.0.0.61", "127.0.0.62", 1024, 40 * 4096);
	for (unsigned i = 0; i < 40; i++) {
		sizes[i] = 4096;
		offs[i] = (size_t)i * 4096;
	}
	tu_fill(pp->sbuf, pp->len, &seed);
	nr_tp_soft_set_filter(pp->a, rules_filter, &ours);
	nr_tp_soft_set_filter(pp->b, rules_filter, &ours);
	pair_transfer(pp, 40, sizes, offs, 8, 1, 10000);
	rules_check("our RNIC profile", &ours.r);
	/* ACKs coalesce: never more ACKs than packets asking for one */
	assert_true(ours.r.acks <= ours.ackreq);
	pair_close(pp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writer_matches_rnic_captures),
		cmocka_unit_test_teardown(test_rnic_profile_matches_captures, tu_teardown),
	};

	vectors = getenv("NR_VECTORS");
	if (!vectors)
		vectors = "../shared/vectors/roce";
	/* the captures live beside the repository, never in it: none, nothing to check */
	if (access(vectors, F_OK)) {
		printf("SKIP: soft-golden: the real RoCEv2 captures are not at %s (read from "
		       "../shared/vectors/roce beside the checkout; meson configure "
		       "-Dvectors_dir=DIR)\n", vectors);
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
