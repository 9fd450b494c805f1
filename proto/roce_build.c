/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet builders (see roce_build.h): the frame an RNIC would send, ICRC
 * included.  Headers are written through the accessors of roce_hdr.h.
 */
#include <errno.h>
#include <string.h>

#include "proto/roce_build.h"
#include "proto/roce_pkt.h"

static uint32_t pad_of(uint32_t len)
{
	return (4 - (len & 3)) & 3;
}

/* Transport bytes (BTH .. pad) for opcode info i; returns their length. */
static uint32_t write_transport(uint8_t *t, const struct nr_opcode_info *i, uint32_t dqpn,
				uint16_t pkey, const struct nr_build_args *a,
				const void *payload, uint32_t len)
{
	struct nr_bth *bth = (struct nr_bth *)t;
	uint32_t pad = pad_of(len);

	memset(t, 0, i->length);
	nr_bth_set_opcode(bth, a->opcode);
	nr_bth_set_se(bth, a->se);
	nr_bth_set_mig(bth, a->migreq);
	nr_bth_set_pad(bth, (uint8_t)pad);
	nr_bth_set_tver(bth, 0);
	nr_bth_set_pkey(bth, pkey ? pkey : NR_BTH_PKEY_DEFAULT);
	nr_bth_set_fecn(bth, a->fecn);
	nr_bth_set_becn(bth, a->becn);
	nr_bth_set_qpn(bth, dqpn);
	nr_bth_set_ackreq(bth, a->ackreq);
	nr_bth_set_psn(bth, a->psn);

	if (i->mask & NR_OPF_RETH) {
		struct nr_reth *r = (struct nr_reth *)(t + i->offset[NR_EXT_RETH]);

		nr_reth_set_va(r, a->va);
		nr_reth_set_rkey(r, a->rkey);
		nr_reth_set_len(r, a->dma_len);
	}
	if (i->mask & NR_OPF_AETH) {
		struct nr_aeth *ae = (struct nr_aeth *)(t + i->offset[NR_EXT_AETH]);

		nr_aeth_set_syn(ae, a->syndrome);
		nr_aeth_set_msn(ae, a->msn);
	}
	if (i->mask & NR_OPF_IMMDT)
		nr_immdt_set_imm((struct nr_immdt *)(t + i->offset[NR_EXT_IMMDT]), a->imm);
	if (i->mask & NR_OPF_DETH) {
		uint8_t *d = t + i->offset[NR_EXT_DETH];

		nr_st_be32(d, a->qkey);
		nr_st_be32(d + 4, a->sqp & NR_BTH_QPN_MASK);
	}
	if (i->mask & NR_OPF_ATMETH) {
		/* VA, R_Key; swap/add and compare data are left 0. */
		uint8_t *at = t + i->offset[NR_EXT_ATMETH];

		nr_st_be64(at, a->va);
		nr_st_be32(at + 8, a->rkey);
	}
	if (i->mask & NR_OPF_IETH)
		nr_st_be32(t + i->offset[NR_EXT_IETH], a->rkey);

	if (len)
		memcpy(t + i->length, payload, len);
	memset(t + i->length + len, 0, pad);
	return i->length + len + pad;
}

static const struct nr_opcode_info *check_args(const struct nr_build_args *a,
					       const void *payload, uint32_t len)
{
	const struct nr_opcode_info *i = nr_opcode_info(a->opcode);

	if (!i)
		return NULL;
	if (len && (!(i->mask & NR_OPF_PAYLOAD) || !payload))
		return NULL;
	return i;
}

