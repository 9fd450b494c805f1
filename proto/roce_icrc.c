/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RoCEv2 ICRC (see roce_icrc.h), rxe_icrc.c style: the masked headers are
 * copied into a small stack buffer and CRC'd, then the CRC continues directly
 * over the frame from the first byte after the BTH to the ICRC, so the payload
 * is never copied.  CRC-32 on ISA-L's crc32_gzip_refl through nr_crc32 (zlib's
 * crc32 below 16 bytes), which chains like zlib's crc32 (the previous result
 * is the next call's seed, 0 to start).
 */
#include <string.h>

#include <isa-l/crc.h>
#include <zlib.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "proto/roce_icrc.h"

uint32_t nr_crc32(uint32_t crc, const void *buf, size_t len)
{
	/* below 16 bytes ISA-L takes a byte loop (18.5 ns for the 4 bytes of
	 * an ImmDt here), zlib's tables 3.4 ns; an empty call skips both */
	if (len == 0)           /* a WRITE MIDDLE result's extension headers */
		return crc;
	if (len < 16)
		return (uint32_t)crc32(crc, buf, (uInt)len);
	crc = crc32_gzip_refl(crc, buf, len);
#if defined(__x86_64__)
	/* ISA-L's AVX-512 kernel leaves the vector registers' upper halves
	 * dirty (VZEROUPPER is the caller's: see roce_icrc.h) */
	if (__builtin_cpu_supports("avx"))
		__asm__ volatile("vzeroupper" ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
				 "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",
				 "xmm14", "xmm15");
#endif
	return crc;
}

#define LRH_MASK_LEN	8
#define IPV4_MAX_HDR	60

/* Masked LRH + the longest IP header + UDP + BTH. */
#define MASKED_MAX	(LRH_MASK_LEN + IPV4_MAX_HDR + sizeof(struct nr_udp_hdr) + sizeof(struct nr_bth))

static void mask_ipv4(uint8_t *ip)
{
	struct nr_ipv4_hdr *h = (struct nr_ipv4_hdr *)ip;

	h->tos = 0xFF;
	h->ttl = 0xFF;
	memset(&h->check, 0xFF, sizeof(h->check));
}

static void mask_ipv6(uint8_t *ip)
{
	struct nr_ipv6_hdr *h = (struct nr_ipv6_hdr *)ip;

	/* Version stays, traffic class and flow label become all ones. */
	h->vtc_flow = htonl(ntohl(h->vtc_flow) | 0x0FFFFFFFu);
	h->hop_limit = 0xFF;
}

static void mask_udp_bth(uint8_t *udp)
{
	memset(&((struct nr_udp_hdr *)udp)->check, 0xFF, sizeof(uint16_t));
	udp[sizeof(struct nr_udp_hdr) + NR_BTH_RESV_BYTE] = 0xFF;
}

#if defined(__SSE2__)
/*
 * The common case, IPv4 without options: the 48 masked header bytes are the
 * 48 frame bytes from 8 before the IP header (the tail of the Ethernet header,
 * replaced by the 0xFF of the LRH) to the end of the BTH, with the masked
 * fields ORed to all ones.  They are built in three 16-byte registers and
 * stored as the three 16-byte chunks ISA-L loads, so its loads are forwarded
 * from whole stores.  The generic path (memcpy, then byte stores of the
 * masks) makes every 16-byte load span several pending stores: the load waits
 * for them to commit, about 15 ns a packet here, twice per result.
 */
static uint32_t icrc_ip4_hdr(const uint8_t *frame, const struct nr_pkt *p)
{
	/* chunk 0: LRH (8 x FF) + IP 0..7 (TOS at 1); chunk 1: IP 8..19 (TTL 8,
	 * checksum 10-11) + UDP 0..3; chunk 2: UDP 4..7 (checksum 6-7) + BTH
	 * (byte 4 at chunk offset 8) */
	const __m128i m0 = _mm_set_epi8(0, 0, 0, 0, 0, 0, -1, 0, -1, -1, -1, -1, -1, -1, -1, -1);
	const __m128i m1 = _mm_set_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, 0, -1);
	const __m128i m2 = _mm_set_epi8(0, 0, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, -1, -1, 0, 0);
	const uint8_t *h = frame + p->l3_off - LRH_MASK_LEN;
	__m128i buf[3];

	buf[0] = _mm_or_si128(_mm_loadu_si128((const __m128i *)h), m0);
	buf[1] = _mm_or_si128(_mm_loadu_si128((const __m128i *)(h + 16)), m1);
	buf[2] = _mm_or_si128(_mm_loadu_si128((const __m128i *)(h + 32)), m2);
	return nr_crc32(0, buf, sizeof(buf));
}
#endif

