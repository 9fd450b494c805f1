// SPDX-License-Identifier: BSD-3-Clause
/*
 * Wire identity against real RNIC captures (../shared/vectors/roce, env
 * NR_VECTORS): for every RC RDMA WRITE and ACK packet of the captures, the
 * packet builder the soft transport sends every packet with (proto's
 * nr_build_transport, MigReq set, SE clear) is given the same fields -- addresses,
 * UDP ports, IP ID and flags, DestQP, PSN, AckReq, RETH, ImmDt, AETH, payload
 * -- and must produce the captured UDP payload byte for byte, ICRC included.
 * Packets an RNIC marks differently from us (SE set, MigReq clear) are
 * counted and reported, never compared.
 */
#include "soft_util.h"

#include <unistd.h>
#include <pcap/pcap.h>

#include "host/tp_soft_types.h"
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

static void golden_file(const char *name, struct golden_count *c)
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
		if (h->caplen != h->len || nr_parse(f, h->caplen, &p) != NR_PKT_ROCE ||
		    p.ipver != 4 || !ours(p.opcode) || !nr_icrc_check(f, &p))
			continue;
		rebuild(name, idx, f, &p, c);
	}
	pcap_close(pc);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writer_matches_rnic_captures),
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