int nr_build_frame(uint8_t *buf, size_t cap, const struct nr_flow *f,
		   const struct nr_build_args *a, const void *payload, uint32_t len)
{
	const struct nr_opcode_info *i = check_args(a, payload, len);
	uint32_t l2 = sizeof(struct nr_eth_hdr) + (f->vlan ? sizeof(struct nr_vlan_hdr) : 0);
	struct nr_eth_hdr *eth = (struct nr_eth_hdr *)buf;
	struct nr_ipv4_hdr *ip;
	struct nr_udp_hdr *udp;
	uint64_t iplen, total;
	uint32_t tlen;
	uint16_t check;
	struct nr_pkt p;

	if (!i)
		return -EINVAL;
	iplen = sizeof(*ip) + sizeof(*udp) + (uint64_t)i->length + len + pad_of(len) + NR_ICRC_LEN;
	if (iplen > UINT16_MAX - l2)
		return -EINVAL;     /* no IPv4 packet (nor our 16-bit offsets) can hold it */
	total = l2 + iplen;
	if (total > cap)
		return -ENOSPC;

	memcpy(eth->dst, f->dst_mac, NR_ETH_ALEN);
	memcpy(eth->src, f->src_mac, NR_ETH_ALEN);
	if (f->vlan) {
		struct nr_vlan_hdr *v = (struct nr_vlan_hdr *)(eth + 1);

		nr_st_be16(&eth->type, NR_ETHERTYPE_VLAN);
		nr_st_be16(&v->tci, f->vlan_tci);
		nr_st_be16(&v->type, NR_ETHERTYPE_IPV4);
	} else {
		nr_st_be16(&eth->type, NR_ETHERTYPE_IPV4);
	}

	ip = (struct nr_ipv4_hdr *)(buf + l2);
	ip->ver_ihl = 0x45;
	ip->tos = f->tos;
	nr_st_be16(&ip->tot_len, (uint16_t)iplen);
	nr_st_be16(&ip->id, f->ip_id);
	nr_st_be16(&ip->frag_off, f->frag_off);
	ip->ttl = f->ttl ? f->ttl : 64;
	ip->proto = NR_IPPROTO_UDP;
	memset(&ip->check, 0, sizeof(ip->check));
	ip->saddr = f->saddr;
	ip->daddr = f->daddr;
	check = nr_ipv4_cksum(ip);
	memcpy(&ip->check, &check, sizeof(check));

	udp = (struct nr_udp_hdr *)(ip + 1);
	nr_st_be16(&udp->sport, f->sport);
	nr_st_be16(&udp->dport, NR_ROCEV2_PORT);
	nr_st_be16(&udp->len, (uint16_t)(iplen - sizeof(*ip)));
	memset(&udp->check, 0, sizeof(udp->check));

	tlen = write_transport((uint8_t *)(udp + 1), i, f->dqpn, f->pkey, a, payload, len);

	memset(&p, 0, sizeof(p));
	p.ipver = 4;
	p.l3_off = (uint16_t)l2;
	p.l4_off = (uint16_t)(l2 + sizeof(*ip));
	p.bth_off = (uint16_t)(p.l4_off + sizeof(*udp));
	p.end = (uint16_t)(p.bth_off + tlen + NR_ICRC_LEN);
	nr_icrc_update(buf, &p);
	return (int)total;
}

int nr_build_transport_hdr(uint8_t *buf, size_t cap, uint32_t dqpn,
			   const struct nr_build_args *a, uint32_t len)
{
	const struct nr_opcode_info *i = nr_opcode_info(a->opcode);
	uint64_t total;

	if (!i || (len && !(i->mask & NR_OPF_PAYLOAD)))
		return -EINVAL;
	total = (uint64_t)i->length + len + pad_of(len) + NR_ICRC_LEN;
	if (total > UINT16_MAX - sizeof(struct nr_ipv4_hdr) - sizeof(struct nr_udp_hdr))
		return -EINVAL;
	if (i->length > cap)
		return -ENOSPC;
	write_transport(buf, i, dqpn, NR_BTH_PKEY_DEFAULT, a, NULL, 0);
	nr_bth_set_pad((struct nr_bth *)buf, (uint8_t)pad_of(len));
	return (int)i->length;
}

int nr_build_transport(uint8_t *buf, size_t cap, const struct nr_icrc_ip4 *ip,
		       uint32_t dqpn, const struct nr_build_args *a,
		       const void *payload, uint32_t len)
{
	const struct nr_opcode_info *i = check_args(a, payload, len);
	uint64_t total;
	uint32_t tlen;

	if (!i)
		return -EINVAL;
	total = (uint64_t)i->length + len + pad_of(len) + NR_ICRC_LEN;
	if (total > UINT16_MAX - sizeof(struct nr_ipv4_hdr) - sizeof(struct nr_udp_hdr))
		return -EINVAL;
	if (total > cap)
		return -ENOSPC;
	tlen = write_transport(buf, i, dqpn, NR_BTH_PKEY_DEFAULT, a, payload, len);
	nr_icrc_store(buf + tlen, nr_icrc_ip4(ip, buf, tlen));
	return (int)total;
}
