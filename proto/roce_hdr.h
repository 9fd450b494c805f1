/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 wire formats: Ethernet, 802.1Q, IPv4, IPv6, UDP, BTH and the
 * InfiniBand extended transport headers (RETH, AETH, ImmDt, DETH).
 *
 * BYTE ORDER.  Every header field is big-endian (network order) on the wire
 * and in these structs; read and write them only through the accessors below.
 * Payload bytes are whatever the hosts' memory held: RDMA copies memory, so
 * gradient floats travel in the *hosts'* byte order (little-endian FP32 on
 * x86 and arm64 hosts) and are never swapped by anyone.
 *
 * Headers are not aligned inside a frame (the RETH VA sits at frame offset
 * 54), so every struct is packed and accessors go through memcpy-safe loads.
 * No bit-fields: masks and shifts only.
 */
#ifndef NR_ROCE_HDR_H
#define NR_ROCE_HDR_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>

#define NR_PACKED __attribute__((packed))

#define NR_ETH_ALEN        6
#define NR_ETHERTYPE_IPV4  0x0800
#define NR_ETHERTYPE_IPV6  0x86DD
#define NR_ETHERTYPE_VLAN  0x8100
#define NR_ETHERTYPE_ARP   0x0806
#define NR_ETHERTYPE_ROCE1 0x8915  /* RoCEv1 (GRH over Ethernet): not ours */
#define NR_IPPROTO_UDP     17
#define NR_ROCEV2_PORT     4791
#define NR_ICRC_LEN        4
#define NR_BTH_PKEY_DEFAULT 0xFFFF

struct nr_eth_hdr {
	uint8_t dst[NR_ETH_ALEN];
	uint8_t src[NR_ETH_ALEN];
	uint16_t type;
} NR_PACKED;
static_assert(sizeof(struct nr_eth_hdr) == 14, "eth header");

struct nr_vlan_hdr {
	uint16_t tci;           /* PCP 3 | DEI 1 | VLAN id 12 */
	uint16_t type;          /* ethertype of what follows the tag */
} NR_PACKED;
static_assert(sizeof(struct nr_vlan_hdr) == 4, "vlan header");

struct nr_ipv4_hdr {
	uint8_t ver_ihl;        /* version 4 | IHL in 32-bit words */
	uint8_t tos;            /* DSCP << 2 | ECN */
	uint16_t tot_len;
	uint16_t id;
	uint16_t frag_off;      /* flags (DF 0x4000, MF 0x2000) | offset */
	uint8_t ttl;
	uint8_t proto;
	uint16_t check;
	uint32_t saddr;
	uint32_t daddr;
} NR_PACKED;
static_assert(sizeof(struct nr_ipv4_hdr) == 20, "ipv4 header");

#define NR_IPV4_DF      0x4000
#define NR_IPV4_MF      0x2000
#define NR_IPV4_OFFMASK 0x1FFF
#define NR_ECN_MASK     0x03
#define NR_ECN_NOT_ECT  0x00    /* not ECN-capable: must never be marked CE (RFC 3168) */
#define NR_ECN_ECT1     0x01
#define NR_ECN_ECT0     0x02
#define NR_ECN_CE       0x03

struct nr_ipv6_hdr {
	uint32_t vtc_flow;      /* version 6 | traffic class 8 | flow label 20 */
	uint16_t payload_len;
	uint8_t next_hdr;
	uint8_t hop_limit;
	uint8_t saddr[16];
	uint8_t daddr[16];
} NR_PACKED;
static_assert(sizeof(struct nr_ipv6_hdr) == 40, "ipv6 header");

struct nr_udp_hdr {
	uint16_t sport;
	uint16_t dport;
	uint16_t len;
	uint16_t check;
} NR_PACKED;
static_assert(sizeof(struct nr_udp_hdr) == 8, "udp header");

/* Base Transport Header, 12 bytes. */
struct nr_bth {
	uint8_t opcode;
	uint8_t flags;          /* SE | MigReq | PadCnt | TVer */
	uint16_t pkey;
	uint32_t qpn;           /* FECN | BECN | resv6 | DestQP:24 */
	uint32_t apsn;          /* AckReq | resv7 | PSN:24 */
} NR_PACKED;
static_assert(sizeof(struct nr_bth) == 12, "BTH");

