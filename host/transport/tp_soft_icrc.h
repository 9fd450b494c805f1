/* SPDX-License-Identifier: BSD-3-Clause */
/* Soft transport, the ICRC of a socket's packets and the IP IDs it covers (tp_soft_icrc.c). */
#ifndef NR_TP_SOFT_ICRC_H
#define NR_TP_SOFT_ICRC_H

#include <stdbool.h>
#include <stdint.h>

#include "tp_soft_types.h"

/* The IP ID's share after the pseudo headers (tp->id_pfx), once per transport. */
void soft_icrc_init(struct soft_tp *tp);
/*
 * The ICRC of qp's packet from UDP source port sport (qp->sport, or one it
 * sprays over) with IP ID id: hl header bytes at hdr (BTH first, as sent),
 * plen payload bytes at pay and their pad.
 */
uint32_t soft_icrc_tx(struct soft_qp *qp, uint16_t sport, uint16_t id, const uint8_t *hdr,
		      uint32_t hl, const void *pay, uint32_t plen);
/* icrc of a packet of tlen transport bytes (BTH .. pad) with IP ID from, made for ID to. */
uint32_t soft_icrc_move(struct soft_tp *tp, uint32_t icrc, uint32_t tlen, uint16_t from,
			uint16_t to);
/*
 * Whether the stored ICRC of a received packet (tlen bytes at bth, BTH .. pad;
 * its BTH byte 4 is masked and put back) holds for ip, whose id is the guess,
 * or for another ID in [0, SOFT_IPID_SPAN); ip->id is then the one it holds for.
 */
bool soft_icrc_rx(struct soft_tp *tp, struct nr_icrc_ip4 *ip, uint8_t *bth, uint32_t tlen,
		  uint32_t stored);

#endif /* NR_TP_SOFT_ICRC_H */
