/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the proto suites: a default flow, frame builders for the
 * cases nr_build_frame does not cover (IPv6, IPv4 options), an independent
 * bitwise CRC-32 and ICRC reference, and a hexdump for failure messages.
 */
#ifndef NR_PROTO_TEST_H
#define NR_PROTO_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "proto/roce_build.h"
#include "proto/roce_hdr.h"
#include "proto/roce_icrc.h"
#include "proto/roce_opcode.h"
#include "proto/roce_pkt.h"

#define FRAME_CAP 12000

static inline void pt_hexdump(const char *what, const uint8_t *b, size_t n)
{
	fprintf(stderr, "%s (%zu bytes):\n", what, n);
	for (size_t i = 0; i < n; i += 16) {
		fprintf(stderr, "  %04zx:", i);
		for (size_t j = i; j < i + 16 && j < n; j++)
			fprintf(stderr, " %02x", b[j]);
		fprintf(stderr, "\n");
	}
}

static inline struct nr_flow pt_flow(void)
{
	struct nr_flow f = {
		.src_mac = { 0x02, 0, 0, 0, 0, 0x01 },
		.dst_mac = { 0x02, 0, 0, 0, 0, 0x02 },
		.saddr = htonl(0x0A000001),
		.daddr = htonl(0x0A000002),
		.sport = 49152,
		.tos = 0x02,
		.ttl = 0,
		.ip_id = 0x1234,
		.frag_off = NR_IPV4_DF,
		.dqpn = 0x000123,
	};
	return f;
}

/* Bitwise reflected CRC-32 (zlib's), independent of ISA-L. */
static inline uint32_t pt_crc32(uint32_t crc, const uint8_t *b, size_t n)
{
	crc = ~crc;
	for (size_t i = 0; i < n; i++) {
		crc ^= b[i];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
	}
	return ~crc;
}

/*
 * Reference ICRC, written from the rule in proto/README.md ("RoCEv2 facts")
 * without the library: copy [l3, end - 4), mask, prepend 8 x 0xFF, CRC the lot.
 */
static inline uint32_t pt_ref_icrc(const uint8_t *frame, uint32_t l3, uint32_t end)
{
	static uint8_t buf[70000];
	uint32_t n = end - 4 - l3, l4;

	memset(buf, 0xFF, 8);
	memcpy(buf + 8, frame + l3, n);
	if ((buf[8] >> 4) == 4) {
		buf[8 + 1] = 0xFF;               /* TOS */
		buf[8 + 8] = 0xFF;               /* TTL */
		buf[8 + 10] = buf[8 + 11] = 0xFF; /* checksum */
		l4 = (buf[8] & 0x0F) * 4;
	} else {
		buf[8] |= 0x0F;                  /* traffic class + flow label */
		buf[8 + 1] = buf[8 + 2] = buf[8 + 3] = 0xFF;
		buf[8 + 7] = 0xFF;               /* hop limit */
		l4 = 40;
	}
	buf[8 + l4 + 6] = buf[8 + l4 + 7] = 0xFF; /* UDP checksum */
	buf[8 + l4 + 8 + 4] = 0xFF;               /* BTH byte 4 */
	return pt_crc32(0, buf, n + 8);
}

static inline uint32_t pt_ld_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * Turn a built IPv4 frame (no VLAN) into the same packet over IPv6 with
 * traffic class tc and flow label fl; the ICRC is computed by the reference.
 * Returns the new length.
 */
static inline uint32_t pt_to_ipv6(const uint8_t *v4, uint32_t len, uint8_t *out, uint8_t tc,
				  uint32_t fl)
{
	uint32_t udp_total = len - 14 - 20;
	struct nr_ipv6_hdr ip6;

	memcpy(out, v4, 12);
	nr_st_be16(out + 12, NR_ETHERTYPE_IPV6);
	memset(&ip6, 0, sizeof(ip6));
	nr_st_be32(&ip6.vtc_flow, 6u << 28 | (uint32_t)tc << 20 | (fl & 0xFFFFF));
	nr_st_be16(&ip6.payload_len, (uint16_t)udp_total);
	ip6.next_hdr = NR_IPPROTO_UDP;
	ip6.hop_limit = 64;
	for (int i = 0; i < 16; i++) {
		ip6.saddr[i] = (uint8_t)(0xfd + i);
		ip6.daddr[i] = (uint8_t)(0x20 + i);
	}
	memcpy(out + 14, &ip6, sizeof(ip6));
	memcpy(out + 54, v4 + 34, udp_total);
	uint32_t n = 54 + udp_total;
	uint32_t crc = pt_ref_icrc(out, 14, n);
	out[n - 4] = (uint8_t)crc;
	out[n - 3] = (uint8_t)(crc >> 8);
	out[n - 2] = (uint8_t)(crc >> 16);
	out[n - 1] = (uint8_t)(crc >> 24);
	return n;
}

/* Every opcode the table defines, in order. */
static inline int pt_all_opcodes(uint8_t *ops)
{
	int n = 0;

	for (int op = 0; op < 256; op++)
		if (nr_opcode_info((uint8_t)op))
			ops[n++] = (uint8_t)op;
	return n;
}

#endif /* NR_PROTO_TEST_H */
