/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nr-pcap: decode the RoCEv2 packets of pcap/pcapng captures and check their
 * ICRC.
 *
 *   nr-pcap [-v] FILE...
 *
 * The last line is always the totals over all files:
 *   rocev2=N icrc_ok=N icrc_bad=N malformed=N other=N
 * Exit 0 when no packet failed the ICRC and none was malformed, 1 otherwise,
 * 2 when a file cannot be read or has an unsupported link type.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "proto/roce_icrc.h"
#include "proto/roce_pkt.h"

#define SLL_HDR_LEN	16
#define SLL2_HDR_LEN	20
#define FRAME_MAX	65536

struct totals {
	unsigned long rocev2, icrc_ok, icrc_bad, malformed, other;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: nr-pcap [-v] FILE...\n"
		"Decode the RoCEv2 packets of pcap/pcapng captures and check their ICRC.\n"
		"  -v, --verbose  one line per RoCEv2 packet\n"
		"  -h, --help     this text\n"
		"Link types: Ethernet, Linux cooked capture (SLL, SLL2).\n"
		"Last line: rocev2=N icrc_ok=N icrc_bad=N malformed=N other=N\n"
		"Exit status: 0 all good, 1 ICRC failures or malformed RoCEv2, 2 unreadable file.\n");
}

static void print_pkt(const char *file, unsigned long n, const struct nr_pkt *p, bool ok)
{
	printf("%s #%lu %s qpn=0x%06" PRIx32 " psn=%" PRIu32, file, n, nr_opcode_name(p->opcode),
	       p->qpn, p->psn);
	if (p->mask & NR_OPF_RETH)
		printf(" reth(va=0x%" PRIx64 " rkey=0x%" PRIx32 " len=%" PRIu32 ")",
		       p->reth_va, p->reth_rkey, p->reth_len);
	if (p->mask & NR_OPF_AETH)
		printf(" aeth(syn=0x%02x msn=%" PRIu32 ")", p->aeth_syn, p->aeth_msn);
	if (p->mask & NR_OPF_IMMDT)
		printf(" imm=0x%08" PRIx32, p->imm);
	if (p->mask & NR_OPF_DETH)
		printf(" deth(qkey=0x%" PRIx32 " sqp=0x%" PRIx32 ")", p->deth_qkey, p->deth_sqp);
	if (p->ackreq)
		printf(" ackreq");
	if (p->becn)
		printf(" becn");
	if (p->fecn)
		printf(" fecn");
	printf(" pad=%u payload=%u ICRC %s\n", p->pad, p->pay_len, ok ? "ok" : "BAD");
}

/*
 * Turn a Linux cooked capture record into an Ethernet frame: a zero MAC pair
 * and the protocol type in front of the network header.
 */
static const uint8_t *from_sll(const uint8_t *data, uint32_t caplen, int dlt, uint8_t *frame,
			       uint32_t *len)
{
	uint32_t hl = dlt == DLT_LINUX_SLL ? SLL_HDR_LEN : SLL2_HDR_LEN;
	uint32_t proto_off = dlt == DLT_LINUX_SLL ? 14 : 0;

	if (caplen < hl || caplen - hl > FRAME_MAX - sizeof(struct nr_eth_hdr)) {
		*len = 0;
		return frame;
	}
	memset(frame, 0, 2 * NR_ETH_ALEN);
	memcpy(frame + 2 * NR_ETH_ALEN, data + proto_off, 2);
	memcpy(frame + sizeof(struct nr_eth_hdr), data + hl, caplen - hl);
	*len = caplen - hl + sizeof(struct nr_eth_hdr);
	return frame;
}

static void count(const char *file, unsigned long n, const uint8_t *frame, uint32_t len,
		  bool verbose, struct totals *t)
{
	struct nr_pkt p;
	bool ok;

	switch (nr_parse(frame, len, &p)) {
	case NR_PKT_ROCE:
		ok = nr_icrc_check(frame, &p);
		t->rocev2++;
		if (ok)
			t->icrc_ok++;
		else
			t->icrc_bad++;
		if (verbose)
			print_pkt(file, n, &p, ok);
		break;
	case NR_PKT_MALFORMED:
		t->malformed++;
		if (verbose)
			printf("%s #%lu malformed RoCEv2: %s (opcode 0x%02x)\n", file, n,
			       nr_malformed_str(p.bad), p.opcode);
		break;
	default:
		t->other++;
		break;
	}
}

/* Returns 0, or 2 when the file cannot be read. */
static int read_file(const char *file, bool verbose, struct totals *t, uint8_t *frame)
{
	char err[PCAP_ERRBUF_SIZE] = "";
	struct pcap_pkthdr *h;
	const u_char *data;
	unsigned long n = 0;
	pcap_t *pc;
	int dlt, rc;

	pc = pcap_open_offline(file, err);
	if (!pc) {
		fprintf(stderr, "nr-pcap: cannot read %s: %s\n", file, err);
		return 2;
	}
	dlt = pcap_datalink(pc);
	if (dlt != DLT_EN10MB && dlt != DLT_LINUX_SLL && dlt != DLT_LINUX_SLL2) {
		fprintf(stderr,
			"nr-pcap: %s: link type %s is not supported (Ethernet or Linux cooked "
			"capture only; capture on an Ethernet interface or with -i any)\n",
			file, pcap_datalink_val_to_name(dlt) ? pcap_datalink_val_to_name(dlt) : "?");
		pcap_close(pc);
		return 2;
	}
	while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
		const uint8_t *f = data;
		uint32_t len = h->caplen;

		n++;
		if (dlt != DLT_EN10MB)
			f = from_sll(data, h->caplen, dlt, frame, &len);
		count(file, n, f, len, verbose, t);
	}
	if (rc == PCAP_ERROR) {
		fprintf(stderr, "nr-pcap: cannot read %s: %s (after %lu packets)\n", file,
			pcap_geterr(pc), n);
		pcap_close(pc);
		return 2;
	}
	pcap_close(pc);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct totals t = { 0 };
	bool verbose = false;
	uint8_t *frame;
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	frame = malloc(FRAME_MAX);
	if (!frame) {
		fprintf(stderr, "nr-pcap: out of memory\n");
		return 2;
	}
	for (int i = optind; i < argc; i++)
		if (read_file(argv[i], verbose, &t, frame))
			rc = 2;
	free(frame);
	printf("rocev2=%lu icrc_ok=%lu icrc_bad=%lu malformed=%lu other=%lu\n",
	       t.rocev2, t.icrc_ok, t.icrc_bad, t.malformed, t.other);
	if (rc)
		return rc;
	return t.icrc_bad || t.malformed ? 1 : 0;
}
