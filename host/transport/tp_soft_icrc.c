// SPDX-License-Identifier: BSD-3-Clause
/*
 * Soft transport: the ICRC of a UDP socket's packets, in the batch loops.
 *
 * What the ICRC covers before the BTH -- the masked LRH, IPv4 and UDP headers,
 * 36 bytes -- is the same for every packet of one flow and length but for the
 * IP ID, so its CRC is kept per QP (sent) and per source (received) and
 * length, for ID 0; a packet's ICRC continues from it over its header (BTH
 * byte 4 masked), its payload where it lies and its pad: one ISA-L pass over
 * the payload, and the header's few bytes by tables (slicing by 4), inline:
 * zlib's call cost 40 ns a packet here, ISA-L's below 16 bytes more.  A WRITE
 * MIDDLE's header (BTH alone) differs from the QP's last one in its last 4
 * bytes (AckReq, PSN) only: the CRC through its first 8 is kept too, and the
 * last 4 bytes' share is 4 independent lookups.
 *
 * The IP ID, which a UDP socket neither sets nor shows: the kernel gives a DF
 * datagram of an unconnected socket ID 0, and the datagrams of one GSO send
 * (UDP_SEGMENT) IDs 0, 1, 2 ... in order, whether it segments them itself, a
 * NIC does (USO), or they stay whole to a GRO socket on this host; a packet's
 * ICRC is computed for its place in its send (ConnectX, too, numbers its
 * RoCEv2 packets' IDs one by one).  A CRC is linear, so the ID's share is an
 * XOR: after the pseudo headers it is E[x] (a table, 64 entries), over a whole
 * packet of n ICRC-covered bytes D_n(x) = ICRC(ID x) ^ ICRC(ID 0).
 *
 * Received: the ID is guessed (the one after the previous packet's, or 0 at
 * the start of a GRO datagram) and the ICRC computed once for it; on a
 * mismatch the ID that would make it hold is found from the difference in the
 * table of D_n.  A packet is good when that ID lies in [0, SOFT_IPID_SPAN),
 * the IDs our senders and the box (which keeps a contribution's header)
 * produce; one with a corrupted byte passes with probability 64 / 2^32
 * instead of 1 / 2^32.  Tables of D_n for the last SOFT_IPID_CACHE lengths are
 * kept (a transfer has a few: full packets, last packets, ACKs).
 */
#include <pthread.h>
#include <string.h>
#include <zlib.h>

#include "tp_soft_icrc.h"

/* ICRC-covered bytes before the ID (masked LRH, IPv4 up to the ID) and of the ID */
#define IPID_OFF 12
#define IPID_LEN 2
/* the masked LRH, IPv4 and UDP headers the ICRC covers before the BTH */
#define ICRC_PSEUDO 36

/* CRC-32 tables, slicing by 4: t[k][b] is byte b's share followed by k zero bytes. */
static uint32_t crc_t[4][256];
static pthread_once_t crc_t_once = PTHREAD_ONCE_INIT;

static void crc_t_make(void)
{
	for (uint32_t b = 0; b < 256; b++) {
		uint32_t c = b;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
		crc_t[0][b] = c;
	}
	for (unsigned k = 1; k < 4; k++)
		for (uint32_t b = 0; b < 256; b++)
			crc_t[k][b] = (crc_t[k - 1][b] >> 8) ^ crc_t[0][crc_t[k - 1][b] & 0xFF];
}

/* zlib's crc32(crc, buf, len) for a few bytes (a header, a pad), inline. */
static inline uint32_t crc_small(uint32_t crc, const uint8_t *buf, uint32_t len)
{
	uint32_t s = ~crc;

	for (; len >= 4; buf += 4, len -= 4) {
		s ^= (uint32_t)buf[0] | (uint32_t)buf[1] << 8 | (uint32_t)buf[2] << 16 |
		     (uint32_t)buf[3] << 24;
		s = crc_t[3][s & 0xFF] ^ crc_t[2][(s >> 8) & 0xFF] ^ crc_t[1][(s >> 16) & 0xFF] ^
		    crc_t[0][s >> 24];
	}
	for (; len; buf++, len--)
		s = (s >> 8) ^ crc_t[0][(s ^ *buf) & 0xFF];
	return ~s;
}