#define NR_BTH_SE_MASK      0x80
#define NR_BTH_MIG_MASK     0x40
#define NR_BTH_PAD_MASK     0x30
#define NR_BTH_PAD_SHIFT    4
#define NR_BTH_TVER_MASK    0x0F
#define NR_BTH_FECN_MASK    0x80000000u
#define NR_BTH_BECN_MASK    0x40000000u
#define NR_BTH_QPN_MASK     0x00FFFFFFu
#define NR_BTH_ACK_MASK     0x80000000u
#define NR_BTH_PSN_MASK     0x00FFFFFFu
#define NR_BTH_RESV_BYTE    4   /* offset of F/B/resv6a, masked in the ICRC */

/* RDMA Extended Transport Header, 16 bytes. */
struct nr_reth {
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
} NR_PACKED;
static_assert(sizeof(struct nr_reth) == 16, "RETH");

/* ACK Extended Transport Header, 4 bytes: syndrome 8 | MSN 24. */
struct nr_aeth {
	uint32_t smsn;
} NR_PACKED;
static_assert(sizeof(struct nr_aeth) == 4, "AETH");

#define NR_AETH_SYN_MASK   0xFF000000u
#define NR_AETH_MSN_MASK   0x00FFFFFFu
#define NR_AETH_TYPE_MASK  0xE0     /* of the syndrome byte */
#define NR_AETH_ACK        0x00     /* 0x00-0x1F: ACK, low 5 bits credit code */
#define NR_AETH_RNR_NAK    0x20     /* 0x20 | timer */
#define NR_AETH_NAK        0x60
#define NR_AETH_NAK_PSN_SEQ_ERR  0x60
#define NR_AETH_NAK_INVALID_REQ  0x61
#define NR_AETH_NAK_REM_ACC_ERR  0x62
#define NR_AETH_NAK_REM_OP_ERR   0x63
#define NR_AETH_NAK_INV_RD_REQ   0x64
/*
 * netreduce's selective NAK (IBTA: NAK code 5, reserved), sent only to a
 * requester of the selective-repeat profile (host/transport/README.md,
 * "Selective repeat") or a box job registered selective: the BTH PSN is
 * the first missing PSN, the AETH's MSN field how many are missing in a row
 * from it (0 reads as 1).  It acknowledges nothing: the requester resends
 * those PSNs alone and keeps everything else in flight.
 */
#define NR_AETH_NAK_SELECTIVE    0x65
#define NR_AETH_CREDIT_INVALID   0x1F

/* Immediate data, 4 bytes, opaque to the transport. */
struct nr_immdt {
	uint32_t imm;
} NR_PACKED;
static_assert(sizeof(struct nr_immdt) == 4, "ImmDt");

/* Datagram Extended Transport Header (UD), 8 bytes. */
struct nr_deth {
	uint32_t qkey;          /* Q_Key */
	uint32_t sqp;           /* reserved 8 | source QP 24 */
} NR_PACKED;
static_assert(sizeof(struct nr_deth) == 8, "DETH");

/* Atomic ETH (28 B) and AtomicAckETH (8 B): only their sizes are needed. */
#define NR_ATMETH_LEN   28
#define NR_ATMACK_LEN   8
#define NR_IETH_LEN     4

#define NR_PSN_MOD      (1u << 24)
#define NR_PSN_MASK     NR_BTH_PSN_MASK

/* ---- unaligned big-endian loads and stores -------------------------------- */

static inline uint16_t nr_ld_be16(const void *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return ntohs(v);
}

static inline uint32_t nr_ld_be32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return ntohl(v);
}

static inline uint64_t nr_ld_be64(const void *p)
{
	return ((uint64_t)nr_ld_be32(p) << 32) | nr_ld_be32((const uint8_t *)p + 4);
}

static inline void nr_st_be16(void *p, uint16_t v)
{
	v = htons(v);
	memcpy(p, &v, sizeof(v));
}

static inline void nr_st_be32(void *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, sizeof(v));
}

static inline void nr_st_be64(void *p, uint64_t v)
{
	nr_st_be32(p, (uint32_t)(v >> 32));
	nr_st_be32((uint8_t *)p + 4, (uint32_t)v);
}

/* ---- BTH accessors (rxe_hdr.h style: pointer to the header itself) ------- */

