/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RoCEv2 invariant CRC (IBTA annex A17.3.3), on ISA-L's crc32_gzip_refl
 * (the same CRC-32 zlib computes):
 *   CRC-32 over 8 bytes 0xFF (the masked LRH),
 *          the IP header with IPv4 TOS, TTL, checksum (IPv6 traffic class,
 *          flow label, hop limit) set to all ones,
 *          the UDP header with its checksum set to all ones,
 *          the BTH with byte 4 (FECN/BECN/resv) set to all ones,
 *          the extension headers and the payload with its pad,
 * stored little-endian in the 4 bytes after the payload.
 * Masked fields may change in flight (ECN marking, TTL) without a new ICRC;
 * any change to payload, QPN, PSN or addresses needs one.
 */
#ifndef NR_ROCE_ICRC_H
#define NR_ROCE_ICRC_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "roce_pkt.h"

/*
 * CRC-32 (zlib's), chained: crc is the previous call's result, 0 to start.
 * On ISA-L's crc32_gzip_refl, whose AVX-512 kernel returns with the upper
 * halves of the vector registers dirty: ISA-L leaves VZEROUPPER to its
 * callers (intel/isa-l issue 24), and code built for plain SSE that runs next
 * (ours, DPDK's) then pays a penalty on its vector instructions: about 150 ns
 * a frame in the box's ICRC check (dataplane/README.md, "What bounds a
 * packet's cost").  nr_crc32 clears them on CPUs with AVX; call it, not
 * crc32_gzip_refl.  Below 16 bytes it is zlib's crc32, which is faster there.
 */
uint32_t nr_crc32(uint32_t crc, const void *buf, size_t len);

/*
 * ICRC of a frame that nr_parse() found to be NR_PKT_ROCE (p->ipver 4 or 6).
 * A record from nr_parse_transport() has no IP header to cover: use
 * nr_icrc_ip4() for those (compute returns 0 and check false on them).
 */
uint32_t nr_icrc_compute(const uint8_t *frame, const struct nr_pkt *p);
/* The ICRC stored in the frame (the 4 bytes before p->end). */
uint32_t nr_icrc_stored(const uint8_t *frame, const struct nr_pkt *p);
bool nr_icrc_check(const uint8_t *frame, const struct nr_pkt *p);
/*
 * nr_icrc_check, keeping in p the CRC of the masked headers through the BTH
 * (p->icrc_head, p->icrc_head_ok): nr_icrc_compute_tail() starts from it
 * instead of reading those 48 or more bytes again.  A frame that goes out
 * with new bytes after its BTH (payload, ImmDt) and the same headers through
 * its BTH but for masked fields (ECN, TTL, checksums) keeps the same head:
 * the box's results.  Whoever changes an unmasked field through the BTH
 * (addresses, ports, QPN, PSN, opcode) clears p->icrc_head_ok.
 */
bool nr_icrc_check_keep(const uint8_t *frame, struct nr_pkt *p);
/* Recompute and store. */
void nr_icrc_update(uint8_t *frame, const struct nr_pkt *p);
/*
 * Frames that end in the same bytes (the N results of one aggregated slot
 * carry one payload behind each connection's own headers): the CRC-32 of the
 * shared tail is computed once, and each frame's ICRC from its headers and
 * that CRC, as zlib's crc32_combine() would join them.  struct nr_crc_shift
 * is the combine step for one tail length, as four byte tables (4 KiB).
 */
struct nr_crc_shift {
	uint32_t len;              /* tail bytes this table shifts over */
	uint32_t t[4][256];
};

void nr_crc_shift_init(struct nr_crc_shift *k, uint32_t len);

/* The CRC-32 state crc carried over k->len more bytes of zeros: with tail_crc
 * = crc32(0, tail, k->len), crc32(crc, tail) = nr_crc_shift(k, crc) ^ tail_crc. */
static inline uint32_t nr_crc_shift(const struct nr_crc_shift *k, uint32_t crc)
{
	return k->t[0][crc & 0xFF] ^ k->t[1][(crc >> 8) & 0xFF] ^
	       k->t[2][(crc >> 16) & 0xFF] ^ k->t[3][crc >> 24];
}

/*
 * ICRC of a RoCE frame whose last k->len bytes before the ICRC (payload and
 * pad) have CRC-32 tail_crc (crc32_gzip_refl(0, tail, k->len)): only the
 * bytes before the tail are read, and with p->icrc_head_ok only those after
 * the BTH (extension headers).  A frame shorter than its headers plus the
 * tail gets nr_icrc_compute().
 */
uint32_t nr_icrc_compute_tail(const uint8_t *frame, const struct nr_pkt *p, uint32_t tail_crc,
			      const struct nr_crc_shift *k);

/* Store an ICRC value little-endian at `at` (4 bytes), as the wire carries it. */
void nr_icrc_store(uint8_t *at, uint32_t crc);

/*
 * The IPv4 fields of a UDP-socket endpoint's packet that the ICRC covers and
 * the transport headers do not: what the kernel will put in (send) or did put
 * in (receive) the IP and UDP headers.  A socket bound to one address and sending
 * with IP_PMTUDISC_DO (DF) from an unconnected socket gets IP ID 0 on Linux.
 */
struct nr_icrc_ip4 {
	uint32_t saddr, daddr;   /* network order */
	uint16_t sport, dport;   /* host order */
	uint16_t id;             /* host order */
	uint16_t frag_off;       /* host order, e.g. NR_IPV4_DF */
};

/* ICRC over transport bytes [bth, bth + len) (BTH .. pad, ICRC excluded). */
uint32_t nr_icrc_ip4(const struct nr_icrc_ip4 *ip, const uint8_t *bth, size_t len);
/*
 * The same for a packet in pieces (a gather send): hlen header bytes at hdr
 * (BTH first), plen payload bytes at pay, then the payload's pad (zeros, to a
 * multiple of 4) that the ICRC also covers.
 */
uint32_t nr_icrc_ip4_gather(const struct nr_icrc_ip4 *ip, const uint8_t *hdr, size_t hlen,
			    const uint8_t *pay, size_t plen);

#endif /* NR_ROCE_ICRC_H */
