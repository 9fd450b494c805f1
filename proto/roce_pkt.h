/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bounded RoCEv2 parser.  nr_parse() classifies one Ethernet frame and
 * fills a small per-packet record (rxe_pkt_info style) that the box keeps in a
 * per-burst side array.  It reads only inside [frame, frame + len): every
 * access goes through a cursor that refuses to move past the end (OVS
 * data_try_pull).
 *
 * A frame is RoCEv2 when it is IPv4 or IPv6 (optionally behind one 802.1Q
 * tag), UDP, with destination port 4791; the source port is entropy and never
 * looked at.  Anything else (ARP, TCP, RoCEv1 ethertype 0x8915, other UDP) is
 * NR_PKT_OTHER, never malformed RoCE.
 *
 * Evidence rule: a frame is judged RoCEv2 (well-formed or MALFORMED) only
 * once IP protocol UDP and destination port 4791 have been read from it.  A
 * frame cut before that (inside Ethernet, the VLAN tag, the IP header or the
 * first 4 UDP bytes) and a non-first IP fragment are OTHER.  A frame cut after
 * it is MALFORMED: TRUNC_UDP, TRUNC_BTH or TRUNC_EXT by where it ends, or
 * BAD_IP_LEN when it ends inside the payload.  IPv4 IHL < 5 is BAD_IHL when a
 * UDP/4791 header sits where a 20-byte IP header would end.  TRUNC_L3 is
 * therefore never produced by nr_parse() (kept for ABI; a cut IP header
 * carries no evidence).  IPv6 extension headers are not followed (OTHER).
 */
#ifndef NR_ROCE_PKT_H
#define NR_ROCE_PKT_H

#include <stdbool.h>
#include <stdint.h>

#include "roce_hdr.h"
#include "roce_opcode.h"

enum nr_pkt_kind {
	NR_PKT_OTHER = 0,      /* not RoCEv2: forward as L2 */
	NR_PKT_ROCE = 1,       /* well-formed RoCEv2 */
	NR_PKT_MALFORMED = 2,  /* UDP 4791 but broken: see .bad */
};

/* Why a UDP/4791 frame is malformed: one name per reason (X-macro). */
#define NR_FOREACH_MALFORMED(_)                                          \
	_(NONE, "none")                                                  \
	_(TRUNC_L3, "frame ends inside the IP header")                   \
	_(BAD_IHL, "IPv4 IHL below 5 or past the frame")                \
	_(BAD_IP_LEN, "IP total length disagrees with the frame")        \
	_(IP_FRAGMENT, "IP fragment")                                    \
	_(TRUNC_UDP, "frame ends inside the UDP header")                 \
	_(BAD_UDP_LEN, "UDP length disagrees with the IP length")        \
	_(TRUNC_BTH, "UDP payload shorter than BTH + ICRC")              \
	_(UNKNOWN_OPCODE, "opcode not defined by IBTA")                  \
	_(BAD_TVER, "BTH transport version is not 0")                    \
	_(TRUNC_EXT, "packet ends inside an extension header")           \
	_(BAD_PAD, "PadCnt larger than the payload")                     \
	_(UNEXPECTED_PAYLOAD, "payload on an opcode that carries none")

enum nr_malformed {
#define NR_MALFORMED_ENUM(n, s) NR_BAD_##n,
	NR_FOREACH_MALFORMED(NR_MALFORMED_ENUM)
#undef NR_MALFORMED_ENUM
	NR_BAD_MAX
};

const char *nr_malformed_str(enum nr_malformed bad);

/* Per-packet record.  Offsets are from the first byte of the frame. */
struct nr_pkt {
	uint8_t kind;          /* enum nr_pkt_kind */
	uint8_t bad;           /* enum nr_malformed when kind == NR_PKT_MALFORMED */
	uint8_t ipver;         /* 4 or 6 (0 when not IP) */
	uint8_t opcode;
	uint32_t mask;         /* nr_opcode_info.mask */

	uint16_t l3_off;       /* IP header */
	uint16_t l4_off;       /* UDP header */
	uint16_t bth_off;      /* BTH */
	uint16_t pay_off;      /* first payload byte */
	uint16_t pay_len;      /* payload bytes without pad and ICRC */
	uint16_t end;          /* end of IP packet (ICRC end); bytes past it are trailer */
	uint16_t vlan_tci;
	uint8_t has_vlan;
	uint8_t ecn;           /* IP ECN bits (0..3) */
	uint8_t pad;           /* BTH PadCnt */
	uint8_t ackreq;
	uint8_t se;
	uint8_t becn;
	uint8_t fecn;
	uint16_t udp_sport;

	uint32_t saddr;        /* IPv4 source, network order (0 for IPv6) */
	uint32_t daddr;        /* IPv4 destination, network order */
	uint32_t qpn;          /* BTH DestQP */
	uint32_t psn;

	uint64_t reth_va;      /* valid when mask & NR_OPF_RETH */
	uint32_t reth_rkey;
	uint32_t reth_len;
	uint32_t imm;          /* valid when mask & NR_OPF_IMMDT, host order */
	uint8_t aeth_syn;      /* valid when mask & NR_OPF_AETH */
	uint32_t aeth_msn;
	uint32_t deth_qkey;    /* valid when mask & NR_OPF_DETH */
	uint32_t deth_sqp;

	uint32_t icrc_head;    /* CRC-32 of the ICRC's masked headers through the BTH, */
	uint8_t icrc_head_ok;  /* when set (nr_icrc_check_keep; see roce_icrc.h) */
};

/*
 * Classify and parse one frame of len bytes.  Returns p->kind.  Never reads
 * outside the frame.  Ethernet trailer bytes past the IP length are allowed and
 * ignored (p->end marks the ICRC end).
 */
int nr_parse(const uint8_t *frame, uint32_t len, struct nr_pkt *p);

/*
 * Parse the transport part only (BTH .. ICRC), as a UDP-socket endpoint
 * receives it.  Offsets in p are then from the first BTH byte (bth_off = 0,
 * l3_off = l4_off = 0, saddr/daddr left 0).  Returns p->kind (never OTHER).
 */
int nr_parse_transport(const uint8_t *bth, uint32_t len, struct nr_pkt *p);

/*
 * Mark a parsed IPv4 frame ECN-CE and fix its IP header checksum; the ICRC
 * masks both, so it stays valid.  Only an ECN-capable frame (ECT(0) or
 * ECT(1)) is marked: CE on a Not-ECT frame is what RFC 3168 forbids (its
 * endpoints do not take part in ECN).  True when the frame changed (IPv4,
 * ECT).  The one CE helper: the engine's resent results and the box's
 * results both go through it.
 */
static inline bool nr_frame_set_ce(uint8_t *frame, const struct nr_pkt *p)
{
	struct nr_ipv4_hdr *ip;
	uint8_t ecn;

	if (p->ipver != 4)
		return false;
	ip = (struct nr_ipv4_hdr *)(frame + p->l3_off);
	ecn = ip->tos & NR_ECN_MASK;
	if (ecn == NR_ECN_NOT_ECT || ecn == NR_ECN_CE)
		return false;
	ip->tos |= NR_ECN_CE;
	ip->check = nr_ipv4_cksum(ip);
	return true;
}

#endif /* NR_ROCE_PKT_H */