/* CRC-32 of the masked headers through the BTH; 0 with *ok false for a
 * record nr_parse() would not have made NR_PKT_ROCE. */
static uint32_t icrc_head(const uint8_t *frame, const struct nr_pkt *p, bool *ok)
{
	uint8_t buf[MASKED_MAX];
	uint32_t iplen = p->l4_off - p->l3_off;
	uint32_t hlen = LRH_MASK_LEN + iplen + sizeof(struct nr_udp_hdr) + sizeof(struct nr_bth);
	uint32_t rest = p->bth_off + sizeof(struct nr_bth);

	*ok = (p->ipver == 4 || p->ipver == 6) && hlen <= sizeof(buf) &&
	      p->end >= rest + NR_ICRC_LEN;
	if (!*ok)
		return 0;
#if defined(__SSE2__)
	if (p->ipver == 4 && iplen == sizeof(struct nr_ipv4_hdr) && p->l3_off >= LRH_MASK_LEN)
		return icrc_ip4_hdr(frame, p);
#endif
	memset(buf, 0xFF, LRH_MASK_LEN);
	memcpy(buf + LRH_MASK_LEN, frame + p->l3_off, hlen - LRH_MASK_LEN);
	if (p->ipver == 6)
		mask_ipv6(buf + LRH_MASK_LEN);
	else
		mask_ipv4(buf + LRH_MASK_LEN);
	mask_udp_bth(buf + LRH_MASK_LEN + iplen);
	return nr_crc32(0, buf, hlen);
}

/* The head's CRC carried over the frame bytes from the end of the BTH to
 * `stop` (the ICRC region, or the part of it before a shared tail; empty for
 * a result without extension headers, which nr_crc32 leaves to zlib). */
static uint32_t icrc_from(uint32_t head, const uint8_t *frame, const struct nr_pkt *p,
			  uint32_t stop, bool *ok)
{
	uint32_t rest = p->bth_off + sizeof(struct nr_bth);

	*ok = stop >= rest && stop <= p->end - (uint32_t)NR_ICRC_LEN;
	return *ok ? nr_crc32(head, frame + rest, stop - rest) : 0;
}

/* CRC-32 of the masked headers and the frame bytes from the end of the BTH to
 * `stop`; 0 with *ok false for a record nr_parse() would not have made
 * NR_PKT_ROCE. */
static uint32_t icrc_upto(const uint8_t *frame, const struct nr_pkt *p, uint32_t stop, bool *ok)
{
	uint32_t head = icrc_head(frame, p, ok);

	return *ok ? icrc_from(head, frame, p, stop, ok) : 0;
}

uint32_t nr_icrc_compute(const uint8_t *frame, const struct nr_pkt *p)
{
	bool ok;

	return icrc_upto(frame, p, p->end - NR_ICRC_LEN, &ok);
}

/*
 * zlib's crc32_combine_op(crc1, 0, op) multiplies crc1 by x^(8 len) modulo
 * the CRC polynomial: linear over GF(2) in crc1, so it is the XOR of the
 * images of crc1's set bits.  The table holds those XORs a byte at a time.
 */
void nr_crc_shift_init(struct nr_crc_shift *k, uint32_t len)
{
	uLong op = crc32_combine_gen((z_off_t)len);

	k->len = len;
	for (unsigned j = 0; j < 4; j++) {
		uint32_t col[8];

		for (unsigned b = 0; b < 8; b++)
			col[b] = (uint32_t)crc32_combine_op((uLong)1 << (8 * j + b), 0, op);
		k->t[j][0] = 0;
		for (unsigned v = 1; v < 256; v++)
			k->t[j][v] = k->t[j][v & (v - 1)] ^ col[__builtin_ctz(v)];
	}
}

uint32_t nr_icrc_compute_tail(const uint8_t *frame, const struct nr_pkt *p, uint32_t tail_crc,
			      const struct nr_crc_shift *k)
{
	bool ok;
	uint32_t head;

	if (p->end < k->len + NR_ICRC_LEN)
		return nr_icrc_compute(frame, p);
	if (p->icrc_head_ok)
		head = icrc_from(p->icrc_head, frame, p, p->end - NR_ICRC_LEN - k->len, &ok);
	else
		head = icrc_upto(frame, p, p->end - NR_ICRC_LEN - k->len, &ok);
	if (!ok)
		return nr_icrc_compute(frame, p);
	return nr_crc_shift(k, head) ^ tail_crc;
}