/* The table of the ID's share over n covered bytes: d[x] = CRC(ID x) ^ CRC(ID 0). */
static void id_share(uint32_t *d, uint32_t n)
{
	uint8_t id[IPID_OFF + IPID_LEN] = { 0 };
	uint32_t basis[6], x0, op;

	/* the CRC register after the ID, carried over the n - 14 bytes after it */
	op = (uint32_t)crc32_combine_gen((z_off_t)(n - IPID_OFF - IPID_LEN));
	x0 = (uint32_t)crc32(0, id, sizeof(id));
	for (unsigned b = 0; b < 6; b++) {
		id[IPID_OFF + 1] = (uint8_t)(1u << b);
		basis[b] = (uint32_t)crc32_combine_op((uint32_t)crc32(0, id, sizeof(id)) ^ x0, 0, op);
	}
	d[0] = 0;
	for (unsigned x = 1; x < SOFT_IPID_SPAN; x++)
		d[x] = d[x & (x - 1)] ^ basis[__builtin_ctz(x)];
}

void soft_icrc_init(struct soft_tp *tp)
{
	pthread_once(&crc_t_once, crc_t_make);
	id_share(tp->id_pfx, ICRC_PSEUDO);
	id_share(tp->id_bth, ICRC_PSEUDO + sizeof(struct nr_bth));
}

/* D_n for tlen transport bytes (BTH .. pad), from the cache or made. */
static const uint32_t *id_tab(struct soft_tp *tp, uint32_t tlen)
{
	uint32_t n = ICRC_PSEUDO + tlen;
	struct soft_ipid_tab *t;

	for (unsigned i = 0; i < SOFT_IPID_CACHE; i++)
		if (tp->ipid[i].n == n)
			return tp->ipid[i].d;
	t = &tp->ipid[tp->ipid_next++ % SOFT_IPID_CACHE];
	id_share(t->d, n);
	t->n = n;
	return t->d;
}

/* The CRC of the masked pseudo headers of a packet of tlen transport bytes, IP ID 0. */
static uint32_t pseudo_crc(const struct nr_icrc_ip4 *ip, uint32_t tlen)
{
	uint8_t b[ICRC_PSEUDO];

	memset(b, 0xFF, 8);                     /* LRH */
	b[8] = 0x45;                            /* IPv4, no options */
	b[9] = 0xFF;                            /* TOS: masked */
	nr_st_be16(b + 10, (uint16_t)(20 + 8 + tlen + NR_ICRC_LEN));
	nr_st_be16(b + 12, 0);                  /* ID: its share is E[id] */
	nr_st_be16(b + 14, ip->frag_off);
	b[16] = 0xFF;                           /* TTL: masked */
	b[17] = NR_IPPROTO_UDP;
	b[18] = b[19] = 0xFF;                   /* header checksum: masked */
	memcpy(b + 20, &ip->saddr, 4);
	memcpy(b + 24, &ip->daddr, 4);
	nr_st_be16(b + 28, ip->sport);
	nr_st_be16(b + 30, ip->dport);
	nr_st_be16(b + 32, (uint16_t)(8 + tlen + NR_ICRC_LEN));
	b[34] = b[35] = 0xFF;                   /* UDP checksum: masked */
	return (uint32_t)crc32(0, b, sizeof(b));
}

