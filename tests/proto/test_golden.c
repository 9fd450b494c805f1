/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Golden packets: every capture in $NR_VECTORS (../shared/vectors/roce) and
 * its icrc_unverifiable/ folder, read with libpcap at run time.  Each RoCEv2
 * packet must parse and (outside icrc_unverifiable/) pass the ICRC; per-file
 * opcode counts must equal SOURCES.md; every other frame must be OTHER and
 * must not be UDP/4791 by an independent look at its bytes.  Mismatches print
 * a hexdump of the packet.  A missing captures directory is a failure.
 */
#include <dirent.h>
#include <unistd.h>
#include <stdlib.h>

#include <pcap/pcap.h>

#include "proto_test.h"

struct op_count {
	uint8_t op;
	unsigned n;
};

struct capture {
	const char *file;
	bool icrc_valid;          /* false: icrc_unverifiable/, every ICRC must fail */
	unsigned rocev2;          /* RoCE packets, per SOURCES.md */
	int frames;               /* total frames where SOURCES.md states it, else -1 */
	unsigned pad2;            /* packets with PadCnt 2 where SOURCES.md states it */
	struct op_count ops[10];  /* opcode counts, per SOURCES.md */
};

/* From SOURCES.md, table "Files with a valid ICRC" and "cannot be verified". */
static const struct capture captures[] = {
	{ "magnate3_nvme-discover_rxe-like.pcap", true, 61, -1, 0,
	  { { 0x04, 22 }, { 0x11, 25 }, { 0x06, 2 }, { 0x07, 2 }, { 0x08, 2 }, { 0x0A, 1 },
	    { 0x0C, 1 }, { 0x10, 1 }, { 0x64, 5 } } },
	{ "magnate3_02-2-write_ibdump_write_cx.pcap", true, 17, -1, 0,
	  { { 0x0A, 2 }, { 0x04, 4 }, { 0x11, 6 }, { 0x64, 5 } } },
	{ "magnate3_rdma-write-read_ibdump_read2_cx.pcap", true, 13, -1, 2,
	  { { 0x0A, 1 }, { 0x0C, 1 }, { 0x10, 1 }, { 0x04, 2 }, { 0x11, 3 }, { 0x64, 5 } } },
	{ "magnate3_send_recv-ibdump_send_cx.pcap", true, 9, -1, 0,
	  { { 0x04, 2 }, { 0x11, 2 }, { 0x64, 5 } } },
	{ "magnate3_nvme-discover2_cx.pcap", true, 31, -1, 0,
	  { { 0x04, 12 }, { 0x11, 12 }, { 0x0C, 1 }, { 0x10, 1 }, { 0x64, 5 } } },
	{ "magnate3_nvme-rdma-25echoTo27_cx.pcap", true, 45, -1, 0,
	  { { 0x00, 2 }, { 0x01, 3 }, { 0x02, 2 }, { 0x04, 18 }, { 0x11, 20 } } },
	{ "magnate3_nvme-rdma-idle_cx.pcap", true, 4, -1, 0,
	  { { 0x04, 2 }, { 0x11, 2 } } },
	{ "magnate3_mellanox-doc_ib_send_bw_over_roce_cx.pcap", true, 10, 45, 0,
	  { { 0x04, 5 }, { 0x11, 5 } } },
	{ "magnate3_mellanox-doc_rocev2_test_cx.pcap", true, 708, -1, 0,
	  { { 0x00, 120 }, { 0x01, 265 }, { 0x02, 148 }, { 0x11, 175 } } },
	{ "scapy-roce-uts_cx4lx_cnp_from-hex.pcap", true, 1, 1, 0,
	  { { 0x81, 1 } } },
	{ "icrc_unverifiable/magnate3_rdma-ping_dc_rc-small_sniffer.pcap", false, 21, -1, 0,
	  { { 0x0A, 16 }, { 0x11, 5 } } },
	{ "icrc_unverifiable/magnate3_rdma-ping_uc-sg_sniffer.pcap", false, 17, -1, 0,
	  { { 0x20, 9 }, { 0x22, 8 } } },
};
#define NCAPTURES (sizeof(captures) / sizeof(captures[0]))

static const char *vectors;

/* Independent of the parser: IPv4 (maybe VLAN) UDP with destination port 4791? */
static bool looks_udp4791(const uint8_t *f, uint32_t len)
{
	uint32_t l3 = 14;
	uint16_t type;

	if (len < 14)
		return false;
	type = nr_ld_be16(f + 12);
	if (type == NR_ETHERTYPE_VLAN && len >= 18) {
		type = nr_ld_be16(f + 16);
		l3 = 18;
	}
	if (type == NR_ETHERTYPE_IPV4 && len >= l3 + 20 && f[l3 + 9] == 17) {
		uint32_t l4 = l3 + (f[l3] & 15) * 4;

		return len >= l4 + 4 && nr_ld_be16(f + l4 + 2) == 4791;
	}
	if (type == NR_ETHERTYPE_IPV6 && len >= l3 + 44 && f[l3 + 6] == 17)
		return nr_ld_be16(f + l3 + 42) == 4791;
	return false;
}

