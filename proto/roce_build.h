/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet builders for the box's tests and for the hosts' user-space endpoint
 * (the soft transport builds every packet it sends with nr_build_transport).
 * They write exactly what an RNIC writes: UDP checksum 0, P_Key 0xFFFF, TVer
 * 0, PadCnt for payloads that are not a multiple of 4, the ICRC.
 */
#ifndef NR_ROCE_BUILD_H
#define NR_ROCE_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roce_hdr.h"
#include "roce_icrc.h"

/* The addressing of one direction of one connection. */
struct nr_flow {
	uint8_t src_mac[NR_ETH_ALEN];
	uint8_t dst_mac[NR_ETH_ALEN];
	bool vlan;
	uint16_t vlan_tci;
	uint32_t saddr, daddr;   /* IPv4, network order */
	uint16_t sport;          /* UDP source port (entropy), host order */
	uint8_t tos;             /* default 0 */
	uint8_t ttl;             /* 0 means 64 */
	uint16_t ip_id;          /* host order */
	uint16_t frag_off;       /* host order; NR_IPV4_DF is what RNICs send */
	uint32_t dqpn;           /* BTH DestQP */
	uint16_t pkey;           /* 0 means 0xFFFF */
};

/* What goes into the transport headers. Fields an opcode does not carry are ignored. */
struct nr_build_args {
	uint8_t opcode;
	uint32_t psn;
	bool ackreq;
	bool se;
	bool migreq;             /* BTH MigReq: ConnectX and rxe set it (APM migrated state) */
	bool fecn, becn;
	uint64_t va;             /* RETH */
	uint32_t rkey;
	uint32_t dma_len;
	uint32_t imm;            /* ImmDt, host order */
	uint8_t syndrome;        /* AETH */
	uint32_t msn;
	uint32_t qkey, sqp;      /* DETH */
};

/*
 * Build a whole Ethernet frame into buf (cap bytes), ICRC included.  Returns
 * the frame length, -ENOSPC when it does not fit, -EINVAL for an opcode that
 * does not exist or a payload on an opcode that carries none.
 */
int nr_build_frame(uint8_t *buf, size_t cap, const struct nr_flow *f,
		   const struct nr_build_args *a, const void *payload, uint32_t len);

/*
 * Build only the UDP payload (BTH .. ICRC) for a UDP-socket endpoint; the ICRC
 * covers the IPv4/UDP fields the kernel will send (see struct nr_icrc_ip4).
 * Returns the length or -errno as above.
 */
int nr_build_transport(uint8_t *buf, size_t cap, const struct nr_icrc_ip4 *ip,
		       uint32_t dqpn, const struct nr_build_args *a,
		       const void *payload, uint32_t len);

/*
 * The transport headers alone (BTH and the opcode's extension headers, PadCnt
 * for a payload of len bytes) of a packet whose payload stays where it is, for
 * a gather send (header, payload, pad and ICRC from separate buffers): the
 * same bytes nr_build_transport writes before the payload.  Returns the
 * header length or -errno as above; nr_icrc_ip4_gather() gives its ICRC.
 */
int nr_build_transport_hdr(uint8_t *buf, size_t cap, uint32_t dqpn,
			   const struct nr_build_args *a, uint32_t len);

#endif /* NR_ROCE_BUILD_H */