uint32_t nr_icrc_stored(const uint8_t *frame, const struct nr_pkt *p)
{
	const uint8_t *s = frame + p->end - NR_ICRC_LEN;

	return (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24;
}

bool nr_icrc_check(const uint8_t *frame, const struct nr_pkt *p)
{
	if (p->ipver != 4 && p->ipver != 6)
		return false;
	return nr_icrc_compute(frame, p) == nr_icrc_stored(frame, p);
}

bool nr_icrc_check_keep(const uint8_t *frame, struct nr_pkt *p)
{
	bool ok;
	uint32_t head = icrc_head(frame, p, &ok), crc;

	p->icrc_head_ok = 0;
	if (!ok)
		return false;
	crc = icrc_from(head, frame, p, p->end - NR_ICRC_LEN, &ok);
	if (!ok || crc != nr_icrc_stored(frame, p))
		return false;
	p->icrc_head = head;
	p->icrc_head_ok = 1;
	return true;
}

void nr_icrc_store(uint8_t *at, uint32_t crc)
{
	at[0] = (uint8_t)crc;
	at[1] = (uint8_t)(crc >> 8);
	at[2] = (uint8_t)(crc >> 16);
	at[3] = (uint8_t)(crc >> 24);
}

void nr_icrc_update(uint8_t *frame, const struct nr_pkt *p)
{
	nr_icrc_store(frame + p->end - NR_ICRC_LEN, nr_icrc_compute(frame, p));
}

/*
 * The CRC of the masked pseudo headers (LRH, IPv4, UDP) and the first blen
 * bytes of the BTH at bth, for a packet of len transport bytes (BTH .. pad).
 */
static uint32_t icrc_ip4_head(const struct nr_icrc_ip4 *ip, const uint8_t *bth, size_t blen,
			      size_t len)
{
	uint8_t buf[LRH_MASK_LEN + sizeof(struct nr_ipv4_hdr) + sizeof(struct nr_udp_hdr) +
		    sizeof(struct nr_bth)];
	struct nr_ipv4_hdr *iph = (struct nr_ipv4_hdr *)(buf + LRH_MASK_LEN);
	struct nr_udp_hdr *udp = (struct nr_udp_hdr *)(iph + 1);

	memset(buf, 0xFF, LRH_MASK_LEN);
	iph->ver_ihl = 0x45;
	nr_st_be16(&iph->tot_len, (uint16_t)(sizeof(*iph) + sizeof(*udp) + len + NR_ICRC_LEN));
	nr_st_be16(&iph->id, ip->id);
	nr_st_be16(&iph->frag_off, ip->frag_off);
	iph->proto = NR_IPPROTO_UDP;
	iph->saddr = ip->saddr;
	iph->daddr = ip->daddr;
	mask_ipv4((uint8_t *)iph);
	nr_st_be16(&udp->sport, ip->sport);
	nr_st_be16(&udp->dport, ip->dport);
	nr_st_be16(&udp->len, (uint16_t)(sizeof(*udp) + len + NR_ICRC_LEN));
	memcpy(udp + 1, bth, blen);
	if (blen > NR_BTH_RESV_BYTE)
		mask_udp_bth((uint8_t *)udp);
	else
		memset(&udp->check, 0xFF, sizeof(udp->check));
	return nr_crc32(0, buf, sizeof(buf) - sizeof(struct nr_bth) + blen);
}

uint32_t nr_icrc_ip4(const struct nr_icrc_ip4 *ip, const uint8_t *bth, size_t len)
{
	size_t blen = len < sizeof(struct nr_bth) ? len : sizeof(struct nr_bth);

	return nr_crc32(icrc_ip4_head(ip, bth, blen, len), bth + blen, len - blen);
}

uint32_t nr_icrc_ip4_gather(const struct nr_icrc_ip4 *ip, const uint8_t *hdr, size_t hlen,
			    const uint8_t *pay, size_t plen)
{
	static const uint8_t zero[4];
	size_t pad = (4 - (plen & 3)) & 3, len = hlen + plen + pad;
	size_t blen = hlen < sizeof(struct nr_bth) ? hlen : sizeof(struct nr_bth);
	uint32_t crc = icrc_ip4_head(ip, hdr, blen, len);

	crc = nr_crc32(crc, hdr + blen, hlen - blen);
	crc = nr_crc32(crc, pay, plen);
	return nr_crc32(crc, zero, pad);
}