uint32_t soft_icrc_tx(struct soft_qp *qp, uint16_t sport, uint16_t id, const uint8_t *hdr,
		      uint32_t hl, const void *pay, uint32_t plen)
{
	static const uint8_t zero[4];
	uint32_t pad = (4 - (plen & 3)) & 3, tlen = hl + plen + pad, crc;
	uint8_t m[SOFT_HDR_MAX];
	uint64_t bth0;
	struct soft_pfx *c;
	unsigned i;

	memcpy(m, hdr, SOFT_HDR_MAX);
	m[NR_BTH_RESV_BYTE] = 0xFF;             /* FECN, BECN, reserved: masked */
	memcpy(&bth0, m, sizeof(bth0));
	for (i = 0; i < SOFT_PFX_CACHE; i++)
		if (qp->pfx[i].tlen == tlen && qp->pfx[i].sport == sport)
			break;
	if (i == SOFT_PFX_CACHE) {
		struct nr_icrc_ip4 ipx = qp->ipx;

		ipx.sport = sport;      /* a sprayed QP's packets leave from several */
		i = qp->pfx_next++ % SOFT_PFX_CACHE;
		qp->pfx[i] = (struct soft_pfx){ .tlen = tlen, .sport = sport,
						.crc = pseudo_crc(&ipx, tlen) };
	}
	c = &qp->pfx[i];
	if (hl == sizeof(struct nr_bth)) {      /* a WRITE MIDDLE: the BTH's first 8 bytes kept */
		if (!c->bth_ok || c->bth0 != bth0) {
			uint8_t b[sizeof(struct nr_bth)] = { 0 };

			memcpy(b, m, 8);
			c->bth0 = bth0;
			c->crc_bth = crc_small(c->crc, b, sizeof(b));
			c->bth_ok = true;
		}
		crc = c->crc_bth ^ qp->tp->id_bth[id % SOFT_IPID_SPAN] ^
		      crc_t[3][m[8]] ^ crc_t[2][m[9]] ^ crc_t[1][m[10]] ^ crc_t[0][m[11]];
	} else {
		crc = crc_small(c->crc ^ qp->tp->id_pfx[id % SOFT_IPID_SPAN], m, hl);
	}
	crc = nr_crc32(crc, pay, plen);
	return crc_small(crc, zero, pad);
}

uint32_t soft_icrc_move(struct soft_tp *tp, uint32_t icrc, uint32_t tlen, uint16_t from,
			uint16_t to)
{
	return icrc ^ id_tab(tp, tlen)[(from ^ to) % SOFT_IPID_SPAN];
}

bool soft_icrc_rx(struct soft_tp *tp, struct nr_icrc_ip4 *ip, uint8_t *bth, uint32_t tlen,
		  uint32_t stored)
{
	struct soft_rx_pfx *c = &tp->rxpfx[tp->rxpfx_last];
	uint32_t delta;
	uint8_t resv;
	const uint32_t *d;

	if (c->tlen != tlen || c->saddr != ip->saddr || c->sport != ip->sport) {
		unsigned i;

		for (i = 0; i < SOFT_RXPFX_CACHE; i++) {
			c = &tp->rxpfx[i];
			if (c->tlen == tlen && c->saddr == ip->saddr && c->sport == ip->sport)
				break;
		}
		if (i == SOFT_RXPFX_CACHE) {
			i = tp->rxpfx_next++ % SOFT_RXPFX_CACHE;
			c = &tp->rxpfx[i];
			*c = (struct soft_rx_pfx){ .saddr = ip->saddr, .sport = ip->sport,
						   .tlen = tlen, .crc = pseudo_crc(ip, tlen) };
		}
		tp->rxpfx_last = i;
	}
	/* BTH byte 4 masked in place for the one pass, then put back */
	resv = bth[NR_BTH_RESV_BYTE];
	bth[NR_BTH_RESV_BYTE] = 0xFF;
	delta = nr_crc32(c->crc ^ tp->id_pfx[ip->id % SOFT_IPID_SPAN], bth, tlen) ^ stored;
	bth[NR_BTH_RESV_BYTE] = resv;
	if (!delta)
		return true;
	d = id_tab(tp, tlen);
	for (unsigned y = 1; y < SOFT_IPID_SPAN; y++)
		if (d[y] == delta && (ip->id ^ y) < SOFT_IPID_SPAN) {
			ip->id ^= (uint16_t)y;
			return true;
		}
	return false;
}
