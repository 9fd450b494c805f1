/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bounded RoCEv2 parser (see roce_pkt.h).
 *
 * Classification needs evidence: a frame is RoCEv2 (well-formed or not) only
 * once the parser has read IP protocol UDP and UDP destination port 4791 in
 * the frame.  A frame cut before that point (inside the Ethernet, VLAN or IP
 * header, or before the UDP destination port) cannot be told apart from any
 * other traffic and is NR_PKT_OTHER; so is a non-first IP fragment (it has no
 * UDP header).  From there on every inconsistency is NR_PKT_MALFORMED with one
 * reason; where the frame is shorter than the IP length says, the reason names
 * the header the frame ends in (TRUNC_UDP, TRUNC_BTH, TRUNC_EXT) or, when it
 * ends inside the payload, BAD_IP_LEN.
 */
#include <string.h>

#include "proto/roce_pkt.h"

static const char *const malformed_str[NR_BAD_MAX] = {
#define NR_MALFORMED_STR(n, s) [NR_BAD_##n] = s,
	NR_FOREACH_MALFORMED(NR_MALFORMED_STR)
#undef NR_MALFORMED_STR
};

const char *nr_malformed_str(enum nr_malformed bad)
{
	if ((unsigned)bad >= NR_BAD_MAX)
		return "unknown reason";
	return malformed_str[bad];
}

/* A cursor over [base, base + len) that refuses to move past the end. */
struct cursor {
	const uint8_t *base;
	uint32_t off;
	uint32_t len;
};

static inline const void *cur_pull(struct cursor *c, uint32_t n)
{
	const uint8_t *p;

	if (c->len - c->off < n)
		return NULL;
	p = c->base + c->off;
	c->off += n;
	return p;
}

static inline bool cur_has(const struct cursor *c, uint32_t off, uint32_t n)
{
	return off <= c->len && c->len - off >= n;
}

static int malformed(struct nr_pkt *p, enum nr_malformed why)
{
	p->kind = NR_PKT_MALFORMED;
	p->bad = why;
	return p->kind;
}

/*
 * Transport part: UDP payload [off, end) of base, BTH .. ICRC.  Fills the
 * transport fields of p and classifies.
 */
static int parse_bth(const uint8_t *base, uint32_t off, uint32_t end, struct nr_pkt *p)
{
	const struct nr_opcode_info *info;
	const struct nr_bth *bth;
	const uint8_t *t;
	uint32_t n = end - off, paybytes;

	p->bth_off = (uint16_t)off;
	if (n < sizeof(*bth) + NR_ICRC_LEN)
		return malformed(p, NR_BAD_TRUNC_BTH);
	t = base + off;
	bth = (const struct nr_bth *)t;
	p->opcode = nr_bth_opcode(bth);
	info = nr_opcode_info(p->opcode);
	if (!info)
		return malformed(p, NR_BAD_UNKNOWN_OPCODE);
	p->mask = info->mask;
	if (nr_bth_tver(bth) != 0)
		return malformed(p, NR_BAD_BAD_TVER);

	p->se = nr_bth_se(bth);
	p->pad = nr_bth_pad(bth);
	p->fecn = nr_bth_fecn(bth);
	p->becn = nr_bth_becn(bth);
	p->qpn = nr_bth_qpn(bth);
	p->ackreq = nr_bth_ackreq(bth);
	p->psn = nr_bth_psn(bth);

	if (n < (uint32_t)info->length + NR_ICRC_LEN)
		return malformed(p, NR_BAD_TRUNC_EXT);
	if (info->mask & NR_OPF_RETH) {
		const struct nr_reth *r = (const void *)(t + info->offset[NR_EXT_RETH]);

		p->reth_va = nr_reth_va(r);
		p->reth_rkey = nr_reth_rkey(r);
		p->reth_len = nr_reth_len(r);
	}
	if (info->mask & NR_OPF_AETH) {
		const struct nr_aeth *a = (const void *)(t + info->offset[NR_EXT_AETH]);

		p->aeth_syn = nr_aeth_syn(a);
		p->aeth_msn = nr_aeth_msn(a);
	}
	if (info->mask & NR_OPF_IMMDT)
		p->imm = nr_immdt_imm((const void *)(t + info->offset[NR_EXT_IMMDT]));
	if (info->mask & NR_OPF_DETH) {
		const struct nr_deth *d = (const void *)(t + info->offset[NR_EXT_DETH]);

		p->deth_qkey = nr_deth_qkey(d);
		p->deth_sqp = nr_deth_sqp(d);
	}

	paybytes = n - info->length - NR_ICRC_LEN;
	p->pay_off = (uint16_t)(off + info->length);
	p->end = (uint16_t)end;
	if (p->pad > paybytes)
		return malformed(p, NR_BAD_BAD_PAD);
	if (!(info->mask & NR_OPF_PAYLOAD) && paybytes)
		return malformed(p, NR_BAD_UNEXPECTED_PAYLOAD);
	p->pay_len = (uint16_t)(paybytes - p->pad);
	p->kind = NR_PKT_ROCE;
	return p->kind;
}

/*
 * The IP header claims more bytes than the frame holds (or fewer than the
 * headers): name the header the frame ends in, else BAD_IP_LEN.
 */
static int short_frame(const uint8_t *frame, uint32_t len, uint32_t bth_off, struct nr_pkt *p,
		       bool truncated)
{
	if (truncated && parse_bth(frame, bth_off, len, p) == NR_PKT_MALFORMED &&
	    (p->bad == NR_BAD_TRUNC_BTH || p->bad == NR_BAD_TRUNC_EXT))
		return p->kind;
	p->pay_off = p->pay_len = p->end = 0;
	return malformed(p, NR_BAD_BAD_IP_LEN);
}

