/* SPDX-License-Identifier: BSD-3-Clause */
/* Soft transport, the IP IDs the ICRC covers (tp_soft_ipid.c). */
#ifndef NR_TP_SOFT_IPID_H
#define NR_TP_SOFT_IPID_H

#include <stdbool.h>
#include <stdint.h>

#include "tp_soft_types.h"

/* icrc of a packet of tlen transport bytes (BTH .. pad) with IP ID from, made for ID to. */
uint32_t soft_ipid_move(struct soft_tp *tp, uint32_t icrc, uint32_t tlen, uint16_t from,
			uint16_t to);
/*
 * Whether the stored ICRC of a received packet (tlen bytes at bth, BTH .. pad)
 * holds for ip, whose id is the guess, or for another ID in [0, SOFT_IPID_SPAN);
 * ip->id is then the one it holds for.
 */
bool soft_ipid_check(struct soft_tp *tp, struct nr_icrc_ip4 *ip, const uint8_t *bth,
		     uint32_t tlen, uint32_t stored);

#endif /* NR_TP_SOFT_IPID_H */
