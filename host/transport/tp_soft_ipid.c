// SPDX-License-Identifier: BSD-3-Clause
/*
 * Soft transport: the IP ID, which the ICRC covers and a UDP socket neither
 * sets nor shows.
 *
 * Sent: the kernel gives a DF datagram of an unconnected socket ID 0, and the
 * datagrams of one GSO send (UDP_SEGMENT) IDs 0, 1, 2 ... in order, whether
 * it segments them itself, a NIC does (USO), or they stay whole to a GRO
 * socket on this host; so a packet's ICRC is computed for its place in its
 * GSO send (ConnectX, too, numbers its RoCEv2 packets' IDs one by one).
 *
 * Received: the ID is guessed (the one after the previous packet's, or 0 at
 * the start of a GRO datagram), the ICRC computed once for it; on a mismatch
 * the ID that would make it hold is found from the difference, since a CRC
 * is linear: ICRC(ID x) ^ ICRC(ID y) = D_n(x ^ y), a function of the packet's
 * length n alone.  A packet is good when that ID lies in [0, SOFT_IPID_SPAN),
 * the IDs our senders and the box (which keeps a contribution's header)
 * produce; one with a corrupted byte passes with probability 64 / 2^32
 * instead of 1 / 2^32.  Tables of D_n for the last SOFT_IPID_CACHE lengths are
 * kept (a transfer has a few: full packets, last packets, ACKs).
 */
#include <string.h>
#include <zlib.h>

#include "tp_soft_ipid.h"

/* ICRC-covered bytes before the ID (masked LRH, IPv4 up to the ID) and of the ID. */
#define IPID_OFF 12
#define IPID_LEN 2
/* the masked LRH, IPv4 and UDP headers the ICRC covers before the BTH */
#define ICRC_PSEUDO 36

/* The table of D for tlen transport bytes (BTH .. pad): D[x] = ICRC(ID x) ^ ICRC(ID 0). */
static const uint32_t *ipid_tab(struct soft_tp *tp, uint32_t tlen)
{
	uint32_t n = ICRC_PSEUDO + tlen, basis[6], x0, op;
	struct soft_ipid_tab *t;
	uint8_t id[IPID_OFF + IPID_LEN] = { 0 };

	for (unsigned i = 0; i < SOFT_IPID_CACHE; i++)
		if (tp->ipid[i].n == n)
			return tp->ipid[i].d;
	t = &tp->ipid[tp->ipid_next++ % SOFT_IPID_CACHE];
	/* the CRC register after the ID, carried over the n - 14 bytes after it */
	op = (uint32_t)crc32_combine_gen((z_off_t)(n - IPID_OFF - IPID_LEN));
	x0 = (uint32_t)crc32(0, id, sizeof(id));
	for (unsigned b = 0; b < 6; b++) {
		id[IPID_OFF] = 0;
		id[IPID_OFF + 1] = (uint8_t)(1u << b);
		basis[b] = (uint32_t)crc32_combine_op((uint32_t)crc32(0, id, sizeof(id)) ^ x0, 0, op);
	}
	t->n = n;
	t->d[0] = 0;
	for (unsigned x = 1; x < SOFT_IPID_SPAN; x++) {
		unsigned low = (unsigned)__builtin_ctz(x);

		t->d[x] = t->d[x & (x - 1)] ^ basis[low];
	}
	return t->d;
}

uint32_t soft_ipid_move(struct soft_tp *tp, uint32_t icrc, uint32_t tlen, uint16_t from,
			uint16_t to)
{
	const uint32_t *d = ipid_tab(tp, tlen);

	return icrc ^ d[(from ^ to) % SOFT_IPID_SPAN];
}

bool soft_ipid_check(struct soft_tp *tp, struct nr_icrc_ip4 *ip, const uint8_t *bth,
		     uint32_t tlen, uint32_t stored)
{
	uint32_t delta = nr_icrc_ip4(ip, bth, tlen) ^ stored;
	const uint32_t *d;

	if (!delta)
		return true;
	d = ipid_tab(tp, tlen);
	for (unsigned y = 1; y < SOFT_IPID_SPAN; y++)
		if (d[y] == delta && (ip->id ^ y) < SOFT_IPID_SPAN) {
			ip->id ^= (uint16_t)y;
			return true;
		}
	return false;
}