static inline uint8_t nr_bth_opcode(const struct nr_bth *b) { return b->opcode; }
static inline bool nr_bth_se(const struct nr_bth *b) { return b->flags & NR_BTH_SE_MASK; }
static inline bool nr_bth_mig(const struct nr_bth *b) { return b->flags & NR_BTH_MIG_MASK; }
static inline uint8_t nr_bth_pad(const struct nr_bth *b)
{
	return (b->flags & NR_BTH_PAD_MASK) >> NR_BTH_PAD_SHIFT;
}
static inline uint8_t nr_bth_tver(const struct nr_bth *b) { return b->flags & NR_BTH_TVER_MASK; }
static inline uint16_t nr_bth_pkey(const struct nr_bth *b) { return nr_ld_be16(&b->pkey); }
static inline uint32_t nr_bth_qpn(const struct nr_bth *b)
{
	return nr_ld_be32(&b->qpn) & NR_BTH_QPN_MASK;
}
static inline bool nr_bth_fecn(const struct nr_bth *b)
{
	return nr_ld_be32(&b->qpn) & NR_BTH_FECN_MASK;
}
static inline bool nr_bth_becn(const struct nr_bth *b)
{
	return nr_ld_be32(&b->qpn) & NR_BTH_BECN_MASK;
}
static inline bool nr_bth_ackreq(const struct nr_bth *b)
{
	return nr_ld_be32(&b->apsn) & NR_BTH_ACK_MASK;
}
static inline uint32_t nr_bth_psn(const struct nr_bth *b)
{
	return nr_ld_be32(&b->apsn) & NR_BTH_PSN_MASK;
}

static inline void nr_bth_set_opcode(struct nr_bth *b, uint8_t op) { b->opcode = op; }
static inline void nr_bth_set_se(struct nr_bth *b, bool se)
{
	b->flags = se ? (b->flags | NR_BTH_SE_MASK) : (b->flags & ~NR_BTH_SE_MASK);
}
static inline void nr_bth_set_mig(struct nr_bth *b, bool mig)
{
	b->flags = mig ? (b->flags | NR_BTH_MIG_MASK) : (b->flags & ~NR_BTH_MIG_MASK);
}
static inline void nr_bth_set_pad(struct nr_bth *b, uint8_t pad)
{
	b->flags = (uint8_t)((b->flags & ~NR_BTH_PAD_MASK) |
			     ((pad << NR_BTH_PAD_SHIFT) & NR_BTH_PAD_MASK));
}
static inline void nr_bth_set_tver(struct nr_bth *b, uint8_t tver)
{
	b->flags = (uint8_t)((b->flags & ~NR_BTH_TVER_MASK) | (tver & NR_BTH_TVER_MASK));
}
static inline void nr_bth_set_pkey(struct nr_bth *b, uint16_t pkey) { nr_st_be16(&b->pkey, pkey); }
static inline void nr_bth_set_qpn(struct nr_bth *b, uint32_t qpn)
{
	uint32_t v = nr_ld_be32(&b->qpn);
	nr_st_be32(&b->qpn, (v & ~NR_BTH_QPN_MASK) | (qpn & NR_BTH_QPN_MASK));
}
static inline void nr_bth_set_fecn(struct nr_bth *b, bool on)
{
	uint32_t v = nr_ld_be32(&b->qpn);
	nr_st_be32(&b->qpn, on ? (v | NR_BTH_FECN_MASK) : (v & ~NR_BTH_FECN_MASK));
}
static inline void nr_bth_set_becn(struct nr_bth *b, bool on)
{
	uint32_t v = nr_ld_be32(&b->qpn);
	nr_st_be32(&b->qpn, on ? (v | NR_BTH_BECN_MASK) : (v & ~NR_BTH_BECN_MASK));
}
static inline void nr_bth_set_ackreq(struct nr_bth *b, bool on)
{
	uint32_t v = nr_ld_be32(&b->apsn);
	nr_st_be32(&b->apsn, on ? (v | NR_BTH_ACK_MASK) : (v & ~NR_BTH_ACK_MASK));
}
static inline void nr_bth_set_psn(struct nr_bth *b, uint32_t psn)
{
	uint32_t v = nr_ld_be32(&b->apsn);
	nr_st_be32(&b->apsn, (v & ~NR_BTH_PSN_MASK) | (psn & NR_BTH_PSN_MASK));
}

/* ---- RETH, AETH, ImmDt, DETH accessors ------------------------------------ */