/* UDP header at l4 (its destination port already known to be 4791), IP packet end ipend. */
static int parse_udp(const uint8_t *frame, uint32_t len, uint32_t l4, uint32_t ipend,
		     struct nr_pkt *p)
{
	const struct nr_udp_hdr *udp = (const void *)(frame + l4);

	if (len - l4 < sizeof(*udp))
		return malformed(p, NR_BAD_TRUNC_UDP);
	p->udp_sport = nr_ld_be16(&udp->sport);
	if (ipend > len || ipend < l4 + sizeof(*udp))
		return short_frame(frame, len, l4 + sizeof(*udp), p, ipend > len);
	if (ipend > UINT16_MAX)
		return malformed(p, NR_BAD_BAD_IP_LEN);
	if (nr_ld_be16(&udp->len) != ipend - l4)
		return malformed(p, NR_BAD_BAD_UDP_LEN);
	return parse_bth(frame, l4 + sizeof(*udp), ipend, p);
}

/* True when the frame holds a UDP destination port 4791 at l4. */
static bool is_rocev2_port(const struct cursor *c, uint32_t l4)
{
	if (!cur_has(c, l4, 4))
		return false;
	return nr_ld_be16(c->base + l4 + 2) == NR_ROCEV2_PORT;
}

static int parse_ipv4(struct cursor *c, struct nr_pkt *p)
{
	const struct nr_ipv4_hdr *ip;
	uint32_t l3 = c->off, l4, hl;
	uint16_t frag;

	ip = cur_pull(c, sizeof(*ip));
	if (!ip || nr_ipv4_version(ip) != 4 || ip->proto != NR_IPPROTO_UDP)
		return NR_PKT_OTHER;
	frag = nr_ld_be16(&ip->frag_off);
	if (frag & NR_IPV4_OFFMASK)
		return NR_PKT_OTHER;    /* non-first fragment: no UDP header to judge */
	hl = nr_ipv4_ihl_bytes(ip);
	/*
	 * With IHL < 5 the header is broken; a UDP/4791 header where a
	 * 20-byte IP header would end is the evidence that it is RoCEv2.
	 */
	l4 = l3 + (hl < sizeof(*ip) ? sizeof(*ip) : hl);
	if (!is_rocev2_port(c, l4))
		return NR_PKT_OTHER;

	p->ipver = 4;
	p->l3_off = (uint16_t)l3;
	p->l4_off = (uint16_t)l4;
	p->ecn = ip->tos & NR_ECN_MASK;
	memcpy(&p->saddr, &ip->saddr, sizeof(p->saddr));
	memcpy(&p->daddr, &ip->daddr, sizeof(p->daddr));
	if (hl < sizeof(*ip))
		return malformed(p, NR_BAD_BAD_IHL);
	if (frag & NR_IPV4_MF)
		return malformed(p, NR_BAD_IP_FRAGMENT);
	return parse_udp(c->base, c->len, l4, l3 + nr_ld_be16(&ip->tot_len), p);
}

static int parse_ipv6(struct cursor *c, struct nr_pkt *p)
{
	const struct nr_ipv6_hdr *ip6;
	uint32_t l3 = c->off, l4;

	ip6 = cur_pull(c, sizeof(*ip6));
	if (!ip6 || (nr_ld_be32(&ip6->vtc_flow) >> 28) != 6 || ip6->next_hdr != NR_IPPROTO_UDP)
		return NR_PKT_OTHER;
	l4 = c->off;
	if (!is_rocev2_port(c, l4))
		return NR_PKT_OTHER;

	p->ipver = 6;
	p->l3_off = (uint16_t)l3;
	p->l4_off = (uint16_t)l4;
	p->ecn = (nr_ld_be32(&ip6->vtc_flow) >> 20) & NR_ECN_MASK;
	return parse_udp(c->base, c->len, l4, l4 + nr_ld_be16(&ip6->payload_len), p);
}

int nr_parse(const uint8_t *frame, uint32_t len, struct nr_pkt *p)
{
	struct cursor c = { .base = frame, .off = 0, .len = len };
	const struct nr_eth_hdr *eth;
	uint16_t type;

	memset(p, 0, sizeof(*p));
	eth = cur_pull(&c, sizeof(*eth));
	if (!eth)
		return NR_PKT_OTHER;
	type = nr_ld_be16(&eth->type);
	if (type == NR_ETHERTYPE_VLAN) {
		const struct nr_vlan_hdr *vlan = cur_pull(&c, sizeof(*vlan));

		if (!vlan)
			return NR_PKT_OTHER;
		p->has_vlan = 1;
		p->vlan_tci = nr_ld_be16(&vlan->tci);
		type = nr_ld_be16(&vlan->type);
	}

	switch (type) {
	case NR_ETHERTYPE_IPV4:
		parse_ipv4(&c, p);
		break;
	case NR_ETHERTYPE_IPV6:
		parse_ipv6(&c, p);
		break;
	default:
		break;
	}
	if (p->kind == NR_PKT_OTHER) {
		/* Keep the L2 facts only: nothing above them is RoCEv2. */
		uint8_t has_vlan = p->has_vlan;
		uint16_t tci = p->vlan_tci;

		memset(p, 0, sizeof(*p));
		p->has_vlan = has_vlan;
		p->vlan_tci = tci;
	}
	return p->kind;
}

int nr_parse_transport(const uint8_t *bth, uint32_t len, struct nr_pkt *p)
{
	memset(p, 0, sizeof(*p));
	if (len > UINT16_MAX)
		return malformed(p, NR_BAD_BAD_UDP_LEN);
	return parse_bth(bth, 0, len, p);
}