static void check_capture(const struct capture *c)
{
	char path[4096], err[PCAP_ERRBUF_SIZE];
	unsigned counts[256] = { 0 }, roce = 0, pad2 = 0, other = 0, frames = 0, bad = 0;
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *pc;

	snprintf(path, sizeof(path), "%s/%s", vectors, c->file);
	pc = pcap_open_offline(path, err);
	if (!pc)
		fail_msg("%s: %s (the captures are part of the test environment)", path, err);
	assert_int_equal(pcap_datalink(pc), DLT_EN10MB);
	while (pcap_next_ex(pc, &h, &data) == 1) {
		struct nr_pkt p;
		int kind = nr_parse(data, h->caplen, &p);

		frames++;
		assert_int_equal(h->caplen, h->len);
		if (kind == NR_PKT_ROCE) {
			bool ok = nr_icrc_check(data, &p);

			roce++;
			counts[p.opcode]++;
			pad2 += p.pad == 2;
			if (ok != c->icrc_valid || p.end != h->caplen ||
			    p.pay_off + p.pay_len + p.pad + 4 != p.end) {
				fprintf(stderr, "%s frame %u: %s ICRC %s (stored %08x computed %08x), "
					"end %u of %u\n", c->file, frames, nr_opcode_name(p.opcode),
					ok ? "ok" : "BAD", nr_icrc_stored(data, &p),
					nr_icrc_compute(data, &p), p.end, h->caplen);
				pt_hexdump("packet", data, h->caplen);
				bad++;
			}
		} else if (kind == NR_PKT_MALFORMED || looks_udp4791(data, h->caplen)) {
			fprintf(stderr, "%s frame %u: kind %d (%s)\n", c->file, frames, kind,
				kind == NR_PKT_MALFORMED ? nr_malformed_str(p.bad) : "other");
			pt_hexdump("packet", data, h->caplen);
			bad++;
		} else {
			other++;
		}
	}
	pcap_close(pc);
	printf("%-64s frames=%u rocev2=%u other=%u\n", c->file, frames, roce, other);
	if (bad)
		fail_msg("%s: %u packets decoded wrongly (hexdumps above)", c->file, bad);
	assert_int_equal(roce, c->rocev2);
	if (c->frames >= 0)
		assert_int_equal(frames, (unsigned)c->frames);
	if (c->pad2)
		assert_int_equal(pad2, c->pad2);
	for (size_t k = 0; k < sizeof(c->ops) / sizeof(c->ops[0]) && c->ops[k].n; k++) {
		if (counts[c->ops[k].op] != c->ops[k].n)
			fail_msg("%s: %u x %s, SOURCES.md says %u", c->file, counts[c->ops[k].op],
				 nr_opcode_name(c->ops[k].op), c->ops[k].n);
		counts[c->ops[k].op] = 0;
	}
	for (int op = 0; op < 256; op++)
		if (counts[op])
			fail_msg("%s: %u x %s not listed in SOURCES.md", c->file, counts[op],
				 nr_opcode_name((uint8_t)op));
}

static void test_captures(void **state)
{
	for (size_t i = 0; i < NCAPTURES; i++)
		check_capture(&captures[i]);
}

/* Every .pcap in the directory (and icrc_unverifiable/) must be in the table. */
static void check_dir_listed(const char *sub)
{
	char path[4096];
	struct dirent *e;
	DIR *d;
	unsigned n = 0;

	snprintf(path, sizeof(path), "%s%s%s", vectors, *sub ? "/" : "", sub);
	d = opendir(path);
	if (!d)
		fail_msg("cannot open the captures directory %s: set NR_VECTORS or "
			 "-Dvectors_dir to ../shared/vectors/roce", path);
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		char rel[512];
		bool found = false;

		if (l < 5 || strcmp(e->d_name + l - 5, ".pcap"))
			continue;
		snprintf(rel, sizeof(rel), "%s%s%s", sub, *sub ? "/" : "", e->d_name);
		for (size_t i = 0; i < NCAPTURES; i++)
			found |= !strcmp(captures[i].file, rel);
		if (!found)
			fail_msg("%s/%s has no expected counts: add it to captures[] from SOURCES.md",
				 vectors, rel);
		n++;
	}
	closedir(d);
	assert_true(n > 0);
}

static void test_every_capture_listed(void **state)
{
	check_dir_listed("");
	check_dir_listed("icrc_unverifiable");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_capture_listed),
		cmocka_unit_test(test_captures),
	};

	vectors = getenv("NR_VECTORS");
	if (!vectors || !*vectors) {
		fprintf(stderr, "test_golden: NR_VECTORS is not set (meson passes vectors_dir)\n");
		return 1;
	}
	/* the captures live beside the repository, never in it: none, nothing to check */
	if (access(vectors, F_OK)) {
		printf("SKIP: test_golden: the real RoCEv2 captures are not at %s (read from "
		       "../shared/vectors/roce beside the checkout; meson configure "
		       "-Dvectors_dir=DIR)\n", vectors);
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