static inline uint64_t nr_reth_va(const struct nr_reth *r) { return nr_ld_be64(&r->va); }
static inline uint32_t nr_reth_rkey(const struct nr_reth *r) { return nr_ld_be32(&r->rkey); }
static inline uint32_t nr_reth_len(const struct nr_reth *r) { return nr_ld_be32(&r->len); }
static inline void nr_reth_set_va(struct nr_reth *r, uint64_t va) { nr_st_be64(&r->va, va); }
static inline void nr_reth_set_rkey(struct nr_reth *r, uint32_t k) { nr_st_be32(&r->rkey, k); }
static inline void nr_reth_set_len(struct nr_reth *r, uint32_t l) { nr_st_be32(&r->len, l); }

static inline uint8_t nr_aeth_syn(const struct nr_aeth *a) { return nr_ld_be32(&a->smsn) >> 24; }
static inline uint32_t nr_aeth_msn(const struct nr_aeth *a)
{
	return nr_ld_be32(&a->smsn) & NR_AETH_MSN_MASK;
}
static inline void nr_aeth_set_syn(struct nr_aeth *a, uint8_t syn)
{
	uint32_t v = nr_ld_be32(&a->smsn);
	nr_st_be32(&a->smsn, (v & NR_AETH_MSN_MASK) | ((uint32_t)syn << 24));
}
static inline void nr_aeth_set_msn(struct nr_aeth *a, uint32_t msn)
{
	uint32_t v = nr_ld_be32(&a->smsn);
	nr_st_be32(&a->smsn, (v & NR_AETH_SYN_MASK) | (msn & NR_AETH_MSN_MASK));
}
/* Syndrome classes. */
static inline bool nr_syn_is_ack(uint8_t syn) { return (syn & NR_AETH_TYPE_MASK) == NR_AETH_ACK; }
static inline bool nr_syn_is_rnr(uint8_t syn) { return (syn & NR_AETH_TYPE_MASK) == NR_AETH_RNR_NAK; }
static inline bool nr_syn_is_nak(uint8_t syn) { return (syn & NR_AETH_TYPE_MASK) == NR_AETH_NAK; }
/* A selective NAK's run: its MSN field, at least 1. */
static inline uint32_t nr_sel_nak_run(uint32_t msn)
{
	return msn ? msn : 1;
}

static inline uint32_t nr_immdt_imm(const struct nr_immdt *i) { return nr_ld_be32(&i->imm); }
static inline void nr_immdt_set_imm(struct nr_immdt *i, uint32_t v) { nr_st_be32(&i->imm, v); }

static inline uint32_t nr_deth_qkey(const struct nr_deth *d) { return nr_ld_be32(&d->qkey); }
static inline uint32_t nr_deth_sqp(const struct nr_deth *d)
{
	return nr_ld_be32(&d->sqp) & NR_BTH_QPN_MASK;
}

/* ---- IPv4 / UDP helpers ----------------------------------------------------- */

static inline uint8_t nr_ipv4_ihl_bytes(const struct nr_ipv4_hdr *ip) { return (ip->ver_ihl & 0x0F) * 4; }
static inline uint8_t nr_ipv4_version(const struct nr_ipv4_hdr *ip) { return ip->ver_ihl >> 4; }

/* One's-complement IPv4 header checksum over ihl bytes, returned ready to store. */
static inline uint16_t nr_ipv4_cksum(const struct nr_ipv4_hdr *ip)
{
	const uint8_t *p = (const uint8_t *)ip;
	unsigned n = nr_ipv4_ihl_bytes(ip);
	uint32_t sum = 0;

	for (unsigned i = 0; i + 1 < n; i += 2)
		if (i != 10)
			sum += nr_ld_be16(p + i);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return htons((uint16_t)~sum);
}

/* ---- 24-bit PSN serial arithmetic (RFC 1982 style) ------------------------ */

static inline uint32_t nr_psn_add(uint32_t psn, uint32_t d) { return (psn + d) & NR_PSN_MASK; }
static inline uint32_t nr_psn_sub(uint32_t a, uint32_t b) { return (a - b) & NR_PSN_MASK; }
/* Signed distance a - b in (-2^23, 2^23]. */
static inline int32_t nr_psn_diff(uint32_t a, uint32_t b)
{
	return ((int32_t)((a - b) << 8)) >> 8;
}
static inline bool nr_psn_lt(uint32_t a, uint32_t b) { return nr_psn_diff(a, b) < 0; }
static inline bool nr_psn_le(uint32_t a, uint32_t b) { return nr_psn_diff(a, b) <= 0; }

#endif /* NR_ROCE_HDR_H */
